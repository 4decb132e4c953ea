"""Data on a terminal: strip what a terminal would obey instead of print.

Catalog rows, recorded GPU names and other text from files or the network reach rich tables and
lines; a raw escape sequence in them (`\\x1b[2J` clears the screen, OSC 52 writes the clipboard,
`\\x07` rings the bell) would act on the user's terminal. `clean()` removes ESC sequences (CSI,
OSC, DCS/SOS/PM/APC strings, the two-byte forms, 8-bit CSI) and then every other control
character: C0 except tab and newline, DEL, and C1. Renderers call it on data, not on their own
styling (rich adds its colours after). `cells()` also keeps rich from reading `[...]` in data as
markup (a GPU named `x[/]` would otherwise raise): it returns `rich.text.Text` objects (rich is a
core dependency, imported when called). Otherwise stdlib only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_ESCAPE_SEQUENCE = re.compile(
    r"""
      \x1b\[[0-?]*[\ -/]*[@-~]?            # CSI ... final byte
    | \x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?   # OSC ... BEL or ST
    | \x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?        # DCS, SOS, PM, APC ... ST
    | \x1b[\ -/]*[0-~]?                    # nF, Fp, Fe, Fs: ESC, intermediates, final
    | \x9b[0-?]*[\ -/]*[@-~]?              # 8-bit CSI
    | [\x90\x98\x9d\x9e\x9f][^\x1b\x9c\x07]*(?:\x1b\\|\x9c|\x07)?  # 8-bit string controls
    """,
    re.VERBOSE,
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """`text` without escape sequences and control characters (tab and newline stay)."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def cells(*values: str) -> list[Text]:
    """Table cells from data: cleaned, and shown literally (no rich markup)."""
    from rich.text import Text

    return [Text(clean(v)) for v in values]

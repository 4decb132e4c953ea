"""Tables that stay readable in a narrow terminal: drop columns by priority, wrap the rest.

Rich squeezes every column of a table that is too wide for the terminal, so at 80 columns a
dozen-column table shows one letter per cell. `fit_table` instead measures each column's
narrowest readable width (its header and its longest word, or its whole text for columns that
must not wrap), drops the least important columns until the rest fit, and lets the kept ones
wrap at word boundaries. The caption names what was dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

Cell = str | Text

Justify = Literal["left", "right", "center"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its header, how readily it goes (0: never; higher goes first), how to show it."""

    header: str
    priority: int = 0
    justify: Justify = "left"
    wrap: bool = True  # may wrap onto several lines at word boundaries


def _words(text: str) -> list[str]:
    return [w for line in text.splitlines() for w in line.split()] or [""]


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _min_width(col: Column, cells: Sequence[Cell]) -> int:
    """The narrowest width at which the column's header and words stay whole."""
    texts = [col.header, *(_plain(c) for c in cells)]
    if not col.wrap:
        return max(cell_len(line) for t in texts for line in (t.splitlines() or [""]))
    return max(cell_len(w) for t in texts for w in _words(t))


def _natural(col: Column, cells: Sequence[Cell]) -> int:
    """The width at which nothing in the column wraps."""
    texts = [col.header, *(_plain(c) for c in cells)]
    return max(cell_len(line) for t in texts for line in (t.splitlines() or [""]))


def _share(natural: list[int], least: list[int], room: int) -> list[int]:
    """Column widths within `room`: natural widths, the widest narrowed first, none below its
    least (rich's own squeeze ignores minimums and narrows every column alike)."""
    widths = [max(n, m) for n, m in zip(natural, least, strict=True)]
    while sum(widths) > room:
        shrinkable = [i for i, w in enumerate(widths) if w > least[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def _overhead(table: Table, count: int) -> int:
    """The cells a rich table adds around `count` columns: its borders and cell padding.

    Mirrors rich's own accounting (the box's edge and column separators, each cell's left and
    right padding less what `pad_edge=False` or `collapse_padding` remove), so that widths chosen
    here are the widths rich draws and it never squeezes a column below its readable width.
    """
    if count == 0:
        return 0
    borders = (2 if table.box and table.show_edge else 0) + (count - 1 if table.box else 0)
    _, right, _, left = table.padding
    if table.collapse_padding:
        left, right = 0, abs(left - right)
    pads = count * (left + right)
    if not table.pad_edge:
        pads -= left + right  # the first column's left and the last column's right padding
    return borders + pads


def fit_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    width: int,
    *,
    caption_hidden: bool = True,
    **table_options: Any,
) -> tuple[Table, tuple[str, ...]]:
    """A table of `rows` that fits `width` terminal cells, and the headers it had to drop.

    Columns go by priority until the rest fit at their readable widths; when even the columns
    that never go do not fit, the cells lose their side padding (the box's lines, or one space
    where there is no box, still part them) before rich would have to break words.
    """
    table = Table(**table_options)
    mins = [_min_width(c, [r[i] for r in rows]) for i, c in enumerate(columns)]
    kept = list(range(len(columns)))

    def needed(idx: list[int]) -> int:
        return sum(mins[i] for i in idx) + _overhead(table, len(idx))

    droppable = sorted(
        (i for i, c in enumerate(columns) if c.priority > 0),
        key=lambda i: (-columns[i].priority, -i),
    )
    for i in droppable:
        if needed(kept) <= width:
            break
        kept.remove(i)
    if needed(kept) > width and "padding" not in table_options:
        top, _, bottom, _ = table.padding
        # the box's lines still part the cells; without a box, one space on the right does
        table.padding = (top, 0 if table.box else 1, bottom, 0)
    hidden = tuple(columns[i].header for i in range(len(columns)) if i not in kept)
    widths = _share(
        [_natural(columns[i], [r[i] for r in rows]) for i in kept],
        [mins[i] for i in kept],
        width - _overhead(table, len(kept)),
    )
    if hidden and caption_hidden and table.caption is None:
        table.caption = (
            f"not shown at {width} columns: {', '.join(hidden)} (widen the terminal or use --json)"
        )
    for i, w in zip(kept, widths, strict=True):
        c = columns[i]
        table.add_column(c.header, justify=c.justify, width=w, no_wrap=not c.wrap, overflow="fold")
    for r in rows:
        table.add_row(*(r[i] for i in kept))
    return table, hidden

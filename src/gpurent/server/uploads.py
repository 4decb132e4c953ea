"""Files sent in a request body (a name and its text), written to a private temporary folder
for the CLI's readers and removed after; the folder's name is taken out of the reply and of
error lines, so that the reply names the files as the client sent them."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpurent.errors import GpurentError, InputError

# one to four folder levels of plain names; no part starts with a dot, so no `..` and no hidden
_PART = r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}"
RELATIVE_NAME = rf"^{_PART}(/{_PART}){{0,3}}$"
MAX_FILES = 64


class SentFile(BaseModel):
    """One file sent with the request: its relative name and its text."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(..., pattern=RELATIVE_NAME, description="e.g. vendors/a-bench-h100.json")
    content: str = Field(..., description="The file's text.")


@contextmanager
def written(sent: Sequence[SentFile]) -> Iterator[Path]:
    """A private temporary folder holding `sent` under their names (two of one name refused);
    gpurent errors raised inside the block lose the folder's name."""
    names = [f.name for f in sent]
    if len(set(names)) != len(names):
        raise InputError("two files have the same name; give each file its own name")
    with tempfile.TemporaryDirectory(prefix="gpurent-serve-") as folder:
        root = Path(folder)
        for f in sent:
            path = root / f.name
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f.content, encoding="utf-8")
            except OSError:  # a file and a folder of one name: "vendors", "vendors/a.json"
                raise InputError(
                    f"{f.name}: one name is both a file and another file's folder; rename one"
                ) from None
        try:
            yield root
        except GpurentError as exc:
            exc.message = exc.message.replace(folder + "/", "").replace(folder, ".")
            raise


def unfoldered(doc: Any, folder: Path) -> Any:
    """`doc` (JSON-ready) with `folder/` taken out of every string in it."""
    prefix = f"{folder}/"
    if isinstance(doc, str):
        return doc.replace(prefix, "")
    if isinstance(doc, list):
        return [unfoldered(x, folder) for x in doc]
    if isinstance(doc, dict):
        return {k: unfoldered(x, folder) for k, x in doc.items()}
    return doc

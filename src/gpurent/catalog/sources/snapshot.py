"""Where fetched catalogs live in the user's data directory, and their metadata.

Layout under `gpurent.userdata.data_home()/catalog/`:
- `<cloud>/vms.csv`: the SkyPilot catalog file as fetched (unchanged bytes).
- `meta.json`: `{"format": 1, "clouds": {"<cloud>": {"url", "fetched_at", "rows", "offers",
  "skipped", "size_bytes"}}}`; `fetched_at` is an ISO-8601 UTC timestamp.

Every write goes to a temporary file in the same directory and is renamed over the old one, so a
failed or interrupted update leaves the previous files intact. This is an edge module (file I/O).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from gpurent.errors import DataError, InputError

META_FILE = "meta.json"
META_FORMAT = 1
CLOUD_NAME_RULE = "1-40 characters: lowercase letters, digits, '-' or '_', starting with a letter"
"""What a cloud name may be; it becomes a folder name, so nothing else (no '/', '..', spaces)."""
_CLOUD_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")


@dataclass(frozen=True, slots=True, kw_only=True)
class CloudMeta:
    """One fetched cloud catalog: where from, when, and what it held."""

    cloud: str
    url: str
    fetched_at: str  # ISO-8601, UTC
    rows: int  # data rows in the file
    offers: int  # GPU offers parsed from it
    skipped: int  # malformed rows skipped
    size_bytes: int


def catalog_dir(home: Path) -> Path:
    """The folder of fetched catalogs inside the user data directory `home`."""
    return home / "catalog"


def check_cloud_name(cloud: str, where: str = "--clouds") -> str:
    """`cloud` when it is a safe folder name (CLOUD_NAME_RULE); else InputError naming `where`."""
    if not _CLOUD_NAME.fullmatch(cloud):
        raise InputError(f"{where}: bad cloud name {cloud!r}; a cloud name is {CLOUD_NAME_RULE}")
    return cloud


def cloud_file(home: Path, cloud: str) -> Path:
    """`<home>/catalog/<cloud>/vms.csv`; InputError unless `cloud` is a safe name that stays
    inside the catalog folder (also checked on the resolved path: no symlinked way out)."""
    check_cloud_name(cloud)
    base = catalog_dir(home)
    path = base / cloud / "vms.csv"
    if not path.resolve().is_relative_to(base.resolve()):
        raise InputError(
            f"{path}: resolves outside {base}; remove the link at {base / cloud} and run "
            "`gpurent catalog update` again"
        )
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` via a temporary sibling and a rename (never a half-written file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_meta(home: Path) -> dict[str, CloudMeta]:
    """Metadata of the fetched clouds whose file exists; empty when `catalog update` never ran."""
    path = catalog_dir(home) / META_FILE
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        clouds = raw["clouds"]
        for name in clouds:
            check_cloud_name(name, str(path))
        metas = {
            name: CloudMeta(
                cloud=name,
                url=str(entry["url"]),
                fetched_at=str(entry["fetched_at"]),
                rows=int(entry["rows"]),
                offers=int(entry["offers"]),
                skipped=int(entry["skipped"]),
                size_bytes=int(entry["size_bytes"]),
            )
            for name, entry in clouds.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError, InputError) as exc:
        raise DataError(
            f"{path}: unreadable catalog metadata ({exc}); run `gpurent catalog update` again "
            f"or delete {catalog_dir(home)} to use the bundled snapshot"
        ) from None
    return {name: m for name, m in metas.items() if cloud_file(home, name).exists()}


def write_meta(home: Path, metas: dict[str, CloudMeta]) -> None:
    """Write the per-cloud metadata of a catalog snapshot as JSON under home."""
    payload = {
        "format": META_FORMAT,
        "clouds": {
            name: {k: v for k, v in asdict(m).items() if k != "cloud"}
            for name, m in sorted(metas.items())
        },
    }
    text = json.dumps(payload, indent=2) + "\n"
    write_atomic(catalog_dir(home) / META_FILE, text.encode("utf-8"))

"""`gpurent catalog update`: fetch fresh SkyPilot catalog files over HTTPS into the data dir.

For each cloud, `<url_base>/<cloud>/vms.csv` is downloaded (through the `gpurent.http` seam, a
timeout per read, at most `MAX_DOWNLOAD_BYTES`),
parsed to check it holds usable GPU offers, then stored atomically with its metadata
(see `snapshot.py`). A cloud that fails (offline, HTTP error, garbage) keeps its previous file and
is reported; the others are still stored. The base URL defaults to the public SkyPilot catalog and
can be set with `$GPURENT_CATALOG_URL` or `--url-base`. This is an edge module (network + files);
the clock and the HTTP seam are injected so tests are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gpurent.catalog.sources.skypilot import parse_skypilot_csv
from gpurent.catalog.sources.snapshot import (
    CloudMeta,
    cloud_file,
    read_meta,
    write_atomic,
    write_meta,
)
from gpurent.errors import DataError, GpurentError
from gpurent.http import URLLIB_HTTP, Http, HttpError

URL_ENV = "GPURENT_CATALOG_URL"
"""The environment variable that sets the catalog base URL (`--url-base` wins)."""
DEFAULT_URL_BASE = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
)
"""The public SkyPilot catalog (format v8) that `catalog update` fetches from."""
DEFAULT_CLOUDS = ("aws", "gcp", "lambda", "runpod", "nebius", "oci", "vast", "verda", "shadeform")
"""The v8 clouds the bundled snapshot also covers (Azure has no v8 file; Tencent is not there)."""

DEFAULT_TIMEOUT_S = 30.0
MAX_DOWNLOAD_BYTES = 256 * 2**20
"""A cloud's vms.csv is a few MiB (GCP's, the largest, about 20); far more is not a catalog."""

Progress = Callable[[str, int, int | None], None]
"""on_progress(cloud, bytes_so_far, total_bytes_or_None)."""


class FetchError(GpurentError):
    """A download failed; the message names the URL and what to do."""


def fetch_url(
    url: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    on_chunk: Callable[[int, int | None], None],
    http: Http = URLLIB_HTTP,
) -> bytes:
    """GET `url` and return its body; raise `FetchError` with one line on any failure."""
    try:
        answer = http.get(
            url,
            headers={"User-Agent": "gpurent-catalog-update"},
            timeout_s=timeout_s,
            deadline_s=None,
            max_bytes=MAX_DOWNLOAD_BYTES,
            on_chunk=on_chunk,
        )
        return answer.raise_for_status(url).body
    except HttpError as exc:
        raise FetchError(exc.message) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateResult:
    """What `update_catalogs` stored and what failed (cloud, one-line reason)."""

    stored: tuple[CloudMeta, ...]
    failed: tuple[tuple[str, str], ...]


def cloud_url(url_base: str, cloud: str) -> str:
    """The URL of one cloud's vms.csv under url_base."""
    return f"{url_base.rstrip('/')}/{cloud}/vms.csv"


def update_catalogs(
    url_base: str,
    clouds: Sequence[str],
    home: Path,
    *,
    now: datetime,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    http: Http = URLLIB_HTTP,
    on_progress: Progress | None = None,
) -> UpdateResult:
    """Fetch each cloud's `vms.csv`, check it parses, store it and its metadata under `home`.

    Every name and its path are checked (`cloud_file`) before anything is fetched or written."""
    files = {cloud: cloud_file(home, cloud) for cloud in clouds}
    fetched_at = now.isoformat(timespec="seconds")
    metas = read_meta(home)
    stored: list[CloudMeta] = []
    failed: list[tuple[str, str]] = []
    for cloud in clouds:
        url = cloud_url(url_base, cloud)

        def chunk(done: int, total: int | None, cloud: str = cloud) -> None:
            if on_progress is not None:
                on_progress(cloud, done, total)

        try:
            data = fetch_url(url, timeout_s=timeout_s, on_chunk=chunk, http=http)
            meta = _check(data, url, cloud, fetched_at)
        except GpurentError as exc:
            failed.append((cloud, exc.message))
            continue
        write_atomic(files[cloud], data)
        metas[cloud] = meta
        write_meta(home, metas)
        stored.append(meta)
    return UpdateResult(stored=tuple(stored), failed=tuple(failed))


def _check(data: bytes, url: str, cloud: str, fetched_at: str) -> CloudMeta:
    """Parse the download as the loader will; DataError when it is not a usable catalog."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{url}: not UTF-8 text; is the --url-base right?") from None
    table = parse_skypilot_csv(text, url, provider=cloud, as_of=fetched_at)
    return CloudMeta(
        cloud=cloud,
        url=url,
        fetched_at=fetched_at,
        rows=max(text.count("\n") - 1, 0),
        offers=len(table.offers),
        skipped=len(table.skipped),
        size_bytes=len(data),
    )

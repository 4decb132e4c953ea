"""Read spot traces from files (the I/O edge of the spot room).

Formats, detected from the content:
- "Can't Be Late" JSON (Wu et al., NSDI'24, public traces):
  `{"metadata": {"gap_seconds": G, ...}, "data": [v0, v1, ...]}`. Data of only 0 and 1 are
  preemption flags, 1 = preempted (no spot) and 0 = spot available: the CBL simulator's
  `TraceEnv.spot_available()` returns `not trace[tick]` (sky_spot/env.py), and the SkyNomad
  artifact's converters write availability inverted for it (andylizf/skynomad-artifact,
  `data/README.md`, `scripts_multi/trace_sampling/create_aligned_traces.py`, commit 4dc5ecb).
  Data with a value above 1 are counts of spot instances obtainable (that artifact's raw
  capacity captures, `data/spot_hedge_4node_src/*.json`); `metadata.counts` (true/false) says
  which explicitly. `data` may also be a list of zones (a list of
  lists); zone names then come from `metadata.zones` (or `metadata.zone`) when present.
  Optional prices: `prices` beside `data` or in `metadata` (a list, $/h per tick, or a list per
  zone), else a flat `metadata.price_info.price`; the on-demand price from
  `metadata.on_demand_price` or `metadata.price_info.on_demand_price` (the layout of the
  SkyNomad artifact's traces).
- A price JSON mapping zone name -> per-tick spot prices (`{"us-east-1a_v100_1": [...]}`), read
  with `load_prices`, matched to traces by name.
- Availability CSV `date,availability[,price]` (header names matched loosely: a time column,
  an availability/count column, an optional price column; no header is accepted too).
- Probe CSV `time,zone,requested,created`: one probe per row; a zone's count at a tick is the
  number of instances created. One trace per zone, all on one time grid (a round a zone
  missed repeats its previous count, and says so).
- Probe rounds, the format of the SkyNomad artifact's 16-node H100 traces
  (andylizf/skynomad-artifact, `data/h100_16_runs/`): one JSON per round,
  `{"scheduled_at": ISO time, "zone_results": {zone: {"instances_requested": 16,
  "instances_created": n}, ...}}`; a folder of them (given as the trace path) or a JSON list of
  rounds. Read like the probe CSV: a zone's count at a tick is `instances_created`, so
  `--nodes N` needs N of them.

Any of these may be zstandard-compressed (`.zst`, needing the `spot` extra).

Timestamps may be ISO 8601 / `YYYY-MM-DD HH:MM:SS` or epoch seconds. The tick gap of a CSV is
the median of successive differences; rows are then taken as consecutive ticks of that gap
(irregular ticks are not resampled; `load_trace_with_notes` reports how many gaps are off by
more than half a tick).
"""

from __future__ import annotations

import csv
import io
import itertools
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from gpurent.errors import DataError, InputError, require
from gpurent.inputs import files
from gpurent.inputs import values as checks
from gpurent.inputs.times import is_number, parse_time
from gpurent.spot.io.trace import Trace

_TIME_KEYS = ("date", "time", "timestamp", "ts", "datetime")
_AVAIL_KEYS = ("availability", "available", "avail", "count", "value", "capacity")
_PRICE_KEYS = ("price", "spot_price", "price_usd_per_hour")
_PROBE_KEYS = ("zone", "requested", "created")


def load_trace(path: str | Path) -> list[Trace]:
    """All zones in one trace file (JSON or CSV), checked; raises DataError on bad content."""
    return load_trace_with_notes(path)[0]


def load_trace_with_notes(path: str | Path) -> tuple[list[Trace], list[str]]:
    """Like `load_trace`, plus notes for the user (irregular ticks)."""
    p = Path(path)
    if p.is_dir():
        return _parse_round_dir(p)
    text = read_text(p, "a JSON or CSV trace")
    if not text.strip():
        raise DataError(f"{p}: empty file; give a trace with at least one tick")
    if text.lstrip()[:1] in "{[":
        return _parse_json(text, p), []
    return _parse_csv(text, p)


def load_traces(paths: Sequence[str | Path]) -> tuple[list[Trace], list[str]]:
    """Every zone of several trace files, with notes. Zones of different files that share a
    name (`us-east-1a/trace.json`, `us-east-1b/trace.json`) are told apart by their folder's
    name, or else by their path; the same file given twice still repeats (an error later)."""
    loaded: list[tuple[Path, Trace]] = []
    notes: list[str] = []
    for path in paths:
        traces, file_notes = load_trace_with_notes(path)
        loaded.extend((Path(path), tr) for tr in traces)
        notes.extend(file_notes)
    out: list[Trace] = []
    for path, tr in loaded:
        here = path.resolve()
        clash = [p for p, other in loaded if other.name == tr.name and p.resolve() != here]
        if clash:
            label = f"{path.parent.name}/{tr.name}"
            if any(p.parent.name == path.parent.name for p in clash):
                label = f"{path}:{tr.name}" if path.stem != tr.name else str(path)
            tr = replace(tr, name=label)
        out.append(tr)
    return out, notes


def load_prices(path: str | Path) -> dict[str, tuple[float, ...]]:
    """A JSON mapping zone name -> list of per-tick spot prices ($/h)."""
    p = Path(path)
    raw = parse_json(read_text(p, "a JSON price file"), str(p))
    if not isinstance(raw, Mapping):
        raise DataError(f"{p}: expected a JSON object mapping zone name to a list of prices")
    return {str(k): _floats(v, f"{p}: prices of {k!r}") for k, v in raw.items()}


def read_text(path: str | Path, expected: str) -> str:
    """The text of a file, decompressing `.zst` (zstandard, `gpurent[spot]`). Shared by every
    trace, price and price-history reader; `expected` names what the file should hold."""
    p = Path(path)
    data = files.read_bytes(p, what=expected, error=DataError)
    if p.suffix == ".zst":
        zstd: Any = require("zstandard", "spot")
        try:
            data = (
                zstd.ZstdDecompressor()
                .stream_reader(io.BytesIO(data))
                .read(files.MAX_TEXT_BYTES + 1)
            )
        except zstd.ZstdError as exc:
            raise DataError(f"{files.shown(p)}: not a valid zstandard file ({exc})") from None
        if len(data) > files.MAX_TEXT_BYTES:
            raise DataError(f"{files.shown(p)}: decompresses to over 64 MiB; give a smaller file")
    try:
        return str(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{files.shown(p)}: not UTF-8 text (byte offset {exc.start}); give {expected}"
        ) from None


def attach_prices(traces: Sequence[Trace], path: str | Path) -> list[Trace]:
    """The traces with their zones' per-tick spot prices from a `load_prices` file, matched by
    zone name (each `Trace` checks it has one price per tick)."""
    prices = load_prices(path)
    for tr in traces:
        if tr.name not in prices:
            raise DataError(
                f"{path} has no prices for zone {tr.name!r} (it has {', '.join(sorted(prices))})"
            )
    return [replace(tr, price_usd_per_hour=prices[tr.name]) for tr in traces]


# ---------------------------------------------------------------------------- JSON


def parse_json(text: str, where: str) -> Any:
    """`json.loads`, with a bad document as a DataError naming `where` and the line."""
    return files.parse_json(text, where, error=DataError)


def _parse_round_dir(folder: Path) -> tuple[list[Trace], list[str]]:
    """A folder of probe-round JSONs (see the module docstring)."""
    rounds = []
    for f in sorted(folder.glob("*.json")):
        raw = parse_json(read_text(f, "a probe-round JSON"), str(f))
        if isinstance(raw, Mapping) and "zone_results" in raw:
            rounds.append((f, raw))
    if not rounds:
        raise DataError(
            f"{folder}: no probe-round JSON (with 'zone_results') in this folder; give a trace "
            "file or a folder of rounds"
        )
    return _rounds_grid(rounds, folder)


def _rounds_grid(
    rounds: Sequence[tuple[Path, Mapping[str, Any]]], where: Path
) -> tuple[list[Trace], list[str]]:
    per_zone: dict[str, list[tuple[datetime, int]]] = {}
    for f, raw in rounds:
        stamp = raw.get("scheduled_at", raw.get("started_at"))
        if stamp is None:
            raise DataError(f"{f}: a probe round needs 'scheduled_at' (its time)")
        when = _parse_time(stamp, f, 1)
        results = raw["zone_results"]
        if not isinstance(results, Mapping):
            raise DataError(f"{f}: 'zone_results' must map zone -> result")
        for zone, res in results.items():
            if not isinstance(res, Mapping) or "instances_created" not in res:
                raise DataError(f"{f}: zone {zone!r} has no 'instances_created'")
            count = _count(res["instances_created"], f"{f}: {zone} instances_created")
            per_zone.setdefault(str(zone), []).append((when, count))
    return _probe_grid(per_zone, where)


def _parse_json(text: str, path: Path) -> list[Trace]:
    raw = parse_json(text, str(path))
    if (
        isinstance(raw, list)
        and raw
        and all(isinstance(r, Mapping) and "zone_results" in r for r in raw)
    ):
        return _rounds_grid([(path, r) for r in raw], path)[0]
    if isinstance(raw, list):
        raw = {"data": raw}
    if not isinstance(raw, Mapping) or "data" not in raw:
        raise DataError(
            f"{path}: expected a Can't Be Late trace {{'metadata': {{'gap_seconds': G}}, "
            "'data': [...]}}"
        )
    meta = raw.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise DataError(f"{path}: 'metadata' must be an object")
    gap_s = meta.get("gap_seconds", meta.get("gap"))
    if gap_s is None:
        raise DataError(f"{path}: metadata.gap_seconds is missing; add the tick gap in seconds")
    gap_hours = _positive(gap_s, f"{path}: metadata.gap_seconds") / 3600.0
    data = raw["data"]
    if not isinstance(data, list) or not data:
        raise DataError(f"{path}: 'data' has no ticks; give a non-empty list of counts")
    zones_data: list[Any] = data if isinstance(data[0], list) else [data]
    if len(zones_data) > 1 and len(zones_data) > len(zones_data[0]):
        zones_data = [list(col) for col in zip(*zones_data, strict=False)]  # ticks x zones
    names = meta.get("zones") or meta.get("regions")
    if not (isinstance(names, list) and len(names) == len(zones_data)):
        stem = _trace_stem(path, meta)
        names = [stem] if len(zones_data) == 1 else [f"{stem}[{i}]" for i in range(len(zones_data))]
    info = meta.get("price_info") or {}
    if not isinstance(info, Mapping):
        raise DataError(f"{path}: 'metadata.price_info' must be an object")
    prices_meta = raw.get("prices", meta.get("prices"))
    if prices_meta is None and info.get("price") is not None:
        flat = _positive(info["price"], f"{path}: metadata.price_info.price")
        prices_meta = [flat] * max(len(v) if isinstance(v, list) else 0 for v in zones_data)
    od = meta.get("on_demand_price", meta.get("on_demand_usd_per_hour"))
    od = info.get("on_demand_price") if od is None else od
    od_price = None if od is None else _positive(od, f"{path}: on_demand_price")
    start = _parse_time(meta["start_time"], path, 0) if "start_time" in meta else None
    all_counts = [
        _counts(values, f"{path}: data of zone {name!r}")
        for name, values in zip(names, zones_data, strict=True)
    ]
    if not _cbl_data_are_counts(meta, all_counts, path):
        all_counts = [tuple(1 - v for v in c) for c in all_counts]  # 1 = preempted
    traces = []
    for i, (name, counts) in enumerate(zip(names, all_counts, strict=True)):
        prices = None
        if isinstance(prices_meta, list) and prices_meta:
            series = prices_meta[i] if isinstance(prices_meta[0], list) else prices_meta
            prices = _floats(series, f"{path}: metadata.prices of zone {name!r}")
        traces.append(
            Trace(
                name=str(name),
                gap_hours=gap_hours,
                available=counts,
                price_usd_per_hour=prices,
                on_demand_usd_per_hour=od_price,
                start_time=start,
            )
        )
    return traces


def _cbl_data_are_counts(
    meta: Mapping[str, Any], counts: Sequence[tuple[int, ...]], path: Path
) -> bool:
    """Whether a CBL JSON's `data` are instance counts (else 0/1 preemption flags)."""
    flag = meta.get("counts")
    if flag is not None and not isinstance(flag, bool):
        raise DataError(f"{path}: metadata.counts must be true or false, got {flag!r}")
    above_one = any(v > 1 for c in counts for v in c)
    if flag is False and above_one:
        raise DataError(
            f"{path}: metadata.counts is false but 'data' holds values above 1; "
            "preemption flags are 0 (spot available) or 1 (preempted)"
        )
    return above_one if flag is None else flag


def _trace_stem(path: Path, meta: Mapping[str, Any]) -> str:
    """A zone's name: `metadata.zone`, else the file's stem, with its folder's name when the
    stem says nothing (the public traces keep each zone in `ZONE/full.json` or `ZONE/0.json`)."""
    zone = meta.get("zone")
    if isinstance(zone, str) and zone:
        return zone
    stem = path.stem
    if (stem == "full" or stem.isdigit()) and path.parent.name:
        return f"{path.parent.name}/{stem}" if stem.isdigit() else path.parent.name
    return stem


# ---------------------------------------------------------------------------- CSV


def _parse_csv(text: str, path: Path) -> tuple[list[Trace], list[str]]:
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    except csv.Error as exc:
        raise DataError(f"{files.shown(path)}: unreadable CSV ({exc})") from None
    if not rows:
        raise DataError(f"{path}: no rows; give a trace with at least one tick")
    header = [c.strip().lower() for c in rows[0]]
    has_header = not is_number(rows[0][-1]) and not _looks_like_time(rows[0][-1])
    body = rows[1:] if has_header else rows
    first_line = 2 if has_header else 1
    if not body:
        raise DataError(f"{path}: header only, no ticks; give at least one data row")
    if has_header and all(k in header for k in _PROBE_KEYS):
        return _parse_probe(header, body, path, first_line)
    t_col = _find(header, _TIME_KEYS, 0) if has_header else 0
    a_col = _find(header, _AVAIL_KEYS, 1) if has_header else 1
    p_col = _find(header, _PRICE_KEYS, None) if has_header else (2 if len(rows[0]) > 2 else None)
    times: list[datetime] = []
    counts: list[int] = []
    prices: list[float] = []
    for n, row in enumerate(body, start=first_line):
        if len(row) <= max(t_col, a_col, p_col or 0):
            raise DataError(f"{path}:{n}: expected at least {max(t_col, a_col) + 1} columns")
        times.append(_parse_time(row[t_col], path, n))
        counts.append(_count(row[a_col], f"{path}:{n}: availability"))
        if p_col is not None:
            prices.append(_float(row[p_col], f"{path}:{n}: price"))
    gap_hours, notes = _gap_hours(times, path)
    return [
        Trace(
            name=path.stem,
            gap_hours=gap_hours,
            available=tuple(counts),
            price_usd_per_hour=tuple(prices) if p_col is not None else None,
            start_time=times[0],
        )
    ], notes


def _parse_probe(
    header: list[str], body: list[list[str]], path: Path, first_line: int
) -> tuple[list[Trace], list[str]]:
    """Probe rows on one time grid shared by every zone (see `_probe_grid`)."""
    t_col = _find(header, _TIME_KEYS, 0)
    z_col, c_col = header.index("zone"), header.index("created")
    per_zone: dict[str, list[tuple[datetime, int]]] = {}
    for n, row in enumerate(body, start=first_line):
        if len(row) <= max(t_col, z_col, c_col):
            raise DataError(f"{path}:{n}: expected columns time,zone,requested,created")
        when = _parse_time(row[t_col], path, n)
        per_zone.setdefault(row[z_col].strip(), []).append(
            (when, _count(row[c_col], f"{path}:{n}: created"))
        )
    return _probe_grid(per_zone, path)


def _probe_grid(
    per_zone: dict[str, list[tuple[datetime, int]]], path: Path
) -> tuple[list[Trace], list[str]]:
    """Zones of a probe log on one grid, so that tick i is the same moment in every zone.

    The gap is the median interval between a zone's successive probes, over all zones; a probe
    goes to the tick nearest its time from the first probe of the file (a later probe in the
    same tick wins). A tick a zone has no probe for (a failed round) repeats that zone's
    previous count, and counts 0 before its first probe; both are reported in the notes.
    """
    for probes in per_zone.values():
        probes.sort(key=lambda x: x[0])
    gaps = [
        d
        for probes in per_zone.values()
        for a, b in itertools.pairwise(probes)
        if (d := (b[0] - a[0]).total_seconds()) > 0
    ]
    if not gaps:
        raise DataError(
            f"{path}: no zone was probed twice at different times, so the tick gap cannot be "
            "inferred; give at least two probe rounds"
        )
    gap_s = statistics.median(gaps)
    t0 = min(probes[0][0] for probes in per_zone.values())
    last = max(probes[-1][0] for probes in per_zone.values())
    n_ticks = round((last - t0).total_seconds() / gap_s) + 1
    traces: list[Trace] = []
    gaps_by_zone: dict[str, tuple[int, int]] = {}
    for zone, probes in per_zone.items():
        grid: list[int | None] = [None] * n_ticks
        for when, count in probes:
            grid[round((when - t0).total_seconds() / gap_s)] = count
        filled = lead = 0
        counts: list[int] = []
        prev: int | None = None
        for v in grid:
            if v is None:
                if prev is None:
                    lead += 1
                else:
                    filled += 1
                counts.append(0 if prev is None else prev)
            else:
                counts.append(v)
                prev = v
        if filled or lead:
            gaps_by_zone[zone] = (filled, lead)
        traces.append(
            Trace(name=zone, gap_hours=gap_s / 3600.0, available=tuple(counts), start_time=t0)
        )
    return traces, _probe_gap_notes(path, gaps_by_zone, n_ticks, gap_s)


def _probe_gap_notes(
    path: Path, gaps_by_zone: dict[str, tuple[int, int]], n_ticks: int, gap_s: float
) -> list[str]:
    """One line for the zones whose grid needed filling (one per zone would flood a log)."""
    if not gaps_by_zone:
        return []
    filled = [f for f, _ in gaps_by_zone.values()]
    lead = sum(1 for _, ld in gaps_by_zone.values() if ld)
    names = sorted(gaps_by_zone)
    shown = ", ".join(repr(z) for z in names[:4]) + (", ..." if len(names) > 4 else "")
    return [
        f"{path}: {len(names)} zone(s) ({shown}) had no probe at some of the {n_ticks} ticks of "
        f"{gap_s:.0f} s ({min(filled)}-{max(filled)} ticks each repeat the previous count"
        + (
            f"; {lead} zone(s) start late and count as unavailable before their first probe)"
            if lead
            else ")"
        )
    ]


def _gap_hours(
    times: Sequence[datetime], path: Path, zone: str | None = None
) -> tuple[float, list[str]]:
    where = f"{path}" + (f" zone {zone!r}" if zone else "")
    if len(times) < 2:
        # a well-formed file too short for any spot command: bad input (exit 2), not bad data
        rows = f"{len(times)} row" + ("" if len(times) == 1 else "s")
        raise InputError(
            f"{where}: {rows}; a CSV trace needs at least 2 rows to infer the tick gap "
            "(or give a JSON trace with metadata.gap_seconds)"
        )
    diffs = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    if any(d < 0 for d in diffs):
        raise DataError(f"{where}: timestamps go backwards; sort the rows by time")
    gap_s = statistics.median(diffs)
    if gap_s <= 0:
        raise DataError(f"{where}: repeated timestamps; the tick gap cannot be inferred")
    off = sum(1 for d in diffs if abs(d - gap_s) > 0.5 * gap_s)
    notes = []
    if off:
        notes.append(
            f"{where}: {off} of {len(diffs)} tick gaps differ from the median {gap_s:.0f} s "
            "by more than half; rows are used as consecutive ticks (no resampling)"
        )
    return gap_s / 3600.0, notes


# ---------------------------------------------------------------------------- cells


def _find(header: list[str], keys: Sequence[str], default: int | None) -> Any:
    for key in keys:
        for i, h in enumerate(header):
            if h == key:
                return i
    for key in keys:
        for i, h in enumerate(header):
            if key in h:
                return i
    return default


def _looks_like_time(cell: str) -> bool:
    try:
        datetime.fromisoformat(cell.strip())
    except ValueError:
        return False
    return True


def _parse_time(cell: Any, path: Path, line: int) -> datetime:
    return parse_time(cell, f"{path}:{line}")


def _float(cell: Any, where: str) -> float:
    """A finite number; a bad cell is a `DataError` with the `inputs.values` message."""
    return checks.in_data_file(checks.finite, cell, where)


def _positive(cell: Any, where: str) -> float:
    v = _float(cell, where)
    if v <= 0:
        raise DataError(f"{where}: must be > 0, got {cell!r}")
    return v


def _count(cell: Any, where: str) -> int:
    if isinstance(cell, bool):
        return int(cell)
    v = _float(cell.strip() if isinstance(cell, str) else cell, where)
    if v < 0:
        raise DataError(f"{where}: {cell!r} is negative; give instance counts >= 0")
    return int(v)


def _counts(values: Any, where: str) -> tuple[int, ...]:
    if not isinstance(values, list) or not values:
        raise DataError(f"{where}: no ticks; give a non-empty list of counts")
    return tuple(_count(v, f"{where}[{i}]") for i, v in enumerate(values))


def _floats(series: Any, where: str) -> tuple[float, ...]:
    """A non-empty JSON list of finite numbers, as `_float` reads each."""
    if not isinstance(series, list):  # a JSON array, not a string or an object
        raise DataError(f"{where} must be a non-empty list of numbers, got {type(series).__name__}")
    return checks.in_data_file(checks.finite_list, series, where)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpurent.errors import DataError, InputError
from gpurent.spot.io.trace import Trace, align_zones
from gpurent.spot.io.trace_io import load_prices, load_trace, load_trace_with_notes, load_traces


def test_csv_with_header_and_prices(write_csv) -> None:
    [tr] = load_trace(write_csv("z1", [0, 1, 1, 2], [1.0, 1.1, 1.2, 1.3]))
    assert tr.name == "z1"
    assert tr.available == (0, 1, 1, 2)
    assert tr.price_usd_per_hour == (1.0, 1.1, 1.2, 1.3)
    assert tr.gap_hours == pytest.approx(0.1)
    assert tr.start_time is not None and tr.start_time.year == 2023


def test_csv_without_header_and_epoch_times(tmp_path: Path) -> None:
    path = tmp_path / "raw.csv"
    path.write_text("1000,1\n1060,0\n1120,3\n")
    [tr] = load_trace(path)
    assert tr.available == (1, 0, 3)
    assert tr.gap_hours == pytest.approx(60 / 3600)
    assert tr.price_usd_per_hour is None


def test_irregular_ticks_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "irr.csv"
    path.write_text("time,avail\n0,1\n60,1\n120,0\n600,1\n660,1\n")
    _, notes = load_trace_with_notes(path)
    assert len(notes) == 1 and "1 of 4 tick gaps" in notes[0]


def test_cbl_json_single_and_multi_zone(write_json) -> None:
    [tr] = load_trace(write_json("cbl", [0, 1, 2, 1]))  # a value above 1: counts
    assert tr.available == (0, 1, 2, 1) and tr.gap_hours == pytest.approx(0.1)
    trs = load_trace(write_json("multi", [[1, 0, 1, 1], [0, 0, 1, 1]], zones=["a", "b"]))
    assert [t.name for t in trs] == ["a", "b"]
    assert trs[1].available == (1, 1, 0, 0)  # 0/1: preemption flags, 1 = preempted


# A CBL simulator trace as the SkyNomad artifact publishes it (andylizf/skynomad-artifact,
# commit 4dc5ecb, data/README.md "Trace format": "`data` is in **preempted** convention: `1` =
# preempted/unavailable, `0` = available ... because `TraceEnv.spot_available()` returns
# `not trace[tick]`"; scripts_multi/trace_sampling/create_aligned_traces.py writes
# `~availability` from the `date,availability` CSVs). Spot is there at ticks 0, 1 and 4.
CBL_PREEMPTED = (
    '{"metadata": {"gap_seconds": 600, "zone": "us-east-1f", '
    '"price_info": {"price": 0.918, "on_demand_price": 3.06}}, "data": [0, 0, 1, 1, 0]}'
)
# A raw capacity capture of that artifact (data/spot_hedge_4node_src/us-east-1f_v100_1.json,
# written by its parse.py as the number of instances held per 300 s round, up to 4).
CBL_CAPACITY = '{"metadata": {"gap_seconds": 300}, "data": [0, 4, 4, 1, 3, 0]}'


def test_cbl_simulator_trace_data_are_preemption_flags(tmp_path: Path) -> None:
    path = tmp_path / "us-east-1f" / "full.json"
    path.parent.mkdir()
    path.write_text(CBL_PREEMPTED)
    [tr] = load_trace(path)
    assert tr.available == (1, 1, 0, 0, 1)
    # the same availability as the CSV it was converted from (1 = available there)
    csv_path = tmp_path / "us-east-1f.csv"
    csv_path.write_text(
        "date,availability\n" + "".join(f"{i * 600},{v}\n" for i, v in enumerate([1, 1, 0, 0, 1]))
    )
    assert load_trace(csv_path)[0].available == tr.available


def test_cbl_capacity_captures_are_counts_and_metadata_counts_decides(tmp_path: Path) -> None:
    path = tmp_path / "cap.json"
    path.write_text(CBL_CAPACITY)
    assert load_trace(path)[0].available == (0, 4, 4, 1, 3, 0)
    path.write_text('{"metadata": {"gap_seconds": 300, "counts": true}, "data": [0, 1, 1]}')
    assert load_trace(path)[0].available == (0, 1, 1)
    path.write_text('{"metadata": {"gap_seconds": 300, "counts": false}, "data": [0, 2]}')
    with pytest.raises(DataError, match="values above 1"):
        load_trace(path)
    path.write_text('{"metadata": {"gap_seconds": 300, "counts": "yes"}, "data": [0, 2]}')
    with pytest.raises(DataError, match="true or false"):
        load_trace(path)


def test_probe_csv_one_trace_per_zone(tmp_path: Path) -> None:
    path = tmp_path / "probe.csv"
    path.write_text(
        "time,zone,requested,created\n"
        "2023-01-01T00:00:00,a,4,4\n2023-01-01T00:00:00,b,4,0\n"
        "2023-01-01T00:05:00,a,4,2\n2023-01-01T00:05:00,b,4,4\n"
        "2023-01-01T00:10:00,a,4,0\n2023-01-01T00:10:00,b,4,1\n"
    )
    trs = load_trace(path)
    assert {t.name: t.available for t in trs} == {"a": (4, 2, 0), "b": (0, 4, 1)}
    assert trs[0].gap_hours == pytest.approx(5 / 60)


def test_price_json(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"z1": [1.0, 2.0]}')
    assert load_prices(path) == {"z1": (1.0, 2.0)}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("date,availability\n", "no ticks"),
        ("date,availability\n2023-01-01 00:00:00,x\n2023-01-01 00:01:00,1\n", "must be a number"),
        ("date,availability\nyesterday,1\nnow,1\n", "bad timestamp"),
        ('{"metadata": {"gap_seconds": 60}, "data": []}', "no ticks"),
        ('{"metadata": {}, "data": [1]}', "gap_seconds"),
        ('{"metadata": {"gap_seconds": 60}, "data": [1, "a"]}', "must be a number"),
    ],
)
def test_bad_files(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / ("t.json" if content.startswith("{") else "t.csv")
    path.write_text(content)
    with pytest.raises(DataError, match=needle):
        load_trace(path)


def test_a_one_row_csv_is_bad_input_not_bad_data(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("date,availability\n2023-01-01 00:00:00,1\n")
    with pytest.raises(InputError, match=r"t\.csv: 1 row; a CSV trace needs at least 2 rows"):
        load_trace(path)


def test_trace_rejects_price_series_of_wrong_length() -> None:
    with pytest.raises(DataError, match="2 prices for 3 ticks"):
        Trace(name="z", gap_hours=0.1, available=(1, 1, 0), price_usd_per_hour=(1.0, 1.0))


def test_align_truncates_to_shortest_and_says_so() -> None:
    a = Trace(name="a", gap_hours=0.1, available=(1, 1, 1, 1))
    b = Trace(name="b", gap_hours=0.1, available=(0, 1))
    zones = align_zones([a, b])
    assert zones.ticks == 2 and "truncated from 4 to 2" in zones.notes[0]
    with pytest.raises(DataError, match="share a tick gap"):
        align_zones([a, Trace(name="c", gap_hours=0.5, available=(1,))])


def artifact_json(path: Path, values: list[int], *, spot: float, per_tick: bool) -> Path:
    """A trace laid out like the public SkyNomad artifact: prices beside `data`, the flat
    spot and on-demand prices in `metadata.price_info`, one zone per folder in `full.json`."""
    meta: dict[str, object] = {
        "gap_seconds": 600,
        "price_info": {"price": spot, "on_demand_price": 3.06},
    }
    body: dict[str, object] = {"metadata": meta, "data": values}
    if per_tick:
        body["prices"] = [spot + 0.01 * i for i in range(len(values))]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body))
    return path


def test_artifact_layout_prices_and_zone_names(tmp_path: Path) -> None:
    a = artifact_json(tmp_path / "us-east-1f" / "full.json", [1, 1, 0], spot=1.2, per_tick=True)
    b = artifact_json(tmp_path / "us-east-2a" / "full.json", [0, 1, 1], spot=0.9, per_tick=False)
    [ta] = load_trace(a)
    [tb] = load_trace(b)
    assert (ta.name, tb.name) == ("us-east-1f", "us-east-2a")
    assert ta.price_usd_per_hour == pytest.approx((1.2, 1.21, 1.22))
    assert tb.price_usd_per_hour == (0.9, 0.9, 0.9)
    assert ta.on_demand_usd_per_hour == tb.on_demand_usd_per_hour == 3.06
    assert ta.gap_hours == pytest.approx(600 / 3600)


def test_same_stem_in_two_folders_is_two_zones_but_one_file_twice_repeats(tmp_path: Path) -> None:
    a = artifact_json(tmp_path / "east" / "trace.json", [1, 0, 1], spot=1.0, per_tick=False)
    b = artifact_json(tmp_path / "west" / "trace.json", [0, 1, 1], spot=1.0, per_tick=False)
    traces, _ = load_traces([a, b])
    assert [t.name for t in traces] == ["east/trace", "west/trace"]
    twice, _ = load_traces([a, a])
    with pytest.raises(DataError, match="zone names repeat"):
        align_zones(twice)


def test_bad_price_info_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"metadata": {"gap_seconds": 60, "price_info": 3}, "data": [1]}))
    with pytest.raises(DataError, match="price_info"):
        load_trace(path)
    path.write_text(
        json.dumps({"metadata": {"gap_seconds": 60, "price_info": {"price": "x"}}, "data": [1]})
    )
    with pytest.raises(DataError, match=r"price_info\.price"):
        load_trace(path)


def test_probe_csv_zones_share_one_time_grid(tmp_path: Path) -> None:
    """A real probe log (GCP rounds every 10 min, local-time offsets, seconds of jitter) misses
    rounds: zone b has no probe at 00:20 and starts late. Ticks must stay the same moments in
    every zone, not shift left."""
    path = tmp_path / "probe.csv"
    rows = [
        ("2025-10-03T17:00:00-07:00", "a", 16),
        ("2025-10-03T17:10:02-07:00", "a", 16),
        ("2025-10-03T17:10:04-07:00", "b", 5),
        ("2025-10-03T17:20:01-07:00", "a", 3),
        ("2025-10-03T17:29:58-07:00", "a", 0),
        ("2025-10-03T17:30:01-07:00", "b", 16),
        ("2025-10-04T00:40:00Z", "a", 9),  # the same clock in UTC
        ("2025-10-04T00:40:03Z", "b", 1),
    ]
    path.write_text(
        "time,zone,requested,created\n" + "".join(f"{t},{z},16,{c}\n" for t, z, c in rows)
    )
    traces, notes = load_trace_with_notes(path)
    got = {t.name: t.available for t in traces}
    assert got == {"a": (16, 16, 3, 0, 9), "b": (0, 5, 5, 16, 1)}
    assert all(t.gap_hours == pytest.approx(10 / 60, rel=0.01) for t in traces)
    assert len(notes) == 1 and "1 zone(s) ('b')" in notes[0] and "of the 5 ticks" in notes[0]
    assert "1-1 ticks each repeat" in notes[0] and "1 zone(s) start late" in notes[0]


def test_probe_csv_zone_probed_once_is_kept_but_no_gap_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "probe.csv"
    path.write_text(
        "time,zone,requested,created\n"
        "2025-10-04T00:00:00Z,a,4,4\n2025-10-04T00:10:00Z,a,4,0\n2025-10-04T00:20:00Z,a,4,2\n"
        "2025-10-04T00:20:00Z,late,4,3\n"
    )
    traces, notes = load_trace_with_notes(path)
    assert {t.name: t.available for t in traces} == {"a": (4, 0, 2), "late": (0, 0, 3)}
    assert any("'late'" in n for n in notes)
    path.write_text("time,zone,requested,created\n2025-10-04T00:00:00Z,a,4,4\n")
    with pytest.raises(DataError, match="probed twice"):
        load_trace(path)


def test_zst_trace_reads_like_the_plain_file(write_csv) -> None:
    zstandard = pytest.importorskip("zstandard")
    plain = write_csv("z1", [0, 1, 1, 2])
    packed = plain.with_name("z1.csv.zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    [a], [b] = load_trace(plain), load_trace(packed)
    assert (a.available, a.gap_hours, a.start_time) == (b.available, b.gap_hours, b.start_time)

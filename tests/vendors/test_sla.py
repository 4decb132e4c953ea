"""`gpurent vendors sla`: the availability arithmetic on hand-checked months, its properties,
outages from the monitor's records, and the CLI with its one-line errors."""

from __future__ import annotations

import csv
import itertools
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.monitor.sample import COLUMNS, GpuSample, Sample, to_rows
from gpurent.vendors.sla import Outage, SlaTerms, Tier, merge, monthly_sla, sla_report
from tests.conftest import run_cli

BERLIN = ZoneInfo("Europe/Berlin")
TERMS = SlaTerms(
    tiers=(
        Tier(below_pct=99.9, credit_pct=10),
        Tier(below_pct=99.0, credit_pct=25),
        Tier(below_pct=95.0, credit_pct=100),
    ),
    monthly_bill_usd=1000.0,
)


def _o(start: str, end: str, resource: str = "node-1", reason: str = "down") -> Outage:
    return Outage(
        start=datetime.fromisoformat(start),
        end=datetime.fromisoformat(end),
        resource=resource,
        reason=reason,
        evidence="test",
    )


def _down(start: datetime, seconds: float, resource: str = "node-1") -> Outage:
    return Outage(
        start=start,
        end=start + timedelta(seconds=seconds),
        resource=resource,
        reason="down",
        evidence="test",
    )


# ----------------------------------------------------------------- hand-checked months


def test_a_30_day_month_at_exactly_99_9_percent_owes_nothing_one_second_more_owes_10() -> None:
    start = datetime(2026, 11, 10, tzinfo=UTC)
    # November: 30 days = 2 592 000 s; 0.1% of it is 2592 s (43 min 12 s).
    exact = monthly_sla([_down(start, 2592)], TERMS, UTC, 2026, 11)
    assert exact.period_s == 2_592_000
    assert exact.availability_pct == pytest.approx(99.9, abs=1e-12)
    assert exact.tier is None and exact.credit_usd == 0.0
    over = monthly_sla([_down(start, 2593)], TERMS, UTC, 2026, 11)
    assert over.tier == Tier(below_pct=99.9, credit_pct=10)
    assert over.credit_usd == 100.0


def test_a_31_day_month_needs_more_downtime_for_the_same_tier() -> None:
    start = datetime(2026, 12, 10, tzinfo=UTC)
    # December: 31 days = 2 678 400 s; 0.1% = 2678.4 s. 2600 s breaks November, not December.
    dec = monthly_sla([_down(start, 2600)], TERMS, UTC, 2026, 12)
    assert dec.period_s == 2_678_400
    assert dec.tier is None
    assert dec.availability_pct == pytest.approx(100 * (1 - 2600 / 2_678_400))
    nov = monthly_sla([_down(datetime(2026, 11, 10, tzinfo=UTC), 2600)], TERMS, UTC, 2026, 11)
    assert nov.credit_pct == 10


def test_february_has_28_days_and_29_in_a_leap_year() -> None:
    feb = monthly_sla([_down(datetime(2026, 2, 5, tzinfo=UTC), 2419.2)], TERMS, UTC, 2026, 2)
    assert feb.period_s == 28 * 86400
    assert feb.tier is None  # 2419.2 s is exactly 0.1% of 28 days
    leap = monthly_sla([], TERMS, UTC, 2028, 2)
    assert leap.period_s == 29 * 86400 and leap.availability_pct == 100.0


def test_dst_months_in_berlin_are_an_hour_short_and_an_hour_long() -> None:
    march = monthly_sla([], TERMS, BERLIN, 2026, 3)
    october = monthly_sla([], TERMS, BERLIN, 2026, 10)
    assert march.period_s == (31 * 24 - 1) * 3600
    assert october.period_s == (31 * 24 + 1) * 3600
    assert march.start.isoformat() == "2026-03-01T00:00:00+01:00"
    assert march.end.isoformat() == "2026-04-01T00:00:00+02:00"


def test_an_outage_over_the_dst_change_counts_the_real_hours() -> None:
    # 01:00 CET to 04:00 CEST on 29 March 2026: the clock shows 3 h, 2 h passed.
    outage = _o("2026-03-29T01:00:00+01:00", "2026-03-29T04:00:00+02:00")
    m = monthly_sla([outage], TERMS, BERLIN, 2026, 3)
    assert m.downtime_s == 7200
    assert m.availability_pct == pytest.approx(100 * (1 - 2 / 743))
    assert m.credit_pct == 10  # 2 h of 743 h is 99.73%


def test_an_outage_spanning_months_is_split_at_the_local_month_boundary() -> None:
    outage = _o("2026-11-30T22:00:00+00:00", "2026-12-01T01:00:00+00:00")
    utc = sla_report([outage], TERMS, UTC)
    assert [(m.month, m.downtime_s) for m in utc] == [("2026-11", 7200), ("2026-12", 3600)]
    # Berlin's December starts at 23:00 UTC on 30 November.
    berlin = sla_report([outage], TERMS, BERLIN)
    assert [(m.month, m.downtime_s) for m in berlin] == [("2026-11", 3600), ("2026-12", 7200)]
    assert berlin[1].rows[0].start.isoformat() == "2026-12-01T00:00:00+01:00"


def test_overlapping_and_repeated_outages_count_once() -> None:
    outages = [
        _o("2026-11-03T10:00:00+00:00", "2026-11-03T11:00:00+00:00", "node-1"),
        _o("2026-11-03T10:30:00+00:00", "2026-11-03T11:30:00+00:00", "node-2"),
        _o("2026-11-03T10:40:00+00:00", "2026-11-03T10:50:00+00:00", "node-1"),  # inside
        _o("2026-11-03T10:00:00+00:00", "2026-11-03T11:00:00+00:00", "node-1"),  # repeated
        _o("2026-11-04T00:00:00+00:00", "2026-11-04T00:10:00+00:00", "node-3"),
    ]
    m = monthly_sla(outages, TERMS, UTC, 2026, 11)
    assert m.downtime_s == 90 * 60 + 10 * 60
    assert dict(m.resources) == {"node-1": 3600, "node-2": 3600, "node-3": 600}
    assert len(m.rows) == 5


def test_the_tier_with_the_largest_credit_met_applies() -> None:
    start = datetime(2026, 11, 2, tzinfo=UTC)
    # 1.5% of 30 days = 38 880 s: below 99.9 and 99.0, not below 95.
    m = monthly_sla([_down(start, 38_880)], TERMS, UTC, 2026, 11)
    assert m.availability_pct == pytest.approx(98.5)
    assert m.credit_pct == 25 and m.credit_usd == 250.0
    allout = monthly_sla([_down(start, 20 * 86400)], TERMS, UTC, 2026, 11, monthly_bill_usd=80)
    assert allout.credit_pct == 100 and allout.credit_usd == 80.0


def test_excluded_reasons_are_shown_not_counted() -> None:
    terms = SlaTerms(tiers=TERMS.tiers, excluded_reasons=("scheduled maintenance",))
    outages = [
        _o(
            "2026-11-03T10:00:00+00:00", "2026-11-03T12:00:00+00:00", reason="Scheduled maintenance"
        ),
        _o("2026-11-03T11:00:00+00:00", "2026-11-03T11:30:00+00:00", reason="GPU lost"),
    ]
    m = monthly_sla(outages, terms, UTC, 2026, 11)
    assert m.downtime_s == 1800 and m.excluded_s == 5400
    assert [r.excluded for r in m.rows] == [True, False]
    assert m.credit_usd is None  # no bill amount anywhere


# ----------------------------------------------------------------- properties

_BASE = datetime(2026, 10, 20, tzinfo=UTC)
_spans = st.lists(
    st.tuples(st.integers(0, 40 * 86400), st.integers(1, 5 * 86400)), min_size=0, max_size=8
)


def _outages(spans: list[tuple[int, int]]) -> list[Outage]:
    return [_down(_BASE + timedelta(seconds=a), b, f"n{i % 3}") for i, (a, b) in enumerate(spans)]


@settings(max_examples=60, deadline=None)
@given(spans=_spans, extra=st.tuples(st.integers(0, 40 * 86400), st.integers(1, 5 * 86400)))
def test_more_downtime_never_raises_availability_nor_lowers_the_credit(
    spans: list[tuple[int, int]], extra: tuple[int, int]
) -> None:
    for zone in (UTC, BERLIN):
        before = monthly_sla(_outages(spans), TERMS, zone, 2026, 11)
        after = monthly_sla(_outages([*spans, extra]), TERMS, zone, 2026, 11)
        assert after.availability_pct <= before.availability_pct
        assert after.downtime_s >= before.downtime_s
        assert after.credit_pct >= before.credit_pct
        assert 0 <= after.availability_pct <= 100


@settings(max_examples=60, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), max_size=12))
def test_merge_covers_the_same_points_without_overlap(spans: list[tuple[int, int]]) -> None:
    merged = merge(spans)
    covered = {p for a, b in spans for p in range(a, b)}
    assert {p for a, b in merged for p in range(a, b)} == covered
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(merged))


@settings(max_examples=40, deadline=None)
@given(spans=_spans)
def test_months_split_the_downtime_without_losing_any(spans: list[tuple[int, int]]) -> None:
    outages = _outages(spans)
    total = sum(m.downtime_s for m in sla_report(outages, TERMS, BERLIN))
    points = merge(
        [
            (int(o.start.timestamp()), int(o.end.timestamp()))
            for o in outages  # whole seconds by construction
        ]
    )
    assert total == sum(b - a for a, b in points)


# ----------------------------------------------------------------- the CLI


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


TERMS_TOML = """
name = "Example GPU cloud SLA"
monthly_bill_usd = 12000
excluded_reasons = ["scheduled maintenance"]
[[tier]]
below_pct = 99.9
credit_pct = 10
[[tier]]
below_pct = 99.0
credit_pct = 25
"""

OUTAGES_CSV = """start,end,resource,reason
2026-11-03T10:00:00+01:00,2026-11-03T11:00:00+01:00,node-1,GPU fell off the bus
2026-11-03T10:30:00+01:00,2026-11-03T11:30:00+01:00,node-2,network
2026-11-30T23:30:00+01:00,2026-12-01T00:30:00+01:00,node-1,host down
2026-11-10T02:00:00Z,2026-11-10T06:00:00Z,all,Scheduled maintenance
"""


def test_cli_json_gives_the_credit_the_evidence_and_the_claim(tmp_path: Path) -> None:
    terms = _write(tmp_path / "sla.toml", TERMS_TOML)
    log = _write(tmp_path / "outages.csv", OUTAGES_CSV)
    code, out, err = run_cli(
        "vendors", "sla", "--outages", str(log), "--terms", str(terms),
        "--month", "2026-11", "--tz", "Europe/Berlin", "--json",
    )  # fmt: skip
    assert code == 0, err
    (month,) = json.loads(out)["months"]
    assert month["month"] == "2026-11" and month["time_zone"] == "Europe/Berlin"
    # 10:00-11:30 merged (1.5 h) + 23:30-24:00 on the 30th (0.5 h) = 2 h of 720 h.
    assert month["downtime_s"] == 7200 and month["excluded_s"] == 4 * 3600
    assert month["availability_pct"] == pytest.approx(100 * (1 - 2 / 720))
    assert month["tier"] == {"below_pct": 99.9, "credit_pct": 10}
    assert month["credit_usd"] == 1200.0
    assert [e["evidence"] for e in month["evidence"]] == [
        f"{log}:2", f"{log}:3", f"{log}:5", f"{log}:4",
    ]  # fmt: skip
    assert month["evidence"][3]["end"] == "2026-12-01T00:00:00+01:00"
    assert "Credit owed: 10%" in month["claim"] and f"{log}:3" in month["claim"]


def test_cli_monthly_bill_flag_overrides_the_terms_and_markdown_has_the_claim(
    tmp_path: Path,
) -> None:
    terms = _write(tmp_path / "sla.toml", TERMS_TOML)
    log = _write(tmp_path / "outages.csv", OUTAGES_CSV)
    code, out, err = run_cli(
        "vendors", "sla", "--outages", str(log), "--terms", str(terms), "--tz", "Europe/Berlin",
        "--monthly-bill", "500", "--markdown",
    )  # fmt: skip
    assert code == 0, err
    assert "| 2026-11 | Europe/Berlin | 2 h | 99.7222% |" in out
    assert "$50.00" in out and "## 2026-12" in out and "```text" in out
    code, out, err = run_cli(
        "vendors", "sla", "--outages", str(log), "--terms", str(terms), "--tz", "Europe/Berlin",
    )  # fmt: skip
    assert code == 0, err
    assert "SLA credit request for 2026-11" in out and "$1,200.00" in out


def _samples_csv(path: Path, samples: list[Sample]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        for s in samples:
            writer.writerows(to_rows(s))
    return path


def _recorded() -> list[Sample]:
    """Samples every 60 s over 2026-11-05 from 10:00 UTC: GPU 1 lost for 3 samples, an Xid 79
    on GPU 0 once, an application Xid 13 (not downtime), and 30 min with no sample at all."""
    t0 = datetime(2026, 11, 5, 10, 0, tzinfo=UTC).timestamp()
    out = []
    times = [t0 + 60 * i for i in range(20)] + [t0 + 60 * 19 + 1800 + 60 * i for i in range(5)]
    for i, t in enumerate(times):
        gpus = (
            GpuSample(index=0, xids=(79,) if i == 2 else (13,) if i == 4 else ()),
            GpuSample(index=1, lost=5 <= i <= 7),
        )
        out.append(Sample(timestamp_s=t, gpus=gpus))
    return out


def test_samples_file_and_store_give_gpu_lost_xid_and_host_down(tmp_path: Path) -> None:
    from gpurent.store import create_schema, insert_rows, open_engine

    terms = _write(tmp_path / "sla.toml", TERMS_TOML)
    samples = _recorded()
    db = tmp_path / "m.db"
    engine = open_engine(db)
    create_schema(engine)
    with engine.begin() as conn:
        insert_rows(conn, [r for s in samples for r in to_rows(s)])
    engine.dispose()
    for source in (_samples_csv(tmp_path / "samples.csv", samples), db):
        code, out, err = run_cli(
            "vendors", "sla", "--samples", str(source), "--terms", str(terms), "--json"
        )
        assert code == 0, err
        (month,) = json.loads(out)["months"]
        by_reason = {(e["resource"], e["reason"]): e["duration_s"] for e in month["evidence"]}
        assert by_reason == {
            ("gpu 0", "Xid 79"): 60,
            ("gpu 1", "GPU lost"): 180,
            ("host", "no samples (host down)"): 1800,
        }
        assert month["downtime_s"] == 60 + 180 + 1800
        assert "samples 2026-11-05T10:05:00Z to 2026-11-05T10:08:00Z" in json.dumps(month)


@pytest.mark.parametrize(
    ("csv_text", "terms_text", "args", "message"),
    [
        ("begin,finish\n1,2\n", TERMS_TOML, [], "missing column(s) start, end"),
        ("start,end\nyesterday,2026-11-03T10:00Z\n", TERMS_TOML, [], ":2: start: bad timestamp"),
        ("start,end\n2026-11-03T10:00,2026-11-03T11:00Z\n", TERMS_TOML, [], "no time zone offset"),
        ("start,end\n2026-11-03T11:00Z,2026-11-03T10:00Z\n", TERMS_TOML, [], "is not after start"),
        (OUTAGES_CSV, 'name = "x"\n', [], "no [[tier]] tables"),
        (OUTAGES_CSV, "[[tier]]\nbelow_pct = 99.9\n", [], "tier 1: missing credit_pct"),
        (OUTAGES_CSV, "[[tier]]\nbelow_pct = 101\ncredit_pct = 5\n", [], "between 0 and 100"),
        (OUTAGES_CSV, "tiers = 3\n", [], "unknown key 'tiers'"),
        (OUTAGES_CSV, "[[tier\n", [], "not valid TOML"),
        (OUTAGES_CSV, TERMS_TOML, ["--tz", "Mars/Olympus"], "unknown time zone"),
        (OUTAGES_CSV, TERMS_TOML, ["--month", "2026-13"], "give a calendar month as YYYY-MM"),
        (OUTAGES_CSV, TERMS_TOML, ["--monthly-bill", "-5"], "--monthly-bill must be >= 0"),
    ],
)
def test_bad_input_is_one_line_with_exit_2(
    tmp_path: Path, csv_text: str, terms_text: str, args: list[str], message: str
) -> None:
    log = _write(tmp_path / "outages.csv", csv_text)
    terms = _write(tmp_path / "sla.toml", terms_text)
    code, _, err = run_cli("vendors", "sla", "--outages", str(log), "--terms", str(terms), *args)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_no_source_and_no_outages_are_one_line_errors(tmp_path: Path) -> None:
    terms = _write(tmp_path / "sla.toml", TERMS_TOML)
    code, _, err = run_cli("vendors", "sla", "--terms", str(terms))
    assert code == 2 and "give --outages FILE or --samples" in err
    log = _write(tmp_path / "outages.csv", "start,end,resource,reason\n")
    code, _, err = run_cli("vendors", "sla", "--outages", str(log), "--terms", str(terms))
    assert code == 2 and "--month YYYY-MM" in err
    code, out, err = run_cli(
        "vendors", "sla", "--outages", str(log), "--terms", str(terms), "--month", "2026-02",
        "--json",
    )  # fmt: skip
    assert code == 0 and json.loads(out)["months"][0]["availability_pct"] == 100.0


_CELL = st.one_of(
    st.sampled_from(
        ["", "nan", "inf", "-1", "1e300", "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59Z",
         "9999-12-31T23:00:00-05:00", "2026-02-30T00:00Z", "2026-11-03T10:00:00+01:00",
         "2026-11-03T12:00:00+01:00", "1.7e9", "253402300799", "2026-11-03 10:00 UTC"]
    ),
    st.text(max_size=12),
)  # fmt: skip


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(start=_CELL, end=_CELL, tz=st.sampled_from(["UTC", "Europe/Berlin", "Pacific/Kiritimati"]))
def test_any_outage_cells_give_an_answer_or_one_line(start: str, end: str, tz: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        log = _write(Path(tmp) / "o.csv", "")
        with log.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([["start", "end"], [start, end]])
        terms = _write(Path(tmp) / "t.toml", TERMS_TOML)
        code, out, err = run_cli(
            "vendors", "sla", "--outages", str(log), "--terms", str(terms), "--tz", tz, "--json"
        )
    assert code in (0, 2), err
    if code == 0:
        assert json.loads(out)["months"]
    else:
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err


EXAMPLES = Path(__file__).parents[2] / "examples" / "sla"


def test_the_documented_example_gives_the_documented_claim() -> None:
    code, out, err = run_cli(
        "vendors", "sla", "--outages", str(EXAMPLES / "outages.csv"),
        "--terms", str(EXAMPLES / "terms.toml"), "--month", "2026-11", "--tz", "Europe/Berlin",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    (month,) = json.loads(out)["months"]
    docs = (Path(__file__).parents[2] / "docs" / "vendors-sla.md").read_text(encoding="utf-8")
    for line in month["claim"].splitlines()[:6]:  # the figures, as docs/vendors-sla.md shows
        assert line in docs, line
    assert month["excluded_s"] == 4 * 3600 and month["credit_usd"] == 1200.0
    code, out, err = run_cli(
        "vendors", "audit", "--bill", str(EXAMPLES / "bill.csv"),
        "--launches", str(EXAMPLES / "launches.csv"), "--json",
    )  # fmt: skip
    assert code == 0, err
    kinds = {(f["kind"], f["resource"]) for f in json.loads(out)["findings"]}
    assert kinds == {
        ("over-billed", "node-1"),
        ("spot-billed-as-on-demand", "node-2"),
        ("storage-after-stop", "vol-data"),
    }


def test_a_sample_timestamp_beyond_the_years_is_one_line(tmp_path: Path) -> None:
    samples = _samples_csv(
        tmp_path / "s.csv",
        [Sample(timestamp_s=1e15, gpus=(GpuSample(index=0, lost=True),))],
    )
    terms = _write(tmp_path / "sla.toml", TERMS_TOML)
    code, _, err = run_cli("vendors", "sla", "--samples", str(samples), "--terms", str(terms))
    assert code == 2 and "is not a time between 1971 and 9998" in err, err

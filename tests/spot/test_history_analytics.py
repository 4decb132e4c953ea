"""Price history: parsers (AWS JSON, TSV, .tsv.zst), step functions, profiles, verdicts, CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import typer
import zstandard
from typer.testing import CliRunner

from gpurent.cli.spot_analytics_cmds import register_spot_analytics
from gpurent.errors import DataError
from gpurent.spot.analytics.forecast import backtest
from gpurent.spot.analytics.history import (
    build_series,
    is_weekday_evening,
    price_profile,
    weekday_evening_test,
)
from gpurent.spot.io.price_io import PriceRecord, parse_archive_tsv, parse_aws_json

spot = typer.Typer()
register_spot_analytics(spot)
runner = CliRunner()
MONDAY = datetime(2023, 3, 6, tzinfo=UTC)


def _tsv(days: int, evening_discount: float = 0.0, step_h: int = 1) -> str:
    """Hourly price changes; weekday evenings (17-22 UTC) cheaper by `evening_discount`."""
    lines = []
    for h in range(0, days * 24, step_h):
        t = MONDAY + timedelta(hours=h)
        evening = t.weekday() < 5 and 17 <= t.hour < 22
        price = 1.0 * (1 - evening_discount if evening else 1.0) + 0.001 * (h % 3)
        lines.append(f"use1-az1\tp3.2xlarge\tLinux/UNIX\t{price:.6f}\t{t:%Y-%m-%dT%H:%M:%S}+00:00")
    return "\n".join(lines) + "\n"


def test_step_function_is_time_weighted() -> None:
    recs = [
        PriceRecord(zone="z", instance_type="i", product="p", price_usd_per_hour=1.0, time=MONDAY),
        PriceRecord(
            zone="z",
            instance_type="i",
            product="p",
            price_usd_per_hour=3.0,
            time=MONDAY + timedelta(hours=3),
        ),
    ]
    (s,) = build_series(recs, end=MONDAY + timedelta(hours=4))
    assert s.mean_usd_per_hour() == pytest.approx((3 * 1 + 1 * 3) / 4)
    prof = price_profile([s], relative=False)
    assert prof.means[0] == 1.0 and prof.means[3] == 3.0 and prof.covered_bins == 4
    assert s.value_at(MONDAY + timedelta(minutes=200)) == 3.0


def test_weekday_evening_pattern_detected_when_present_and_not_when_absent() -> None:
    with_pattern = build_series(parse_archive_tsv(_tsv(28, 0.10), "x.tsv"))
    t = weekday_evening_test(price_profile(with_pattern), quantity="price", days_of_data=28)
    assert t.verdict.startswith("yes") and t.relative_difference == pytest.approx(-0.10, abs=0.01)
    flat = build_series(parse_archive_tsv(_tsv(28, 0.0), "x.tsv"))
    t = weekday_evening_test(price_profile(flat), quantity="price", days_of_data=28)
    assert not t.verdict.startswith("yes")
    short = build_series(parse_archive_tsv(_tsv(3, 0.10), "x.tsv"))
    t = weekday_evening_test(price_profile(short), quantity="price", days_of_data=3)
    assert t.verdict.startswith("cannot tell")


def test_evening_bins() -> None:
    assert is_weekday_evening(17, (17, 22)) and not is_weekday_evening(5 * 24 + 18, (17, 22))


def test_backtest_last_value_wins_on_random_walk_steps() -> None:
    series = build_series(parse_archive_tsv(_tsv(10, 0.0, step_h=5), "x.tsv"))
    bt = backtest(series, horizon_h=1)
    maes = {s.method: s.mae_usd_per_hour for s in bt.scores}
    assert maes["last"] is not None and maes["weekly"] is not None
    assert bt.best_method in ("last", "ewma", "weekly")
    assert len(bt.forecasts) == 1


def test_parsers_accept_formats_and_reject_bad_values() -> None:
    page = {
        "SpotPriceHistory": [
            {
                "AvailabilityZone": "us-east-1a",
                "InstanceType": "p3.2xlarge",
                "ProductDescription": "Linux/UNIX",
                "SpotPrice": "0.918000",
                "Timestamp": "2023-03-06T00:00:00.000Z",
            }
        ],
        "NextToken": "",
    }
    (rec,) = parse_aws_json(json.dumps(page), "p.json")
    assert rec.price_usd_per_hour == 0.918 and rec.time.tzinfo is not None
    assert len(parse_aws_json(json.dumps([page, page]), "p.json")) == 2
    with pytest.raises(DataError, match="must be a number"):
        bad = json.loads(json.dumps(page))
        bad["SpotPriceHistory"][0]["SpotPrice"] = "cheap"
        parse_aws_json(json.dumps(bad), "p.json")
    with pytest.raises(DataError, match="SpotPriceHistory"):
        parse_aws_json('{"Foo": []}', "p.json")
    with pytest.raises(DataError, match="lacks Timestamp"):
        bad = json.loads(json.dumps(page))
        del bad["SpotPriceHistory"][0]["Timestamp"]
        parse_aws_json(json.dumps(bad), "p.json")
    with pytest.raises(DataError, match=r"x.tsv:1: expected 5"):
        parse_archive_tsv("a\tb\tc\n", "x.tsv")
    with pytest.raises(DataError, match=r"x.tsv:1: bad timestamp"):
        parse_archive_tsv("a\tb\tc\t1.0\tyesterday\n", "x.tsv")


def test_cli_history_tsv_zst_html_and_json(tmp_path) -> None:
    path = tmp_path / "h.tsv.zst"
    path.write_bytes(zstandard.ZstdCompressor().compress(_tsv(21, 0.0).encode()))
    html = tmp_path / "r.html"
    r = runner.invoke(spot, ["history", str(path), "--html", str(html)])
    assert r.exit_code == 0, r.stderr
    assert "weekday evenings" in r.stdout
    page = html.read_text()
    assert "<svg" in page and "Forecast back-test" in page
    r = runner.invoke(spot, ["history", str(path), "--json"])
    data = json.loads(r.stdout)
    assert len(data["price_profile"]["means"]) == 168
    assert data["price_evening"]["p_value"] is not None


def test_cli_history_with_trace_prices(tmp_path) -> None:
    lines = ["date,availability"]
    t0 = MONDAY
    n = 24 * 15 * 2
    for i in range(n):
        t = t0 + timedelta(minutes=30 * i)
        lines.append(f"{t:%Y-%m-%d %H:%M:%S},{int(not (9 <= t.hour < 17))}")
    (tmp_path / "z1.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "p.json").write_text(json.dumps({"z1": [1.0 + 0.01 * (i % 7) for i in range(n)]}))
    r = runner.invoke(
        spot,
        [
            "history",
            "--trace",
            str(tmp_path / "z1.csv"),
            "--prices",
            str(tmp_path / "p.json"),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["availability_business_hours"]["verdict"].startswith("yes")
    assert data["availability_business_hours"]["relative_difference"] < -0.9
    (tmp_path / "short.json").write_text(json.dumps({"z1": [1.0, 2.0]}))
    r = runner.invoke(
        spot,
        ["history", "--trace", str(tmp_path / "z1.csv"), "--prices", str(tmp_path / "short.json")],
    )
    assert r.exit_code != 0 and "give one price per tick" in r.stderr


def test_cli_history_errors(tmp_path) -> None:
    r = runner.invoke(spot, ["history"])
    assert r.exit_code == 2 and "price history" in r.stderr
    empty = tmp_path / "e.tsv"
    empty.write_text("")
    r = runner.invoke(spot, ["history", str(empty)])
    assert r.exit_code == 1 and "empty" in r.stderr
    notzst = tmp_path / "x.tsv.zst"
    notzst.write_bytes(b"not zstd")
    r = runner.invoke(spot, ["history", str(notzst)])
    assert r.exit_code == 1 and "zstandard" in r.stderr
    ok = tmp_path / "ok.tsv"
    ok.write_text(_tsv(2))
    r = runner.invoke(spot, ["history", str(ok), "--instance-type", "nope"])
    assert r.exit_code == 2 and "no price series match" in r.stderr
    r = runner.invoke(spot, ["history", str(ok), "--evening", "evening"])
    assert r.exit_code == 2 and "--evening" in r.stderr

"""`gpurent offers`, `catalog import|info`, the bundled snapshot and the offer filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpurent.catalog import BUNDLED_AS_OF, bundled_offers, find_gpu
from gpurent.catalog.query import OfferQuery, OfferSort, select_offers
from gpurent.catalog.sources import detect_format, load_offers
from gpurent.cli.main import app
from gpurent.errors import DataError

runner = CliRunner()
BUNDLED_AGE_TEXT = "list prices, first half of 2026 (approximate), bundled snapshot"


def test_bundled_snapshot_is_dated_sourced_and_priced() -> None:
    offers = bundled_offers()
    assert len(offers) == 899  # 915 rows minus 16 GCP accelerator-only rows
    assert not any(o.instance_type.startswith("accelerator:") for o in offers)
    for o in offers:
        assert o.as_of and o.source and o.gpu_count >= 1
        assert (o.price_usd_per_hour or 0) > 0 or (o.spot_price_usd_per_hour or 0) > 0
    assert {o.as_of for o in offers} == {BUNDLED_AS_OF, "2023-06-30"}
    table = load_offers()
    assert table.age == BUNDLED_AGE_TEXT and len(table.skipped) == 16


def test_offers_filters_and_json_schema() -> None:
    r = runner.invoke(
        app,
        [
            "offers",
            "--gpu",
            "h100,A100 80GB SXM4",
            "--min-gpus",
            "8",
            "--provider",
            "aws,gcp",
            "--max-price",
            "60",
            "--sort",
            "gpu-price",
            "--limit",
            "0",
            "--json",
        ],
    )
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"age", "as_of", "source", "count", "matching", "offers"}
    assert out["age"] == BUNDLED_AGE_TEXT and out["as_of"] == [BUNDLED_AS_OF]
    assert out["count"] == out["matching"] == len(out["offers"]) > 0
    per_gpu = [o["price_usd_per_gpu_hour"] for o in out["offers"]]
    assert per_gpu == sorted(per_gpu)
    for o in out["offers"]:
        assert o["gpu_name"] in {"H100-SXM5-80GB", "A100-SXM4-80GB"}
        assert o["gpu_count"] >= 8 and o["provider"] in {"aws", "gcp"}
        assert o["price_usd_per_hour"] <= 60
        assert o["key"] == f"{o['provider']}/{o['instance_type']}/{o['region']}"


def test_offers_spot_region_memory_and_table_age() -> None:
    r = runner.invoke(
        app,
        [
            "offers",
            "--spot",
            "--region",
            "us-east",
            "--min-gpu-memory",
            "40",
            "--sort",
            "spot",
            "--limit",
            "3",
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert "3 of " in r.stdout and "prices: " + BUNDLED_AGE_TEXT in r.stdout
    out = json.loads(
        runner.invoke(
            app,
            [
                "offers",
                "--spot",
                "--region",
                "us-east",
                "--min-gpu-memory",
                "40",
                "--json",
                "--limit",
                "0",
            ],
        ).stdout
    )
    assert all(
        o["spot_price_usd_per_hour"] is not None
        and "us-east" in o["region"]
        and o["gpu_memory_gib"] >= 40
        for o in out["offers"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "H1OO"], "unknown GPU 'H1OO'; did you mean"),
        (["--min-gpus", "0"], "--min-gpus must be >= 1"),
        (["--max-price", "-2"], "--max-price must be > 0"),
        (["--sort", "cheap"], "Invalid value for '--sort'"),
    ],
)
def test_offers_bad_input_is_one_line_exit_2(args: list[str], message: str) -> None:
    r = runner.invoke(app, ["offers", *args])
    assert r.exit_code == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_raw_gpu_names_not_in_spec_table_still_filter() -> None:
    # P40 (Pascal, no tensor cores) has no row in the spec table
    out = json.loads(runner.invoke(app, ["offers", "--gpu", "p40", "--json"]).stdout)
    assert out["count"] > 0 and all(o["gpu_name"] == "P40" for o in out["offers"])


def test_catalog_file_option_warns_skipped_rows(data: Path) -> None:
    r = runner.invoke(app, ["offers", "--catalog", str(data / "plain_offers.csv")])
    assert r.exit_code == 0, r.stderr
    assert "plain_offers.csv:4: skipped" in r.stderr
    assert "box-8xh100" in r.stdout and "file modified" in r.stdout


def test_many_skipped_rows_are_aggregated(tmp_path: Path, data: Path) -> None:
    bad = tmp_path / "lambda.csv"
    lines = (data / "malformed_vms.csv").read_text().splitlines()
    bad.write_text("\n".join([*lines, *lines[2:5]]) + "\n")
    r = runner.invoke(app, ["offers", "--catalog", str(bad)])
    assert r.exit_code == 0
    assert r.stderr.count("skipped:") == 5 and "and 4 more rows skipped" in r.stderr


def test_file_without_usable_row_exits_nonzero(tmp_path: Path) -> None:
    f = tmp_path / "aws.csv"
    f.write_text("InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nx,A10G,1,abc,r\n")
    r = runner.invoke(app, ["offers", "--catalog", str(f)])
    assert r.exit_code == 1 and "no usable GPU offer" in r.stderr
    r = runner.invoke(app, ["catalog", "import", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_unknown_format_names_both_formats(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"SkyPilot vms\.csv .* plain CSV"):
        detect_format("a,b,c\n1,2,3\n", "z.csv")


def test_catalog_import_reports_format_and_skips(data: Path) -> None:
    r = runner.invoke(app, ["catalog", "import", str(data / "gcp_vms.csv"), "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["format"] == "skypilot" and out["offers"] == 4 and out["providers"] == ["gcp"]
    assert out["skipped"][0]["line"] == 4 and out["ignored_rows"] == 1
    r = runner.invoke(app, ["catalog", "import", str(data / "aws_vms.csv")])
    assert "skypilot format, 4 GPU offers, 0 rows skipped" in r.stdout


def test_catalog_info_without_fetch_names_the_bundled_age() -> None:
    r = runner.invoke(app, ["catalog", "info"])
    assert r.exit_code == 0
    assert "prices: " + BUNDLED_AGE_TEXT in r.stdout and "catalog update" in r.stdout


@settings(max_examples=60, deadline=None)
@given(
    min_gpus=st.none() | st.integers(1, 16),
    max_price=st.none() | st.floats(0.05, 120),
    spot=st.booleans(),
    mem=st.none() | st.sampled_from([16.0, 24.0, 48.0, 80.0]),
    sort=st.sampled_from(list(OfferSort)),
)
def test_selection_meets_every_condition_and_is_sorted(
    min_gpus: int | None, max_price: float | None, spot: bool, mem: float | None, sort: OfferSort
) -> None:
    q = OfferQuery(
        min_gpus=min_gpus, max_price_usd_per_hour=max_price, spot_only=spot, min_gpu_memory_gib=mem
    )
    chosen = select_offers(bundled_offers(), q, sort=sort)
    everything = bundled_offers()
    expected = [
        o
        for o in everything
        if (min_gpus is None or o.gpu_count >= min_gpus)
        and (not spot or o.spot_price_usd_per_hour is not None)
        and (mem is None or o.gpu_memory_gib >= mem)
        and (
            max_price is None
            or ((o.spot_price_usd_per_hour if spot else o.price_usd_per_hour) or 1e9) <= max_price
        )
    ]
    assert {o.key + o.gpu_name for o in chosen} == {o.key + o.gpu_name for o in expected}
    if sort is OfferSort.PRICE:
        prices = [o.price_usd_per_hour for o in chosen if o.price_usd_per_hour is not None]
        assert prices == sorted(prices)
    if sort is OfferSort.GPUS:
        counts = [o.gpu_count for o in chosen]
        assert counts == sorted(counts, reverse=True)


def test_every_bundled_gpu_name_of_known_gpus_is_canonical() -> None:
    for o in bundled_offers():
        spec = find_gpu(o.gpu_name)
        if spec is not None:
            assert spec.name == o.gpu_name


def test_non_utf8_file_is_one_line_error_not_a_traceback(tmp_path: Path) -> None:
    f = tmp_path / "aws.csv"
    f.write_bytes(b"\xff\xfe\x00garbage\n")
    for args in (["catalog", "import", str(f)], ["offers", "--catalog", str(f)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 1, args
        assert "aws.csv: not UTF-8 text" in r.stderr and r.stderr.count("\n") == 1


def test_plain_csv_non_finite_price_is_skipped(tmp_path: Path) -> None:
    f = tmp_path / "mine.csv"
    f.write_text(
        "provider,instance_type,gpu,gpu_count,price_hour_usd\n"
        "x,inf-box,H100,1,inf\nx,nan-box,H100,1,nan\nx,ok-box,H100,1,2\n"
    )
    r = runner.invoke(app, ["catalog", "import", str(f), "--json"])
    assert r.exit_code == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["offers"] == 1 and [s["line"] for s in out["skipped"]] == [2, 3]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("provider,instance_type,gpu\nx,a,H100\n", "missing columns gpu_count"),
        (
            "provider,instance_type,gpu,gpu_count,price_hour_usd\nx,a,H100,0,2\nx,b,H100,1,\n",
            "no usable offer row (2 rows skipped)",
        ),
        ("name,price\nbox,2\n", "unknown catalog format"),
    ],
)
def test_unusable_plain_file_is_one_line_exit_1(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "mine.csv"
    f.write_text(text)
    for args in (["catalog", "import", str(f)], ["offers", "--catalog", str(f)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 1, args
        assert message in r.stderr and "Traceback" not in r.stderr


def test_no_match_says_so_on_stderr_and_exits_0() -> None:
    r = runner.invoke(app, ["gpus", "--min-memory", "10000"])
    assert r.exit_code == 0 and "no GPU matches" in r.stderr and not r.stdout
    r = runner.invoke(app, ["offers", "--gpu", "h100", "--max-price", "0.01"])
    assert r.exit_code == 0 and "no offer matches" in r.stderr
    assert "prices: " + BUNDLED_AGE_TEXT in r.stdout  # the age line is printed even then

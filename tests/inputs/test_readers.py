"""One validator per kind of number: the same bad cell gives the same message shape in every
reader (offers CSV, SkyPilot CSV, the GPU spec table, recorded samples, spot traces and prices):
`<where> must be a number, got 'abc'`, from `gpurent.inputs.values`."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.catalog.offers import parse_offers_csv
from gpurent.catalog.sources.skypilot import parse_skypilot_csv
from gpurent.catalog.specs import parse_gpu_table
from gpurent.cli.main import app
from gpurent.errors import DataError, InputError
from gpurent.inputs import values

runner = CliRunner()
BAD = {"abc": "must be a number, got 'abc'", "nan": "must be a finite number, got 'nan'"}


def test_the_optional_validators() -> None:
    assert values.optional_finite(" ", "x") is None and values.optional_finite(None, "x") is None
    assert values.optional_finite(" 2.5 ", "x") == 2.5
    assert values.optional_non_negative("", "x") is None
    with pytest.raises(InputError, match="x must be >= 0, got -1"):
        values.optional_non_negative("-1", "x")
    assert values.finite_list([1, "2"], "p") == (1.0, 2.0)
    with pytest.raises(InputError, match=r"p\[1\] must be a number, got 'x'"):
        values.finite_list([1, "x"], "p")
    with pytest.raises(InputError, match="p must be a non-empty list of numbers"):
        values.finite_list([], "p")
    with pytest.raises(DataError, match="c must be a number, got 'abc'"):
        values.in_data_file(values.finite, "abc", "c")


@pytest.mark.parametrize("cell", sorted(BAD))
def test_offers_csv(cell: str) -> None:
    text = (
        "provider,instance_type,gpu,gpu_count,price_hour_usd,vcpus\n"
        "aws,p4d.24xlarge,A100-SXM4-40GB,8,32.77,96\n"
        f"aws,p5.48xlarge,H100,8,{cell},192\n"
        "aws,p3.2xlarge,V100,1,3.06,-8\n"
    )
    table = parse_offers_csv(text, "offers.csv")
    reasons = {s.line: s.reason for s in table.skipped}
    assert reasons[3] == f"price_hour_usd {BAD[cell]}"
    assert reasons[4] == "vcpus must be >= 0, got -8"


@pytest.mark.parametrize("cell", sorted(BAD))
def test_skypilot_csv(cell: str) -> None:
    head = (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,"
        "SpotPrice"
    )
    text = (
        f"{head}\n"
        f"gpu_1x_a10,A10,1.0,30.0,200.0,{cell},us-east-1,,\n"
        f"gpu_1x_h100,H100,1.0,{cell},200.0,2.49,us-east-1,,\n"
    )
    table = parse_skypilot_csv(text, "vms.csv", provider="lambda", as_of="2026-11-30")
    assert [s.reason for s in table.skipped] == [f"Price {BAD[cell]}"]
    (h100,) = table.offers  # a bad informative cell is left out, the offer kept
    assert h100.vcpus is None


@pytest.mark.parametrize("cell", sorted(BAD))
def test_gpu_spec_table(cell: str) -> None:
    text = resources.files("gpurent.catalog.data").joinpath("gpus.csv").read_text("utf-8")
    head, first = text.splitlines()[:2]
    columns = head.split(",")
    assert len(parse_gpu_table(f"{head}\n{first}\n")) == 1
    i = columns.index("fp8_tflops")  # an optional column: empty for V100
    cells = first.split(",")
    assert cells[i] == ""
    cells[i] = cell
    with pytest.raises(DataError) as caught:
        parse_gpu_table(f"{head}\n{','.join(cells)}\n")
    assert caught.value.message == f"gpus.csv line 2: bad GPU row (fp8_tflops {BAD[cell]})"


@pytest.mark.parametrize("cell", sorted(BAD))
def test_recorded_samples(tmp_path: Path, cell: str) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(f"timestamp,gpu,sm_util_pct\n1,0,{cell}\n")
    r = runner.invoke(app, ["monitor", "diagnose", str(bad)])
    assert r.exit_code == 1
    assert f"bad.csv:2: sm_util_pct {BAD[cell]}" in r.stderr


@pytest.mark.parametrize("cell", sorted(BAD))
def test_spot_trace_price_cell(tmp_path: Path, cell: str) -> None:
    trace = tmp_path / "z.csv"
    trace.write_text(
        f"date,availability,price\n2023-02-15 22:00:00,1,0.5\n2023-02-15 22:06:00,1,{cell}\n"
    )
    args = ["spot", "simulate", "--trace", str(trace), "--job-hours", "0.1"]
    r = runner.invoke(app, [*args, "--deadline-hours", "1"])
    assert r.exit_code == 1
    assert f"z.csv:3: price {BAD[cell]}" in r.stderr


@pytest.mark.parametrize("cell", sorted(BAD))
def test_spot_price_file(tmp_path: Path, cell: str) -> None:
    trace = tmp_path / "z.csv"
    trace.write_text("date,availability\n2023-02-15 22:00:00,1\n2023-02-15 22:06:00,1\n")
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"z": [0.5, cell]}))
    args = ["spot", "simulate", "--trace", str(trace), "--job-hours", "0.1"]
    r = runner.invoke(app, [*args, "--deadline-hours", "1", "--prices", str(prices)])
    assert r.exit_code == 1
    assert f"prices of 'z'[1] {BAD[cell]}" in r.stderr


@pytest.mark.parametrize("cell", sorted(BAD))
def test_spot_price_history(tmp_path: Path, cell: str) -> None:
    row = {
        "AvailabilityZone": "us-east-1a",
        "InstanceType": "p3.2xlarge",
        "ProductDescription": "Linux/UNIX",
        "SpotPrice": cell,
        "Timestamp": "2026-11-30T10:00:00.000Z",
    }
    history = tmp_path / "h.json"
    history.write_text(json.dumps({"SpotPriceHistory": [row]}))
    r = runner.invoke(app, ["spot", "history", str(history)])
    assert r.exit_code == 1
    assert f"price {BAD[cell]}" in r.stderr and "h.json" in r.stderr

"""`gpurent vendors audit`: the three bill formats read from fixtures written by the documented
column names, the four checks with hand-worked dollar amounts, and the one-line errors."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpurent.monitor.sample import COLUMNS, GpuSample, Sample, to_rows
from gpurent.vendors.audit import idle_seconds
from gpurent.vendors.bills import LineKind, Market, read_bill
from tests.conftest import cli_json, run_cli

DATA = Path(__file__).parent / "data"
CATALOG = str(DATA / "offers.csv")
# The fixture catalog's prices (those of the bundled snapshot for these rows).
P4D_OD, G5_OD, G5_SPOT_MAX, A2_OD = 21.95764, 1.006, 0.507, 3.67339
EBS_HOUR = 0.0547945  # 500 GB gp3 for an hour at $0.08/GB-month (730 h)


def _audit(*args: str) -> dict[str, Any]:
    return cli_json("vendors", "audit", "--catalog", CATALOG, "--json", *args)


def _by_kind(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(f["kind"], f["resource"]): f for f in doc["findings"]}


def _samples_file(path: Path) -> Path:
    """i-aaa's monitor records: 2 GPUs every 60 s from 10:00 to 13:00 UTC on 2026-11-03, busy
    (80%) but for 11:00-12:00, when both sit at 0%."""
    t0 = datetime(2026, 11, 3, 10, 0, tzinfo=UTC).timestamp()
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS))
        writer.writeheader()
        for i in range(180):
            pct = 0.0 if 60 <= i < 120 else 80.0
            gpus = tuple(GpuSample(index=g, gpu_busy_pct=pct, sm_util_pct=pct) for g in range(2))
            writer.writerows(to_rows(Sample(timestamp_s=t0 + 60 * i, gpus=gpus)))
    return path


def test_aws_cur_lines_are_classified_by_the_documented_columns() -> None:
    bill = read_bill(DATA / "cur.csv")
    assert bill.format == "aws-cur" and bill.rows_read == 13
    kinds = [(b.lines[0], b.kind, b.market) for b in bill.lines]
    assert kinds[:7] == [
        (2, LineKind.COMPUTE, Market.ON_DEMAND),
        (3, LineKind.COMPUTE, Market.ON_DEMAND),
        (4, LineKind.COMPUTE, Market.ON_DEMAND),
        (5, LineKind.COMPUTE, Market.ON_DEMAND),
        (6, LineKind.COMPUTE, Market.SPOT),
        (7, LineKind.COMPUTE, Market.SPOT),
        (8, LineKind.STORAGE, Market.ON_DEMAND),
    ]
    tax, reserved = bill.lines[10], bill.lines[11]
    assert tax.kind is LineKind.OTHER and tax.amount_usd == 5.0
    assert reserved.market is Market.RESERVED
    assert bill.lines[3].tags == (("user:lifecycle", "spot"),)


def test_aws_cur_audit_finds_each_kind_with_its_dollars_and_lines(tmp_path: Path) -> None:
    samples = _samples_file(tmp_path / "i-aaa.csv")
    doc = _audit("--bill", str(DATA / "cur.csv"), "--samples", f"i-aaa={samples}")
    found = _by_kind(doc)
    assert set(found) == {
        ("idle-billed", "i-aaa"),
        ("over-billed", "i-aaa"),
        ("spot-billed-as-on-demand", "i-bbb"),
        ("over-billed", "i-ccc"),
        ("storage-after-stop", "vol-111"),
    }
    idle = found["idle-billed", "i-aaa"]
    assert idle["lines"] == [3] and idle["hours"] == pytest.approx(1.0)
    assert idle["excess_usd"] == pytest.approx(P4D_OD)
    over = found["over-billed", "i-aaa"]
    assert over["lines"] == [4] and over["excess_usd"] == pytest.approx(25.0 - P4D_OD)
    assert "+13.9%" in over["detail"]
    spot = found["spot-billed-as-on-demand", "i-bbb"]
    assert spot["lines"] == [5] and spot["excess_usd"] == pytest.approx(G5_OD - G5_SPOT_MAX)
    assert "tag user:lifecycle=spot" in spot["detail"]
    spot_over = found["over-billed", "i-ccc"]  # the spot line at $0.70, not the one at $0.45
    assert spot_over["lines"] == [7] and spot_over["excess_usd"] == pytest.approx(0.70 - 0.507)
    storage = found["storage-after-stop", "vol-111"]  # 13:00-16:00, after the last instance
    assert storage["lines"] == [9, 10, 11]
    assert storage["excess_usd"] == pytest.approx(3 * EBS_HOUR, abs=1e-6)
    assert doc["billed_usd"] == pytest.approx(
        2 * P4D_OD + 25 + G5_OD + 0.45 + 0.70 + 4 * EBS_HOUR + 5 + 120
    )
    assert any("p5.48xlarge in me-south-1: no catalog price" in n for n in doc["notes"])
    assert any("1 committed-use line" in n for n in doc["notes"])
    assert doc["findings"][0]["kind"] == "idle-billed"  # the largest amount first


def test_a_bare_samples_path_needs_a_bill_with_one_instance(tmp_path: Path) -> None:
    samples = _samples_file(tmp_path / "s.csv")
    code, _, err = run_cli(
        "vendors", "audit", "--bill", str(DATA / "cur.csv"), "--catalog", CATALOG,
        "--samples", str(samples),
    )  # fmt: skip
    assert code == 2 and "has 5 instance resources; name one as --samples RESOURCE=PATH" in err
    one = tmp_path / "one.csv"
    one.write_text("\n".join((DATA / "cur.csv").read_text().splitlines()[:4]) + "\n")
    doc = _audit("--bill", str(one), "--samples", str(samples))
    assert ("idle-billed", "i-aaa") in _by_kind(doc)


def test_idle_seconds_counts_only_time_every_gpu_was_idle() -> None:
    t0 = 1_000_000.0
    busy = (GpuSample(index=0, sm_util_pct=50.0), GpuSample(index=1, sm_util_pct=1.0))
    idle = (GpuSample(index=0, sm_util_pct=2.0), GpuSample(index=1, sm_util_pct=0.0))
    lost = (GpuSample(index=0, lost=True), GpuSample(index=1, sm_util_pct=0.0))
    samples = [
        Sample(timestamp_s=t0 + 10 * i, gpus=g)
        for i, g in enumerate([busy, idle, idle, lost, idle, ()])
    ]
    assert idle_seconds(samples, t0, t0 + 60, 5.0) == (30.0, 60.0)
    assert idle_seconds(samples, t0 + 15, t0 + 25, 5.0) == (10.0, 10.0)
    assert idle_seconds(samples, t0, t0 + 60, 1.0) == (0.0, 60.0)


def test_gcp_export_groups_the_sku_rows_of_one_vm_hour() -> None:
    bill = read_bill(DATA / "gcp.csv")
    assert bill.format == "gcp"
    compute = [b for b in bill.lines if b.kind is LineKind.COMPUTE]
    assert [(b.resource, b.lines, b.market) for b in compute] == [
        ("vm-1", (2, 3, 4), Market.ON_DEMAND),
        ("vm-1", (5, 6, 7), Market.ON_DEMAND),
        ("vm-2", (8, 9), Market.SPOT),
    ]
    assert compute[0].amount_usd == pytest.approx(A2_OD) and compute[0].hours == 1.0
    doc = _audit("--bill", str(DATA / "gcp.csv"))
    found = _by_kind(doc)
    assert set(found) == {("over-billed", "vm-1"), ("storage-after-stop", "disk-1")}
    over = found["over-billed", "vm-1"]
    assert over["lines"] == [5, 6, 7]
    assert over["excess_usd"] == pytest.approx(0.38 + 0.35948 + 3.50 - A2_OD)
    assert found["storage-after-stop", "disk-1"]["excess_usd"] == pytest.approx(0.50)


def test_generic_bill_and_a_launches_file_find_spot_billed_as_on_demand() -> None:
    doc = _audit("--bill", str(DATA / "generic.csv"))
    found = _by_kind(doc)
    assert set(found) == {("over-billed", "node-1"), ("storage-after-stop", "vol-9")}
    assert found["over-billed", "node-1"]["excess_usd"] == pytest.approx(30 - 24 * G5_OD)
    assert found["storage-after-stop", "vol-9"]["hours"] == pytest.approx(24.0)
    doc = _audit("--bill", str(DATA / "generic.csv"), "--launches", str(DATA / "launches.csv"))
    found = _by_kind(doc)
    spot = found["spot-billed-as-on-demand", "node-1"]
    assert spot["lines"] == [2, 3]
    assert spot["excess_usd"] == pytest.approx(30 + 24.144 - 48 * G5_SPOT_MAX)
    assert "launches.csv:2" in spot["detail"] and "$1.128/h" in spot["detail"]
    assert ("over-billed", "node-1") not in found  # counted once, against the spot price


def test_tolerance_decides_what_counts_as_over_billed() -> None:
    doc = _audit("--bill", str(DATA / "gcp.csv"), "--tolerance", "20")
    assert ("over-billed", "vm-1") not in _by_kind(doc)


def test_a_generic_bill_without_instance_types_says_what_it_could_not_check(
    tmp_path: Path,
) -> None:
    bill = tmp_path / "bill.csv"
    bill.write_text("date,resource,hours,amount\n2026-11-03,node-1,24,30\n")
    doc = _audit("--bill", str(bill))
    assert doc["findings"] == [] and doc["billed_usd"] == 30
    assert doc["notes"] == ["1 instance line(s) without instance type or region: not checked"]
    code, out, _ = run_cli("vendors", "audit", "--bill", str(bill), "--catalog", CATALOG)
    assert code == 0 and "0 findings" in out and "not checked" in out
    code, out, _ = run_cli(
        "vendors", "audit", "--bill", str(bill), "--catalog", CATALOG, "--markdown"
    )
    assert code == 0 and "| none |" in out


def _bad(tmp_path: Path, text: str, *args: str) -> str:
    bill = tmp_path / "bill.csv"
    bill.write_text(text, encoding="utf-8")
    code, _, err = run_cli("vendors", "audit", "--bill", str(bill), "--catalog", CATALOG, *args)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    return err


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("when,what,price\n1,2,3\n", [], "unknown bill format (columns: when,what,price)"),
        ("", [], "empty file"),
        ("lineItem/UsageType,lineItem/UnblendedCost\nx,1\n", [], "missing column(s) lineItem/"),
        ("date,resource,hours,amount\n1,2,3,4\n", ["--format", "gcp"], "for the gcp format"),
        ("date,resource,hours,amount\n1,2,3,4\n", ["--format", "azure"], "--format 'azure'"),
        ("date,resource,hours,amount\n2026-13-45,n,1,2\n", [], ":2: date: bad date"),
        ("date,resource,hours,amount\n2026-11-03,n,x,2\n", [], ":2: hours must be a number"),
        ("date,resource,hours,amount\n2026-11-03,n,-1,2\n", [], ":2: hours must be >= 0"),
        (
            "date,resource,hours,amount,market\n2026-11-03,n,1,2,cheap\n",
            [],
            "market 'cheap'",
        ),
        (
            "sku.description,usage_start_time,usage.amount,cost\nGPU,soon,1,2\n",
            [],
            ":2: usage_start_time: bad timestamp",
        ),
        (
            "lineItem/UsageStartDate,lineItem/UsageType,lineItem/UsageAmount,"
            "lineItem/UnblendedCost\n2026-11-03T10:00:00,BoxUsage:g5.xlarge,1,1\n",
            [],
            "no time zone offset",
        ),
        ("date,resource,hours,amount\n2026-11-03,n,1,2\n", ["--tolerance", "-1"], "must be >= 0"),
    ],
)
def test_bad_bills_are_one_line_errors_with_exit_2(
    tmp_path: Path, text: str, args: list[str], message: str
) -> None:
    assert message in _bad(tmp_path, text, *args)


def test_bad_launches_and_samples_files_are_one_line_errors(tmp_path: Path) -> None:
    launches = tmp_path / "launches.csv"
    launches.write_text("resource,how\nnode-1,spot\n")
    err = _bad(tmp_path, (DATA / "generic.csv").read_text(), "--launches", str(launches))
    assert "missing column(s) market" in err
    launches.write_text("resource,market\nnode-1,auction\n")
    err = _bad(tmp_path, (DATA / "generic.csv").read_text(), "--launches", str(launches))
    assert ":2: market 'auction'" in err
    samples = tmp_path / "s.csv"
    samples.write_text("time,gpu\n1,0\n")
    err = _bad(tmp_path, (DATA / "generic.csv").read_text(), "--samples", f"node-1={samples}")
    assert "no 'timestamp' column" in err


_CELL = st.one_of(
    st.sampled_from(
        ["", "nan", "-inf", "1e308", "-3", "0", "2026-11-03", "2026-11-03T10:00:00Z",
         "2026-11-03 10:00:00 UTC", "0001-01-01", "9999-12-31", "g5.xlarge", "spot", "storage"]
    ),
    st.text(max_size=10),
)  # fmt: skip
_GENERIC = ["date", "resource", "hours", "amount", "instance_type", "region", "market", "kind"]
_CUR = [
    "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/UsageType",
    "lineItem/UsageAmount", "lineItem/UnblendedCost", "lineItem/ResourceId",
    "product/instanceType", "product/region", "pricing/term",
]  # fmt: skip


@settings(max_examples=30, deadline=None, derandomize=True, database=None)
@given(
    header=st.sampled_from([_GENERIC, _CUR]),
    cells=st.lists(_CELL, min_size=9, max_size=9),
)
def test_any_bill_cells_give_an_answer_or_one_line(header: list[str], cells: list[str]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        bill = Path(tmp) / "bill.csv"
        with bill.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh).writerows([header, cells[: len(header)]])
        code, out, err = run_cli(
            "vendors", "audit", "--bill", str(bill), "--catalog", CATALOG, "--json"
        )
    assert code in (0, 2), err
    if code == 0:
        assert "findings" in json.loads(out)
    else:
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err


def test_gcp_rows_without_a_resource_name_are_not_summed_into_one_machine(
    tmp_path: Path,
) -> None:
    # The standard export names no resource: two VMs' SKUs in one hour must not look like one
    # machine billed twice its price.
    rows = (DATA / "gcp.csv").read_text().splitlines()
    header = rows[0].split(",")
    at = header.index("resource.name")
    cleaned = [rows[0]]
    for row in rows[1:8]:
        cells = row.split(",")
        cells[at] = ""
        cells[3] = "2026-11-03 10:00:00 UTC"  # every row in the same hour
        cells[4] = "2026-11-03 11:00:00 UTC"
        cleaned.append(",".join(cells))
    bill = tmp_path / "gcp.csv"
    bill.write_text("\n".join(cleaned) + "\n")
    doc = _audit("--bill", str(bill))
    assert [f["kind"] for f in doc["findings"]] == []
    assert doc["notes"] == ["7 instance line(s) without instance type or region: not checked"]


def test_a_fifo_given_as_any_vendors_input_never_blocks(tmp_path: Path) -> None:
    """In a subprocess with a timeout: a blocking open would hang an in-process test."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    terms = tmp_path / "sla.toml"
    terms.write_text("[[tier]]\nbelow_pct = 99.9\ncredit_pct = 10\n")
    generic = str(DATA / "generic.csv")
    runs = [
        ["vendors", "sla", "--outages", str(fifo), "--terms", str(terms)],
        ["vendors", "sla", "--outages", generic, "--terms", str(fifo)],
        ["vendors", "sla", "--samples", str(fifo), "--terms", str(terms)],
        ["vendors", "audit", "--bill", str(fifo)],
        ["vendors", "audit", "--bill", generic, "--launches", str(fifo)],
        ["vendors", "audit", "--bill", generic, "--samples", f"node-1={fifo}"],
    ]
    script = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from gpurent.cli.main import app\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    r = CliRunner().invoke(app, args)\n"
        "    print(r.exit_code, r.stderr.strip().splitlines())\n"
    )
    root = Path(__file__).parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(runs)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    lines = out.stdout.splitlines()
    assert len(lines) == len(runs), out.stderr
    for line in lines:
        assert line.startswith("2 ") and "FIFO" in line and line.count("'error: ") == 1, line


def test_spot_billed_on_demand_is_found_even_without_a_catalog_price(tmp_path: Path) -> None:
    bill = tmp_path / "bill.csv"
    bill.write_text(
        "date,resource,hours,amount,instance_type,region,market\n"
        "2026-11-03,node-7,10,40,x9.huge,mars-1,on-demand\n"
        "2026-11-03,node-8,10,40,,,on-demand\n"
    )
    launches = tmp_path / "launches.csv"
    launches.write_text("resource,market\nnode-7,spot\nnode-8,spot\n")
    doc = _audit("--bill", str(bill), "--launches", str(launches))
    found = _by_kind(doc)
    assert set(found) == {
        ("spot-billed-as-on-demand", "node-7"),
        ("spot-billed-as-on-demand", "node-8"),
    }
    seven = found["spot-billed-as-on-demand", "node-7"]
    assert seven["excess_usd"] is None and seven["billed_usd"] == 40
    assert "$4/h for x9.huge in mars-1" in seven["detail"]
    assert "spot price is not in the catalog" in seven["detail"]
    assert doc["excess_usd"] == 0

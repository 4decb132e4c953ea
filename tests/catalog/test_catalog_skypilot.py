"""The SkyPilot vms.csv importer, on small hand-made files mirroring each cloud's v8 format."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurent.catalog.offer import Offer
from gpurent.catalog.sources import load_file, parse_skypilot_csv
from gpurent.errors import DataError


def _by_key(offers: tuple[Offer, ...]) -> dict[str, Offer]:
    return {o.key: o for o in offers}


def test_aws_zones_collapse_to_one_offer_per_type_and_region(data: Path) -> None:
    table = load_file(data / "aws_vms.csv")
    offers = _by_key(table.offers)
    g5 = offers["aws/g5.xlarge/us-east-1"]
    assert g5.zones == ("us-east-1a", "us-east-1b", "us-east-1c") and g5.zone_count == 3
    assert g5.price_usd_per_hour == 1.006
    assert g5.spot_price_usd_per_hour == 0.3929 and g5.spot_price_max_usd_per_hour == 0.4522
    assert g5.gpu_name == "A10G" and g5.gpu_memory_gib == 24
    p4d = offers["aws/p4d.24xlarge/us-east-1"]
    assert p4d.gpu_count == 8 and p4d.gpu_name == "A100-SXM4-40GB"
    assert p4d.spot_price_usd_per_hour == 8.9021  # the AZ without spot does not erase it
    assert p4d.network_gbps == 400 and p4d.gpu_interconnect == "NVLink3"
    assert offers["aws/p5.48xlarge/us-west-2"].gpu_name == "H100-SXM5-80GB"
    assert len(table.offers) == 4 and table.ignored_rows == 1  # m5.large has no GPU
    assert not table.skipped and table.offers[0].provider == "aws"  # from the file name


def test_gcp_vm_price_is_host_plus_accelerator_row(data: Path) -> None:
    table = parse_skypilot_csv(
        (data / "gcp_vms.csv").read_text(), "gcp_vms.csv", provider="gcp", as_of="2026-11-30"
    )
    offers = _by_key(table.offers)
    a2 = offers["gcp/a2-highgpu-1g/us-central1"]
    assert a2.price_usd_per_hour == pytest.approx(0.73948 + 2.93391)
    assert a2.spot_price_usd_per_hour == pytest.approx(0.36975 + 1.4341)
    assert a2.gpu_name == "A100-SXM4-40GB" and a2.gpu_count == 1
    assert a2.zones == ("us-central1-a", "us-central1-b")
    assert offers["gcp/a2-highgpu-8g/us-central1"].price_usd_per_hour == pytest.approx(
        5.91582 + 23.47126
    )
    a4 = offers["gcp/a4-highgpu-8g/us-central1"]  # host row priced 0.0: total = accelerators
    assert a4.price_usd_per_hour == pytest.approx(90.216)
    assert a4.spot_price_usd_per_hour == pytest.approx(32.6064)
    assert a4.gpu_name == "B200-180GB"
    g2 = offers["gcp/g2-standard-24/us-central1"]
    assert g2.gpu_name == "L4" and g2.gpu_count == 2
    assert g2.price_usd_per_hour == pytest.approx(0.88075 + 1.12008)
    # a2-highgpu-1g in europe-west4 has no accelerator row in the file: skipped, not guessed
    assert "gcp/a2-highgpu-1g/europe-west4" not in offers
    (skip,) = table.skipped
    assert skip.line == 4 and "no accelerator price row for A100 x1 in europe-west4" in skip.reason
    assert table.ignored_rows == 1  # n1-standard-8
    assert any("n1" in n for n in table.notes)  # the T4 row prices a GPU without a host


def test_lambda_has_no_zones_and_no_spot(data: Path) -> None:
    table = load_file(data / "lambda_vms.csv")
    offers = _by_key(table.offers)
    assert set(offers) == {
        "lambda/gpu_1x_a10/us-east-1",
        "lambda/gpu_1x_a10/us-west-1",
        "lambda/gpu_8x_h100_sxm5/us-east-1",
        "lambda/gpu_1x_gh200/us-east-3",
    }
    h100 = offers["lambda/gpu_8x_h100_sxm5/us-east-1"]
    assert h100.spot_price_usd_per_hour is None and h100.zones == () and h100.zone_count is None
    assert h100.price_usd_per_gpu_hour == pytest.approx(23.92 / 8)
    assert h100.billing_granularity_s == 60


def test_runpod_gpuinfo_picks_the_pcie_card_and_gib_sizes(data: Path) -> None:
    offers = _by_key(load_file(data / "runpod_vms.csv").offers)
    assert offers["runpod/1x_A100-80GB_SECURE/US"].gpu_name == "A100-PCIe-80GB"
    assert offers["runpod/1x_A100-80GB-SXM_SECURE/US"].gpu_name == "A100-SXM4-80GB"
    rtx = offers["runpod/1x_RTX5090_SECURE/US"]  # in the spec table since session 3; GpuInfo GiB
    assert rtx.gpu_name == "RTX-5090" and rtx.gpu_memory_gib == 32
    assert rtx.spot_price_usd_per_hour == 0.55


def test_malformed_rows_are_skipped_with_line_and_reason(data: Path) -> None:
    table = load_file(data / "malformed_vms.csv", provider="lambda")
    assert [o.instance_type for o in table.offers] == ["gpu_1x_a10"]
    reasons = {s.line: s.reason for s in table.skipped}
    assert set(reasons) == {3, 4, 5, 6, 7, 8}
    assert "could not convert" in reasons[3] or "abc" in reasons[3]
    assert "Price must be >= 0, got -1" in reasons[4]  # the inputs.values message
    assert "bad AcceleratorCount '0'" in reasons[5]
    assert "no Price or SpotPrice" in reasons[6]
    assert "expected 9 cells, got 3" in reasons[7]
    assert "empty Region" in reasons[8]
    assert all(s.file.endswith("malformed_vms.csv") for s in table.skipped)


def test_no_usable_row_is_an_error() -> None:
    text = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\nm5.large,,,0.1,us-east-1\n"
    with pytest.raises(DataError, match=r"x.csv: no usable GPU offer \(1 rows: 0 malformed, 1"):
        parse_skypilot_csv(text, "x.csv", provider="aws", as_of="")


def test_missing_columns_are_an_error() -> None:
    with pytest.raises(DataError, match="missing columns AcceleratorCount, Price, Region"):
        parse_skypilot_csv("InstanceType,AcceleratorName\n", "y.csv", provider="aws", as_of="")

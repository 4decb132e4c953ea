"""`gpurent catalog update --source gpuhunt` against a local HTTP server serving archives built
here in gpuhunt's published layout: `<base>/<provider>/version` and
`<base>/<provider>/<version>/catalog.zip` holding `<provider>.csv`. No test reaches the network.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app

pytest.importorskip("gpuhunt")

runner = CliRunner()
HEADER = (
    "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
    "gpu_vendor,flags,cpu_arch,provider_data"
)
AWS_ROWS = [
    "p5.48xlarge,us-east-1,98.32,192,2048,8,H100,80.0,False,,nvidia,,x86,{}",
    "p5.48xlarge,us-east-1,31.1,192,2048,8,H100,80.0,True,,nvidia,,x86,{}",
    "p5.48xlarge,us-east-1,33.5,192,2048,8,H100,80.0,True,,nvidia,,x86,{}",
    "g5.xlarge,eu-west-1,1.123,4,16,1,A10G,24.0,False,,nvidia,,x86,{}",
    "m5.large,us-east-1,0.096,2,8,0,,,False,,,,x86,{}",
]
LAMBDA_ROWS = [
    "gpu_1x_a100,us-east-1,1.29,30,200,1,A100,40.0,False,512,nvidia,,x86,{}",
    "gpu_8x_a100_80gb_sxm4,us-east-1,14.32,240,1800,8,A100,80.0,False,,nvidia,,x86,{}",
]


def _publish(root: Path, provider: str, version: str, rows: list[str]) -> None:
    folder = root / provider
    (folder / version).mkdir(parents=True, exist_ok=True)
    (folder / "version").write_text(version + "\n")
    with zipfile.ZipFile(folder / version / "catalog.zip", "w") as zf:
        zf.writestr(f"{provider}.csv", "\n".join([HEADER, *rows]) + "\n")


def _update(base: str, *args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["catalog", "update", "--source", "gpuhunt", "--url-base", base, *args])
    return r.exit_code, r.stdout, r.stderr


def test_gpuhunt_update_maps_offers_with_provenance_and_fetch_time(
    http_root: tuple[str, Path],
) -> None:
    base, root = http_root
    _publish(root, "aws", "20261130-1", AWS_ROWS)
    _publish(root, "lambdalabs", "20261129-7", LAMBDA_ROWS)
    code, out, err = _update(base, "--clouds", "aws,lambdalabs")
    assert code == 0, err
    assert "gpuhunt aws: 2 GPU offers (catalog 20261130-1)" in out
    assert "gpuhunt lambdalabs: 2 GPU offers (catalog 20261129-7)" in out
    assert "Traceback" not in err
    r = runner.invoke(app, ["offers", "--provider", "aws,lambda", "--limit", "0", "--json"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    by_type = {o["instance_type"]: o for o in data["offers"]}
    assert set(by_type) == {"p5.48xlarge", "g5.xlarge", "gpu_1x_a100", "gpu_8x_a100_80gb_sxm4"}
    p5 = by_type["p5.48xlarge"]
    # the on-demand row and the two spot rows of one instance and region: one offer
    assert p5["price_usd_per_hour"] == 98.32
    assert p5["spot_price_usd_per_hour"] == 31.1 and p5["spot_price_max_usd_per_hour"] == 33.5
    assert p5["gpu_name"] == "H100-SXM5-80GB" and p5["gpu_count"] == 8 and p5["vcpus"] == 192
    assert p5["source"] == f"{base}/aws/20261130-1/catalog.zip"
    assert p5["as_of"].startswith("20") and "T" in p5["as_of"]  # the fetch time, ISO
    # gpuhunt's lambdalabs is gpurent's lambda; A100 40 vs 80 GB resolved by memory
    assert by_type["gpu_1x_a100"]["provider"] == "lambda"
    assert by_type["gpu_1x_a100"]["gpu_name"] == "A100-SXM4-40GB"
    assert by_type["gpu_8x_a100_80gb_sxm4"]["gpu_name"] == "A100-SXM4-80GB"
    # the fetched providers replace their bundled rows; the others stay bundled
    everything = json.loads(runner.invoke(app, ["offers", "--limit", "0", "--json"]).stdout)
    providers = {o["provider"] for o in everything["offers"]}
    assert {"gcp", "azure"} <= providers
    assert sum(o["provider"] == "aws" for o in everything["offers"]) == 2
    assert "gpuhunt fetched" in everything["age"]
    info = json.loads(runner.invoke(app, ["catalog", "info", "--json"]).stdout)
    hunt = info["gpuhunt"]
    assert hunt["url"] == base and hunt["offers"] == 4
    assert hunt["providers"]["aws"]["version"] == "20261130-1"
    assert hunt["providers"]["aws"]["offers"] == 2


def test_gpuhunt_one_provider_missing_is_a_warning_not_a_failure(
    http_root: tuple[str, Path],
) -> None:
    base, root = http_root
    _publish(root, "aws", "v1", AWS_ROWS)
    code, out, err = _update(base, "--clouds", "aws,oci,lambda")  # gpurent's name for lambdalabs
    assert code == 0, err
    assert "gpuhunt aws: 2 GPU offers" in out
    assert "warning: gpuhunt oci: no catalog at" in err and "Traceback" not in err
    assert "warning: gpuhunt lambdalabs: no catalog at" in err


def test_gpuhunt_nothing_served_is_one_line_error_and_keeps_previous(
    http_root: tuple[str, Path],
) -> None:
    base, root = http_root
    _publish(root, "aws", "v1", AWS_ROWS)
    assert _update(base, "--clouds", "aws")[0] == 0
    code, _, err = _update(base + "/nothing-here", "--clouds", "aws")
    assert code == 1
    assert err.startswith("error: gpuhunt") and len(err.strip().splitlines()) == 1
    r = runner.invoke(app, ["offers", "--provider", "aws", "--json"])
    assert json.loads(r.stdout)["count"] == 2  # the previous gpuhunt catalog is still used


def test_gpuhunt_bad_names_are_exit_2(http_root: tuple[str, Path]) -> None:
    base, _ = http_root
    code, _, err = _update(base, "--clouds", "nosuchcloud")
    assert code == 2 and "no gpuhunt offline provider" in err
    code, _, err = _update(base, "--online", "nosuch")
    assert code == 2 and "no gpuhunt online provider" in err
    r = runner.invoke(app, ["catalog", "update", "--source", "nope"])
    assert r.exit_code == 2 and "--source" in r.stderr


def test_gpuhunt_stored_file_is_gpurent_plain_csv(http_root: tuple[str, Path]) -> None:
    base, root = http_root
    _publish(root, "aws", "v1", AWS_ROWS)
    assert _update(base, "--clouds", "aws", "--json")[0] == 0
    info = json.loads(runner.invoke(app, ["catalog", "info", "--json"]).stdout)
    stored = Path(info["data_dir"]) / "_gpuhunt" / "offers.csv"
    rows = list(csv.DictReader(io.StringIO(stored.read_text())))
    assert {r["instance_type"] for r in rows} == {"p5.48xlarge", "g5.xlarge"}
    r = runner.invoke(app, ["catalog", "import", str(stored), "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["offers"] == 2


def test_gpuhunt_online_provider_without_credentials_is_reported(
    http_root: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, root = http_root
    _publish(root, "aws", "v1", AWS_ROWS)
    monkeypatch.delenv("DIGITAL_OCEAN_API_KEY", raising=False)
    code, out, err = _update(base, "--clouds", "aws", "--online", "digitalocean")
    assert code == 0, err
    assert "gpuhunt aws: 2 GPU offers" in out
    assert "warning: gpuhunt digitalocean: --online digitalocean: needs credentials" in err


def test_without_the_gpuhunt_package_the_command_names_the_extra(
    http_root: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "gpuhunt", None)  # import gpuhunt now fails
    code, _, err = _update(http_root[0], "--clouds", "aws")
    assert code == 1 and "pip install 'gpurent[catalog]'" in err and "Traceback" not in err


def test_gpuhunt_update_of_one_provider_keeps_the_others(http_root: tuple[str, Path]) -> None:
    base, root = http_root
    _publish(root, "aws", "v1", AWS_ROWS)
    _publish(root, "lambdalabs", "v1", LAMBDA_ROWS)
    assert _update(base, "--clouds", "aws,lambdalabs")[0] == 0
    _publish(root, "aws", "v2", AWS_ROWS[:1])  # aws now lists only the p5
    assert _update(base, "--clouds", "aws")[0] == 0
    r = runner.invoke(app, ["offers", "--provider", "aws,lambda", "--limit", "0", "--json"])
    by_provider: dict[str, int] = {}
    for o in json.loads(r.stdout)["offers"]:
        by_provider[o["provider"]] = by_provider.get(o["provider"], 0) + 1
    assert by_provider == {"aws": 1, "lambda": 2}  # lambda kept from the first update
    info = json.loads(runner.invoke(app, ["catalog", "info", "--json"]).stdout)["gpuhunt"]
    assert info["providers"]["aws"]["version"] == "v2"
    assert info["providers"]["lambdalabs"]["version"] == "v1" and info["offers"] == 3


def test_gpuhunt_version_text_is_shown_not_interpreted(http_root: tuple[str, Path]) -> None:
    base, root = http_root
    version = "v1[red]x"  # markup; a URL cannot carry control characters
    folder = root / "aws"
    (folder / version).mkdir(parents=True)
    (folder / "version").write_text(version)
    with zipfile.ZipFile(folder / version / "catalog.zip", "w") as zf:
        zf.writestr("aws.csv", "\n".join([HEADER, *AWS_ROWS]) + "\n")
    code, out, err = _update(base, "--clouds", "aws")
    assert code == 0, err
    assert "gpuhunt aws: 2 GPU offers (catalog v1[red]x)" in out  # shown, not interpreted

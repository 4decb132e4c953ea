"""`gpurent catalog update` against a local HTTP server: success, 404, refused, garbage."""

from __future__ import annotations

import json
import shutil
import socket
from datetime import UTC, datetime
from pathlib import Path

from typer.testing import CliRunner

from gpurent.catalog.sources import load_offers, read_meta, update_catalogs
from gpurent.catalog.sources.snapshot import cloud_file
from gpurent.cli.main import app
from gpurent.errors import InputError
from gpurent.userdata import data_home

runner = CliRunner()
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def _publish(root: Path, data: Path, clouds: dict[str, str]) -> None:
    for cloud, fixture in clouds.items():
        (root / cloud).mkdir(parents=True, exist_ok=True)
        shutil.copy(data / fixture, root / cloud / "vms.csv")


def test_update_stores_files_and_metadata(http_root: tuple[str, Path], data: Path) -> None:
    base, root = http_root
    _publish(root, data, {"aws": "aws_vms.csv", "gcp": "gcp_vms.csv"})
    home = data_home()
    seen: list[str] = []
    result = update_catalogs(
        base, ["aws", "gcp"], home, now=NOW, on_progress=lambda c, done, total: seen.append(c)
    )
    assert [m.cloud for m in result.stored] == ["aws", "gcp"] and not result.failed
    assert set(seen) == {"aws", "gcp"}
    meta = read_meta(home)
    assert meta["aws"].fetched_at == "2026-11-30T10:00:00+00:00"
    assert meta["aws"].url == f"{base}/aws/vms.csv"
    assert meta["aws"].offers == 4 and meta["aws"].rows == 9
    assert cloud_file(home, "gcp").read_bytes() == (data / "gcp_vms.csv").read_bytes()
    table = load_offers(home=home)
    providers = {o.provider for o in table.offers}
    assert {"aws", "gcp", "lambda", "azure"} <= providers  # others from the bundled snapshot
    aws = [o for o in table.offers if o.provider == "aws"]
    assert len(aws) == 4  # the fetched file replaces the bundled aws rows, not added to them
    assert all(o.as_of == meta["aws"].fetched_at and o.source == meta["aws"].url for o in aws)
    assert table.age.startswith("fetched 2026-11-30 10:00 UTC (aws, gcp); ")
    assert "bundled snapshot" in table.age


def test_cli_update_then_offers_show_fetch_age(http_root: tuple[str, Path], data: Path) -> None:
    base, root = http_root
    _publish(root, data, {"lambda": "lambda_vms.csv"})
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "lambda"])
    assert r.exit_code == 0, r.stderr
    # one unwrapped line per cloud; no progress-bar residue (a blank line) when not a terminal
    assert "lambda: 4 GPU offers from 5 rows (0 malformed rows skipped), fetched 20" in r.stdout
    assert f"stored in {cloud_file(data_home(), 'x').parent.parent}\n" in r.stdout
    assert r.stderr == ""
    r = runner.invoke(app, ["offers", "--provider", "lambda", "--json"])
    out = json.loads(r.stdout)
    assert out["count"] == 4 and out["age"].startswith("fetched ")
    info = runner.invoke(app, ["catalog", "info", "--json"])
    assert json.loads(info.stdout)["fetched"][0]["cloud"] == "lambda"


def test_404_fails_one_line_and_keeps_previous(http_root: tuple[str, Path], data: Path) -> None:
    base, root = http_root
    _publish(root, data, {"aws": "aws_vms.csv"})
    assert (
        runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "aws"]).exit_code
        == 0
    )
    before = cloud_file(data_home(), "aws").read_bytes()
    (root / "aws" / "vms.csv").unlink()
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "aws"])
    assert r.exit_code == 1
    assert "HTTP 404" in r.stderr and "previous catalogs kept" in r.stderr
    assert r.stderr.strip().count("\n") == 0
    assert cloud_file(data_home(), "aws").read_bytes() == before
    assert read_meta(data_home())["aws"].offers == 4


def test_partial_failure_stores_the_rest(http_root: tuple[str, Path], data: Path) -> None:
    base, root = http_root
    _publish(root, data, {"aws": "aws_vms.csv"})
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "aws,nosuch"])
    assert r.exit_code == 1
    assert "nosuch:" in r.stderr and "HTTP 404" in r.stderr
    assert f"error: nosuch: {base}/nosuch/vms.csv: HTTP 404" in r.stderr  # one unwrapped line
    assert set(read_meta(data_home())) == {"aws"}


def test_refused_connection_is_an_offline_error(data: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = runner.invoke(
        app, ["catalog", "update", "--url-base", f"http://127.0.0.1:{port}/v8", "--clouds", "aws"]
    )
    assert r.exit_code == 1
    assert "cannot reach" in r.stderr and "offline" in r.stderr
    assert "Traceback" not in r.stderr and not read_meta(data_home())


def test_garbage_is_rejected_and_previous_kept(http_root: tuple[str, Path], data: Path) -> None:
    base, root = http_root
    _publish(root, data, {"gcp": "gcp_vms.csv"})
    assert (
        runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "gcp"]).exit_code
        == 0
    )
    (root / "gcp" / "vms.csv").write_text("<html><body>rate limited</body></html>\n")
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "gcp"])
    assert r.exit_code == 1 and "not a SkyPilot vms.csv" in r.stderr
    (root / "gcp" / "vms.csv").write_bytes(b"\xff\xfe\x00garbage")
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "gcp"])
    assert r.exit_code == 1 and "not UTF-8" in r.stderr
    assert cloud_file(data_home(), "gcp").read_bytes() == (data / "gcp_vms.csv").read_bytes()
    assert not list(cloud_file(data_home(), "gcp").parent.glob("*.tmp"))


def test_url_base_from_environment(http_root: tuple[str, Path], data: Path, monkeypatch) -> None:
    base, root = http_root
    _publish(root, data, {"runpod": "runpod_vms.csv"})
    monkeypatch.setenv("GPURENT_CATALOG_URL", base)
    r = runner.invoke(app, ["catalog", "update", "--clouds", "runpod"])
    assert r.exit_code == 0, r.stderr
    assert read_meta(data_home())["runpod"].url == f"{base}/runpod/vms.csv"


def test_corrupt_metadata_is_a_clear_error(tmp_path: Path) -> None:
    meta = data_home() / "catalog" / "meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text("{not json")
    r = runner.invoke(app, ["offers"])
    assert r.exit_code == 1 and "unreadable catalog metadata" in r.stderr


def test_bad_update_flags_are_one_line_exit_2() -> None:
    for args, message in (
        (["--clouds", " , "], "--clouds is empty"),
        (["--timeout", "0"], "--timeout must be > 0 s"),
    ):
        r = runner.invoke(app, ["catalog", "update", "--url-base", "http://127.0.0.1:9/v8", *args])
        assert r.exit_code == 2, args
        assert message in r.stderr and r.stderr.count("\n") == 1
    assert not read_meta(data_home())


def test_server_that_never_answers_times_out_one_line() -> None:
    with socket.socket() as s:  # listens (connect succeeds) but never sends a byte
        s.bind(("127.0.0.1", 0))
        s.listen()
        base = f"http://127.0.0.1:{s.getsockname()[1]}/v8"
        r = runner.invoke(
            app, ["catalog", "update", "--url-base", base, "--clouds", "aws", "--timeout", "0.2"]
        )
    assert r.exit_code == 1
    assert "timed out" in r.stderr and "previous catalogs kept" in r.stderr
    assert r.stderr.strip().count("\n") == 0 and not read_meta(data_home())


def test_pricing_and_monitor_price_from_fetched_catalogs(
    http_root: tuple[str, Path], tmp_path: Path
) -> None:
    """`pricing compare --offer` and `monitor --instance` see what `catalog update` fetched, as
    `plan` and `offers` do (they read only the bundled snapshot before)."""
    base, root = http_root
    (root / "lambda").mkdir(parents=True)
    (root / "lambda" / "vms.csv").write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region\n"
        "gpu_2x_fresh,H100,2.0,52.0,450.0,5.67,us-east-9\n"
    )
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "lambda"])
    assert r.exit_code == 0, r.stderr
    r = runner.invoke(
        app, ["pricing", "compare", "--offer", "lambda/gpu_2x_fresh/us-east-9", "--json"]
    )
    assert r.exit_code == 0, r.stderr
    assert "5.67" in r.stdout
    samples = tmp_path / "s.csv"
    samples.write_text(
        "timestamp,gpu,sm_util_pct\n"
        + "".join(f"{t},{g},0\n" for t in range(1000, 1010) for g in (0, 1))
    )
    r = runner.invoke(
        app, ["monitor", "diagnose", str(samples), "--instance", "gpu_2x_fresh", "--json"]
    )
    assert r.exit_code == 0, r.stderr
    cost = json.loads(r.stdout)["cost"]
    assert cost["price_usd_per_hour"] == 5.67 and cost["gpu_count"] == 2


def test_cloud_names_never_leave_the_data_dir(
    http_root: tuple[str, Path], data: Path, tmp_path: Path
) -> None:
    base, root = http_root
    home = data_home()
    # a server that would answer for the crafted name: without the check it would be stored
    _publish(root.parent.parent, data, {"x": "aws_vms.csv"})
    for bad in ("../../x", "..", "aws/../../x", "/tmp/x", "a b", ".hidden", "x" * 41):
        r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", f"aws,{bad}"])
        assert r.exit_code == 2, (bad, r.stderr)
        assert "bad cloud name" in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert not (home / "catalog").exists()  # nothing fetched or written, not even aws
        assert not (home / "x").exists() and not (home.parent / "x").exists()
    try:
        update_catalogs(base, ["../../x"], home, now=NOW)
    except InputError as exc:
        assert "--clouds" in exc.message
    else:
        raise AssertionError("a path-like cloud name was accepted")


def test_crafted_names_in_metadata_and_symlinked_cloud_dirs(
    http_root: tuple[str, Path], data: Path, tmp_path: Path
) -> None:
    base, root = http_root
    _publish(root, data, {"aws": "aws_vms.csv"})
    home = data_home()
    cat = home / "catalog"
    cat.mkdir(parents=True)
    (cat / "meta.json").write_text(
        json.dumps(
            {
                "format": 1,
                "clouds": {
                    "../../etc": {
                        "url": "u",
                        "fetched_at": "t",
                        "rows": 1,
                        "offers": 1,
                        "skipped": 0,
                        "size_bytes": 1,
                    }
                },
            }
        )
    )
    r = runner.invoke(app, ["offers", "--json"])
    assert r.exit_code == 1 and "bad cloud name '../../etc'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    (cat / "meta.json").unlink()
    outside = tmp_path / "outside"
    outside.mkdir()
    (cat / "aws").symlink_to(outside)  # a planted link: the write would land outside
    r = runner.invoke(app, ["catalog", "update", "--url-base", base, "--clouds", "aws"])
    assert r.exit_code == 2 and "resolves outside" in r.stderr
    assert list(outside.iterdir()) == []

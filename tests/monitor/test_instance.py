"""`--instance auto`: instance detection against local servers that answer like the metadata
services (the notice tests' server, tests/runtime/metadata_server.py), and the CLI end to end."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections.abc import Iterator, Mapping

import pytest
from typer.testing import CliRunner

from gpurent.catalog.sources import load_offers
from gpurent.cli.main import app
from gpurent.errors import InputError
from gpurent.http import FakeHttp, HttpError
from gpurent.monitor.instance import (
    DetectedInstance,
    detect_instance,
    gcp_region,
    price_detected,
)
from tests.runtime.metadata_server import MetadataState, metadata_server

DEAD = "http://127.0.0.1:9"  # discard port: connection refused
runner = CliRunner()


@pytest.fixture()
def server() -> Iterator[tuple[str, MetadataState]]:
    with metadata_server() as s:
        yield s


def only(name: str, url: str) -> dict[str, str]:
    """Base URLs where only `name` reaches the server."""
    return {p: url if p == name else DEAD for p in ("aws", "gcp", "azure")}


def test_aws_imdsv2_token_then_type_and_region(server: tuple[str, MetadataState]) -> None:
    url, state = server
    state.aws_instance_type, state.aws_region = "g5.xlarge", "us-east-1"
    found = detect_instance(base_urls=only("aws", url))
    assert found == DetectedInstance(
        provider="aws", instance_type="g5.xlarge", region="us-east-1", source=f"AWS IMDSv2 at {url}"
    )
    assert state.requests == [
        ("PUT", "/latest/api/token"),
        ("GET", "/latest/meta-data/instance-type"),
        ("GET", "/latest/meta-data/placement/region"),
    ]


def test_gcp_keeps_the_last_path_part_and_drops_the_zone_letter(
    server: tuple[str, MetadataState],
) -> None:
    url, state = server
    state.gcp_machine_type = "projects/123/machineTypes/a2-highgpu-1g"
    state.gcp_zone = "projects/123/zones/us-central1-a"
    found = detect_instance(base_urls=only("gcp", url))
    assert found is not None and (found.provider, found.instance_type, found.region) == (
        "gcp",
        "a2-highgpu-1g",
        "us-central1",
    )
    assert gcp_region("europe-west4-b") == "europe-west4" and gcp_region("nowhere") is None


def test_azure_compute_json(server: tuple[str, MetadataState]) -> None:
    url, state = server
    state.azure_compute = {"vmSize": "Standard_NC24ads_A100_v4", "location": "eastus", "x": 1}
    found = detect_instance(base_urls=only("azure", url))
    assert found is not None and (found.provider, found.instance_type, found.region) == (
        "azure",
        "Standard_NC24ads_A100_v4",
        "eastus",
    )


def test_asks_aws_then_gcp_then_azure(server: tuple[str, MetadataState]) -> None:
    url, state = server
    state.gcp_machine_type = "projects/1/machineTypes/g2-standard-4"
    state.azure_compute = {"vmSize": "Standard_NC6s_v3", "location": "eastus"}
    found = detect_instance(base_urls={"aws": url, "gcp": url, "azure": url})
    assert found is not None and found.provider == "gcp"  # AWS answered 404: next one


def test_no_metadata_service_returns_none_fast() -> None:
    start = time.monotonic()
    assert detect_instance(base_urls={"aws": DEAD, "gcp": DEAD, "azure": DEAD}) is None
    assert time.monotonic() - start < 2.0


def test_an_unreachable_server_is_asked_once() -> None:
    """AWS and Azure share 169.254.169.254: a laptop waits one timeout for both, not two."""
    timed_out = HttpError("timed out", url="", reason="timeout")
    http = FakeHttp(
        {
            "http://169.254.169.254/latest/api/token": timed_out,
            "http://g/computeMetadata/v1/instance/machine-type": timed_out,
        }
    )
    assert detect_instance(http=http, base_urls={"gcp": "http://g"}) is None  # AWS, Azure: default
    assert [r.url for r in http.requests] == [
        "http://169.254.169.254/latest/api/token",
        "http://g/computeMetadata/v1/instance/machine-type",
    ]


def test_a_silent_server_times_out_quickly() -> None:
    """A server that accepts connections and never answers costs about one timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # never accepted: connects succeed, reads time out
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        start = time.monotonic()
        everywhere = {"aws": url, "gcp": url, "azure": url}
        assert detect_instance(base_urls=everywhere, timeout_s=0.2) is None
        assert time.monotonic() - start < 2.0


def test_404_and_garbage_answers_return_none(server: tuple[str, MetadataState]) -> None:
    url, state = server
    everywhere = {"aws": url, "gcp": url, "azure": url}
    assert detect_instance(base_urls=everywhere) is None  # every path answers 404
    state.aws_instance_type = "<html><body>Not here</body></html>"
    state.gcp_machine_type = "projects/1/machineTypes/"
    state.azure_compute = b"{not json"
    assert detect_instance(base_urls=everywhere) is None
    state.azure_compute = {"vmSize": 42, "location": "eastus"}
    assert detect_instance(base_urls=everywhere) is None


def test_a_server_that_does_not_speak_http_returns_none() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)

        def answer_garbage() -> None:
            for _ in range(3):
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.recv(4096)
                    conn.sendall(b"\x00\x01 garbage, not HTTP\r\n\r\n")

        threading.Thread(target=answer_garbage, daemon=True).start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        assert detect_instance(base_urls={"aws": url, "gcp": url, "azure": url}) is None


def test_price_in_the_detected_region_else_the_cheapest() -> None:
    offers = load_offers().offers
    aws = DetectedInstance(
        provider="aws", instance_type="g5.xlarge", region="eu-west-1", source="test"
    )
    price = price_detected(offers, aws)
    assert price.label == "aws g5.xlarge (eu-west-1)"
    moved = price_detected(offers, dataclasses.replace(aws, region="mars-1"))
    assert moved.label.startswith("aws g5.xlarge (") and "cheapest of" in moved.label
    assert moved.label.endswith("; detected region mars-1 has no catalog price")
    assert moved.price_usd_per_hour <= price.price_usd_per_hour
    unknown = DetectedInstance(provider="aws", instance_type="t3.micro", region=None, source="x")
    with pytest.raises(InputError, match=r"detected instance type 't3\.micro'"):
        price_detected(offers, unknown)


def _point_env(monkeypatch: pytest.MonkeyPatch, urls: Mapping[str, str]) -> None:
    for name in ("aws", "gcp", "azure"):
        monkeypatch.setenv(f"GPURENT_{name.upper()}_METADATA_URL", urls.get(name, DEAD))


def test_cli_instance_auto_prices_the_detected_instance(
    server: tuple[str, MetadataState], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    state.aws_instance_type, state.aws_region = "g5.xlarge", "us-east-1"
    _point_env(monkeypatch, {"aws": url})
    args = ["monitor", "--fake-gpus", "demo", "--duration", "1", "--json", "--instance", "auto"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["detected_instance"] == {
        "provider": "aws",
        "instance_type": "g5.xlarge",
        "region": "us-east-1",
        "source": f"AWS IMDSv2 at {url}",
    }
    assert summary["cost"]["label"] == "aws g5.xlarge (us-east-1)"
    assert summary["cost"]["price_usd_per_hour"] == pytest.approx(1.006)
    line = f"instance: aws g5.xlarge in us-east-1 (from AWS IMDSv2 at {url})"
    assert r.stderr.count(line) == 1, r.stderr


def test_cli_instance_auto_falls_back_to_the_cheapest_region(
    server: tuple[str, MetadataState], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    state.gcp_machine_type = "projects/1/machineTypes/a2-highgpu-1g"
    state.gcp_zone = "projects/1/zones/antarctica-south1-c"
    _point_env(monkeypatch, {"gcp": url})
    args = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--json", "--instance", "auto"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.stderr
    label = json.loads(r.stdout)["cost"]["label"]
    assert label.startswith("gcp a2-highgpu-1g (") and "cheapest of" in label
    assert "detected region antarctica-south1 has no catalog price" in label


def test_cli_instance_auto_errors_are_one_line(
    server: tuple[str, MetadataState], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, state = server
    _point_env(monkeypatch, {})
    base = ["monitor", "--fake-gpus", "busy", "--duration", "0", "--instance", "auto"]
    r = runner.invoke(app, base)
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "error: could not detect the instance type from AWS, GCP or Azure metadata (not a "
        "cloud VM?); give --instance TYPE or --price-usd-per-hour"
    )
    r = runner.invoke(app, [*base, "--region", "us-east-1"])
    assert r.exit_code == 2 and "drop --provider/--region" in r.stderr
    state.aws_instance_type = "t3.micro"  # a real type, not in the GPU catalog
    _point_env(monkeypatch, {"aws": url})
    r = runner.invoke(app, base)
    assert r.exit_code == 2 and "'t3.micro' (aws) is not in the catalog" in r.stderr, r.stderr
    r = runner.invoke(app, [*base, "--price-usd-per-hour", "0.5", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["cost"]["label"] == "given price"
    r = runner.invoke(app, ["monitor", "diagnose", "x.csv", "--instance", "auto"])
    assert r.exit_code == 2 and "works only with the live monitor" in r.stderr
    assert "Traceback" not in r.stderr

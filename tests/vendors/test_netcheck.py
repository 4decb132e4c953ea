"""`gpurent vendors netcheck`: between two processes on 127.0.0.1, through a delaying relay, and
between two network namespaces with a tbf rate limit and a known delay (netem where the kernel
has it; a delaying relay in the server's namespace always).

The perftest outputs in data/ are laid out as linux-rdma/perftest prints them (the RESULT_FMT_LAT,
RESULT_FMT_G and RESULT_FMT header strings of src/perftest_parameters.h at commit
00b55b6660d0170dabe2c1b49193e8fbe265086e); their numbers are made up for the parser.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurent.vendors import perftest
from gpurent.vendors.netcheck_result import compliance, percentile
from tests.conftest import cli_json, run_cli
from tests.vendors.delay_relay import DelayingRelay

DATA = Path(__file__).parent / "data"
RELAY = Path(__file__).parent / "delay_relay.py"
SRC = Path(__file__).resolve().parents[2] / "src"
QUICK = ["--count", "200", "--duration", "0.2", "--streams", "2", "--timeout", "3"]


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    log: Path
    address: str

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # never left running; the caller's exit-status check fails
            return self.proc.wait()


def _env(path: str | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    if path is not None:
        env["PATH"] = path
    return env


def start_server(
    tmp: Path, *, bind: str = "127.0.0.1", netns: str | None = None, path: str | None = None
) -> Server:
    log = tmp / f"server-{time.monotonic_ns()}.log"
    cmd = [sys.executable, "-m", "gpurent", "vendors", "netcheck", "--serve", "--bind", bind]
    cmd += ["--port", "0"]
    if netns is not None:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=sink, env=_env(path))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        match = re.search(r"listening on (\S+):(\d+)", log.read_text())
        if match:
            return Server(proc, log, f"{bind}:{match.group(2)}")
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"the server did not start: {log.read_text()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = start_server(tmp_path_factory.mktemp("netcheck"))
    yield srv
    srv.stop()


def netcheck_json(*args: str) -> dict[str, Any]:
    return cli_json("vendors", "netcheck", *args, "--json")


# ------------------------------------------------------------------ loopback, two processes


def test_loopback_result_document(server: Server, tmp_path: Path) -> None:
    out = tmp_path / "net.json"
    doc = netcheck_json(
        "--peer", server.address, *QUICK, "--no-rdma", "--target-gbit-s", "1e-6",
        "--out", str(out),
    )  # fmt: skip
    assert json.loads(out.read_text()) == doc
    assert doc["kind"] == "gpurent.vendors.netcheck"
    assert doc["schema_version"] == 1
    assert doc["peer"] == server.address
    lat = doc["latency_us"]
    assert isinstance(lat, dict)
    assert lat["samples"] == 200  # the warm-up round trips are not among them
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] < 1e6
    assert isinstance(doc["throughput_gbit_s"], float)
    assert doc["throughput_gbit_s"] > 0.01
    assert doc["streams"] == 2
    assert doc["target_gbit_s"] == 1e-6
    assert doc["compliance"] == 1.0  # every sample clears a target far below any link
    assert doc["rdma"] is None


def test_terminal_table_compliance_and_rdma_not_installed(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no perftest here
    code, out, err = run_cli(
        "vendors", "netcheck", "--peer", server.address, *QUICK, "--target-gbit-s", "1e5"
    )
    assert code == 0, err
    assert "TCP latency" in out
    assert "TCP throughput" in out
    assert re.search(r"compliance\s+│\s+0%", out)  # no sample reaches 100 Tbit/s
    assert "RDMA: not measured (perftest not installed)" in out


def test_server_handles_clients_in_sequence(server: Server) -> None:
    before = server.log.read_text().count("latency test from")
    for _ in range(2):
        doc = netcheck_json("--peer", server.address, *QUICK, "--no-rdma")
        assert doc["latency_us"]["samples"] == 200  # type: ignore[index]
    assert server.log.read_text().count("latency test from") == before + 2


# ------------------------------------------------------------------ bad input


def one_line_error(*args: str) -> str:
    code, out, err = run_cli("vendors", "netcheck", *args)
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return " ".join(err.split())


@pytest.mark.parametrize(
    ("peer", "says"),
    [
        ("localhost:99999", "port must be a whole number from 1 to 65535"),
        ("localhost:", "ends with ':'"),
        ("localhost:http", "port must be a whole number"),
        ("[::1", "is not [IPv6]:PORT"),
        ("", "--peer is empty"),
    ],
)
def test_bad_peer_address(peer: str, says: str) -> None:
    assert says in one_line_error("--peer", peer)


def test_refused_port() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    assert "refused the connection" in one_line_error("--peer", f"127.0.0.1:{port}")


def test_unresolvable_peer() -> None:
    assert "cannot resolve" in one_line_error("--peer", "no-such-host.invalid:5201")
    # (an unreachable address is checked between the namespaces below: here a firewall may
    # answer for any address)


def _fake_service(answer: bytes | None) -> tuple[socket.socket, threading.Thread]:
    """A TCP service on 127.0.0.1 that sends `answer` on connect (None: says nothing)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(3.0)
            if answer is not None:
                conn.sendall(answer)
            with contextlib.suppress(OSError):
                while conn.recv(4096):  # until the client gives up and closes
                    pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return listener, thread


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n", "is not a gpurent netcheck server (it answered 'SSH-2.0-"),
        (None, "did not answer the netcheck handshake"),
        (b'GRNC\x00\x02\x00\x00\x00\x0b{"ok":true}', "speaks netcheck protocol version 2"),
    ],
)
def test_peer_that_is_not_a_netcheck_server(answer: bytes | None, says: str) -> None:
    listener, thread = _fake_service(answer)
    with listener:
        port = listener.getsockname()[1]
        assert says in one_line_error("--peer", f"127.0.0.1:{port}", "--timeout", "0.3")
    thread.join(timeout=5)


def test_flags_that_do_not_go_together() -> None:
    assert "give one" in one_line_error("--serve", "--peer", "127.0.0.1")
    assert "give --peer" in one_line_error()
    assert "--streams must be at most 64" in one_line_error("--peer", "x", "--streams", "65")
    assert "are for --serve" in one_line_error("--peer", "x", "--port", "5202")
    assert "--duration must be at most 100" in one_line_error("--peer", "x", "--duration", "101")
    assert "--interval must be at least 0.01 s" in one_line_error(
        "--peer", "x", "--interval", "1e-5"
    )
    too_long = one_line_error("--peer", "x", "--duration", "1", "--interval", "2")
    assert "--interval 2 s is longer than --duration 1 s" in too_long


def test_serve_on_a_port_in_use_or_a_bad_address(server: Server) -> None:
    port = server.address.rsplit(":", 1)[1]
    in_use = one_line_error("--serve", "--bind", "127.0.0.1", "--port", port)
    assert f"cannot listen on 127.0.0.1:{port}" in in_use
    assert "cannot listen on 999.1.1.1" in one_line_error("--serve", "--bind", "999.1.1.1")
    assert "--port must be at most 65535" in one_line_error("--serve", "--port", "70000")


def test_server_ignores_a_client_that_is_not_netcheck(server: Server) -> None:
    with socket.create_connection(server.address.rsplit(":", 1)) as s:  # type: ignore[arg-type]
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        s.settimeout(5)
        with contextlib.suppress(ConnectionResetError):  # closed, maybe with our bytes unread
            assert s.recv(100) == b""  # and without an answer
    netcheck_json("--peer", server.address, *QUICK, "--no-rdma")  # and still serves
    assert "not a netcheck client" in server.log.read_text()


# ------------------------------------------------------------------ a known delay, no netem


def test_latency_sees_a_known_delay_through_a_relay(server: Server) -> None:
    host, port = server.address.rsplit(":", 1)
    relay = DelayingRelay((host, int(port)), delay_s=0.005)
    try:
        doc = netcheck_json(
            "--peer", f"127.0.0.1:{relay.port}", "--count", "40", "--duration", "0.2",
            "--streams", "1", "--no-rdma",
        )  # fmt: skip
    finally:
        relay.close()
    lat = doc["latency_us"]
    assert isinstance(lat, dict)
    # 5 ms each way: a round trip is at least 10 ms; scheduling on a busy CI box adds some
    assert 10_000 <= lat["p50"] <= 16_000, lat
    assert (doc["target_gbit_s"], doc["compliance"], doc["rdma"]) == (None, None, None)


# ------------------------------------------------------------------ RDMA through perftest


def test_perftest_parsers_on_recorded_outputs() -> None:
    full = perftest.parse_lat((DATA / "ib_write_lat_H.txt").read_text())
    samples = [1.0 + i / 100 for i in range(100)]
    assert full.samples == 100
    assert full.p50 == pytest.approx(percentile(samples, 50))
    assert full.p90 == pytest.approx(1.891)
    assert full.p99 == pytest.approx(1.9801)
    summary = perftest.parse_lat((DATA / "ib_write_lat_summary.txt").read_text())
    assert (summary.p50, summary.p90, summary.p99, summary.samples) == (1.10, None, 1.33, 1000)
    assert perftest.parse_bw((DATA / "ib_write_bw_gbits.txt").read_text()) == pytest.approx(97.40)
    mib = perftest.parse_bw((DATA / "ib_write_bw_mib.txt").read_text())
    assert mib == pytest.approx(11021.87 * 2**20 * 8 / 1e9)
    with pytest.raises(perftest.PerftestError):
        perftest.parse_bw("Couldn't connect to 10.0.0.1:18515\n")
    with pytest.raises(perftest.PerftestError):
        perftest.parse_lat(" #bytes #iterations t_min[usec]\n")


def _fake_perftest(bin_dir: Path, calls: Path) -> None:
    """`ib_write_lat` / `ib_write_bw` stand-ins: with a host argument (the client end) they print
    the recorded output; without one (the server end) they wait briefly, as perftest waits for
    its client. Every call is appended to `calls`."""
    bin_dir.mkdir()
    samples = {"ib_write_lat": "ib_write_lat_H.txt", "ib_write_bw": "ib_write_bw_gbits.txt"}
    for tool, sample in samples.items():
        script = bin_dir / tool
        script.write_text(
            f"#!{sys.executable}\n"
            "import os, sys, time\n"
            f"open({str(calls)!r}, 'a').write({tool!r} + ' ' + ' '.join(sys.argv[1:]) + '\\n')\n"
            "if sys.argv[-1].startswith('-') or sys.argv[-1].isdigit():\n"
            "    time.sleep(0.3)\n"
            "elif os.environ.get('FAKE_PERFTEST_FAIL'):\n"
            "    sys.exit(' No IB devices found.')\n"
            "else:\n"
            f"    sys.stdout.write(open({str(DATA / sample)!r}).read())\n"
        )
        script.chmod(0o755)


def test_rdma_through_perftest_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.txt"
    _fake_perftest(bin_dir, calls)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    srv = start_server(tmp_path, path=path)
    try:
        monkeypatch.setenv("PATH", path)
        doc = netcheck_json("--peer", srv.address, *QUICK)
        monkeypatch.setenv("FAKE_PERFTEST_FAIL", "1")  # the client end only: no device here
        code, out, err = run_cli("vendors", "netcheck", "--peer", srv.address, *QUICK)
    finally:
        assert srv.stop() == 0  # SIGINT: a clean stop, exit status 0
    log = srv.log.read_text()
    assert "netcheck server stopped after" in log
    assert "Traceback" not in log
    rdma = doc["rdma"]
    assert isinstance(rdma, dict)
    assert rdma["bandwidth_gbit_s"] == pytest.approx(97.40)
    assert rdma["latency_us"]["samples"] == 100
    assert rdma["latency_us"]["p90"] == pytest.approx(1.891)
    made = calls.read_text().splitlines()
    assert "ib_write_lat -n 1000" in made  # the server end, started by the peer
    assert "ib_write_lat -n 1000 -H 127.0.0.1" in made  # the client end, against the peer
    assert "ib_write_bw --report_gbits -n 2000 127.0.0.1" in made
    assert code == 0, err
    assert "RDMA: not measured (ib_write_lat failed: No IB devices found.)" in out


def test_a_second_rdma_request_waits_for_the_first_server_end_to_stop(tmp_path: Path) -> None:
    """The RDMA latency test and then the bandwidth test open one connection each; the peer
    stops the first test's perftest end after its client closes. A request that arrives while
    that end is still stopping waits for it, rather than being told "busy" (CI saw that race)."""
    from gpurent.vendors.netcheck_wire import connect, handshake, parse_peer

    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.txt"
    _fake_perftest(bin_dir, calls)
    srv = start_server(tmp_path, path=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    try:
        peer = parse_peer(srv.address)
        first = connect(peer, 30.0)
        assert handshake(first, peer, {"op": "rdma", "tool": "lat"})["installed"] is True
        closer = threading.Timer(1.0, first.close)  # its client finishes a second later
        closer.start()
        with connect(peer, 30.0) as second:
            answer = handshake(second, peer, {"op": "rdma", "tool": "bw"})
        closer.join()
    finally:
        assert srv.stop() == 0
    assert answer["installed"] is True


def test_rdma_when_the_peer_lacks_perftest(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("ib_write_lat", path=os.environ.get("PATH")):
        pytest.skip("perftest is installed here: the module's server has it too")
    bin_dir, calls = tmp_path / "bin", tmp_path / "calls.txt"
    _fake_perftest(bin_dir, calls)
    monkeypatch.setenv("PATH", str(bin_dir))
    code, out, err = run_cli("vendors", "netcheck", "--peer", server.address, *QUICK)
    assert code == 0, err
    assert "RDMA: not measured (perftest not installed on the peer)" in out
    assert not calls.exists()  # the client end is not run without a server end


# ------------------------------------------------------------------ two network namespaces


@dataclass
class Pair:
    """Two namespaces joined by a veth pair; a netcheck server runs in `server_ns`."""

    server_ns: str
    client_ns: str
    server_dev: str
    server_ip: str
    spare_ip: str  # in the subnet, owned by no one
    server: Server


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=10)


@pytest.fixture(scope="module")
def pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Pair:
    if not sys.platform.startswith("linux") or shutil.which("ip") is None:
        pytest.skip("network namespaces need Linux and iproute2's `ip`")
    if os.geteuid() != 0:
        pytest.skip("making network namespaces needs root")
    pid = os.getpid()
    tag = f"{pid % 100000}"
    server_ns, client_ns = f"gnc{tag}s", f"gnc{tag}c"
    server_dev, client_dev = f"gnc{tag}s0", f"gnc{tag}c0"
    subnet = f"10.{200 + pid % 50}.{(pid // 50) % 256}"
    made: list[str] = []
    server: list[Server] = []

    def clean_up() -> None:
        for srv in server:
            srv.stop()
        for ns in made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", server_dev], capture_output=True, check=False)

    request.addfinalizer(clean_up)
    try:
        for ns in (server_ns, client_ns):
            _ip("netns", "add", ns)
            made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("netns", "exec", ns, "true")  # a container may allow the netns but not entering it
        _ip("link", "add", server_dev, "type", "veth", "peer", "name", client_dev)
        _ip("link", "set", server_dev, "netns", server_ns)
        _ip("link", "set", client_dev, "netns", client_ns)
        _ip("-n", server_ns, "addr", "add", f"{subnet}.1/24", "dev", server_dev)
        _ip("-n", client_ns, "addr", "add", f"{subnet}.2/24", "dev", client_dev)
        _ip("-n", server_ns, "link", "set", server_dev, "up")
        _ip("-n", client_ns, "link", "set", client_dev, "up")
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot make network namespaces here: {exc.stderr.strip()}")
    srv = start_server(tmp_path_factory.mktemp("netns"), bind=f"{subnet}.1", netns=server_ns)
    server.append(srv)
    return Pair(server_ns, client_ns, server_dev, f"{subnet}.1", f"{subnet}.3", srv)


def netcheck_in(ns: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "gpurent", "vendors", "netcheck"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, env=_env(), timeout=60, check=False
    )


@contextlib.contextmanager
def qdisc(pair: Pair, *spec: str) -> Iterator[None]:
    """A root qdisc on the server's end of the veth (it shapes what the server sends)."""
    done = subprocess.run(
        ["tc", "-n", pair.server_ns, "qdisc", "add", "dev", pair.server_dev, "root", *spec],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"`tc qdisc add ... {spec[0]}` fails here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(
            ["tc", "-n", pair.server_ns, "qdisc", "del", "dev", pair.server_dev, "root"],
            capture_output=True,
            check=False,
        )


def test_netns_throughput_sees_a_tbf_rate_limit(pair: Pair) -> None:
    with qdisc(pair, "tbf", "rate", "50mbit", "burst", "16kb", "latency", "100ms"):
        done = netcheck_in(
            pair.client_ns, "--peer", f"{pair.server_ip}:{pair.server.address.rsplit(':')[1]}",
            "--count", "100", "--duration", "0.6", "--streams", "2", "--no-rdma",
            "--target-gbit-s", "0.1", "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["throughput_gbit_s"] == pytest.approx(0.050, rel=0.2)
    assert doc["compliance"] == 0.0  # no interval reaches 100 Mbit/s behind a 50 Mbit/s limit
    assert doc["latency_us"]["samples"] == 100


def test_netns_latency_sees_a_netem_delay(pair: Pair) -> None:
    with qdisc(pair, "netem", "delay", "5ms"):
        done = netcheck_in(
            pair.client_ns, "--peer", f"{pair.server_ip}:{pair.server.address.rsplit(':')[1]}",
            "--count", "60", "--duration", "0.3", "--streams", "1", "--no-rdma", "--json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    p50 = json.loads(done.stdout)["latency_us"]["p50"]
    assert 5_000 <= p50 <= 9_000  # 5 ms on the server's way out, once per round trip


def test_netns_latency_sees_a_known_delay_through_a_relay(pair: Pair) -> None:
    # the kernel may lack sch_netem (this one does): a relay in the server's namespace holds every
    # chunk 5 ms each way, so the client's round trips across the veth must take at least 10 ms
    port = pair.server.address.rsplit(":", 1)[1]
    relay = subprocess.Popen(
        ["ip", "netns", "exec", pair.server_ns, sys.executable, str(RELAY),
         pair.server_ip, pair.server_ip, port, "0.005"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert relay.stdout is not None
        relay_port = relay.stdout.readline().strip()
        done = netcheck_in(
            pair.client_ns, "--peer", f"{pair.server_ip}:{relay_port}", "--count", "40",
            "--duration", "0.2", "--streams", "1", "--no-rdma", "--json",
        )  # fmt: skip
    finally:
        relay.kill()
        relay.wait()
        if relay.stdout is not None:
            relay.stdout.close()
    assert done.returncode == 0, done.stderr
    p50 = json.loads(done.stdout)["latency_us"]["p50"]
    assert 10_000 <= p50 <= 16_000, p50


def test_netns_unreachable_peer_is_one_line(pair: Pair) -> None:
    done = netcheck_in(pair.client_ns, "--peer", f"{pair.spare_ip}:5201", "--timeout", "0.5")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "is unreachable" in done.stderr


# ------------------------------------------------------------------ the pure arithmetic

finite = st.floats(min_value=0, max_value=1e7, allow_nan=False)


@given(values=st.lists(finite, min_size=1, max_size=50), q1=st.floats(0, 100), q2=st.floats(0, 100))
def test_percentiles_are_ordered_and_within_the_samples(
    values: list[float], q1: float, q2: float
) -> None:
    low, high = sorted((q1, q2))
    assert min(values) <= percentile(values, low) <= percentile(values, high) <= max(values)
    assert percentile(values, 0) == min(values)
    assert percentile(values, 100) == max(values)


@given(samples=st.lists(finite, min_size=1, max_size=50), t1=finite, t2=finite)
def test_compliance_falls_as_the_target_rises(samples: list[float], t1: float, t2: float) -> None:
    low, high = sorted((t1, t2))
    c_low, c_high = compliance(samples, low), compliance(samples, high)
    assert c_low is not None and c_high is not None
    assert 0.0 <= c_high <= c_low <= 1.0
    assert compliance(samples, min(samples)) == 1.0
    assert compliance(samples, None) is None

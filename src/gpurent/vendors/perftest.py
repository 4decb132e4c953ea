"""RDMA figures from the standard perftest tools (`ib_write_lat`, `ib_write_bw`), when installed.

The tools run as a pair: the server end without a host argument, the client end with the
server's address; they exchange their queue-pair details over TCP on perftest's own port
(18515 by default). Output formats parsed here are those of linux-rdma/perftest
(src/perftest_parameters.h, commit 00b55b6660d0170dabe2c1b49193e8fbe265086e):

- `ib_write_lat -H` prints every (sorted) sample as `#, usec` then `N, VALUE` lines, then the
  summary header ` #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]
  t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]` and one row of numbers. Write
  latency is reported one-way (the round trip halved).
- `ib_write_bw --report_gbits` prints ` #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]
  MsgRate[Mpps]` and one row; without the flag the unit is MiB/sec (MB/sec in older releases,
  also 2^20 bytes).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from gpurent.vendors.netcheck_result import LatencyUs, percentile

TOOLS = {"lat": "ib_write_lat", "bw": "ib_write_bw"}
# Arguments of each end (the same on both, as perftest requires matching settings).
ARGS = {"lat": ["-n", "1000"], "bw": ["--report_gbits", "-n", "2000"]}
CLIENT_EXTRA = {"lat": ["-H"], "bw": []}
SERVER_START_S = 0.5  # the server end opens its port within this
CLIENT_TIMEOUT_S = 60.0

_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_BW_UNIT_GBIT = {"Gb/sec": 1.0, "MiB/sec": 2**20 * 8 / 1e9, "MB/sec": 2**20 * 8 / 1e9}


class NotInstalledError(Exception):
    """The perftest tool is not on PATH."""


class PerftestError(Exception):
    """The tool failed or printed something this parser cannot read; the text says which."""


def installed(kind: str) -> bool:
    """Whether the perftest tool for kind is on PATH."""
    return shutil.which(TOOLS[kind]) is not None


def _rows(text: str, header_word: str) -> tuple[str, list[float]]:
    """The summary header line containing `header_word` and the numbers of the row below it."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and header_word in line:
            for row in lines[i + 1 :]:
                numbers = re.findall(_NUMBER, row)
                if row.strip() and not row.strip().startswith("-") and len(numbers) >= 3:
                    return line, [float(n) for n in numbers]
            break
    raise PerftestError(f"no result row under a '{header_word}' header")


def parse_lat(text: str) -> LatencyUs:
    """p50/p90/p99 from the `-H` samples when printed; otherwise p50 = t_typical (perftest's
    median), p99 = its 99% percentile column and p90 unknown."""
    samples: list[float] = []
    in_samples = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#,"):
            in_samples = True
            continue
        if in_samples:
            match = re.fullmatch(rf"\d+,\s*({_NUMBER})", stripped)
            if match is None:
                in_samples = False
                continue
            samples.append(float(match.group(1)))
    header, row = _rows(text, "t_typical")
    names = re.findall(
        r"(t_min|t_max|t_typical|t_avg|t_stdev|99% percentile|99\.9% percentile)", header
    )
    if len(row) < 2 + len(names) or "t_typical" not in names or "99% percentile" not in names:
        raise PerftestError("the latency row has fewer columns than its header")
    values = dict(zip(names, row[2:], strict=False))
    iterations = int(row[1])
    if samples:
        return LatencyUs(
            p50=percentile(samples, 50),
            p90=percentile(samples, 90),
            p99=percentile(samples, 99),
            samples=len(samples),
        )
    return LatencyUs(
        p50=values["t_typical"], p90=None, p99=values["99% percentile"], samples=iterations
    )


def parse_bw(text: str) -> float:
    """The average bandwidth in Gbit/s."""
    header, row = _rows(text, "BW average")
    match = re.search(r"BW average\[([^\]]+)\]", header)
    unit = match.group(1) if match else ""
    if unit not in _BW_UNIT_GBIT or len(row) < 4:
        raise PerftestError(f"unknown bandwidth unit {unit!r}")
    return row[3] * _BW_UNIT_GBIT[unit]


def start_server(kind: str) -> subprocess.Popen[str]:
    """The server end of `kind`, waiting for one client (NotInstalledError without the tool)."""
    path = shutil.which(TOOLS[kind])
    if path is None:
        raise NotInstalledError(TOOLS[kind])
    return subprocess.Popen(
        [path, *ARGS[kind]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop the process: terminate, then kill if it has not exited within 2 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_client(kind: str, host: str) -> str:
    """The client end's output against `host`; PerftestError with the tool's last line when it
    fails."""
    path = shutil.which(TOOLS[kind])
    if path is None:
        raise NotInstalledError(TOOLS[kind])
    try:
        done = subprocess.run(
            [path, *ARGS[kind], *CLIENT_EXTRA[kind], host],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )
    except subprocess.TimeoutExpired:
        raise PerftestError(f"{TOOLS[kind]} did not finish within {CLIENT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()
        reason = tail[-1].strip() if tail else f"exit status {done.returncode}"
        raise PerftestError(f"{TOOLS[kind]} failed: {reason}")
    return done.stdout

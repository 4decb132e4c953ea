"""Every `gpurent ...` example in the README's shell blocks runs, or is named here with why not.

A README that shows a command which fails is the first thing a newcomer meets; this keeps the
quick reference honest as the CLI changes.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpurent.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

# Examples that need inputs a test cannot have (a user's traces, a GPU, a recorded store, a
# network, a training script); each is exercised by its room's own tests with made-up inputs.
NEEDS_USER_INPUT = {
    "spot simulate": "needs the user's availability traces (tests/spot builds its own)",
    "spot interval": "needs a trace file (tests/spot)",
    "spot zones": "needs trace files (tests/spot)",
    "spot history": "needs a price-history file (tests/spot)",
    "spot signals import": "needs a downloaded signal file (tests/spot/test_cli_signals.py)",
    "spot probe": "runs the user's acquire script (tests/spot/test_cli_probe.py)",
    "bench": "a full benchmark run; tests/bench runs --quick end to end",
    "monitor --instance": "records to ~/gpu.db; tests/monitor records to a tmp store",
    "monitor --exporter": "serves until stopped; tests/monitor scrapes the exporter",
    "monitor --push": "needs a running gpurent serve (tests/server pushes to one)",
    "monitor report": "needs a recorded store (tests/monitor)",
    "monitor diagnose": "needs a samples file (tests/monitor)",
    "catalog update": "needs the network (tests/catalog uses a 127.0.0.1 server)",
    "calibrate add": "needs the user's measurements (tests/estimate)",
    "run": "supervises the user's training script (tests/runtime)",
    "plan --workload": "needs the user's workload file (tests/plan)",
    "estimate --from-csv": "needs the user's CSV (tests/estimate)",
    "fleet": "needs a Ray cluster (tests/fleet starts a local one)",
    "deploy render": "needs a saved plan file (tests/deploy makes one)",
    "vendors netcheck": "serves until stopped, or needs a peer (tests/vendors starts both ends)",
    "vendors sla": "needs the user's outage log and terms (tests/vendors; examples/sla)",
    "vendors audit": "needs the user's bill (tests/vendors writes CUR, GCP and generic bills)",
    "serve": "serves until stopped (tests/server starts it on a free port)",
}


def readme_examples() -> list[str]:
    """`gpurent` command lines from the README's bash blocks, comments and continuations joined."""
    text = README.read_text(encoding="utf-8")
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("gpurent "):
                commands.append(line)
    return commands


def _needs_input(command: str) -> bool:
    rest = command.removeprefix("gpurent ")
    return any(rest.startswith(prefix) for prefix in NEEDS_USER_INPUT)


def test_the_readme_has_examples_and_every_skip_is_still_used() -> None:
    commands = readme_examples()
    assert len(commands) >= 15
    used = {p for p in NEEDS_USER_INPUT if any(c.startswith(f"gpurent {p}") for c in commands)}
    assert used == set(NEEDS_USER_INPUT), "drop skips the README no longer needs"


@pytest.mark.parametrize("command", [c for c in readme_examples() if not _needs_input(c)])
def test_readme_example_runs(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # examples that write files (--html) write them here
    # the examples/ files the README names are read from the repository
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in shlex.split(command)[1:]]
    if args[:1] == ["monitor"]:
        args += ["--interval", "0.2"]  # the demo's 10 s at 5 Hz would only slow the suite
        args[args.index("--duration") + 1] = "1"
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"{command}\n{result.stderr}"
    assert result.stdout.strip() or list(tmp_path.iterdir())

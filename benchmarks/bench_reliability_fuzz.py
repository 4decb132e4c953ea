"""The CLI fuzz of tests/test_cli_fuzz.py with many more examples: cases tried and held.

Every command that reads a number or a file (tests/cli_fuzz.py) is fed `--examples` generated
inputs per numeric-flag target and per file target (malformed CSV/JSON/TOML/YAML, non-UTF-8
bytes, structured files with fuzzed fields, a device, a directory, a symlink loop, a long name;
here also a FIFO). A case holds when it exits 0 with a plausible answer or prints exactly one
`error:` line with exit 1/2/3. Prints one line per target and the totals; lists the first
failures. Exit code 1 when any case did not hold.

    PYTHONPATH=src python benchmarks/bench_reliability_fuzz.py --examples 300 --seed 13
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.*

from tests import cli_fuzz as fz


def _run(name: str, body: Callable[[], None], tally: dict[str, int]) -> None:
    t0 = time.monotonic()
    before = dict(tally)
    body()
    tried = tally["tried"] - before["tried"]
    held = tally["held"] - before["held"]
    print(f"{name:28s} tried {tried:5d}  held {held:5d}  ({time.monotonic() - t0:5.1f} s)")


def _numbers(
    target: fz.NumberTarget,
    work: Path,
    conf: settings,
    at: int,
    record: Callable[[fz.Outcome], None],
) -> Callable[[], None]:
    @seed(at)
    @conf
    @given(flag=st.sampled_from(target.flags), value=fz.number_texts())
    def body(flag: str, value: str) -> None:
        record(fz.invoke(target.args(flag, value, work)))

    return body  # type: ignore[no-any-return]


def _files(
    target: fz.FileTarget,
    work: Path,
    conf: settings,
    at: int,
    record: Callable[[fz.Outcome], None],
    counter: Iterator[int],
) -> Callable[[], None]:
    @seed(at)
    @conf
    @given(content=fz.file_contents(target))
    def body(content: tuple[str, bytes | str]) -> None:
        path = fz.write_input(target, content, work, next(counter))
        record(fz.invoke(target.command(str(path))))

    return body  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="Examples per target.")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    # calibrate add stores rows: keep them out of the user's data directory
    os.environ["GPURENT_HOME"] = tempfile.mkdtemp(prefix="gpurent-fuzz-home-")
    conf = settings(
        max_examples=args.examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    tally = {"tried": 0, "held": 0}
    failures: list[str] = []

    def record(out: fz.Outcome) -> None:
        tally["tried"] += 1
        if fz.problem(out) is None:
            tally["held"] += 1
        elif len(failures) < 20:
            failures.append(fz.describe(out))

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fz.prepare(work)
        for target in fz.NUMBER_TARGETS:
            _run(f"flags: {target.name}", _numbers(target, work, conf, args.seed, record), tally)
        counter = iter(range(10**9))
        for ftarget in fz.FILE_TARGETS:
            body = _files(ftarget, work, conf, args.seed, record, counter)
            _run(f"file: {ftarget.name}", body, tally)

        def fifos() -> None:
            for ftarget in fz.FILE_TARGETS:
                fifo = work / f"fifo-{ftarget.name}{ftarget.suffix}"
                os.mkfifo(fifo)
                record(fz.invoke(ftarget.command(str(fifo))))

        _run("file: FIFO (every reader)", fifos, tally)
    print(
        f"total: {tally['tried']} cases tried, {tally['held']} held, "
        f"{tally['tried'] - tally['held']} did not ({time.monotonic() - t0:.0f} s)"
    )
    for line in failures:
        print(f"  FAILED {line}")
    return 0 if tally["tried"] == tally["held"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Kill `gpurent run` in every state with every signal, restart it, many times; count the
scenarios tried and those that held (one job at a time on the checkpoint directory, no job
process left alive, the restarted supervisor succeeds; for a catchable signal the first
supervisor also exits 75 (1 during a rebuild) with no job process left and no gpurent traceback).

The scenarios are those of `tests/runtime/test_supervisor_kill_suite.py`
(`tests/runtime/supervisor_scenarios.py`): states starting, running, backoff, health (stopping
the job after a failed check) and rebuild, signals SIGKILL, SIGTERM, SIGHUP and SIGINT. Run:

    PYTHONPATH=src python benchmarks/bench_reliability_supervisor.py --repeat 5
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import itertools
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

SCENARIOS = Path(__file__).resolve().parent.parent / "tests" / "runtime" / "supervisor_scenarios.py"


def _load_scenarios() -> ModuleType:
    spec = importlib.util.spec_from_file_location("supervisor_scenarios", SCENARIOS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="times each of the 20 runs")
    parser.add_argument("--parallel", type=int, default=5, help="scenarios at once")
    args = parser.parse_args()
    scenarios = _load_scenarios()
    cases = list(itertools.product(scenarios.STATES, scenarios.SIGNALS)) * args.repeat
    base = Path(tempfile.mkdtemp(prefix="gpurent-sup-bench-"))
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            results = list(pool.map(lambda c: scenarios.run_scenario(base, *c), cases))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    elapsed = time.monotonic() - started
    by_case: dict[tuple[str, str], list[bool]] = collections.defaultdict(list)
    for r in results:
        by_case[(r.state, r.signal)].append(r.held)
    print(f"{'state':<10} {'signal':<8} tried held")
    for (state, sig), held in by_case.items():
        print(f"{state:<10} {sig:<8} {len(held):>5} {sum(held):>4}")
    not_reached = sum(not r.reached for r in results)
    held_total = sum(r.held for r in results)
    print(
        f"scenarios tried {len(results)}, held {held_total}, state not reached when signalled "
        f"{not_reached}, {elapsed:.0f} s"
    )
    for r in results:
        if not r.held:
            print(f"FAILED {r.state}/{r.signal}: {'; '.join(r.problems)}")
    return 0 if held_total == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

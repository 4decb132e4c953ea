"""`gpurent spot probe`: record an availability trace with the user's acquire command.

The command is run by the shell once per zone per round, with the zone in `$GPURENT_ZONE`;
exit status 0 means an instance was created (the command should also release it, or be a
`--dry-run` that says whether it would succeed). The trace is rewritten after every round, so an
interrupted probe keeps what it saw. `CLOCK` and `SLEEP` are module attributes so that tests can
replace them.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpurent.cli.common import checked, cli_errors, err_console
from gpurent.inputs import values as v
from gpurent.inputs.files import write_text

if TYPE_CHECKING:
    from gpurent.spot.io.probe import ProbeRow

ZONE_ENV = "GPURENT_ZONE"


def _now() -> datetime:
    return datetime.now(UTC)


CLOCK = _now
SLEEP = time.sleep


def _attempt(command: str, timeout_s: float) -> Callable[[str], bool]:
    def run(zone: str) -> bool:
        env = {**os.environ, ZONE_ENV: zone}
        try:
            done = subprocess.run(
                command,
                shell=True,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0

    return run


@cli_errors
@checked(
    interval=v.bounded(v.positive, most=v.MAX_SECONDS),
    max_attempts=v.bounded(v.positive_int, most=1_000_000),
    max_duration=v.bounded(v.positive, most=v.MAX_SECONDS),
    attempt_timeout=v.bounded(v.positive, most=v.MAX_SECONDS),
)
def probe_cmd(
    *,
    command: Annotated[
        str,
        typer.Option(
            help=f"Shell command that tries to get one instance in ${ZONE_ENV}; exit 0 = created."
        ),
    ],
    zone: Annotated[list[str], typer.Option(help="Zone to probe; repeat for several.")],
    interval: Annotated[float, typer.Option(help="Seconds between rounds.")] = 600.0,
    max_attempts: Annotated[
        int, typer.Option(help="Rounds at most (each tries every zone).")
    ] = 144,
    max_duration: Annotated[float, typer.Option(help="Seconds to probe at most.")] = 86400.0,
    attempt_timeout: Annotated[
        float, typer.Option(help="Seconds one attempt may take; longer = not created.")
    ] = 300.0,
    output: Annotated[Path, typer.Option("--output", "-o", help="Trace CSV to write.")] = Path(
        "trace.csv"
    ),
) -> None:
    """Probe zones with an acquire command and write a trace `spot simulate` reads.

    Example: gpurent spot probe --command ./try-p5.sh --zone us-east-1a --zone us-east-1b
    --interval 600 --max-duration 86400 -o p5.csv
    """
    from gpurent.spot.io.probe import ProbeLimits, probe_csv, run_probe

    limits = ProbeLimits(
        interval_s=interval, max_attempts=max_attempts, max_duration_s=max_duration
    )

    def save(rows: Sequence[ProbeRow]) -> None:
        write_text(output, probe_csv(rows))

    result = run_probe(
        list(zone),
        _attempt(command, attempt_timeout),
        limits,
        now=CLOCK,
        sleep=SLEEP,
        on_round=save,
    )
    created = sum(r.created for r in result.rows)
    err_console.print(
        f"wrote {output}: {result.rounds} round(s) x {len(zone)} zone(s), {created} of "
        f"{len(result.rows)} attempts created an instance; stopped by --{result.stopped_by}",
        highlight=False,
        soft_wrap=True,
    )

"""Write the small example availability traces that `gpurent serve`'s spot page shows when the
user has none of their own (src/gpurent/server/data/spot/*.csv). The cut-down files are
shipped in the package, so nothing needs this script to run; it records how they were made.
To rebuild them, point --trace-dir at a folder of the original per-zone traces (`<zone>.csv`,
`date,availability`, ~195 s ticks) from the repository andylizf/skynomad-artifact (commit
62b9aaa1, Apache-2.0; data of "Can't Be Late", NSDI'24), e.g. a checkout of it:

    python examples/spot/make_example.py --trace-dir PATH/TO/aws-v100-traces

It keeps three zones' first 14 days of those AWS p3.2xlarge traces, every 5th observation
(195 s ticks become ~975 s), unchanged: each row is a measured observation, none is made up.
Provenance in that folder's README.md.
"""

from __future__ import annotations

import argparse
import csv
from datetime import datetime, timedelta
from pathlib import Path

ZONES = ("us-east-1a_v100_1", "us-east-2a_v100_1", "us-west-2b_v100_1")
DAYS = 14
OUT = Path(__file__).resolve().parents[2] / "src" / "gpurent" / "server" / "data" / "spot"
EVERY = 5


def main() -> None:
    """Read the full traces from --trace-dir; write the cut-down copies into the package data."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--trace-dir",
        type=Path,
        required=True,
        help="folder of the original <zone>.csv traces (andylizf/skynomad-artifact @ 62b9aaa1)",
    )
    args = parser.parse_args()
    missing = [z for z in ZONES if not (args.trace_dir / f"{z}.csv").is_file()]
    if missing:
        raise SystemExit(
            f"{args.trace_dir}: no {missing[0]}.csv there; give the folder holding the original "
            "per-zone traces (see this script's docstring)"
        )
    out = OUT
    for zone in ZONES:
        with (args.trace_dir / f"{zone}.csv").open(newline="") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        start = datetime.fromisoformat(body[0][0])
        end = start + timedelta(days=DAYS)
        kept = [r for r in body[::EVERY] if datetime.fromisoformat(r[0]) < end]
        with (out / f"{zone}.csv").open("w", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(kept)
        print(f"{zone}: {len(kept)} rows")


if __name__ == "__main__":
    main()

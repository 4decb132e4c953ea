"""Recorder ingest rate into SQLite: flat sample rows per second (one row = one GPU sample).

Rows come from a real probe read of 8 stand-in H100s, timestamps varied; written in batches of
`--batch` rows through `Recorder.flush` (one transaction each) into a fresh file.
Run: PYTHONPATH=src python benchmarks/bench_monitor_recorder.py [--rows 500000] [--batch 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from gpurent.monitor.recorder import Recorder

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_rows import template_rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args()
    template = template_rows()
    rows = [dict(template[i % 8], timestamp=float(i // 8)) for i in range(args.rows)]
    with tempfile.TemporaryDirectory() as tmp:
        rec = Recorder(Path(tmp) / "bench.db", max_buffer_rows=args.batch)
        start = time.perf_counter()
        for k in range(0, len(rows), args.batch):
            rec.add_rows(rows[k : k + args.batch])
            note = rec.flush()
            assert note is None, note
        elapsed = time.perf_counter() - start
        rec.close()
    print(
        f"rows={rec.written_rows} batch={args.batch} s={elapsed:.2f} "
        f"rows_per_s={rec.written_rows / elapsed:,.0f}"
    )


if __name__ == "__main__":
    main()

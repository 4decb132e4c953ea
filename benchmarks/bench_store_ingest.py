"""Store ingest rate: GPU sample rows per second through `gpurent.store.insert_rows`, into SQLite
and PostgreSQL, in the batches a monitor sends (8 GPUs per sample: 8 rows is one sample of one
machine, 80 is ten samples or ten machines, 800 a hundred), one transaction per batch as the
recorder's flush and a push request do.

Rows come from a real probe read of 8 stand-in H100s, timestamps varied. SQLite: a fresh file
in the store's own settings (WAL, synchronous=NORMAL). PostgreSQL: the server in
GPURENT_TEST_PG_URL (.ci/pg-up.sh's runs with fsync off), else one this script starts with
Debian's postgresql in a temporary directory, with the server's durable defaults (fsync on,
synchronous_commit on), stopped at the end.

With one writer, a batch of 8 on a durable server measures commit latency (an fsync each); with
8 writers, as pushes from many machines arrive, PostgreSQL groups their commits.

Run: PYTHONPATH=src python benchmarks/bench_store_ingest.py [--rows 16000] [--batches 8,80,800]
     [--writers 1,8]
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from gpurent.store import create_schema, insert_rows, open_engine

sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_rows import template_rows


def sample_rows(count: int) -> list[dict[str, Any]]:
    """`count` rows: 8 GPUs per timestamp, from a probe read of the stand-in H100s."""
    template = template_rows()
    return [dict(template[i % 8], timestamp=float(i // 8), machine="bench-1") for i in range(count)]


def ingest(target: str, rows: list[dict[str, Any]], batch: int, writers: int) -> float:
    """Seconds to write `rows` in transactions of `batch` rows into a fresh store at target,
    from `writers` threads at once (each with its own connection, as concurrent pushes)."""
    engine = open_engine(target)
    create_schema(engine)
    with engine.begin() as conn:  # the source list is known after the first batch
        insert_rows(conn, rows[:batch])
    chunks = [rows[k : k + batch] for k in range(batch, len(rows), batch)]

    def write(mine: list[list[dict[str, Any]]]) -> None:
        for chunk in mine:
            with engine.begin() as conn:
                insert_rows(conn, chunk)

    start = time.perf_counter()
    with ThreadPoolExecutor(writers) as pool:
        list(pool.map(write, [chunks[w::writers] for w in range(writers)]))
    elapsed = time.perf_counter() - start
    with engine.connect() as conn:
        stored = conn.exec_driver_sql("SELECT count(*) FROM monitor_samples").scalar()
    engine.dispose()
    assert stored == len(rows), (stored, len(rows))
    return elapsed


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def own_server() -> Iterator[str]:
    """A PostgreSQL server of our own (Debian's binaries) in a temporary directory; its URL."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise SystemExit(
            "PostgreSQL is not installed: run .ci/pg-up.sh (root, Debian) and export "
            "GPURENT_TEST_PG_URL from the file it writes, or install postgresql"
        )
    bindir = Path(found[-1]).parent
    as_user: list[str] = []
    tmp = tempfile.mkdtemp(prefix="gpurent-pg-bench.")
    if os.geteuid() == 0:  # the server refuses to run as root
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(tmp, "postgres", "postgres")
    data, port = f"{tmp}/data", _free_port()

    def pg(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True)

    try:
        pg(str(bindir / "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={tmp}"
        pg(str(bindir / "pg_ctl"), "-D", data, "-l", f"{tmp}/log", "-w", "start", "-o", options)
        pg(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
           "gpurent_bench")  # fmt: skip
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/gpurent_bench"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", data, "-m", "fast", "-w",
                        "stop"], check=False, capture_output=True)  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def fresh_database(base_url: str) -> Iterator[str]:
    """A new database on the server at base_url, dropped afterwards."""
    url = sa.engine.make_url(base_url)
    name = f"gpurent_bench_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=16_000)
    parser.add_argument("--batches", default="8,80,800")
    parser.add_argument("--writers", default="1,8", help="concurrent writers, comma-separated")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    rows = sample_rows(args.rows)
    given = os.environ.get("GPURENT_TEST_PG_URL", "").strip()
    server = contextlib.nullcontext(given) if given else own_server()
    label = "GPURENT_TEST_PG_URL (fsync off)" if given else "own server (fsync on)"
    with server as base_url, tempfile.TemporaryDirectory() as tmp:
        for writers in [int(w) for w in args.writers.split(",")]:
            for batch in batches:
                seconds = ingest(str(Path(tmp) / f"w{writers}b{batch}.db"), rows, batch, writers)
                _report("sqlite (WAL, synchronous=NORMAL)", writers, batch, len(rows), seconds)
                with fresh_database(base_url) as url:
                    seconds = ingest(url, rows, batch, writers)
                _report(f"postgresql {label}", writers, batch, len(rows), seconds)


def _report(backend: str, writers: int, batch: int, rows: int, seconds: float) -> None:
    written = rows - batch  # the first batch is written before the clock starts
    print(
        f"{backend:38s} writers={writers} batch={batch:4d} rows={written} s={seconds:.2f} "
        f"rows_per_s={written / seconds:,.0f} transactions_per_s={written / batch / seconds:,.0f}"
    )


if __name__ == "__main__":
    main()

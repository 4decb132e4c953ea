"""The server's fleet: the store (opened on first use), the running spend per machine, the
budget checks on each ingest and the webhook sender thread (off the request path)."""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurent.errors import DataError
from gpurent.http import URLLIB_HTTP, Http, HttpError
from gpurent.monitor.budget import BudgetRule, crossed, webhook_payload
from gpurent.monitor.cost import CostMeter
from gpurent.monitor.spend import (
    MachinePlan,
    MeteredHistory,
    SpendTracker,
    cost_samples,
)
from gpurent.userdata import data_home

DB_FILE = "serve.db"
WEBHOOK_ATTEMPTS = 3
WEBHOOK_TIMEOUT_S = 5.0


def default_db() -> Path:
    """The store `gpurent serve` uses without --db: serve.db in the gpurent data directory."""
    return data_home() / DB_FILE


def plan_of(machine: Any) -> MachinePlan:
    """The spend core's view of a stored machine."""
    return MachinePlan(
        name=machine.name,
        job=machine.job,
        project=machine.project,
        price_usd_per_hour=machine.price_usd_per_hour,
        gpu_count=machine.gpu_count,
        plan_hours=machine.plan_hours,
        plan_cost_usd=machine.plan_cost_usd,
    )


@dataclass(slots=True)
class _Metered:
    """One machine's stored history as far as it was read: the cost meter over it (None without
    a price) and how many rows and samples it holds."""

    plan: MachinePlan
    meter: CostMeter | None
    rows: int = 0
    samples: int = 0
    first_s: float | None = None
    last_s: float | None = None

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Add rows newer than `last_s` (whole samples, oldest first)."""
        samples = cost_samples(rows)
        if self.meter is not None:
            for sample in samples:
                self.meter.add(sample)
        self.rows += len(rows)
        self.samples += len(samples)
        if samples:
            if self.first_s is None:
                self.first_s = samples[0].timestamp_s
            self.last_s = samples[-1].timestamp_s

    def history(self) -> MeteredHistory:
        """What `monitor.spend.spend_from_meter` takes."""
        report = self.meter.report() if self.meter is not None and self.samples else None
        return MeteredHistory(
            report=report, samples=self.samples, first_s=self.first_s, last_s=self.last_s
        )


@dataclass(frozen=True, slots=True)
class _Webhook:
    alert_id: int
    url: str
    payload: dict[str, Any]


class Fleet:
    """What the monitor and budget endpoints share. Writes go one at a time (`lock`)."""

    def __init__(
        self,
        db: str | None,
        *,
        webhook_http: Http = URLLIB_HTTP,
        clock: Callable[[], float] = time.time,
        webhook_backoff_s: float = 1.0,
    ) -> None:
        self._db = db
        self._engine: Any = None
        self.lock = threading.RLock()
        self.clock = clock
        self.tracker = SpendTracker()
        self._seeded_scopes: set[tuple[str, str]] = set()
        self._budgets: list[Any] | None = None  # every budget, read again after a change
        self._by_digest: dict[str, Any] = {}  # token SHA-256 -> machine, for known tokens
        self._fired: dict[int, set[float]] = {}  # budget id -> thresholds fired
        self._http = webhook_http
        self._backoff_s = webhook_backoff_s
        self._webhooks: queue.Queue[_Webhook] = queue.Queue(maxsize=10_000)
        self._sender: threading.Thread | None = None
        self._metered: dict[str, _Metered] = {}  # machine -> its history as read so far
        # bumped by every change a page could show (a push, a budget, a machine, an alert's
        # webhook state): a page computed at one version is still true at that version
        self.version = 0
        self._metered_lock = threading.Lock()

    @property
    def engine(self) -> Any:
        """The store's engine, its tables created on first use."""
        with self.lock:
            if self._engine is None:
                import sqlalchemy as sa

                from gpurent.store import create_schema, open_engine
                from gpurent.store.db import without_password

                target: str | Path = self._db if self._db else default_db()
                try:
                    if "://" not in str(target):
                        Path(target).expanduser().parent.mkdir(parents=True, exist_ok=True)
                    engine = open_engine(target)
                    create_schema(engine)
                except (sa.exc.SQLAlchemyError, OSError) as exc:
                    why = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                    raise DataError(
                        f"--db {without_password(str(target))}: cannot open the store ({why})"
                    ) from None
                self._engine = engine
            return self._engine

    def metered_history(self, conn: Any, plan: MachinePlan) -> MeteredHistory:
        """`plan`'s machine's whole stored history, metered: extended by the rows stored after
        the last read (a push carries whole samples, in time order), read whole again when the
        row count says anything else changed (a retention delete, a machine registered anew).
        A spend request then reads only what is new, not every row a machine ever pushed."""
        from gpurent.store import select_rows
        from gpurent.store.samples import count_rows

        with self._metered_lock:
            total = count_rows(conn, machine=plan.name)
            known = self._metered.get(plan.name)
            if known is not None and known.plan == plan and known.last_s is not None:
                newer = [
                    r
                    for r in select_rows(conn, machine=plan.name, since_s=known.last_s)
                    if float(r["timestamp"]) > known.last_s
                ]
                if known.rows + len(newer) == total:
                    known.add(newer)
                    return known.history()
            price = plan.price()
            fresh = _Metered(plan=plan, meter=None if price is None else CostMeter(price))
            fresh.add(select_rows(conn, machine=plan.name))
            self._metered[plan.name] = fresh
            return fresh.history()

    # --- spend tracking -------------------------------------------------------------------

    def _seed(self, conn: Any, machine: Any) -> None:
        from gpurent.store import select_rows

        plan = plan_of(machine)
        rows = select_rows(conn, machine=machine.name) if plan.price() is not None else []
        self.tracker.start(plan, cost_samples(rows))

    def _seed_scopes(self, conn: Any, budgets: list[Any]) -> None:
        """Start every machine of the budgets' jobs and projects (once per scope: a machine
        registered later resets it), so their spend counts all of them."""
        from gpurent.store.fleet import list_machines

        todo = {(b.scope, b.name) for b in budgets} - self._seeded_scopes
        if not todo:
            return
        for m in list_machines(conn):
            if not self.tracker.knows(m.name) and (
                ("job", m.job) in todo or ("project", m.project) in todo
            ):
                self._seed(conn, m)
        self._seeded_scopes |= todo

    def budgets_changed(self) -> None:
        """A budget was added: read them again on the next ingest."""
        with self.lock:
            self._budgets = None
            self.version += 1

    def _budgets_for(self, conn: Any, job: str, project: str) -> list[Any]:
        from gpurent.store.fleet import list_budgets

        if self._budgets is None:
            self._budgets = list_budgets(conn)
        return [
            b
            for b in self._budgets
            if (b.scope == "job" and job and b.name == job)
            or (b.scope == "project" and project and b.name == project)
        ]

    def machine_for_token(self, token: str) -> Any:
        """The machine `token` belongs to, or None. Found ones are remembered by the token's
        SHA-256 (no one can aim at a prefix of it); a registration clears what is remembered."""
        from gpurent.store.fleet import machine_for_token, token_digest

        digest = token_digest(token)
        known = self._by_digest.get(digest)
        if known is not None:
            return known
        with self.engine.connect() as conn:
            machine = machine_for_token(conn, token)
        if machine is not None:
            with self.lock:
                self._by_digest[digest] = machine
        return machine

    def machine_added(self) -> None:
        """A new machine was registered: budgets count it from the next ingest on."""
        with self.lock:
            self._by_digest = {}
            self._seeded_scopes = set()
            self.version += 1

    def forget(self) -> None:
        """Drop what is remembered (a machine was registered): re-read on next use."""
        with self.lock:
            self._by_digest = {}
            self.tracker = SpendTracker()
            self._seeded_scopes = set()
            self._budgets = None
            self.version += 1

    def ingest(self, machine: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Store `machine`'s rows, add them to its running spend and fire the budget thresholds
        they cross; returns the alerts fired (their webhooks are sent later, by a thread).

        A machine is seeded from the store before its rows are written (so nothing counts
        twice); writes run side by side on PostgreSQL and one at a time on SQLite (one writer)."""
        from gpurent.store import insert_rows

        for row in rows:
            row["machine"] = machine.name
        engine = self.engine
        with self.lock:
            if not self.tracker.knows(machine.name):
                with engine.connect() as conn:
                    self._seed(conn, machine)
        writes = self.lock if engine.dialect.name == "sqlite" else contextlib.nullcontext()
        with writes, engine.begin() as conn:
            insert_rows(conn, rows)
        with self.lock:
            self.version += 1
            if self.tracker.metered(machine.name):
                self.tracker.add(machine.name, cost_samples(rows))
            with engine.connect() as conn:
                budgets = self._budgets_for(conn, machine.job, machine.project)
                if not budgets:
                    return []
                self._seed_scopes(conn, budgets)
            fired = self._check(budgets)
            self.version += 1  # the alerts just fired
            return fired

    def _fired_of(self, conn: Any, budget_id: int) -> set[float]:
        from gpurent.store.fleet import list_alerts

        fired = self._fired.get(budget_id)
        if fired is None:
            fired = self._fired[budget_id] = {a.threshold for a in list_alerts(conn, budget_id)}
        return fired

    def _check(self, budgets: list[Any]) -> list[dict[str, Any]]:
        """Fire the thresholds the budgets' spend reached (called with the lock held)."""
        from gpurent.store.fleet import add_alert

        out: list[dict[str, Any]] = []
        now_s = self.clock()
        due = []
        with self.engine.connect() as conn:
            for b in budgets:
                spend = (
                    self.tracker.spent_usd(job=b.name)
                    if b.scope == "job"
                    else self.tracker.spent_usd(project=b.name)
                )
                due += [
                    (b, t, spend)
                    for t in crossed(b.thresholds, b.limit_usd, spend, self._fired_of(conn, b.id))
                ]
        if not due:
            return out
        hooks: list[_Webhook] = []
        with self.engine.begin() as conn:
            for b, t, spend in due:
                self._fired[b.id].add(t)
                alert = add_alert(
                    conn,
                    budget_id=b.id,
                    threshold=t,
                    spend_usd=spend,
                    limit_usd=b.limit_usd,
                    now_s=now_s,
                )
                if alert is None:  # another server fired it
                    continue
                rule = BudgetRule(
                    scope=b.scope, name=b.name, limit_usd=b.limit_usd, thresholds=b.thresholds
                )
                payload = webhook_payload(rule, threshold=t, spend_usd=spend, fired_s=now_s)
                out.append(payload)
                if b.webhook_url:
                    hooks.append(_Webhook(alert.id, b.webhook_url, payload))
        for hook in hooks:  # once the alerts are committed
            self._enqueue(hook)
        return out

    # --- webhooks -------------------------------------------------------------------------

    def _enqueue(self, hook: _Webhook) -> None:
        try:
            self._webhooks.put_nowait(hook)
        except queue.Full:
            return  # the alert stays recorded with an empty webhook state
        if self._sender is None or not self._sender.is_alive():
            self._sender = threading.Thread(
                target=self._send_loop, name="gpurent-webhooks", daemon=True
            )
            self._sender.start()

    def _send_loop(self) -> None:
        while True:
            hook = self._webhooks.get()
            state, attempts = self._deliver(hook)
            try:
                from gpurent.store.fleet import set_webhook_state

                with self.lock, self.engine.begin() as conn:
                    set_webhook_state(conn, hook.alert_id, state=state, attempts=attempts)
                    self.version += 1
            except Exception:
                pass
            finally:
                self._webhooks.task_done()

    def _deliver(self, hook: _Webhook) -> tuple[str, int]:
        """POST the payload, retried up to WEBHOOK_ATTEMPTS times on failure or non-2xx."""
        body = json.dumps(hook.payload).encode()
        problem = ""
        for attempt in range(1, WEBHOOK_ATTEMPTS + 1):
            try:
                reply = self._http.post(
                    hook.url,
                    timeout_s=WEBHOOK_TIMEOUT_S,
                    max_bytes=64 * 1024,
                    headers={"Content-Type": "application/json", "User-Agent": "gpurent"},
                    body=body,
                    deadline_s=WEBHOOK_TIMEOUT_S * 2,
                )
            except HttpError as exc:
                problem = f"failed: {exc.reason}"
            else:
                if reply.ok:
                    return f"sent HTTP {reply.status}", attempt
                problem = f"failed: HTTP {reply.status}"
            if attempt < WEBHOOK_ATTEMPTS:
                time.sleep(self._backoff_s * attempt)
        return problem, WEBHOOK_ATTEMPTS

    def wait_webhooks(self) -> None:
        """Block until every queued webhook was tried (tests, shutdown)."""
        self._webhooks.join()

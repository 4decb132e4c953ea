"""The fleet tables of `gpurent serve`: machines that push samples, budgets, and fired alerts.

They live on the same `metadata` as the sample tables; revision 0003 of the migrations makes
them (`create_schema` upgrades a store to the head). A machine's push token is never stored:
only its SHA-256, compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, fields
from typing import Any, TypeVar

import sqlalchemy as sa

from gpurent.store.samples import metadata

TOKEN_PREFIX = "gpm_"

machines_table = sa.Table(
    "fleet_machines",
    metadata,
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
    sa.Column("job", sa.String(128), nullable=False, server_default=""),
    sa.Column("project", sa.String(128), nullable=False, server_default=""),
    sa.Column("price_usd_per_hour", sa.Float, nullable=True),
    sa.Column("gpu_count", sa.Integer, nullable=True),
    sa.Column("plan_hours", sa.Float, nullable=True),
    sa.Column("plan_cost_usd", sa.Float, nullable=True),
    sa.Column("created_s", sa.Float, nullable=False),
)

budgets_table = sa.Table(
    "fleet_budgets",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("scope", sa.String(16), nullable=False),
    sa.Column("name", sa.String(128), nullable=False),
    sa.Column("limit_usd", sa.Float, nullable=False),
    sa.Column("thresholds", sa.String(256), nullable=False),  # "0.5,0.8,1"
    sa.Column("webhook_url", sa.String(2048), nullable=False, server_default=""),
    sa.Column("created_s", sa.Float, nullable=False),
    sa.UniqueConstraint("scope", "name", name="uq_fleet_budgets_scope_name"),
)

alerts_table = sa.Table(
    "fleet_alerts",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("budget_id", sa.Integer, sa.ForeignKey("fleet_budgets.id"), nullable=False),
    sa.Column("threshold", sa.Float, nullable=False),
    sa.Column("spend_usd", sa.Float, nullable=False),
    sa.Column("limit_usd", sa.Float, nullable=False),
    sa.Column("fired_s", sa.Float, nullable=False),
    sa.Column("webhook_state", sa.String(256), nullable=False, server_default=""),
    sa.Column("webhook_attempts", sa.Integer, nullable=False, server_default="0"),
    # one alert per budget and threshold, however many servers or requests race for it
    sa.UniqueConstraint("budget_id", "threshold", name="uq_fleet_alerts_budget_threshold"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Machine:
    """A registered machine: its job and project, price, GPU count and the plan it runs."""

    name: str
    job: str = ""
    project: str = ""
    price_usd_per_hour: float | None = None
    gpu_count: int | None = None
    plan_hours: float | None = None
    plan_cost_usd: float | None = None
    created_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """A spending limit on a job's or a project's machines, with its alert thresholds."""

    id: int
    scope: str  # "job" or "project"
    name: str
    limit_usd: float
    thresholds: tuple[float, ...]  # shares of the limit, ascending
    webhook_url: str
    created_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Alert:
    """A threshold of a budget crossed: when, at what spend, and what became of its webhook."""

    id: int
    budget_id: int
    threshold: float
    spend_usd: float
    limit_usd: float
    fired_s: float
    webhook_state: str  # "" none or pending, "sent HTTP 200", "failed: ..."
    webhook_attempts: int


_Row = TypeVar("_Row", Machine, Budget, Alert)


def token_digest(token: str) -> str:
    """The SHA-256 hex digest of a token (what the store keeps)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A fresh machine token (256 random bits, URL-safe)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _from_row(cls: type[_Row], row: Any, **computed: Any) -> _Row:
    """A `cls` (one of this module's record dataclasses) from a result row: each field from
    the column of its name, unless `computed` gives it."""
    m = row._mapping
    return cls(
        **{f.name: computed[f.name] if f.name in computed else m[f.name] for f in fields(cls)}
    )


def _machine(row: Any) -> Machine:
    return _from_row(Machine, row)


def add_machine(conn: Any, machine: Machine, *, replace: bool = False) -> str | None:
    """Register `machine` and return its new token (shown once); None when the name is taken
    and `replace` is False. With `replace`, an existing machine gets the new fields and token."""
    token = new_token()
    values = {
        "name": machine.name,
        "token_sha256": token_digest(token),
        "job": machine.job,
        "project": machine.project,
        "price_usd_per_hour": machine.price_usd_per_hour,
        "gpu_count": machine.gpu_count,
        "plan_hours": machine.plan_hours,
        "plan_cost_usd": machine.plan_cost_usd,
        "created_s": machine.created_s,
    }
    exists = conn.execute(
        sa.select(machines_table.c.name).where(machines_table.c.name == machine.name)
    ).first()
    if exists is not None:
        if not replace:
            return None
        conn.execute(
            machines_table.update().where(machines_table.c.name == machine.name).values(**values)
        )
        return token
    conn.execute(machines_table.insert().values(**values))
    return token


def machine_for_token(conn: Any, token: str) -> Machine | None:
    """The machine whose token is `token`, or None. The token's SHA-256 is looked up (an
    attacker controls no prefix of it) and compared again in constant time."""
    digest = token_digest(token)
    row = conn.execute(
        sa.select(machines_table).where(machines_table.c.token_sha256 == digest)
    ).first()
    stored = str(row._mapping["token_sha256"]) if row is not None else "0" * 64
    if row is None or not hmac.compare_digest(digest.encode(), stored.encode()):
        return None
    return _machine(row)


def list_machines(conn: Any) -> list[Machine]:
    """Every registered machine, by name."""
    query = sa.select(machines_table).order_by(machines_table.c.name)
    return [_machine(row) for row in conn.execute(query)]


def get_machine(conn: Any, name: str) -> Machine | None:
    """The machine called `name`, or None."""
    row = conn.execute(sa.select(machines_table).where(machines_table.c.name == name)).first()
    return _machine(row) if row is not None else None


def _insert_once(
    conn: Any, table: sa.Table, unique: dict[str, Any], values: dict[str, Any]
) -> Any | None:
    """Insert a row unless one with the `unique` column values exists (the table's unique
    constraint still settles a race); the stored row, or None when it existed."""
    where = [table.c[k] == v for k, v in unique.items()]
    if conn.execute(sa.select(table.c.id).where(*where)).first() is not None:
        return None
    key = conn.execute(table.insert().values(**unique, **values)).inserted_primary_key[0]
    return conn.execute(sa.select(table).where(table.c.id == key)).one()


def _budget(row: Any) -> Budget:
    stored = str(row._mapping["thresholds"])
    return _from_row(Budget, row, thresholds=tuple(float(t) for t in stored.split(",") if t))


def add_budget(
    conn: Any,
    *,
    scope: str,
    name: str,
    limit_usd: float,
    thresholds: tuple[float, ...],
    webhook_url: str,
    created_s: float,
) -> Budget | None:
    """Store a budget; None when one already exists for that scope and name."""
    row = _insert_once(
        conn,
        budgets_table,
        {"scope": scope, "name": name},
        {
            "limit_usd": limit_usd,
            "thresholds": ",".join(repr(t) for t in thresholds),
            "webhook_url": webhook_url,
            "created_s": created_s,
        },
    )
    return None if row is None else _budget(row)


def list_budgets(conn: Any) -> list[Budget]:
    """Every budget, by scope and name."""
    query = sa.select(budgets_table).order_by(budgets_table.c.scope, budgets_table.c.name)
    return [_budget(row) for row in conn.execute(query)]


def _alert(row: Any) -> Alert:
    return _from_row(Alert, row)


def add_alert(
    conn: Any, *, budget_id: int, threshold: float, spend_usd: float, limit_usd: float, now_s: float
) -> Alert | None:
    """Record that `threshold` of budget `budget_id` was crossed; None when it already was."""
    row = _insert_once(
        conn,
        alerts_table,
        {"budget_id": budget_id, "threshold": threshold},
        {
            "spend_usd": spend_usd,
            "limit_usd": limit_usd,
            "fired_s": now_s,
            "webhook_state": "",
            "webhook_attempts": 0,
        },
    )
    return None if row is None else _alert(row)


def list_alerts(conn: Any, budget_id: int | None = None) -> list[Alert]:
    """The alerts fired (of one budget when given), oldest first."""
    query = sa.select(alerts_table).order_by(alerts_table.c.id)
    if budget_id is not None:
        query = query.where(alerts_table.c.budget_id == budget_id)
    return [_alert(row) for row in conn.execute(query)]


def set_webhook_state(conn: Any, alert_id: int, *, state: str, attempts: int) -> None:
    """Record what became of an alert's webhook call."""
    conn.execute(
        alerts_table.update()
        .where(alerts_table.c.id == alert_id)
        .values(webhook_state=state[:256], webhook_attempts=attempts)
    )

"""The fleet's machines and their samples: POST/GET /api/machines, POST /api/monitor/push (each
machine's own token), GET /api/spend, /api/monitor/series and /api/monitor/findings."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from gpurent.errors import InputError, NotFoundError
from gpurent.inputs import values as v
from gpurent.monitor.budget import check_name
from gpurent.monitor.push import MAX_PUSH_ROWS, PUSH_PATH, TOKEN_HEADER, check_pushed_rows
from gpurent.monitor.rules import diagnose
from gpurent.monitor.sample import from_rows
from gpurent.monitor.spend import DEFAULT_WINDOW_S, cost_samples, group_spend, spend_from_meter
from gpurent.report.jsonable import to_jsonable
from gpurent.server.fleet_state import Fleet, plan_of
from gpurent.server.params import check, required

router = APIRouter(prefix="/api", tags=["monitor"])
NAME = 128
MAX_WINDOW_S = 30 * 86400.0
MAX_POINTS = 5000


class ErrorReply(BaseModel):
    """An error: one line."""

    error: str


class PlanIn(BaseModel):
    """The plan a machine's job was launched from (gpurent plan: its hours and cost)."""

    model_config = ConfigDict(extra="forbid")

    hours: float = Field(description="Hours the plan expects the job to run.")
    cost_usd: float = Field(description="What the plan expects the whole job to cost, USD.")


class MachineIn(BaseModel):
    """A machine to register: its name and what it runs; the token comes back once."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=NAME, description="1-128 of letters, digits and . _ : -")
    job: str | None = Field(None, max_length=NAME, description="The job it runs.")
    project: str | None = Field(None, max_length=NAME, description="The project it bills to.")
    price_usd_per_hour: float | None = Field(None, description="The instance's price, USD/h.")
    gpu_count: int | None = Field(None, description="GPUs on the instance (default: seen).")
    plan: PlanIn | None = None


class MachineOut(BaseModel):
    """A registered machine (never its token)."""

    name: str
    job: str
    project: str
    price_usd_per_hour: float | None
    gpu_count: int | None
    plan_hours: float | None
    plan_cost_usd: float | None
    created_s: float


class Registered(BaseModel):
    """The machine and its push token, shown this once (the server keeps only its SHA-256)."""

    machine: MachineOut
    token: str
    push_path: str
    token_header: str


class MachineList(BaseModel):
    """Every registered machine."""

    machines: list[MachineOut]


class PushReply(BaseModel):
    """What the push stored, and the budget thresholds it crossed."""

    machine: str
    rows: int
    alerts: list[dict[str, Any]]


class MachineSpendOut(BaseModel):
    """One machine's money (USD amounts null without a registered price)."""

    machine: str
    job: str
    project: str
    price_usd_per_hour: float | None
    samples: int
    first_s: float | None
    last_s: float | None
    elapsed_s: float
    spent_usd: float | None
    idle_wasted_usd: float | None
    underused_wasted_usd: float | None
    burn_usd_per_hour: float | None
    window_s: float
    plan_hours: float | None
    plan_cost_usd: float | None
    projected_cost_usd: float | None


class GroupSpendOut(BaseModel):
    """The machines of one job or project together."""

    scope: str
    name: str
    machines: list[str]
    spent_usd: float
    idle_wasted_usd: float
    underused_wasted_usd: float
    burn_usd_per_hour: float
    projected_cost_usd: float | None


class SpendOut(BaseModel):
    """Spend per machine, per job and per project, as of `as_of_s` (Unix seconds)."""

    as_of_s: float
    window_s: float
    machines: list[MachineSpendOut]
    jobs: list[GroupSpendOut]
    projects: list[GroupSpendOut]


class GpuSeries(BaseModel):
    """One GPU over time: parallel lists, one value per sample (null: not read)."""

    gpu: int
    name: str
    timestamp_s: list[float]
    activity_pct: list[float | None]
    gpu_busy_pct: list[float | None]
    power_w: list[float | None]
    memory_used_mib: list[float | None]
    memory_total_mib: list[float | None]


class SeriesOut(BaseModel):
    """A machine's GPUs over [since_s, until_s]."""

    machine: str
    since_s: float | None
    until_s: float | None
    gpus: list[GpuSeries]


class FindingsOut(BaseModel):
    """The diagnosis over a machine's last `window_s` seconds of samples, as `gpurent monitor
    --json` writes it under `diagnosis`."""

    machine: str
    window_s: float
    diagnosis: dict[str, Any] | None


def fleet(request: Request) -> Fleet:
    """The app's fleet state."""
    state: Fleet = request.app.state.fleet
    return state


def _machine_out(m: Any) -> MachineOut:
    return MachineOut(
        name=m.name,
        job=m.job,
        project=m.project,
        price_usd_per_hour=m.price_usd_per_hour,
        gpu_count=m.gpu_count,
        plan_hours=m.plan_hours,
        plan_cost_usd=m.plan_cost_usd,
        created_s=m.created_s,
    )


def checked_machine(req: MachineIn, now_s: float) -> Any:
    """The store's Machine for a registration request, checked as the CLI checks its flags."""
    from gpurent.store.fleet import Machine

    plan = req.plan
    return Machine(
        name=check_name(req.name, "name"),
        job=check_name(req.job, "job") if req.job else "",
        project=check_name(req.project, "project") if req.project else "",
        price_usd_per_hour=check(req.price_usd_per_hour, "price_usd_per_hour", v.non_negative),
        gpu_count=check(req.gpu_count, "gpu_count", v.bounded(v.positive_int, most=1024)),
        plan_hours=None
        if plan is None
        else check(plan.hours, "plan.hours", v.bounded(v.positive, most=v.MAX_HOURS)),
        plan_cost_usd=None
        if plan is None
        else check(plan.cost_usd, "plan.cost_usd", v.non_negative),
        created_s=now_s,
    )


@router.post(
    "/machines",
    summary="Register a machine that pushes samples; its token is returned once",
    status_code=201,
    responses={409: {"model": ErrorReply}, 422: {"model": ErrorReply}},
)
def register_machine(req: MachineIn, request: Request) -> Registered:
    """Register a machine (409 when the name is taken). The reply holds its push token, shown
    only here: send it as `X-Gpurent-Machine-Token` to POST /api/monitor/push."""
    from gpurent.store.fleet import add_machine

    f = fleet(request)
    machine = checked_machine(req, f.clock())
    with f.lock, f.engine.begin() as conn:
        token = add_machine(conn, machine)
    f.machine_added()
    if token is None:
        raise HTTPException(
            409, f"machine {machine.name!r} is registered already; pick another name"
        )
    return Registered(
        machine=_machine_out(machine), token=token, push_path=PUSH_PATH, token_header=TOKEN_HEADER
    )


@router.get("/machines", summary="The registered machines (never their tokens)")
def machines(request: Request) -> MachineList:
    """Every registered machine, by name."""
    from gpurent.store.fleet import list_machines

    with fleet(request).engine.connect() as conn:
        return MachineList(machines=[_machine_out(m) for m in list_machines(conn)])


PUSH_BODY = {
    "type": "object",
    "required": ["rows"],
    "properties": {
        "machine": {"type": "string", "maxLength": NAME},
        "rows": {
            "type": "array",
            "maxItems": MAX_PUSH_ROWS,
            "items": {"type": "object", "description": "a sample row (docs/monitor.md)"},
        },
    },
}


def _unauthorised() -> HTTPException:
    return HTTPException(
        401,
        f"missing or wrong machine token: send it as {TOKEN_HEADER} (from POST /api/machines)",
    )


@router.post(
    "/monitor/push",
    summary="A machine's sample rows (its own token, not the server's)",
    openapi_extra={
        "requestBody": {"required": True, "content": {"application/json": {"schema": PUSH_BODY}}}
    },
    responses={
        401: {"model": ErrorReply},
        403: {"model": ErrorReply},
        413: {"model": ErrorReply},
        422: {"model": ErrorReply},
    },
)
async def push(
    request: Request,
    x_gpurent_machine_token: str | None = Header(None, description="The machine's token."),
) -> PushReply:
    """Store a batch of `gpurent monitor --push` rows for the machine the token names, then
    check the budgets of its job and project. 401 without the machine's token, 413 over
    2,000 rows, 422 for a row that is not a sample row."""
    f = fleet(request)
    token = x_gpurent_machine_token or ""
    if not token:
        raise _unauthorised()
    body = await request.body()  # buffered by the guard already, within its size limit
    machine, alerts, count = await run_in_threadpool(_push, f, token, body)
    return PushReply(machine=machine, rows=count, alerts=alerts)


def _push(f: Fleet, token: str, body: bytes) -> tuple[str, list[dict[str, Any]], int]:
    """The push's work, off the event loop: the token first, then the body, then the store."""
    machine = f.machine_for_token(token)
    if machine is None:
        raise _unauthorised()
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise InputError('the body is not JSON; send {"rows": [...]}') from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise InputError('the body must be {"rows": [sample rows], "machine": name}')
    if set(doc) - {"rows", "machine"}:
        raise InputError("the body may hold only 'rows' and 'machine'")
    named = doc.get("machine")
    if named is not None and named != machine.name:
        raise HTTPException(403, "this token belongs to another machine; check --machine")
    if len(doc["rows"]) > MAX_PUSH_ROWS:
        raise HTTPException(
            413, f"{len(doc['rows'])} rows in one push; send at most {MAX_PUSH_ROWS}"
        )
    rows = check_pushed_rows(doc["rows"])
    return machine.name, f.ingest(machine, rows), len(rows)


def _window(window_s: float) -> float:
    return required(window_s, "window_s", v.bounded(v.positive, most=MAX_WINDOW_S))


def spend_of_fleet(f: Fleet, window_s: float) -> SpendOut:
    """Every machine's spend from the store, and its jobs' and projects'. Each machine's
    history is metered incrementally (`Fleet.metered_history`); only the last `window_s` of
    samples is read for the burn rate."""
    from gpurent.store import select_rows
    from gpurent.store.fleet import list_machines

    now_s = f.clock()
    with f.engine.connect() as conn:
        spends = []
        for m in list_machines(conn):
            plan = plan_of(m)
            recent = cost_samples(select_rows(conn, machine=m.name, since_s=now_s - window_s))
            spends.append(
                spend_from_meter(
                    plan,
                    f.metered_history(conn, plan),
                    recent,
                    now_s=now_s,
                    window_s=window_s,
                )
            )
    doc = to_jsonable(
        {
            "as_of_s": now_s,
            "window_s": window_s,
            "machines": spends,
            "jobs": group_spend("job", spends),
            "projects": group_spend("project", spends),
        }
    )
    return SpendOut.model_validate(doc)


@router.get("/spend", summary="Spent, burn rate, idle money and projected cost per machine and job")
def spend(
    request: Request,
    window_s: float = Query(DEFAULT_WINDOW_S, description="Burn-rate window, seconds."),
) -> SpendOut:
    """Money per machine (from its stored samples at its registered price), summed per job and
    per project (docs/serve.md "Spend")."""
    return spend_of_fleet(fleet(request), _window(window_s))


def _known_machine(conn: Any, name: str) -> Any:
    from gpurent.store.fleet import get_machine, list_machines

    m = get_machine(conn, name)
    if m is None:
        raise NotFoundError("machine", name[:NAME], [x.name for x in list_machines(conn)])
    return m


def _series(rows: list[dict[str, Any]], max_points: int) -> list[GpuSeries]:
    by_gpu: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("gpu") is not None:
            by_gpu.setdefault(int(r["gpu"]), []).append(r)
    out: list[GpuSeries] = []
    for gpu in sorted(by_gpu):
        rs = by_gpu[gpu]
        step = max(1, -(-len(rs) // max_points))
        rs = rs[::step]
        out.append(
            GpuSeries(
                gpu=gpu,
                name=str(rs[-1].get("gpu_name") or ""),
                timestamp_s=[float(r["timestamp"]) for r in rs],
                activity_pct=[
                    r["sm_util_pct"] if r.get("sm_util_pct") is not None else r.get("gpu_busy_pct")
                    for r in rs
                ],
                gpu_busy_pct=[r.get("gpu_busy_pct") for r in rs],
                power_w=[r.get("power_w") for r in rs],
                memory_used_mib=[r.get("memory_used_mib") for r in rs],
                memory_total_mib=[r.get("memory_total_mib") for r in rs],
            )
        )
    return out


@router.get(
    "/monitor/series",
    summary="Utilisation, power and memory per GPU over time (for charts)",
    responses={404: {"model": ErrorReply}},
)
def series(
    request: Request,
    machine: str = Query(..., max_length=NAME, description="A registered machine."),
    since: float | None = Query(None, description="Unix seconds; default: 15 min before the last."),
    until: float | None = Query(None, description="Unix seconds; default: the last sample."),
    max_points: int = Query(1000, description="At most this many points per GPU (1-5000)."),
) -> SeriesOut:
    """The machine's GPUs over a window, thinned to `max_points` per GPU."""
    since_s = check(since, "since", v.finite)
    until_s = check(until, "until", v.finite)
    points = required(max_points, "max_points", v.bounded(v.positive_int, most=MAX_POINTS))
    return series_of(fleet(request), machine, since_s, until_s, points)


def series_of(
    f: Fleet, machine: str, since_s: float | None, until_s: float | None, points: int
) -> SeriesOut:
    """A machine's GPUs from the store (the window: 15 min before its last sample by default);
    the series endpoint's reply and the monitor page's first chart."""
    import sqlalchemy as sa

    from gpurent.store import select_rows
    from gpurent.store.samples import samples_table

    with f.engine.connect() as conn:
        m = _known_machine(conn, machine)
        if since_s is None:
            last = conn.execute(
                sa.select(sa.func.max(samples_table.c.timestamp)).where(
                    samples_table.c.machine == m.name
                )
            ).scalar()
            since_s = None if last is None else float(last) - 900.0
        rows = select_rows(conn, since_s=since_s, until_s=until_s, machine=m.name)
    return SeriesOut(machine=m.name, since_s=since_s, until_s=until_s, gpus=_series(rows, points))


@router.get(
    "/monitor/findings",
    summary="The monitor's diagnosis over a machine's stored window",
    responses={404: {"model": ErrorReply}},
)
def findings(
    request: Request,
    machine: str = Query(..., max_length=NAME, description="A registered machine."),
    window_s: float = Query(DEFAULT_WINDOW_S, description="Seconds before its last sample."),
) -> FindingsOut:
    """`gpurent.monitor.rules.diagnose` over the machine's samples of the last `window_s`
    seconds (null when it has none), the `diagnosis` document of `gpurent monitor --json`."""
    window = _window(window_s)
    name, diagnosis = diagnosis_of(fleet(request), machine, window)
    doc = to_jsonable(diagnosis) if diagnosis is not None else None
    return FindingsOut(machine=name, window_s=window, diagnosis=doc)


def diagnosis_of(f: Fleet, machine: str, window_s: float) -> tuple[str, Any]:
    """The machine's name and the diagnosis of its last `window_s` seconds (None: no samples)."""
    import sqlalchemy as sa

    from gpurent.store import select_rows
    from gpurent.store.samples import samples_table

    with f.engine.connect() as conn:
        m = _known_machine(conn, machine)
        last = conn.execute(
            sa.select(sa.func.max(samples_table.c.timestamp)).where(
                samples_table.c.machine == m.name
            )
        ).scalar()
        rows = (
            []
            if last is None
            else select_rows(conn, since_s=float(last) - window_s, machine=m.name)
        )
    samples = from_rows(rows)
    return m.name, diagnose(samples) if samples else None

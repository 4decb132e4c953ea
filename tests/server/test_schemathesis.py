"""schemathesis over /openapi.json against the running app on 127.0.0.1: no 500 and no reply
that breaks its documented schema, for a bounded number of generated requests per operation.

schemathesis's pytest plugin does not run under this pytest, so the test drives its Python API:
one hypothesis run per operation of the schema the app serves."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis (the dev extra) is missing")

from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import response_schema_conformance  # noqa: E402

CHECKS = [not_a_server_error, response_schema_conformance]
EXAMPLES = 8  # per operation; the whole run stays well under 30 s on 2 cores


def test_the_api_keeps_its_schema(base_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    paths = {op.path for op in operations}
    assert {
        "/api/health",
        "/api/gpus",
        "/api/offers",
        "/api/estimate",
        "/api/plan",
        "/api/pricing/compare",
        "/api/spot/simulate",
        "/api/spot/zones",
        "/api/spot/history",
        "/api/estimate/serve",
        "/api/plan/serve",
        "/api/bench/results",
        "/api/vendors/score",
        "/api/machines",
        "/api/monitor/push",
        "/api/monitor/series",
        "/api/monitor/findings",
        "/api/spend",
        "/api/budgets",
        "/api/budgets/rules",
    } <= paths
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def run(case: Any) -> None:
            case.call_and_validate(base_url=base_url, checks=CHECKS, timeout=30)

        run()

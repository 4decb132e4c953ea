"""Whatever a browser (or anyone) sends to the pages' forms, the answer is a page: 2xx, or a
4xx with one error line; never a 500 or a traceback."""

from __future__ import annotations

import re

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ERROR = re.compile(r'<p class="error" role="alert">([^<]*)</p>')
TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", "nan", "inf", "-1", "0", "1e400", "H100", "aws", "spot", "llama-lora"]),
)
FUZZ = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def _is_a_page(reply: httpx.Response) -> None:
    assert reply.status_code < 500, reply.text[:300]
    assert "Traceback" not in reply.text
    assert reply.headers["content-type"].startswith("text/html")
    if reply.status_code >= 400:
        assert len(ERROR.findall(reply.text)) == 1


@FUZZ
@given(gpu=TEXT, provider=TEXT, region=TEXT, pricing=TEXT, max_price=TEXT)
def test_offers_filters(
    base_url: str, gpu: str, provider: str, region: str, pricing: str, max_price: str
) -> None:
    params = {
        "gpu": gpu,
        "provider": provider,
        "region": region,
        "pricing": pricing,
        "max_price": max_price,
    }
    _is_a_page(httpx.get(f"{base_url}/offers", params=params, timeout=30))


@FUZZ
@given(job_hours=TEXT, deadline_hours=TEXT, changeover_hours=TEXT, price_ratio=TEXT)
def test_spot_job(
    base_url: str, job_hours: str, deadline_hours: str, changeover_hours: str, price_ratio: str
) -> None:
    params = {
        "job_hours": job_hours,
        "deadline_hours": deadline_hours,
        "changeover_hours": changeover_hours,
        "price_ratio": price_ratio,
    }
    _is_a_page(httpx.get(f"{base_url}/spot", params=params, timeout=60))


@FUZZ
@given(
    preset=TEXT,
    model=TEXT,
    task=TEXT,
    tokens=TEXT,
    gpus=TEXT,
    objective=TEXT,
    deadline=TEXT,
    pricing=st.lists(TEXT, max_size=3),
)
def test_planner_form(
    base_url: str,
    preset: str,
    model: str,
    task: str,
    tokens: str,
    gpus: str,
    objective: str,
    deadline: str,
    pricing: list[str],
) -> None:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/plan").text)
        assert csrf is not None
        form = {
            "csrf": csrf.group(1),
            "preset": preset,
            "model": model,
            "task": task,
            "tokens": tokens,
            "gpus": gpus,
            "objective": objective,
            "deadline_hours": deadline,
            "pricing": pricing,
        }
        _is_a_page(client.post("/plan", data=form))

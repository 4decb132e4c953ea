"""`vendors score` against generated malformed input (the CLI fuzz rules of tests/cli_fuzz.py):
exit 0 with JSON that parses and finite numbers, or one `error:` line and exit 1/2/3."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import cli_fuzz as fz
from tests.vendors.vendors_evidence import write_bench, write_netcheck

FUZZ = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
PROVIDER_KEYS = [
    "name", "catalog", "gpu_usd_per_hour", "scale_out_s", "scale_out_file", "bench", "netcheck",
    "hidden_costs", "support", "sla", "contract",
]  # fmt: skip
VALUES = st.one_of(
    st.sampled_from(
        ['"A"', '"aws"', "nan", "inf", "-1", "0", "3.7", "1e308", "true", "[]", "[0, -1]",
         '[1e308, 1]', '{ H100 = "bench.json" }', '{ H100 = "net.json" }', '{ H100 = 3 }',
         '[{ file = "net.json" }]', '[{ file = "bench.json" }]', '[{ compliance = 2 }]',
         '{ always_24x7 = true, gpu_experts = 1, response_time_h = 0 }', '"net.json"',
         '{ tier = [{ below_pct = 101, credit_pct = 5 }] }', '{ egress_usd_per_gb = 1 }',
         '{ data_destruction = "" }', '"t.txt"', '"/dev/zero"']
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)  # fmt: skip


def vendors_texts() -> st.SearchStrategy[str]:
    table = st.dictionaries(st.sampled_from(PROVIDER_KEYS), VALUES, max_size=6)

    def render(tables: list[dict[str, str]], weights: str) -> str:
        out = [weights]
        for t in tables:
            out.append("[[provider]]")
            out += [f"{k} = {v}" for k, v in t.items()]
        return "\n".join(out) + "\n"

    weights = st.sampled_from(
        ["", "[weights]\nhardware = 0", "[weights]\nhardware = 1e308", "[weights]\ncost = -1",
         "[weights]\nhardware = 0\nnetwork = 0\nelasticity = 0\ncost = 0\nsupport = 0",
         "[job]\nhours = 1e308\ngpus = 1000000", "[job]\nhours = 0.001\ngpus = 1"]
    )  # fmt: skip
    return st.one_of(
        st.builds(render, st.lists(table, min_size=1, max_size=3), weights), st.text(max_size=60)
    )


@pytest.fixture(scope="module")
def work() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        write_bench(d / "bench.json", matmul=700.0, membw=3000.0)
        write_netcheck(d / "net.json", p50=10.0, compliance=None)
        (d / "t.txt").write_text("1e308\n0.5\n", encoding="utf-8")
        yield d


def _check(out: fz.Outcome) -> None:
    assert fz.problem(out) is None, fz.describe(out)
    if out.exit_code == 0 and "--json" in out.args:
        json.loads(out.stdout, parse_constant=fz._reject_constant)


def test_fuzzed_vendors_files(work: Path) -> None:
    target = fz.FileTarget("vendors-toml", ".toml", lambda p: [p], vendors_texts)
    counter = iter(range(10**9))

    @FUZZ
    @given(content=fz.file_contents(target))
    def check(content: tuple[str, bytes | str]) -> None:
        path = fz.write_input(target, content, work, next(counter))
        _check(fz.invoke(["vendors", "score", str(path), "--json"]))

    check()


def test_fuzzed_evidence_files(work: Path) -> None:
    vendors = work / "evidence.toml"
    vendors.write_text(
        '[[provider]]\nname = "A"\ngpu_usd_per_hour = 2\nbench = { H100 = "ev.json" }\n'
        '[[provider]]\nname = "B"\ngpu_usd_per_hour = 2\n[[provider.netcheck]]\nfile = "ev.json"\n',
        encoding="utf-8",
    )
    keys = ["kind", "schema_version", "latency_us", "compliance", "rdma", "hardware", "verdict"]
    texts = st.one_of(
        fz.json_texts(keys),
        st.builds(
            lambda lat, c: json.dumps(
                {"kind": "gpurent.vendors.netcheck", "schema_version": 1, "latency_us": lat,
                 "compliance": c}
            ),
            fz.JSON_VALUES,
            fz.JSON_VALUES,
        ),
    )  # fmt: skip

    @FUZZ
    @given(text=texts)
    def check(text: str) -> None:
        (work / "ev.json").write_text(text, encoding="utf-8")
        _check(fz.invoke(["vendors", "score", str(vendors), "--json"]))

    check()


def test_fuzzed_flags(work: Path) -> None:
    vendors = work / "flags.toml"
    vendors.write_text(
        '[[provider]]\nname = "A"\ngpu_usd_per_hour = 2\nscale_out_s = [100]\n'
        '[[provider]]\nname = "B"\ngpu_usd_per_hour = 3\nscale_out_s = [400]\n',
        encoding="utf-8",
    )
    numbers = fz.number_texts()
    flag_values = st.one_of(
        st.tuples(st.sampled_from(["--egress-gb", "--storage-gb"]), numbers),
        st.tuples(st.just("--job"), st.builds(lambda a, b: f"{a}x{b}", numbers, numbers)),
        st.tuples(st.just("--weights"), st.builds(lambda a: f"hardware={a},cost=1", numbers)),
        st.tuples(st.just("--slice"), st.text("abcdehiklnorstuw,", max_size=20)),
    )

    @FUZZ
    @given(flag_value=flag_values)
    def check(flag_value: tuple[str, str]) -> None:
        flag, value = flag_value
        _check(fz.invoke(["vendors", "score", str(vendors), "--json", flag, value]))

    check()

"""Bad vendors files and evidence files: one line on stderr naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_line_error, run_cli
from tests.vendors.vendors_evidence import write_bench, write_netcheck

GOOD_PROVIDER = """
[[provider]]
name = "A"
gpu_usd_per_hour = 2.0
scale_out_s = [200]
"""


def _score(tmp_path: Path, text: str, *args: str, name: str = "v.toml") -> tuple[int, str, str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return run_cli("vendors", "score", str(path), *args)


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (GOOD_PROVIDER + "colour = 'red'\n", ("v.toml: provider[0] (A)", "unknown key 'colour'")),
        (
            GOOD_PROVIDER + "scale_out = [1]\n",
            ("unknown key 'scale_out'", "did you mean scale_out_s"),
        ),
        (
            "[weights]\nhardwar = 0.5\n" + GOOD_PROVIDER,
            ("v.toml: weights", "unknown criterion 'hardwar'", "did you mean hardware"),
        ),
        ("[weights]\nhardware = -0.5\n" + GOOD_PROVIDER, ("v.toml: weights.hardware",)),
        ("name = 'x'\n", ("v.toml", "unknown key 'name'")),
        ("[job]\nhours = 10\n" + GOOD_PROVIDER, ("v.toml: job", "missing gpus")),
        ("", ("v.toml", "[[provider]]")),
        (GOOD_PROVIDER + GOOD_PROVIDER, ("provider name 'A' given twice",)),
        (GOOD_PROVIDER.replace("[200]", "[-3]"), ("scale_out_s[0]", "must be")),
        (
            GOOD_PROVIDER + "[provider.support]\nalways_24x7 = true\n",
            ("support", "missing gpu_experts"),
        ),
        (GOOD_PROVIDER + "[[provider.netcheck]]\ncompliance = 1.5\n", ("netcheck[0].compliance",)),
        (
            GOOD_PROVIDER + "[provider.hidden_costs]\negress_usd_per_gb = { moon = 1 }\n",
            ("egress_usd_per_gb", "unknown destination 'moon'"),
        ),
        (
            GOOD_PROVIDER + "[[provider.sla.tier]]\nbelow_pct = 99.9\n",
            ("sla.tier[0]", "missing credit_pct"),
        ),
        ("[[provider]\n", ("v.toml", "not valid TOML")),
    ],
)
def test_bad_vendors_files_are_one_line_errors(
    tmp_path: Path, text: str, needles: tuple[str, ...]
) -> None:
    one_line_error(*_score(tmp_path, text), *needles)


def test_a_missing_evidence_file_names_the_field(tmp_path: Path) -> None:
    text = GOOD_PROVIDER + 'bench = { H100 = "nope.json" }\n'
    one_line_error(
        *_score(tmp_path, text), "provider[0] (A).bench.H100", "no such file", "nope.json"
    )


def test_a_netcheck_file_given_as_a_bench_result_is_refused(tmp_path: Path) -> None:
    write_netcheck(tmp_path / "net.json", p50=10.0, compliance=0.9)
    text = GOOD_PROVIDER + 'bench = { H100 = "net.json" }\n'
    one_line_error(
        *_score(tmp_path, text),
        "bench.H100",
        "'gpurent.vendors.netcheck' file, not a `gpurent bench",
    )


def test_a_bench_result_given_as_a_netcheck_is_refused(tmp_path: Path) -> None:
    write_bench(tmp_path / "bench.json", matmul=700.0, membw=3000.0)
    text = GOOD_PROVIDER + '[[provider.netcheck]]\nfile = "bench.json"\n'
    one_line_error(
        *_score(tmp_path, text),
        "netcheck[0]",
        "bench.json is not a `gpurent vendors netcheck` result",
    )


def test_a_netcheck_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = write_netcheck(tmp_path / "net.json", p50=10.0, compliance=0.9)
    doc = json.loads(path.read_text())
    doc["schema_version"] = 7
    path.write_text(json.dumps(doc))
    text = GOOD_PROVIDER + '[[provider.netcheck]]\nfile = "net.json"\n'
    one_line_error(*_score(tmp_path, text), "schema_version 7")


def test_a_broken_bench_file_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('{"schema_version": 1}')
    text = GOOD_PROVIDER + 'bench = { H100 = ["b.json"] }\n'
    one_line_error(*_score(tmp_path, text), "bench.H100", "missing field")


def test_a_bad_timings_file_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("seconds\n120\nsoon\n")
    text = '[[provider]]\nname = "A"\nscale_out_file = "t.txt"\n'
    one_line_error(*_score(tmp_path, text), "scale_out_file", "t.txt:3", "'soon'")


def test_weights_not_summing_to_one_warn_or_are_refused_with_strict(tmp_path: Path) -> None:
    text = "[weights]\nhardware = 0.5\n" + GOOD_PROVIDER
    code, out, err = _score(tmp_path, text, "--json")
    assert code == 0, err
    assert err.startswith("warning: ") and "v.toml: weights: the weights sum to 1.2, not 1" in err
    doc = json.loads(out)
    assert sum(w for _, w in doc["scorecard"]["weights"]) == pytest.approx(1.0)
    one_line_error(*_score(tmp_path, text, "--strict"), "v.toml: weights", "sum to 1.2", "--strict")


def test_bad_flags_are_one_line_errors(tmp_path: Path) -> None:
    one_line_error(*_score(tmp_path, GOOD_PROVIDER, "--weights", "speed=1"), "--weights", "speed")
    one_line_error(*_score(tmp_path, GOOD_PROVIDER, "--job", "lots"), "--job must be HOURSxGPUS")
    one_line_error(*_score(tmp_path, GOOD_PROVIDER, "--slice", "hardware"), "--slice takes two")
    one_line_error(*_score(tmp_path, GOOD_PROVIDER, "--slice", "hardware,luck"), "--slice", "luck")
    one_line_error(*_score(tmp_path, GOOD_PROVIDER, "--json", "--markdown"), "at most one")


def test_a_yaml_vendors_file_reads_the_same(tmp_path: Path) -> None:
    yaml_text = "provider:\n  - name: A\n    gpu_usd_per_hour: 2.0\n    scale_out_s: [200]\n"
    code, out, err = _score(tmp_path, yaml_text, "--json", name="v.yaml")
    assert code == 0, err
    assert json.loads(out)["scorecard"]["vendors"][0]["name"] == "A"


def test_a_cpu_bench_run_is_refused_as_gpu_evidence(tmp_path: Path) -> None:
    path = write_bench(tmp_path / "b.json", matmul=700.0, membw=3000.0)
    doc = json.loads(path.read_text())
    doc["hardware"]["device"] = "cpu"
    path.write_text(json.dumps(doc))
    text = GOOD_PROVIDER + 'bench = { H100 = "b.json" }\n'
    one_line_error(*_score(tmp_path, text), "bench.H100", "is a CPU run")


def test_a_bench_run_on_another_gpu_than_its_key_is_refused(tmp_path: Path) -> None:
    write_bench(tmp_path / "b.json", matmul=700.0, membw=3000.0)  # an H100 run
    text = GOOD_PROVIDER + 'bench = { A100 = "b.json" }\n'
    one_line_error(
        *_score(tmp_path, text), "bench.A100", "ran on H100-SXM5-80GB (Hopper), not a A100"
    )


def test_gpu_types_compare_by_the_catalog_name_the_run_recorded(tmp_path: Path) -> None:
    write_bench(tmp_path / "a.json", matmul=800.0, membw=3000.0)
    write_bench(tmp_path / "b.json", matmul=400.0, membw=3000.0)
    text = (
        '[[provider]]\nname = "A"\nbench = { "H100" = "a.json" }\n'
        '[[provider]]\nname = "B"\nbench = { "h100 sxm" = "b.json" }\n'
    )
    code, out, err = _score(tmp_path, text, "--json")
    assert code == 0, err
    vendors = {v["name"]: v for v in json.loads(out)["scorecard"]["vendors"]}
    b_hw = next(c for c in vendors["B"]["criteria"] if c["criterion"] == "hardware")
    assert "75% of the best provider" in b_hw["evidence"]  # (400/800 + 3000/3000) / 2


def test_a_vendor_without_any_evidence_is_ranked_last_and_said_so(tmp_path: Path) -> None:
    text = '[[provider]]\nname = "Empty"\n' + GOOD_PROVIDER
    code, out, err = _score(tmp_path, text, "--markdown")
    assert code == 0, err
    assert "| 2 | Empty |" in out
    assert "Empty: no evidence for any weighted criterion" in out


def test_an_unknown_catalog_provider_warns_and_uses_the_assumed_rates(tmp_path: Path) -> None:
    text = GOOD_PROVIDER + 'catalog = "awz"\n'
    code, out, err = _score(tmp_path, text, "--json")
    assert code == 0, err
    assert "catalog 'awz' has no billing row (did you mean aws" in err
    items = json.loads(out)["scorecard"]["vendors"][0]["cost_items"]
    egress = next(i for i in items if i["item"].startswith("egress"))
    assert "assumed" in egress["source"]

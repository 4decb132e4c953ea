"""bench compare: two machines side by side."""

from __future__ import annotations

import pytest

from gpurent.bench.compare import compare
from gpurent.report.bench import compare_markdown, markdown


def test_ratio_and_missing_sides(bb) -> None:
    a = bb.bench_result(
        (bb.meas("membw.copy", 100.0), bb.meas("disk.seq-read", 1.0)),
        (bb.model_run(throughput=50.0),),
    )
    b = bb.bench_result(
        (bb.meas("membw.copy", 150.0), bb.meas("dataload.images", 900.0, "images/s")),
        (bb.model_run(throughput=100.0),),
    )
    rows = {r.check: r for r in compare(a, b)}
    assert rows["membw.copy"].ratio_b_over_a == pytest.approx(1.5)
    assert rows["model.resnet50"].ratio_b_over_a == pytest.approx(2.0)
    assert rows["disk.seq-read"].b_value is None and rows["disk.seq-read"].ratio_b_over_a is None
    assert rows["dataload.images"].a_value is None and rows["dataload.images"].a_status == "n/a"
    assert list(rows)[-1] == "dataload.images"  # B-only checks come last
    text = compare_markdown(tuple(rows.values()), "a.json", "b.json")
    assert "| membw.copy | 100 GB/s | 150 GB/s | 1.50x |" in text


def test_differing_model_configs_are_flagged(bb) -> None:
    a = bb.bench_result((), (bb.model_run(config="cpu-small: x"),))
    b = bb.bench_result((), (bb.model_run(config="full: y"),))
    (row,) = compare(a, b)
    assert row.note.startswith("configs differ")


def test_markdown_report_has_every_section(cpu_result) -> None:
    text = markdown(cpu_result)
    for part in (
        "# gpurent bench",
        "## Micro-benchmarks",
        "## Model training steps",
        "## Verdict",
        "| matmul.fp32 | ok |",
        "note: a note",
    ):
        assert part in text

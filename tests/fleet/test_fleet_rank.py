"""The fleet's ranking and outlier rule, pure: figures and health rows in, nodes to replace out."""

from __future__ import annotations

import pytest

from gpurent.fleet.figures import health_reasons, node_figures
from gpurent.fleet.rank import (
    LINK_METRIC,
    NodeFigures,
    link_figures,
    rank_fleet,
    ring_pairs,
    slow_outliers,
)
from gpurent.monitor.fake_nvml import FakeNvml
from gpurent.runtime.health import check_gpus


def nf(node: str, **figures: float) -> NodeFigures:
    keyed = {k.replace("_", "."): v for k, v in figures.items()}
    return NodeFigures(node=node, figures=keyed, units=dict.fromkeys(keyed, "TFLOP/s"))


def test_a_node_at_a_quarter_of_the_median_is_slow() -> None:
    (out,) = slow_outliers({"a": 1.0, "b": 1.02, "c": 0.25}, "matmul.fp32")
    assert out.node == "c"
    assert out.fraction_of_median == pytest.approx(0.25)


def test_spread_within_the_rule_is_not_an_outlier() -> None:
    # 0.85 is above 80% of the median (1.0) and within 3 scaled MADs of it (MAD 0.1)
    assert slow_outliers({"a": 1.0, "b": 0.85, "c": 1.1}, "m") == []
    # a tight fleet (MAD 0): 0.97 is 3+ MADs away but not 5% below
    assert slow_outliers({"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.97}, "m") == []


def test_on_a_tight_fleet_a_smaller_drop_is_an_outlier() -> None:
    values = {"a": 1.0, "b": 1.01, "c": 0.99, "d": 1.0, "e": 0.9}  # MAD 0.01: 0.9 is 6.7 away
    (out,) = slow_outliers(values, "m")
    assert out.node == "e"
    assert out.threshold == pytest.approx(0.95)


def test_two_nodes_cannot_name_the_slow_one() -> None:
    assert slow_outliers({"a": 1.0, "b": 0.1}, "m") == []


def test_ranking_orders_by_score_and_names_the_node_to_replace() -> None:
    ranking = rank_fleet(
        [
            nf("a", matmul_fp32=1.0, membw_copy=10.0),
            nf("b", matmul_fp32=1.1, membw_copy=10.5),
            nf("c", matmul_fp32=0.3, membw_copy=9.8),
        ]
    )
    assert [r.node for r in ranking.nodes] == ["b", "a", "c"]
    assert [r.node for r in ranking.to_replace] == ["c"]
    (reason,) = ranking.to_replace[0].reasons
    assert reason.startswith("matmul.fp32 0.3 TFLOP/s is 30% of the fleet median 1")


def test_slow_link_is_pinned_on_the_node_in_every_slow_pair() -> None:
    nodes = ["a", "b", "c", "d"]
    pairs = ring_pairs(nodes)
    assert pairs == [("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")]
    busbw = {p: (0.2 if "c" in p else 1.0) for p in pairs}
    assert link_figures(nodes, busbw) == {"a": 1.0, "b": 1.0, "c": 0.2, "d": 1.0}
    ranking = rank_fleet([nf(n, matmul_fp32=1.0) for n in nodes], busbw)
    assert [r.node for r in ranking.to_replace] == ["c"]
    assert {o.metric for o in ranking.outliers} == {LINK_METRIC}
    assert ring_pairs(["a", "b"]) == [("a", "b")]
    assert ring_pairs(["a"]) == []


def fake_gpu(ecc_uncorrected: int) -> FakeNvml:
    return FakeNvml(
        {
            "gpus": [
                {
                    "name": "NVIDIA H100 80GB HBM3",
                    "count": 2,
                    "steps": [{"ecc_uncorrected": ecc_uncorrected}],
                }
            ]
        }
    )


def health_rows(nvml: FakeNvml, xids: list[int]) -> list[dict[str, str]]:
    nvml.nvmlInit()
    r = check_gpus(nvml, new_xids=xids)
    return [{"check": r.check, "status": r.status.value, "reason": r.reason}]


def test_ecc_and_xid_from_the_health_check_mark_the_node() -> None:
    payloads = {
        "a": health_rows(fake_gpu(0), []),
        "b": health_rows(fake_gpu(0), [13]),  # an application Xid: a warning only
        "c": health_rows(fake_gpu(2), [79]),  # uncorrected ECC and "fallen off the bus"
    }
    reports = []
    for n, rows in payloads.items():
        fails, warns = health_reasons(rows)
        reports.append(
            NodeFigures(
                node=n, figures={"m.x": 1.0}, units={}, health_fail=fails, health_warn=warns
            )
        )
    ranking = rank_fleet(reports)
    by_node = {r.node: r for r in ranking.nodes}
    assert [r.node for r in ranking.to_replace] == ["c"]
    reasons = " ".join(by_node["c"].reasons)
    assert "uncorrected ECC" in reasons
    assert "Xid 79" in reasons
    assert any("Xid 13" in w for w in by_node["b"].warnings)


def test_a_node_whose_bench_failed_is_replaced_and_ranked_last() -> None:
    dead, _ = node_figures("z", None, "no answer from node z within 300 s")
    ranking = rank_fleet([nf("a", m_x=1.0), nf("b", m_x=1.0), nf("c", m_x=1.0), dead])
    assert ranking.nodes[-1].node == "z"
    assert ranking.nodes[-1].score is None
    assert ranking.nodes[-1].reasons == ("bench did not run: no answer from node z within 300 s",)


def test_a_figure_the_others_have_and_one_node_lacks_is_a_warning() -> None:
    ranking = rank_fleet(
        [
            nf("a", m_x=1.0, m_y=2.0),
            nf("b", m_x=1.0, m_y=2.0),
            nf("c", m_x=1.0, m_y=2.0),
            nf("d", m_x=1.0),
        ]
    )
    d = next(r for r in ranking.nodes if r.node == "d")
    assert not d.replace
    assert d.warnings == ("no m.y figure (other nodes have one: a benchmark skipped?)",)


def test_a_nodecut_off_from_every_neighbour_is_replaced() -> None:
    from gpurent.fleet.service import PairLink, cut_off

    links = (
        PairLink(a="a", b="b", device="cpu", busbw_gbps=1.0),
        PairLink(a="b", b="c", device="", busbw_gbps=None, error="gloo: connection refused"),
        PairLink(a="c", b="a", device="", busbw_gbps=None, error="gloo: connection refused"),
    )
    c = cut_off(nf("c", m_x=1.0), links)
    assert c.health_fail == ("allreduce: failed with every neighbour (gloo: connection refused)",)
    assert cut_off(nf("a", m_x=1.0), links).health_fail == ()
    everything_failed = tuple(
        PairLink(a=p.a, b=p.b, device="", busbw_gbps=None, error="x") for p in links
    )
    assert cut_off(nf("c", m_x=1.0), everything_failed).health_fail == ()

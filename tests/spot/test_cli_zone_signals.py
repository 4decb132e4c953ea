"""`gpurent spot zones` without traces (ranked by stored signals) and with dollars."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import run_cli
from tests.spot.test_cli_spot_defaults import pattern

LAKE = (
    "Time,InstanceType,Region,AZ,SPS,IF,OndemandPrice,SpotPrice,Savings\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az1,3,3.0,98,40,59\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az2,9,1.0,98,44,55\n"
    "2026-11-01 10:00:00,p5.48xlarge,us-east-1,use1-az3,9,2.5,98,45,54\n"
    "2026-11-01 10:00:00,p4d.24xlarge,us-east-1,use1-az4,10,3.0,32,12,60\n"
)


@pytest.fixture()
def lake(tmp_path: Path) -> None:
    path = tmp_path / "lake.csv"
    path.write_text(LAKE)
    code, _, err = run_cli("spot", "signals", "import", str(path))
    assert code == 0, err


def test_zones_without_traces_rank_by_signals(lake: None) -> None:
    code, out, err = run_cli("spot", "zones", "--instance", "p5.48xlarge", "--json")
    assert code == 0, err
    got = json.loads(out)
    # score 9 first; of the two 9s the lower interruption frequency (5-10% < >20%) first
    assert got["try_order"] == ["use1-az3", "use1-az2", "use1-az1"]
    assert got["zones"][0]["interruption"] == "5-10%"
    assert got["zones"][0]["age_s"] > 0


def test_zones_without_traces_terminal_says_order_and_age(lake: None) -> None:
    code, out, err = run_cli(
        "spot", "zones", "--offer", "aws/p5.48xlarge/us-east-1", "--prices", "spot=1,ondemand=2"
    )
    assert code == 2 and "not both" in err  # --offer and --prices together
    code, out, err = run_cli(
        "spot", "zones", "--instance", "p5.48xlarge", "--prices", "spot=40,ondemand=100"
    )
    assert code == 0, err
    assert "try in this order: use1-az3, use1-az2, use1-az1" in out
    assert "d old" in out and "$45, 55% off" in out


def test_zones_without_signals_or_instance_is_exit_2(lake: None) -> None:
    code, _, err = run_cli("spot", "zones")
    assert code == 2 and "--instance" in err
    code, _, err = run_cli("spot", "zones", "--instance", "g5.xlarge")
    assert code == 2 and "no stored spot signal for 'g5.xlarge'" in err
    assert len(err.strip().splitlines()) == 1


def test_zones_with_traces_name_the_order_and_dollars(write_csv) -> None:
    a = write_csv("a", [1] * 50 + [0] * 10)  # available 50 of 60 ticks
    b = write_csv("b", [0] * 30 + [1] * 30)  # 30 of 60
    code, out, err = run_cli(
        "spot", "zones", str(b), str(a), "--size", "2", "--prices", "spot=1,ondemand=4", "--json"
    )
    assert code == 0, err
    got = json.loads(out)
    assert got["try_order"] == ["a", "b"]
    p = got["recommended"]["p_all_unavailable"]
    assert got["dollars"]["usd_per_hour"] == pytest.approx((1 - p) * 1 + p * 4)
    assert got["dollars"]["saving_fraction"] == pytest.approx(1 - ((1 - p) + 4 * p) / 4)
    code, out, err = run_cli("spot", "zones", str(a), str(b), "--prices", "spot=1,ondemand=4")
    assert code == 0, err
    assert "try in this order: a, b" in out and "/h on-demand" in out
    code, out, _ = run_cli("spot", "zones", str(a), str(b), "--json")
    assert json.loads(out)["dollars"] is None


def test_two_zone_traces_still_default(write_csv) -> None:
    a = write_csv("a", pattern(60))
    b = write_csv("b", pattern(60, 4))
    code, out, err = run_cli("spot", "zones", str(a), str(b), "--json")
    assert code == 0, err
    assert sorted(json.loads(out)["try_order"]) == ["a", "b"]


def test_region_signals_apply_to_its_zones(tmp_path: Path) -> None:
    sps = {
        "InstanceTypes": ["g6.xlarge"],
        "SpotPlacementScores": [
            {"Region": "us-east-1", "AvailabilityZoneId": "use1-az1", "Score": 5},
            {"Region": "us-west-2", "AvailabilityZoneId": "usw2-az1", "Score": 5},
        ],
    }
    advisor = {
        "ranges": [{"index": 0, "label": "<5%"}, {"index": 4, "label": ">20%"}],
        "spot_advisor": {
            "us-east-1": {"Linux": {"g6.xlarge": {"s": 50, "r": 4}}},
            "us-west-2": {"Linux": {"g6.xlarge": {"s": 50, "r": 0}}},
            "eu-west-1": {"Linux": {"g6.xlarge": {"s": 50, "r": 0}}},
        },
    }
    for name, doc in (("sps.json", sps), ("adv.json", advisor)):
        path = tmp_path / name
        path.write_text(json.dumps(doc))
        assert run_cli("spot", "signals", "import", str(path))[0] == 0
    code, out, err = run_cli("spot", "zones", "--instance", "g6.xlarge", "--json")
    assert code == 0, err
    got = json.loads(out)
    # equal scores: the zone of the <5% region first; eu-west-1 has no zone signal, so its region
    assert got["try_order"] == ["usw2-az1", "use1-az1", "eu-west-1"]
    assert got["zones"][1]["interruption"] == ">20%"

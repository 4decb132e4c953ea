"""Built-in stand-in GPU scenarios for `--fake-gpus` and the tests, and loading one from a file.

Each is a dict in the format `fake_nvml.FakeNvml` reads. Values are illustrative H100/A100
figures (power limits and clocks from NVIDIA datasheets), not measurements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpurent.errors import DataError, InputError
from gpurent.inputs import files, values

# Most GPUs a fake-GPU scenario may stand for (a host has at most a few dozen).
MAX_FAKE_GPUS = 1024

_H100: dict[str, Any] = {
    "name": "NVIDIA H100 80GB HBM3",
    "gpm": True,
    "memory_total_mib": 81559,
    "power_limit_w": 700,
    "sm_clock_max_mhz": 1980,
    "pcie_gen_max": 5,
    "pcie_width_max": 16,
}
_A100: dict[str, Any] = {
    "name": "NVIDIA A100-SXM4-80GB",
    "gpm": False,
    "memory_total_mib": 81920,
    "power_limit_w": 400,
    "sm_clock_max_mhz": 1410,
    "pcie_gen_max": 4,
    "pcie_width_max": 16,
    "unsupported": ["gpm"],
}
_BUSY = {
    "busy_pct": 100,
    "mem_copy_pct": 55,
    "sm_util_pct": 82.0,
    "sm_occupancy_pct": 45.0,
    "tensor_util_pct": 60.0,
    "dram_bw_util_pct": 55.0,
    "memory_used_mib": 71000,
    "power_w": 610.0,
    "temperature_c": 66,
    "sm_clock_mhz": 1980,
    "throttle_reasons": 0,
    "pcie_tx_kb_per_s": 900_000,
    "pcie_rx_kb_per_s": 2_500_000,
    "processes": [{"pid": 4242, "used_mib": 70400}],
}
_IDLE = {"busy_pct": 0, "mem_copy_pct": 0, "sm_util_pct": 0.0, "power_w": 72.0}
_STARVED = {
    **_BUSY,
    "busy_pct": 100,
    "sm_util_pct": 18.0,
    "tensor_util_pct": 9.0,
    "mem_copy_pct": 8,
    "dram_bw_util_pct": 7.0,
    "power_w": 210.0,
}
_THROTTLED = {
    **_BUSY,
    "temperature_c": 89,
    "sm_clock_mhz": 1410,
    "throttle_reasons": 0x20 | 0x40,
    "sm_util_pct": 70.0,
}

SCENARIOS: dict[str, dict[str, Any]] = {
    "busy": {"gpus": [{**_H100, "count": 8, "steps": [_BUSY]}]},
    "idle": {"gpus": [{**_H100, "count": 2, "steps": [_IDLE]}]},
    "starved": {"gpus": [{**_H100, "count": 2, "steps": [_STARVED]}]},
    "throttled": {"gpus": [{**_H100, "count": 1, "steps": [_THROTTLED]}]},
    "pcie-downtrained": {
        "gpus": [{**_H100, "count": 1, "steps": [{**_BUSY, "pcie_gen": 3, "pcie_width": 8}]}]
    },
    "ampere": {"gpus": [{**_A100, "count": 4, "steps": [{**_BUSY, "sm_util_pct": 0.0}]}]},
    "lost": {
        "gpus": [
            {**_H100, "count": 1, "steps": [_BUSY]},
            {
                **_H100,
                "count": 1,
                "lost_at_step": 3,
                "steps": [_BUSY, _BUSY, {**_BUSY, "xids": [79]}],
            },
        ]
    },
    "no-driver": {"init_error": "driver_not_loaded", "gpus": []},
    "demo": {
        "loop": True,
        "step_s": 2.0,
        "gpus": [
            {**_H100, "count": 4, "steps": [_BUSY, _BUSY, _STARVED, _IDLE, _THROTTLED]},
        ],
    },
}


def load_scenario(name_or_path: str) -> dict[str, Any]:
    """A built-in scenario by name, or one read from a YAML or JSON file."""
    if name_or_path in SCENARIOS:
        return SCENARIOS[name_or_path]
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        raise InputError(
            f"unknown fake-GPU scenario {name_or_path!r}; built-in: {', '.join(SCENARIOS)}; "
            "or give a YAML/JSON scenario file"
        )
    where = files.shown(path)
    text = files.read_text(path, limit_bytes=files.MAX_CONFIG_BYTES, what="scenario file")
    if path.suffix == ".json":
        data = files.parse_json(text, where, error=DataError)
    else:
        data = files.parse_yaml(text, where, error=DataError)
    if not isinstance(data, dict) or not isinstance(data.get("gpus", []), list):
        raise DataError(f"{where}: a scenario is a mapping with a `gpus` list")
    return check_scenario(data, where)


def check_scenario(data: dict[str, Any], where: str) -> dict[str, Any]:
    """`data` when its numbers are usable: a positive finite `step_s`, GPU entries that are
    mappings with a whole `count` >= 1 and `steps` lists, and at most `MAX_FAKE_GPUS` GPUs."""
    try:
        if "step_s" in data:
            values.positive(data["step_s"], f"{where}: step_s", most=values.MAX_SECONDS)
        total = 0
        for i, spec in enumerate(data.get("gpus", [])):
            at = f"{where}: gpus[{i}]"
            if not isinstance(spec, dict):
                raise DataError(f"{at}: each GPU is a mapping (name, count, steps, ...)")
            total += values.positive_int(spec.get("count", 1), f"{at}.count", most=MAX_FAKE_GPUS)
            if total > MAX_FAKE_GPUS:
                raise DataError(f"{where}: more than {MAX_FAKE_GPUS} GPUs; give fewer")
            steps = spec.get("steps", [])
            if not isinstance(steps, list) or not all(isinstance(st, dict) for st in steps):
                raise DataError(f"{at}.steps: a list of mappings of GPU values")
            if spec.get("lost_at_step") is not None:
                values.non_negative_int(spec["lost_at_step"], f"{at}.lost_at_step")
    except InputError as exc:
        raise DataError(exc.message) from None
    return data

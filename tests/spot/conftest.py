"""Fixtures of the spot tests: small synthetic traces written in each supported format."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pytest

GAP_S = 360  # 0.1 h per tick keeps the arithmetic easy

TraceWriter = Callable[..., Path]


def csv_text(values: Sequence[int], prices: Sequence[float] | None = None) -> str:
    t0 = datetime(2023, 2, 15, 22, 0, 0)
    head = "date,availability" + (",price" if prices is not None else "")
    rows = [head]
    for i, v in enumerate(values):
        stamp = (t0 + timedelta(seconds=GAP_S * i)).strftime("%Y-%m-%d %H:%M:%S")
        rows.append(f"{stamp},{v}" + (f",{prices[i]}" if prices is not None else ""))
    return "\n".join(rows) + "\n"


@pytest.fixture()
def write_csv(tmp_path: Path) -> TraceWriter:
    def write(name: str, values: Sequence[int], prices: Sequence[float] | None = None) -> Path:
        path = tmp_path / f"{name}.csv"
        path.write_text(csv_text(values, prices))
        return path

    return write


@pytest.fixture()
def write_json(tmp_path: Path) -> TraceWriter:
    def write(name: str, values: object, **meta: object) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"metadata": {"gap_seconds": GAP_S, **meta}, "data": values}))
        return path

    return write

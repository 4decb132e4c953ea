"""`catalog.query`: one offer by key, and GPU specs by filter (what `pricing compare --offer`
and `gpurent gpus` ask)."""

from __future__ import annotations

import pytest

from gpurent.catalog import all_gpus, bundled_offers
from gpurent.catalog.query import GpuQuery, find_offer, select_gpus
from gpurent.errors import NotFoundError


def test_find_offer_by_key_ignoring_case_and_spaces() -> None:
    offers = bundled_offers()
    first = offers[0]
    assert find_offer(f"  {first.key.upper()} ", offers) is first


def test_an_unknown_offer_key_suggests_close_ones() -> None:
    offers = bundled_offers()
    key = offers[0].key
    with pytest.raises(NotFoundError, match=rf"unknown offer '{key}x'; did you mean {key}"):
        find_offer(key + "x", offers)


def test_select_gpus_by_each_condition() -> None:
    specs = all_gpus()
    assert select_gpus(specs, GpuQuery()) == tuple(specs)
    big = select_gpus(specs, GpuQuery(min_memory_gib=140))
    assert big and all(g.memory_gib >= 140 for g in big)
    hopper = select_gpus(specs, GpuQuery(architecture="HOPPER"))
    assert hopper and all(g.architecture == "Hopper" for g in hopper)
    amd = select_gpus(specs, GpuQuery(vendor="AMD"))
    assert amd and all(g.vendor.lower() == "amd" for g in amd)
    h100 = select_gpus(specs, GpuQuery(name="h100", vendor="nvidia"))
    assert h100 and all("h100" in " ".join((g.name, *g.aliases)).lower() for g in h100)
    assert select_gpus(specs, GpuQuery(architecture="Hopper", vendor="amd")) == ()

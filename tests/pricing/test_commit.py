"""`pricing.commit.committed_price`: which committed price a comparison uses, and why."""

from __future__ import annotations

import pytest

from gpurent.catalog.offer import Offer, ReservedTerm
from gpurent.errors import InputError
from gpurent.pricing.commit import committed_price
from gpurent.pricing.payment_options import GUIDE_COMMIT_DISCOUNT
from gpurent.units import HOURS_PER_MONTH


def _offer(provider: str, reserved: tuple[ReservedTerm, ...] = ()) -> Offer:
    return Offer(
        provider=provider,
        instance_type="x8",
        region="r1",
        gpu_name="H100-SXM5-80GB",
        gpu_count=8,
        gpu_memory_gib=80,
        vcpus=None,
        memory_gib=None,
        price_usd_per_hour=10.0,
        reserved=reserved,
        source="unit test",
    )


YEAR_H = 12 * HOURS_PER_MONTH


def test_the_price_given_comes_first() -> None:
    offer = _offer("aws", (ReservedTerm(term_months=12, price_usd_per_hour=6.0),))
    assert committed_price(10.0, offer, 5.0, 0.5, YEAR_H) == (
        5.0,
        "committed price from --committed",
    )


def test_then_the_offers_own_term_of_that_length() -> None:
    offer = _offer("aws", (ReservedTerm(term_months=12, price_usd_per_hour=6.0),))
    price, source = committed_price(10.0, offer, None, 0.5, YEAR_H)
    assert price == 6.0 and "from the offer (unit test)" in source
    price, _ = committed_price(10.0, offer, None, 0.5, 36 * HOURS_PER_MONTH)  # no 3-year term
    assert price == pytest.approx(5.0)


def test_then_the_discount_given_checked_in_range() -> None:
    price, source = committed_price(10.0, None, None, 0.25, YEAR_H)
    assert price == pytest.approx(7.5) and "--commit-discount" in source
    with pytest.raises(InputError, match=r"--commit-discount must be in \[0, 1\), got 1"):
        committed_price(10.0, None, None, 1.0, YEAR_H)


def test_then_the_providers_published_discount_then_the_guides_assumption() -> None:
    price, source = committed_price(10.0, _offer("vast"), None, None, HOURS_PER_MONTH)
    assert price == pytest.approx(8.0) and "vast publishes" in source
    price, source = committed_price(10.0, _offer("aws"), None, None, YEAR_H)
    assert price == pytest.approx(10.0 * (1 - GUIDE_COMMIT_DISCOUNT))
    assert source.startswith("ASSUMPTION:")

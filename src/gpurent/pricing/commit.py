"""The committed (reserved) price of an instance, and where it came from."""

from __future__ import annotations

from gpurent.catalog.offer import Offer
from gpurent.cloud.commitments import term_for_hours
from gpurent.errors import InputError
from gpurent.pricing.payment_options import GUIDE_COMMIT_DISCOUNT
from gpurent.units import HOURS_PER_MONTH


def committed_price(
    od: float,
    offer: Offer | None,
    committed: float | None,
    discount: float | None,
    term_hours: float,
) -> tuple[float, str]:
    """(USD per hour committed, its source) for on-demand price `od`, first of: the price given
    (`--committed`), the offer's own term of `term_hours`, the discount given
    (`--commit-discount`, in [0, 1)), the discount the provider publishes for such a term, and
    last the guide's 'on-demand costs 30-50% more' (`GUIDE_COMMIT_DISCOUNT`), said to be an
    assumption."""
    if committed is not None:
        return committed, "committed price from --committed"
    if offer is not None:
        for term in offer.reserved:
            if term.term_months * HOURS_PER_MONTH == term_hours:
                return term.price_usd_per_hour, f"committed price from the offer ({offer.source})"
    if discount is not None:
        if not 0 <= discount < 1:
            raise InputError(f"--commit-discount must be in [0, 1), got {discount}")
        return od * (
            1 - discount
        ), f"committed = on-demand x (1 - {discount:g}) from --commit-discount"
    published = term_for_hours(offer.provider if offer else None, term_hours)
    if published is not None and published.discount is not None:
        return od * (1 - published.discount), (
            f"committed = on-demand x (1 - {published.discount:g}), the discount "
            f"{published.provider} publishes for a {published.name} ({published.source})"
        )
    return (
        od * (1 - GUIDE_COMMIT_DISCOUNT),
        "ASSUMPTION: committed = on-demand / 1.4 (the guide's 'on-demand costs 30-50% more'; "
        "give --committed or --commit-discount for real terms)",
    )

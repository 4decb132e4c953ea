"""Facts about cloud providers that more than one room needs: metadata services, and the spot
interruption defaults that plan, pricing and spot share.

Imports only the standard library; every room above it may import it.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "BillingRule": "gpurent.cloud.billing",
    "CommitmentTerm": "gpurent.cloud.commitments",
    "EgressTo": "gpurent.cloud.billing",
    "JunkAnswerError": "gpurent.cloud.metadata",
    "SignalRate": "gpurent.cloud.spot_defaults",
    "SpotDefault": "gpurent.cloud.spot_defaults",
    "base_urls_from_env": "gpurent.cloud.metadata",
    "billed_term_hours": "gpurent.cloud.commitments",
    "billing_rule": "gpurent.cloud.billing",
    "describe_default": "gpurent.cloud.spot_defaults",
    "shortest_term": "gpurent.cloud.commitments",
    "spot_default": "gpurent.cloud.spot_defaults",
    "spot_sources": "gpurent.cloud.spot_defaults",
    "term_for_hours": "gpurent.cloud.commitments",
    "terms_for": "gpurent.cloud.commitments",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)

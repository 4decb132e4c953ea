"""Analyses of spot traces and price history: zones to spread over, spot lifetimes
(Kaplan-Meier), hour-of-week price profiles and forecasts."""

from gpurent.exports import lazy

_EXPORTS = {
    "Backtest": "gpurent.spot.analytics.forecast",
    "Lifetime": "gpurent.spot.analytics.survival",
    "LifetimeSummary": "gpurent.spot.analytics.survival",
    "PatternTest": "gpurent.spot.analytics.history",
    "PriceSeries": "gpurent.spot.analytics.history",
    "Profile": "gpurent.spot.analytics.history",
    "Survival": "gpurent.spot.analytics.survival",
    "ZonePair": "gpurent.spot.analytics.zones",
    "ZoneReport": "gpurent.spot.analytics.zones",
    "ZoneSet": "gpurent.spot.analytics.zones",
    "ZoneStats": "gpurent.spot.analytics.zones",
    "analyse_zones": "gpurent.spot.analytics.zones",
    "availability_profile": "gpurent.spot.analytics.history",
    "backtest": "gpurent.spot.analytics.forecast",
    "build_series": "gpurent.spot.analytics.history",
    "exponential_mtti_h": "gpurent.spot.analytics.survival",
    "kaplan_meier": "gpurent.spot.analytics.survival",
    "lifetimes_from_hours": "gpurent.spot.analytics.survival",
    "lifetimes_from_trace": "gpurent.spot.analytics.survival",
    "price_profile": "gpurent.spot.analytics.history",
    "weekday_evening_test": "gpurent.spot.analytics.history",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)

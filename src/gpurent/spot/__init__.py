"""Spot instances: availability traces and price history (`io`), the deadline-aware simulator
and its policies (`sim`), zone, lifetime and price analyses (`analytics`), the checkpoint
interval (`interval`, the one module pricing and runtime take) and public zone signals
(`signals`). Pure but for `io`'s readers and probe; imports only errors and inputs.

The names below are imported lazily: `import gpurent.spot` loads none of the sub-packages.
"""

from gpurent.exports import lazy

_EXPORTS = {
    "JobSpec": "gpurent.spot.sim.job_market",
    "Market": "gpurent.spot.sim.job_market",
    "Prices": "gpurent.spot.sim.dollars",
    "Trace": "gpurent.spot.io.trace",
    "analyse_history": "gpurent.spot.history_report",
    "analyse_zones": "gpurent.spot.analytics.zones",
    "attach_prices": "gpurent.spot.io.trace_io",
    "backtest": "gpurent.spot.analytics.forecast",
    "build_market": "gpurent.spot.sim.job_market",
    "build_series": "gpurent.spot.analytics.history",
    "daly_interval_s": "gpurent.spot.interval",
    "job_dollars": "gpurent.spot.sim.dollars",
    "kaplan_meier": "gpurent.spot.analytics.survival",
    "load_price_history": "gpurent.spot.io.price_io",
    "load_prices": "gpurent.spot.io.trace_io",
    "load_traces": "gpurent.spot.io.trace_io",
    "overhead_exponential": "gpurent.spot.interval",
    "parse_signals": "gpurent.spot.signals",
    "run_policy": "gpurent.spot.sim.evaluate",
    "simulate": "gpurent.spot.sim.simulator",
    "young_interval_s": "gpurent.spot.interval",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)

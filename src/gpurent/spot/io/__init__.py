"""The spot room's data and its edges: the `Trace` type, trace and price-history readers, and
the probe that records a trace."""

from gpurent.exports import lazy

_EXPORTS = {
    "AlignedZones": "gpurent.spot.io.trace",
    "PriceRecord": "gpurent.spot.io.price_io",
    "ProbeLimits": "gpurent.spot.io.probe",
    "ProbeResult": "gpurent.spot.io.probe",
    "ProbeRow": "gpurent.spot.io.probe",
    "Trace": "gpurent.spot.io.trace",
    "align_zones": "gpurent.spot.io.trace",
    "attach_prices": "gpurent.spot.io.trace_io",
    "combine_nodes": "gpurent.spot.io.trace",
    "load_price_history": "gpurent.spot.io.price_io",
    "load_prices": "gpurent.spot.io.trace_io",
    "load_trace": "gpurent.spot.io.trace_io",
    "load_trace_with_notes": "gpurent.spot.io.trace_io",
    "load_traces": "gpurent.spot.io.trace_io",
    "probe_csv": "gpurent.spot.io.probe",
    "records_from_traces": "gpurent.spot.io.price_io",
    "run_probe": "gpurent.spot.io.probe",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)

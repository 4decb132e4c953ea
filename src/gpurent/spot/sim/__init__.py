"""The spot simulator: the job and market model, online policies, the replay, the hindsight
optimum, online lifetime estimates and the dollars of a result."""

from gpurent.exports import lazy

_EXPORTS = {
    "HourlyDollars": "gpurent.spot.sim.dollars",
    "JobDollars": "gpurent.spot.sim.dollars",
    "JobSpec": "gpurent.spot.sim.job_market",
    "Market": "gpurent.spot.sim.job_market",
    "Prices": "gpurent.spot.sim.dollars",
    "RunResult": "gpurent.spot.sim.simulator",
    "SimSummary": "gpurent.spot.sim.simulator",
    "TickPlan": "gpurent.spot.sim.job_market",
    "ZoneSpells": "gpurent.spot.sim.lifetimes",
    "build_market": "gpurent.spot.sim.job_market",
    "fallback_dollars": "gpurent.spot.sim.dollars",
    "gap_to_optimal": "gpurent.spot.sim.evaluate",
    "job_dollars": "gpurent.spot.sim.dollars",
    "overhead_dollars": "gpurent.spot.sim.dollars",
    "parse_price_pair": "gpurent.spot.sim.dollars",
    "run_policy": "gpurent.spot.sim.evaluate",
    "run_starts": "gpurent.spot.sim.job_market",
    "simulate": "gpurent.spot.sim.simulator",
    "simulate_optimal": "gpurent.spot.sim.optimal",
    "simulate_run": "gpurent.spot.sim.simulator",
    "summarize": "gpurent.spot.sim.simulator",
    "tick_plan": "gpurent.spot.sim.job_market",
    "zone_spells": "gpurent.spot.sim.lifetimes",
}
__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - built from _EXPORTS
__getattr__ = lazy(__name__, _EXPORTS)

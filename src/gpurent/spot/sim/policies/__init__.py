"""Spot policies by name: the baselines of "Can't Be Late" (NSDI'24) and gpurent's own."""

from __future__ import annotations

from collections.abc import Callable

from gpurent.errors import NotFoundError
from gpurent.spot.sim.policies.base import Policy, RunView, SafetyNet
from gpurent.spot.sim.policies.baselines import GreedyPolicy, OnDemandPolicy, UniformProgressPolicy
from gpurent.spot.sim.policies.breakeven_up import BreakEvenUniformProgressPolicy
from gpurent.spot.sim.policies.dp_up import SlackValueUniformProgressPolicy
from gpurent.spot.sim.policies.dp_up2 import CatchUpSlackValuePolicy
from gpurent.spot.sim.policies.dp_up3 import OutageIdleSlackValuePolicy
from gpurent.spot.sim.policies.dp_up4 import FlooredOutageIdlePolicy
from gpurent.spot.sim.policies.lifetime_up import LifetimeUniformProgressPolicy
from gpurent.spot.sim.policies.proven_up import ProvenUniformProgressPolicy

DEFAULT_POLICY = LifetimeUniformProgressPolicy.name
"""What `--policy auto` means."""

ONLINE_POLICIES: dict[str, Callable[[], Policy]] = {
    OnDemandPolicy.name: OnDemandPolicy,
    GreedyPolicy.name: GreedyPolicy,
    UniformProgressPolicy.name: UniformProgressPolicy,
    LifetimeUniformProgressPolicy.name: LifetimeUniformProgressPolicy,
    BreakEvenUniformProgressPolicy.name: BreakEvenUniformProgressPolicy,
    ProvenUniformProgressPolicy.name: ProvenUniformProgressPolicy,
    SlackValueUniformProgressPolicy.name: SlackValueUniformProgressPolicy,
    CatchUpSlackValuePolicy.name: CatchUpSlackValuePolicy,
    OutageIdleSlackValuePolicy.name: OutageIdleSlackValuePolicy,
    FlooredOutageIdlePolicy.name: FlooredOutageIdlePolicy,
}
"""The online policies by name, each a constructor."""
OPTIMAL = "optimal"
"""The name of the hindsight optimum (not an online policy)."""
POLICY_NAMES = (*ONLINE_POLICIES, OPTIMAL, "auto", "all")
"""Every name `--policy` accepts."""


def resolve(name: str) -> str:
    """Canonical policy name (`auto` -> the default); NotFoundError lists the closest names."""
    key = name.strip().lower()
    if key == "auto":
        return DEFAULT_POLICY
    if key in ONLINE_POLICIES or key in (OPTIMAL, "all"):
        return key
    raise NotFoundError("policy", name, POLICY_NAMES)


__all__ = [
    "DEFAULT_POLICY",
    "ONLINE_POLICIES",
    "OPTIMAL",
    "POLICY_NAMES",
    "BreakEvenUniformProgressPolicy",
    "CatchUpSlackValuePolicy",
    "FlooredOutageIdlePolicy",
    "GreedyPolicy",
    "LifetimeUniformProgressPolicy",
    "OnDemandPolicy",
    "OutageIdleSlackValuePolicy",
    "Policy",
    "ProvenUniformProgressPolicy",
    "RunView",
    "SafetyNet",
    "SlackValueUniformProgressPolicy",
    "UniformProgressPolicy",
    "resolve",
]

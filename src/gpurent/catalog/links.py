"""Kinds of link between the GPUs of one instance: what the planner filters offers by and what
the estimator may be told to assume in place of a GPU spec's own link."""

from __future__ import annotations

from enum import StrEnum

from gpurent.inputs.choices import parse_choice


class Interconnect(StrEnum):
    """Link between the GPUs of one instance (a planner constraint: multi-GPU candidates only;
    an estimator override: NVLINK or PCIE)."""

    ANY = "any"
    NVLINK = "nvlink"  # NVLink/NVSwitch inside the node; >= 100 Gbit/s known network across nodes
    PCIE = "pcie"  # PCIe only (e.g. to match a PCIe fleet); an unnamed link counts as PCIe
    INFINITY_FABRIC = "infinity-fabric"  # AMD's xGMI between Instinct OAM GPUs

    def matches(self, link: str | None) -> bool:
        """Whether a catalog link name ("NVLink4", "PCIe", "Infinity Fabric"; None for an
        unnamed link, taken as PCIe) is this kind."""
        if self is Interconnect.ANY:
            return True
        name = (link or "PCIe").lower().replace(" ", "-")
        return name.startswith(self.value)


# The links the estimator models between a node's GPUs (`intra_node_interconnect`).
ESTIMATED_LINKS = (Interconnect.NVLINK, Interconnect.PCIE)


def parse_estimated_link(text: str | Interconnect, where: str | None = None) -> Interconnect:
    """nvlink or pcie (case-insensitive), for `estimate --interconnect` and CSV `interconnect`;
    anything else is a `NotFoundError` with "did you mean"."""
    return parse_choice(Interconnect, text, what="interconnect", where=where, only=ESTIMATED_LINKS)

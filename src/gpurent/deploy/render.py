"""One entry point for every format: `render(spec, fmt)`."""

from __future__ import annotations

from collections.abc import Callable

from gpurent.deploy.ansible import render_ansible
from gpurent.deploy.common import RenderedFile
from gpurent.deploy.dstack import render_dstack
from gpurent.deploy.kubernetes import render_kubernetes
from gpurent.deploy.skypilot import render_skypilot
from gpurent.deploy.slurm import render_slurm
from gpurent.deploy.spec import DeploySpec
from gpurent.deploy.torchrun import render_torchrun
from gpurent.errors import NotFoundError

Renderer = Callable[[DeploySpec], tuple[RenderedFile, ...]]


def _slurm(spec: DeploySpec) -> tuple[RenderedFile, ...]:
    return render_slurm(spec)


_RENDERERS: dict[str, Renderer] = {
    "skypilot": render_skypilot,
    "dstack": render_dstack,
    "ansible": render_ansible,
    "kubernetes": render_kubernetes,
    "slurm": _slurm,
    "torchrun": render_torchrun,
}

FORMATS: tuple[str, ...] = tuple(_RENDERERS)
"""The engine formats `deploy render --format` and `plan --emit` accept."""


def render(spec: DeploySpec, fmt: str) -> tuple[RenderedFile, ...]:
    """The files of `fmt` for `spec`; an unknown format or one that cannot express the spec
    is an InputError (one line)."""
    renderer = _RENDERERS.get(fmt.lower())
    if renderer is None:
        raise NotFoundError("format", fmt, FORMATS)
    return renderer(spec)

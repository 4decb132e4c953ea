"""Deploy: a plan candidate rendered as the files an existing engine runs (pure: no I/O).

`spec_from_plan(doc, DeployOptions(...))` reads a `gpurent plan --json` document;
`render(spec, fmt)` returns the files; the CLI (`gpurent deploy render`, `gpurent plan --emit`)
writes them. See docs/deploy.md.
"""

from __future__ import annotations

from gpurent.deploy.common import RenderedFile
from gpurent.deploy.render import FORMATS, render
from gpurent.deploy.slurm import SlurmOptions, render_slurm
from gpurent.deploy.spec import DeployOptions, DeploySpec, Placement, spec_from_plan

__all__ = [
    "FORMATS",
    "DeployOptions",
    "DeploySpec",
    "Placement",
    "RenderedFile",
    "SlurmOptions",
    "render",
    "render_slurm",
    "spec_from_plan",
]

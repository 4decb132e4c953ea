"""The options of `gpurent vendors score` beside the file, shared by the CLI and the API: the
reference job's overrides (`--job HOURSxGPUS`, `--egress-gb`, `--storage-gb`) and the two
criteria of the region map (`--slice`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpurent.errors import InputError
from gpurent.inputs import values as v
from gpurent.vendors.evaluation import DEFAULT_JOB
from gpurent.vendors.file import ReferenceJob

_JOB = re.compile(r"^\s*([0-9.eE+]+)\s*h?\s*[x*]\s*([0-9]+)\s*(?:gpus?)?\s*$", re.IGNORECASE)


def parse_job(text: str) -> tuple[float, int]:
    """`100x8` (100 hours on 8 GPUs; also `100h x 8`) as (hours, GPUs)."""
    match = _JOB.match(text)
    if not match:
        raise InputError(f"--job must be HOURSxGPUS, e.g. 100x8 (100 h on 8 GPUs), got {text!r}")
    hours = v.positive(match.group(1), "--job hours", most=1e6)
    gpus = v.positive_int(int(match.group(2)), "--job GPUs", most=1_000_000)
    return hours, gpus


def job_with(
    base: ReferenceJob | None, job: str | None, egress_gb: float | None, storage_gb: float | None
) -> ReferenceJob | None:
    """The file's reference job (or the guide's) with the overrides given; None when none is."""
    if job is None and egress_gb is None and storage_gb is None:
        return None
    ref = base or DEFAULT_JOB
    hours, gpus = parse_job(job) if job is not None else (ref.hours, ref.gpus)
    return ReferenceJob(
        hours=hours,
        gpus=gpus,
        egress_gb=ref.egress_gb if egress_gb is None else v.non_negative(egress_gb, "--egress-gb"),
        egress_to=ref.egress_to,
        storage_gb=(
            ref.storage_gb if storage_gb is None else v.non_negative(storage_gb, "--storage-gb")
        ),
        public_ips=ref.public_ips,
    )


def slice_pair(items: Sequence[str], given: str) -> tuple[str, str]:
    """The two criteria of `--slice` (already split), lower-cased."""
    if len(items) != 2:
        raise InputError(f"--slice takes two criteria, e.g. hardware,network; got {given!r}")
    return items[0].lower(), items[1].lower()

"""The one place the bench room imports torch: lazily, with an actionable error when missing."""

from __future__ import annotations

from typing import Any

from gpurent.errors import DeviceError, InputError, require


def import_torch() -> Any:
    """Import torch or raise MissingExtraError naming `pip install 'gpurent[bench]'`."""
    return require("torch", "bench")


def resolve_device(torch: Any, requested: str) -> str:
    """'auto' -> 'cuda' when a CUDA GPU is visible, else 'cpu'; 'cuda' without one is an error."""
    if requested not in ("auto", "cpu", "cuda"):
        raise InputError(f"--device {requested!r}: use auto, cpu or cuda")
    has_cuda = bool(torch.cuda.is_available())
    if requested == "cuda" and not has_cuda:
        raise DeviceError("--device cuda: torch sees no CUDA GPU (check nvidia-smi and the driver)")
    if requested == "auto":
        return "cuda" if has_cuda else "cpu"
    return requested

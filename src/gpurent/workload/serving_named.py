"""The serving workload a name stands for (`gpurent estimate --serve NAME`): a TOML/YAML file
with a [serve] table, a serving preset, or a zoo model served with the defaults."""

from __future__ import annotations

from pathlib import Path

from gpurent.errors import NotFoundError
from gpurent.workload.models import get_model
from gpurent.workload.presets import list_serving_presets, serving_preset
from gpurent.workload.serving import ServingWorkload, load_serving

FILE_SUFFIXES = (".toml", ".yaml", ".yml")


def named_serving(serve: str) -> ServingWorkload:
    """The workload of a file name (read), a serving preset or a zoo model."""
    text = serve.strip()
    if text.lower().endswith(FILE_SUFFIXES):
        return load_serving(Path(text))
    if text.lower() in list_serving_presets():
        return serving_preset(text)
    try:
        model = get_model(text)
    except NotFoundError:
        raise NotFoundError(
            "serving preset or model", text, [*list_serving_presets(), "<zoo model>", "FILE.toml"]
        ) from None
    return ServingWorkload(model=model.name, name=model.name)

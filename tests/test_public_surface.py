"""Each package's public surface: an `__all__` whose every name exists and is documented (a
docstring on functions and classes; an attribute docstring beside constants), and lazy
packages that import no submodule until a name is used."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import gpurent
from gpurent.errors import MissingExtraError

SRC = Path(gpurent.__file__).parent
PACKAGES = [
    "gpurent",
    *sorted(m.name for m in pkgutil.walk_packages(gpurent.__path__, "gpurent.") if m.ispkg),
]


@cache
def _documented_constants(package: str) -> frozenset[str]:
    """Names assigned at module level and followed by a string (an attribute docstring) in any
    module of `package`'s folder."""
    folder = SRC.joinpath(*package.split(".")[1:])
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for node, after in itertools.pairwise(body):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            if documented and isinstance(after.value.value, str):
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(names)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_exists_and_is_documented(package: str) -> None:
    try:
        module = importlib.import_module(package)
    except MissingExtraError:
        pytest.skip(f"{package} needs an extra that is not installed")
    assert module.__doc__ and module.__doc__.strip(), f"{package} has no docstring"
    names = getattr(module, "__all__", None)
    assert isinstance(names, list), f"{package} has no __all__ list"
    assert len(set(names)) == len(names), f"{package}.__all__ repeats a name"
    undocumented = []
    for name in names:
        try:
            value = getattr(module, name)
        except MissingExtraError:  # a framework callback whose framework is not installed
            continue
        if inspect.ismodule(value) or inspect.isclass(value) or inspect.isroutine(value):
            if not (value.__doc__ or "").strip():
                undocumented.append(name)
        elif name not in _documented_constants(package):
            undocumented.append(name)
    assert not undocumented, f"{package}: no docstring on {', '.join(undocumented)}"


def test_an_unknown_name_of_a_lazy_package_is_an_attribute_error() -> None:
    import gpurent.spot

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = gpurent.spot.nothing  # type: ignore[attr-defined]
    assert gpurent.spot.Trace.__module__ == "gpurent.spot.io.trace"


def test_lazy_packages_import_no_submodule_until_asked() -> None:
    """`import gpurent.spot` runs whenever pricing or runtime import `spot.interval`: it loads
    no simulator (numpy); `import gpurent.monitor` and `gpurent.cli` load none of their parts."""
    code = (
        "import sys, gpurent.spot, gpurent.monitor, gpurent.cli, gpurent.report\n"
        "print(','.join(m for m in sys.modules if m.startswith(('gpurent.spot.', "
        "'gpurent.monitor.', 'gpurent.cli.', 'gpurent.report.')) or m == 'numpy'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""

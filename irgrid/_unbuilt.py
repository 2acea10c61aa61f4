"""A clear error for the kernels of an un-built source folder.

`import irgrid` from a clone's root imports the source folder, which has no compiled kernels unless it
was installed editable; the first kernel import would then be a bare ModuleNotFoundError. A finder at
the end of `sys.meta_path` is asked only after every real finder failed, so it costs nothing when the
kernels exist and turns their absence into one line saying what to run.
"""
from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from pathlib import Path

from .errors import NotBuiltError

_PACKAGE = __name__.rpartition(".")[0] + "._kernels."


class _MissingKernels(MetaPathFinder):
    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        if fullname.startswith(_PACKAGE):
            source = Path(__file__).resolve().parent
            raise NotBuiltError(f"irgrid's compiled kernels are not built in {source} (no {fullname}): from a "
                              "clone run `pip install -e .` there, or `pip install .` and run outside the "
                              "source folder")


def install() -> None:
    """Append the finder once (a re-imported irgrid must not stack copies)."""
    if not any(isinstance(finder, _MissingKernels) for finder in sys.meta_path):
        sys.meta_path.append(_MissingKernels())

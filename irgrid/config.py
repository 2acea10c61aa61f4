"""`irgrid.show_config()`: what this build and process will use."""
from __future__ import annotations

import os
import sys

from ._version import __version__
from .threads import available_cores, get_num_threads


def config() -> dict:
    from ._kernels import _openmp

    return {
        "irgrid": __version__,
        "python": sys.version.split()[0],
        "openmp": _openmp.openmp_enabled(),
        "threads": get_num_threads(),
        "available_cores": available_cores(),
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        "GOMP_SPINCOUNT": os.environ.get("GOMP_SPINCOUNT"),
        "openvino_library": _native_library(),
        "IRGRID_AUTO": _auto_mode(),
    }


def _native_library() -> str:
    """The native OpenVINO extension library's path and the OpenVINO it was built for, or why there is none."""
    from .openvino.native import NativeLibraryError, built_for, library_path

    try:
        return f"{library_path()} (built for OpenVINO {built_for()})"
    except NativeLibraryError as exc:
        return f"none: {exc.reason}"


def _auto_mode() -> str:
    """How irgrid chooses where two implementations both run: `auto`'s runtime, GridSample-9's replacement
    (irgrid.timing.auto_mode), or why the setting is refused."""
    from .timing import auto_mode
    from .errors import ConfigError

    try:
        return auto_mode()
    except ConfigError as exc:
        return f"refused: {exc}"


def show_config() -> None:
    """Print version, whether OpenMP was built in, and the thread count."""
    for key, value in config().items():
        print(f"{key:>16}: {value}")

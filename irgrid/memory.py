"""Allocation guard: an output larger than this machine's memory is an irgrid error, not a crash."""
from __future__ import annotations

import functools
import os

import numpy as np

from .errors import ShapeError
from .ir.dims import format_shape, num_elements


@functools.cache
def physical_memory() -> int:
    """This machine's RAM in bytes, read once (every allocation asks; two sysconf calls a time cost
    about a microsecond)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def check_fits(shape: tuple[int, ...], dtype: np.dtype, layer=None, what: str = "output") -> None:
    """A ShapeError naming `what` (an output, an input) when the array would not fit in this machine."""
    size = num_elements(shape) * np.dtype(dtype).itemsize
    if size > physical_memory():
        raise ShapeError(f"{what} {format_shape(tuple(shape))} needs {size / 2**30:.1f} GiB, more than this "
                         f"machine's {physical_memory() / 2**30:.1f} GiB", layer=layer)


def allocate(shape: tuple[int, ...], dtype: np.dtype, layer=None) -> np.ndarray:
    """np.empty after `check_fits`."""
    check_fits(shape, dtype, layer)
    return np.empty(shape, dtype)

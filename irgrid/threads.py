"""The one threads knob: `set_num_threads`, env `IRGRID_NUM_THREADS`, CLI `-nthreads`.

The count is resolved here and passed to every kernel as `prange(..., num_threads=n)`; kernels split
work into fixed-size chunks, so the count changes speed, never results.
"""
from __future__ import annotations

import os

_override: int | None = None


def available_cores() -> int:
    """Cores this process may run on (its affinity mask, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def set_num_threads(n: int | None) -> None:
    """Threads for irgrid's kernels; None restores the default (env, else the available cores)."""
    global _override
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise ValueError(f"thread count must be a positive integer, got {n!r}")
    _override = n


def get_num_threads() -> int:
    if _override is not None:
        return _override
    env = os.environ.get("IRGRID_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return available_cores()

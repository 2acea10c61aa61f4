"""The one threads knob. The kernel thread count is the first of these that is set:

1. an explicit count: `irgrid.set_num_threads(n)`, CLI `-nthreads N`, `compile_model(threads=n)`;
2. env `IRGRID_NUM_THREADS` (irgrid's own, so it can differ from other OpenMP libraries');
3. env `OMP_NUM_THREADS`, its first comma-separated entry (the outer level, as OpenMP reads it);
4. the CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (cgroup v2
   `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`; ceil(quota / period), at least 1), since a
   container allowed 2 CPUs of a 64-core host runs 64 threads 32x oversubscribed.

A variable that is set but not a positive integer of at most MAX_THREADS is a `ConfigError` naming it,
raised when the count is resolved: silently falling back would run with a count nobody asked for.

The count is passed to every kernel as `prange(..., num_threads=n)` (which is why OMP_NUM_THREADS is read
here: an explicit num_threads overrides it in OpenMP itself); kernels split work into fixed-size chunks,
so the count changes speed, never results. Callers that run kernels take it from `kernel_threads`.

A process forked after irgrid's kernels ran on several threads runs them on one, with a warning
(GNU OpenMP's workers are not copied by fork: `irgrid.forks`).
"""
from __future__ import annotations

import functools
import math
import numbers
import os
import warnings
from pathlib import Path

from .errors import ConfigError
from .forks import marks

_override: int | None = None
# The most threads irgrid accepts: OpenMP takes a C int, and a count far beyond any CPU's would make it
# start that many threads (a count above the CPUs available runs, oversubscribed).
MAX_THREADS = 1024
_ENV_VARS = ("IRGRID_NUM_THREADS", "OMP_NUM_THREADS")
_warned_fork = False


@functools.lru_cache(maxsize=8)
def cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """CPUs allowed by a cgroup CPU quota under `root` (v2, else v1), None when there is no quota.

    Read once per process: the thread count is resolved on every call, and reading these files each
    time cost ~170 us per call (more than a small kernel takes)."""
    quota = period = None
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        for v1 in (root / "cpu", root / "cpu,cpuacct"):
            try:
                quota = (v1 / "cpu.cfs_quota_us").read_text().strip()
                period = (v1 / "cpu.cfs_period_us").read_text().strip()
                break
            except OSError:
                continue
    try:
        q, p = int(quota), int(period)  # "max" (v2) or -1 (v1): no quota
    except (TypeError, ValueError):
        return None
    return max(1, math.ceil(q / p)) if q > 0 and p > 0 else None


def available_cores() -> int:
    """CPUs this process may use: its affinity mask (not the machine's total), capped by a cgroup quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    limit = cgroup_cpu_limit()
    return min(cores, limit) if limit is not None else cores


def validate_threads(n: object, source: str = "thread count") -> int:
    """`n` as an int if it is a positive integer (not a bool) of at most MAX_THREADS, else a ConfigError
    naming `source`."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= MAX_THREADS:
        raise ConfigError(f"{source} must be a positive integer of at most {MAX_THREADS}, got {n!r}")
    return int(n)


def set_num_threads(n: int | None) -> None:
    """Threads for irgrid's kernels; None restores the default (the environment, else the CPUs available)."""
    global _override
    _override = None if n is None else validate_threads(n)


def _from_env(name: str) -> int | None:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return None
    first = text.split(",")[0].strip() if name == "OMP_NUM_THREADS" else text.strip()
    if not (first.isascii() and first.isdigit()) or not 1 <= int(first) <= MAX_THREADS:
        raise ConfigError(f"{name}={text!r} is not a positive thread count of at most {MAX_THREADS}")
    return int(first)


def get_num_threads() -> int:
    """The thread count kernels run with, resolved in the order of this module's docstring (1 in a
    process forked after a team ran: the module's docstring)."""
    if _override is not None:
        return _runnable(_override)
    for name in _ENV_VARS:
        value = _from_env(name)
        if value is not None:
            return _runnable(value)
    return _runnable(available_cores())


def kernel_threads(requested: int | None = None) -> int:
    """The count to hand the kernels now: `requested` (an explicit count, validated by its caller),
    else get_num_threads(); either way 1 in a process forked after a team ran."""
    n = get_num_threads() if requested is None else requested
    if n > 1:
        if marks.child_of_openmp_team:
            return _runnable(n)
        marks.openmp_team = True
    return n


def _runnable(n: int) -> int:
    """`n`, or 1 (warning once) in a process forked after a team of threads ran."""
    global _warned_fork
    if n == 1 or not marks.child_of_openmp_team:
        return n
    if not _warned_fork:
        _warned_fork = True
        warnings.warn(f"irgrid: this process was forked after irgrid's kernels ran on several threads, so they "
                      f"run on 1 thread here, not {n} (GNU OpenMP cannot start threads in such a child); start "
                      "workers with the 'spawn' or 'forkserver' method to use more", RuntimeWarning, stacklevel=3)
    return 1

"""Choices irgrid makes by timing on the machine it runs on, and the setting that turns them off.

Which of two implementations is faster changes with the CPU (an AMD Zen host and an Intel Xeon have
swapped the winner of a GridSample by 2x), so where both can run, irgrid times them rather than trust a
table measured on another host: `auto`'s runtime (irgrid/devices.py) and the GridSample-9 layers that
irgrid's op runs inside OpenVINO (irgrid/openvino/gridsample9.py); and within irgrid's GridSample
kernel, the path a compiled model's GridSample step takes (`tunes_kernels`; the native library's op does
the same). IRGRID_AUTO=rules makes all three decide by their rules instead: the same choice on every run
and machine (the test suite sets it)."""
from __future__ import annotations

import os
import time
from typing import Callable, Mapping, Sequence

import numpy as np

from .errors import ConfigError

AUTO_MODES = ("measure", "rules")


def auto_mode() -> str:
    """How irgrid chooses where two implementations both run (env IRGRID_AUTO): `measure` (the default)
    times both, `rules` decides without running anything."""
    mode = os.environ.get("IRGRID_AUTO", "measure").strip().lower()
    if mode not in AUTO_MODES:
        raise ConfigError(f"IRGRID_AUTO={mode!r}: use one of {', '.join(AUTO_MODES)}")
    return mode


def tunes_kernels() -> bool:
    """Whether a compiled model's GridSample steps choose their kernel's path policies by timing them on
    their first call (`SamplePlan.tune`, kernels/core/grid_sample_tune.c): under IRGRID_AUTO=measure.
    Every path they choose among gives the same bits, so this changes speed only."""
    return auto_mode() == "measure"


def race(runtimes: Sequence[Callable], inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray], rounds: int,
         seconds: float, calls: int = 1, warm: int = 0) -> list[float]:
    """Each runtime's fastest call on `inputs` (seconds): one untimed call each, then rounds (at least
    one, at most `rounds`, none begun after `seconds`) in which each runtime in turn makes `warm` untimed
    calls and `calls` timed ones back to back. The fastest call, as the least disturbed by other work on
    the machine; `warm` for runtimes whose first call after another's finds its threads asleep and its
    data out of the caches (two OpenVINO models taking turns)."""
    for run in runtimes:
        run(inputs)
    best = [float("inf")] * len(runtimes)
    start = time.perf_counter()
    for _ in range(rounds):
        for index, run in enumerate(runtimes):
            for _ in range(warm):
                run(inputs)
            for _ in range(calls):
                begin = time.perf_counter()
                run(inputs)
                best[index] = min(best[index], time.perf_counter() - begin)
        if time.perf_counter() - start >= seconds:
            break
    return best

"""Two threads against one on each GridSample case's kernel, alternating in one process: the goal "2 threads
faster than 1" of benchmarks/README.md's goals table.

    python benchmarks/thread_scaling.py --rounds 7 --cases 2d_bilinear,raft

Per round and case, the fastest of 3 calls (wall time) at 1 thread, then at 2 (a `SamplePlan`, the
kernel alone); prints each count's median and the median (quartiles) of the rounds' 2-thread over 1-thread
ratios. Alternating within one process puts both counts in the same minutes of a host whose speed drifts.
The environment's instruction-set caps apply (bench.py's ISA_CAPS, named in the header).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the cases, their inputs and the CPU's name)

from irgrid.ops.grid_sample import sample_plan  # noqa: E402


def fastest(plan, x, grid, out, threads: int, calls: int = 3) -> float:
    """The fastest of `calls` calls at `threads` threads, in ms."""
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        plan(x, grid, out, threads)
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (default 7)")
    parser.add_argument("--cases", default="", help="comma-separated GridSample case filters (default: all)")
    args = parser.parse_args()
    print(f"{bench._cpu_name()}: fastest of 3 calls, ms, {args.rounds} alternating rounds in one process")
    print(f"{'case':<40}{'1 thread':>10}{'2 threads':>11}{'2 / 1':>24}")
    for case in bench.kernel_cases([p for p in args.cases.split(",") if p]):
        inputs = bench._inputs(case)
        x, grid = inputs["X"], inputs["grid"]
        plan = sample_plan(x.shape, grid.shape, x.dtype, bench._MODES[case["mode"]][1], "zeros", False)
        out = plan(x, grid, None, 2)
        times: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(args.rounds):
            for threads in (1, 2):
                times[threads].append(fastest(plan, x, grid, out, threads))
        ratios = sorted(two / one for one, two in zip(times[1], times[2]))
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
        print(f"{case['name']:<40}{statistics.median(times[1]):>10.3f}{statistics.median(times[2]):>11.3f}"
              f"{statistics.median(ratios):>12.2f} ({q1:.2f}-{q3:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

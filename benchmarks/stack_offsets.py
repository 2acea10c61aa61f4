"""How much a GridSample kernel's time depends on where its stack frame lies, in one process.

    python benchmarks/stack_offsets.py --cases 3d_trilinear/random --depths 8 --rounds 4 --fresh

Linux places each process's stack at a random offset within its page, so the kernel's frame has
different low address bits in every process (and on every thread). On this project's Zen 4 VM,
3-D trilinear on random grids took 3.4-4.1 ms in some processes and 4.4-5.4 ms in others, timed with a
new plan and output per call (`--fresh`, as `irgrid.ops.grid_sample.sample` runs it), and alternated
between the two within one process as the stack depth changed (benchmarks/README.md, "Where the stack
lies"). This script calls a case's kernel (a `SamplePlan`, one thread, CPU time) at several C stack
depths, each one more nested `map` call, interleaved over rounds, and prints the median per depth as
a table and JSON. Compare two builds by their ranges over depths and over several processes, never
by one process's number.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (the cases and their inputs)

from irgrid.ops.grid_sample import sample_plan  # noqa: E402


def at_depth(depth: int, fn: Callable[[], float]) -> float:
    """fn() called under `depth` more C frames (map's iterator calls back into Python each time)."""
    return fn() if depth == 0 else list(map(lambda _: at_depth(depth - 1, fn), [0]))[0]


def kernel_timer(case: dict, calls: int, fresh: bool) -> Callable[[], float]:
    """The fastest of `calls` kernel calls, in CPU seconds of this thread: one plan and output array
    for all calls, or (`fresh`) a new plan and output per call, as `irgrid.ops.grid_sample.sample` does."""
    inputs = bench._inputs(case)
    x, grid = inputs["X"], inputs["grid"]

    def new_plan():
        return sample_plan(x.shape, grid.shape, x.dtype, bench._MODES[case["mode"]][1], "zeros", False)

    kept = new_plan()
    kept_out = np.empty(kept.out_shape, x.dtype)

    def best() -> float:
        times = []
        for _ in range(calls):
            plan = new_plan() if fresh else kept
            out = np.empty(plan.out_shape, x.dtype) if fresh else kept_out
            start = time.thread_time()
            plan(x, grid, out, 1)
            times.append(time.thread_time() - start)
        return min(times)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="3d_trilinear/random", help="comma-separated GridSample case filters")
    parser.add_argument("--depths", type=int, default=8, help="stack depths 0 .. N-1")
    parser.add_argument("--rounds", type=int, default=4, help="rounds over the depths (order reversed every other)")
    parser.add_argument("--calls", type=int, default=5, help="calls per measurement (the fastest counts)")
    parser.add_argument("--fresh", action="store_true", help="a new plan and output array per call")
    parser.add_argument("--json", dest="json_path", help="also write the JSON results to this file")
    args = parser.parse_args()
    patterns = [p for p in args.cases.split(",") if p]
    cases = bench.kernel_cases(patterns)
    if not cases:
        parser.error(f"--cases {args.cases!r} matches no GridSample case")
    depths = list(range(args.depths))
    rows = []
    for case in cases:
        timer = kernel_timer(case, args.calls, args.fresh)
        samples: dict[int, list[float]] = {d: [] for d in depths}
        for r in range(args.rounds):
            for d in (depths if r % 2 == 0 else depths[::-1]):
                samples[d].append(at_depth(d, timer) * 1e3)
        medians = [statistics.median(samples[d]) for d in depths]
        rows.append({"case": case["name"], "depth_ms": medians, "max_over_min": max(medians) / min(medians)})
    what = "a new plan and output per call" if args.fresh else "one plan and output"
    print(f"kernel CPU ms (1 thread, {what}) at C stack depths 0..{args.depths - 1}, median of {args.rounds} rounds")
    for row in rows:
        print(f"{row['case']:<36} " + " ".join(f"{ms:6.2f}" for ms in row["depth_ms"])
              + f"   max/min {row['max_over_min']:.2f}")
    text = json.dumps({"fresh": args.fresh, "rows": rows}, indent=2)
    print("\nJSON:")
    print(text)
    if args.json_path:
        Path(args.json_path).write_text(text + "\n")


if __name__ == "__main__":
    main()

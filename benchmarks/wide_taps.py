"""Small GridSample calls by 8 lanes or 16: where AVX-512's wider taps stop paying (issue 42).

    python benchmarks/wide_taps.py [--threads 1] [--pairs 150]

On an AVX-512 CPU the gather path and the pair reads compute f32 taps 16 lanes at a time or 8 (the
`avx512` policy; the same bits either way). This times one prepared plan (`sample_plan`, as a
compiled model calls it) of 2-D bilinear GridSample, X 1xCx64x64 on random grids of 4 to 4096 points,
with the policy "never" (8 lanes) and "always" (16) alternating in blocks of calls in one process, and
reports each one's tenth percentile and the median of their ratio over the pairs.

Each call is followed by about 20 us of scalar work (--between; Python's own loop), as a layer in a model
is followed by other layers and the framework's own code. That is where 512-bit instructions cost: on
Intel's server cores they lower the core's clock (the AVX-512 frequency licence) for the code after them
too, so alone in a loop the 16-lane taps win from 64 points on, while followed by scalar work they lose
below about 1024. The crossover sets WIDE_MIN_POINTS in kernels/core/grid_sample.c, below which "auto"
takes 8 lanes.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def _scalar_work(n: int) -> int:
    total = 0
    for k in range(n):
        total += k & 7
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=150)
    parser.add_argument("--between", type=int, default=200, help="iterations of scalar work after each call")
    args = parser.parse_args()
    from irgrid._kernels import sampling
    from irgrid.ops.grid_sample import sample_plan

    if not sampling.avx512_available():
        sys.exit("this CPU has no AVX-512 F/VL/BW/DQ: there is one way only")
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(1000):
        _scalar_work(args.between)
    between_us = (time.perf_counter() - start) * 1e3
    print(f"{args.threads} thread(s); us per call and its {between_us:.1f} us of scalar work, tenth percentile of"
          f" {args.pairs} blocks each")
    for channels, side in ((1, 2), (1, 8), (1, 16), (1, 23), (1, 32), (1, 64), (2, 16), (2, 32), (3, 16), (3, 32)):
        x = rng.standard_normal((1, channels, 64, 64)).astype(np.float32)
        grid = rng.uniform(-1, 1, (1, side, side, 2)).astype(np.float32)
        plan = sample_plan(x.shape, grid.shape, x.dtype, "linear", "zeros", False)
        out = plan(x, grid, None, args.threads)
        calls = 50
        times: dict[str, list[float]] = {"never": [], "always": []}
        for _ in range(args.pairs):
            for policy in times:
                sampling.use_avx512(policy)
                plan(x, grid, out, args.threads)
                start = time.perf_counter()
                for _ in range(calls):
                    plan(x, grid, out, args.threads)
                    _scalar_work(args.between)
                times[policy].append((time.perf_counter() - start) / calls * 1e6)
        sampling.use_avx512("auto")
        tenth = {p: sorted(t)[len(t) // 10] for p, t in times.items()}
        ratio = statistics.median(a / b for a, b in zip(times["always"], times["never"]))
        print(f"C={channels} points={side * side:5d}  8 lanes {tenth['never']:7.2f}  16 lanes {tenth['always']:7.2f}"
              f"  16/8 paired median {ratio:.3f}", flush=True)


if __name__ == "__main__":
    main()

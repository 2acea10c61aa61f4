#!/usr/bin/env python
"""Where irgrid's GridSample is slowest against torch's: a sweep over what bench.py's cases hold fixed.

    python benchmarks/sweep.py --threads 1                       # every mode, padding, align_corners, C
    python benchmarks/sweep.py --ranks 2 --modes nearest --paddings reflection --channels 1 2 3 4
    python benchmarks/sweep.py --threads 2 --below 1.5           # only the rows under 1.5x

bench.py's cases take zeros padding and align_corners=0 at a few channel counts; a user's model may take
any of them. This times irgrid's kernel (a prepared plan, as a compiled model calls it) and torch's
`grid_sample` on the same arrays, one after the other in one process at --threads (torch's intra-op
threads too), for every rank, mode, padding, align_corners, channel count and grid kind given: X
1xCx256x256 (2-D) or 1xCx32x64x64 (3-D; torch has no 3-D bicubic), bench.py's smooth and random grids.
Each time is the fastest call within --seconds. It prints torch's time over irgrid's per row (above 1:
irgrid faster) and the largest difference of the outputs (nearest's ties may differ: irgrid rounds
its coordinates as ONNX's reference does, docs/semantics.md).

It finds the rows worth a closer look; one process on a shared VM is one draw, so a finding is
measured again with ab.py (a change against main) or bench.py (the peers each in its own process)
before it counts (benchmarks/README.md, "Nearest with reflection padding by points").
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import bench

MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}  # irgrid1's name: torch's
PADDINGS = ("zeros", "border", "reflection")


def fastest_ms(fn, seconds: float) -> float:
    """The fastest of calls to fn within `seconds` (at least 5), in ms."""
    fn()
    best, calls, end = float("inf"), 0, time.perf_counter() + seconds
    while time.perf_counter() < end or calls < 5:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        calls += 1
    return best * 1e3


def shapes(rank: int, channels: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """X's and the grid's shapes of a rank."""
    if rank == 2:
        return (1, channels, 256, 256), (1, 256, 256, 2)
    return (1, channels, 32, 64, 64), (1, 32, 64, 64, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ranks", type=int, nargs="+", default=[2, 3], choices=[2, 3])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--paddings", nargs="+", default=list(PADDINGS), choices=PADDINGS)
    parser.add_argument("--aligns", type=int, nargs="+", default=[0, 1], choices=[0, 1])
    parser.add_argument("--channels", type=int, nargs="+", default=[1, 2, 3, 4, 8, 32])
    parser.add_argument("--seconds", type=float, default=0.3, help="per row and library")
    parser.add_argument("--below", type=float, default=None, help="print only rows whose ratio is under this")
    args = parser.parse_args()

    import torch
    from irgrid.ops.grid_sample import sample_plan

    torch.set_num_threads(args.threads)
    print(f"# {bench._cpu_name()}; {args.threads} thread(s); torch {torch.__version__}; "
          "torch's time over irgrid's (above 1: irgrid faster)")
    rng = np.random.default_rng(bench.SEED)
    for rank, mode, padding, align, channels, kind in itertools.product(
            args.ranks, args.modes, args.paddings, args.aligns, args.channels, bench.GRID_KINDS):
        if rank == 3 and mode == "cubic":
            continue
        x_shape, grid_shape = shapes(rank, channels)
        x = rng.uniform(-1, 1, x_shape).astype(np.float32)
        grid = (rng.uniform(-1.1, 1.1, grid_shape).astype(np.float32) if kind == "random"
                else bench._smooth_grid(grid_shape, rng))
        plan = sample_plan(x.shape, grid.shape, x.dtype, mode, padding, bool(align))
        tx, tg = torch.from_numpy(x), torch.from_numpy(grid)

        def peer():
            return torch.nn.functional.grid_sample(tx, tg, mode=MODES[mode], padding_mode=padding,
                                                   align_corners=bool(align))

        ours = fastest_ms(lambda: plan(x, grid, None, args.threads), args.seconds)
        theirs = fastest_ms(peer, args.seconds)
        ratio = theirs / ours
        if args.below is not None and ratio >= args.below:
            continue
        diff = float(np.max(np.abs(plan(x, grid, None, args.threads) - peer().numpy())))
        print(f"{rank}-D {mode:8s} {padding:10s} align={align} C={channels:<3d} {kind:6s} "
              f"irgrid {ours:8.4f} ms  torch {theirs:8.4f} ms  ratio {ratio:6.2f}  max|diff| {diff:.1e}",
              flush=True)


if __name__ == "__main__":
    main()

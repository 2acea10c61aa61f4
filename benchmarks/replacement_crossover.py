#!/usr/bin/env python
"""From how many channels irgrid's GridSample beats OpenVINO's GridSample-9 inside OpenVINO: the
measurement behind `_SAMPLING_FROM_CHANNELS` (irgrid/openvino/gridsample9.py), the table by which
irgrid's OpenVINO device puts irgrid's op in place of GridSample-9 where it does not time the layer.

    python benchmarks/replacement_crossover.py                # every mode, grid and channel count
    python benchmarks/replacement_crossover.py --modes nearest --channels 8 16 32
    python benchmarks/replacement_crossover.py --padding reflection --modes bilinear

bench.py's GridSample cases at X 1xCx256x256, grid 1x256x256x2 (its smooth warp and its uniform random
grid), zeros padding (or --padding), f32, run as bench.py runs them (the two peers only): GridSample-9
in OpenVINO ("OpenVINO") and the same layer as irgrid1 through irgrid's native library ("OV+irgrid ext",
the op the device puts in its place), each in its own fresh process per round, back-to-back calls as
benchmark_app makes them, --rounds interleaved rounds, the median of the pooled samples. The table gives GridSample-9's time over irgrid's
op's (above 1: irgrid's op is faster).

Why not alternate the two in one process: two compiled models then take turns with their own stream
threads and their own 2-3 copies of the data, and the op that follows the other found its threads asleep
and its data out of the caches. On a Zen 5 host that made irgrid's op look 1.5-2x slower at a few
channels than it runs back to back (one channel: 0.076 ms alternating, 0.045 ms in its own process).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench import _cpu_name, _rounds, _write_ir

MODES = ("bilinear", "nearest", "bicubic")
GRIDS = ("smooth", "random")
CHANNELS = (1, 2, 4, 8, 16, 32)
SIDE = 256
PEERS = ("openvino", "openvino_ext")


def ratio(tmp: Path, mode: str, padding: str, grid: str, channels: int, threads: int, rounds: int,
          repeat: int) -> float:
    """GridSample-9's median time over irgrid's op's, each in its own processes."""
    name = f"grid_sample/2d_{mode}_{padding}_c{channels}/{grid}"
    case = dict(name=name, kind="grid_sample", mode=mode, padding=padding, grid_kind=grid,
                x=(1, channels, SIDE, SIDE), grid=(1, SIDE, SIDE, 2), peers=PEERS)
    xml = tmp / (name.replace("/", "_") + ".xml")
    _write_ir(case, xml)
    specs = {peer: {"peer": peer, "case": case, "xml": str(xml), "threads": threads, "repeat": repeat,
                    "min_sample_ms": 25.0, "output": str(tmp / f"{xml.stem}.{peer}.npy")} for peer in PEERS}
    runs = _rounds(specs, {peer: None for peer in PEERS}, rounds, 600.0, 2, name)
    if not all(runs[peer].get("ok") for peer in PEERS):
        raise SystemExit(f"{name}: {[runs[peer].get('error') for peer in PEERS]}")
    return runs["openvino"]["timing"]["median_ms"] / runs["openvino_ext"]["timing"]["median_ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--grids", nargs="+", choices=GRIDS, default=list(GRIDS))
    parser.add_argument("--padding", choices=("zeros", "border", "reflection"), default="zeros")
    parser.add_argument("--channels", nargs="+", type=int, default=list(CHANNELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=7, help="samples per process")
    args = parser.parse_args()
    import openvino as ov

    print(f"CPU: {_cpu_name()}; OpenVINO {ov.get_version()}; {args.padding} padding; {args.threads} threads; "
          "each in its own process, "
          f"{args.rounds} rounds x {args.repeat} samples; GridSample-9's time over irgrid's op's (above 1: irgrid's "
          "faster)\n")
    print("| mode | grid | " + " | ".join(f"C={c}" if k == 0 else str(c) for k, c in enumerate(args.channels)) + " |")
    print("|---|---|" + "---|" * len(args.channels))
    with tempfile.TemporaryDirectory(prefix="irgrid-crossover-") as tmp:
        for mode in args.modes:
            for grid in args.grids:
                cells = [ratio(Path(tmp), mode, args.padding, grid, c, args.threads, args.rounds, args.repeat)
                         for c in args.channels]
                print(f"| {mode} | {grid} | " + " | ".join(f"{r:.2f}" for r in cells) + " |", flush=True)


if __name__ == "__main__":
    sys.exit(main())

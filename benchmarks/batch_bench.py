#!/usr/bin/env python
"""Items per second of `irgrid batch` (Ray Data) against a plain loop, on the flow-warp sample.

    python benchmarks/batch_bench.py                 # 512 items (~1 min on 2 idle cores)
    python benchmarks/batch_bench.py --items 16      # smoke run
    python benchmarks/batch_bench.py --json out.json

Method
- Items: `--items` .npz files of the flow-warp sample's shapes (image 1x3x96x128, flow 1x2x96x128, f32,
  240 KiB each; seeded random, flows of a few pixels) in a temporary directory; every run reads each
  item from disk and writes its outputs (.npz) to a fresh directory, as `irgrid batch` does.
- Plain loop: one process, the model compiled once, `load -> run -> save` per item, at 1 thread and at
  the CPUs this process may use.
- Ray: a local instance (`irgrid.ray.start_ray`, as `irgrid batch` without --address), whose start-up is
  timed apart; then `irgrid.ray.run_files` (what `irgrid batch` runs) with 1 and 2 actors of 1 thread.
  "end to end" counts from submitting the dataset to the last item, so it includes starting the
  actors (a worker process each, importing irgrid and compiling the model); "steady" is the rate
  between the first and the last item to finish, the throughput a long run approaches.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import irgrid
from irgrid.npz import save_outputs
from irgrid.threads import available_cores

MODEL = Path(__file__).resolve().parents[1] / "samples" / "flow_warp" / "model.xml"


def write_items(folder: Path, count: int) -> list[str]:
    rng = np.random.default_rng(0)
    names = []
    for i in range(count):
        name = f"{i // 100:02d}/item{i:04d}.npz"
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        np.savez(folder / name, image=rng.standard_normal((1, 3, 96, 128), dtype=np.float32),
                 flow=(rng.standard_normal((1, 2, 96, 128), dtype=np.float32) * 3))
        names.append(name)
    return names


def plain_loop(input_dir: Path, output_dir: Path, names: list[str], threads: int) -> dict:
    compiled = irgrid.compile_model(MODEL, threads=threads)
    start = time.perf_counter()
    for name in names:
        with np.load(input_dir / name) as item:
            outputs = compiled(dict(item))
        target = output_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        save_outputs(str(target), outputs)
    seconds = time.perf_counter() - start
    return {"run": f"plain loop, {threads} thread{'s' if threads > 1 else ''}", "seconds": seconds,
            "end_to_end": len(names) / seconds, "steady": len(names) / seconds}


def ray_run(input_dir: Path, output_dir: Path, names: list[str], actors: int) -> dict:
    import irgrid.ray as batch

    start = time.perf_counter()
    finished = []
    for _, error in batch.run_files(MODEL, input_dir, output_dir, names, "irgrid", 1, actors):
        if error:
            raise SystemExit(f"item failed: {error}")
        finished.append(time.perf_counter())
    seconds = finished[-1] - start
    steady_span = finished[-1] - finished[0]
    return {"run": f"irgrid batch, {actors} actor{'s' if actors > 1 else ''} x 1 thread", "seconds": seconds,
            "end_to_end": len(names) / seconds,
            "steady": (len(names) - 1) / steady_span if steady_span > 0 else float("nan")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=512)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    try:
        import irgrid.ray as batch
    except ModuleNotFoundError:
        print("needs Ray: pip install 'irgrid[ray]'", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="irgrid-batch-bench-"))
    try:
        names = write_items(root / "in", args.items)
        cores = available_cores()
        results = [plain_loop(root / "in", root / f"loop{t}", names, t) for t in sorted({1, cores})]
        start = time.perf_counter()
        started = batch.start_ray(None)
        ray_start = time.perf_counter() - start
        try:
            results += [ray_run(root / "in", root / f"ray{a}", names, a) for a in (1, 2)]
        finally:
            if started:
                batch.ray.shutdown()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"flow_warp sample, {args.items} items (.npz in and out), {cores} CPUs; Ray start-up {ray_start:.2f} s "
          "(not counted below)")
    print(f"{'run':<34} {'seconds':>8} {'items/s end to end':>19} {'items/s steady':>15}")
    for r in results:
        print(f"{r['run']:<34} {r['seconds']:>8.2f} {r['end_to_end']:>19.1f} {r['steady']:>15.1f}")
    if args.json:
        args.json.write_text(json.dumps({"items": args.items, "cpus": cores, "ray_start_seconds": ray_start,
                                         "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

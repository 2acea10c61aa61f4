#!/usr/bin/env python
"""irgrid's operators inside OpenVINO: the native extension library against the Python ops (and
OpenVINO's own GridSample-9, and irgrid's runtime), each way in its own process.

    python benchmarks/native_extension.py                 # all three parts, 2 threads
    python benchmarks/native_extension.py --part tiny --rounds 5

Parts (medians over --rounds fresh processes per way, interleaved; ratios against the first way):
- tiny: per inference of GridSample X 1x1x4x4, grid 1x2x2x2 (one stream, latency hint, input tensors set
  once, `infer()` back to back): the native op, the Python op, OpenVINO's GridSample-9.
- volume: 3-D trilinear X 1x16x32x64x64 on a smooth warp, zeros padding: irgrid's runtime (compiled
  model, its own OpenMP threads) against OpenVINO with the native library and with the Python ops.
- deform: DeformConv irgrid1, X 1x256x64x64, 256 3x3 filters, pads 1, with mask and bias (a DCNv2
  layer of a detector's head): irgrid's runtime against OpenVINO with the native library and with the
  Python ops.
- throughput: samples/volume_warp in OpenVINO with `-hint throughput` (2 streams, an AsyncInferQueue of
  4 requests for --seconds): inferences per second, native against the Python ops.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _deform_ir(tmp: Path) -> tuple[Path, list[np.ndarray]]:
    from irgrid.builder import IRBuilder

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in
              ((1, 256, 64, 64), (256, 256, 3, 3), (1, 18, 64, 64), (256,))]
    arrays.append(rng.uniform(0, 1, (1, 9, 64, 64)).astype(np.float32))
    b = IRBuilder("deform")
    params = [b.parameter(name, a.shape) for name, a in zip(["x", "w", "offsets", "bias", "mask"], arrays)]
    (y,) = b.layer("DeformConv", "irgrid1", params, {"pads": [1, 1, 1, 1]})
    b.result(y)
    path = tmp / "deform.xml"
    b.save(path)
    return path, arrays


def _ir(tmp: Path, part: str, version: str) -> tuple[Path, list[np.ndarray]]:
    from irgrid.builder import IRBuilder

    if part == "deform":
        return _deform_ir(tmp)
    rng = np.random.default_rng(0)
    if part == "tiny":
        x, g = rng.standard_normal((1, 1, 4, 4)), rng.uniform(-1, 1, (1, 2, 2, 2))
    else:
        x = rng.standard_normal((1, 16, 32, 64, 64))
        axes = np.meshgrid(*[(np.arange(n) + 0.5) / n * 2 - 1 for n in (32, 64, 64)], indexing="ij")
        grid = np.stack(axes[::-1], axis=-1) * 1.08
        c, s = np.cos(0.2), np.sin(0.2)
        g = grid.copy()
        g[..., 0], g[..., 1] = c * grid[..., 0] - s * grid[..., 1], s * grid[..., 0] + c * grid[..., 1]
        g = g[None]
    x, g = x.astype(np.float32), g.astype(np.float32)
    b = IRBuilder(part)
    xp, gp = b.parameter("x", x.shape), b.parameter("g", g.shape)
    mode = "bilinear" if version == "opset9" else "linear"
    (y,) = b.layer("GridSample", version, [xp, gp], {"mode": mode, "padding_mode": "zeros", "align_corners": False})
    b.result(y)
    path = tmp / f"{part}_{version}.xml"
    b.save(path)
    return path, [x, g]


def _core(way: str):
    import openvino as ov

    import irgrid.openvino as iov

    core = ov.Core()
    if way == "native":
        core.add_extension(str(iov.library_path()))
    elif way == "python":
        core.add_extension(iov.extensions())
    return core


def _per_call_ms(fn, min_s: float = 0.3, samples: int = 7) -> float:
    for _ in range(3):
        fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.05:
        fn()
        calls += 1
    calls = max(1, int(calls * min_s / 0.05 / samples))
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e3)
    return statistics.median(times)


def worker(part: str, way: str, threads: int, seconds: float) -> float:
    """One measurement in this process: ms per inference (tiny, volume) or inferences per second."""
    import openvino as ov

    with tempfile.TemporaryDirectory() as tmp:
        if part == "throughput":
            model = ROOT / "samples" / "volume_warp" / "model.xml"
            inputs = dict(np.load(model.with_name("inputs.npz")))
            compiled = _core(way).compile_model(str(model), "CPU", dict(F32, PERFORMANCE_HINT="THROUGHPUT"))
            queue = ov.AsyncInferQueue(compiled, 4)
            done = [0]
            queue.set_callback(lambda *_: done.__setitem__(0, done[0] + 1))
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                queue.start_async(inputs)
            queue.wait_all()
            return done[0] / (time.perf_counter() - start)
        version = "opset9" if way == "openvino" else "irgrid1"
        path, arrays = _ir(Path(tmp), part, version)
        if way == "runtime":
            import irgrid

            compiled = irgrid.compile_model(path, threads=threads)
            return _per_call_ms(lambda: compiled(arrays))
        compiled = _core(way).compile_model(str(path), "CPU", dict(F32, INFERENCE_NUM_THREADS=threads, NUM_STREAMS=1))
        request = compiled.create_infer_request()
        for k, array in enumerate(arrays):
            request.set_input_tensor(k, ov.Tensor(array, shared_memory=True))
        # As benchmark_app runs (and bench.py): the outputs not copied into fresh arrays per call, which
        # cost this 8 MiB output 1.8 ms a call on the Xeon host (12% of the native op's profile).
        return _per_call_ms(lambda: request.infer(share_outputs=True))


WAYS = {"tiny": ("native", "python", "openvino"), "volume": ("runtime", "native", "python"),
        "deform": ("runtime", "native", "python"), "throughput": ("native", "python")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=list(WAYS), action="append")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker, args.threads, args.seconds)))
        return
    from bench import _cpu_name

    print(f"CPU: {_cpu_name()}; {args.threads} threads; {args.rounds} rounds; each way in its own process")
    for part in args.part or list(WAYS):
        results: dict[str, list[float]] = {way: [] for way in WAYS[part]}
        for _ in range(args.rounds):
            for way in WAYS[part]:
                out = subprocess.run([sys.executable, __file__, "--worker", part, way, "--threads", str(args.threads),
                                      "--seconds", str(args.seconds)], capture_output=True, text=True, check=True)
                results[way].append(json.loads(out.stdout.strip().splitlines()[-1]))
        unit = "inferences/s" if part == "throughput" else "ms per inference"
        first = statistics.median(results[WAYS[part][0]])
        print(f"\n{part} ({unit}, median of {args.rounds}; ratio = way / {WAYS[part][0]})")
        for way, values in results.items():
            median = statistics.median(values)
            print(f"  {way:>9}: {median:10.4f}   ratio {median / first:5.2f}   rounds {', '.join(f'{v:.4f}' for v in values)}")


if __name__ == "__main__":
    main()

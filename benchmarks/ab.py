"""Compare GridSample kernel builds: each build's kernels timed in fresh processes, alternating.

    git worktree add /tmp/ab/base main && (cd /tmp/ab/base && python setup.py build_ext --inplace)
    python benchmarks/ab.py /tmp/ab/base . --rounds 8 --threads 2 --cases tricubic,random
    python benchmarks/ab.py /tmp/ab/base . --paired --padding reflection --cases bilinear_c

Each BUILD is a checkout whose kernels are built in place. A round starts one process per build (the
order reversed every other round); each process times every selected case's kernel through one
prepared plan (a `SamplePlan`, as a compiled model calls it; the fastest call within --seconds) and
exits; bench.py's cases, with zeros padding or --padding. The table shows each build's median over
rounds, and the ratios to the first build of the medians and of the fastest processes (on a noisy host
the latter is the steadier: noise only adds time). On this project's VM a single process is a draw: the
host's speed drifts and a kernel's speed can depend on where its stack, code and data lie
(benchmarks/README.md, "Where the stack lies", "Where the code lies"), so only differences that hold over
many rounds count.

A process imports the build's `irgrid` only if it runs with the build as its working directory: for
`python -c`, sys.path starts with '' (the working directory), ahead of PYTHONPATH, so a process started
from another checkout would time that checkout's kernels instead. This script sets both. The cases
and their inputs come from this checkout's bench.py, the same for every build.

With --paired, one process loads every build's GridSample kernel module (irgrid/_kernels/sampling*.so)
under a name of its own and alternates their calls (--rounds pairs, the order reversed every other
pair, each the fastest of 3 calls); it reports each build's median and the median and quartiles of its
time over the first build's in the same pair. On this VM the host's speed drifts by up to 2x within
minutes, which separate processes only average out over many rounds; consecutive calls see the same
host. It checks that every build gives the same bits. What it cannot show is a per-process draw (where
the stack lies), so a difference it finds is worth confirming with processes.
"""
from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])  # this checkout's bench.py; irgrid from '' (the build)
import bench
from irgrid.ops.grid_sample import sample_plan
patterns, threads, seconds = [p for p in sys.argv[2].split(",") if p], int(sys.argv[3]), float(sys.argv[4])
padding = sys.argv[5]
clock = time.thread_time if threads == 1 else time.perf_counter
result = {"irgrid": __import__("irgrid").__file__, "ms": {}}
for case in bench.kernel_cases(patterns):
    inputs = bench._inputs(case)
    x, grid = inputs["X"], inputs["grid"]
    plan = sample_plan(x.shape, grid.shape, x.dtype, bench._MODES[case["mode"]][1], padding, False)
    out = plan(x, grid, None, threads)
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = clock()
        plan(x, grid, out, threads)
        times.append(clock() - start)
    result["ms"][case["name"]] = min(times) * 1e3
print(json.dumps(result))
"""


def run_build(build: Path, patterns: str, threads: int, seconds: float, padding: str = "zeros") -> dict[str, float]:
    """One process of `build`: the fastest call per selected case, in ms."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(HERE), patterns, str(threads), str(seconds), padding],
                          capture_output=True, text=True, cwd=build, env=dict(os.environ, PYTHONPATH=str(build)))
    if done.returncode:
        sys.exit(f"{build}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    result = json.loads(done.stdout)
    if not Path(result["irgrid"]).resolve().is_relative_to(build):
        sys.exit(f"{build}: imported {result['irgrid']} instead of the build's own irgrid")
    return result["ms"]


def load_kernels(build: Path, tag: str):
    """`build`'s sampling extension module, imported as `tag`.sampling (beside any other build's)."""
    path = next((build / "irgrid" / "_kernels").glob("sampling*.so"), None)
    if path is None:
        sys.exit(f"{build}: no built irgrid/_kernels/sampling*.so")
    loader = importlib.machinery.ExtensionFileLoader(f"{tag}.sampling", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def paired(builds: list[Path], patterns: str, threads: int, pairs: int, differ_ok: bool = False,
           padding: str = "zeros") -> None:
    """The --paired comparison (module docstring), printed as a table."""
    sys.path.insert(0, str(HERE))
    import bench
    import numpy as np
    from irgrid._kernels import constants

    modules = [load_kernels(build, f"irgrid_ab{i}") for i, build in enumerate(builds)]
    labels = [b.name or str(b) for b in builds]
    print(f"fastest of 3 calls, ms ({threads} thread(s), {padding} padding), {pairs} alternating pairs in one process: "
          "each build's median, and the median (quartiles) of its time over the first build's in the same pair")
    print(f"{'case':<40}" + "".join(f"{label:>12}" for label in labels) + "".join(
        f"{label + ' / ' + labels[0]:>26}" for label in labels[1:]))
    cases = bench.kernel_cases([p for p in patterns.split(",") if p])
    for case in cases:
        inputs = bench._inputs(case)
        x, grid = inputs["X"], inputs["grid"]
        plans = [m.SamplePlan(x.shape, grid.shape, x.dtype, constants.MODES[bench._MODES[case["mode"]][1]],
                              constants.PADDINGS[padding], False) for m in modules]
        outs = [plan(x, grid, None, threads) for plan in plans]
        if any(out.tobytes() != outs[0].tobytes() for out in outs[1:]):
            if not differ_ok:
                sys.exit(f"{case['name']}: the builds' outputs differ (--differ to time them anyway)")
            print(f"{case['name']}: outputs differ by up to "
                  f"{max(float(np.max(np.abs(out - outs[0]))) for out in outs[1:]):.3g}")
        times: list[list[float]] = [[] for _ in builds]
        clock = time.thread_time if threads == 1 else time.perf_counter  # as the processes time them
        for r in range(pairs):
            for k in range(len(builds)) if r % 2 == 0 else reversed(range(len(builds))):
                calls = []
                for _ in range(3):
                    start = clock()
                    plans[k](x, grid, outs[k], threads)
                    calls.append(clock() - start)
                times[k].append(min(calls) * 1e3)
        line = f"{case['name']:<40}" + "".join(f"{statistics.median(t):>12.3f}" for t in times)
        for t in times[1:]:
            q = statistics.quantiles([a / b for a, b in zip(t, times[0])], n=4)
            line += f"{q[1]:>12.3f} ({q[0]:.3f}-{q[2]:.3f})"
        print(line, flush=True)
    if not cases:
        sys.exit(f"--cases {patterns!r} matches no GridSample case")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", type=Path, help="checkouts with their kernels built in place")
    parser.add_argument("--rounds", type=int, default=8, help="processes per build (default 8)")
    parser.add_argument("--threads", type=int, default=2, help="kernel threads (1: CPU time of the thread)")
    parser.add_argument("--cases", default="", help="comma-separated GridSample case filters (default: all)")
    parser.add_argument("--seconds", type=float, default=0.4, help="calls per case and process, in seconds")
    parser.add_argument("--json", dest="json_path", help="also write every round's times to this file")
    parser.add_argument("--differ", action="store_true",
                        help="with --paired, time builds whose outputs differ (a change of rounding), printing by how much")
    parser.add_argument("--paired", action="store_true", help="alternate the builds' calls in one process "
                        "(--rounds pairs; module docstring)")
    parser.add_argument("--padding", default="zeros", choices=("zeros", "border", "reflection"),
                        help="the cases' padding (default zeros)")
    args = parser.parse_args()
    builds = [b.resolve() for b in args.builds]
    if args.paired:
        paired(builds, args.cases, args.threads, args.rounds, args.differ, args.padding)
        return
    times: dict[str, dict[str, list[float]]] = {}
    for r in range(args.rounds):
        for build in builds if r % 2 == 0 else builds[::-1]:
            for name, ms in run_build(build, args.cases, args.threads, args.seconds, args.padding).items():
                times.setdefault(name, {}).setdefault(str(build), []).append(ms)
    if not times:
        parser.error(f"--cases {args.cases!r} matches no GridSample case")
    labels = [b.name or str(b) for b in builds]
    print(f"each process's fastest call, ms ({args.threads} thread(s), {args.padding} padding): median over "
          f"{args.rounds} rounds, and the "
          "ratios to the first build of the medians and of the fastest processes (noise only adds time)")
    print(f"{'case':<40}" + "".join(f"{label:>14}" for label in labels) + "".join(
        f"{label + ' / ' + labels[0]:>22}" for label in labels[1:]))
    for name, per_build in times.items():
        medians = [statistics.median(per_build[str(b)]) for b in builds]
        fastest = [min(per_build[str(b)]) for b in builds]
        print(f"{name:<40}" + "".join(f"{m:>14.3f}" for m in medians) + "".join(
            f"{m / medians[0]:>14.2f} {f / fastest[0]:>6.2f}" for m, f in zip(medians[1:], fastest[1:])))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"threads": args.threads, "rounds": args.rounds, "ms": times},
                                                   indent=2))


if __name__ == "__main__":
    main()

"""Compare GridSample kernel builds: each build's kernels timed in fresh processes, alternating.

    git worktree add /tmp/ab/base main && (cd /tmp/ab/base && python setup.py build_ext --inplace)
    python benchmarks/ab.py /tmp/ab/base . --rounds 8 --threads 2 --cases tricubic,random

Each BUILD is a checkout whose kernels are built in place. A round starts one process per build (the
order reversed every other round); each process times every selected case's kernel through one
prepared plan (a `SamplePlan`, as a compiled model calls it; the fastest call within --seconds) and
exits. The table shows each build's median over rounds, and the ratios to the first build of the
medians and of the fastest processes (on a noisy host the latter is the steadier: noise only adds
time). On this project's VM a single process is a draw: the host's speed drifts and a kernel's speed
can depend on where its stack, code and data lie (benchmarks/README.md, "Where the stack lies",
"Where the code lies"), so only differences that hold over many rounds count.

A process imports the build's `irgrid` only if it runs with the build as its working directory: for
`python -c`, sys.path starts with '' (the working directory), ahead of PYTHONPATH, so a process started
from another checkout would time that checkout's kernels instead. This script sets both. The cases
and their inputs come from this checkout's bench.py, the same for every build.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])  # this checkout's bench.py; irgrid from '' (the build)
import bench
from irgrid.ops.grid_sample import sample_plan
patterns, threads, seconds = [p for p in sys.argv[2].split(",") if p], int(sys.argv[3]), float(sys.argv[4])
clock = time.thread_time if threads == 1 else time.perf_counter
result = {"irgrid": __import__("irgrid").__file__, "ms": {}}
for case in bench._cases(False):
    if case["kind"] != "grid_sample" or case["name"] == "grid_sample/tiny" or not bench._selected(case["name"], patterns):
        continue
    inputs = bench._inputs(case)
    x, grid = inputs["X"], inputs["grid"]
    plan = sample_plan(x.shape, grid.shape, x.dtype, bench._MODES[case["mode"]][1], "zeros", False)
    out = plan(x, grid, None, threads)
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = clock()
        plan(x, grid, out, threads)
        times.append(clock() - start)
    result["ms"][case["name"]] = min(times) * 1e3
print(json.dumps(result))
"""


def run_build(build: Path, patterns: str, threads: int, seconds: float) -> dict[str, float]:
    """One process of `build`: the fastest call per selected case, in ms."""
    done = subprocess.run([sys.executable, "-c", CHILD, str(HERE), patterns, str(threads), str(seconds)],
                          capture_output=True, text=True, cwd=build, env=dict(os.environ, PYTHONPATH=str(build)))
    if done.returncode:
        sys.exit(f"{build}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    result = json.loads(done.stdout)
    if not Path(result["irgrid"]).resolve().is_relative_to(build):
        sys.exit(f"{build}: imported {result['irgrid']} instead of the build's own irgrid")
    return result["ms"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="+", type=Path, help="checkouts with their kernels built in place")
    parser.add_argument("--rounds", type=int, default=8, help="processes per build (default 8)")
    parser.add_argument("--threads", type=int, default=2, help="kernel threads (1: CPU time of the thread)")
    parser.add_argument("--cases", default="", help="comma-separated GridSample case filters (default: all)")
    parser.add_argument("--seconds", type=float, default=0.4, help="calls per case and process, in seconds")
    parser.add_argument("--json", dest="json_path", help="also write every round's times to this file")
    args = parser.parse_args()
    builds = [b.resolve() for b in args.builds]
    times: dict[str, dict[str, list[float]]] = {}
    for r in range(args.rounds):
        for build in builds if r % 2 == 0 else builds[::-1]:
            for name, ms in run_build(build, args.cases, args.threads, args.seconds).items():
                times.setdefault(name, {}).setdefault(str(build), []).append(ms)
    if not times:
        parser.error(f"--cases {args.cases!r} matches no GridSample case")
    labels = [b.name or str(b) for b in builds]
    print(f"each process's fastest call, ms ({args.threads} thread(s)): median over {args.rounds} rounds, and the "
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

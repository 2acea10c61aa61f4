"""OpenMP workers run on the CPUs of the thread that imported their kernel module, not on the one core
that OpenVINO pins the thread running an op to (kernels/cython/worker_cpus.h, docs/openvino.md).

A new thread inherits the mask of the thread that starts it, and libgomp starts workers whenever a
team grows, so each kernel module's workers set their own mask in their first parallel loop. Checked
in a fresh process (this one's workers already exist): the main thread pinned to one CPU, as OpenVINO
does, then every kernel module's loop run with 2 and 3 threads (3 ends and restarts a worker of a
2-thread team), then the mask of each thread started since read back. Every worker of a team sets its
mask, also one that a dynamic schedule leaves without a chunk (a `parallel` block around the loop).
DeformConv's product runs through numpy on one thread, so that the threads started are OpenMP's
(OpenVINO's MatMul and OpenBLAS start their own, which OpenVINO pins itself)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, os
import numpy as np
import irgrid.openvino  # imports every kernel module, on this (unpinned) thread
from irgrid.registry import RunContext, find

cpus = sorted(os.sched_getaffinity(0))
before = set(os.listdir("/proc/self/task"))
os.sched_setaffinity(0, {cpus[0]})  # as OpenVINO's CPU plugin pins the thread that runs a graph
rng = np.random.default_rng(0)
runs = {
    ("GridSample", "irgrid1"): ([rng.random((1, 16, 8, 32, 32), np.float32),
                    rng.uniform(-1, 1, (1, 8, 32, 32, 3)).astype(np.float32)], {"mode": "linear"}),
    ("AffineGrid", "irgrid1"): ([rng.random((4, 3, 4), np.float32), np.array([4, 1, 16, 64, 64])], {}),
    ("DeformConv", "irgrid1"): ([rng.random((1, 8, 64, 64), np.float32), rng.random((8, 8, 3, 3), np.float32),
                    rng.random((1, 18, 64, 64), np.float32)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ("ExperimentalDetectronPriorGridGenerator", "opset6"): (
        [rng.random((3, 4), np.float32), np.zeros((1, 8, 400, 400), np.float32),
         np.zeros((1, 3, 800, 800), np.float32)], {"flatten": True}),
}


def masks(tids):  # each listed thread's CPUs, skipping threads that ended since they were listed
    found = {}
    for tid in tids:
        try:
            found[tid] = sorted(os.sched_getaffinity(int(tid)))
        except ProcessLookupError:  # a worker libgomp ended as the team shrank
            pass
    return found


report = {"cpus": cpus, "workers": {}}
for (type_, version), (arrays, given) in runs.items():
    spec = find(type_, version)
    for threads in (2, 3, 2):
        spec.run(spec.parse_attrs(given), arrays, RunContext(threads))
    report["workers"][type_] = masks(set(os.listdir("/proc/self/task")) - before)
report["main"] = sorted(os.sched_getaffinity(0))
print(json.dumps(report))
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs to pin one and use the others")
def test_workers_of_a_pinned_thread_use_every_cpu(tmp_path):
    # run outside the checkout: `python -c` puts the working directory first on sys.path, and a
    # checkout's own irgrid has no built kernels when the package is installed (not editable)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env={**os.environ, "IRGRID_GEMM": "numpy", "OPENBLAS_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["main"] == report["cpus"][:1]  # the caller keeps the mask it was given
    for type_, workers in report["workers"].items():
        assert workers, f"{type_}: no OpenMP worker started"
        assert all(mask == report["cpus"] for mask in workers.values()), (type_, workers)

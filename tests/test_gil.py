"""The kernels release the GIL, also on their single-thread path: OpenVINO calls an extension op's
`evaluate` holding the GIL (NOTES.md), and Python threads must be able to run beside a kernel."""
import threading

import numpy as np
import pytest

from irgrid.ops.grid_sample import sample


@pytest.mark.parametrize("threads", [1, 2])
def test_python_runs_while_a_kernel_runs(threads):
    rng = np.random.default_rng(0)
    x = rng.random((1, 16, 128, 128), dtype=np.float32)
    grid = rng.uniform(-1, 1, (1, 128, 128, 2)).astype(np.float32)
    done = threading.Event()

    def kernels():
        for _ in range(10):
            sample(x, grid, "cubic", "zeros", False, threads)
        done.set()

    worker = threading.Thread(target=kernels)
    ticks = 0
    worker.start()
    while not done.is_set():  # with the GIL held by a kernel this loop could not advance
        ticks += 1
    worker.join()
    assert ticks > 100

"""The kernels release the GIL, also on their single-thread path: OpenVINO calls an extension op's
`evaluate` holding the GIL (docs/openvino.md), and Python threads must be able to run beside a kernel."""
import threading
import time

import numpy as np
import pytest

from irgrid.ops.grid_sample import sample


@pytest.mark.parametrize("threads", [1, 2])
def test_python_runs_while_a_kernel_runs(threads):
    rng = np.random.default_rng(0)
    x = rng.random((1, 64, 256, 256), dtype=np.float32)  # a cubic call of tens of ms (interleaved path)
    grid = rng.uniform(-1, 1, (1, 512, 512, 2)).astype(np.float32)
    spans = []

    def kernel():  # calls until 0.3 s have passed, so the test does not depend on the machine's speed
        first = time.perf_counter()
        while not spans or spans[-1][1] - first < 0.3:
            start = time.perf_counter()
            sample(x, grid, "cubic", "zeros", False, threads)
            spans.append((start, time.perf_counter()))

    worker = threading.Thread(target=kernel)
    wakeups = []
    worker.start()
    while worker.is_alive():  # each wake-up needs the GIL
        wakeups.append(time.perf_counter())
        time.sleep(0.002)
    margin = 0.003  # keeps the call's Python prologue and epilogue out of the window
    assert max(end - start for start, end in spans) > 4 * margin
    inside = [t for t in wakeups if any(start + margin < t < end - margin for start, end in spans)]
    assert len(inside) >= 3, f"the main thread woke {len(inside)} times during {len(spans)} kernel calls"

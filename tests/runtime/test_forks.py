"""Fork children never hang (irgrid/forks.py): after OpenMP teams, after OpenVINO ran, and while another
thread held a model's lock. Each case runs in its own process under a timeout, so a regression fails
instead of hanging the suite."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from oracles import SAMPLES


def _run(tmp_path, script: str, *args: str) -> list[str]:
    path = tmp_path / "fork_case.py"
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120, env={**os.environ, "IRGRID_NUM_THREADS": "2"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().split("|")


_AFTER_A_TEAM = """
import multiprocessing, sys, warnings
import numpy as np
import irgrid

sample, run_first = sys.argv[1], sys.argv[2] == "run-first"
compiled = irgrid.compile_model(sample + "/model.xml", threads=2)
inputs = dict(np.load(sample + "/inputs.npz"))
expected = compiled(inputs) if run_first else None  # a team of 2 threads, and OpenVINO's GEMM, before the fork


def child(_):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(inputs)
    return irgrid.get_num_threads(), [str(w.message) for w in caught], got


with multiprocessing.get_context("fork").Pool(1) as pool:
    threads, messages, got = pool.map(child, [0])[0]
expected = expected or compiled(inputs)
for key in expected:  # the child's GEMM is numpy's after OpenVINO ran in the parent
    np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=1e-5)
print(threads, len(messages), *messages, sep="|")
"""


@pytest.mark.parametrize("run_first", [True, False])
def test_a_child_forked_after_a_team_runs_on_one_thread(tmp_path, run_first):
    """GNU OpenMP's workers are not copied by fork: a child forked after a 2-thread team ran runs the
    kernels on one thread and warns once (it waited forever before); forked before any team, it keeps
    its threads. The sample's DeformConv starts a team of 2 and runs its GEMM on OpenVINO."""
    count, warnings_seen, *messages = _run(tmp_path, _AFTER_A_TEAM, str(SAMPLES / "dcn_block"),
                                           "run-first" if run_first else "fork-first")
    if run_first:
        assert (count, warnings_seen) == ("1", "1") and "forked" in messages[0] and "'spawn'" in messages[0]
    else:
        assert (count, warnings_seen, messages) == ("2", "0", [])


_WHILE_CALLING = """
import multiprocessing, sys, threading, time
import numpy as np
from irgrid.devices import open_model

model, _ = open_model(sys.argv[1] + "/model.xml", sys.argv[2])
inputs = dict(np.load(sys.argv[1] + "/inputs.npz"))
expected = model(inputs)
busy, stop = threading.Event(), threading.Event()


def serve():  # an application's inference thread, in a call whenever the fork may come
    while not stop.is_set():
        busy.set()
        model(inputs)


server = threading.Thread(target=serve)
server.start()
busy.wait()
time.sleep(0.2)


def child(_):
    try:
        got = model(inputs)
    except Exception as exc:  # the OpenVINO device refuses to run in such a child
        return f"{type(exc).__name__}: {exc}"
    return all(np.array_equal(got[k], expected[k]) for k in expected)


for _ in range(3):
    with multiprocessing.get_context("fork").Pool(1) as pool:
        result = pool.map(child, [0])[0]
stop.set()
server.join()  # not left inside OpenVINO at exit
print(result)
"""


@pytest.mark.parametrize("device", ["irgrid", "openvino"])
def test_a_child_forked_while_another_thread_calls_the_model(tmp_path, device):
    """A model's lock held by another thread at the fork stayed held in the child, whose first call
    waited forever; the child now gets a fresh lock. On irgrid's runtime the child's call gives the
    parent's outputs; the OpenVINO device refuses to run in a child forked after OpenVINO ran (its
    oneTBB workers hung in 3-15% of such children) with an OpenVINOError saying what to do."""
    (result,) = _run(tmp_path, _WHILE_CALLING, str(SAMPLES / "volume_warp"), device)
    if device == "irgrid":
        assert result == "True"
    else:
        assert result.startswith("OpenVINOError: ") and "forked after OpenVINO ran" in result and "'spawn'" in result


_OPENVINO_IN_A_CHILD = """
import multiprocessing, sys
import numpy as np
from irgrid.devices import open_model

path = sys.argv[1] + "/model.xml"
if sys.argv[2] == "run-first":
    open_model(path, "openvino")[0](dict(np.load(sys.argv[1] + "/inputs.npz")))


def child(_):
    try:
        open_model(path, "openvino")
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "opened"


with multiprocessing.get_context("fork").Pool(1) as pool:
    print(pool.map(child, [0])[0])
"""


@pytest.mark.parametrize("run_first", [True, False])
def test_the_openvino_device_in_a_fork_child(tmp_path, run_first):
    """Refused (an OpenVINOError, not a hang) only when OpenVINO ran before the fork."""
    (result,) = _run(tmp_path, _OPENVINO_IN_A_CHILD, str(SAMPLES / "flow_warp"),
                     "run-first" if run_first else "fork-first")
    assert result.startswith("OpenVINOError: ") if run_first else result == "opened"


_EXIT_AFTER_OPENVINO = """
import os, sys, time
import numpy as np
import openvino as ov
import irgrid
import irgrid.openvino as iov
from irgrid.devices import open_model

sample = sys.argv[1]
inputs = dict(np.load(sample + "/inputs.npz"))
if sys.argv[2] == "device":
    model, _ = open_model(sample + "/model.xml", "openvino")
    model(inputs)
else:  # OpenVINO on a Core of the user's, running an irgrid op (the README's "inside OpenVINO")
    core = ov.Core()
    core.add_extension(iov.extensions())
    core.compile_model(sample + "/model.xml", "CPU")(inputs)
pid = os.fork()
if pid == 0:
    irgrid.compile_model(sample + "/model.xml")(inputs)
    print(irgrid.forks.marks.child_of_openvino, flush=True)
    if sys.argv[2] == "device":
        sys.exit(0)  # a normal exit: finalisation used to destroy the inherited compiled model and hang
    os._exit(0)  # the user's own compiled model would hang in its destructor: not irgrid's to keep
start = time.time()
while not os.waitpid(pid, os.WNOHANG)[0]:
    if time.time() - start > 30:
        os.kill(pid, 9)
        print("hung")
        break
    time.sleep(0.01)
"""


@pytest.mark.parametrize("how", ["device", "own_core"])
def test_a_fork_child_after_openvino_ran_exits(tmp_path, how):
    """The child knows OpenVINO ran (so its GEMMs run in numpy), whether on irgrid's OpenVINO device or on
    the user's own Core running an irgrid op; after the device, its normal exit no longer hangs in the
    destructor of the OpenVINO model it inherited (irgrid keeps it alive)."""
    assert _run(tmp_path, _EXIT_AFTER_OPENVINO, str(SAMPLES / "volume_warp"), how) == ["True"]

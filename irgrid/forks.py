"""What a process forked from one that ran irgrid can still do, so that no fork child hangs.

fork copies only the thread that calls it, so whatever the parent's other threads held or were
waiting for is frozen in the child:
- GNU OpenMP keeps a team's worker threads for the next team of the thread that started it: in a
  child forked after a team of 2 or more threads ran, the next such team waits forever for workers
  that do not exist (a 2-thread DeformConv in a `multiprocessing` "fork" worker hung). irgrid's kernels
  run on one thread there (`threads.kernel_threads`, with a warning).
- OpenVINO's CPU plugin (oneTBB) hung in 3-15% of children forked after it ran, in `compile_model` or
  `infer`, also without irgrid. The OpenVINO device refuses to run there (OpenVINOError), and the f32
  GEMM of irgrid's convolutions (an OpenVINO MatMul) and its f32 Convolution layers run in numpy
  instead (`dense.on_openvino`).
- A lock that another thread held at the fork stays held: every lock that serialises calls of an
  irgrid model (`fork_safe_lock`) is replaced by a fresh one in the child.
- Destroying an OpenVINO compiled model inherited that way waited forever for the parent's stream
  threads (a child that exits normally hung in its interpreter's finalisation): after OpenVINO ran, the
  child keeps every irgrid model it inherited alive until it exits. OpenVINO objects of the caller's
  own are not irgrid's to keep: a child inheriting them should leave with `os._exit`, as
  `multiprocessing`'s fork workers do.
Workers started with the "spawn" or "forkserver" method are fresh processes, free of all of these.
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref


class _Marks:
    """What ran in this process, or in its parent before the fork (`openmp_team`, `openvino`), and
    whether this process was forked after it (`child_of_...`)."""

    openmp_team = False  # a team of 2 or more OpenMP threads
    openvino = False  # OpenVINO compiled or ran a model
    child_of_openmp_team = False
    child_of_openvino = False


marks = _Marks()
_LOCK_OWNERS: weakref.WeakSet = weakref.WeakSet()


def fork_safe_lock(owner: object) -> threading.Lock:
    """A new lock for `owner._lock`, which a forked child replaces with a fresh one."""
    _LOCK_OWNERS.add(owner)
    return threading.Lock()


def _after_fork_in_child() -> None:
    marks.child_of_openmp_team = marks.openmp_team
    marks.child_of_openvino = marks.openvino
    for owner in list(_LOCK_OWNERS):
        owner._lock = threading.Lock()
        if marks.openvino:  # a reference never released: not even finalisation destroys it
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(owner))


os.register_at_fork(after_in_child=_after_fork_in_child)

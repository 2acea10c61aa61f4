# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A chain of element-wise layers in one pass over the output, on every thread: the driver of the C
core's kernel (kernels/core/elementwise.h, which says why and what each operation computes).

`Chain(dtype, input_booleans, steps, registers)` holds a program, checked once; `Chain.run(inputs, out,
threads)` runs it on arrays that broadcast to `out` (numpy's rules). irgrid's runtime builds one per
chain of layers it fuses (irgrid/runtime/elementwise_chains.py); `OPERATIONS` names the layer types it
can run, by the operation code each becomes.
"""
import numpy as np

cimport numpy as cnp
from cython.parallel cimport prange, threadid
from libc.string cimport memset

from core cimport (
    IRGRID_EW_ADD, IRGRID_EW_AND, IRGRID_EW_DIVIDE, IRGRID_EW_EQUAL, IRGRID_EW_GREATER,
    IRGRID_EW_GREATER_EQUAL, IRGRID_EW_LESS, IRGRID_EW_LESS_EQUAL, IRGRID_EW_MAX_RANK, IRGRID_EW_MAX_REGISTERS,
    IRGRID_EW_MAX_STEPS, IRGRID_EW_MAXIMUM, IRGRID_EW_MINIMUM, IRGRID_EW_MULTIPLY, IRGRID_EW_NOT,
    IRGRID_EW_NOT_EQUAL, IRGRID_EW_OR, IRGRID_EW_SELECT, IRGRID_EW_SUBTRACT, IRGRID_EW_XOR, IRGRID_F32,
    IRGRID_F64, irgrid_elementwise, irgrid_elementwise_plan, irgrid_elementwise_run, irgrid_error_text,
    irgrid_index, irgrid_scratch_cache, irgrid_scratch_give, irgrid_worker_reset, irgrid_scratch_release, irgrid_scratch_take,
)
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

cnp.import_array()
irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

# Layer type -> operation: what each computes (and on which types) is elementwise.h's.
OPERATIONS = {
    "Add": IRGRID_EW_ADD, "Subtract": IRGRID_EW_SUBTRACT, "Multiply": IRGRID_EW_MULTIPLY,
    "Divide": IRGRID_EW_DIVIDE, "Minimum": IRGRID_EW_MINIMUM, "Maximum": IRGRID_EW_MAXIMUM,
    "Less": IRGRID_EW_LESS, "Greater": IRGRID_EW_GREATER, "LessEqual": IRGRID_EW_LESS_EQUAL,
    "GreaterEqual": IRGRID_EW_GREATER_EQUAL, "Equal": IRGRID_EW_EQUAL, "NotEqual": IRGRID_EW_NOT_EQUAL,
    "Select": IRGRID_EW_SELECT, "LogicalAnd": IRGRID_EW_AND, "LogicalOr": IRGRID_EW_OR,
    "LogicalXor": IRGRID_EW_XOR, "LogicalNot": IRGRID_EW_NOT,
}
MAX_REGISTERS = IRGRID_EW_MAX_REGISTERS
MAX_STEPS = IRGRID_EW_MAX_STEPS
MAX_RANK = IRGRID_EW_MAX_RANK


cdef class Chain:
    """A checked program of element-wise steps over one float type (and booleans)."""

    cdef irgrid_elementwise p
    cdef irgrid_scratch_cache cache
    cdef object dtype

    def __cinit__(self):
        memset(&self.p, 0, sizeof(self.p))
        memset(&self.cache, 0, sizeof(self.cache))

    def __init__(self, dtype, list input_booleans, list steps, int registers):
        """dtype: float32 or float64 (F); input_booleans: per input, whether it holds booleans; steps:
        (operation, out, a, b, c) register numbers, inputs first (elementwise.h); registers: inputs and
        temporaries. ValueError for a program the core refuses."""
        cdef int k, status
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"element-wise chains run in float32 or float64, not {self.dtype}")
        if not 0 < len(input_booleans) <= registers <= IRGRID_EW_MAX_REGISTERS or not 0 < len(steps) <= IRGRID_EW_MAX_STEPS:
            raise ValueError("too many inputs, registers or steps for one chain")
        self.p.dtype = IRGRID_F32 if self.dtype == np.float32 else IRGRID_F64
        self.p.inputs, self.p.registers, self.p.steps = len(input_booleans), registers, len(steps)
        for k, boolean in enumerate(input_booleans):
            self.p.boolean[k] = bool(boolean)
        for k, (op, out, a, b, c) in enumerate(steps):
            self.p.step[k].op, self.p.step[k].out, self.p.step[k].a, self.p.step[k].b, self.p.step[k].c = op, out, a, b, c
        self.p.rank = 0  # one element: the plan checks the program
        status = irgrid_elementwise_plan(&self.p)
        if status:
            raise ValueError(f"element-wise chain: {irgrid_error_text(status).decode()}")

    def __dealloc__(self):
        irgrid_scratch_release(&self.cache)

    def run(self, list inputs, cnp.ndarray out, int num_threads) -> None:
        """The chain on `inputs` (each broadcasting to out's shape by numpy's rules; booleans as numpy
        bool, the others in F) into `out` (C-contiguous, F or bool as the last step gives). Strides are
        read here, without numpy calls: a small chain's call costs about a microsecond."""
        cdef int k, d, lead, status
        cdef cnp.ndarray array
        cdef Py_ssize_t size
        cdef int float_type = cnp.NPY_FLOAT if self.p.dtype == IRGRID_F32 else cnp.NPY_DOUBLE
        cdef list held = []
        if len(inputs) != self.p.inputs:
            raise ValueError(f"the chain takes {self.p.inputs} inputs, got {len(inputs)}")
        if out.ndim > IRGRID_EW_MAX_RANK or not cnp.PyArray_IS_C_CONTIGUOUS(out):
            raise ValueError(f"the output must be C-contiguous of rank at most {IRGRID_EW_MAX_RANK}")
        self.p.rank = out.ndim
        for d in range(out.ndim):
            self.p.dims[d] = out.shape[d]
        for k in range(self.p.inputs):
            array = inputs[k]
            if cnp.PyArray_TYPE(array) != (cnp.NPY_BOOL if self.p.boolean[k] else float_type):
                raise ValueError(f"chain input {k} is {array.dtype}, not {np.bool_ if self.p.boolean[k] else self.dtype}")
            if array.ndim > out.ndim:
                raise ValueError(f"chain input {k} has more dims than the output")
            size = array.itemsize
            for d in range(array.ndim):
                if array.strides[d] % size:  # (not from a layer's output: each is aligned to its items)
                    array = np.ascontiguousarray(array)
                    held.append(array)  # alive until the run ends
                    break
            lead = out.ndim - array.ndim
            for d in range(out.ndim):
                if d < lead or (array.shape[d - lead] == 1 and out.shape[d] != 1):
                    self.p.strides[k][d] = 0
                elif array.shape[d - lead] == out.shape[d]:
                    self.p.strides[k][d] = array.strides[d - lead] // size
                else:
                    raise ValueError(f"chain input {k} of shape {(<object>array).shape} does not broadcast to "
                                     f"{(<object>out).shape}")
            self.p.input[k] = cnp.PyArray_DATA(array)
        self.p.output = cnp.PyArray_DATA(out)
        self.p.threads = num_threads
        status = irgrid_elementwise_plan(&self.p)
        if status:
            raise ValueError(f"element-wise chain: {irgrid_error_text(status).decode()}")
        run_plan(&self.p, &self.cache)


cdef int run_plan(const irgrid_elementwise* p, irgrid_scratch_cache* cache) except -1:
    """The planned chain's units over its schedule's workers, each with its own registers (scratch kept
    in `cache` between calls)."""
    cdef int workers = p.schedule.workers if p.schedule.workers > 0 else 1
    cdef size_t worker_bytes = p.schedule.worker_bytes
    cdef irgrid_index u, n = p.schedule.units[0]
    cdef char* scratch
    cdef int t
    if p.schedule.phases == 0:
        return 0
    scratch = <char*>irgrid_scratch_take(cache, workers * worker_bytes)
    if scratch == NULL:
        raise MemoryError()
    for t in range(workers):
        irgrid_worker_reset(scratch + t * worker_bytes)
    try:
        if workers == 1:  # no parallel region: waking idle threads costs more than small calls take
            with nogil:
                irgrid_elementwise_run(p, 0, NULL, scratch, 0, n)
        else:
            for u in prange(n, nogil=True, schedule="static", num_threads=workers):
                irgrid_free_worker()
                irgrid_elementwise_run(p, 0, NULL, scratch + threadid() * worker_bytes, u, u + 1)
    finally:
        irgrid_scratch_give(cache, scratch)
    return 0

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""GridSample for any number r of spatial dims: nearest, N-linear and N-cubic, three paddings; the driver
of the C core's kernel (kernels/core/grid_sample.h), which holds all of its arithmetic.

For each output point the taps (flat offsets into one channel plane, and weights) are computed once,
then applied to every channel. Per spatial dim k there are 1, 2 or 4 taps; their outer product gives
the point's taps, outermost dim first, so the summation order is fixed and results never depend on
the thread count. Semantics follow ONNX GridSample-22 as the README settles them
(kernels/core/interpolation.h):
- nearest: round half to even, then pad the integer index;
- linear: border/reflection move the continuous coordinate, then each tap is padded;
- cubic: Keys A = -0.75 over floor(x)-1 .. floor(x)+2, each tap padded on its own;
- a NaN coordinate gives NaN; a coordinate at +-Inf or |g| >= 1e30 is a point at that infinity
  (zeros: 0, border: the edge, reflection: NaN).

The core's plan chooses a path per call: the scalar blocks; on CPUs with AVX2 and FMA (IRGRID_SIMD=0,
ONEDNN_MAX_CPU_ISA below AVX2 or `use_simd(False)` keep the scalar path: kernels/core/cpu.h) the gather path (2-D, 3-D nearest/linear; a batch of small
one-channel 2-D bilinear items as one run of points, the bits of each item alone) or, from a few
channels on (`use_interleave`), the interleaved path (a scratch per worker, or for planes past 8 MiB
one the workers share), with separable runs for 2-D and 3-D cubic and, on scattered grids, 3-D
cubic's points binned by tile (`use_binning`); `SamplePlan.route` names the path of a call. Vector
and scalar sums differ by FMA rounding only (within the oracle tolerances); cubic's bits depend on the
path, so on the channel count. What each path measured, and why its thresholds are what they are:
benchmarks/README.md, "GridSample's paths: measurements".

This module validates (ValueError), fills the core's problem struct, plans and runs the schedule's
phases over OpenMP `prange` (`run_plan`; `run_serially` on one thread), each worker with its own scratch.
"""
import math

import numpy as np

cimport numpy as cnp
from cython.parallel cimport parallel, prange, threadid
from libc.limits cimport INT_MAX
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport uintptr_t
from libc.string cimport memcmp
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from core cimport (
    IRGRID_F32, IRGRID_F64, IRGRID_GS_BINNED, IRGRID_GS_BLOCKS, IRGRID_GS_GATHER, IRGRID_GS_INTERLEAVE,
    IRGRID_GS_ITEMS, IRGRID_GS_SHARED, IRGRID_MAX_RANK, IRGRID_MAX_TAPS, IRGRID_MODE_CUBIC, IRGRID_MODE_LINEAR,
    IRGRID_MODE_NEAREST, IRGRID_PAD_BORDER, IRGRID_PAD_REFLECTION, IRGRID_PAD_ZEROS, IRGRID_AFFINE_MAX_RANK,
    irgrid_error_text, irgrid_grid_sample, irgrid_grid_sample_plan, irgrid_grid_sample_run, irgrid_index,
    irgrid_schedule, irgrid_grid_sample_simd_available, irgrid_grid_sample_gathers_pay, irgrid_grid_sample_tune,
    irgrid_grid_sample_wide_available, irgrid_worker_reset, irgrid_scratch_cache, irgrid_cpu_amd_family,
    irgrid_scratch_give, irgrid_scratch_release, irgrid_scratch_take,
)
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

cnp.import_array()
irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef enum:
    # A fresh output of at least this many bytes starts on a 64-byte line (SamplePlan._fresh): numpy's
    # large arrays start 16 (or 32) bytes past one, after malloc's header, so every other 32-byte store
    # of the kernels' outputs split two cache lines. Measured (2026-11-27, 2 threads, one process
    # alternating aligned and unaligned outputs): 0.94-1.00x the time on every benchmark case.
    ALIGNED_OUTPUT_BYTES = 1 << 16

cdef bint simd_on = irgrid_grid_sample_simd_available()
cdef int bin_policy = 1  # 0 never, 1 where the binning judges a span scattered, 2 always (where it applies)
cdef int interleave_policy = 1  # 0 never, 1 from a few channels on, 2 wherever it fits
cdef int gather_policy = 1  # 0 scalar loads, 1 whichever this CPU runs faster, 2 AVX2 gathers
cdef int avx512_policy = 1  # f32 512-bit code (AVX-512 CPUs): 0 never, 1 where grid_sample.c's wide_call and its users choose, 2 always
# The policies use_binning and use_interleave choose between, and their codes (grid_sample.h's
# IRGRID_POLICY_*).
cdef dict POLICIES = {"never": 0, "auto": 1, "always": 2}
cdef tuple POLICY_NAMES = ("never", "auto", "always")


def use_simd(bint on) -> bool:
    """Turn the vector path on (where the CPU has AVX2 and FMA and the process allows them:
    kernels/core/cpu.h, IRGRID_SIMD=0 or ONEDNN_MAX_CPU_ISA) or off; returns whether it was on. For
    tests and comparisons."""
    global simd_on
    was = simd_on
    simd_on = on and irgrid_grid_sample_simd_available()
    return was

def use_binning(str policy) -> str:
    """Choose when 3-D cubic's interleaved run takes a grid's points tile by tile ("auto": spans that
    the core's binning (kernels/core/binning.h) judges scattered, "never", "always"); returns the
    previous policy. For tests and comparisons."""
    global bin_policy
    was = POLICY_NAMES[bin_policy]
    bin_policy = POLICIES[policy]
    return was


def use_gathers(str policy) -> str:
    """Choose how the gather path (and 2-D nearest by points) reads a channel ("auto": with AVX2 gathers
    unless this CPU runs scalar loads clearly faster, `gathers_pay()`; "never": scalar loads; "always":
    gathers; the same bits every way); returns the previous policy. For tests and comparisons."""
    global gather_policy
    was = POLICY_NAMES[gather_policy]
    gather_policy = POLICIES[policy]
    return was


def use_avx512(str policy) -> str:
    """Choose where f32 calls run 512-bit code on a CPU with AVX-512 (`avx512_available()`): the gather
    path's taps 16 lanes at a time, the interleaved path's pixels of 16 channels and cubic's 16 points a
    vector over one-channel pixels ("always"; "auto": on calls of 512 points or more, taps in 2-D and 3-D
    trilinear of one to four channels, pixels from 9 channels on but in 3-D cubic, cubic of one to three
    channels in 2-D and of one in 3-D with zeros or border padding), or none ("never": 8 lanes, 8-channel
    pixels); the same bits every way.
    Returns the previous policy. For tests and comparisons."""
    global avx512_policy
    was = POLICY_NAMES[avx512_policy]
    avx512_policy = POLICIES[policy]
    return was


def avx512_available() -> bool:
    """Whether this CPU has the AVX-512 (F, VL, BW, DQ) of the gather path's 16-lane f32 taps."""
    return irgrid_grid_sample_wide_available() != 0


def amd_family() -> int:
    """AMD's CPU family of this CPU (0x19: Zen 3 and 4, 0x1A: Zen 5), 0 on other vendors' (kernels/core/cpu.h)."""
    return irgrid_cpu_amd_family()


def gathers_pay() -> bool:
    """Whether this CPU's AVX2 gathers are not clearly slower than scalar loads on the gather path
    (loads at least 10% faster: no; measured once per process; kernels/core/grid_sample.h)."""
    return irgrid_grid_sample_gathers_pay() != 0


def use_interleave(str policy) -> str:
    """Choose when the vector path interleaves channels ("auto", "never", or "always" wherever the
    vector path runs and a group's scratch fits); returns the previous policy. For tests and comparisons."""
    global interleave_policy
    was = POLICY_NAMES[interleave_policy]
    interleave_policy = POLICIES[policy]
    return was


cdef void run_serially(const irgrid_grid_sample* p, char* shared, char* scratch) noexcept nogil:
    """A planned problem's rounds and phases in order, every unit in this thread (one worker's scratch)."""
    cdef irgrid_index r, rounds = p.schedule.rounds if p.schedule.rounds > 1 else 1
    cdef int k
    for r in range(rounds):
        for k in range(p.schedule.phases):
            irgrid_grid_sample_run(p, <int>(r * p.schedule.phases + k), shared, scratch, 0, p.schedule.units[k])


cdef int run_plan(const irgrid_grid_sample* p, irgrid_scratch_cache* cache) except -1:
    """Runs a planned problem's schedule (the caller holds the GIL; the loops release it): its rounds and
    phases in order, each phase's units over `schedule.workers` threads (in order: a static schedule, so
    a worker's consecutive units share its scratch's group; otherwise guided: dynamic, but in chunks
    that shrink as the units run out, where one unit at a time cost RAFT's 2,852 lookups of 81 points
    one shared counter's cache line per unit), each worker with its own
    scratch, reset first, taken from and given back to the plan's `cache` (kernels/core/scratch.h)."""
    cdef const irgrid_schedule* s = &p.schedule
    cdef int workers = s.workers if s.workers > 0 else 1
    cdef size_t worker_bytes = s.worker_bytes
    cdef char* scratch = NULL
    cdef char* shared = NULL
    cdef irgrid_index r, rounds = s.rounds if s.rounds > 1 else 1, n, u
    cdef int k, phase, t
    if worker_bytes or s.shared_bytes:
        scratch = <char*>irgrid_scratch_take(cache, workers * worker_bytes + s.shared_bytes)
        if scratch == NULL:
            raise MemoryError()
        shared = scratch + workers * worker_bytes
        for t in range(workers):
            irgrid_worker_reset(scratch + t * worker_bytes)
    try:
        if workers == 1:  # no parallel region: waking idle threads costs more than small calls take
            with nogil:
                run_serially(p, shared, scratch)
            return 0
        for r in range(rounds):
            for k in range(s.phases):
                phase = <int>(r * s.phases + k)
                n = s.units[k]
                if s.in_order:
                    for u in prange(n, nogil=True, schedule="static", num_threads=workers):
                        irgrid_free_worker()
                        irgrid_grid_sample_run(p, phase, shared, scratch + threadid() * worker_bytes, u, u + 1)
                else:
                    with nogil, parallel(num_threads=workers):
                        irgrid_free_worker()  # every worker, even one the schedule leaves without a unit
                        for u in prange(n, schedule="guided"):
                            irgrid_grid_sample_run(p, phase, shared, scratch + threadid() * worker_bytes, u, u + 1)
    finally:
        irgrid_scratch_give(cache, scratch)
    return 0


cdef struct Policies:
    int simd, interleave, binning, gathers, avx512


cdef Policies current_policies() noexcept:
    """The policies use_simd, use_interleave, use_binning, use_gathers and use_avx512 set."""
    cdef Policies q
    q.simd, q.interleave, q.binning, q.gathers, q.avx512 = simd_on, interleave_policy, bin_policy, gather_policy, avx512_policy
    return q


cdef bint same_policies(const Policies* a, const Policies* b) noexcept:
    return (a.simd == b.simd and a.interleave == b.interleave and a.binning == b.binning and a.gathers == b.gathers
            and a.avx512 == b.avx512)


cdef Policies policies_of(const irgrid_grid_sample* p) noexcept:
    cdef Policies q
    q.simd, q.interleave, q.binning, q.gathers, q.avx512 = p.simd, p.interleave, p.binning, p.gathers, p.avx512
    return q


cdef int plan_problem(irgrid_grid_sample* p, int num_threads, const Policies* q) except -1:
    """Plans p for `num_threads` threads and the policies q."""
    cdef int status
    p.threads, p.simd, p.interleave, p.binning, p.gathers, p.avx512 = (
        num_threads, q.simd, q.interleave, q.binning, q.gathers, q.avx512)
    status = irgrid_grid_sample_plan(p)
    if status:
        raise ValueError(irgrid_error_text(status).decode())
    return 0


cdef int run_problem(irgrid_grid_sample* p, irgrid_scratch_cache* cache, x, coords, out, int num_threads,
                     const Policies* q) except -1:
    """Runs p on these arrays (checked by the caller) with the policies q, planned again only where the
    thread count or a policy changed since its last plan, or where its schedule depends on the grid
    (`per_call`): a plan's integer divisions cost a small call a tenth of its time."""
    cdef Policies planned = policies_of(p)
    p.data, p.coords, p.output = cnp.PyArray_DATA(x), cnp.PyArray_DATA(coords), cnp.PyArray_DATA(out)
    if p.per_call or p.threads != num_threads or not same_policies(&planned, q):
        plan_problem(p, num_threads, q)
    return run_plan(p, cache)


cdef double timed_run(irgrid_grid_sample* p, void* cache) noexcept:
    """irgrid_grid_sample_tune's call of a candidate (grid_sample.h's irgrid_grid_sample_timed_run): p
    planned and run over the plan's scratch `cache`; its seconds, or -1 where it failed."""
    cdef timespec start, stop
    if irgrid_grid_sample_plan(p):
        return -1
    clock_gettime(CLOCK_MONOTONIC, &start)
    try:
        run_plan(p, <irgrid_scratch_cache*>cache)
    except MemoryError:
        return -1
    clock_gettime(CLOCK_MONOTONIC, &stop)
    return <double>(stop.tv_sec - start.tv_sec) + <double>(stop.tv_nsec - start.tv_nsec) * 1e-9


cdef irgrid_index data_layout(const irgrid_index* dims, irgrid_index rank, int mode, int padding) except -1:
    """Check rank, mode, padding and the data's spatial dims (the core's plan checks them too, with
    codes: these are the messages); return the taps per point."""
    cdef irgrid_index max_taps = 1, k
    if rank < 1 or rank > IRGRID_MAX_RANK:
        raise ValueError(f"rank must be in 1..{IRGRID_MAX_RANK}")
    if (mode not in (IRGRID_MODE_NEAREST, IRGRID_MODE_LINEAR, IRGRID_MODE_CUBIC)
            or padding not in (IRGRID_PAD_ZEROS, IRGRID_PAD_BORDER, IRGRID_PAD_REFLECTION)):
        raise ValueError("unknown mode or padding")
    for k in range(rank - 1, -1, -1):
        if dims[k] < 1:
            raise ValueError("input spatial dims must be positive")
        max_taps *= 1 if mode == IRGRID_MODE_NEAREST else (2 if mode == IRGRID_MODE_LINEAR else 4)
    if max_taps > IRGRID_MAX_TAPS:
        raise ValueError(f"{max_taps} taps per point exceed the kernel's {IRGRID_MAX_TAPS}")
    return max_taps


cdef class SamplePlan:
    """GridSample with fixed shapes, dtype and attributes, checked once; then called per run.

    `SamplePlan(x_shape, coords_shape, dtype, mode, padding, align_corners)` samples data x (N, C,
    *dims) at a grid (N, *out_dims, r); with `out_dims` (and `grid_align_corners`) coords is instead
    theta (N, r, r + 1) of a fused AffineGrid; with `displacement` = (component, gain, scale, shift),
    r values each, coords is a displacement field (N, m, *out_dims) (grid_sample.h's
    irgrid_displacement). Every size, the mode, padding and
    taps are validated here (ValueError). `plan(x, coords, out=None, num_threads=1)` then only checks
    that x and coords are ndarrays of the plan's dtype and shapes (a few C comparisons, no Python
    attribute lookups: the per-call cost of a small model), copies one that is not C-contiguous,
    aligned and native-endian, and fills `out` (same checks, writeable) or a fresh array. This is the
    one entry point into the kernel: `irgrid.ops.grid_sample.sample`, the fused AffineGrid and the
    compiled model's prepared steps all run through it.

    With `tune`, the plan as a compiled model's step (`run`) chooses its path policies on its first call
    at a thread count by timing them (`tune`); calls of other thread counts or under other global
    policies (use_interleave, ...) plan as usual.
    """
    cdef readonly tuple x_shape, coords_shape, out_shape
    cdef readonly object dtype
    cdef int typenum
    cdef bint affine
    cdef bint displaced
    cdef Py_ssize_t rank
    cdef Py_ssize_t out_bytes  # the output's bytes, -1 past what a 64-byte aligned buffer can hold
    cdef cnp.npy_intp x_dims[IRGRID_MAX_RANK + 2]
    cdef cnp.npy_intp coords_dims[IRGRID_MAX_RANK + 2]
    cdef cnp.npy_intp y_dims[IRGRID_MAX_RANK + 2]
    cdef irgrid_grid_sample problem  # shapes and attributes, planned for the last call's threads and policies
    cdef bint running  # a call runs `problem` (then another thread's call runs a copy)
    cdef irgrid_scratch_cache cache  # the calls' scratch, kept between them
    cdef bint tune_steps  # `run` tunes on its first call at a thread count
    cdef int tuned_threads  # the thread count `tuned` was chosen for (0: none)
    cdef Policies tuned_from, tuned  # the global policies then, and the ones the tuner chose
    cdef readonly str tuned_choice  # what the last tuning chose: "" (the plan's own policies), "avx512=never", ...

    def __dealloc__(self):
        irgrid_scratch_release(&self.cache)

    def __init__(self, x_shape, coords_shape, dtype, int mode, int padding, bint align_corners,
                 out_dims=None, bint grid_align_corners=False, displacement=None, bint tune=False):
        cdef Py_ssize_t k, rank = len(x_shape) - 2, coords_ndim = len(coords_shape), points
        cdef irgrid_grid_sample* p = &self.problem
        cdef Policies q = current_policies()
        self.tune_steps, self.tuned_threads, self.tuned_choice = tune, 0, None
        self.affine = out_dims is not None
        self.displaced = displacement is not None
        self.x_shape, self.coords_shape = tuple(x_shape), tuple(coords_shape)
        self.dtype = np.dtype(dtype)
        if self.dtype == np.float32:
            self.typenum, p.dtype = cnp.NPY_FLOAT, IRGRID_F32
        elif self.dtype == np.float64:
            self.typenum, p.dtype = cnp.NPY_DOUBLE, IRGRID_F64
        else:
            raise ValueError(f"the kernel runs f32 or f64, not {self.dtype}")
        if rank < 1 or rank > IRGRID_MAX_RANK or coords_ndim != (3 if self.affine else rank + 2):
            raise ValueError(f"data must be (N, C, *r dims) with 1 <= r <= {IRGRID_MAX_RANK} and coords "
                             f"{'theta (N, r, r + 1)' if self.affine else 'a grid (N, *out_dims, r)'}, got "
                             f"{self.x_shape} and {self.coords_shape}")
        for k in range(rank + 2):
            self.x_dims[k] = self.x_shape[k]
        for k in range(coords_ndim):
            self.coords_dims[k] = self.coords_shape[k]
        p.batch, p.channels, p.rank = self.x_dims[0], self.x_dims[1], rank
        self.rank = rank
        if p.batch < 0 or p.channels < 0:
            raise ValueError("dims must not be negative")
        for k in range(rank):
            p.dims[k] = self.x_dims[k + 2]
        data_layout(p.dims, rank, mode, padding)
        p.mode, p.padding, p.align_corners = mode, padding, align_corners
        p.affine, p.grid_align_corners = self.affine, grid_align_corners
        if self.affine:
            out_dims = tuple(out_dims)
            if rank > IRGRID_AFFINE_MAX_RANK or len(out_dims) != rank:
                raise ValueError(f"an affine grid has 1..{IRGRID_AFFINE_MAX_RANK} dims, as many as the data")
            if self.coords_dims[0] != p.batch or self.coords_dims[1] != rank or self.coords_dims[2] != rank + 1:
                raise ValueError(f"theta must be {(p.batch, rank, rank + 1)}, got {self.coords_shape}")
            for k in range(rank):
                p.out_dims[k] = out_dims[k]
                if p.out_dims[k] < 1:
                    raise ValueError("grid dims must be positive")
            if p.out_dims[rank - 1] > INT_MAX:
                raise ValueError(f"rows of more than {INT_MAX} points are not supported")
        elif self.displaced:
            component, gain, scale, shift = displacement
            if rank > IRGRID_AFFINE_MAX_RANK or not len(component) == len(gain) == len(scale) == len(shift) == rank:
                raise ValueError(f"a displacement has 1..{IRGRID_AFFINE_MAX_RANK} components, one per data dim")
            out_dims = self.coords_shape[2:]
            if self.coords_dims[0] != p.batch:
                raise ValueError(f"the field must be (N={p.batch}, m, *out_dims), got {self.coords_shape}")
            p.displaced = True
            p.displacement.channels = self.coords_dims[1]
            for k in range(rank):
                p.out_dims[k] = self.coords_dims[k + 2]
                p.displacement.component[k] = component[k]
                p.displacement.gain[k], p.displacement.scale[k], p.displacement.shift[k] = gain[k], scale[k], shift[k]
        else:
            out_dims = self.coords_shape[1:rank + 1]
            if self.coords_dims[0] != p.batch or self.coords_dims[rank + 1] != rank:
                raise ValueError(f"grid must be (N={p.batch}, *out_dims, {rank}), got {self.coords_shape}")
            for k in range(rank):
                p.out_dims[k] = self.coords_dims[k + 1]
        self.out_shape = self.x_shape[:2] + out_dims
        points = math.prod(out_dims)  # an OverflowError past Py_ssize_t, never a wrap
        for k in range(rank + 2):
            self.y_dims[k] = self.out_shape[k]
            if self.y_dims[k] < 0:
                raise ValueError("dims must not be negative")
        nbytes = math.prod(self.out_shape) * self.dtype.itemsize
        self.out_bytes = nbytes if nbytes <= PY_SSIZE_T_MAX - 64 else -1
        plan_problem(p, 1, &q)

    cdef object _input(self, object a, const cnp.npy_intp* dims, int ndim, str what):
        """`a` if it is an array of the plan's dtype and shape (C-contiguous: copied if not)."""
        if not cnp.PyArray_Check(a) or cnp.PyArray_TYPE(a) != self.typenum:
            raise ValueError(f"{what} must be a {self.dtype} array, got {getattr(a, 'dtype', type(a).__name__)}")
        if cnp.PyArray_NDIM(a) != ndim or memcmp(cnp.PyArray_DIMS(a), dims, ndim * sizeof(cnp.npy_intp)):
            raise ValueError(f"{what} must have shape {self._shape(dims, ndim)}, got {a.shape}")
        if not (cnp.PyArray_ISCARRAY_RO(a) and cnp.PyArray_ISNOTSWAPPED(a)):
            a = np.ascontiguousarray(a, self.dtype)
        return a

    cdef object _coords(self, object coords):
        """`coords` checked (and made C-contiguous) as `_input` does: the grid, theta or field."""
        return self._input(coords, self.coords_dims, 3 if self.affine else self.rank + 2,
                           "theta" if self.affine else ("field" if self.displaced else "grid"))

    cdef tuple _shape(self, const cnp.npy_intp* dims, int ndim):
        return tuple([dims[k] for k in range(ndim)])

    def route(self, int num_threads=1, coords=None) -> str:
        """The path a call with `num_threads` threads takes under the current policies: "blocks" (the
        scalar path), "gather", "items" (a batch of one-channel items as one run), or "interleaved",
        "shared" (one scratch for the workers) or "binned" with its pixels' channels and, for cubic's row
        scratch, "rows" ("interleaved 16 rows"; binned with one row scratch for the workers: "binned 16
        rows shared"); " points" where 2-D nearest of a few channels runs by points (the plan's `pixel`:
        "gather points", "interleaved 2 points"). Where the path depends on the grid's values (2-D nearest
        by points: "shared 2 points" on a local grid; 3-D cubic's pixels and shared row scratch on a
        scattered one; " streamed" where 8-channel pixels or 2-D cubic's rows stream a large output on a
        scattered one: "shared 8 streamed"), on `coords` (as a call takes them; without it, as for a scattered grid).
        For tests: the paths give the same bits (cubic's row runs excepted), so only this tells them
        apart."""
        cdef irgrid_grid_sample p = self.problem
        cdef Policies q = self._policies(num_threads)
        p.coords = NULL
        if coords is not None:
            coords = self._coords(coords)
            p.coords = cnp.PyArray_DATA(coords)
        plan_problem(&p, num_threads, &q)
        name = {IRGRID_GS_BLOCKS: "blocks", IRGRID_GS_GATHER: "gather", IRGRID_GS_ITEMS: "items",
                IRGRID_GS_INTERLEAVE: "interleaved", IRGRID_GS_BINNED: "binned", IRGRID_GS_SHARED: "shared"}[p.path]
        if p.path in (IRGRID_GS_INTERLEAVE, IRGRID_GS_BINNED, IRGRID_GS_SHARED):
            return (f"{name} {p.lanes}" + (" rows" if p.rows else "") + (" points" if p.pixel else "")
                    + (" stacked" if p.stacked else "")
                    + (" shared" if p.path == IRGRID_GS_BINNED and p.piece else "")
                    + (" streamed" if p.streams else ""))
        return name + (" points" if p.pixel else "")

    def __call__(self, x, coords, out=None, int num_threads=1):
        """Sample x at coords into `out` (or a fresh array) with `num_threads` threads; returns it."""
        return self._sample(x, coords, out, num_threads, False)

    def tune(self, x, coords, out=None, int num_threads=1):
        """Sample as a call does, choosing the plan's path policies for `num_threads` threads by timing
        them on this call (kernels/core/grid_sample.h's irgrid_grid_sample_tune: the plan's own policies
        and each that sets one of interleave, avx512, gathers, binning to never or always, kept only
        where it gives the same bits; a few calls of each, taken only where it beats the plan's own by a
        margin). Later calls at that thread count, under the same global policies, take them
        (`tuned_choice` says which). Why: the plan's thresholds were measured on a few CPUs, and a
        threshold tuned on one can lose on another (benchmarks/README.md, "Paths chosen by timing")."""
        return self._sample(x, coords, out, num_threads, True)

    def run(self, arrays, ctx):
        """The plan as a compiled model's prepared step (`irgrid.registry.PreparedFn`): [output] for
        arrays (data, coords) into ctx.out[0] (or a fresh array) with ctx.threads threads, tuned on its
        first call at a thread count where the plan was made with `tune`. In Cython, so a small model's
        call pays no Python frame for it."""
        out = ctx.out
        return [self._sample(arrays[0], arrays[1], out[0] if out else None, ctx.threads,
                             self.tune_steps and self.tuned_threads != ctx.threads)]

    cdef Policies _policies(self, int num_threads):
        """The policies a call at `num_threads` threads plans with: the tuned ones where they were chosen
        for that thread count under the global policies as they are, else the global ones."""
        cdef Policies q = current_policies()
        if self.tuned_threads == num_threads and same_policies(&q, &self.tuned_from):
            return self.tuned
        return q

    cdef int _tune(self, x, coords, out, int num_threads) except -1:
        """irgrid_grid_sample_tune on this call, its choice kept for `num_threads`."""
        cdef irgrid_grid_sample* p = &self.problem
        cdef Policies q = current_policies()
        cdef int chosen
        p.data, p.coords, p.output = cnp.PyArray_DATA(x), cnp.PyArray_DATA(coords), cnp.PyArray_DATA(out)
        p.threads, p.simd, p.interleave, p.binning, p.gathers, p.avx512 = (
            num_threads, q.simd, q.interleave, q.binning, q.gathers, q.avx512)
        spare = np.empty(self.out_bytes + 64, np.uint8)  # the other candidates' results
        chosen = irgrid_grid_sample_tune(p, cnp.PyArray_DATA(spare), timed_run, &self.cache)
        if chosen >= 0:  # the cache holds the largest candidate's scratch: the next call takes its own
            irgrid_scratch_release(&self.cache)
        self.tuned_threads, self.tuned_from = num_threads, q
        if chosen < 0:  # the plan failed: run as usual, raising its error
            self.tuned = q
            self.tuned_choice = ""
            return run_problem(p, &self.cache, x, coords, out, num_threads, &q)
        self.tuned = policies_of(p)
        self.tuned_choice = ", ".join(f"{name}={POLICY_NAMES[now]}" for name, now, was in (
            ("interleave", self.tuned.interleave, q.interleave), ("avx512", self.tuned.avx512, q.avx512),
            ("gathers", self.tuned.gathers, q.gathers), ("binning", self.tuned.binning, q.binning)) if now != was)
        return 0

    cdef object _fresh(self, int ndim):
        """A fresh output array; from ALIGNED_OUTPUT_BYTES on, a view of a byte buffer that starts on a
        64-byte line."""
        cdef cnp.npy_intp size = self.out_bytes + 64
        cdef char* data
        if self.out_bytes < ALIGNED_OUTPUT_BYTES:
            return cnp.PyArray_EMPTY(ndim, self.y_dims, self.typenum, 0)
        buffer = cnp.PyArray_EMPTY(1, &size, cnp.NPY_UINT8, 0)
        data = <char*>cnp.PyArray_DATA(buffer)
        out = cnp.PyArray_SimpleNewFromData(ndim, self.y_dims, self.typenum, data + (-<uintptr_t>data & 63))
        cnp.set_array_base(out, buffer)
        return out

    cdef object _sample(self, x, coords, out, int num_threads, bint tune):
        cdef int ndim = self.rank + 2
        x = self._input(x, self.x_dims, ndim, "data")
        coords = self._coords(coords)
        if out is None:
            out = self._fresh(ndim)
        elif (not cnp.PyArray_Check(out) or cnp.PyArray_TYPE(out) != self.typenum or cnp.PyArray_NDIM(out) != ndim
              or memcmp(cnp.PyArray_DIMS(out), self.y_dims, ndim * sizeof(cnp.npy_intp))
              or not (cnp.PyArray_ISCARRAY(out) and cnp.PyArray_ISNOTSWAPPED(out))):
            raise ValueError(f"out must be a writeable C-contiguous {self.dtype} array of shape {self.out_shape}")
        if self.problem.points == 0 or self.problem.batch == 0 or self.problem.channels == 0:
            return out
        cdef irgrid_grid_sample copy
        cdef Policies q = self._policies(num_threads)
        if self.running:  # another thread runs this plan now (without the GIL): a copy of its own, untuned
            copy = self.problem
            run_problem(&copy, &self.cache, x, coords, out, num_threads, &q)
        else:
            self.running = True
            try:
                if tune:
                    self._tune(x, coords, out, num_threads)
                else:
                    run_problem(&self.problem, &self.cache, x, coords, out, num_threads, &q)
            finally:
                self.running = False
        return out

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The convolution engine's kernels: DeformConv's im2col, the column transpose and the engine's own GEMM
(where OpenVINO's MatMul does not run it). The arithmetic is C (kernels/core/deform_im2col.h, gemm.h), so
the OpenVINO extension runs the very same code: here validate, fill the problem, plan, prange its units.
"""

from cython.parallel cimport parallel, prange
from cython cimport floating

from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef extern from "deform_im2col.h" nogil:
    enum:
        IRGRID_MAX_TAPS
        IRGRID_DEFORM_MAX_RANK
        IRGRID_DEFORM_ZEROS
        IRGRID_DEFORM_EDGE
        IRGRID_DEFORM_SIMD_AUTO
        IRGRID_DEFORM_SIMD_BASELINE
    ctypedef struct irgrid_schedule:
        Py_ssize_t units[4]
    ctypedef struct irgrid_deform_im2col:
        int f64
        int rank
        Py_ssize_t channels
        Py_ssize_t in_dims[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t out_dims[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t kernel[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t strides[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t dilations[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t pads_begin[IRGRID_DEFORM_MAX_RANK]
        Py_ssize_t groups, offset_groups
        int has_offsets, has_mask, boundary
        Py_ssize_t tile_start, tile_stop
        int stream, simd
        const void* x
        const void* offsets
        const void* mask
        void* col
        irgrid_schedule schedule
    ctypedef struct irgrid_deform_transpose:
        int f64, simd
        Py_ssize_t rows, cols, src_stride, dst_stride
        const void* src
        void* dst
        const void* bias
        irgrid_schedule schedule
    int irgrid_deform_im2col_plan(irgrid_deform_im2col* p)
    void irgrid_deform_im2col_run(const irgrid_deform_im2col* p, int phase, void* shared, void* worker_scratch,
                                  Py_ssize_t begin, Py_ssize_t end)
    int irgrid_deform_transpose_plan(irgrid_deform_transpose* p)
    void irgrid_deform_transpose_run(const irgrid_deform_transpose* p, int phase, void* shared,
                                     void* worker_scratch, Py_ssize_t begin, Py_ssize_t end)
    const char* irgrid_deform_simd_name(int simd)
    const char* irgrid_error_text(int status)

cdef extern from "gemm.h" nogil:
    ctypedef struct irgrid_gemm:
        int f64
        Py_ssize_t rows, inner, cols
        const void* a
        const void* b
        void* out
        irgrid_schedule schedule
    int irgrid_gemm_plan(irgrid_gemm* p)
    void irgrid_gemm_run(const irgrid_gemm* p, int phase, void* shared, void* worker_scratch,
                         Py_ssize_t begin, Py_ssize_t end)

# The vector path of every call from this module (select_simd).
cdef int simd_policy = IRGRID_DEFORM_SIMD_AUTO


def select_simd(bint allow) -> str:
    """Choose the tap loop: AVX2+FMA when `allow` and the CPU has both and the process allows them
    (the default; kernels/core/cpu.h: IRGRID_SIMD=0 or ONEDNN_MAX_CPU_ISA, as for GridSample), else the
    baseline build (tests run both). Returns the one in use: "avx2+fma" or "baseline".
    Not to be called while a kernel runs."""
    global simd_policy
    simd_policy = IRGRID_DEFORM_SIMD_AUTO if allow else IRGRID_DEFORM_SIMD_BASELINE
    return irgrid_deform_simd_name(simd_policy).decode()


select_simd(True)


cdef inline void im2col_unit(const irgrid_deform_im2col* problem, Py_ssize_t unit) noexcept nogil:
    """One unit of the plan (IRGRID_DEFORM_CHUNK_POINTS output points), as a worker of prange runs it."""
    irgrid_deform_im2col_run(problem, 0, NULL, NULL, unit, unit + 1)


cdef inline void gemm_unit(const irgrid_gemm* problem, Py_ssize_t unit) noexcept nogil:
    irgrid_free_worker()
    irgrid_gemm_run(problem, 0, NULL, NULL, unit, unit + 1)


cdef inline void transpose_unit(const irgrid_deform_transpose* problem, Py_ssize_t unit) noexcept nogil:
    """One block of the plan on an OpenMP worker, the worker first given the module's CPUs."""
    irgrid_free_worker()
    irgrid_deform_transpose_run(problem, 0, NULL, NULL, unit, unit + 1)


def deformable_columns(const floating[::1] x, const floating[::1] offsets, const floating[::1] mask,
                       floating[::1] col, Py_ssize_t channels, const Py_ssize_t[::1] in_dims,
                       const Py_ssize_t[::1] out_dims, const Py_ssize_t[::1] kernel,
                       const Py_ssize_t[::1] strides, const Py_ssize_t[::1] dilations,
                       const Py_ssize_t[::1] pads_begin, Py_ssize_t groups, Py_ssize_t offset_groups,
                       bint has_offsets, bint has_mask, bint edge_rule, Py_ssize_t tile_start,
                       Py_ssize_t tile_stop, int num_threads, bint stream_columns=False) -> None:
    """Fill col (groups, tile_stop - tile_start, K * C / groups) for output points [tile_start,
    tile_stop) of one item.

    x: (*in_dims, C) flat (channels-last); offsets (G * K * r, points) and mask (G * K, points) flat,
    ignored (any length) unless has_offsets / has_mask. edge_rule: BOUNDARY_EDGE, else
    BOUNDARY_ZEROS. The 2**r taps of a point must fit MAX_TAPS (r <= 12).
    """
    cdef Py_ssize_t rank = in_dims.shape[0]
    cdef Py_ssize_t plane = 1, points = 1, kernel_size = 1, d, units, unit
    cdef Py_ssize_t tile_points = tile_stop - tile_start
    cdef irgrid_deform_im2col problem
    cdef int status
    if rank < 1 or rank > IRGRID_DEFORM_MAX_RANK:
        raise ValueError(f"{rank} spatial dims: 2**rank taps per point exceed the kernel's {IRGRID_MAX_TAPS}")
    if (out_dims.shape[0] != rank or kernel.shape[0] != rank or strides.shape[0] != rank
            or dilations.shape[0] != rank or pads_begin.shape[0] != rank):
        raise ValueError("every spatial parameter needs one value per spatial dim")
    if offset_groups < 1 or channels % offset_groups or groups < 1 or channels % groups:
        raise ValueError("channels must be a multiple of groups and of offset_groups")
    for d in range(rank - 1, -1, -1):
        if in_dims[d] < 1 or out_dims[d] < 1 or kernel[d] < 1 or strides[d] < 1 or dilations[d] < 1:
            raise ValueError("dims, kernel, strides and dilations must be positive")
        plane *= in_dims[d]
        points *= out_dims[d]
        kernel_size *= kernel[d]
    if not 0 <= tile_start <= tile_stop <= points:
        raise ValueError("tile outside the output points")
    if x.shape[0] != channels * plane or col.shape[0] != channels * kernel_size * tile_points:
        raise ValueError("data or column buffer size does not match the shapes")
    if has_offsets and offsets.shape[0] != offset_groups * kernel_size * rank * points:
        raise ValueError("offset buffer size does not match the shapes")
    if has_mask and mask.shape[0] != offset_groups * kernel_size * points:
        raise ValueError("mask buffer size does not match the shapes")
    if tile_points == 0 or channels == 0:
        return
    problem.f64 = floating is double
    problem.rank = rank
    problem.channels = channels
    for d in range(rank):
        problem.in_dims[d] = in_dims[d]
        problem.out_dims[d] = out_dims[d]
        problem.kernel[d] = kernel[d]
        problem.strides[d] = strides[d]
        problem.dilations[d] = dilations[d]
        problem.pads_begin[d] = pads_begin[d]
    problem.groups = groups
    problem.offset_groups = offset_groups
    problem.has_offsets = has_offsets
    problem.has_mask = has_mask
    problem.boundary = IRGRID_DEFORM_EDGE if edge_rule else IRGRID_DEFORM_ZEROS
    problem.tile_start = tile_start
    problem.tile_stop = tile_stop
    problem.stream = stream_columns
    problem.simd = simd_policy
    problem.x = &x[0]
    problem.offsets = &offsets[0]
    problem.mask = &mask[0]
    problem.col = &col[0]
    status = irgrid_deform_im2col_plan(&problem)
    if status:
        raise ValueError(f"DeformConv im2col: {irgrid_error_text(status).decode()}")
    units = problem.schedule.units[0]
    num_threads = max(min(num_threads, units), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            irgrid_deform_im2col_run(&problem, 0, NULL, NULL, 0, units)
        return
    with nogil, parallel(num_threads=num_threads):
        irgrid_free_worker()  # every worker, even one a dynamic schedule leaves without a chunk
        for unit in prange(units, schedule="dynamic"):
            im2col_unit(&problem, unit)


def transpose(const floating[:, :] src, floating[:, :] dst, bias, int num_threads) -> None:
    """dst (C, R) = src (R, C) transposed, plus bias (C,) per row of dst when given; both with unit
    inner stride. Parallel over 64 x 64 blocks of the source (so a plane of few rows, like the data
    of a 64-channel layer, still splits)."""
    cdef irgrid_deform_transpose problem
    cdef Py_ssize_t units, unit
    cdef const floating[::1] b
    cdef int status
    if dst.shape[0] != src.shape[1] or dst.shape[1] != src.shape[0]:
        raise ValueError("dst must be src's transpose in shape")
    if src.shape[0] == 0 or src.shape[1] == 0:
        return
    if src.strides[1] != sizeof(floating) or dst.strides[1] != sizeof(floating):
        raise ValueError("src and dst need a unit inner stride")
    problem.bias = NULL
    if bias is not None:
        b = bias
        if b.shape[0] != src.shape[1]:
            raise ValueError("bias needs one value per destination row")
        problem.bias = &b[0]
    problem.f64 = floating is double
    problem.simd = simd_policy
    problem.rows = src.shape[0]
    problem.cols = src.shape[1]
    problem.src_stride = src.strides[0] // <Py_ssize_t>sizeof(floating)
    problem.dst_stride = dst.strides[0] // <Py_ssize_t>sizeof(floating)
    problem.src = &src[0, 0]
    problem.dst = &dst[0, 0]
    status = irgrid_deform_transpose_plan(&problem)
    if status:
        raise ValueError(f"DeformConv transpose: {irgrid_error_text(status).decode()}")
    units = problem.schedule.units[0]
    num_threads = max(min(num_threads, units), 1)
    if num_threads == 1:  # all blocks at once, as one rectangle
        with nogil:
            irgrid_deform_transpose_run(&problem, 0, NULL, NULL, 0, units)
        return
    for unit in prange(units, nogil=True, schedule="static", num_threads=num_threads):
        transpose_unit(&problem, unit)


def gemm(const floating[:, ::1] a, const floating[:, ::1] b, floating[:, ::1] out, int num_threads) -> None:
    """out (M, N) = a (M, K) @ b (K, N), each output summed over K in order with no FMA (gemm.h): the
    same bits at any thread count, and in the native library."""
    cdef irgrid_gemm problem
    cdef Py_ssize_t units, unit
    cdef int status
    if a.shape[1] != b.shape[0] or out.shape[0] != a.shape[0] or out.shape[1] != b.shape[1]:
        raise ValueError("gemm: a (M, K), b (K, N) and out (M, N) do not fit together")
    problem.f64 = floating is double
    problem.rows = a.shape[0]
    problem.inner = a.shape[1]
    problem.cols = b.shape[1]
    problem.a = &a[0, 0] if a.shape[0] and a.shape[1] else NULL
    problem.b = &b[0, 0] if b.shape[0] and b.shape[1] else NULL
    problem.out = &out[0, 0] if out.shape[0] and out.shape[1] else NULL
    status = irgrid_gemm_plan(&problem)
    if status:
        raise ValueError(f"gemm: {irgrid_error_text(status).decode()}")
    units = problem.schedule.units[0]
    num_threads = max(min(num_threads, units), 1)
    if num_threads == 1:
        with nogil:
            irgrid_gemm_run(&problem, 0, NULL, NULL, 0, units)
        return
    for unit in prange(units, nogil=True, schedule="static", num_threads=num_threads):
        gemm_unit(&problem, unit)

# The C core's API (kernels/core/*.h) for the Cython drivers: codes and limits, the schedule, and the
# problem structs, plans and chunk functions of GridSample, AffineGrid and the element-wise chains.
from libc.stddef cimport ptrdiff_t

cdef extern from "guards.h":
    ctypedef ptrdiff_t irgrid_index
    enum:
        IRGRID_PAD_ZEROS
        IRGRID_PAD_BORDER
        IRGRID_PAD_REFLECTION
        IRGRID_MODE_NEAREST
        IRGRID_MODE_LINEAR
        IRGRID_MODE_CUBIC
        IRGRID_MAX_TAPS
        IRGRID_MAX_RANK

cdef extern from "status.h":
    const char* irgrid_error_text(int status) noexcept nogil

cdef extern from "dtype.h":
    enum:
        IRGRID_F32
        IRGRID_F64

cdef extern from "schedule.h":
    enum:
        IRGRID_MAX_PHASES
    ctypedef struct irgrid_schedule:
        int phases
        irgrid_index rounds
        irgrid_index units[IRGRID_MAX_PHASES]
        size_t worker_bytes
        size_t shared_bytes
        int workers
        int in_order
    void irgrid_worker_reset(void* worker_scratch) noexcept nogil

cdef extern from "scratch.h":
    ctypedef struct irgrid_scratch_cache:
        pass
    void* irgrid_scratch_take(irgrid_scratch_cache* cache, size_t bytes) noexcept nogil
    void irgrid_scratch_give(irgrid_scratch_cache* cache, void* scratch) noexcept nogil
    void irgrid_scratch_release(irgrid_scratch_cache* cache) noexcept nogil

cdef extern from "affine.h":
    enum:
        IRGRID_AFFINE_MAX_RANK

cdef extern from "cpu.h":
    unsigned irgrid_cpu_amd_family() noexcept nogil

cdef extern from "grid_sample.h":
    enum:
        IRGRID_POLICY_NEVER
        IRGRID_POLICY_AUTO
        IRGRID_POLICY_ALWAYS
    enum:
        IRGRID_GS_BLOCKS
        IRGRID_GS_GATHER
        IRGRID_GS_INTERLEAVE
        IRGRID_GS_BINNED
        IRGRID_GS_ITEMS
        IRGRID_GS_SHARED
    ctypedef struct irgrid_displacement:
        irgrid_index channels
        irgrid_index component[IRGRID_AFFINE_MAX_RANK]
        double gain[IRGRID_AFFINE_MAX_RANK]
        double scale[IRGRID_AFFINE_MAX_RANK]
        double shift[IRGRID_AFFINE_MAX_RANK]
    ctypedef struct irgrid_grid_sample:
        int dtype
        irgrid_index batch, channels, rank
        irgrid_index dims[IRGRID_MAX_RANK]
        irgrid_index out_dims[IRGRID_MAX_RANK]
        int mode, padding, align_corners
        int affine, grid_align_corners, displaced
        irgrid_displacement displacement
        const void* data
        const void* coords
        void* output
        int simd, interleave, binning, gathers, avx512, threads
        irgrid_index points
        irgrid_schedule schedule
        int path, rows, pixel, stacked, per_call, streams
        irgrid_index lanes, piece
    int irgrid_grid_sample_simd_available() noexcept nogil
    int irgrid_grid_sample_gathers_pay() noexcept nogil
    int irgrid_grid_sample_wide_available() noexcept nogil
    int irgrid_grid_sample_plan(irgrid_grid_sample* p) noexcept nogil
    void irgrid_grid_sample_run(const irgrid_grid_sample* p, int phase, void* shared, void* worker,
                                irgrid_index begin, irgrid_index end) noexcept nogil
    ctypedef double (*irgrid_grid_sample_timed_run)(irgrid_grid_sample* p, void* context) noexcept
    int irgrid_grid_sample_tune(irgrid_grid_sample* p, void* spare, irgrid_grid_sample_timed_run run,
                                void* context) noexcept

cdef extern from "affine_grid.h":
    ctypedef struct irgrid_affine_grid:
        int dtype
        irgrid_index batch, rank
        irgrid_index out_dims[IRGRID_AFFINE_MAX_RANK]
        int align_corners
        const void* theta
        void* grid
        int threads
        irgrid_schedule schedule
    int irgrid_affine_grid_plan(irgrid_affine_grid* p) noexcept nogil
    void irgrid_affine_grid_run(const irgrid_affine_grid* p, int phase, void* shared, void* worker,
                                irgrid_index begin, irgrid_index end) noexcept nogil

cdef extern from "elementwise.h":
    enum:
        IRGRID_EW_MAX_RANK
        IRGRID_EW_MAX_REGISTERS
        IRGRID_EW_MAX_STEPS
        IRGRID_EW_ADD
        IRGRID_EW_SUBTRACT
        IRGRID_EW_MULTIPLY
        IRGRID_EW_DIVIDE
        IRGRID_EW_MINIMUM
        IRGRID_EW_MAXIMUM
        IRGRID_EW_LESS
        IRGRID_EW_GREATER
        IRGRID_EW_LESS_EQUAL
        IRGRID_EW_GREATER_EQUAL
        IRGRID_EW_EQUAL
        IRGRID_EW_NOT_EQUAL
        IRGRID_EW_SELECT
        IRGRID_EW_AND
        IRGRID_EW_OR
        IRGRID_EW_XOR
        IRGRID_EW_NOT
    ctypedef struct irgrid_ew_step:
        int op, out, a, b, c
    ctypedef struct irgrid_elementwise:
        int dtype
        int rank
        irgrid_index dims[IRGRID_EW_MAX_RANK]
        int inputs, registers
        const void* input[IRGRID_EW_MAX_REGISTERS]
        irgrid_index strides[IRGRID_EW_MAX_REGISTERS][IRGRID_EW_MAX_RANK]
        unsigned char boolean[IRGRID_EW_MAX_REGISTERS]
        int steps
        irgrid_ew_step step[IRGRID_EW_MAX_STEPS]
        void* output
        int threads
        irgrid_schedule schedule
    int irgrid_elementwise_plan(irgrid_elementwise* p) noexcept nogil
    void irgrid_elementwise_run(const irgrid_elementwise* p, int phase, void* shared, void* worker,
                                irgrid_index begin, irgrid_index end) noexcept nogil

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""GridSample for any number r of spatial dims: nearest, N-linear and N-cubic, three paddings.

For each output point the taps (flat offsets into one channel plane, and weights) are computed once,
then applied to every channel, one channel plane at a time over a chunk of points. Per spatial dim k
there are 1, 2 or 4 taps; their outer product gives
the point's taps, outermost dim first, so the summation order is fixed and results never depend on
the thread count. Semantics follow ONNX GridSample-22 as the README settles them (`dim_taps` in interpolation.pxd):
- nearest: round half to even, then pad the integer index;
- linear: border/reflection move the continuous coordinate, then each tap is padded;
- cubic: Keys A = -0.75 over floor(x)-1 .. floor(x)+2, each tap padded on its own;
- a NaN coordinate gives NaN; a coordinate at +-Inf or |g| >= 1e30 is a point at that infinity
  (zeros: 0, border: the edge, reflection: NaN).

Vector path (simd_gather.h; 2-D nearest/linear/cubic and 3-D nearest/linear with planes under 2**31
elements, on CPUs with AVX2 and FMA, checked once at import; IRGRID_SIMD=0 or `use_simd(False)`
keeps the scalar path). A chunk is one batch item's points for a few channels (SIMD_GROUP_BYTES of
planes, so that random grids' gathers stay in L2/L3 and the TLB). Per group of 8 (f32) or 4 (f64)
points the taps are computed in vector registers with dim_taps' arithmetic (the denormalisation and
f32 cubic weights in double, as the scalar code does; 8 f32 points' 2-D and 3-D coordinates are
deinterleaved in registers: through memory, a store-forwarding stall per group made 3-D trilinear
1.4x slower at one thread), 32 groups at a time into an L1 buffer, then
applied channel by channel: masked gathers (a dropped tap is never read), adjacent f32 taps as one
64-bit gather, FMA sums in tap order, the next channel's lines prefetched. Points with NaN, infinite,
|g| >= 1e30 or far (|x| > 2**22 pixels, reflection beyond one fold) coordinates go through
point_taps. A point's result depends only on its own coordinates, never on the blocking or the
thread count; it differs from the scalar sum by FMA rounding only (within the oracle tolerances).
Measured (this 2-core VM, shared with other jobs, so single-thread CPU time, interleaved medians,
kernel called directly, f32, X 1x32x256x256 / 8x64x64x64 / 1x16x32x64x64): vector / scalar time
random grids (uniform [-1.1, 1.1]): bilinear 0.31, nearest 0.49, bicubic 0.54, batched 1.2,
3-D trilinear 0.51; smooth warps (bench.py's): bilinear 0.92, nearest 0.61, bicubic 0.9,
batched 1.14, 3-D trilinear 0.94.

Interleaved vector path (every case of the vector path above and 3-D cubic, which has no gather
path: 64 taps per point, below; from INTERLEAVE_MIN_CHANNELS channels on, 3-D nearest from
INTERLEAVE_MIN_CHANNELS_3D_NEAREST; `use_interleave`). A gather costs about one element per cycle on
Zen3, no cheaper than scalar loads, so the path above stays near 5 cycles per output, worse with 16
(bicubic) or 8 (trilinear) taps.
Instead, a work unit (batch item, group of 8 f32 / 4 f64 channels, a span of points) copies the
group's planes into a per-thread scratch as pixels of one vector each (8x8 / 4x4 register transposes;
missing channels of a last partial group are zeros), plus one pixel of zeros that every tap zeros
padding drops points at, so nothing out of range, and no Inf or NaN of X, is read for it. Per group of
8 / 4 points the gather path's tap code (irgrid_lane_taps, irgrid_taps: one generic over rank and taps
per dim) gives offsets and weights; each tap is then one vector load of all the group's channels,
weight broadcast, FMA in the gather path's order (taps outer, the 8 / 4 points' independent chains
inner), so every output has the same FMA chain and the same bits as the gather path (fused AffineGrid
may take either path). 8 / 4 points x channels are transposed back in registers and stored
contiguously into each channel plane. Points the tap code leaves (non-finite or far) go through
point_taps on the planar X. Units are scheduled statically; items with fewer groups than 2 x threads
are split into spans of points, a thread copying a group in once per run of its units. The scratch is
(plane + 1) pixels x 32 bytes per thread, at most INTERLEAVE_MAX_BYTES (larger planes keep the gather
path; a 32x64x64 volume of 8 f32 channels is 4 MiB), allocated per call.
Measured as above plus 2-thread wall time (interleaved / gather path time, smooth and random grids):
bilinear 0.31-0.35, nearest 0.39-0.68, batched bilinear 0.25-0.36; with 1-3 channels it was about as
fast or up to 1.25x slower than the gather path, with 4 channels 0.6-1.0x its time, hence the
threshold. Bicubic (X 1x32x256x256, f32, 1 and 2 threads) 0.28-0.33 (f64 0.34-0.45); 3-D trilinear
(X 1x16x32x64x64) 0.30-0.48 (f64 0.53-0.87), with 1-2 channels 0.5-1.7, with 4 0.37-0.86; 3-D
nearest (one load per point: the copy weighs more) 0.43-0.82 with 16 channels, 0.67-1.19 with 8,
up to 1.7 with 4, hence its own threshold. Absolute, 2 threads, smooth grid: bicubic 5.1 ms (gather
path 15.5), trilinear 6.8 ms (14.5). 3-D cubic (Zen 4, X 1x16x32x64x64, 2 threads): 27 ms on the
scalar path, 10-13 ms on this generic run (random grid 42 and 13-16 ms).
3-D cubic has a run of its own (irgrid_cubic3d_run) wherever its row scratch fits
INTERLEAVE_MAX_BYTES (`rows_layout`): each row of W pixels follows 3 zero pixels, each plane 3 zero
rows and the volume 3 zero planes, with 4 after it, so a point's 64 taps are 4 plane, 4 row and 4
pixel offsets (a dropped one at zeros) with their weights: a row's x taps are summed with the x
weights in registers, a plane's rows with the y weights, the planes with the z weights. With zeros
padding the offsets are one per point, its first tap's, the others at constant strides from it
(simd_gather_body.h). Its sums differ from the generic run's by rounding only. Measured (prepared
plans, fastest of alternating processes, 1 and 2 threads): 0.73-0.82x the generic run's time on
smooth grids, 0.83-0.92x on random ones (the benchmark's medians 0.93x and 0.97x, two runs apart),
with 16 row offsets and z*y weights per point; per-dim offsets and weights then took 0.86-0.88x that
on smooth grids and a constant one, 0.95-0.99x on random ones (benchmarks/README.md, "Tricubic's
taps per dim"). On a scattered grid (a uniformly random one) its points are taken tile by tile
(binning.pxd, `binned_span`): 0.71-0.74x the time (2 threads), then 0.92-0.98x that with chunks of
32768 points in 1-row tiles, then 0.95x that (1 and 2 threads) with each chunk sorted once for all
channel groups (`sort_chunk`) instead of once per group. One offset per point with zeros padding
took 0.85-0.89x the time on smooth and random grids (2 threads, paired; benchmarks/README.md,
"Tricubic's taps as one offset per point"). Its row scratch takes the volume's planes as blocks of
points need them (`hold_planes`), not all before the first: a smooth warp's planes are copied just
before they are read, and the two threads' copies no longer all come at once; a warp that reads part
of the volume copies only that part. 2 threads, paired in one process: 0.77-0.85x the time on the
benchmark's smooth grid in noisy minutes, 0.96-1.01x in calm ones (0.97-1.05x in alternating
processes); a grid reading the central quarter 0.95-0.98x, a constant one 0.90-0.94x; random grids
(every plane read by the first chunk) unchanged. The generic layouts copied by slices this way took
1.06-1.16x on 2-D smooth grids (benchmarks/README.md, "Slices on demand for the generic scratch"), so
they copy the whole plane first. The generic run stays in irgrid_interleaved_sample for volumes whose
row scratch does not fit: dropping its 3-D cubic case from that function made 3-D
trilinear random 1.13-1.29x slower, with no change to its code (benchmarks/README.md, "Where the
stack lies").
2-D cubic has its run too (irgrid_cubic2d_run, 2026-11-27): one plane of that layout before 4 zero
rows (irgrid_interleave_plane2d, copied whole when a thread takes a group up), a point's 16 taps one
offset with zeros padding and 4 row and 4 pixel offsets otherwise (irgrid_cubic_window and
irgrid_cubic_taps, shared with 3-D), summed as 3-D sums one plane. X 1x32x256x256, 2 threads,
alternating processes: 0.53-0.57x the generic run's time (smooth and random grids; benchmarks/README.md,
"A separable 2-D cubic run"). Its sums differ from the gather path's by rounding only, so 2-D cubic's
bits now depend on the path as 3-D cubic's do (on the channel count: the gather path below
INTERLEAVE_MIN_CHANNELS).
"""
import math

import numpy as np

cimport numpy as cnp
from cython.parallel cimport parallel, prange, threadid
from cython cimport floating
from libc.limits cimport INT_MAX
from libc.math cimport NAN, floor
from cpython.pyport cimport PY_SSIZE_T_MAX
from libc.stdint cimport uintptr_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp

from interpolation cimport (
    PAD_ZEROS, PAD_BORDER, PAD_REFLECTION, MODE_NEAREST, MODE_LINEAR, MODE_CUBIC, MAX_TAPS, MAX_RANK,
    PointStatus, POINT_OK, POINT_ZERO, POINT_NAN, denormalize, dim_taps, outer_product_taps, weighted_sum,
)
from affine cimport AFFINE_MAX_RANK, affine_axes, affine_points
from binning cimport BIN_SAMPLE, scattered, sort_by_tile, tiling
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

cnp.import_array()
irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef extern from *:
    void __builtin_prefetch(const void*) noexcept nogil  # GCC and Clang; a hint, never a read

cdef extern from "simd_gather.h":
    int irgrid_simd_available() noexcept nogil
    bint irgrid_simd_fits(Py_ssize_t rank, int mode, Py_ssize_t plane) noexcept nogil
    bint irgrid_interleave_fits(Py_ssize_t rank, int mode, Py_ssize_t plane) noexcept nogil
    Py_ssize_t irgrid_simd_sample_f32(const float* x, const float* g, float* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t x_cstride, Py_ssize_t y_cstride, Py_ssize_t rank,
                                      const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding,
                                      int align, Py_ssize_t* fallback) noexcept nogil
    Py_ssize_t irgrid_simd_sample_f64(const double* x, const double* g, double* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t x_cstride, Py_ssize_t y_cstride, Py_ssize_t rank,
                                      const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding,
                                      int align, Py_ssize_t* fallback) noexcept nogil
    void irgrid_interleave_f32(const float* x, Py_ssize_t channels, Py_ssize_t x_cstride, Py_ssize_t plane,
                               float* s) noexcept nogil
    void irgrid_interleave_f64(const double* x, Py_ssize_t channels, Py_ssize_t x_cstride, Py_ssize_t plane,
                               double* s) noexcept nogil
    void irgrid_rows_padding_f32(const Py_ssize_t* dims, float* s) noexcept nogil
    void irgrid_rows_padding_f64(const Py_ssize_t* dims, double* s) noexcept nogil
    void irgrid_depth_range_f32(const float* g, Py_ssize_t n, float* lo, float* hi) noexcept nogil
    void irgrid_depth_range_f64(const double* g, Py_ssize_t n, double* lo, double* hi) noexcept nogil
    void irgrid_interleave_rows_f32(const float* x, Py_ssize_t channels, Py_ssize_t x_cstride, const Py_ssize_t* dims,
                                    Py_ssize_t z0, Py_ssize_t z1, float* s) noexcept nogil
    void irgrid_interleave_rows_f64(const double* x, Py_ssize_t channels, Py_ssize_t x_cstride, const Py_ssize_t* dims,
                                    Py_ssize_t z0, Py_ssize_t z1, double* s) noexcept nogil
    Py_ssize_t irgrid_interleaved_sample_f32(const float* s, const float* g, float* y, Py_ssize_t n,
                                             Py_ssize_t channels, Py_ssize_t y_cstride, Py_ssize_t plane,
                                             Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                                             int mode, int padding, int align, Py_ssize_t* fallback) noexcept nogil
    Py_ssize_t irgrid_cubic3d_run_f32(const float* s, const float* g, float* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t y_cstride, int by_point, const Py_ssize_t* dims, int padding,
                                      int align, Py_ssize_t* fallback) noexcept nogil
    Py_ssize_t irgrid_cubic3d_run_f64(const double* s, const double* g, double* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t y_cstride, int by_point, const Py_ssize_t* dims, int padding,
                                      int align, Py_ssize_t* fallback) noexcept nogil
    void irgrid_interleave_plane2d_f32(const float* x, Py_ssize_t channels, Py_ssize_t x_cstride,
                                       const Py_ssize_t* dims, float* s) noexcept nogil
    void irgrid_interleave_plane2d_f64(const double* x, Py_ssize_t channels, Py_ssize_t x_cstride,
                                       const Py_ssize_t* dims, double* s) noexcept nogil
    Py_ssize_t irgrid_cubic2d_run_f32(const float* s, const float* g, float* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t y_cstride, const Py_ssize_t* dims, int padding, int align,
                                      Py_ssize_t* fallback) noexcept nogil
    Py_ssize_t irgrid_cubic2d_run_f64(const double* s, const double* g, double* y, Py_ssize_t n, Py_ssize_t channels,
                                      Py_ssize_t y_cstride, const Py_ssize_t* dims, int padding, int align,
                                      Py_ssize_t* fallback) noexcept nogil
    void irgrid_tile_keys_f32(const float* g, Py_ssize_t n, Py_ssize_t rank, const double* scale, const double* offset,
                              const Py_ssize_t* tiles, int* keys) noexcept nogil
    void irgrid_tile_keys_f64(const double* g, Py_ssize_t n, Py_ssize_t rank, const double* scale,
                              const double* offset, const Py_ssize_t* tiles, int* keys) noexcept nogil
    void irgrid_unbin_f32(const float* out, const int* slot, Py_ssize_t n, Py_ssize_t channels, float* y,
                          Py_ssize_t y_cstride) noexcept nogil
    void irgrid_unbin_f64(const double* out, const int* slot, Py_ssize_t n, Py_ssize_t channels, double* y,
                          Py_ssize_t y_cstride) noexcept nogil
    Py_ssize_t irgrid_interleaved_sample_f64(const double* s, const double* g, double* y, Py_ssize_t n,
                                             Py_ssize_t channels, Py_ssize_t y_cstride, Py_ssize_t plane,
                                             Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                                             int mode, int padding, int align, Py_ssize_t* fallback) noexcept nogil

cdef enum:
    PIXEL_BYTES = 32  # a pixel of the interleaved scratches: one AVX2 vector of a group's channels
    AFFINE_SPAN = 256  # fused AffineGrid coordinates computed at a time by the scalar path
    SIMD_BLOCK = 1024  # points per call of the vector kernel (its fallback list and affine coordinates)
    SIMD_MAX_TAPS = 64  # taps of the vector paths' widest point (3-D cubic, interleaved path only)
    # Channel planes one chunk of the vector path reads (all its points, a few channels at a time):
    # a few MiB, so that random grids' gathers hit L2/L3 and the TLB (8 MiB of 256 KiB planes measured
    # 3x slower), while each point's taps are computed once for that many channels.
    SIMD_GROUP_BYTES = 2 << 20
    # Interleaved path: its scratch per thread at most this (a group's planes, interleaved), and
    # chosen by default from this many channels on, 3-D nearest (one tap) from the second (measurements
    # in the module docstring).
    INTERLEAVE_MAX_BYTES = 8 << 20
    INTERLEAVE_MIN_CHANNELS = 4
    INTERLEAVE_MIN_CHANNELS_3D_NEAREST = 16
    # 3-D cubic on a scattered grid (binning.pxd): points binned at a time (a chunk). The Bins buffers
    # then take 16 bytes per point of a segment (below; f32: its slots and sorted coordinates) and 1 MiB
    # per thread (f32: a chunk's outputs, 32 bytes per point). Measured (X 1x16x32x64x64, random grid):
    # with tiles of 4 rows, fastest of 6 alternating rounds, 2 threads 4096 points 5.44 ms, 8192 5.04,
    # 16384 4.84, 32768 4.92, 65536 5.67 (not binned 7.15); 1 thread 16384 9.2, 65536 8.7. With tiles
    # of 1 row (fastest of 3 calls, 10 rounds in one process, 2026-11-26): 32768 points 0.95-0.96x the
    # time of 16384 in 4-row tiles, 65536 0.97x, 24576 0.99x; 1 thread 0.93x. More points per span
    # sort them closer (the run is what gains), until the output buffer leaves L2 before unbinning.
    BIN_CAPACITY = 1 << 15
    # ... and an item's points sorted before they are sampled (a segment): at most this many at a time,
    # so that the Bins buffers stay within 16 MiB (f32: 4 + 12 bytes per point; f64 28 MiB) and a few
    # MiB per thread however large the grid
    BIN_SEGMENT = 1 << 20
    # A fresh output of at least this many bytes starts on a 64-byte line (SamplePlan._fresh): numpy's
    # large arrays start 16 (or 32) bytes past one, after malloc's header, so every other 32-byte store
    # of the kernels' outputs split two cache lines. Measured (2026-11-27, 2 threads, one process
    # alternating aligned and unaligned outputs): 0.94-1.00x the time on every benchmark case.
    ALIGNED_OUTPUT_BYTES = 1 << 16

cdef bint simd_on = irgrid_simd_available()
cdef int bin_policy = 1  # 0 never, 1 where the binning module judges a span scattered, 2 always (where it applies)
cdef int interleave_policy = 1  # 0 never, 1 from INTERLEAVE_MIN_CHANNELS channels on, 2 wherever it fits
# The policies use_binning and use_interleave choose between, and their codes.
cdef dict POLICIES = {"never": 0, "auto": 1, "always": 2}
cdef tuple POLICY_NAMES = ("never", "auto", "always")


def use_simd(bint on) -> bool:
    """Turn the vector path on (where the CPU has AVX2 and FMA) or off; returns whether it was on.
    IRGRID_SIMD=0 in the environment turns it off at import. For tests and comparisons."""
    global simd_on
    was = simd_on
    simd_on = on and irgrid_simd_available()
    return was

def use_binning(str policy) -> str:
    """Choose when 3-D cubic's interleaved run takes a grid's points tile by tile ("auto": spans that
    binning.pxd's `scattered` picks, "never", "always"); returns the previous policy. For tests and
    comparisons."""
    global bin_policy
    was = POLICY_NAMES[bin_policy]
    bin_policy = POLICIES[policy]
    return was


def use_interleave(str policy) -> str:
    """Choose when the vector path interleaves channels ("auto", "never", or "always" wherever the
    vector path runs and a group's scratch fits); returns the previous policy. For tests and comparisons."""
    global interleave_policy
    was = POLICY_NAMES[interleave_policy]
    interleave_policy = POLICIES[policy]
    return was


cdef inline Py_ssize_t point_taps(const floating* g, Py_ssize_t rank, const Py_ssize_t* dims,
                                  const Py_ssize_t* strides, int mode, int padding, bint align_corners,
                                  Py_ssize_t* off, floating* wt) noexcept nogil:
    """The taps of one point at normalised coordinates g (innermost dim first) into off / wt.

    Returns their count: 0 when the point samples only zeros padding, -1 when it is NaN.
    """
    cdef Py_ssize_t dim_off[4 * MAX_RANK]
    cdef floating dim_w[4 * MAX_RANK]
    cdef Py_ssize_t dim_n[MAX_RANK]
    cdef Py_ssize_t k
    cdef PointStatus status = POINT_OK
    for k in range(rank):  # k: spatial dim, outermost first; the grid lists innermost first
        status = dim_taps(g[rank - 1 - k], dims[k], strides[k], mode, padding, align_corners,
                          dim_off + 4 * k, dim_w + 4 * k, dim_n + k)
        if status != POINT_OK:
            break
    if status == POINT_ZERO:  # a NaN in a later coordinate still makes the point NaN
        for k in range(k + 1, rank):
            if g[rank - 1 - k] != g[rank - 1 - k]:
                status = POINT_NAN
    if status != POINT_OK:
        return -1 if status == POINT_NAN else 0
    return outer_product_taps(dim_off, dim_w, dim_n, rank, 4, 1, off, wt)


cdef void apply_taps(const floating* x, floating* y, Py_ssize_t channels, Py_ssize_t plane, Py_ssize_t points,
                     Py_ssize_t max_taps, Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t n,
                     const Py_ssize_t* tap_off, const floating* tap_w, const Py_ssize_t* tap_n) noexcept nogil:
    """Outputs [start, start + n) of batch item `batch_index` in every channel, from the block's taps
    (point i's at tap_off / tap_w + i * max_taps, tap_n[i] of them), one channel plane at a time."""
    cdef Py_ssize_t i, c, count
    cdef const Py_ssize_t* off
    cdef const floating* wt
    cdef const floating* xc
    cdef floating* yc
    for c in range(channels):
        xc = x + (batch_index * channels + c) * plane
        yc = y + (batch_index * channels + c) * points + start
        for i in range(n):
            count = tap_n[i]
            off = tap_off + i * max_taps
            wt = tap_w + i * max_taps
            if c + 1 < channels and count > 0:
                # The next channel reads the same offsets in the next plane: ask for them now, so
                # they arrive while this channel computes (measured 1.2-1.7x on 2-D linear/nearest).
                __builtin_prefetch(xc + plane + off[count - 1])
            if count == 4:  # the common interior bilinear point, unrolled (same summation order)
                yc[i] = wt[0] * xc[off[0]] + wt[1] * xc[off[1]] + wt[2] * xc[off[2]] + wt[3] * xc[off[3]]
            elif count == 1:
                yc[i] = wt[0] * xc[off[0]]
            elif count <= 0:
                yc[i] = NAN if count < 0 else 0
            else:
                yc[i] = weighted_sum(xc, off, wt, count)


cdef void sample_block(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                       Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                       Py_ssize_t plane, Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding,
                       bint align_corners, bint affine, const Py_ssize_t* extents, const floating* starts,
                       const floating* steps, Py_ssize_t batch_index, Py_ssize_t start,
                       Py_ssize_t stop) noexcept nogil:
    """Output points [start, stop) of batch item `batch_index` (at most MAX_TAPS // max_taps points).

    x: (N, C, *dims), y: (N, C, points), contiguous. coords is the grid (N, points, rank), or, when
    `affine`, theta (N, rank, rank + 1) of a fused AffineGrid: the coordinates of AFFINE_SPAN points
    at a time are then affine.pxd's `affine_points`, the very function AffineGrid's own kernel
    calls, so the result is bitwise AffineGrid then GridSample, without the grid tensor. The block's
    taps are computed once into stack buffers that stay in L1, then every channel reads them,
    writing the block's outputs contiguously.
    """
    cdef Py_ssize_t tap_off[MAX_TAPS]
    cdef floating tap_w[MAX_TAPS]
    cdef Py_ssize_t tap_n[MAX_TAPS]
    cdef floating g_affine[AFFINE_SPAN * AFFINE_MAX_RANK]
    cdef Py_ssize_t i, n = stop - start
    cdef const floating* g
    for i in range(n):
        if not affine:
            g = coords + (batch_index * points + start + i) * rank
        else:
            if i % AFFINE_SPAN == 0:
                affine_points(coords + batch_index * rank * (rank + 1), g_affine, rank, extents, starts, steps,
                              start + i, min(start + i + AFFINE_SPAN, stop))
            g = g_affine + i % AFFINE_SPAN * rank
        tap_n[i] = point_taps(g, rank, dims, strides, mode, padding, align_corners,
                              tap_off + i * max_taps, tap_w + i * max_taps)
    apply_taps(x, y, channels, plane, points, max_taps, batch_index, start, n, tap_off, tap_w, tap_n)


cdef struct Held:
    Py_ssize_t key  # the channel group a thread's scratch holds (its unit // spans; -1: none yet)
    Py_ssize_t lo, hi  # a row scratch's planes [lo, hi) copied in so far (hold_planes)


cdef void simd_block(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                     Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, Py_ssize_t plane,
                     Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding, bint align_corners,
                     bint affine, const Py_ssize_t* extents, const floating* starts, const floating* steps,
                     Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t c0,
                     Py_ssize_t c1, floating* scratch, Held* held) noexcept nogil:
    """Output points [start, stop) (at most SIMD_BLOCK) of channels [c0, c1) of batch item
    `batch_index`, as sample_block but with simd_gather.h's vector kernel (`simd_points`); with
    `held`, over a row scratch that first takes the planes these points read (hold_planes)."""
    cdef floating g_affine[SIMD_BLOCK * AFFINE_MAX_RANK]
    cdef const floating* g = coords + (batch_index * points + start) * rank
    if affine:
        affine_points(coords + batch_index * rank * (rank + 1), g_affine, rank, extents, starts, steps, start, stop)
        g = g_affine
    if held != NULL:
        hold_planes(x + (batch_index * channels + c0) * plane, c1 - c0, plane, dims, g, stop - start, padding,
                    align_corners, scratch, held)
    simd_points(x + (batch_index * channels + c0) * plane, g, y + (batch_index * channels + c0) * points + start,
                points, False, stop - start, c1 - c0, rank, dims, strides, plane, max_taps, mode, padding,
                align_corners, scratch)


cdef void simd_points(const floating* xb, const floating* g, floating* yb, Py_ssize_t y_cstride, bint by_point,
                      Py_ssize_t n, Py_ssize_t channels, Py_ssize_t rank, const Py_ssize_t* dims,
                      const Py_ssize_t* strides, Py_ssize_t plane, Py_ssize_t max_taps, int mode, int padding,
                      bint align_corners, const floating* scratch) noexcept nogil:
    """Points g[0, n) (n <= SIMD_BLOCK) of planes xb (`channels` of them) into yb + c * y_cstride + i
    (or, `by_point`, 3-D cubic over its row scratch only, yb + i * lanes + c) with simd_gather.h's
    vector kernel (its interleaved one when `scratch` holds these channels interleaved); the points it
    leaves (non-finite or far coordinates) go through point_taps and apply_taps."""
    cdef Py_ssize_t fallback[SIMD_BLOCK]
    cdef Py_ssize_t tap_off[SIMD_MAX_TAPS]
    cdef floating tap_w[SIMD_MAX_TAPS]
    cdef Py_ssize_t i, j, count, n_fallback
    if scratch != NULL and rank == 2 and rows_layout(rank, mode, dims):
        if floating is float:
            n_fallback = irgrid_cubic2d_run_f32(scratch, g, yb, n, channels, y_cstride, dims, padding, align_corners,
                                                fallback)
        else:
            n_fallback = irgrid_cubic2d_run_f64(scratch, g, yb, n, channels, y_cstride, dims, padding, align_corners,
                                                fallback)
    elif scratch != NULL and rows_layout(rank, mode, dims):
        if floating is float:
            n_fallback = irgrid_cubic3d_run_f32(scratch, g, yb, n, channels, y_cstride, by_point, dims, padding,
                                                align_corners, fallback)
        else:
            n_fallback = irgrid_cubic3d_run_f64(scratch, g, yb, n, channels, y_cstride, by_point, dims, padding,
                                                align_corners, fallback)
    elif scratch != NULL:
        if floating is float:
            n_fallback = irgrid_interleaved_sample_f32(scratch, g, yb, n, channels, y_cstride, plane, rank, dims,
                                                       strides, mode, padding, align_corners, fallback)
        else:
            n_fallback = irgrid_interleaved_sample_f64(scratch, g, yb, n, channels, y_cstride, plane, rank, dims,
                                                       strides, mode, padding, align_corners, fallback)
    elif floating is float:
        n_fallback = irgrid_simd_sample_f32(xb, g, yb, n, channels, plane, y_cstride, rank, dims, strides, mode,
                                            padding, align_corners, fallback)
    else:
        n_fallback = irgrid_simd_sample_f64(xb, g, yb, n, channels, plane, y_cstride, rank, dims, strides, mode,
                                            padding, align_corners, fallback)
    for j in range(n_fallback):
        i = fallback[j]
        count = point_taps(g + i * rank, rank, dims, strides, mode, padding, align_corners, tap_off, tap_w)
        if by_point:
            apply_taps(xb, yb + i * (PIXEL_BYTES // sizeof(floating)), channels, plane, 1, max_taps, 0, 0, 1,
                       tap_off, tap_w, &count)
        else:
            apply_taps(xb, yb, channels, plane, y_cstride, max_taps, 0, i, 1, tap_off, tap_w, &count)


cdef Py_ssize_t data_layout(const Py_ssize_t* dims, Py_ssize_t rank, int mode, int padding, Py_ssize_t* strides,
                            Py_ssize_t* max_taps) except -1:
    """Check rank, mode, padding and the data's spatial dims; fill strides and the taps per point;
    return the size of one channel plane."""
    cdef Py_ssize_t plane = 1, k
    if rank < 1 or rank > MAX_RANK:
        raise ValueError(f"rank must be in 1..{MAX_RANK}")
    if mode not in (MODE_NEAREST, MODE_LINEAR, MODE_CUBIC) or padding not in (PAD_ZEROS, PAD_BORDER, PAD_REFLECTION):
        raise ValueError("unknown mode or padding")
    max_taps[0] = 1
    for k in range(rank - 1, -1, -1):
        if dims[k] < 1:
            raise ValueError("input spatial dims must be positive")
        strides[k] = plane
        plane *= dims[k]
        max_taps[0] *= 1 if mode == MODE_NEAREST else (2 if mode == MODE_LINEAR else 4)
    if max_taps[0] > MAX_TAPS:
        raise ValueError(f"{max_taps[0]} taps per point exceed the kernel's {MAX_TAPS}")
    return plane


cdef void simd_span(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                    Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, Py_ssize_t plane,
                    Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding, bint align_corners,
                    bint affine, const Py_ssize_t* extents, const floating* starts, const floating* steps,
                    Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t c0, Py_ssize_t c1,
                    floating* scratch, Held* held) noexcept nogil:
    """Points [start, stop) of channels [c0, c1) of one batch item, simd_block by simd_block."""
    while start < stop:
        simd_block(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                   align_corners, affine, extents, starts, steps, batch_index, start, min(start + SIMD_BLOCK, stop),
                   c0, c1, scratch, held)
        start += SIMD_BLOCK


cdef void simd_chunk(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                     Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, Py_ssize_t plane,
                     Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding, bint align_corners,
                     bint affine, const Py_ssize_t* extents, const floating* starts, const floating* steps,
                     Py_ssize_t chunk, Py_ssize_t group, Py_ssize_t groups, Py_ssize_t span,
                     Py_ssize_t spans) noexcept nogil:
    cdef Py_ssize_t b = chunk // (groups * spans), rest = chunk % (groups * spans)
    cdef Py_ssize_t c0 = rest // spans * group, p0 = rest % spans * span
    cdef Py_ssize_t c1 = min(c0 + group, channels), p1 = min(p0 + span, points)
    simd_span(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding, align_corners,
              affine, extents, starts, steps, b, p0, p1, c0, c1, NULL, NULL)


cdef inline Py_ssize_t row_pixels(Py_ssize_t rank, const Py_ssize_t* dims) noexcept nogil:
    """Pixels of cubic's row scratch: in 3-D (irgrid_interleave_rows) D planes of H rows of W pixels,
    each row after 3 zero pixels, each plane after 3 zero rows, the planes after 3 zero planes and
    before 4; in 2-D (irgrid_interleave_plane2d) one such plane, its rows before 4 zero rows."""
    if rank == 2:
        return (dims[0] + 7) * (dims[1] + 3)
    return (dims[0] + 7) * (dims[1] + 3) * (dims[2] + 3)


cdef inline bint rows_layout(Py_ssize_t rank, int mode, const Py_ssize_t* dims) noexcept nogil:
    """Whether a cubic group goes through a row scratch and its separable run (irgrid_cubic2d_run,
    irgrid_cubic3d_run): wherever that scratch fits INTERLEAVE_MAX_BYTES. Otherwise (the row scratch
    is slightly larger) the plane and one zero pixel serve irgrid_interleaved_sample's generic run."""
    return (mode == MODE_CUBIC and (rank == 2 or rank == 3)
            and row_pixels(rank, dims) * PIXEL_BYTES <= INTERLEAVE_MAX_BYTES)


cdef inline Py_ssize_t scratch_pixels(Py_ssize_t rank, int mode, const Py_ssize_t* dims,
                                      Py_ssize_t plane) noexcept nogil:
    return row_pixels(rank, dims) if rows_layout(rank, mode, dims) else plane + 1


cdef Py_ssize_t interleave_lanes(Py_ssize_t rank, int mode, const Py_ssize_t* dims, Py_ssize_t plane,
                                 Py_ssize_t channels, Py_ssize_t itemsize) noexcept nogil:
    """Channels per group of the interleaved path (one vector of them per pixel), 0 when it is not
    chosen: a group's scratch within INTERLEAVE_MAX_BYTES, the policy (the caller checked that the
    vector path fits)."""
    cdef Py_ssize_t lanes = PIXEL_BYTES // itemsize
    cdef Py_ssize_t least = (INTERLEAVE_MIN_CHANNELS_3D_NEAREST if rank == 3 and mode == MODE_NEAREST
                             else INTERLEAVE_MIN_CHANNELS)
    if (interleave_policy == 0 or scratch_pixels(rank, mode, dims, plane) * PIXEL_BYTES > INTERLEAVE_MAX_BYTES
            or (interleave_policy == 1 and channels < least)):
        return 0
    return lanes


cdef void interleave_unit(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                          Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, Py_ssize_t plane,
                          Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding, bint align_corners,
                          bint affine, const Py_ssize_t* extents, const floating* starts, const floating* steps,
                          Py_ssize_t unit, Py_ssize_t lanes, Py_ssize_t groups, Py_ssize_t first,
                          Py_ssize_t last, Py_ssize_t span, Py_ssize_t spans, floating* scratch, Held* held,
                          const Bins* bins, int thread) noexcept nogil:
    """Points of span `unit % spans` (of points [first, last)) of channel group `unit // spans` (of
    `lanes` channels) over scratch, which holds group `held.key` interleaved (copied in first if it is
    another; 3-D cubic's row scratch takes its planes as points need them, hold_planes, 2-D cubic's
    its one plane at once); through `bins` (binned_span, as `thread`) where given."""
    cdef Py_ssize_t key = unit // spans, b = key // groups
    cdef Py_ssize_t c0 = key % groups * lanes, p0 = first + unit % spans * span
    cdef Py_ssize_t c1 = min(c0 + lanes, channels), p1 = min(p0 + span, last)
    cdef bint rows = rows_layout(rank, mode, dims)
    if p0 >= p1:
        return
    if held.key != key:
        if rows and rank == 2:
            if floating is float:
                irgrid_interleave_plane2d_f32(x + (b * channels + c0) * plane, c1 - c0, plane, dims, scratch)
            else:
                irgrid_interleave_plane2d_f64(x + (b * channels + c0) * plane, c1 - c0, plane, dims, scratch)
        elif rows:
            if floating is float:
                irgrid_rows_padding_f32(dims, scratch)
            else:
                irgrid_rows_padding_f64(dims, scratch)
        elif floating is float:
            irgrid_interleave_f32(x + (b * channels + c0) * plane, c1 - c0, plane, plane, scratch)
        else:
            irgrid_interleave_f64(x + (b * channels + c0) * plane, c1 - c0, plane, plane, scratch)
        held.key, held.lo, held.hi = key, 0, 0
    if bins != NULL:
        binned_span(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding, align_corners,
                    b, p0, p1, c0, c1, scratch, held, bins, thread)
    else:
        simd_span(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding, align_corners,
                  affine, extents, starts, steps, b, p0, p1, c0, c1, scratch, held if rows and rank == 3 else NULL)


cdef void hold_planes(const floating* xb, Py_ssize_t channels, Py_ssize_t plane, const Py_ssize_t* dims,
                      const floating* g, Py_ssize_t n, int padding, bint align_corners, floating* scratch,
                      Held* held) noexcept nogil:
    """Copies into 3-D cubic's row scratch the planes of xb (`channels` of them) that points g[0, n) may
    read and it lacks, keeping its planes one run [held.lo, held.hi). A smooth warp's points read a few
    planes at a time, so each plane is copied just before the points that read it, while it is in L2,
    instead of the whole volume first; a warp that reads part of the volume copies only that part.
    From the points' least and greatest depth coordinate (irgrid_depth_range, NaN skipped; clamped to
    +-4, beyond which no tap changes) the planes from the first tap's (floor - 1) to the last one's
    (floor + 2), one more on each side because the kernel computes coordinates in its own precision
    (its floor may be one off at an integer), and one more after: taps past a plane's last row or
    pixel read the next plane's leading zero rows, which come with it. Reflection padding that would
    fold a tap: every plane."""
    cdef floating g_lo, g_hi
    cdef double z_lo, z_hi, depth = dims[0]
    cdef Py_ssize_t a, b
    if held.lo == 0 and held.hi == dims[0]:
        return
    if floating is float:
        irgrid_depth_range_f32(g, n, &g_lo, &g_hi)
    else:
        irgrid_depth_range_f64(g, n, &g_lo, &g_hi)
    if not g_lo <= g_hi:  # every depth NaN: the scalar path takes these points
        return
    g_lo, g_hi = max(g_lo, -4), min(g_hi, 4)
    z_lo = denormalize(<double>g_lo, dims[0], align_corners)
    z_hi = denormalize(<double>g_hi, dims[0], align_corners)
    if padding == PAD_REFLECTION and (z_lo < 0 or z_hi > depth - 1):
        a, b = 0, dims[0]
    else:
        a = <Py_ssize_t>min(max(floor(z_lo) - 2, 0), depth - 1)
        b = <Py_ssize_t>min(max(floor(z_hi) + 5, 1), depth)
    if held.lo == held.hi:
        held.lo = held.hi = a
    if a < held.lo:
        copy_planes(xb, channels, plane, dims, a, held.lo, scratch)
        held.lo = a
    if b > held.hi:
        copy_planes(xb, channels, plane, dims, held.hi, b, scratch)
        held.hi = b


cdef inline void copy_planes(const floating* xb, Py_ssize_t channels, Py_ssize_t plane, const Py_ssize_t* dims,
                             Py_ssize_t z0, Py_ssize_t z1, floating* scratch) noexcept nogil:
    if floating is float:
        irgrid_interleave_rows_f32(xb, channels, plane, dims, z0, z1, scratch)
    else:
        irgrid_interleave_rows_f64(xb, channels, plane, dims, z0, z1, scratch)


# 3-D cubic's binning of a segment of one batch item's points, [first, last), at a time (binning.pxd):
# in chunks of `chunk` points, each judged and, where scattered, sorted by tile once (sort_chunk) for
# every channel group; each unit then samples its chunks in tile order (binned_span).
cdef struct Bins:
    Py_ssize_t first, last, chunk, n_tiles
    Py_ssize_t judge_rows  # tile rows per tile that binning.pxd's `scattered` judges by
    Py_ssize_t tiles[MAX_RANK]
    double scale[MAX_RANK]
    double offset[MAX_RANK]
    int* slot  # per point of the segment: its position in its chunk's tile order
    void* coords  # the segment's coordinates, each chunk's in tile order (floating)
    char* sorted  # per chunk: whether it was judged scattered, so sorted
    int* counts  # per thread, counts_stride apart: n_tiles ints for sort_by_tile
    void* out  # per thread, out_stride items apart: a chunk's outputs in tile order, a pixel each (floating)
    Py_ssize_t counts_stride, out_stride


cdef inline Py_ssize_t round64(Py_ssize_t n) noexcept nogil:
    return (n + 63) // 64 * 64


cdef Py_ssize_t bins_init(Bins* bins, char* memory, Py_ssize_t points, Py_ssize_t rank, Py_ssize_t lanes,
                          Py_ssize_t itemsize, Py_ssize_t threads) noexcept nogil:
    """Lays out bins' buffers for segments of at most `points` points (its chunk and tiling set) from
    `memory` (64-byte aligned; NULL to only count); returns their bytes, a multiple of 64."""
    cdef Py_ssize_t counts = round64(bins.n_tiles * sizeof(int)), out = round64(bins.chunk * lanes * itemsize)
    cdef Py_ssize_t slot = round64(points * sizeof(int)), coords = round64(points * rank * itemsize)
    cdef Py_ssize_t at = slot + coords + round64((points + bins.chunk - 1) // bins.chunk)
    if memory != NULL:
        bins.slot = <int*>memory
        bins.coords = <void*>(memory + slot)
        bins.sorted = memory + slot + coords
        bins.counts = <int*>(memory + at)
        bins.out = <void*>(memory + at + threads * counts)
        bins.counts_stride, bins.out_stride = counts // sizeof(int), out // itemsize
    return at + threads * (counts + out)


cdef void sort_chunk(const floating* g, Py_ssize_t rank, const Bins* bins, Py_ssize_t i, int thread) noexcept nogil:
    """Chunk i of bins' segment of an item's points g (rank coordinates each): judged from its first
    BIN_SAMPLE points and, if scattered (or binning is forced), its coordinates sorted by tile into
    bins. The thread's output buffer holds the sort's order meanwhile: the segment's units, which
    use it for outputs, run after every chunk is sorted."""
    cdef Py_ssize_t at = i * bins.chunk, n = min(bins.chunk, bins.last - bins.first - at), m = min(n, BIN_SAMPLE)
    cdef int* slot = bins.slot + at
    g += (bins.first + at) * rank
    if floating is float:
        irgrid_tile_keys_f32(g, m, rank, bins.scale, bins.offset, bins.tiles, slot)
    else:
        irgrid_tile_keys_f64(g, m, rank, bins.scale, bins.offset, bins.tiles, slot)
    bins.sorted[i] = bin_policy == 2 or scattered(slot, m, bins.tiles[rank - 2], bins.tiles[rank - 1], bins.judge_rows)
    if bins.sorted[i]:
        if floating is float:
            irgrid_tile_keys_f32(g + m * rank, n - m, rank, bins.scale, bins.offset, bins.tiles, slot + m)
        else:
            irgrid_tile_keys_f64(g + m * rank, n - m, rank, bins.scale, bins.offset, bins.tiles, slot + m)
        sort_by_tile(g, n, bins.n_tiles, bins.counts + thread * bins.counts_stride, slot,
                     <int*>(<floating*>bins.out + thread * bins.out_stride), <floating*>bins.coords + at * rank)


cdef void binned_span(const floating* x, const floating* coords, floating* y, Py_ssize_t channels,
                      Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, Py_ssize_t plane,
                      Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding, bint align_corners,
                      Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t c0, Py_ssize_t c1,
                      floating* scratch, Held* held, const Bins* bins, int thread) noexcept nogil:
    """simd_span for 3-D cubic over its row scratch on a grid (not a fused AffineGrid), chunk by chunk
    of bins' segment (start a chunk boundary): a sorted chunk is sampled in tile order into the
    thread's bins.out, then put back; the others as simd_span does."""
    cdef Py_ssize_t n, s, m, lanes = PIXEL_BYTES // sizeof(floating)
    cdef const floating* gb
    cdef floating* out = <floating*>bins.out + thread * bins.out_stride
    cdef const floating* xb = x + (batch_index * channels + c0) * plane
    cdef floating* yb = y + (batch_index * channels + c0) * points
    while start < stop:
        n = min(stop - start, bins.chunk)
        if bins.sorted[(start - bins.first) // bins.chunk]:
            gb = <const floating*>bins.coords + (start - bins.first) * rank
            for s in range((n + SIMD_BLOCK - 1) // SIMD_BLOCK):
                m = min(SIMD_BLOCK, n - s * SIMD_BLOCK)
                hold_planes(xb, c1 - c0, plane, dims, gb + s * SIMD_BLOCK * rank, m, padding, align_corners, scratch,
                            held)
                simd_points(xb, gb + s * SIMD_BLOCK * rank, out + s * SIMD_BLOCK * lanes, 1, True, m, c1 - c0, rank,
                            dims, strides, plane, max_taps, mode, padding, align_corners, scratch)
            if floating is float:
                irgrid_unbin_f32(out, bins.slot + (start - bins.first), n, c1 - c0, yb + start, points)
            else:
                irgrid_unbin_f64(out, bins.slot + (start - bins.first), n, c1 - c0, yb + start, points)
        else:
            simd_span(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                      align_corners, False, NULL, NULL, NULL, batch_index, start, start + n, c0, c1, scratch, held)
        start += n


cdef void run_interleave(const floating* x, const floating* coords, floating* y, Py_ssize_t batch,
                         Py_ssize_t channels, Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                         Py_ssize_t plane, Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding,
                         bint align_corners, bint affine, const Py_ssize_t* extents, const floating* starts,
                         const floating* steps, int num_threads, Py_ssize_t lanes) except *:
    """The interleaved path: units of (batch item, group of `lanes` channels, span of points), each
    thread with one scratch of plane + 1 pixels, allocated here. Items with few groups are split into
    spans of points (each thread copies a group in once per run of its units), so that every thread
    has work; statically scheduled, so a thread's consecutive units share a group. 3-D cubic on a grid
    (binned) goes item by item, segment by segment of BIN_SEGMENT points: the threads first judge and
    sort the segment's chunks (sort_chunk), then sample its units, so that each chunk is sorted once
    for all the channel groups, not once per group's unit: 0.95x the time on a random grid, 1 and 2
    threads."""
    cdef Py_ssize_t groups = (channels + lanes - 1) // lanes, items = batch, segment = points
    cdef Py_ssize_t spans = 1, span, n_units, unit, i, b, k, first, last, n_chunks = 0
    cdef Py_ssize_t pixels = scratch_pixels(rank, mode, dims, plane)
    cdef Py_ssize_t scratch_items = (pixels * lanes + 15) // 16 * 16  # a multiple of 64 bytes
    cdef Py_ssize_t bin_bytes = 0, head
    cdef Bins binning
    cdef Bins* bins = NULL
    cdef char* memory
    cdef floating* scratch
    cdef Held* held
    cdef int t
    if bin_policy and not affine and rank == 3 and rows_layout(rank, mode, dims):
        binning.n_tiles = tiling(rank, dims, align_corners, BIN_CAPACITY, binning.tiles, binning.scale,
                                 binning.offset, &binning.judge_rows)
        if binning.n_tiles <= BIN_CAPACITY:  # else even tiles of every row outnumber a chunk's points
            bins, items, segment = &binning, 1, min(points, BIN_SEGMENT)
    if items * groups < 2 * num_threads:
        spans = min((2 * num_threads + items * groups - 1) // (items * groups),
                    (segment + SIMD_BLOCK - 1) // SIMD_BLOCK)
    span = (segment + spans - 1) // spans
    if bins != NULL:  # spans of whole chunks
        binning.chunk = min(span, BIN_CAPACITY)
        span = (span + binning.chunk - 1) // binning.chunk * binning.chunk
    spans = (segment + span - 1) // span
    n_units = items * groups * spans
    num_threads = max(min(num_threads, n_units), 1)
    if bins != NULL:
        bin_bytes = bins_init(bins, NULL, segment, rank, lanes, sizeof(floating), num_threads)
    # the threads' scratches and held groups, then the Bins' buffers (64-byte aligned): the scratches
    # lie as they do without binning
    head = round64(num_threads * (scratch_items * sizeof(floating) + sizeof(Held)))
    memory = <char*>malloc(head + bin_bytes + 64)
    if memory == NULL:
        raise MemoryError()
    scratch = <floating*>((<uintptr_t>memory + 63) & ~(<uintptr_t>63))
    held = <Held*>(scratch + num_threads * scratch_items)
    for t in range(num_threads):
        held[t].key = -1
    if bins != NULL:
        bins_init(bins, <char*>scratch + head, segment, rank, lanes, sizeof(floating), num_threads)
    try:
        for b in range(batch // items):  # every item at once, or (binned) one at a time
            for k in range((points + segment - 1) // segment):
                first, last = k * segment, min(k * segment + segment, points)
                if bins != NULL:
                    binning.first, binning.last = first, last
                    n_chunks = (last - first + binning.chunk - 1) // binning.chunk
                if num_threads == 1:
                    with nogil:
                        if bins != NULL:
                            for i in range(n_chunks):
                                sort_chunk(coords + b * points * rank, rank, bins, i, 0)
                        for unit in range(b * n_units, (b + 1) * n_units):
                            interleave_unit(x, coords, y, channels, rank, dims, strides, plane, points, max_taps,
                                            mode, padding, align_corners, affine, extents, starts, steps, unit, lanes,
                                            groups, first, last, span, spans, scratch, held, bins, 0)
                    continue
                if bins != NULL:
                    for i in prange(n_chunks, nogil=True, schedule="static", num_threads=num_threads):
                        irgrid_free_worker()
                        sort_chunk(coords + b * points * rank, rank, bins, i, threadid())
                for unit in prange(b * n_units, (b + 1) * n_units, nogil=True, schedule="static",
                                   num_threads=num_threads):
                    irgrid_free_worker()
                    t = threadid()
                    interleave_unit(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode,
                                    padding, align_corners, affine, extents, starts, steps, unit, lanes, groups,
                                    first, last, span, spans, scratch + t * scratch_items, held + t, bins, t)
    finally:
        free(memory)


cdef void run_simd(const floating* x, const floating* coords, floating* y, Py_ssize_t batch,
                   Py_ssize_t channels, Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                   Py_ssize_t plane, Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding,
                   bint align_corners, bint affine, const Py_ssize_t* extents, const floating* starts,
                   const floating* steps, int num_threads) noexcept:
    cdef Py_ssize_t group = max(1, min(channels, SIMD_GROUP_BYTES // (plane * sizeof(floating))))
    cdef Py_ssize_t span = points
    cdef Py_ssize_t groups, spans, n_chunks, chunk
    if affine:  # coordinates computed per block of points: every channel reads them
        group, span = channels, min(points, SIMD_BLOCK)
    groups = (channels + group - 1) // group
    spans = (points + span - 1) // span
    n_chunks = batch * groups * spans
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:
        with nogil:
            for chunk in range(n_chunks):
                simd_chunk(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                           align_corners, affine, extents, starts, steps, chunk, group, groups, span, spans)
        return
    with nogil, parallel(num_threads=num_threads):
        irgrid_free_worker()  # every worker, even one a dynamic schedule leaves without a chunk
        for chunk in prange(n_chunks, schedule="dynamic"):
            simd_chunk(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                       align_corners, affine, extents, starts, steps, chunk, group, groups, span, spans)


cdef void run_blocks(const floating* x, const floating* coords, floating* y, Py_ssize_t batch,
                     Py_ssize_t channels, Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                     Py_ssize_t plane, Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding,
                     bint align_corners, bint affine, const Py_ssize_t* extents, const floating* starts,
                     const floating* steps, int num_threads) except *:
    """Every block of MAX_TAPS // max_taps points of every batch item, over `num_threads` threads
    (the caller holds the GIL; the loops release it)."""
    cdef Py_ssize_t lanes
    if simd_on and irgrid_interleave_fits(rank, mode, plane):
        lanes = interleave_lanes(rank, mode, dims, plane, channels, sizeof(floating))
        if lanes:
            run_interleave(x, coords, y, batch, channels, rank, dims, strides, plane, points, max_taps, mode,
                           padding, align_corners, affine, extents, starts, steps, num_threads, lanes)
            return
    if simd_on and irgrid_simd_fits(rank, mode, plane):
        run_simd(x, coords, y, batch, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                 align_corners, affine, extents, starts, steps, num_threads)
        return
    cdef Py_ssize_t chunk_points = MAX_TAPS // max_taps
    cdef Py_ssize_t chunks_per_item = (points + chunk_points - 1) // chunk_points
    cdef Py_ssize_t n_chunks = batch * chunks_per_item
    cdef Py_ssize_t chunk, b, start
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            for chunk in range(n_chunks):
                b = chunk // chunks_per_item
                start = (chunk - b * chunks_per_item) * chunk_points
                sample_block(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                             align_corners, affine, extents, starts, steps, b, start,
                             min(start + chunk_points, points))
        return
    with nogil, parallel(num_threads=num_threads):
        irgrid_free_worker()  # every worker, even one a dynamic schedule leaves without a chunk
        for chunk in prange(n_chunks, schedule="dynamic"):
            b = chunk // chunks_per_item
            start = (chunk - b * chunks_per_item) * chunk_points
            sample_block(x, coords, y, channels, rank, dims, strides, plane, points, max_taps, mode, padding,
                         align_corners, affine, extents, starts, steps, b, start, min(start + chunk_points, points))


cdef class SamplePlan:
    """GridSample with fixed shapes, dtype and attributes, checked once; then called per run.

    `SamplePlan(x_shape, coords_shape, dtype, mode, padding, align_corners)` samples data x (N, C,
    *dims) at a grid (N, *out_dims, r); with `out_dims` (and `grid_align_corners`) coords is instead
    theta (N, r, r + 1) of a fused AffineGrid (`sample_block`). Every size, the mode, padding and
    taps are validated here (ValueError). `plan(x, coords, out=None, num_threads=1)` then only checks
    that x and coords are ndarrays of the plan's dtype and shapes (a few C comparisons, no Python
    attribute lookups: the per-call cost of a small model), copies one that is not C-contiguous,
    aligned and native-endian, and fills `out` (same checks, writeable) or a fresh array. This is the
    one entry point into the kernel: `irgrid.ops.grid_sample.sample`, the fused AffineGrid and the
    compiled model's prepared steps all run through it.
    """
    cdef readonly tuple x_shape, coords_shape, out_shape
    cdef readonly object dtype
    cdef int typenum, mode, padding
    cdef bint align_corners, affine
    cdef Py_ssize_t batch, channels, rank, plane, points, max_taps
    cdef Py_ssize_t out_bytes  # the output's bytes, -1 past what a 64-byte aligned buffer can hold
    cdef Py_ssize_t dims[MAX_RANK]
    cdef Py_ssize_t strides[MAX_RANK]
    cdef cnp.npy_intp x_dims[MAX_RANK + 2]
    cdef cnp.npy_intp coords_dims[MAX_RANK + 2]
    cdef cnp.npy_intp y_dims[MAX_RANK + 2]
    cdef Py_ssize_t extents[AFFINE_MAX_RANK]
    cdef float starts32[AFFINE_MAX_RANK]
    cdef float steps32[AFFINE_MAX_RANK]
    cdef double starts64[AFFINE_MAX_RANK]
    cdef double steps64[AFFINE_MAX_RANK]

    def __init__(self, x_shape, coords_shape, dtype, int mode, int padding, bint align_corners,
                 out_dims=None, bint grid_align_corners=False):
        cdef Py_ssize_t k, rank = len(x_shape) - 2, coords_ndim = len(coords_shape)
        cdef Py_ssize_t grid_dims[AFFINE_MAX_RANK]
        self.affine = out_dims is not None
        self.x_shape, self.coords_shape = tuple(x_shape), tuple(coords_shape)
        self.dtype = np.dtype(dtype)
        if self.dtype == np.float32:
            self.typenum = cnp.NPY_FLOAT
        elif self.dtype == np.float64:
            self.typenum = cnp.NPY_DOUBLE
        else:
            raise ValueError(f"the kernel runs f32 or f64, not {self.dtype}")
        if rank < 1 or rank > MAX_RANK or coords_ndim != (3 if self.affine else rank + 2):
            raise ValueError(f"data must be (N, C, *r dims) with 1 <= r <= {MAX_RANK} and coords "
                             f"{'theta (N, r, r + 1)' if self.affine else 'a grid (N, *out_dims, r)'}, got "
                             f"{self.x_shape} and {self.coords_shape}")
        for k in range(rank + 2):
            self.x_dims[k] = self.x_shape[k]
        for k in range(coords_ndim):
            self.coords_dims[k] = self.coords_shape[k]
        self.batch, self.channels, self.rank = self.x_dims[0], self.x_dims[1], rank
        if self.batch < 0 or self.channels < 0:
            raise ValueError("dims must not be negative")
        for k in range(rank):
            self.dims[k] = self.x_dims[k + 2]
        self.plane = data_layout(self.dims, rank, mode, padding, self.strides, &self.max_taps)
        self.mode, self.padding, self.align_corners = mode, padding, align_corners
        if self.affine:
            out_dims = tuple(out_dims)
            if rank > AFFINE_MAX_RANK or len(out_dims) != rank:
                raise ValueError(f"an affine grid has 1..{AFFINE_MAX_RANK} dims, as many as the data")
            if self.coords_dims[0] != self.batch or self.coords_dims[1] != rank or self.coords_dims[2] != rank + 1:
                raise ValueError(f"theta must be {(self.batch, rank, rank + 1)}, got {self.coords_shape}")
            for k in range(rank):
                grid_dims[k] = out_dims[k]
                if grid_dims[k] < 1:
                    raise ValueError("grid dims must be positive")
            if grid_dims[rank - 1] > INT_MAX:
                raise ValueError(f"rows of more than {INT_MAX} points are not supported")
            affine_axes(grid_dims, rank, grid_align_corners, self.extents, self.starts32, self.steps32)
            affine_axes(grid_dims, rank, grid_align_corners, self.extents, self.starts64, self.steps64)
        else:
            out_dims = self.coords_shape[1:rank + 1]
            if self.coords_dims[0] != self.batch or self.coords_dims[rank + 1] != rank:
                raise ValueError(f"grid must be (N={self.batch}, *out_dims, {rank}), got {self.coords_shape}")
        self.out_shape = self.x_shape[:2] + out_dims
        self.points = math.prod(out_dims)  # an OverflowError past Py_ssize_t, never a wrap
        for k in range(rank + 2):
            self.y_dims[k] = self.out_shape[k]
            if self.y_dims[k] < 0:
                raise ValueError("dims must not be negative")
        nbytes = math.prod(self.out_shape) * self.dtype.itemsize
        self.out_bytes = nbytes if nbytes <= PY_SSIZE_T_MAX - 64 else -1

    cdef object _input(self, object a, const cnp.npy_intp* dims, int ndim, str what):
        """`a` if it is an array of the plan's dtype and shape (C-contiguous: copied if not)."""
        if not cnp.PyArray_Check(a) or cnp.PyArray_TYPE(a) != self.typenum:
            raise ValueError(f"{what} must be a {self.dtype} array, got {getattr(a, 'dtype', type(a).__name__)}")
        if cnp.PyArray_NDIM(a) != ndim or memcmp(cnp.PyArray_DIMS(a), dims, ndim * sizeof(cnp.npy_intp)):
            raise ValueError(f"{what} must have shape {self._shape(dims, ndim)}, got {a.shape}")
        if not (cnp.PyArray_ISCARRAY_RO(a) and cnp.PyArray_ISNOTSWAPPED(a)):
            a = np.ascontiguousarray(a, self.dtype)
        return a

    cdef tuple _shape(self, const cnp.npy_intp* dims, int ndim):
        return tuple([dims[k] for k in range(ndim)])

    def __call__(self, x, coords, out=None, int num_threads=1):
        """Sample x at coords into `out` (or a fresh array) with `num_threads` threads; returns it."""
        return self._sample(x, coords, out, num_threads)

    def run(self, arrays, ctx):
        """The plan as a compiled model's prepared step (`irgrid.registry.PreparedFn`): [output] for
        arrays (data, coords) into ctx.out[0] (or a fresh array) with ctx.threads threads. In Cython,
        so a small model's call pays no Python frame for it."""
        out = ctx.out
        return [self._sample(arrays[0], arrays[1], out[0] if out else None, ctx.threads)]

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

    cdef object _sample(self, x, coords, out, int num_threads):
        cdef int ndim = self.rank + 2
        x = self._input(x, self.x_dims, ndim, "data")
        coords = self._input(coords, self.coords_dims, 3 if self.affine else ndim,
                             "theta" if self.affine else "grid")
        if out is None:
            out = self._fresh(ndim)
        elif (not cnp.PyArray_Check(out) or cnp.PyArray_TYPE(out) != self.typenum or cnp.PyArray_NDIM(out) != ndim
              or memcmp(cnp.PyArray_DIMS(out), self.y_dims, ndim * sizeof(cnp.npy_intp))
              or not (cnp.PyArray_ISCARRAY(out) and cnp.PyArray_ISNOTSWAPPED(out))):
            raise ValueError(f"out must be a writeable C-contiguous {self.dtype} array of shape {self.out_shape}")
        if self.batch == 0 or self.channels == 0 or self.points == 0:
            return out
        if self.typenum == cnp.NPY_FLOAT:
            run_blocks(<const float*>cnp.PyArray_DATA(x), <const float*>cnp.PyArray_DATA(coords),
                       <float*>cnp.PyArray_DATA(out), self.batch, self.channels, self.rank, self.dims,
                       self.strides, self.plane, self.points, self.max_taps, self.mode, self.padding,
                       self.align_corners, self.affine, self.extents, self.starts32, self.steps32, num_threads)
        else:
            run_blocks(<const double*>cnp.PyArray_DATA(x), <const double*>cnp.PyArray_DATA(coords),
                       <double*>cnp.PyArray_DATA(out), self.batch, self.channels, self.rank, self.dims,
                       self.strides, self.plane, self.points, self.max_taps, self.mode, self.padding,
                       self.align_corners, self.affine, self.extents, self.starts64, self.steps64, num_threads)
        return out

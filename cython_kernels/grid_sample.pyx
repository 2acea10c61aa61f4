# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""GridSample for any number r of spatial dims: nearest, N-linear and N-cubic, three paddings.

For each output point the taps (flat offsets into one channel plane, and weights) are computed once,
then applied to every channel. Per spatial dim k there are 1, 2 or 4 taps; their outer product gives
the point's taps, outermost dim first, so the summation order is fixed and results never depend on
the thread count. Semantics follow ONNX GridSample-22 as settled in NOTES.md:
- nearest: round half to even, then pad the integer index;
- linear: border/reflection move the continuous coordinate, then each tap is padded;
- cubic: Keys A = -0.75 over floor(x)-1 .. floor(x)+2, each tap padded on its own;
- a NaN coordinate gives NaN; a coordinate at +-Inf or |g| >= 1e30 is a point at that infinity
  (zeros: 0, border: the edge, reflection: NaN).
"""
from cython.parallel cimport prange
from cython cimport floating
from libc.math cimport fabs, NAN
from libc.stdlib cimport malloc, free

from interpolation cimport (
    PAD_ZEROS, PAD_BORDER, PAD_REFLECTION, MODE_NEAREST, MODE_LINEAR, MODE_CUBIC,
    guarded_floor, guarded_rint, denormalize, clamp_to_extent, reflect_coordinate,
    reflect_index, clamp_index, cubic_weights,
)

cdef enum:
    POINTS_PER_CHUNK = 256  # fixed work unit: independent of the thread count

cdef enum PointStatus:
    POINT_OK = 0
    POINT_ZERO = 1
    POINT_NAN = 2

# |g| at or beyond this is treated as a point at infinity.
cdef double AT_INFINITY = 1e30


cdef inline Py_ssize_t pad_tap(Py_ssize_t i, Py_ssize_t length, int padding, bint align_corners) noexcept nogil:
    """A tap index after padding; -1 when zeros padding drops it."""
    if padding == PAD_ZEROS:
        return i if 0 <= i < length else -1
    if padding == PAD_BORDER:
        return clamp_index(i, length)
    return reflect_index(i, length, align_corners)


cdef PointStatus dim_taps(floating g, Py_ssize_t length, Py_ssize_t stride, int mode, int padding,
                          bint align_corners, Py_ssize_t* offsets, floating* weights,
                          Py_ssize_t* count) noexcept nogil:
    """Taps of one spatial dim for normalised coordinate g (at most 4)."""
    cdef floating x, frac
    cdef floating w[4]
    cdef Py_ssize_t base, i, j, n_taps, n = 0
    if g != g:
        return POINT_NAN
    if not (fabs(g) < AT_INFINITY):
        if padding == PAD_ZEROS:
            return POINT_ZERO
        if padding == PAD_REFLECTION:
            return POINT_NAN
        offsets[0] = (0 if g < 0 else length - 1) * stride
        weights[0] = 1
        count[0] = 1
        return POINT_OK
    x = denormalize(g, length, align_corners)
    if mode == MODE_NEAREST:
        i = pad_tap(guarded_rint(x), length, padding, align_corners)
        if i < 0:
            return POINT_ZERO
        offsets[0] = i * stride
        weights[0] = 1
        count[0] = 1
        return POINT_OK
    if mode == MODE_LINEAR:
        if padding == PAD_BORDER:
            x = clamp_to_extent(x, length)
        elif padding == PAD_REFLECTION:
            x = reflect_coordinate(x, length, align_corners)
        base = guarded_floor(x)
        frac = x - <floating>base
        w[0] = 1 - frac
        w[1] = frac
        n_taps = 2
    else:
        base = guarded_floor(x)
        frac = x - <floating>base
        cubic_weights(frac, w)
        base -= 1
        n_taps = 4
    for j in range(n_taps):
        i = pad_tap(base + j, length, padding, align_corners)
        if i >= 0:
            offsets[n] = i * stride
            weights[n] = w[j]
            n += 1
    count[0] = n
    return POINT_OK if n > 0 else POINT_ZERO


cdef int sample_points(const floating* x, const floating* grid, floating* y, Py_ssize_t channels,
                       Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides,
                       Py_ssize_t plane, Py_ssize_t points, Py_ssize_t max_taps, int mode, int padding,
                       bint align_corners, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Output points [start, stop) of the flattened (batch, point) range; returns 1 if out of memory.

    x: (N, C, *dims), grid: (N, points, rank), y: (N, C, points), all contiguous.
    """
    cdef Py_ssize_t* dim_off = <Py_ssize_t*>malloc(4 * rank * sizeof(Py_ssize_t))
    cdef floating* dim_w = <floating*>malloc(4 * rank * sizeof(floating))
    cdef Py_ssize_t* dim_n = <Py_ssize_t*>malloc(rank * sizeof(Py_ssize_t))
    cdef Py_ssize_t* tap_off = <Py_ssize_t*>malloc(max_taps * sizeof(Py_ssize_t))
    cdef floating* tap_w = <floating*>malloc(max_taps * sizeof(floating))
    cdef Py_ssize_t q, b, p, k, j, e, c, t, n_taps
    cdef PointStatus status
    cdef const floating* g
    cdef const floating* xb
    cdef floating* yp
    cdef floating acc, fill
    cdef int failed = 0
    if dim_off == NULL or dim_w == NULL or dim_n == NULL or tap_off == NULL or tap_w == NULL:
        failed = 1
        start = stop
    for q in range(start, stop):
        b = q // points
        p = q - b * points
        g = grid + q * rank
        yp = y + b * channels * points + p
        status = POINT_OK
        for k in range(rank):  # k: spatial dim, outermost first; the grid lists innermost first
            status = dim_taps(g[rank - 1 - k], dims[k], strides[k], mode, padding, align_corners,
                              dim_off + 4 * k, dim_w + 4 * k, dim_n + k)
            if status != POINT_OK:
                break
        if status != POINT_OK:
            fill = NAN if status == POINT_NAN else 0
            for c in range(channels):
                yp[c * points] = fill
            continue
        # Outer product of the per-dim taps, outermost dim major.
        tap_off[0] = 0
        tap_w[0] = 1
        n_taps = 1
        for k in range(rank):
            for e in range(n_taps - 1, -1, -1):
                for j in range(dim_n[k] - 1, -1, -1):
                    tap_off[e * dim_n[k] + j] = tap_off[e] + dim_off[4 * k + j]
                    tap_w[e * dim_n[k] + j] = tap_w[e] * dim_w[4 * k + j]
            n_taps *= dim_n[k]
        xb = x + b * channels * plane
        for c in range(channels):
            acc = 0
            for t in range(n_taps):
                acc = acc + tap_w[t] * xb[tap_off[t]]
            yp[c * points] = acc
            xb += plane
    free(dim_off)
    free(dim_w)
    free(dim_n)
    free(tap_off)
    free(tap_w)
    return failed


def grid_sample(const floating[::1] x, const floating[::1] grid, floating[::1] y, Py_ssize_t batch,
                Py_ssize_t channels, const Py_ssize_t[::1] dims, Py_ssize_t points, int mode,
                int padding, bint align_corners, int num_threads) -> None:
    """Sample flattened x (batch, channels, *dims) at flattened grid (batch, points, rank) into y."""
    cdef Py_ssize_t rank = dims.shape[0]
    cdef Py_ssize_t plane = 1, max_taps = 1, k, chunk, start, stop, total = batch * points
    cdef Py_ssize_t n_chunks = (total + POINTS_PER_CHUNK - 1) // POINTS_PER_CHUNK
    cdef Py_ssize_t[64] strides
    cdef int failed = 0
    if rank < 1 or rank > 64:
        raise ValueError("rank must be in 1..64")
    if mode not in (MODE_NEAREST, MODE_LINEAR, MODE_CUBIC) or padding not in (PAD_ZEROS, PAD_BORDER, PAD_REFLECTION):
        raise ValueError("unknown mode or padding")
    for k in range(rank - 1, -1, -1):
        if dims[k] < 1:
            raise ValueError("input spatial dims must be positive")
        strides[k] = plane
        plane *= dims[k]
        max_taps *= 1 if mode == MODE_NEAREST else (2 if mode == MODE_LINEAR else 4)
    if x.shape[0] != batch * channels * plane or grid.shape[0] != total * rank or y.shape[0] != batch * channels * points:
        raise ValueError("buffer sizes do not match the shapes")
    if total == 0 or channels == 0:
        return
    for chunk in prange(n_chunks, nogil=True, schedule="dynamic", num_threads=max(num_threads, 1)):
        start = chunk * POINTS_PER_CHUNK
        stop = min(start + POINTS_PER_CHUNK, total)
        failed += sample_points(&x[0], &grid[0], &y[0], channels, rank, &dims[0], strides, plane, points,
                                max_taps, mode, padding, align_corners, start, stop)
    if failed:
        raise MemoryError("GridSample could not allocate its tap buffers")

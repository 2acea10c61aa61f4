# cython: language_level=3, cdivision=True
"""Interpolation helpers shared by the grid kernels (GridSample, DeformConv; AffineGrid next).

Every float -> index conversion goes through `guarded_floor` / `guarded_rint`, which clamp to
+-INDEX_LIMIT first, so NaN, Inf or huge coordinates never become an out-of-range or undefined index.
Callers still treat NaN and "at infinity" points explicitly; the guard is the last line of defence.

The mode and padding codes and the tap limits are defined here once; the kernel modules export them
to Python (`irgrid._kernels.sampling.MODES`, ...), so the operator modules never restate them.
"""
from libc.math cimport floor, rint, fmod, fabs
from cython cimport floating

# 2**52: far beyond any real extent (dims are capped at 2**48 by the reader), well inside int64,
# and exactly representable in float and double.
cdef extern from *:
    """
    #define IRGRID_INDEX_LIMIT 4503599627370496.0
    #define IRGRID_AT_INFINITY 1e30
    """
    double INDEX_LIMIT "IRGRID_INDEX_LIMIT"
    # A normalised coordinate with |g| at or beyond this is a point at that infinity.
    double AT_INFINITY "IRGRID_AT_INFINITY"

# Padding modes and interpolation modes, shared with the Python bindings.
cdef enum Padding:
    PAD_ZEROS = 0
    PAD_BORDER = 1
    PAD_REFLECTION = 2

cdef enum Mode:
    MODE_NEAREST = 0
    MODE_LINEAR = 1
    MODE_CUBIC = 2

cdef enum:
    # Taps per output point a sampling kernel buffers (cubic in 6-D, linear in 12-D), and the
    # largest spatial rank. A block of points holds MAX_TAPS taps: small enough for L1/L2 beside the
    # plane rows it reads, fixed, so results never depend on the thread count.
    MAX_TAPS = 4096
    MAX_RANK = 64

# What one spatial dim makes of a point: taps to sum, a zero (all taps dropped) or a NaN.
cdef enum PointStatus:
    POINT_OK = 0
    POINT_ZERO = 1
    POINT_NAN = 2


cdef inline floating clamp_coordinate(floating x) noexcept nogil:
    """x clamped to +-INDEX_LIMIT; NaN maps to -INDEX_LIMIT (comparisons with NaN are false)."""
    if x < <floating>INDEX_LIMIT:
        if x > -<floating>INDEX_LIMIT:
            return x
        return -<floating>INDEX_LIMIT
    if x >= <floating>INDEX_LIMIT:
        return <floating>INDEX_LIMIT
    return -<floating>INDEX_LIMIT


cdef inline Py_ssize_t guarded_floor(floating x) noexcept nogil:
    return <Py_ssize_t>floor(clamp_coordinate(x))


cdef inline Py_ssize_t guarded_rint(floating x) noexcept nogil:
    """Round half to even (the default FP rounding mode), guarded like guarded_floor."""
    return <Py_ssize_t>rint(clamp_coordinate(x))


cdef inline floating denormalize(floating g, Py_ssize_t length, bint align_corners) noexcept nogil:
    """Normalised [-1, 1] grid coordinate -> pixel coordinate (ONNX / torch convention)."""
    if align_corners:
        return (g + 1) / 2 * (length - 1)
    return ((g + 1) * length - 1) / 2


cdef inline floating clamp_to_extent(floating x, Py_ssize_t length) noexcept nogil:
    """Border padding of a continuous coordinate: clamp to [0, length - 1]."""
    if x < 0:
        return 0
    if x > length - 1:
        return <floating>(length - 1)
    return x


cdef inline floating reflect_coordinate(floating x, Py_ssize_t length, bint align_corners) noexcept nogil:
    """Reflect a finite coordinate into [lo, hi] ([0, L-1] aligned, [-0.5, L-0.5] not).

    fmod is exact, so even huge coordinates land inside; the final clamp absorbs the rounding of
    lo + m.
    """
    cdef floating lo = 0 if align_corners else <floating>-0.5
    cdef floating hi = (length - 1) if align_corners else length - <floating>0.5
    cdef floating span = hi - lo
    cdef floating m
    if span <= 0:
        return lo
    x = clamp_coordinate(x)  # an overflowed (infinite) coordinate would make fmod NaN
    if x < lo:
        m = fmod(lo - x, 2 * span)
        x = lo + m if m <= span else hi - (m - span)
    elif x > hi:
        m = fmod(x - hi, 2 * span)
        x = hi - m if m <= span else lo + (m - span)
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


cdef inline Py_ssize_t reflect_index(Py_ssize_t i, Py_ssize_t length, bint align_corners) noexcept nogil:
    """Reflect an integer tap index into [0, length): about the edge pixels' centres when
    align_corners, about their outer edges otherwise."""
    cdef Py_ssize_t period
    if 0 <= i < length:
        return i
    if align_corners:
        if length == 1:
            return 0
        period = 2 * (length - 1)
        i = i % period
        if i < 0:
            i += period
        return period - i if i >= length else i
    period = 2 * length
    i = i % period
    if i < 0:
        i += period
    return period - 1 - i if i >= length else i


cdef inline Py_ssize_t clamp_index(Py_ssize_t i, Py_ssize_t length) noexcept nogil:
    if i < 0:
        return 0
    if i >= length:
        return length - 1
    return i


cdef inline void cubic_weights(floating t, floating* w) noexcept nogil:
    """Keys' cubic convolution weights (A = -0.75) for taps at -1, 0, 1, 2 from floor(x); t = x - floor(x)."""
    cdef floating a = <floating>-0.75
    cdef floating u = t + 1, s = 1 - t, v = 2 - t
    w[0] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1
    w[2] = ((a + 2) * s - (a + 3)) * s * s + 1
    w[3] = ((a * v - 5 * a) * v + 8 * a) * v - 4 * a


cdef inline Py_ssize_t pad_tap(Py_ssize_t i, Py_ssize_t length, int padding, bint align_corners) noexcept nogil:
    """A tap index after padding; -1 when zeros padding drops it."""
    if padding == PAD_ZEROS:
        return i if 0 <= i < length else -1
    if padding == PAD_BORDER:
        return clamp_index(i, length)
    return reflect_index(i, length, align_corners)


cdef inline PointStatus dim_taps(floating g, Py_ssize_t length, Py_ssize_t stride, int mode, int padding,
                                 bint align_corners, Py_ssize_t* offsets, floating* weights,
                                 Py_ssize_t* count) noexcept nogil:
    """Taps of one spatial dim for normalised coordinate g (at most 4: flat offsets and weights).

    Semantics (ONNX GridSample-22): nearest rounds half to even, then pads the index; linear moves
    the continuous coordinate for border/reflection, then pads each tap; cubic (Keys, A = -0.75)
    pads each tap on its own. NaN gives POINT_NAN; |g| >= AT_INFINITY is a point at that infinity.
    """
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
    # Clamped to +-2**52 so that floor(x) and x - floor(x) stay meaningful for huge finite x.
    x = clamp_coordinate(denormalize(g, length, align_corners))
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


cdef inline Py_ssize_t outer_product_taps(const Py_ssize_t* dim_off, const floating* dim_w, const Py_ssize_t* dim_n,
                                          Py_ssize_t rank, Py_ssize_t dim_stride, floating scale,
                                          Py_ssize_t* off, floating* wt) noexcept nogil:
    """A point's taps from its per-dim taps (dim k's at dim_off/dim_w + k * dim_stride, dim_n[k] of
    them): the outer product, outermost dim major, expanded in place from the back, weights times
    `scale`. Returns the tap count."""
    cdef Py_ssize_t k, e, j, dn, count = 1
    off[0] = 0
    wt[0] = scale
    for k in range(rank):
        dn = dim_n[k]
        for e in range(count - 1, -1, -1):
            for j in range(dn - 1, -1, -1):
                off[e * dn + j] = off[e] + dim_off[dim_stride * k + j]
                wt[e * dn + j] = wt[e] * dim_w[dim_stride * k + j]
        count *= dn
    return count


cdef inline floating weighted_sum(const floating* xc, const Py_ssize_t* off, const floating* wt,
                                  Py_ssize_t count) noexcept nogil:
    """Sum of wt[t] * xc[off[t]] in four interleaved partial sums (t mod 4), combined pairwise: a
    fixed order, with a dependency chain a quarter as long as a single running sum."""
    cdef floating a0 = 0, a1 = 0, a2 = 0, a3 = 0
    cdef Py_ssize_t t = 0
    while t + 4 <= count:
        a0 = a0 + wt[t] * xc[off[t]]
        a1 = a1 + wt[t + 1] * xc[off[t + 1]]
        a2 = a2 + wt[t + 2] * xc[off[t + 2]]
        a3 = a3 + wt[t + 3] * xc[off[t + 3]]
        t += 4
    if t < count:
        a0 = a0 + wt[t] * xc[off[t]]
    if t + 1 < count:
        a1 = a1 + wt[t + 1] * xc[off[t + 1]]
    if t + 2 < count:
        a2 = a2 + wt[t + 2] * xc[off[t + 2]]
    return (a0 + a1) + (a2 + a3)

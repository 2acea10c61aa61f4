# cython: language_level=3, cdivision=True
"""Interpolation helpers shared by the grid kernels (GridSample now; AffineGrid, DeformConv next).

Every float -> index conversion goes through `guarded_floor` / `guarded_rint`, which clamp to
+-INDEX_LIMIT first, so NaN, Inf or huge coordinates never become an out-of-range or undefined index.
Callers still treat NaN and "at infinity" points explicitly; the guard is the last line of defence.
"""
from libc.math cimport floor, rint, fmod, fabs
from cython cimport floating

# 2**52: far beyond any real extent (dims are capped at 2**48 by the reader), well inside int64,
# and exactly representable in float and double.
cdef extern from *:
    """
    #define IRGRID_INDEX_LIMIT 4503599627370496.0
    """
    double INDEX_LIMIT "IRGRID_INDEX_LIMIT"

# Padding modes and interpolation modes, shared with the Python bindings.
cdef enum Padding:
    PAD_ZEROS = 0
    PAD_BORDER = 1
    PAD_REFLECTION = 2

cdef enum Mode:
    MODE_NEAREST = 0
    MODE_LINEAR = 1
    MODE_CUBIC = 2


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

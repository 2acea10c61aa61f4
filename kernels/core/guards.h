/* Codes, limits and float-to-index guards shared by every irgrid kernel (plain C: no Python.h).

   The Cython drivers (kernels/cython) and the OpenVINO extension (kernels/openvino) both include this
   header, so the mode and padding codes, the tap limits and the guards exist once. Every float -> index
   conversion in the kernels goes through irgrid_guarded_floor / irgrid_guarded_rint, which clamp to
   +-IRGRID_INDEX_LIMIT first: NaN, Inf or huge coordinates never become an out-of-range or undefined
   index. Callers still treat NaN and "at infinity" points explicitly; the guard is the last defence. */
#ifndef IRGRID_GUARDS_H
#define IRGRID_GUARDS_H

#include <math.h>
#include <stddef.h>

/* Indices and sizes: a signed pointer-sized integer (what Py_ssize_t is on every platform irgrid builds
   for, without needing Python's headers). */
typedef ptrdiff_t irgrid_index;

/* Padding and interpolation modes (GridSample; the Python side reads them through
   irgrid._kernels.constants). */
enum { IRGRID_PAD_ZEROS = 0, IRGRID_PAD_BORDER = 1, IRGRID_PAD_REFLECTION = 2 };
enum { IRGRID_MODE_NEAREST = 0, IRGRID_MODE_LINEAR = 1, IRGRID_MODE_CUBIC = 2 };

/* Taps per output point a sampling kernel buffers (cubic in 6-D, linear in 12-D), and the largest
   spatial rank. A block of points holds IRGRID_MAX_TAPS taps: small enough for L1/L2 beside the plane
   rows it reads, fixed, so results never depend on the thread count. */
#define IRGRID_MAX_TAPS 4096
#define IRGRID_MAX_RANK 64

/* What one spatial dim makes of a point: taps to sum, a zero (all taps dropped) or a NaN. */
enum { IRGRID_POINT_OK = 0, IRGRID_POINT_ZERO = 1, IRGRID_POINT_NAN = 2 };

/* 2**52: far beyond any real extent (dims are capped at 2**48 by the reader), well inside int64, and
   exactly representable in float and double. */
#define IRGRID_INDEX_LIMIT 4503599627370496.0
/* A normalised coordinate with |g| at or beyond this is a point at that infinity. */
#define IRGRID_AT_INFINITY 1e30

/* x clamped to +-IRGRID_INDEX_LIMIT; NaN maps to -IRGRID_INDEX_LIMIT (comparisons with NaN are false). */
static inline float irgrid_clamp_coordinate_f32(float x) {
    if (x < (float)IRGRID_INDEX_LIMIT) return x > -(float)IRGRID_INDEX_LIMIT ? x : -(float)IRGRID_INDEX_LIMIT;
    if (x >= (float)IRGRID_INDEX_LIMIT) return (float)IRGRID_INDEX_LIMIT;
    return -(float)IRGRID_INDEX_LIMIT;
}

static inline double irgrid_clamp_coordinate_f64(double x) {
    if (x < IRGRID_INDEX_LIMIT) return x > -IRGRID_INDEX_LIMIT ? x : -IRGRID_INDEX_LIMIT;
    if (x >= IRGRID_INDEX_LIMIT) return IRGRID_INDEX_LIMIT;
    return -IRGRID_INDEX_LIMIT;
}

static inline irgrid_index irgrid_guarded_floor_f32(float x) { return (irgrid_index)floor(irgrid_clamp_coordinate_f32(x)); }
static inline irgrid_index irgrid_guarded_floor_f64(double x) { return (irgrid_index)floor(irgrid_clamp_coordinate_f64(x)); }
/* Round half to even (the default FP rounding mode), guarded like the floors. */
static inline irgrid_index irgrid_guarded_rint_f32(float x) { return (irgrid_index)rint(irgrid_clamp_coordinate_f32(x)); }
static inline irgrid_index irgrid_guarded_rint_f64(double x) { return (irgrid_index)rint(irgrid_clamp_coordinate_f64(x)); }

#endif

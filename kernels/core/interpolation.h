/* Per-dim taps of the grid kernels' scalar path (GridSample; DeformConv's arithmetic is its own), plain C.

   Semantics (ONNX GridSample-22 as the README settles them), one dim of one point at a time
   (irgrid_scalar_dim_taps_f32 / _f64): nearest rounds half to even, then pads the index; linear moves the
   continuous coordinate for border/reflection, then pads each tap; cubic (Keys, A = -0.75) pads each
   tap on its own; a NaN coordinate gives IRGRID_POINT_NAN; |g| >= IRGRID_AT_INFINITY is a point at
   that infinity. A point's taps are the outer product of its dims' taps, outermost dim first, summed
   in a fixed order, so results never depend on the blocking or the thread count.

   The float-typed helpers are written once (interpolation_body.h) and instantiated for f32 and f64.
   Their literals are doubles where the Cython code this came from had integer literals (Cython emits
   `1.0` for them): an f32 coordinate's denormalisation and cubic weights are computed in double, then
   rounded, and the vector paths (simd.h) compute them that way too, bit for bit. */
#ifndef IRGRID_INTERPOLATION_H
#define IRGRID_INTERPOLATION_H

#include <math.h>

#include "guards.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reflect an integer tap index into [0, length): about the edge pixels' centres when align_corners,
   about their outer edges otherwise. */
static inline irgrid_index irgrid_reflect_index(irgrid_index i, irgrid_index length, int align_corners) {
    irgrid_index period;
    if (0 <= i && i < length)
        return i;
    if (align_corners) {
        if (length == 1)
            return 0;
        period = 2 * (length - 1);
        i = i % period;
        if (i < 0)
            i += period;
        return i >= length ? period - i : i;
    }
    period = 2 * length;
    i = i % period;
    if (i < 0)
        i += period;
    return i >= length ? period - 1 - i : i;
}

static inline irgrid_index irgrid_clamp_index(irgrid_index i, irgrid_index length) {
    if (i < 0)
        return 0;
    if (i >= length)
        return length - 1;
    return i;
}

/* A tap index after padding; -1 when zeros padding drops it. */
static inline irgrid_index irgrid_pad_tap(irgrid_index i, irgrid_index length, int padding, int align_corners) {
    if (padding == IRGRID_PAD_ZEROS)
        return 0 <= i && i < length ? i : -1;
    if (padding == IRGRID_PAD_BORDER)
        return irgrid_clamp_index(i, length);
    return irgrid_reflect_index(i, length, align_corners);
}

#define IRGRID_T float
#define IRGRID_FN(name) name##_f32
#include "interpolation_body.h"
#undef IRGRID_T
#undef IRGRID_FN

#define IRGRID_T double
#define IRGRID_FN(name) name##_f64
#include "interpolation_body.h"
#undef IRGRID_T
#undef IRGRID_FN

#ifdef __cplusplus
}
#endif
#endif

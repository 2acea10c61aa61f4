/* interpolation.h's float-typed helpers for one type: included once per type with IRGRID_T (the float)
   and IRGRID_FN(name) (its suffixed name) defined. */

/* Normalised [-1, 1] grid coordinate -> pixel coordinate (ONNX / torch convention), in double. */
static inline IRGRID_T IRGRID_FN(irgrid_denormalize)(IRGRID_T g, irgrid_index length, int align_corners) {
    if (align_corners)
        return (IRGRID_T)(((g + 1.0) / 2.0) * (length - 1));
    return (IRGRID_T)((((g + 1.0) * length) - 1.0) / 2.0);
}

/* Border padding of a continuous coordinate: clamp to [0, length - 1]. */
static inline IRGRID_T IRGRID_FN(irgrid_clamp_to_extent)(IRGRID_T x, irgrid_index length) {
    if (x < 0.0)
        return (IRGRID_T)0.0;
    if (x > (length - 1))
        return (IRGRID_T)(length - 1);
    return x;
}

/* Reflect a finite coordinate into [lo, hi] ([0, L-1] aligned, [-0.5, L-0.5] not). fmod is exact, so
   even huge coordinates land inside; the final clamp absorbs the rounding of lo + m. */
static inline IRGRID_T IRGRID_FN(irgrid_reflect_coordinate)(IRGRID_T x, irgrid_index length, int align_corners) {
    IRGRID_T lo, hi, span, m;
    if (align_corners)
        lo = (IRGRID_T)0.0;
    else
        lo = (IRGRID_T)-0.5;
    if (align_corners)
        hi = (IRGRID_T)(length - 1);
    else
        hi = (IRGRID_T)(length - (IRGRID_T)0.5);
    span = hi - lo;
    if (span <= 0.0)
        return lo;
    x = IRGRID_FN(irgrid_clamp_coordinate)(x);  /* an overflowed (infinite) coordinate would make fmod NaN */
    if (x < lo) {
        m = (IRGRID_T)fmod((lo - x), (2.0 * span));
        x = m <= span ? (IRGRID_T)(lo + m) : (IRGRID_T)(hi - (m - span));
    } else if (x > hi) {
        m = (IRGRID_T)fmod((x - hi), (2.0 * span));
        x = m <= span ? (IRGRID_T)(hi - m) : (IRGRID_T)(lo + (m - span));
    }
    if (x < lo)
        return lo;
    if (x > hi)
        return hi;
    return x;
}

/* Keys' cubic convolution weights (A = -0.75) for taps at -1, 0, 1, 2 from floor(x); t = x - floor(x). */
static inline void IRGRID_FN(irgrid_cubic_weights)(IRGRID_T t, IRGRID_T* w) {
    const IRGRID_T a = (IRGRID_T)-0.75;
    const IRGRID_T u = (IRGRID_T)(t + 1.0), s = (IRGRID_T)(1.0 - t), v = (IRGRID_T)(2.0 - t);
    w[0] = (IRGRID_T)(((((a * u) - (5.0 * a)) * u) + (8.0 * a)) * u - (4.0 * a));
    w[1] = (IRGRID_T)((((((a + 2.0) * t) - (a + 3.0)) * t) * t) + 1.0);
    w[2] = (IRGRID_T)((((((a + 2.0) * s) - (a + 3.0)) * s) * s) + 1.0);
    w[3] = (IRGRID_T)(((((a * v) - (5.0 * a)) * v) + (8.0 * a)) * v - (4.0 * a));
}

/* Taps of one spatial dim for normalised coordinate g (at most 4: flat offsets and weights): an
   IRGRID_POINT_* status (interpolation.h's semantics). */
static inline int IRGRID_FN(irgrid_scalar_dim_taps)(IRGRID_T g, irgrid_index length, irgrid_index stride, int mode,
                                             int padding, int align_corners, irgrid_index* offsets,
                                             IRGRID_T* weights, irgrid_index* count) {
    IRGRID_T x, frac, w[4];
    irgrid_index base, i, j, n_taps, n = 0;
    if (g != g)
        return IRGRID_POINT_NAN;
    if (!(fabs(g) < IRGRID_AT_INFINITY)) {
        if (padding == IRGRID_PAD_ZEROS)
            return IRGRID_POINT_ZERO;
        if (padding == IRGRID_PAD_REFLECTION)
            return IRGRID_POINT_NAN;
        offsets[0] = (g < 0.0 ? 0 : length - 1) * stride;
        weights[0] = (IRGRID_T)1.0;
        count[0] = 1;
        return IRGRID_POINT_OK;
    }
    /* Clamped to +-2**52 so that floor(x) and x - floor(x) stay meaningful for huge finite x. */
    x = IRGRID_FN(irgrid_clamp_coordinate)(IRGRID_FN(irgrid_denormalize)(g, length, align_corners));
    if (mode == IRGRID_MODE_NEAREST) {
        i = irgrid_pad_tap(IRGRID_FN(irgrid_guarded_rint)(x), length, padding, align_corners);
        if (i < 0)
            return IRGRID_POINT_ZERO;
        offsets[0] = i * stride;
        weights[0] = (IRGRID_T)1.0;
        count[0] = 1;
        return IRGRID_POINT_OK;
    }
    if (mode == IRGRID_MODE_LINEAR) {
        if (padding == IRGRID_PAD_BORDER)
            x = IRGRID_FN(irgrid_clamp_to_extent)(x, length);
        else if (padding == IRGRID_PAD_REFLECTION)
            x = IRGRID_FN(irgrid_reflect_coordinate)(x, length, align_corners);
        base = IRGRID_FN(irgrid_guarded_floor)(x);
        frac = x - (IRGRID_T)base;
        w[0] = (IRGRID_T)(1.0 - frac);
        w[1] = frac;
        n_taps = 2;
    } else {
        base = IRGRID_FN(irgrid_guarded_floor)(x);
        frac = x - (IRGRID_T)base;
        IRGRID_FN(irgrid_cubic_weights)(frac, w);
        base -= 1;
        n_taps = 4;
    }
    for (j = 0; j < n_taps; j++) {
        i = irgrid_pad_tap(base + j, length, padding, align_corners);
        if (i >= 0) {
            offsets[n] = i * stride;
            weights[n] = w[j];
            n += 1;
        }
    }
    count[0] = n;
    return n > 0 ? IRGRID_POINT_OK : IRGRID_POINT_ZERO;
}

/* A point's taps from its per-dim taps (dim k's at dim_off/dim_w + k * dim_stride, dim_n[k] of them):
   the outer product, outermost dim major, expanded in place from the back, weights times `scale`.
   Returns the tap count. */
static inline irgrid_index IRGRID_FN(irgrid_outer_product_taps)(const irgrid_index* dim_off, const IRGRID_T* dim_w,
                                                                const irgrid_index* dim_n, irgrid_index rank,
                                                                irgrid_index dim_stride, IRGRID_T scale,
                                                                irgrid_index* off, IRGRID_T* wt) {
    irgrid_index k, e, j, dn, count = 1;
    off[0] = 0;
    wt[0] = scale;
    for (k = 0; k < rank; k++) {
        dn = dim_n[k];
        for (e = count - 1; e >= 0; e--)
            for (j = dn - 1; j >= 0; j--) {
                off[e * dn + j] = off[e] + dim_off[dim_stride * k + j];
                wt[e * dn + j] = wt[e] * dim_w[dim_stride * k + j];
            }
        count *= dn;
    }
    return count;
}

/* Sum of wt[t] * xc[off[t]] in four interleaved partial sums (t mod 4), combined pairwise: a fixed
   order, with a dependency chain a quarter as long as a single running sum. */
static inline IRGRID_T IRGRID_FN(irgrid_weighted_sum)(const IRGRID_T* xc, const irgrid_index* off, const IRGRID_T* wt,
                                                      irgrid_index count) {
    IRGRID_T a0 = (IRGRID_T)0.0, a1 = (IRGRID_T)0.0, a2 = (IRGRID_T)0.0, a3 = (IRGRID_T)0.0;
    irgrid_index t = 0;
    while (t + 4 <= count) {
        a0 = a0 + wt[t] * xc[off[t]];
        a1 = a1 + wt[t + 1] * xc[off[t + 1]];
        a2 = a2 + wt[t + 2] * xc[off[t + 2]];
        a3 = a3 + wt[t + 3] * xc[off[t + 3]];
        t += 4;
    }
    if (t < count)
        a0 = a0 + wt[t] * xc[off[t]];
    if (t + 1 < count)
        a1 = a1 + wt[t + 1] * xc[off[t + 1]];
    if (t + 2 < count)
        a2 = a2 + wt[t + 2] * xc[off[t + 2]];
    return (a0 + a1) + (a2 + a3);
}

/* Tap arithmetic of the vector GridSample paths for one float type (a part of simd_body.h, included once
   per type by simd.h with FT, LANES, VF / VI and the operation macros defined): per-dim taps from
   normalised coordinates (interpolation.h's arithmetic, operation for operation), their outer
   product, and the lanes' coordinates and fallback points. Float-valued tap indices stay exact
   integers (|x| <= 2**22). */

typedef struct { VF w[4]; VI off[4]; VF ok[4]; } SFX(irgrid_dim);

/* An integer tap index (float-valued) after padding; *ok: taps zeros padding keeps; lanes whose
   reflection needs more than one fold are added to *bad. interpolation.h's pad_tap. */
IRGRID_AVX2_INLINE VF SFX(irgrid_pad)(VF i, FT length, int padding, int align, VF* ok, VF* bad) {
    const VF zero = ZERO(), last = SET1(length - 1);
    VF below = CMP(i, zero, _CMP_LT_OQ), above = CMP(i, last, _CMP_GT_OQ);
    *ok = CMP(zero, zero, _CMP_EQ_OQ);  /* every lane */
    if (padding == 0) {
        *ok = ANDNOT(OR(below, above), *ok);
        return i;
    }
    if (padding == 1)
        return VMIN(VMAX(i, zero), last);
    if (align) {  /* about the edge pixels' centres: period 2(L-1) */
        if (length == 1)
            return zero;
        *bad = OR(*bad, OR(CMP(i, SET1(1 - length), _CMP_LT_OQ), CMP(i, SET1(2 * (length - 1)), _CMP_GT_OQ)));
        i = BLEND(i, SUB(zero, i), below);
        return BLEND(i, SUB(SET1(2 * (length - 1)), i), above);
    }
    /* about the outer edges: period 2L */
    *bad = OR(*bad, OR(CMP(i, SET1(-length), _CMP_LT_OQ), CMP(i, SET1(2 * length - 1), _CMP_GT_OQ)));
    i = BLEND(i, SUB(SET1(-1), i), below);
    return BLEND(i, SUB(SET1(2 * length - 1), i), above);
}

/* Reflection of a continuous coordinate within one period of its bounds (interpolation.h's
   reflect_coordinate, whose fmod is the identity there); lanes further out are added to *bad. */
IRGRID_AVX2_INLINE VF SFX(irgrid_reflect)(VF x, FT length, int align, VF* bad) {
    const FT lo = align ? 0 : (FT)-0.5, hi = align ? length - 1 : length - (FT)0.5, span = hi - lo;
    VF vlo = SET1(lo), vhi = SET1(hi), vspan = SET1(span), period = SET1(2 * span);
    VF below, above, m_lo, m_hi, x_lo, x_hi;
    if (span <= 0)
        return vlo;
    below = CMP(x, vlo, _CMP_LT_OQ);
    above = CMP(x, vhi, _CMP_GT_OQ);
    m_lo = SUB(vlo, x);
    m_hi = SUB(x, vhi);
    *bad = OR(*bad, OR(AND(below, CMP(m_lo, period, _CMP_GE_OQ)), AND(above, CMP(m_hi, period, _CMP_GE_OQ))));
    x_lo = BLEND(SUB(vhi, SUB(m_lo, vspan)), ADD(vlo, m_lo), CMP(m_lo, vspan, _CMP_LE_OQ));
    x_hi = BLEND(ADD(vlo, SUB(m_hi, vspan)), SUB(vhi, m_hi), CMP(m_hi, vspan, _CMP_LE_OQ));
    x = BLEND(BLEND(x, x_hi, above), x_lo, below);
    return VMIN(VMAX(x, vlo), vhi);
}

/* The lanes' pixel coordinates of normalised coordinates g along a dim of `length`; lanes outside
   the vector path's range (NaN, |g| >= 1e30, |x| > 2**22) are added to *bad and come back as 0, so
   that nothing floors or converts what the vector path does not own. With `native` one FMA in FT
   (NATIVE_DENORMALIZE; the scalar path's double arithmetic gives the same f32 but where simd.h says),
   else in double as the scalar path computes them. */
IRGRID_AVX2_INLINE VF SFX(irgrid_pixel_coordinate)(VF g, irgrid_index length, int align, int native, VF* bad) {
    const VF one = SET1(1), sign = SET1((FT)-0.0), all = CMP(one, one, _CMP_EQ_OQ);
    VF x, lane_ok = CMP(ANDNOT(sign, g), SET1((FT)1e30), _CMP_LT_OQ);  /* false for NaN and at infinity */
    g = AND(g, lane_ok);
    x = native ? NATIVE_DENORMALIZE(g, (double)length, align) : DENORMALIZE(g, (double)length, align);
    lane_ok = AND(lane_ok, CMP(ANDNOT(sign, x), SET1((FT)4194304), _CMP_LE_OQ));
    *bad = OR(*bad, ANDNOT(lane_ok, all));
    return AND(x, lane_ok);
}

/* The taps of one spatial dim (interpolation.h's irgrid_scalar_dim_taps) for the lanes' normalised coordinates
   g into d; lanes outside the vector path's range are added to *bad (their taps are garbage).
   Cubic weights and their pixel coordinates in double as the scalar path computes them, or with
   `native` in FT (NATIVE_CUBIC); nearest and linear always take the FMA coordinate (simd.h: a quarter
   of a one-channel call in double). */
IRGRID_AVX2_INLINE void SFX(irgrid_dim_taps)(VF g, irgrid_index length, irgrid_index stride, int mode, int padding,
                                             int align, int native, SFX(irgrid_dim)* d, VF* bad) {
    const VF one = SET1(1);
    const FT len = (FT)length;
    VF x = SFX(irgrid_pixel_coordinate)(g, length, align, native || mode != 2, bad), base, t, idx, ok_tail;
    int j, n = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    if (mode == 0) {
        base = RINT(x);
        d->w[0] = one;  /* never read by a sum; set, so that no tap's weight comes from an unset register */
    } else if (mode == 1) {
        if (padding == 1)
            x = VMIN(VMAX(x, ZERO()), SET1((FT)(length - 1)));
        else if (padding == 2)
            x = SFX(irgrid_reflect)(x, len, align, bad);
        base = FLOOR(x);
        t = SUB(x, base);
        d->w[0] = SUB(one, t);
        d->w[1] = t;
    } else {
        base = FLOOR(x);
        if (native)
            NATIVE_CUBIC(SUB(x, base), d->w);
        else
            CUBIC(SUB(x, base), d->w);
        base = SUB(base, one);
    }
    for (j = 0; j < n; j++) {
        idx = SFX(irgrid_pad)(j ? ADD(base, SET1((FT)j)) : base, len, padding, align, &ok_tail, bad);
        d->ok[j] = ok_tail;
        d->off[j] = stride == 1 ? TOINT(idx) : IMUL(TOINT(idx), ISET1((int)stride));
    }
}

/* The rows of a group's taps in outer-product order (outermost dim major): the outer dims' taps, a
   plane offset, weight (multiplied outermost first as outer_product_taps does) and keep mask each;
   returns how many (n ** (rank - 1)). */
IRGRID_AVX2_INLINE int SFX(irgrid_rows)(const SFX(irgrid_dim)* d, int rank, int n, VI* row_off, VF* row_w,
                                        VF* row_ok) {
    int e, f, rows = 0;
    for (e = 0; e < n; e++)
        for (f = 0; f < (rank == 3 ? n : 1); f++) {
            row_off[rows] = rank == 3 ? IADD(d[0].off[e], d[1].off[f]) : d[0].off[e];
            row_w[rows] = rank == 3 ? MUL(d[0].w[e], d[1].w[f]) : d[0].w[e];
            row_ok[rows] = rank == 3 ? AND(d[0].ok[e], d[1].ok[f]) : d[0].ok[e];
            rows++;
        }
    return rows;
}

/* Tap j of a row along the innermost dim `in`: its plane offset, weight and keep mask. */
IRGRID_AVX2_INLINE void SFX(irgrid_tap)(VI row_off, VF row_w, VF row_ok, const SFX(irgrid_dim)* in, int j, VI* idx,
                                        VF* w, VF* ok) {
    *idx = IADD(row_off, in->off[j]);
    *w = MUL(row_w, in->w[j]);
    *ok = AND(row_ok, in->ok[j]);
}

/* A group's taps in outer-product order: irgrid_rows' rows, each with its n taps along the innermost
   dim (idx, w, ok: n ** rank of each). Returns the rows. */
IRGRID_AVX2_INLINE int SFX(irgrid_taps)(const SFX(irgrid_dim)* d, int rank, int n, VI* idx, VF* w, VF* ok,
                                        VI* row_off, VF* row_w, VF* row_ok) {
    int j, r, rows = SFX(irgrid_rows)(d, rank, n, row_off, row_w, row_ok), taps = 0;
    for (r = 0; r < rows; r++)
        for (j = 0; j < n; j++, taps++)
            SFX(irgrid_tap)(row_off[r], row_w[r], row_ok[r], d + rank - 1, j, idx + taps, w + taps, ok + taps);
    return rows;
}

/* The coordinates of points [p, p + m) (m <= LANES; the other lanes at 0) by dim into gk, in the
   grid's order (innermost dim first); coords: the caller's buffer for a partial block (a buffer of
   this function's own changed irgrid_interleaved_sample's stack frame, and 3-D trilinear's speed). */
IRGRID_AVX2_INLINE void SFX(irgrid_lane_coords)(const FT* g, irgrid_index p, irgrid_index m, irgrid_index rank, VF* gk,
                                               FT (*coords)[LANES]) {
    irgrid_index k, lane;
#if LANES == 8
    if (rank == 2 && m == LANES) {  /* (x, y) of 8 points: deinterleaved with shuffles */
        VF a = LOADU(g + p * 2), b = LOADU(g + p * 2 + 8);
        gk[0] = _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
        gk[1] = _mm256_castpd_ps(
            _mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
    } else if (rank == 3 && m == LANES) {  /* (x, y, z) of 8 points: blended, then permuted in place */
        VF a = LOADU(g + p * 3), b = LOADU(g + p * 3 + 8), c = LOADU(g + p * 3 + 16);
        gk[0] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x92), c, 0x24),
                                         _mm256_setr_epi32(0, 3, 6, 1, 4, 7, 2, 5));
        gk[1] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x24), c, 0x49),
                                         _mm256_setr_epi32(1, 4, 7, 2, 5, 0, 3, 6));
        gk[2] = _mm256_permutevar8x32_ps(_mm256_blend_ps(_mm256_blend_ps(a, b, 0x49), c, 0x92),
                                         _mm256_setr_epi32(2, 5, 0, 3, 6, 1, 4, 7));
    } else
#elif LANES == 16
    if (rank == 2 && m == LANES) {  /* (x, y) of 16 points: even and odd floats of two vectors */
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        VF a = LOADU(g + p * 2), b = LOADU(g + p * 2 + 16);
        gk[0] = _mm512_permutex2var_ps(a, even, b);
        gk[1] = _mm512_permutex2var_ps(a, _mm512_add_epi32(even, _mm512_set1_epi32(1)), b);
    } else if (rank == 3 && m == LANES) {  /* (x, y, z) of 16 points: floats 3i + k of three vectors */
        const __m512i thirds = _mm512_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45);
        VF a = LOADU(g + p * 3), b = LOADU(g + p * 3 + 16), c = LOADU(g + p * 3 + 32);
        for (k = 0; k < 3; k++) {
            __m512i at = _mm512_add_epi32(thirds, _mm512_set1_epi32((int)k));
            gk[k] = _mm512_mask_blend_ps(_mm512_cmpge_epi32_mask(at, _mm512_set1_epi32(32)),
                                         _mm512_permutex2var_ps(a, at, b), _mm512_permutexvar_ps(at, c));
        }
    } else
#endif
    {
        for (lane = 0; lane < LANES; lane++)
            for (k = 0; k < rank; k++)
                coords[k][lane] = lane < m ? g[(p + lane) * rank + k] : 0;
        for (k = 0; k < rank; k++)
            gk[k] = LOADU(coords[k]);
    }
}

/* Appends the `bad` lanes among points [p, p + m) to fallback (*nf of them); whether there were any. */
IRGRID_AVX2_INLINE int SFX(irgrid_record_fallback)(VF bad, irgrid_index p, irgrid_index m, irgrid_index* fallback,
                                                    irgrid_index* nf) {
    const int bits = MOVEMASK(bad);
    irgrid_index lane;
    if (bits)
        for (lane = 0; lane < m; lane++)
            if (bits >> lane & 1)
                fallback[(*nf)++] = p + lane;
    return bits != 0;
}

/* The per-dim taps (d, outermost dim first) of points [p, p + m) (m <= LANES; the other lanes at
   coordinate 0): lanes the vector arithmetic does not cover are appended to fallback (*nf of them)
   and keep no tap, so nothing is read for them. `native` as irgrid_dim_taps'. */
IRGRID_AVX2_INLINE void SFX(irgrid_lane_taps)(const FT* g, irgrid_index p, irgrid_index m, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, int native,
        SFX(irgrid_dim)* d, irgrid_index* fallback, irgrid_index* nf) {
    FT coords[3][LANES];
    VF bad = ZERO(), gk[3];
    irgrid_index k;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++)  /* dim k outermost first; the grid lists innermost first */
        SFX(irgrid_dim_taps)(gk[rank - 1 - k], dims[k], strides[k], mode, padding, align, native, d + k, &bad);
    if (SFX(irgrid_record_fallback)(bad, p, m, fallback, nf))
        for (k = 0; k < taps; k++)
            d[0].ok[k] = ANDNOT(bad, d[0].ok[k]);
}

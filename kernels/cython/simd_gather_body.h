/* The vector GridSample of simd_gather.h for one float type: included once per type with FT (the
   float), LANES, VF / VI (float and int32 index vectors) and the operation macros defined, which
   it undefines at the end. Float-valued tap indices stay exact integers (|x| <= 2**22). */

typedef struct { VF w[4]; VI off[4]; VF ok[4]; } SFX(irgrid_dim);

/* An integer tap index (float-valued) after padding; *ok: taps zeros padding keeps; lanes whose
   reflection needs more than one fold are added to *bad. interpolation.pxd's pad_tap. */
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

/* Reflection of a continuous coordinate within one period of its bounds (interpolation.pxd's
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
   that nothing floors or converts what the vector path does not own. In double as the scalar path
   computes them, so that both give the same bits, or with `native` in FT (f32: NATIVE_DENORMALIZE). */
IRGRID_AVX2_INLINE VF SFX(irgrid_pixel_coordinate)(VF g, Py_ssize_t length, int align, int native, VF* bad) {
    const VF one = SET1(1), sign = SET1((FT)-0.0), all = CMP(one, one, _CMP_EQ_OQ);
    VF x, lane_ok = CMP(ANDNOT(sign, g), SET1((FT)1e30), _CMP_LT_OQ);  /* false for NaN and at infinity */
    g = AND(g, lane_ok);
    x = native ? NATIVE_DENORMALIZE(g, (double)length, align) : DENORMALIZE(g, (double)length, align);
    lane_ok = AND(lane_ok, CMP(ANDNOT(sign, x), SET1((FT)4194304), _CMP_LE_OQ));
    *bad = OR(*bad, ANDNOT(lane_ok, all));
    return AND(x, lane_ok);
}

/* The taps of one spatial dim (interpolation.pxd's dim_taps) for the lanes' normalised coordinates
   g into d; lanes outside the vector path's range are added to *bad (their taps are garbage).
   Cubic weights in double as the scalar path computes them, or with `native` in FT (NATIVE_CUBIC),
   as the pixel coordinates. */
IRGRID_AVX2_INLINE void SFX(irgrid_dim_taps)(VF g, Py_ssize_t length, Py_ssize_t stride, int mode, int padding,
                                             int align, int native, SFX(irgrid_dim)* d, VF* bad) {
    const VF one = SET1(1);
    const FT len = (FT)length;
    VF x = SFX(irgrid_pixel_coordinate)(g, length, align, native, bad), base, t, idx, ok_tail;
    int j, n = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    if (mode == 0) {
        base = RINT(x);
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

#if LANES == 8
/* Lanes' pairs of adjacent floats x[idx], x[idx + 1] with one 64-bit gather per 4 lanes (half the
   loads of two element gathers): idx and mask in the order perm8 puts them, so that the two
   shuffles below return both taps in lane order. */
IRGRID_AVX2_INLINE void irgrid_pair_gather(const float* xc, __m256i idx, __m256i mask, __m256* v0, __m256* v1) {
    __m256 a = _mm256_castpd_ps(_mm256_mask_i32gather_pd(_mm256_setzero_pd(), (const double*)xc,
        _mm256_castsi256_si128(idx), _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(mask))), 4));
    __m256 b = _mm256_castpd_ps(_mm256_mask_i32gather_pd(_mm256_setzero_pd(), (const double*)xc,
        _mm256_extracti128_si256(idx, 1),
        _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(mask, 1))), 4));
    *v0 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *v1 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
#endif

/* The taps of a group of lanes, ready for every channel: outer-product order (outermost dim
   major), weights multiplied outermost first as outer_product_taps does. */
typedef struct {
    VI idx[16];
    VF w[16], ok[16], store_mask;
#if LANES == 8
    __m256i pair_idx[8], pair_ok[8];
    VF single[2];
    int singles;
#endif
} SFX(irgrid_group);

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

/* The group's taps for the gather path. f32: a row's taps 2p, 2p + 1 ("pair p") are read with one
   64-bit gather where both are kept and adjacent; the other lanes that keep either tap ("single")
   read it with an element gather. */
IRGRID_AVX2_INLINE void SFX(irgrid_prepare)(const SFX(irgrid_dim)* d, int rank, int n, SFX(irgrid_group)* q) {
    VI row_off[4];
    VF row_w[4], row_ok[4];
    int rows = SFX(irgrid_taps)(d, rank, n, q->idx, q->w, q->ok, row_off, row_w, row_ok);
#if LANES == 8
    const SFX(irgrid_dim)* in = d + rank - 1;
    int j, r;
    q->singles = 0;
    for (j = 0; j < n / 2; j++) {
        const __m256i perm = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
        __m256 both = AND(AND(in->ok[2 * j], in->ok[2 * j + 1]), _mm256_castsi256_ps(
            _mm256_cmpeq_epi32(in->off[2 * j + 1], IADD(in->off[2 * j], ISET1(1)))));
        q->single[j] = ANDNOT(both, OR(in->ok[2 * j], in->ok[2 * j + 1]));
        q->singles |= MOVEMASK(q->single[j]);
        for (r = 0; r < rows; r++) {
            q->pair_idx[r * 2 + j] = _mm256_permutevar8x32_epi32(q->idx[r * n + 2 * j], perm);
            q->pair_ok[r * 2 + j] = _mm256_permutevar8x32_epi32(_mm256_castps_si256(AND(row_ok[r], both)), perm);
        }
    }
#else
    (void)rows;
#endif
}

/* One channel's outputs of a prepared group, summed with FMA (nearest: the value itself, 1 * x). */
IRGRID_AVX2_INLINE VF SFX(irgrid_apply)(const SFX(irgrid_group)* q, const FT* xc, int rank, int n) {
    VF acc = ZERO(), v0, v1;
    int j, p, r, taps = n * (rank == 3 ? n * n : n);
    if (n == 1)
        return GATHER(ZERO(), xc, q->idx[0], q->ok[0]);
#if LANES == 8
    for (r = 0; r < taps / n; r++)
        for (p = 0; p < n / 2; p++) {
            j = r * n + 2 * p;
            irgrid_pair_gather(xc, q->pair_idx[r * 2 + p], q->pair_ok[r * 2 + p], &v0, &v1);
            if (q->singles) {
                v0 = GATHER(v0, xc, q->idx[j], AND(q->ok[j], q->single[p]));
                v1 = GATHER(v1, xc, q->idx[j + 1], AND(q->ok[j + 1], q->single[p]));
            }
            acc = j ? FMADD(q->w[j], v0, acc) : MUL(q->w[j], v0);
            acc = FMADD(q->w[j + 1], v1, acc);
        }
#else
    (void)p; (void)r; (void)v0; (void)v1;
    acc = MUL(q->w[0], GATHER(ZERO(), xc, q->idx[0], q->ok[0]));
    for (j = 1; j < taps; j++)
        acc = FMADD(q->w[j], GATHER(ZERO(), xc, q->idx[j], q->ok[j]), acc);
#endif
    return acc;
}

/* Channel by channel over a block of prepared groups (lanes p0 + 8 * i): each channel's reads of
   the block stay together in L1 (channel planes at a power-of-two stride share cache sets). */
IRGRID_AVX2_INLINE void SFX(irgrid_apply_block)(const SFX(irgrid_group)* q, int groups, const FT* x, FT* y,
                                                Py_ssize_t channels, Py_ssize_t x_cstride, Py_ssize_t y_cstride,
                                                int rank, int n) {
    Py_ssize_t c;
    int i;
    for (c = 0; c < channels; c++)
        for (i = 0; i < groups; i++) {
            FT* yc = y + c * y_cstride + i * LANES;
            VF acc;
            if (c + 1 < channels) {  /* the next channel reads the same offsets in the next plane */
                int t = n * (rank == 3 ? n * n : n) - 1;
                __builtin_prefetch(x + (c + 1) * x_cstride + IEXTRACT(q[i].idx[0], 0));
                __builtin_prefetch(x + (c + 1) * x_cstride + IEXTRACT(q[i].idx[t], LANES - 1));
            }
            acc = SFX(irgrid_apply)(q + i, x + c * x_cstride, rank, n);
            if (MOVEMASK(q[i].store_mask) == (1 << LANES) - 1)
                STOREU(yc, acc);
            else
                MASKSTORE(yc, q[i].store_mask, acc);
        }
}

/* The coordinates of points [p, p + m) (m <= LANES; the other lanes at 0) by dim into gk, in the
   grid's order (innermost dim first); coords: the caller's buffer for a partial block (a buffer of
   this function's own changed irgrid_interleaved_sample's stack frame, and 3-D trilinear's speed). */
IRGRID_AVX2_INLINE void SFX(irgrid_lane_coords)(const FT* g, Py_ssize_t p, Py_ssize_t m, Py_ssize_t rank, VF* gk,
                                               FT (*coords)[LANES]) {
    Py_ssize_t k, lane;
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
IRGRID_AVX2_INLINE int SFX(irgrid_record_fallback)(VF bad, Py_ssize_t p, Py_ssize_t m, Py_ssize_t* fallback,
                                                    Py_ssize_t* nf) {
    const int bits = MOVEMASK(bad);
    Py_ssize_t lane;
    if (bits)
        for (lane = 0; lane < m; lane++)
            if (bits >> lane & 1)
                fallback[(*nf)++] = p + lane;
    return bits != 0;
}

/* The per-dim taps (d, outermost dim first) of points [p, p + m) (m <= LANES; the other lanes at
   coordinate 0): lanes the vector arithmetic does not cover are appended to fallback (*nf of them)
   and keep no tap, so nothing is read for them. `native` as irgrid_dim_taps'. */
IRGRID_AVX2_INLINE void SFX(irgrid_lane_taps)(const FT* g, Py_ssize_t p, Py_ssize_t m, Py_ssize_t rank,
        const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding, int align, int native,
        SFX(irgrid_dim)* d, Py_ssize_t* fallback, Py_ssize_t* nf) {
    FT coords[3][LANES];
    VF bad = ZERO(), gk[3];
    Py_ssize_t k;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++)  /* dim k outermost first; the grid lists innermost first */
        SFX(irgrid_dim_taps)(gk[rank - 1 - k], dims[k], strides[k], mode, padding, align, native, d + k, &bad);
    if (SFX(irgrid_record_fallback)(bad, p, m, fallback, nf))
        for (k = 0; k < taps; k++)
            d[0].ok[k] = ANDNOT(bad, d[0].ok[k]);
}

/* Outputs of points [0, n) (coordinates g, n x rank, innermost first) in `channels` planes
   (x + c * x_cstride -> y + c * y_cstride); returns how many points it left to the scalar path,
   their indices in fallback[0 ..) (capacity n). */
static IRGRID_AVX2 Py_ssize_t SFX(irgrid_simd_sample)(const FT* x, const FT* g, FT* y, Py_ssize_t n,
        Py_ssize_t channels, Py_ssize_t x_cstride, Py_ssize_t y_cstride, Py_ssize_t rank,
        const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding, int align,
        Py_ssize_t* fallback) {
    SFX(irgrid_dim) d[3];
    SFX(irgrid_group) q[IRGRID_SIMD_GROUPS];
    FT lanes[LANES];
    Py_ssize_t p, p0, nf = 0, lane, m;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4), i;
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    for (p0 = 0; p0 < n; p0 += IRGRID_SIMD_GROUPS * LANES) {
        for (i = 0, p = p0; i < IRGRID_SIMD_GROUPS && p < n; i++, p += LANES) {
            m = n - p < LANES ? n - p : LANES;
            SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, mode, padding, align, 0, d, fallback, &nf);
            if (rank == 2 && taps == 1)
                SFX(irgrid_prepare)(d, 2, 1, q + i);
            else if (rank == 2 && taps == 2)
                SFX(irgrid_prepare)(d, 2, 2, q + i);
            else if (rank == 2)
                SFX(irgrid_prepare)(d, 2, 4, q + i);
            else if (taps == 1)
                SFX(irgrid_prepare)(d, 3, 1, q + i);
            else
                SFX(irgrid_prepare)(d, 3, 2, q + i);
            q[i].store_mask = CMP(LOADU(lanes), SET1((FT)m), _CMP_LT_OQ);
        }
        if (rank == 2 && taps == 1)
            SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, 2, 1);
        else if (rank == 2 && taps == 2)
            SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, 2, 2);
        else if (rank == 2)
            SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, 2, 4);
        else if (taps == 1)
            SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, 3, 1);
        else
            SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, 3, 2);
    }
    return nf;
}

/* ---- Channel-interleaved path (2-D and 3-D nearest, linear and cubic): a group of up
   to LANES channel planes copied into scratch as pixels of LANES channels (one vector each) plus one
   pixel of zeros, which every dropped tap reads instead (so nothing out of range, and no Inf or NaN
   of X, is read for it). A point's tap is then one vector load for all the group's channels instead
   of one gather element per channel; the taps (irgrid_taps), weights and the FMA chain per output
   are the gather path's, so both paths give the same bits (3-D cubic has no gather path). */

/* Taps per point of the interleaved path's widest case (3-D cubic), and their rows (outer dims). */
#ifndef IRGRID_INTERLEAVE_TAPS
#define IRGRID_INTERLEAVE_TAPS 64
#define IRGRID_INTERLEAVE_ROWS 16
#endif

/* Planes x + c * x_cstride (c < channels <= LANES; the other channels are zeros) of `plane` pixels
   into s: pixel p's channel c at s[p * LANES + c], then the zero pixel. */
static IRGRID_AVX2 void SFX(irgrid_interleave)(const FT* x, Py_ssize_t channels, Py_ssize_t x_cstride,
                                               Py_ssize_t plane, FT* s) {
    VF r[LANES];
    Py_ssize_t p, c;
    for (p = 0; p + LANES <= plane; p += LANES) {
        for (c = 0; c < LANES; c++)
            r[c] = c < channels ? LOADU(x + c * x_cstride + p) : ZERO();
        TRANSPOSE(r);
        for (c = 0; c < LANES; c++)
            STOREU(s + (p + c) * LANES, r[c]);
    }
    for (; p <= plane; p++)
        for (c = 0; c < LANES; c++)
            s[p * LANES + c] = c < channels && p < plane ? x[c * x_cstride + p] : 0;
}

/* The taps of points [p, p + m) (m <= LANES) for irgrid_interleaved_run: pixel byte offsets into the
   scratch (dropped taps at the zero pixel) and, with more than one tap, weights; fallback as
   irgrid_simd_sample's. */
IRGRID_AVX2_INLINE void SFX(irgrid_block_taps)(const FT* g, Py_ssize_t p, Py_ssize_t m, int rank,
        const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding, int align, VI zero_pixel,
        int (*pix)[LANES], FT (*wt)[LANES], Py_ssize_t* fallback, Py_ssize_t* nf) {
    SFX(irgrid_dim) d[3];
    VI row_off[IRGRID_INTERLEAVE_ROWS], idx;
    VF row_w[IRGRID_INTERLEAVE_ROWS], row_ok[IRGRID_INTERLEAVE_ROWS], w, ok;
    const int per_dim = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    int r, j, t, rows;
    SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, mode, padding, align, 0, d, fallback, nf);
    rows = SFX(irgrid_rows)(d, rank, per_dim, row_off, row_w, row_ok);
    for (r = 0, t = 0; r < rows; r++)
        for (j = 0; j < per_dim; j++, t++) {
            SFX(irgrid_tap)(row_off[r], row_w[r], row_ok[r], d + rank - 1, j, &idx, &w, &ok);
            /* a pixel is one vector of 32 bytes; the scratch's 8 MiB bound keeps offsets in int32 */
            ISTOREU(pix[t], ISHL5(KEEP_INDEX(idx, ok, zero_pixel)));
            if (mode != 0)
                STOREU(wt[t], w);
        }
}

/* Outputs of points [0, n) (coordinates g, n x rank, innermost first) of the interleaved group s in
   its first `channels` channels (y + c * y_cstride), `per_dim` taps per dim (1, 2 or 4; at most
   IRGRID_INTERLEAVE_TAPS taps); fallback as irgrid_simd_sample's. Taps outer, lanes inner: the
   LANES sums are independent FMA chains in flight together, each in tap order. Software-pipelined:
   the next block's taps are computed before this block's sums, so the sums' loads have their
   addresses long before they issue and the CPU overlaps their cache misses with that work (Zen 4,
   2 threads: 0.77-0.91x the time on 2-D bilinear, nearest, batched and 3-D trilinear; bicubic and
   tricubic unchanged within noise). */
IRGRID_AVX2_INLINE Py_ssize_t SFX(irgrid_interleaved_run)(const FT* s, const FT* g, FT* y, Py_ssize_t n,
        Py_ssize_t channels, Py_ssize_t y_cstride, Py_ssize_t plane, int rank, const Py_ssize_t* dims,
        const Py_ssize_t* strides, int mode, int padding, int align, Py_ssize_t* fallback) {
    VF acc[LANES], store_mask;
    FT wt[2][IRGRID_INTERLEAVE_TAPS][LANES], lanes[LANES];
    int pix[2][IRGRID_INTERLEAVE_TAPS][LANES], t, lane, cur = 0;  /* two blocks' taps: this one, the next */
    Py_ssize_t p, m, c, nf = 0;
    const char* bytes = (const char*)s;
    const int per_dim = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    const int taps = rank == 3 ? per_dim * per_dim * per_dim : per_dim * per_dim;
    const VI zero_pixel = ISET1((int)plane);
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    if (n > 0)
        SFX(irgrid_block_taps)(g, 0, n < LANES ? n : LANES, rank, dims, strides, mode, padding, align, zero_pixel,
                               pix[0], wt[0], fallback, &nf);
    for (p = 0; p < n; p += LANES, cur ^= 1) {
        m = n - p < LANES ? n - p : LANES;
        if (p + LANES < n)
            SFX(irgrid_block_taps)(g, p + LANES, n - p - LANES < LANES ? n - p - LANES : LANES, rank, dims, strides,
                                   mode, padding, align, zero_pixel, pix[cur ^ 1], wt[cur ^ 1], fallback, &nf);
        for (lane = 0; lane < LANES; lane++)
            acc[lane] = LOADU((const FT*)(bytes + pix[cur][0][lane]));
        if (taps > 1) {
            for (lane = 0; lane < LANES; lane++)
                acc[lane] = MUL(SET1(wt[cur][0][lane]), acc[lane]);
            for (t = 1; t < taps; t++)
                for (lane = 0; lane < LANES; lane++)
                    acc[lane] = FMADD(SET1(wt[cur][t][lane]), LOADU((const FT*)(bytes + pix[cur][t][lane])),
                                      acc[lane]);
        }
        TRANSPOSE(acc);
        IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c);
    }
    return nf;
}

/* ---- 3-D cubic, separably. Its scratch (irgrid_interleave_rows) pads every dim with zeros: 3 zero
   pixels before every row of W pixels, 3 zero rows before every plane of H rows, 3 zero planes before
   the D planes and 4 after them, so that a dim's taps 3 before its first pixel or 3 after its last read
   zeros (the leading zeros of the next row or plane are the trailing ones of the one before). A point's
   64 taps are 4 planes, 4 rows in each and 4 pixels in each row, each dim with its 4 weights: a row's
   four x taps are summed with the x weights, a plane's four rows with the y weights, the planes with
   the z weights, all held in registers.
   With zeros padding (irgrid_cubic_window) a point's taps are consecutive in every dim (a dropped
   tap reads the padding's zeros), so a point needs one offset, its first tap's, and its taps lie at
   constant strides from it; a point one of whose dims keeps no tap (and a fallback point) reads the
   zero window of the trailing planes. Border and reflection padding repeat or mirror pixels, so their
   taps (irgrid_cubic_taps) are 4 plane, 4 row and 4 pixel offsets per point.
   sampling.pyx takes this run wherever that scratch fits (`rows_layout`), the generic one elsewhere. */

/* The zero planes of that scratch (dims D, H, W of (D + 7) * (H + 3) * (W + 3) pixels): the 3 before
   the volume's planes and the 4 after them. */
static IRGRID_AVX2 void SFX(irgrid_rows_padding)(const Py_ssize_t* dims, FT* s) {
    const Py_ssize_t plane_pitch = (dims[1] + 3) * (dims[2] + 3) * LANES;
    memset(s, 0, (size_t)(3 * plane_pitch) * sizeof(FT));
    memset(s + (dims[0] + 3) * plane_pitch, 0, (size_t)(4 * plane_pitch) * sizeof(FT));
}

/* Planes [z0, z1) of the group's planes (x + c * x_cstride, dims D, H, W) into s with the zero rows
   and pixels before their rows (irgrid_rows_padding zeroes the planes around them). */
static IRGRID_AVX2 void SFX(irgrid_interleave_rows)(const FT* x, Py_ssize_t channels, Py_ssize_t x_cstride,
                                                    const Py_ssize_t* dims, Py_ssize_t z0, Py_ssize_t z1, FT* s) {
    const Py_ssize_t width = dims[2], pitch = (width + 3) * LANES, plane_pitch = (dims[1] + 3) * pitch;
    Py_ssize_t z, r, j;
    FT* row;
    for (z = z0; z < z1; z++) {
        memset(s + (z + 3) * plane_pitch, 0, (size_t)(3 * pitch) * sizeof(FT));
        for (r = 0; r < dims[1]; r++) {
            row = s + (z + 3) * plane_pitch + (r + 3) * pitch;
            for (j = 0; j < 3; j++)
                STOREU(row + j * LANES, ZERO());
            /* its W pixels, then a zero pixel: the next row's first (or the next plane's first zero
               row's), which is zero anyway */
            SFX(irgrid_interleave)(x + (z * dims[1] + r) * width, channels, x_cstride, width, row + 3 * LANES);
        }
    }
}

/* The least and greatest depth (the third coordinate) of 3-D points [0, n) of g into *lo and *hi, NaN
   skipped (a vector minimum or maximum with NaN first keeps the other operand; +-inf if all are NaN):
   sampling.pyx's hold_planes, before each block of points. Three vectors hold LANES points, a depth
   at every third float. */
static IRGRID_AVX2 void SFX(irgrid_depth_range)(const FT* g, Py_ssize_t n, FT* lo, FT* hi) {
    VF low[3], high[3];
    FT lows[3 * LANES], highs[3 * LANES], least = (FT)INFINITY, most = (FT)-INFINITY, v;
    Py_ssize_t p = 0, i;
    for (i = 0; i < 3; i++) {
        low[i] = SET1(least);
        high[i] = SET1(most);
    }
    for (; p + LANES <= n; p += LANES)
        for (i = 0; i < 3; i++) {
            low[i] = VMIN(LOADU(g + p * 3 + i * LANES), low[i]);
            high[i] = VMAX(LOADU(g + p * 3 + i * LANES), high[i]);
        }
    for (i = 0; i < 3; i++) {
        STOREU(lows + i * LANES, low[i]);
        STOREU(highs + i * LANES, high[i]);
    }
    for (i = 2; i < 3 * LANES; i += 3) {
        least = lows[i] < least ? lows[i] : least;
        most = highs[i] > most ? highs[i] : most;
    }
    for (; p < n; p++) {
        v = g[p * 3 + 2];
        least = v < least ? v : least;
        most = v > most ? v : most;
    }
    *lo = least;
    *hi = most;
}

/* The taps of points [p, p + m) (m <= LANES) of a rank-2 or rank-3 grid for irgrid_cubic2d_run or
   irgrid_cubic3d_run with border or reflection padding: per dim (outermost first) 4 byte offsets from
   the scratch's first pixel (dropped ones at that dim's index D, H or W, which is padding) and 4
   weights; fallback as irgrid_simd_sample's (those lanes read the zero plane, in 2-D the zero row). */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_taps)(const FT* g, Py_ssize_t p, Py_ssize_t m, int rank,
        const Py_ssize_t* dims, const Py_ssize_t* strides, int padding, int align, int (*pix)[4][LANES],
        FT (*wt)[4][LANES], Py_ssize_t* fallback, Py_ssize_t* nf) {
    SFX(irgrid_dim) d[3];
    VF no_plane;
    int k, j;
    SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, 2, padding, align, 1, d, fallback, nf);
    /* lanes keeping no plane (2-D: row; fallback lanes among them, whose other taps may lie anywhere)
       read the zero plane's zero row's zero pixel */
    no_plane = ANDNOT(OR(OR(d[0].ok[0], d[0].ok[1]), OR(d[0].ok[2], d[0].ok[3])), CMP(ZERO(), ZERO(), _CMP_EQ_OQ));
    for (k = 0; k < rank; k++) {
        /* the zero plane, a plane's zero row, a row's zero pixel */
        const VI zeros = ISET1((int)(dims[k] * strides[k]));
        for (j = 0; j < 4; j++) {
            ISTOREU(pix[k][j], ISHL5(KEEP_INDEX(d[k].off[j], k ? ANDNOT(no_plane, d[k].ok[j]) : d[k].ok[j], zeros)));
            STOREU(wt[k][j], d[k].w[j]);
        }
    }
}

/* The taps of points [p, p + m) (m <= LANES) of a rank-2 or rank-3 grid for irgrid_cubic2d_run or
   irgrid_cubic3d_run with zeros padding: per lane the byte offset of its first tap in the scratch
   (`first`) and per dim (outermost first) 4 weights, as irgrid_cubic_taps computes them; fallback as
   irgrid_simd_sample's (those lanes read the zero window, 4 zero rows or planes after the last). */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_window)(const FT* g, Py_ssize_t p, Py_ssize_t m, int rank,
        const Py_ssize_t* dims, const Py_ssize_t* pitches, int align, int* first, FT (*wt)[4][LANES],
        Py_ssize_t* fallback, Py_ssize_t* nf) {
    const VF one = SET1(1), all = CMP(one, one, _CMP_EQ_OQ);
    VF bad = ZERO(), out = ZERO(), gk[3], x, base, w[4];
    VI pixel = ISET1(0);
    FT coords[3][LANES];
    int k, j;
    SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++) {  /* dim k outermost first; the grid lists innermost first */
        x = SFX(irgrid_pixel_coordinate)(gk[rank - 1 - k], dims[k], align, 1, &bad);
        base = FLOOR(x);
        NATIVE_CUBIC(SUB(x, base), w);
        for (j = 0; j < 4; j++)
            STOREU(wt[k][j], w[j]);
        /* the first tap, 3 zeros before the dim's first pixel at the least, at its last at the most */
        base = SUB(base, one);
        out = OR(out, OR(CMP(base, SET1((FT)-3), _CMP_LT_OQ), CMP(base, SET1((FT)(dims[k] - 1)), _CMP_GT_OQ)));
        base = VMIN(VMAX(base, SET1((FT)-3)), SET1((FT)(dims[k] - 1)));
        pixel = IADD(pixel, IMUL(TOINT(ADD(base, SET1(3))), ISET1((int)pitches[k])));
    }
    SFX(irgrid_record_fallback)(bad, p, m, fallback, nf);
    /* a dim without taps, or a fallback lane: plane D + 3 (row H + 3), the first of the 4 trailing zero
       planes (rows) */
    ISTOREU(first, ISHL5(KEEP_INDEX(pixel, ANDNOT(OR(out, bad), all), ISET1((int)((dims[0] + 3) * pitches[0])))));
}

/* One row's four x taps (byte offsets x within the row), weighted. */
IRGRID_AVX2_INLINE VF SFX(irgrid_row_sum)(const char* row, const Py_ssize_t* x, const VF* w) {
    VF sum = MUL(w[0], LOADU((const FT*)(row + x[0])));
    sum = FMADD(w[1], LOADU((const FT*)(row + x[1])), sum);
    sum = FMADD(w[2], LOADU((const FT*)(row + x[2])), sum);
    return FMADD(w[3], LOADU((const FT*)(row + x[3])), sum);
}

/* One plane's four rows (byte offsets y within the plane), weighted. */
IRGRID_AVX2_INLINE VF SFX(irgrid_plane_sum)(const char* plane, const Py_ssize_t* y, const VF* wy, const Py_ssize_t* x,
                                            const VF* wx) {
    VF sum = MUL(wy[0], SFX(irgrid_row_sum)(plane + y[0], x, wx));
    sum = FMADD(wy[1], SFX(irgrid_row_sum)(plane + y[1], x, wx), sum);
    sum = FMADD(wy[2], SFX(irgrid_row_sum)(plane + y[2], x, wx), sum);
    return FMADD(wy[3], SFX(irgrid_row_sum)(plane + y[3], x, wx), sum);
}

/* The taps of the block of points [p, p + m) (m <= LANES) into pix and wt: irgrid_cubic_window's
   (its offsets in pix[0][0]) with zeros padding, irgrid_cubic_taps' (from the scratch's first pixel)
   otherwise. */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_block)(const FT* g, Py_ssize_t p, Py_ssize_t m, int rank,
        const Py_ssize_t* dims, const Py_ssize_t* pitches, int padding, int align, int (*pix)[4][LANES],
        FT (*wt)[4][LANES], Py_ssize_t* fallback, Py_ssize_t* nf) {
    if (padding == 0)
        SFX(irgrid_cubic_window)(g, p, m, rank, dims, pitches, align, pix[0][0], wt, fallback, nf);
    else
        SFX(irgrid_cubic_taps)(g, p, m, rank, dims, pitches, padding, align, pix, wt, fallback, nf);
}

/* Prefetches the last two rows of the last of the 4 planes that points [0, m) of a block read (pix
   as irgrid_cubic_block sets it; bytes and the pitches as irgrid_cubic3d_run has them), the ones
   a binned chunk meets first: its points go through the volume plane by plane and row by row, so
   the points one row before read the other rows and the points one plane before the other planes,
   while the chunk's sweep read that plane last a whole scratch ago (from L3). Each row's 4 taps
   span 128 bytes, 2 or 3 lines. Prefetching all 4 rows, or the last row of every plane, measured
   slower (benchmarks/README.md, "Prefetching a binned chunk's rows"). */
IRGRID_AVX2_INLINE void SFX(irgrid_prefetch_last_rows)(const char* bytes, int (*pix)[4][LANES], int m, int padding,
                                                       Py_ssize_t plane_bytes, Py_ssize_t row_bytes) {
    const char* row;
    int lane, r;
    for (lane = 0; lane < m; lane++)
        for (r = 2; r < 4; r++) {
            row = bytes + (padding == 0 ? pix[0][0][lane] + 3 * plane_bytes + r * row_bytes
                                        : pix[0][3][lane] + pix[1][r][lane] + pix[2][0][lane]);
            __builtin_prefetch(row);
            __builtin_prefetch(row + 64);
            __builtin_prefetch(row + 127);
        }
}

/* irgrid_interleaved_run for 3-D cubic over irgrid_interleave_rows' scratch (dims D, H, W),
   software-pipelined the same way; with `by_point`, point i's LANES channels (those past `channels`
   zeros) go to y + i * LANES instead (binned_span's buffer, unbinned by irgrid_unbin), and each
   block's rows that a binned chunk meets first are prefetched (irgrid_prefetch_last_rows). A planar
   output of at least IRGRID_STREAM_MIN_BYTES whose channel planes start on 64-byte lines (a
   SamplePlan's fresh output does) is written a pair of blocks at a time, one whole line per channel,
   with non-temporal stores; then the same values as regular stores. With zeros padding a point one of
   whose dims keeps no tap (irgrid_cubic_window's zero window) is 0 without its 80 FMAs: about a
   tenth of a uniform grid in [-1.1, 1.1]'s points, 0.97x the time on it at one thread. */
static IRGRID_AVX2 Py_ssize_t SFX(irgrid_cubic3d_run)(const FT* s, const FT* g, FT* y, Py_ssize_t n,
        Py_ssize_t channels, Py_ssize_t y_cstride, int by_point, const Py_ssize_t* dims, int padding, int align,
        Py_ssize_t* fallback) {
    const Py_ssize_t pitch = dims[2] + 3, pitches[3] = {(dims[1] + 3) * pitch, pitch, 1};
    const Py_ssize_t pixel = LANES * (Py_ssize_t)sizeof(FT), plane_bytes = pitches[0] * pixel;
    const int no_taps = (int)((dims[0] + 3) * plane_bytes);  /* irgrid_cubic_window's zero window */
    int pix[2][3][4][LANES], j, lane, next, cur = 0;  /* two blocks' taps: this one, the next; dims z, y, x */
    FT wt[2][3][4][LANES], lanes[LANES];
    VF acc[LANES], wx[4], wy[4], store_mask, pending[LANES];
    const int stream = !by_point && IRGRID_STREAMS(y, y_cstride, channels, FT);
    Py_ssize_t p, m, c, nf = 0, ox[4], oy[4];
    const char* planes[4];
    /* zeros padding: the first tap's offsets count from the scratch's start, the others' from its pixel (0, 0, 0) */
    const char* bytes = (const char*)s + (padding == 0 ? 0 : 3 * (pitches[0] + pitch + 1) * pixel);
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    for (j = 0; j < 4; j++) {  /* zeros padding: the rows and pixels of a point's taps */
        oy[j] = j * pitch * pixel;
        ox[j] = j * pixel;
    }
    if (n > 0)
        SFX(irgrid_cubic_block)(g, 0, n < LANES ? n : LANES, 3, dims, pitches, padding, align, pix[0], wt[0],
                                fallback, &nf);
    for (p = 0; p < n; p += LANES, cur ^= 1) {
        m = n - p < LANES ? n - p : LANES;
        if (p + LANES < n) {
            next = n - p - LANES < LANES ? (int)(n - p - LANES) : LANES;
            SFX(irgrid_cubic_block)(g, p + LANES, next, 3, dims, pitches, padding, align, pix[cur ^ 1], wt[cur ^ 1],
                                    fallback, &nf);
            if (by_point)
                SFX(irgrid_prefetch_last_rows)(bytes, pix[cur ^ 1], next, padding, plane_bytes, pitch * pixel);
        }
        for (lane = 0; lane < LANES; lane++) {
            if (padding == 0 && pix[cur][0][0][lane] == no_taps) {
                acc[lane] = ZERO();
                continue;
            }
            for (j = 0; j < 4; j++) {
                if (padding == 0) {
                    planes[j] = bytes + pix[cur][0][0][lane] + j * plane_bytes;
                } else {
                    planes[j] = bytes + pix[cur][0][j][lane];
                    oy[j] = pix[cur][1][j][lane];
                    ox[j] = pix[cur][2][j][lane];
                }
                wy[j] = SET1(wt[cur][1][j][lane]);
                wx[j] = SET1(wt[cur][2][j][lane]);
            }
            acc[lane] = MUL(SET1(wt[cur][0][0][lane]), SFX(irgrid_plane_sum)(planes[0], oy, wy, ox, wx));
            for (j = 1; j < 4; j++)
                acc[lane] = FMADD(SET1(wt[cur][0][j][lane]), SFX(irgrid_plane_sum)(planes[j], oy, wy, ox, wx),
                                  acc[lane]);
        }
        if (by_point) {
            for (lane = 0; lane < m; lane++)
                STOREU(y + (p + lane) * LANES, acc[lane]);
            continue;
        }
        TRANSPOSE(acc);  /* stored as irgrid_interleaved_run stores, or streamed a pair of blocks at a time */
        if (stream && (p & LANES) == 0 && p + 2 * LANES <= n) {  /* the first of a pair: held */
            for (c = 0; c < channels; c++)
                pending[c] = acc[c];
        } else if (stream && m == LANES && (p & LANES)) {  /* the second: both, a line per channel */
            for (c = 0; c < channels; c++) {
                STREAM(y + c * y_cstride + p - LANES, pending[c]);
                STREAM(y + c * y_cstride + p, acc[c]);
            }
        } else {
            IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c);
        }
    }
    if (stream)
        _mm_sfence();
    return nf;
}

/* The 2-D row scratch of a group (dims H, W; (H + 7) * (W + 3) pixels): its H rows of W pixels, each
   after 3 zero pixels, after 3 zero rows and before 4 (one plane of irgrid_interleave_rows' layout
   and the 4 trailing zero rows, the zero window), so that with zeros padding a point's 16 taps lie at
   constant strides from its first (irgrid_cubic_window). */
static IRGRID_AVX2 void SFX(irgrid_interleave_plane2d)(const FT* x, Py_ssize_t channels, Py_ssize_t x_cstride,
                                                       const Py_ssize_t* dims, FT* s) {
    const Py_ssize_t width = dims[1], pitch = (width + 3) * LANES;
    Py_ssize_t r, j;
    FT* row;
    memset(s, 0, (size_t)(3 * pitch) * sizeof(FT));
    for (r = 0; r < dims[0]; r++) {
        row = s + (r + 3) * pitch;
        for (j = 0; j < 3; j++)
            STOREU(row + j * LANES, ZERO());
        SFX(irgrid_interleave)(x + r * width, channels, x_cstride, width, row + 3 * LANES);
    }
    memset(s + (dims[0] + 3) * pitch, 0, (size_t)(4 * pitch) * sizeof(FT));
}

/* 2-D cubic over irgrid_interleave_plane2d's scratch (dims H, W): a point's 4 rows of 4 taps (with
   zeros padding at constant strides from its first, irgrid_cubic_window; otherwise 4 row and 4 pixel
   offsets, irgrid_cubic_taps), each row summed with the x weights and the rows with the y weights,
   all in registers (irgrid_plane_sum), as irgrid_cubic3d_run sums one plane; software-pipelined as it
   is; outputs transposed into the planar y as irgrid_interleaved_run stores them. Against the generic
   run (16 offsets and 16 weights per point from memory): benchmarks/README.md, "A separable 2-D
   cubic run". */
static IRGRID_AVX2 Py_ssize_t SFX(irgrid_cubic2d_run)(const FT* s, const FT* g, FT* y, Py_ssize_t n,
        Py_ssize_t channels, Py_ssize_t y_cstride, const Py_ssize_t* dims, int padding, int align,
        Py_ssize_t* fallback) {
    const Py_ssize_t pitch = dims[1] + 3, pitches[2] = {pitch, 1}, pixel = LANES * (Py_ssize_t)sizeof(FT);
    const int no_taps = (int)((dims[0] + 3) * pitch * pixel);  /* irgrid_cubic_window's zero window */
    int pix[2][2][4][LANES], j, lane, cur = 0;  /* two blocks' taps: this one, the next; dims y, x */
    FT wt[2][2][4][LANES], lanes[LANES];
    VF acc[LANES], wx[4], wy[4], store_mask;
    Py_ssize_t p, m, c, nf = 0, ox[4], oy[4];
    const char* row;
    /* zeros padding: the first tap's offsets count from the scratch's start, the others' from its pixel (0, 0) */
    const char* bytes = (const char*)s + (padding == 0 ? 0 : 3 * (pitch + 1) * pixel);
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    for (j = 0; j < 4; j++) {  /* zeros padding: the rows and pixels of a point's taps */
        oy[j] = j * pitch * pixel;
        ox[j] = j * pixel;
    }
    if (n > 0)
        SFX(irgrid_cubic_block)(g, 0, n < LANES ? n : LANES, 2, dims, pitches, padding, align, pix[0], wt[0],
                                fallback, &nf);
    for (p = 0; p < n; p += LANES, cur ^= 1) {
        m = n - p < LANES ? n - p : LANES;
        if (p + LANES < n)
            SFX(irgrid_cubic_block)(g, p + LANES, n - p - LANES < LANES ? n - p - LANES : LANES, 2, dims, pitches,
                                    padding, align, pix[cur ^ 1], wt[cur ^ 1], fallback, &nf);
        for (lane = 0; lane < LANES; lane++) {
            if (padding == 0 && pix[cur][0][0][lane] == no_taps) {
                acc[lane] = ZERO();
                continue;
            }
            row = padding == 0 ? bytes + pix[cur][0][0][lane] : bytes;
            for (j = 0; j < 4; j++) {
                if (padding != 0) {
                    oy[j] = pix[cur][0][j][lane];
                    ox[j] = pix[cur][1][j][lane];
                }
                wy[j] = SET1(wt[cur][0][j][lane]);
                wx[j] = SET1(wt[cur][1][j][lane]);
            }
            acc[lane] = SFX(irgrid_plane_sum)(row, oy, wy, ox, wx);
        }
        TRANSPOSE(acc);
        IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c);
    }
    return nf;
}

/* ---- Binning (binning.pxd): a scattered grid's points sorted by the tile they sample. */

/* The tile keys of points [0, n) (coordinates g, n x rank, innermost first) into keys: per dim k
   (outermost first) floor(g * scale[k] + offset[k]) clamped to [0, tiles[k] - 1] (NaN at 0: the
   maximum of NaN and 0 is 0), the outermost dim's tile most significant. */
static IRGRID_AVX2 void SFX(irgrid_tile_keys)(const FT* g, Py_ssize_t n, Py_ssize_t rank, const double* scale,
                                              const double* offset, const Py_ssize_t* tiles, int* keys) {
    FT coords[3][LANES];
    VF t, gk[3];
    VI key;
    int tail[LANES];
    Py_ssize_t p, k, m;
    for (p = 0; p < n; p += LANES) {
        m = n - p < LANES ? n - p : LANES;
        SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
        key = ISET1(0);
        for (k = 0; k < rank; k++) {  /* dim k outermost first; the grid lists innermost first */
            t = FMADD(gk[rank - 1 - k], SET1((FT)scale[k]), SET1((FT)offset[k]));
            t = VMIN(VMAX(t, ZERO()), SET1((FT)(tiles[k] - 1)));
            key = IADD(IMUL(key, ISET1((int)tiles[k])), TOINT(FLOOR(t)));
        }
        if (m == LANES) {
            ISTOREU(keys + p, key);
        } else {
            ISTOREU(tail, key);
            for (k = 0; k < m; k++)
                keys[p + k] = tail[k];
        }
    }
}

/* Outputs of n points stored by point (out + j * LANES: the point in bin position j) back in point
   order: point i (bin position slot[i]) into y + c * y_cstride + i for its first `channels` channels;
   a large output streamed as irgrid_cubic3d_run streams its own. */
static IRGRID_AVX2 void SFX(irgrid_unbin)(const FT* out, const int* slot, Py_ssize_t n, Py_ssize_t channels, FT* y,
                                          Py_ssize_t y_cstride) {
    VF r[LANES], pending[LANES];
    Py_ssize_t p, c, lane;
    const int stream = IRGRID_STREAMS(y, y_cstride, channels, FT);
    for (p = 0; p + LANES <= n; p += LANES) {
        for (lane = 0; lane < LANES; lane++)
            r[lane] = LOADU(out + (Py_ssize_t)slot[p + lane] * LANES);
        TRANSPOSE(r);
        if (stream && (p & LANES) == 0 && p + 2 * LANES <= n) {
            for (c = 0; c < channels; c++)
                pending[c] = r[c];
        } else if (stream && (p & LANES)) {
            for (c = 0; c < channels; c++) {
                STREAM(y + c * y_cstride + p - LANES, pending[c]);
                STREAM(y + c * y_cstride + p, r[c]);
            }
        } else {
            for (c = 0; c < channels; c++)
                STOREU(y + c * y_cstride + p, r[c]);
        }
    }
    if (stream)
        _mm_sfence();
    for (; p < n; p++)
        for (c = 0; c < channels; c++)
            y[c * y_cstride + p] = out[(Py_ssize_t)slot[p] * LANES + c];
}

/* irgrid_interleaved_run with rank and mode as constants (irgrid_interleave_fits' cases). Aligned to
   a page: where this function lay moved 3-D trilinear on random grids by 1.05-1.20x whenever code
   before it changed size (benchmarks/README.md, "Where the code lies"); at a page boundary its loops
   keep their address bits 11:0 whatever precedes it. */
static IRGRID_AVX2 __attribute__((aligned(4096))) Py_ssize_t SFX(irgrid_interleaved_sample)(const FT* s,
        const FT* g, FT* y, Py_ssize_t n, Py_ssize_t channels, Py_ssize_t y_cstride, Py_ssize_t plane,
        Py_ssize_t rank, const Py_ssize_t* dims, const Py_ssize_t* strides, int mode, int padding, int align,
        Py_ssize_t* fallback) {
#define IRGRID_RUN(r, md) SFX(irgrid_interleaved_run)(s, g, y, n, channels, y_cstride, plane, r, dims, strides, md, \
                                                      padding, align, fallback)
    if (rank == 2)
        return mode == 0 ? IRGRID_RUN(2, 0) : (mode == 1 ? IRGRID_RUN(2, 1) : IRGRID_RUN(2, 2));
    return mode == 0 ? IRGRID_RUN(3, 0) : (mode == 1 ? IRGRID_RUN(3, 1) : IRGRID_RUN(3, 2));
#undef IRGRID_RUN
}

#undef FT
#undef SFX
#undef LANES
#undef VF
#undef VI
#undef SET1
#undef ZERO
#undef ADD
#undef SUB
#undef MUL
#undef FMADD
#undef VMIN
#undef VMAX
#undef AND
#undef ANDNOT
#undef OR
#undef BLEND
#undef CMP
#undef FLOOR
#undef RINT
#undef MOVEMASK
#undef LOADU
#undef STOREU
#undef MASKSTORE
#undef TOINT
#undef ISET1
#undef IADD
#undef IMUL
#undef GATHER
#undef IEXTRACT
#undef DENORMALIZE
#undef CUBIC
#undef NATIVE_DENORMALIZE
#undef NATIVE_CUBIC
#undef TRANSPOSE
#undef ISTOREU
#undef KEEP_INDEX
#undef ISHL5

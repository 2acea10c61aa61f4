/* The gather path of the vector GridSample for one float type (a part of simd_body.h): a group of lanes'
   taps prepared once, then every channel read through masked gathers, or, where this CPU runs them
   slower (simd.h's irgrid_gathers_pay), through one scalar load per lane: the same values either way,
   so the same bits. */

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

/* irgrid_pair_gather's v0, v1 read with one 64-bit scalar load per lane, without a branch: a masked-off
   lane reads x[0], x[1] (its row holds two floats wherever any lane keeps a pair, and the plan takes
   gathers for one-pixel planes) and is zeroed after. */
IRGRID_AVX2_INLINE void irgrid_pair_loads(const float* xc, __m256i idx, __m256i mask, __m256* v0, __m256* v1) {
    int at[8], k;
    double pair[8];
    _mm256_storeu_si256((__m256i*)at, _mm256_and_si256(idx, mask));
    for (k = 0; k < 8; k++)
        memcpy(pair + k, xc + at[k], sizeof(double));
    __m256 a = _mm256_and_ps(_mm256_castpd_ps(_mm256_setr_pd(pair[0], pair[1], pair[2], pair[3])),
                             _mm256_castsi256_ps(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(mask))));
    __m256 b = _mm256_and_ps(_mm256_castpd_ps(_mm256_setr_pd(pair[4], pair[5], pair[6], pair[7])),
                             _mm256_castsi256_ps(_mm256_cvtepi32_epi64(_mm256_extracti128_si256(mask, 1))));
    *v0 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    *v1 = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
}
#endif

/* GATHER(src, base, idx, mask) with one scalar load per lane, without a branch: a masked-off lane reads
   base[0] and takes src's value. */
IRGRID_AVX2_INLINE VF SFX(irgrid_loads)(VF src, const FT* base, VI idx, VF mask) {
    int at[LANES];
#if LANES == 8
    _mm256_storeu_si256((__m256i*)at, _mm256_and_si256(idx, _mm256_castps_si256(mask)));
    return BLEND(src, _mm256_setr_ps(base[at[0]], base[at[1]], base[at[2]], base[at[3]], base[at[4]], base[at[5]],
                                     base[at[6]], base[at[7]]), mask);
#else
    _mm_storeu_si128((__m128i*)at, _mm_and_si128(idx, _mm_castps_si128(_mm256_cvtpd_ps(mask))));
    return BLEND(src, _mm256_setr_pd(base[at[0]], base[at[1]], base[at[2]], base[at[3]]), mask);
#endif
}

/* A channel's reads: masked gathers, or (`loads`, a constant where the caller inlines this) scalar loads. */
#define READ(src, idx, mask) (loads ? SFX(irgrid_loads)(src, xc, idx, mask) : GATHER(src, xc, idx, mask))

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
IRGRID_AVX2_INLINE VF SFX(irgrid_apply)(const SFX(irgrid_group)* q, const FT* xc, int rank, int n, int loads) {
    VF acc = ZERO(), v0, v1;
    int j, p, r, taps = n * (rank == 3 ? n * n : n);
    if (n == 1)
        return READ(ZERO(), q->idx[0], q->ok[0]);
#if LANES == 8
    for (r = 0; r < taps / n; r++)
        for (p = 0; p < n / 2; p++) {
            j = r * n + 2 * p;
            if (loads)
                irgrid_pair_loads(xc, q->pair_idx[r * 2 + p], q->pair_ok[r * 2 + p], &v0, &v1);
            else
                irgrid_pair_gather(xc, q->pair_idx[r * 2 + p], q->pair_ok[r * 2 + p], &v0, &v1);
            if (q->singles) {
                v0 = READ(v0, q->idx[j], AND(q->ok[j], q->single[p]));
                v1 = READ(v1, q->idx[j + 1], AND(q->ok[j + 1], q->single[p]));
            }
            acc = j ? FMADD(q->w[j], v0, acc) : MUL(q->w[j], v0);
            acc = FMADD(q->w[j + 1], v1, acc);
        }
#else
    (void)p; (void)r; (void)v0; (void)v1;
    acc = MUL(q->w[0], READ(ZERO(), q->idx[0], q->ok[0]));
    for (j = 1; j < taps; j++)
        acc = FMADD(q->w[j], READ(ZERO(), q->idx[j], q->ok[j]), acc);
#endif
    return acc;
}
#undef READ

/* Asks for the first channel's lines a prepared group reads (each lane's first tap of each of its `rows`
   rows of `n` taps), so that a block's reads are in flight together while its other groups are
   prepared. For calls of less than a block of points: a small batch item (RAFT's lookups: 81 points in
   a 46 x 62 plane, every read a miss) took 0.76-0.91x the time with it, where a large item, whose
   reads the next channel's prefetch and the hardware's cover, took 1.04-1.19x (benchmarks/README.md,
   "Few channels"). */
IRGRID_AVX2_INLINE void SFX(irgrid_prefetch_rows)(const SFX(irgrid_group)* q, const FT* x, int rows, int n) {
    int at[LANES], r, k;
    for (r = 0; r < rows; r++) {
#if LANES == 8
        _mm256_storeu_si256((__m256i*)at, _mm256_and_si256(q->idx[r * n], _mm256_castps_si256(q->ok[r * n])));
#else
        _mm_storeu_si128((__m128i*)at, _mm_and_si128(q->idx[r * n], _mm_castps_si128(_mm256_cvtpd_ps(q->ok[r * n]))));
#endif
        for (k = 0; k < LANES; k++)
            __builtin_prefetch(x + at[k]);
    }
}

/* Channel by channel over a block of prepared groups (lanes p0 + 8 * i): each channel's reads of
   the block stay together in L1 (channel planes at a power-of-two stride share cache sets). */
IRGRID_AVX2_INLINE void SFX(irgrid_apply_block)(const SFX(irgrid_group)* q, int groups, const FT* x, FT* y,
                                                irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride,
                                                int rank, int n, int loads) {
    irgrid_index c;
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
            acc = SFX(irgrid_apply)(q + i, x + c * x_cstride, rank, n, loads);
            if (MOVEMASK(q[i].store_mask) == (1 << LANES) - 1)
                STOREU(yc, acc);
            else
                MASKSTORE(yc, q[i].store_mask, acc);
        }
}

/* The taps of a block of up to IRGRID_SIMD_GROUPS groups from point p0 on (lanes p0 + 8 * i) into q,
   their store masks and, for a call of less than a block, their first channel's prefetches; returns
   the groups. Inlined with constant rank and mode, zeros padding apart (irgrid_gather_taps' dispatch), and with
   the dims' lengths and strides in locals: the generic stage branched on them per group and reloaded
   and converted them per dim and group (its stores into q go through vector pointers that may alias
   the caller's arrays), about half of the few-channel time (benchmarks/README.md, "On an Intel Xeon
   host"). The arithmetic per lane is irgrid_lane_taps', so the bits do not change. */
IRGRID_AVX2_INLINE int SFX(irgrid_gather_taps_body)(const FT* x, const FT* g, irgrid_index p0, irgrid_index n,
        irgrid_index rank, const irgrid_index* dims_in, const irgrid_index* strides_in, int mode, int padding,
        int align, SFX(irgrid_group)* q, irgrid_index* fallback, irgrid_index* nf) {
    SFX(irgrid_dim) d[3];
    FT lanes[LANES];
    irgrid_index dims[3] = {1, 1, 1}, strides[3] = {1, 1, 1}, p, m, k, found = *nf;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4), i;
    for (k = 0; k < rank; k++) {
        dims[k] = dims_in[k];
        strides[k] = strides_in[k];
    }
    for (i = 0; i < LANES; i++)
        lanes[i] = (FT)i;
    for (i = 0, p = p0; i < IRGRID_SIMD_GROUPS && p < n; i++, p += LANES) {
        m = n - p < LANES ? n - p : LANES;
        SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, mode, padding, align, 0, d, fallback, &found);
        SFX(irgrid_prepare)(d, (int)rank, taps, q + i);
        q[i].store_mask = CMP(LOADU(lanes), SET1((FT)m), _CMP_LT_OQ);
        if (n < IRGRID_SIMD_GROUPS * LANES)
            SFX(irgrid_prefetch_rows)(q + i, x, rank == 3 ? taps * taps : taps, taps);
    }
    *nf = found;
    return i;
}

/* Copies of a taps body (irgrid_gather_taps_body's signature) per rank and mode as `ranks` lists them
   ((2) or (2) (3)), zeros padding (the common one) apart from the other two: a copy per padding as
   well made grid_sample.c take several times as long to compile (with the sanitizers, minutes). */
#define IRGRID_TAPS_CASE(body, r, md) \
    if (rank == r && mode == md && padding == 0) \
        return body(x, g, p0, n, r, dims, strides, md, 0, align, q, fallback, nf); \
    if (rank == r && mode == md) \
        return body(x, g, p0, n, r, dims, strides, md, padding, align, q, fallback, nf);
#define IRGRID_TAPS_2D(body) IRGRID_TAPS_CASE(body, 2, 0) IRGRID_TAPS_CASE(body, 2, 1) IRGRID_TAPS_CASE(body, 2, 2)
#define IRGRID_TAPS_3D(body) IRGRID_TAPS_CASE(body, 3, 0) IRGRID_TAPS_CASE(body, 3, 1)

/* irgrid_gather_taps_body, one copy per rank and mode (as irgrid_simd_fits takes them), zeros padding apart. */
static IRGRID_AVX2 __attribute__((noinline)) int SFX(irgrid_gather_taps)(const FT* x, const FT* g, irgrid_index p0,
        irgrid_index n, irgrid_index rank, const irgrid_index* dims, const irgrid_index* strides, int mode,
        int padding, int align, SFX(irgrid_group)* q, irgrid_index* fallback, irgrid_index* nf) {
    IRGRID_TAPS_2D(SFX(irgrid_gather_taps_body))
    IRGRID_TAPS_3D(SFX(irgrid_gather_taps_body))
    return SFX(irgrid_gather_taps_body)(x, g, p0, n, rank, dims, strides, mode, padding, align, q, fallback, nf);
}

#if LANES == 8  /* the fused run is f32's: f64's few-channel calls run by blocks (fewer copies to compile) */
/* One group's outputs in `channels` planes right after its taps (the fused few-channel run): the group
   stays in registers, where the block's buffer was written and read back once per channel. */
IRGRID_AVX2_INLINE void SFX(irgrid_fused_group)(const SFX(irgrid_dim)* d, const FT* x, FT* y, irgrid_index p,
        irgrid_index m, irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, int rank, int taps,
        int loads) {
    SFX(irgrid_group) one;
    irgrid_index c;
    FT lanes[LANES];
    int k;
    SFX(irgrid_prepare)(d, rank, taps, &one);
    for (c = 0; c < channels; c++) {
        VF acc = SFX(irgrid_apply)(&one, x + c * x_cstride, rank, taps, loads);
        if (m == LANES) {
            STOREU(y + c * y_cstride + p, acc);
        } else {
            for (k = 0; k < LANES; k++)
                lanes[k] = (FT)k;
            MASKSTORE(y + c * y_cstride + p, CMP(LOADU(lanes), SET1((FT)m), _CMP_LT_OQ), acc);
        }
    }
}

/* Outputs of points [0, n) group by group, taps then reads (irgrid_fused_group), for a few channels;
   inlined per rank, mode, padding and read. Returns the points left to the scalar path. */
IRGRID_AVX2_INLINE irgrid_index SFX(irgrid_fused_body)(const FT* x, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims_in, const irgrid_index* strides_in, int mode, int padding, int align, int loads,
        irgrid_index* fallback) {
    SFX(irgrid_dim) d[3];
    irgrid_index dims[3] = {1, 1, 1}, strides[3] = {1, 1, 1}, p, m, k, found = 0;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    for (k = 0; k < rank; k++) {
        dims[k] = dims_in[k];
        strides[k] = strides_in[k];
    }
    for (p = 0; p < n; p += LANES) {
        m = n - p < LANES ? n - p : LANES;
        SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, mode, padding, align, 0, d, fallback, &found);
        SFX(irgrid_fused_group)(d, x, y, p, m, channels, x_cstride, y_cstride, (int)rank, taps, loads);
    }
    return found;
}

/* The fused run's copies: per 2-D mode and read, zeros padding (the common one) apart. */
#define IRGRID_FUSED_DISPATCH(body) \
    IRGRID_FUSED_CASE(body, 0) IRGRID_FUSED_CASE(body, 1) IRGRID_FUSED_CASE(body, 2)
#define IRGRID_FUSED_CASE(body, md) \
    if (mode == md && padding == 0) \
        return loads ? body(x, g, y, n, channels, x_cstride, y_cstride, 2, dims, strides, md, 0, align, 1, fallback) \
                     : body(x, g, y, n, channels, x_cstride, y_cstride, 2, dims, strides, md, 0, align, 0, fallback); \
    if (mode == md) \
        return loads ? body(x, g, y, n, channels, x_cstride, y_cstride, 2, dims, strides, md, padding, align, 1, \
                            fallback) \
                     : body(x, g, y, n, channels, x_cstride, y_cstride, 2, dims, strides, md, padding, align, 0, \
                            fallback);

/* irgrid_fused_body in 2-D (IRGRID_FUSED_DISPATCH's copies). */
static IRGRID_AVX2 __attribute__((noinline)) irgrid_index SFX(irgrid_fused)(const FT* x, const FT* g, FT* y,
        irgrid_index n, irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, int loads,
        irgrid_index* fallback) {
    IRGRID_FUSED_DISPATCH(SFX(irgrid_fused_body))
    return SFX(irgrid_fused_body)(x, g, y, n, channels, x_cstride, y_cstride, rank, dims, strides, mode, padding,
                                  align, loads, fallback);
}

/* Half h (lanes 8h .. 8h + 7) of 16 lanes' per-dim taps, as the 8-lane taps of one group. */
IRGRID_AVX512_INLINE void irgrid_half_dims(const irgrid_dim_f32x16* wide, int rank, int taps, int h,
                                           irgrid_dim_f32* d) {
    int k, j;
    for (k = 0; k < rank; k++)
        for (j = 0; j < taps; j++) {
            d[k].w[j] = h ? _mm512_extractf32x8_ps(wide[k].w[j], 1) : _mm512_castps512_ps256(wide[k].w[j]);
            d[k].ok[j] = h ? _mm512_extractf32x8_ps(wide[k].ok[j], 1) : _mm512_castps512_ps256(wide[k].ok[j]);
            d[k].off[j] = h ? _mm512_extracti32x8_epi32(wide[k].off[j], 1) : _mm512_castsi512_si256(wide[k].off[j]);
        }
}

/* irgrid_gather_taps_body with the per-dim taps of two groups at a time in 16 lanes (simd.h's
   irgrid_lane_taps_f32x16: the same arithmetic lane for lane), split into the groups' 8-lane halves
   for irgrid_prepare. */
IRGRID_AVX512_INLINE int irgrid_gather_taps_wide_body(const float* x, const float* g, irgrid_index p0, irgrid_index n,
        irgrid_index rank, const irgrid_index* dims_in, const irgrid_index* strides_in, int mode, int padding,
        int align, irgrid_group_f32* q, irgrid_index* fallback, irgrid_index* nf) {
    irgrid_dim_f32x16 wide[3];
    irgrid_dim_f32 d[3];
    float lanes[8];
    irgrid_index dims[3] = {1, 1, 1}, strides[3] = {1, 1, 1}, p, m, k, found = *nf;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4), i, h, groups = 0;
    for (k = 0; k < rank; k++) {
        dims[k] = dims_in[k];
        strides[k] = strides_in[k];
    }
    for (i = 0; i < 8; i++)
        lanes[i] = (float)i;
    for (i = 0, p = p0; i < IRGRID_SIMD_GROUPS && p < n; i += 2, p += 16) {
        m = n - p < 16 ? n - p : 16;
        irgrid_lane_taps_f32x16(g, p, m, rank, dims, strides, mode, padding, align, 0, wide, fallback, &found);
        for (h = 0; h < 2 && m > 8 * h; h++, groups++) {
            irgrid_half_dims(wide, (int)rank, taps, h, d);
            irgrid_prepare_f32(d, (int)rank, taps, q + i + h);
            q[i + h].store_mask = CMP(LOADU(lanes), SET1((float)(m - 8 * h)), _CMP_LT_OQ);
            if (n < IRGRID_SIMD_GROUPS * LANES)
                irgrid_prefetch_rows_f32(q + i + h, x, rank == 3 ? taps * taps : taps, taps);
        }
    }
    *nf = found;
    return groups;
}

/* irgrid_fused_body with the per-dim taps 16 lanes at a time (as irgrid_gather_taps_wide_body). */
IRGRID_AVX512_INLINE irgrid_index irgrid_fused_wide_body(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims_in, const irgrid_index* strides_in, int mode, int padding, int align, int loads,
        irgrid_index* fallback) {
    irgrid_dim_f32x16 wide[3];
    irgrid_dim_f32 d[3];
    irgrid_index dims[3] = {1, 1, 1}, strides[3] = {1, 1, 1}, p, m, k, found = 0;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4), h;
    for (k = 0; k < rank; k++) {
        dims[k] = dims_in[k];
        strides[k] = strides_in[k];
    }
    for (p = 0; p < n; p += 16) {
        m = n - p < 16 ? n - p : 16;
        irgrid_lane_taps_f32x16(g, p, m, rank, dims, strides, mode, padding, align, 0, wide, fallback, &found);
        for (h = 0; h < 2 && m > 8 * h; h++) {
            irgrid_half_dims(wide, (int)rank, taps, h, d);
            irgrid_fused_group_f32(d, x, y, p + 8 * h, h ? m - 8 : (m < 8 ? m : 8), channels, x_cstride, y_cstride,
                                   (int)rank, taps, loads);
        }
    }
    return found;
}

/* irgrid_fused_wide_body in 2-D (IRGRID_FUSED_DISPATCH's copies). */
static IRGRID_AVX512 __attribute__((noinline)) irgrid_index irgrid_fused_wide_f32(const float* x, const float* g,
        float* y, irgrid_index n, irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride,
        irgrid_index rank, const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align,
        int loads, irgrid_index* fallback) {
    IRGRID_FUSED_DISPATCH(irgrid_fused_wide_body)
    return irgrid_fused_wide_body(x, g, y, n, channels, x_cstride, y_cstride, rank, dims, strides, mode, padding,
                                  align, loads, fallback);
}

/* ---- Bilinear and trilinear by pairs: few channels, 16 lanes ---- */

/* Prefetches into L1 the pairs that `lanes` lanes of a run of items will read, in both rows (their start
   indices from xc: top, bottom). Why: in a run of items (RAFT's lookups) each item's plane is cold, and
   the reads of a block of 16 points wait on memory one after another; prefetched while the next blocks'
   taps are computed, they overlap. On RAFT's lookup (Cascade Lake, paired in one process, 1 or 2 threads,
   8 or 16 lanes) the run took 0.70-0.81x the time; prefetching each line once saved less, and
   prefetching in the pair reads of one plane, which stays in the caches from call to call, cost
   1.15-1.40x (benchmarks/README.md, "Prefetched items"). */
IRGRID_AVX2_INLINE void irgrid_prefetch_pairs(const float* xc, const int* top, const int* bottom, int lanes) {
    int k;
    for (k = 0; k < lanes; k++) {
        _mm_prefetch((const char*)(xc + top[k]), _MM_HINT_T0);
        _mm_prefetch((const char*)(xc + bottom[k]), _MM_HINT_T0);
    }
}

/* Blocks of 16 points whose taps are computed before any is read: the loads of one block then do not
   wait on its own arithmetic (a 16-point block's chain from coordinates to sum is over a hundred cycles,
   longer than the core's window). */
#define IRGRID_PAIRS_BLOCKS 16

/* A dim's floor and weights: x0 = floor(x) as an integer, the weights of x0 and x0 + 1 (irgrid_dim_taps'
   linear taps, lane for lane). */
IRGRID_AVX512_INLINE __m512i irgrid_pair_floor(__m512 x, __m512* w) {
    const __m512 floor = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), t = _mm512_sub_ps(x, floor);
    w[0] = _mm512_sub_ps(_mm512_set1_ps(1.0f), t);
    w[1] = t;
    return _mm512_cvttps_epi32(floor);
}

/* The row (or plane) a tap index along an outer dim reads, `last` its greatest: the index clamped to
   [0, last] (zeros padding drops the taps outside; border clamps; a reflected coordinate's taps lie
   within [-1, last + 1], and reflect to 0 and last), but with align_corners and reflection padding the
   index last + 1 reflects to last - 1 (0 for a one-pixel dim: irgrid_pad). */
IRGRID_AVX512_INLINE __m512i irgrid_pair_row(__m512i i, __m512i last, int reflect_aligned) {
    const __m512i zero = _mm512_setzero_si512(), clamped = _mm512_min_epi32(_mm512_max_epi32(i, zero), last);
    if (!reflect_aligned)
        return clamped;
    return _mm512_mask_max_epi32(clamped, _mm512_cmpgt_epi32_mask(i, last), zero,
                                 _mm512_sub_epi32(_mm512_add_epi32(last, last), i));
}

#define PAIRS_RANK 2
#include "simd_pairs.h"
#include "simd_pairs_pixels.h"
#define PAIRS_RANK 3
#include "simd_pairs.h"

/* The 16-lane pair run per rank and padding (a constant in each copy): in 2-D with and without items (the
   alignment only sets the constants), in 3-D without. */
static IRGRID_AVX512 IRGRID_NO_SLP __attribute__((noinline)) irgrid_index irgrid_pairs_wide_f32(const float* x,
        const float* g, float* y, irgrid_index n, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index y_cstride, int rank, const irgrid_index* dims, int padding, int align, irgrid_items* items,
        irgrid_index* fallback) {
#define IRGRID_PAIRS_CASE(pad)                                                                                      \
    if (padding == pad)                                                                                             \
        return rank == 3 ? irgrid_pairs_wide_body_3d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align,  \
                                                     NULL, fallback)                                                \
               : items ? irgrid_pairs_wide_body_2d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align,    \
                                                   items, fallback)                                                 \
                       : irgrid_pairs_wide_body_2d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align,    \
                                                   NULL, fallback);
    IRGRID_PAIRS_CASE(IRGRID_PAD_ZEROS)
    IRGRID_PAIRS_CASE(IRGRID_PAD_BORDER)
    IRGRID_PAIRS_CASE(IRGRID_PAD_REFLECTION)
#undef IRGRID_PAIRS_CASE
    return 0;  /* (no other padding reaches here: irgrid_grid_sample_plan checks) */
}

/* ---- Bilinear and trilinear by pairs, 8 lanes (AVX2): irgrid_pairs_wide_f32's scheme where the CPU
   lacks AVX-512, the same operations lane for lane, so the same bits ---- */

/* irgrid_pixel_coordinate_f32 (native) with the call's constants (irgrid_pair_dim8): the same bits. */
IRGRID_AVX2_INLINE __m256 irgrid_pair8_coordinate(__m256 g, const irgrid_pair_dim8* d, __m256* bad) {
    const __m256 sign = _mm256_set1_ps(-0.0f), all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    __m256 x, ok = _mm256_cmp_ps(_mm256_andnot_ps(sign, g), _mm256_set1_ps(1e30f), _CMP_LT_OQ);
    x = _mm256_fmadd_ps(_mm256_and_ps(g, ok), d->scale, d->offset);
    ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(4194304.0f), _CMP_LE_OQ));
    *bad = _mm256_or_ps(*bad, _mm256_andnot_ps(ok, all));
    return _mm256_and_ps(x, ok);
}

/* irgrid_pair_row, 8 lanes (simd_pairs8.h). */
IRGRID_AVX2_INLINE __m256i irgrid_pair8_row(__m256i i, __m256i last, int reflect_aligned) {
    const __m256i zero = _mm256_setzero_si256(), clamped = _mm256_min_epi32(_mm256_max_epi32(i, zero), last);
    if (!reflect_aligned)
        return clamped;
    return _mm256_blendv_epi8(clamped, _mm256_max_epi32(_mm256_sub_epi32(_mm256_add_epi32(last, last), i), zero),
                              _mm256_cmpgt_epi32(i, last));
}

#define PAIRS_RANK 2
#include "simd_pairs8.h"
#define PAIRS_RANK 3
#include "simd_pairs8.h"

/* The 8-lane pair run per rank and padding (irgrid_pairs_wide_f32's copies). */
static IRGRID_AVX2 __attribute__((noinline)) irgrid_index irgrid_pairs8_f32(const float* x, const float* g,
        float* y, irgrid_index n, irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, int rank,
        const irgrid_index* dims, int padding, int align, irgrid_items* items, irgrid_index* fallback) {
#define IRGRID_PAIRS_CASE(pad)                                                                                      \
    if (padding == pad)                                                                                             \
        return rank == 3 ? irgrid_pairs8_body_3d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align,      \
                                                 NULL, fallback)                                                    \
               : items ? irgrid_pairs8_body_2d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align, items, \
                                               fallback)                                                            \
                       : irgrid_pairs8_body_2d(x, g, y, n, channels, x_cstride, y_cstride, dims, pad, align, NULL,  \
                                               fallback);
    IRGRID_PAIRS_CASE(IRGRID_PAD_ZEROS)
    IRGRID_PAIRS_CASE(IRGRID_PAD_BORDER)
    IRGRID_PAIRS_CASE(IRGRID_PAD_REFLECTION)
#undef IRGRID_PAIRS_CASE
    return 0;  /* (no other padding reaches here: irgrid_grid_sample_plan checks) */
}

/* ---- 2-D nearest of few channels by points, 8 lanes (AVX2): simd_nearest_points.h's one-float pixels
   where 512-bit code is not taken (no AVX-512, or a call under WIDE_MIN_POINTS) ---- */

/* irgrid_nearest_points_run_f32's pixel 1 (X's planes x + c * plane), 8 points a vector, with `padding`
   and `loads` as constants: the taps irgrid_dim_taps' (irgrid_pair8_coordinate, RINT, irgrid_pad's zeros
   or border; reflection by irgrid_pad itself, lanes past one fold to the scalar path), read by masked
   gathers or scalar loads (a dropped lane reads x[0] and is zeroed); the same bits as every path. */
IRGRID_AVX2_INLINE irgrid_index irgrid_nearest8_body(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, const irgrid_index* dims, int padding,
        int align, int loads, irgrid_index* fallback) {
    const irgrid_index height = dims[0], width = dims[1];  /* (locals: the fallback stores may alias dims) */
    const irgrid_pair_dim8 dy = irgrid_pair_dim8_of((double)height, align);
    const irgrid_pair_dim8 dx = irgrid_pair_dim8_of((double)width, align);
    const __m256 zero = ZERO(), all = CMP(zero, zero, _CMP_EQ_OQ), pitch = SET1((float)width);
    const __m256 y_last = SET1((float)(height - 1)), x_last = SET1((float)(width - 1));
    const __m256 lanes = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    float coords[3][8];
    __m256 gk[3], iy, ix, bad, kept, store, v;
    __m256i idx;
    irgrid_index p, m, c, nf = 0;
    for (p = 0; p < n; p += 8) {
        m = n - p < 8 ? n - p : 8;
        store = CMP(lanes, SET1((float)m), _CMP_LT_OQ);
        bad = zero;
        irgrid_lane_coords_f32(g, p, m, 2, gk, coords);
        iy = RINT(irgrid_pair8_coordinate(gk[1], &dy, &bad));
        ix = RINT(irgrid_pair8_coordinate(gk[0], &dx, &bad));
        if (padding == IRGRID_PAD_BORDER) {
            iy = VMIN(VMAX(iy, zero), y_last);
            ix = VMIN(VMAX(ix, zero), x_last);
            kept = ANDNOT(bad, all);
        } else if (padding == IRGRID_PAD_REFLECTION) {
            iy = irgrid_pad_f32(iy, (float)height, IRGRID_PAD_REFLECTION, align, &kept, &bad);
            ix = irgrid_pad_f32(ix, (float)width, IRGRID_PAD_REFLECTION, align, &kept, &bad);
            kept = ANDNOT(bad, all);
        } else {
            kept = ANDNOT(OR(OR(bad, OR(CMP(iy, zero, _CMP_LT_OQ), CMP(iy, y_last, _CMP_GT_OQ))),
                             OR(CMP(ix, zero, _CMP_LT_OQ), CMP(ix, x_last, _CMP_GT_OQ))), all);
        }
        irgrid_record_fallback_f32(bad, p, m, fallback, &nf);
        /* the pixel's index, exact in f32 for a kept lane (grid_sample.c's points_pixel: fewer than 2^21 pixels) */
        idx = TOINT(FMADD(iy, pitch, ix));
        for (c = 0; c < channels; c++) {
            v = loads ? irgrid_loads_f32(zero, x + c * plane, idx, kept) : GATHER(zero, x + c * plane, idx, kept);
            if (m == 8)
                STOREU(y + c * y_cstride + p, v);
            else
                MASKSTORE(y + c * y_cstride + p, store, v);
        }
    }
    return nf;
}

/* irgrid_nearest8_body's copies per padding and read. */
static IRGRID_AVX2 __attribute__((noinline)) irgrid_index irgrid_nearest8_f32(const float* x, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, const irgrid_index* dims,
        int padding, int align, int loads, irgrid_index* fallback) {
#define IRGRID_NEAREST8(pad, ld) \
    irgrid_nearest8_body(x, g, y, n, channels, y_cstride, plane, dims, pad, align, ld, fallback)
    if (padding == IRGRID_PAD_ZEROS)
        return loads ? IRGRID_NEAREST8(IRGRID_PAD_ZEROS, 1) : IRGRID_NEAREST8(IRGRID_PAD_ZEROS, 0);
    if (padding == IRGRID_PAD_BORDER)
        return loads ? IRGRID_NEAREST8(IRGRID_PAD_BORDER, 1) : IRGRID_NEAREST8(IRGRID_PAD_BORDER, 0);
    return loads ? IRGRID_NEAREST8(IRGRID_PAD_REFLECTION, 1) : IRGRID_NEAREST8(IRGRID_PAD_REFLECTION, 0);
#undef IRGRID_NEAREST8
}

/* irgrid_gather_taps_wide_body, one copy per 2-D mode as irgrid_gather_taps (the plan takes 16 lanes in
   2-D only). */
static IRGRID_AVX512 __attribute__((noinline)) int irgrid_gather_taps_wide_f32(const float* x, const float* g,
        irgrid_index p0, irgrid_index n, irgrid_index rank, const irgrid_index* dims, const irgrid_index* strides,
        int mode, int padding, int align, irgrid_group_f32* q, irgrid_index* fallback, irgrid_index* nf) {
    IRGRID_TAPS_2D(irgrid_gather_taps_wide_body)
    return irgrid_gather_taps_wide_body(x, g, p0, n, rank, dims, strides, mode, padding, align, q, fallback, nf);
}
#endif

/* Outputs of points [0, n) (coordinates g, n x rank, innermost first) in `channels` planes
   (x + c * x_cstride -> y + c * y_cstride), read with gathers or (`loads`) scalar loads; returns how
   many points it left to the scalar path, their indices in fallback[0 ..) (capacity n). `wide` (f32, where
   irgrid_cpu_avx512()): the taps 16 lanes at a time, the same bits. */
static IRGRID_AVX2 irgrid_index SFX(irgrid_simd_sample)(const FT* x, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, int loads,
        int wide, irgrid_index* fallback) {
    SFX(irgrid_group) q[IRGRID_SIMD_GROUPS];
    irgrid_index p0, nf = 0;
    int taps = mode == 0 ? 1 : (mode == 1 ? 2 : 4), i;
    (void)wide;
#if LANES == 8
    /* (calls of less than a block keep the blocks' prefetched rows: by pairs RAFT's 81-point items, one call
       each, took 1.12-1.14x the time on random windows; a batch of such one-channel items now runs by
       pairs as one run, grid_sample.c's IRGRID_GS_ITEMS) */
    if (mode == IRGRID_MODE_LINEAR && channels <= IRGRID_PAIRS_CHANNELS
            && dims[rank - 1] >= 2 && n >= IRGRID_SIMD_GROUPS * LANES)
        return wide ? irgrid_pairs_wide_f32(x, g, y, n, channels, x_cstride, y_cstride, (int)rank, dims, padding,
                                            align, NULL, fallback)
                    : irgrid_pairs8_f32(x, g, y, n, channels, x_cstride, y_cstride, (int)rank, dims, padding, align,
                                        NULL, fallback);
    if (rank == 2 && channels <= IRGRID_FUSED_CHANNELS && n >= IRGRID_SIMD_GROUPS * LANES) {
        if (wide)
            return irgrid_fused_wide_f32(x, g, y, n, channels, x_cstride, y_cstride, rank, dims, strides, mode,
                                         padding, align, loads, fallback);
        return SFX(irgrid_fused)(x, g, y, n, channels, x_cstride, y_cstride, rank, dims, strides, mode, padding,
                                 align, loads, fallback);
    }
#endif
    for (p0 = 0; p0 < n; p0 += IRGRID_SIMD_GROUPS * LANES) {
#if LANES == 8
        if (wide)
            i = irgrid_gather_taps_wide_f32(x, g, p0, n, rank, dims, strides, mode, padding, align, q, fallback, &nf);
        else
#endif
            i = SFX(irgrid_gather_taps)(x, g, p0, n, rank, dims, strides, mode, padding, align, q, fallback, &nf);
        /* one inlined copy per rank, taps and read (each with its constants) */
#define IRGRID_APPLY(r, t) (loads ? SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, r, t, 1) \
                                  : SFX(irgrid_apply_block)(q, i, x, y + p0, channels, x_cstride, y_cstride, r, t, 0))
        if (rank == 2 && taps == 1)
            IRGRID_APPLY(2, 1);
        else if (rank == 2 && taps == 2)
            IRGRID_APPLY(2, 2);
        else if (rank == 2)
            IRGRID_APPLY(2, 4);
        else if (taps == 1)
            IRGRID_APPLY(3, 1);
        else
            IRGRID_APPLY(3, 2);
#undef IRGRID_APPLY
    }
    return nf;
}
#undef IRGRID_FUSED_DISPATCH
#undef IRGRID_FUSED_CASE
#undef IRGRID_TAPS_2D
#undef IRGRID_TAPS_3D
#undef IRGRID_TAPS_CASE

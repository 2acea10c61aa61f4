/* The gather path of the vector GridSample for one float type (a part of simd_body.h): a group of lanes'
   taps prepared once, then every channel read through masked gathers. */

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
                                                irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride,
                                                int rank, int n) {
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
            acc = SFX(irgrid_apply)(q + i, x + c * x_cstride, rank, n);
            if (MOVEMASK(q[i].store_mask) == (1 << LANES) - 1)
                STOREU(yc, acc);
            else
                MASKSTORE(yc, q[i].store_mask, acc);
        }
}

/* Outputs of points [0, n) (coordinates g, n x rank, innermost first) in `channels` planes
   (x + c * x_cstride -> y + c * y_cstride); returns how many points it left to the scalar path,
   their indices in fallback[0 ..) (capacity n). */
static IRGRID_AVX2 irgrid_index SFX(irgrid_simd_sample)(const FT* x, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align,
        irgrid_index* fallback) {
    SFX(irgrid_dim) d[3];
    SFX(irgrid_group) q[IRGRID_SIMD_GROUPS];
    FT lanes[LANES];
    irgrid_index p, p0, nf = 0, lane, m;
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

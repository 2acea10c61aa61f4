/* The 8-lane (AVX2) pair run (simd_gather_path.h, irgrid_pairs8_f32) for one rank, PAIRS_RANK (2: bilinear,
   2 rows of taps a point; 3: trilinear, 4), included once for each: its names end in _2d or _3d. The
   16-lane run's scheme (simd_pairs.h) where the CPU lacks AVX-512 (or the process caps it, cpu.h): the same
   operations lane for lane, with masks as vectors of all-ones or zero lanes, so the same bits, which are
   the gather path's. Why: a row's two taps are one 64-bit load, where the gather path reads each tap
   (benchmarks/README.md, "Few channels by pairs"; 3-D and the 8-lane constants: "AVX2 on an AVX-512
   host"). */
#define PAIRS_ROWS (PAIRS_RANK == 3 ? 4 : 2)
/* Groups of 8 points whose taps are computed before any is read (a batch): 128 points in 2-D, 64 in 3-D.
   Under the AVX2 cap on Zen 5 (paired): 2-D with 256 points took 1.09-1.12x the time on random grids,
   with 64 RAFT's random lookups 1.29x (their prefetches come too late); 3-D with 128 points 1.01-1.05x,
   with 256 1.03-1.19x, with 32 1.09x on two channels' random grid (benchmarks/README.md, "AVX2 on an
   AVX-512 host"). */
#define PAIRS8_GROUPS (PAIRS_RANK == 3 ? IRGRID_PAIRS_BLOCKS / 2 : IRGRID_PAIRS_BLOCKS)
#define PSFX_(name, r) name##_##r##d
#define PSFX_EXPAND(name, r) PSFX_(name, r)
#define PSFX(name) PSFX_EXPAND(name, PAIRS_RANK)

/* What the pair reads of 8 points need (simd_pairs.h's irgrid_pairs16, 8 lanes). */
typedef struct {
    int at[PAIRS_ROWS][8];
    __m256 w[2 * PAIRS_ROWS], tap_left[PAIRS_ROWS], tap_right[PAIRS_ROWS], next_left[PAIRS_ROWS],
        next_right[PAIRS_ROWS], store;
    irgrid_index base;
    int scattered, whole;  /* whole: all 8 lanes are points (stored without a mask) */
} PSFX(irgrid_pairs8x);

/* The taps of points [p, p + m) (m <= 8) into q (simd_pairs.h's irgrid_pairs_taps; d: each dim's
   constants, outermost first). */
IRGRID_AVX2_INLINE void PSFX(irgrid_pairs8_taps)(const float* g, irgrid_index p, irgrid_index m,
        const irgrid_index* dims, const irgrid_pair_dim8* d, int padding, int align, irgrid_items* items,
        PSFX(irgrid_pairs8x)* q, irgrid_index* fallback, irgrid_index* found) {
    const int rank = PAIRS_RANK;
    const irgrid_index width = dims[rank - 1], height = dims[rank - 2];
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256i zero = _mm256_setzero_si256(), h_last = _mm256_set1_epi32((int)height - 1);
    const __m256i all = _mm256_set1_epi32(-1), lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    float coords[3][8];
    __m256 gk[3], pix[3], bad = _mm256_setzero_ps(), t, wx[2], wy[2], wz[2], row_w;
    __m256i x0, y0, z0 = zero, yr, zr = zero, start, inner, at_last, before, row_ok, z_ok = all, row, shift = zero;
    __m256i left_at_last = zero;
    const int reflect = padding == IRGRID_PAD_REFLECTION, keep_all = padding != IRGRID_PAD_ZEROS;
    int k, e, f, r;
    q->store = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)m), lanes));
    q->whole = m == 8;
    q->base = 0;
    q->scattered = 0;
    if (items != NULL) {  /* 2-D: simd_pairs.h's irgrid_pairs_taps_2d */
        const __m256i plane = _mm256_set1_epi32((int)items->plane);
        irgrid_index bound;
        q->base = items->item * items->plane;
        for (bound = items->per_item - items->rem; bound < m; bound += items->per_item)
            shift = _mm256_add_epi32(shift, _mm256_and_si256(plane, _mm256_and_si256(
                _mm256_castps_si256(q->store), _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32((int)bound - 1)))));
        irgrid_items_advance(items, 8);
    }
    irgrid_lane_coords_f32(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++) {  /* pix[k]: dim k (outermost first) from the grid's component rank - 1 - k */
        pix[k] = irgrid_pair8_coordinate(gk[rank - 1 - k], d + k, &bad);
        if (padding == IRGRID_PAD_BORDER)
            pix[k] = _mm256_min_ps(_mm256_max_ps(pix[k], _mm256_setzero_ps()), _mm256_set1_ps((float)(dims[k] - 1)));
        if (reflect)
            pix[k] = irgrid_reflect_f32(pix[k], (float)dims[k], align, &bad);
    }
    /* each dim's floor and weights: x0 = floor(x), the weights of x0 and x0 + 1 (irgrid_dim_taps' linear taps) */
#define PAIRS8_FLOOR(x, i0, w)                          \
    do {                                                \
        t = _mm256_floor_ps(x);                         \
        i0 = _mm256_cvttps_epi32(t);                    \
        t = _mm256_sub_ps(x, t);                        \
        (w)[0] = _mm256_sub_ps(one, t);                 \
        (w)[1] = t;                                     \
    } while (0)
    PAIRS8_FLOOR(pix[rank - 1], x0, wx);
    PAIRS8_FLOOR(pix[rank - 2], y0, wy);
    if (rank == 3)
        PAIRS8_FLOOR(pix[0], z0, wz);
#undef PAIRS8_FLOOR
    if (items != NULL) {  /* two lanes' rows or more over 4 from lane 0's: not a 9 x 9 window */
        const __m256i far = _mm256_abs_epi32(_mm256_sub_epi32(y0, _mm256_permutevar8x32_epi32(y0, zero)));
        q->scattered = __builtin_popcount(_mm256_movemask_ps(_mm256_castsi256_ps(
                           _mm256_cmpgt_epi32(far, _mm256_set1_epi32(4))))) > 1;
    }
    /* the pair starts at the left tap clamped to [0, W - 2] (simd_pairs.h says which value each tap takes) */
    start = _mm256_min_epi32(_mm256_max_epi32(x0, zero), _mm256_set1_epi32((int)width - 2));
    inner = _mm256_cmpeq_epi32(x0, start);
    at_last = _mm256_cmpeq_epi32(x0, _mm256_set1_epi32((int)width - 1));
    before = padding == IRGRID_PAD_BORDER ? zero : _mm256_cmpeq_epi32(x0, all);
    if (reflect && align)
        left_at_last = at_last;
    r = 0;
    for (e = 0; e < (rank == 3 ? 2 : 1); e++) {
        if (rank == 3) {
            const __m256i d_last = _mm256_set1_epi32((int)dims[0] - 1);
            zr = e ? _mm256_add_epi32(z0, _mm256_set1_epi32(1)) : z0;
            z_ok = keep_all ? all : _mm256_cmpeq_epi32(_mm256_min_epu32(zr, d_last), zr);
            zr = _mm256_mullo_epi32(irgrid_pair8_row(zr, d_last, reflect && align),
                                    _mm256_set1_epi32((int)(height * width)));
        }
        for (f = 0; f < 2; f++, r++) {
            yr = f ? _mm256_add_epi32(y0, _mm256_set1_epi32(1)) : y0;
            row_ok = keep_all ? z_ok  /* 0 <= yr <= H - 1 as one unsigned comparison */
                     : _mm256_and_si256(z_ok, _mm256_cmpeq_epi32(_mm256_min_epu32(yr, h_last), yr));
            row = _mm256_add_epi32(_mm256_mullo_epi32(irgrid_pair8_row(yr, h_last, reflect && align),
                                                      _mm256_set1_epi32((int)width)), start);
            if (rank == 3)
                row = _mm256_add_epi32(zr, row);
            _mm256_storeu_si256((__m256i*)q->at[r], _mm256_add_epi32(row, shift));
            row_w = rank == 3 ? _mm256_mul_ps(wz[e], wy[f]) : wy[f];  /* irgrid_rows' order */
            q->w[2 * r] = _mm256_mul_ps(row_w, wx[0]);
            q->w[2 * r + 1] = _mm256_mul_ps(row_w, wx[1]);
            q->tap_left[r] = _mm256_castsi256_ps(_mm256_and_si256(reflect ? _mm256_or_si256(inner, before) : inner,
                                                                  row_ok));
            q->tap_right[r] = _mm256_castsi256_ps(_mm256_and_si256(at_last, row_ok));
            q->next_right[r] = _mm256_castsi256_ps(
                padding == IRGRID_PAD_BORDER ? row_ok
                : _mm256_and_si256(reflect ? _mm256_andnot_si256(left_at_last, _mm256_or_si256(inner, at_last)) : inner,
                                   row_ok));
            q->next_left[r] = _mm256_castsi256_ps(_mm256_and_si256(_mm256_or_si256(before, left_at_last), row_ok));
        }
    }
    irgrid_record_fallback_f32(bad, p, m, fallback, found);
}

/* One channel's outputs of 8 points from their prepared taps q, summed in irgrid_apply's order (the masks
   pick disjoint lanes, so AND and OR give each tap its value, or +0). */
IRGRID_AVX2_INLINE void PSFX(irgrid_pairs8_apply)(const PSFX(irgrid_pairs8x)* q, const float* xc, float* yc) {
    __m256 acc = _mm256_setzero_ps();
    int r;
    for (r = 0; r < PAIRS_ROWS; r++) {
        const int* at = q->at[r];
        const __m256 lo = _mm256_castpd_ps(_mm256_insertf128_pd(_mm256_castpd128_pd256(
            irgrid_two_pairs(xc + at[0], xc + at[1])), irgrid_two_pairs(xc + at[2], xc + at[3]), 1));
        const __m256 hi = _mm256_castpd_ps(_mm256_insertf128_pd(_mm256_castpd128_pd256(
            irgrid_two_pairs(xc + at[4], xc + at[5])), irgrid_two_pairs(xc + at[6], xc + at[7]), 1));
        const __m256 left = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0))), 0xD8));
        const __m256 right = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8));
        const __m256 v0 = _mm256_or_ps(_mm256_and_ps(left, q->tap_left[r]), _mm256_and_ps(right, q->tap_right[r]));
        const __m256 v1 = _mm256_or_ps(_mm256_and_ps(right, q->next_right[r]), _mm256_and_ps(left, q->next_left[r]));
        acc = r ? _mm256_fmadd_ps(q->w[2 * r], v0, acc) : _mm256_mul_ps(q->w[0], v0);
        acc = _mm256_fmadd_ps(q->w[2 * r + 1], v1, acc);
    }
    /* a whole block by a plain store, as the other 8-lane runs store theirs: a masked 256-bit store took
       22-33 TSC ticks on a first-generation Zen, a plain one 3-5 (a loop of each; benchmarks/README.md,
       "Zen 1: AVX2 on 128-bit units") */
    if (q->whole)
        _mm256_storeu_ps(yc, acc);
    else
        _mm256_maskstore_ps(yc, _mm256_castps_si256(q->store), acc);
}

/* Bilinear (2-D) or trilinear (3-D) sampling of points [0, n) in `channels` planes, 8 lanes at a time
   (simd_pairs.h's irgrid_pairs_wide_body, 8 lanes; `items`: 2-D only). Returns the points left to the
   scalar path (in fallback). */
IRGRID_AVX2_INLINE irgrid_index PSFX(irgrid_pairs8_body)(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, const irgrid_index* dims,
        int padding, int align, irgrid_items* items, irgrid_index* fallback) {
    const int rank = PAIRS_RANK;
    PSFX(irgrid_pairs8x) q[PAIRS8_GROUPS];
    const int windows = items != NULL && (irgrid_cpu_prefetches() & IRGRID_PREFETCH_WINDOWS);
    irgrid_pair_dim8 d[3];
    irgrid_index p0, p, c, found = 0;
    int i, k, blocks;
    for (k = 0; k < rank; k++)
        d[k] = irgrid_pair_dim8_of(dims[k], align);
    for (p0 = 0; p0 < n; p0 += 8 * PAIRS8_GROUPS) {
        for (i = 0, p = p0; i < PAIRS8_GROUPS && p < n; i++, p += 8) {
            PSFX(irgrid_pairs8_taps)(g, p, n - p < 8 ? n - p : 8, dims, d, padding, align, items, q + i, fallback,
                                     &found);
            if (items != NULL && (windows || q[i].scattered))
                irgrid_prefetch_pairs(x + q[i].base, q[i].at[0], q[i].at[1], 8);
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++)
                PSFX(irgrid_pairs8_apply)(q + i, x + c * x_cstride + q[i].base, y + c * y_cstride + p0 + 8 * i);
    }
    return found;
}

#undef PSFX
#undef PSFX_EXPAND
#undef PSFX_
#undef PAIRS_ROWS
#undef PAIRS8_GROUPS
#undef PAIRS_RANK

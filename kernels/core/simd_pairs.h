/* The 16-lane pair run (simd_gather_path.h, irgrid_pairs_wide_f32) for one rank, PAIRS_RANK (2: bilinear,
   2 rows of taps a point; 3: trilinear, 4), included once for each: its names end in _2d or _3d. Why a
   copy per rank: a block's taps sized for 3-D's four rows made 2-D's two- and three-channel runs take
   1.02-1.05x the time on Zen 5 (benchmarks/README.md, "Zen 5: the pair taps, prefetch by spread"). */
#define PAIRS_ROWS (PAIRS_RANK == 3 ? 4 : 2)
/* Blocks whose taps are computed before any is read: IRGRID_PAIRS_BLOCKS (256 points) for a run of
   items, whose prefetched lines need that long to arrive (RAFT's random lookups took 1.14x the time with
   128), else cpu.h's irgrid_cpu_batch_blocks: 128 points (Zen 5, paired, 2 threads: 2-D 0.93-0.96x the time of 256
   on random grids and 0.99-1.01x on smooth ones, 3-D 0.94x and 0.99x, at 1 thread too; 64 points in 3-D
   1.03x on smooth grids; 2-D's 4 and 32 blocks measured 0.97-1.1x; benchmarks/README.md, "AVX2 on an
   AVX-512 host", where the 8-lane run's batches were measured first), 64 on Zen 4. */
#define PAIRS_BATCH(items) ((items) != NULL ? IRGRID_PAIRS_BLOCKS : irgrid_cpu_batch_blocks())
#define PSFX_(name, r) name##_##r##d
#define PSFX_EXPAND(name, r) PSFX_(name, r)
#define PSFX(name) PSFX_EXPAND(name, PAIRS_RANK)

/* What the pair reads of 16 points need: per row of taps (2 in 2-D, 4 in 3-D: (z, y) in outer-product
   order) the pairs' start indices from `base` (0 but for a run of items, irgrid_items), the lanes whose
   first and second taps are kept (keep0, keep1; the others +0), and where a kept tap's value is: the
   pair's left value, or its right one for the first tap in the lanes of right0, and for the second its
   right one, or the left one in left1 (the same in every row); the taps' weights, two a row. */
typedef struct {
    int at[PAIRS_ROWS][16];
    __m512 w[2 * PAIRS_ROWS];
    __mmask16 keep0[PAIRS_ROWS], keep1[PAIRS_ROWS], right0, left1, store;
    irgrid_index base;
    int scattered;
} PSFX(irgrid_pairs16);

/* The taps of points [p, p + m) (m <= 16) of a rank-2 or rank-3 grid (dims outermost first, the innermost
   of at least 2 pixels) into q; their fallback points appended (*found). With `items` (2-D), the points
   run across items (irgrid_items): q->base is the block's first item's plane, and each lane's pair starts
   past one more plane per item boundary before it (lanes from m on: none, so that they read within the
   last item). The pairs' starts are pixel indices times 2 ** pixel_shift: float indices into a scratch of
   pixels of that many floats (simd_pairs_pixels.h), or with 0 into X's planes. */
IRGRID_AVX512_INLINE void PSFX(irgrid_pairs_taps)(const float* g, irgrid_index p, irgrid_index m, const irgrid_index* dims,
        const irgrid_pair_dim* d, int padding, int align, irgrid_items* items, int pixel_shift,
        PSFX(irgrid_pairs16)* q, irgrid_index* fallback, irgrid_index* found) {
    const int rank = PAIRS_RANK;
    const irgrid_index width = dims[rank - 1], height = dims[rank - 2];
    const __m512i zero = _mm512_setzero_si512(), h_last = _mm512_set1_epi32((int)height - 1);
    float coords[3][16];
    __m512 gk[3], pix[3], wx[2], wy[2], wz[2], row_w;
    __m512i x0, y0, z0 = zero, yr, zr, start, row, shift = zero;
    __mmask16 inner, at_last, before, row_ok, z_ok = (__mmask16)0xFFFF, bad = 0, left_at_last = 0;
    const int reflect = padding == IRGRID_PAD_REFLECTION, keep_all = padding != IRGRID_PAD_ZEROS;
    int k, e, f, r;
    q->store = m == 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1);
    q->base = 0;
    q->scattered = 0;
    if (items != NULL) {
        const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const __m512i plane = _mm512_set1_epi32((int)items->plane);
        irgrid_index bound;
        q->base = items->item * items->plane;
        for (bound = items->per_item - items->rem; bound < m; bound += items->per_item)
            shift = _mm512_mask_add_epi32(shift, q->store & _mm512_cmpge_epi32_mask(lanes, _mm512_set1_epi32((int)bound)),
                                          shift, plane);
        irgrid_items_advance(items, 16);
    }
    irgrid_lane_coords_f32x16(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++) {  /* pix[k]: dim k (outermost first) from the grid's component rank - 1 - k */
        pix[k] = irgrid_pair_coordinate(gk[rank - 1 - k], d + k, &bad);
        if (padding == IRGRID_PAD_BORDER)
            pix[k] = _mm512_min_ps(_mm512_max_ps(pix[k], _mm512_setzero_ps()), _mm512_set1_ps((float)(dims[k] - 1)));
        if (reflect) {  /* into one period (irgrid_dim_taps); lanes further out go to the scalar path */
            __m512 far = _mm512_setzero_ps();
            pix[k] = irgrid_reflect_f32x16(pix[k], (float)dims[k], align, &far);
            bad |= IRGRID_MASK16(far);
        }
    }
    x0 = irgrid_pair_floor(pix[rank - 1], wx);
    y0 = irgrid_pair_floor(pix[rank - 2], wy);
    if (rank == 3)
        z0 = irgrid_pair_floor(pix[0], wz);
    if (items != NULL) {  /* more than half the lanes' rows over 4 from lane 0's: not a 9 x 9 window */
        const __m512i far = _mm512_abs_epi32(_mm512_sub_epi32(y0, _mm512_permutexvar_epi32(zero, y0)));
        q->scattered = __builtin_popcount(_mm512_cmpgt_epi32_mask(far, _mm512_set1_epi32(4))) > 8;
    }
    /* the pair starts at the left tap clamped to [0, W - 2]: the left tap's value is the pair's left one
       (inner) or, at the last pixel, its right one; the right tap's is the right one (inner) or, left of
       the plane (zeros), the left one; with border padding the right tap's is always the right one. A
       reflected coordinate lies within [-0.5, W - 0.5] (align_corners: [0, W - 1]), and its taps past
       an edge are reflected back (irgrid_pad): left of the plane both read pixel 0, the pair's left value;
       past the last pixel the right tap reads pixel W - 1, or with align_corners W - 2 (its weight 0),
       the pair's left value */
    start = _mm512_min_epi32(_mm512_max_epi32(x0, zero), _mm512_set1_epi32((int)width - 2));
    inner = _mm512_cmpeq_epi32_mask(x0, start);
    at_last = _mm512_cmpeq_epi32_mask(x0, _mm512_set1_epi32((int)width - 1));
    before = padding == IRGRID_PAD_BORDER ? (__mmask16)0 : _mm512_cmpeq_epi32_mask(x0, _mm512_set1_epi32(-1));
    if (reflect && align)
        left_at_last = at_last;
    q->right0 = at_last;
    q->left1 = before | left_at_last;
    r = 0;
    for (e = 0; e < (rank == 3 ? 2 : 1); e++) {
        if (rank == 3) {
            const __m512i d_last = _mm512_set1_epi32((int)dims[0] - 1);
            zr = e ? _mm512_add_epi32(z0, _mm512_set1_epi32(1)) : z0;
            z_ok = keep_all ? (__mmask16)0xFFFF : _mm512_cmple_epu32_mask(zr, d_last);
            zr = _mm512_mullo_epi32(irgrid_pair_row(zr, d_last, reflect && align),
                                    _mm512_set1_epi32((int)(height * width)));
        }
        for (f = 0; f < 2; f++, r++) {
            yr = f ? _mm512_add_epi32(y0, _mm512_set1_epi32(1)) : y0;
            row_ok = z_ok & (keep_all ? (__mmask16)0xFFFF
                             : _mm512_cmple_epu32_mask(yr, h_last));  /* 0 <= yr <= H - 1 as one unsigned compare */
            row = _mm512_add_epi32(_mm512_mullo_epi32(irgrid_pair_row(yr, h_last, reflect && align),
                                                      _mm512_set1_epi32((int)width)), start);
            if (rank == 3)
                row = _mm512_add_epi32(zr, row);
            _mm512_storeu_si512(q->at[r], _mm512_slli_epi32(_mm512_add_epi32(row, shift), (unsigned)pixel_shift));
            row_w = rank == 3 ? _mm512_mul_ps(wz[e], wy[f]) : wy[f];  /* irgrid_rows' order */
            q->w[2 * r] = _mm512_mul_ps(row_w, wx[0]);
            q->w[2 * r + 1] = _mm512_mul_ps(row_w, wx[1]);
            /* the first tap: the left value (inner; reflected: also before), the right one (at_last); the
               second: the right one (inner; border: every lane; reflected: also at_last, but where that
               reads the left one), the left one (before, left_at_last): disjoint lanes */
            q->keep0[r] = ((reflect ? inner | before : inner) | at_last) & row_ok;
            q->keep1[r] = (padding == IRGRID_PAD_BORDER ? row_ok
                           : (reflect ? (inner | at_last) & (__mmask16)~left_at_last : inner) & row_ok)
                          | ((before | left_at_last) & row_ok);
        }
    }
    irgrid_record_fallback_f32x16(_mm512_castsi512_ps(_mm512_movm_epi32(bad)), p, m, fallback, found);
}

/* One channel's outputs of 16 points from their prepared taps q (2 rows in 2-D, 4 in 3-D), summed in
   irgrid_apply's order. */
IRGRID_AVX512_INLINE void PSFX(irgrid_pairs_apply)(const PSFX(irgrid_pairs16)* q, const float* xc, float* yc) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i one = _mm512_set1_epi32(1), odd = _mm512_add_epi32(even, one);
    /* lane k's first tap from float 2k (left) or 2k + 1 (right) of the pairs, its second likewise */
    const __m512i pick0 = _mm512_mask_add_epi32(even, q->right0, even, one);
    const __m512i pick1 = _mm512_mask_sub_epi32(odd, q->left1, odd, one);
    __m512 acc = _mm512_setzero_ps();
    int r;
    for (r = 0; r < PAIRS_ROWS; r++) {
        const __m512 lo = irgrid_pairs8(xc, q->at[r]), hi = irgrid_pairs8(xc, q->at[r] + 8);
        const __m512 v0 = _mm512_maskz_permutex2var_ps(q->keep0[r], lo, pick0, hi);
        const __m512 v1 = _mm512_maskz_permutex2var_ps(q->keep1[r], lo, pick1, hi);
        acc = r ? _mm512_fmadd_ps(q->w[2 * r], v0, acc) : _mm512_mul_ps(q->w[0], v0);
        acc = _mm512_fmadd_ps(q->w[2 * r + 1], v1, acc);
    }
    _mm512_mask_storeu_ps(yc, q->store, acc);
}

/* Bilinear (2-D) or trilinear (3-D) sampling of points [0, n) in `channels` planes (any padding, rows of
   at least 2 pixels), 16 lanes at a time, reading each row's two taps as one 64-bit pair
   (irgrid_pairs_taps says which value each tap takes). The coordinates, weights and sums are
   irgrid_dim_taps', irgrid_taps' and irgrid_apply's, operation for operation, and a tap outside reads +0
   as a masked gather does, so the bits are the gather path's. Why: on Intel cores with the Gather Data
   Sampling mitigation a 16-lane gather costs tens of cycles; here a row of a point costs one scalar load
   (benchmarks/README.md, "Few channels by pairs"; 3-D: "3-D few channels by pairs").
   Returns the points left to the scalar path (in fallback). */
IRGRID_AVX512_INLINE irgrid_index PSFX(irgrid_pairs_wide_body)(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, const irgrid_index* dims,
        int padding, int align, irgrid_items* items, irgrid_index* fallback) {
    const int rank = PAIRS_RANK;
    PSFX(irgrid_pairs16) q[IRGRID_PAIRS_BLOCKS];
    const int batch = PAIRS_BATCH(items);
    const int windows = items != NULL && (irgrid_cpu_prefetches() & IRGRID_PREFETCH_WINDOWS);
    irgrid_pair_dim d[3];
    irgrid_index p0, p, c, found = 0;
    int i, k, blocks;
    for (k = 0; k < rank; k++)
        d[k] = irgrid_pair_dim_of(dims[k], align);
    for (p0 = 0; p0 < n; p0 += 16 * batch) {
        for (i = 0, p = p0; i < batch && p < n; i++, p += 16) {
            PSFX(irgrid_pairs_taps)(g, p, n - p < 16 ? n - p : 16, dims, d, padding, align, items, 0, q + i,
                                    fallback, &found);
            if (items != NULL && (windows || q[i].scattered))
                irgrid_prefetch_pairs(x + q[i].base, q[i].at[0], q[i].at[1], 16);
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++)
                PSFX(irgrid_pairs_apply)(q + i, x + c * x_cstride + q[i].base, y + c * y_cstride + p0 + 16 * i);
    }
    return found;
}

#undef PSFX
#undef PSFX_EXPAND
#undef PSFX_
#undef PAIRS_ROWS
#undef PAIRS_BATCH
#undef PAIRS_RANK

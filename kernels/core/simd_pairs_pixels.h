/* 2-D bilinear of two to four f32 channels over pixels of 2 or 4 floats, and of one over stacked rows
   (below); a part of simd.h's 16-lane f32 section, after simd_pairs.h's rank-2 copy, whose taps it
   takes, and simd_cubic_points.h, whose transposed 16-byte loads, irgrid_quads_f32x16, it shares. The
   scratch is 2-D nearest by points' (grid_sample.c's points_pixel; irgrid_interleave_narrow_f32): a pixel's channels side by side, so
   that a row's two taps of every channel are one 16-byte load (pixels of 2) or two (pixels of 4) rather
   than one 8-byte load a channel from planes a quarter of a megabyte apart. Why: on Zen 4 the pair run's
   reads of two and three channels on a random grid wait on L1 misses (a build that read nothing took
   0.72x and 0.64x the time), one line a channel a row; here a point's row is one line for every channel
   (benchmarks/README.md, "Bilinear of few channels by pixels").

   The taps, each tap's value (the pair's left or right one, or +0, as irgrid_pairs_apply_2d picks it) and
   the sums are irgrid_pairs_apply_2d's lane for lane (the same floats, from the scratch instead of the
   planes), so every path gives the same bits. */

/* The outputs of channels [0, channels) (channels <= pixel) of 16 points from their prepared taps q, whose
   starts index pixels of `pixel` floats in s; irgrid_pairs_apply_2d's sums. */
IRGRID_AVX512_INLINE void irgrid_pairs_pixels_apply(const irgrid_pairs16_2d* q, const float* s, int pixel,
                                                    irgrid_index channels, float* y, irgrid_index y_cstride) {
    __m512 acc[4], left[4], right[4], t[4];
    irgrid_index c;
    int r;
    for (r = 0; r < 2; r++) {
        irgrid_quads_f32x16(s, q->at[r], 0, 1, t);  /* pixel 2: left of channels 0, 1, right of 0, 1 */
        if (pixel == 2) {
            left[0] = t[0], left[1] = t[1], right[0] = t[2], right[1] = t[3];
        } else {
            for (c = 0; c < 4; c++)
                left[c] = t[c];
            irgrid_quads_f32x16(s, q->at[r], 4, 1, right);
        }
        /* the lanes whose first tap is the left value, or the right one; whose second is the right, or left */
        const __mmask16 left0 = q->keep0[r] & (__mmask16)~q->right0, right0 = q->keep0[r] & q->right0;
        const __mmask16 right1 = q->keep1[r] & (__mmask16)~q->left1, left1 = q->keep1[r] & q->left1;
        for (c = 0; c < channels; c++) {
            const __m512 v0 = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(left0, left[c]), right0, right[c]);
            const __m512 v1 = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(right1, right[c]), left1, left[c]);
            acc[c] = r ? _mm512_fmadd_ps(q->w[2 * r], v0, acc[c]) : _mm512_mul_ps(q->w[0], v0);
            acc[c] = _mm512_fmadd_ps(q->w[2 * r + 1], v1, acc[c]);
        }
    }
    for (c = 0; c < channels; c++)
        _mm512_mask_storeu_ps(y + c * y_cstride, q->store, acc[c]);
}

/* ---- One channel over stacked rows (zeros and border padding) ----

   The scratch (grid_sample.c's irgrid_stack_rows), with zeros padding: H + 1 rows of W + 1 pixels of 2
   floats, pixel (j, i) holding X[j - 1][i - 1] and X[j][i - 1] (zeros outside the plane), then two zero
   pixels. A point whose taps' first row is y and first column x (y in [-1, H - 1], x in [-1, W - 1])
   finds its four taps in pixels (y + 1, x + 1) and the next one (past a row's end: the next row's first
   pixel, zeros), one 16-byte load; its taps outside the plane read zeros, as the pair run's masks give
   +0 there; a point further out reads the two zero pixels at the end, so no tap needs a mask. With
   border padding a coordinate is clamped into the plane first (y in [0, H - 1], x in [0, W - 1]), and a
   tap past the last row or pixel reads the last, as the pair run reads it: H rows of W + 1 pixels, pixel
   (j, i) holding X[j][i] and X[min(j + 1, H - 1)][i], i clamped to W - 1; the point's taps in pixels
   (y, x) and the next. Why: the pair run reads a point's two rows as two 8-byte loads (two L1 misses a
   point on a random grid) and picks each tap's value by masks; on Zen 4, X 1x1x256x256 took 0.74x its
   time on a random grid at 1 thread and 0.84x at 2, 0.79x and 0.92x on a smooth one, the copy included
   (border padding 0.75x, 0.85x, 0.78x, 0.91x; benchmarks/README.md, "Zen 4: one channel over stacked
   rows"). The coordinates, weights and sums are the pair run's, so the bits are too. */

/* The taps of 16 points: each one's first float in the scratch, the weights in irgrid_apply's order (rows
   outermost), the lanes stored. */
typedef struct {
    int at[16];
    __m512 w[4];
    __mmask16 store;
} irgrid_stacked16;

/* The taps of points [p, p + m) (m <= 16) of a 2-D grid over a scratch of stacked rows for a plane of
   height x width (d: the dims' pixel constants, outermost first; `border`: border padding's layout, else
   zeros'); their fallback points appended (*found). The coordinates and weights are
   irgrid_pairs_taps_2d's, operation for operation. */
IRGRID_AVX512_INLINE void irgrid_stacked_taps(const float* g, irgrid_index p, irgrid_index m, irgrid_index height,
        irgrid_index width, const irgrid_pair_dim* d, int border, irgrid_stacked16* q, irgrid_index* fallback,
        irgrid_index* found) {
    const __m512i one = _mm512_set1_epi32(1), row = _mm512_set1_epi32((int)width + 1);
    float coords[2][16];
    __m512 gk[2], wx[2], wy[2], y, x;
    __m512i x0, y0, at;
    __mmask16 bad = 0, near;
    q->store = m == 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << m) - 1);
    irgrid_lane_coords_f32x16(g, p, m, 2, gk, coords);
    y = irgrid_pair_coordinate(gk[1], d, &bad);
    x = irgrid_pair_coordinate(gk[0], d + 1, &bad);
    if (border) {  /* into the plane, as irgrid_pairs_taps_2d clamps */
        y = _mm512_min_ps(_mm512_max_ps(y, _mm512_setzero_ps()), _mm512_set1_ps((float)(height - 1)));
        x = _mm512_min_ps(_mm512_max_ps(x, _mm512_setzero_ps()), _mm512_set1_ps((float)(width - 1)));
    }
    y0 = irgrid_pair_floor(y, wy);
    x0 = irgrid_pair_floor(x, wx);
    if (border) {
        at = _mm512_add_epi32(_mm512_mullo_epi32(y0, row), x0);
    } else {  /* 0 <= y + 1 <= H and 0 <= x + 1 <= W as unsigned compares; the others read the zero pixels */
        near = _mm512_cmple_epu32_mask(_mm512_add_epi32(y0, one), _mm512_set1_epi32((int)height))
               & _mm512_cmple_epu32_mask(_mm512_add_epi32(x0, one), _mm512_set1_epi32((int)width));
        at = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_add_epi32(y0, one), row), _mm512_add_epi32(x0, one));
        at = _mm512_mask_blend_epi32(near, _mm512_set1_epi32((int)((height + 1) * (width + 1))), at);
    }
    _mm512_storeu_si512(q->at, _mm512_slli_epi32(at, 1));
    q->w[0] = _mm512_mul_ps(wy[0], wx[0]);
    q->w[1] = _mm512_mul_ps(wy[0], wx[1]);
    q->w[2] = _mm512_mul_ps(wy[1], wx[0]);
    q->w[3] = _mm512_mul_ps(wy[1], wx[1]);
    irgrid_record_fallback_f32x16(_mm512_castsi512_ps(_mm512_movm_epi32(bad)), p, m, fallback, found);
}

/* One channel's outputs of 16 points from their prepared taps q over the stacked rows s, summed in
   irgrid_apply's order: the top row's two taps, then the bottom row's. */
IRGRID_AVX512_INLINE void irgrid_stacked_apply(const irgrid_stacked16* q, const float* s, int broadcast, float* y) {
    __m512 t[4], acc;
    irgrid_quads_f32x16(s, q->at, 0, broadcast, t);  /* top left, bottom left, top right, bottom right */
    acc = _mm512_mul_ps(q->w[0], t[0]);
    acc = _mm512_fmadd_ps(q->w[1], t[2], acc);
    acc = _mm512_fmadd_ps(q->w[2], t[1], acc);
    acc = _mm512_fmadd_ps(q->w[3], t[3], acc);
    _mm512_mask_storeu_ps(y, q->store, acc);
}

/* Bilinear of points [0, n) (any padding, rows of at least 2 pixels) over the scratch s of pixels of
   `pixel` floats into y + c * y_cstride (c < channels <= pixel), a batch of 16-point blocks' taps at a time
   as irgrid_pairs_wide_body_2d takes them; one channel (zeros or border padding) over stacked rows, its
   16-byte loads by broadcasts or inserts (`broadcast`). Returns the points left to the scalar path (in
   fallback). */
IRGRID_AVX512_INLINE irgrid_index irgrid_pairs_pixels_body(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, int pixel, const irgrid_index* dims, int padding, int align,
        int broadcast, irgrid_index* fallback) {
    irgrid_pairs16_2d q[IRGRID_PAIRS_BLOCKS];
    irgrid_stacked16 stacked[IRGRID_PAIRS_BLOCKS];  /* one channel's */
    const int batch = irgrid_cpu_batch_blocks();
    irgrid_pair_dim d[2];
    irgrid_index p0, p, found = 0;
    int i, blocks;
    d[0] = irgrid_pair_dim_of(dims[0], align);
    d[1] = irgrid_pair_dim_of(dims[1], align);
    for (p0 = 0; p0 < n; p0 += 16 * batch) {
        for (i = 0, p = p0; i < batch && p < n; i++, p += 16)
            if (channels == 1)
                irgrid_stacked_taps(g, p, n - p < 16 ? n - p : 16, dims[0], dims[1], d, padding == IRGRID_PAD_BORDER,
                                    stacked + i, fallback, &found);
            else
                irgrid_pairs_taps_2d(g, p, n - p < 16 ? n - p : 16, dims, d, padding, align, NULL, pixel == 2 ? 1 : 2,
                                     q + i, fallback, &found);
        blocks = i;
        for (i = 0; i < blocks; i++)
            if (channels == 1)
                irgrid_stacked_apply(stacked + i, s, broadcast, y + p0 + 16 * i);
            else
                irgrid_pairs_pixels_apply(q + i, s, pixel, channels, y + p0 + 16 * i, y_cstride);
    }
    return found;
}

/* irgrid_pairs_pixels_body with `padding`, `pixel` and the channels (2 with pixel 2; 3 or 4) as constants;
   one channel (pixel 2, zeros or border padding) over stacked rows, its 16-byte loads by broadcasts or inserts
   (cpu.h's irgrid_cpu_row_broadcasts). */
static IRGRID_AVX512 IRGRID_NO_SLP __attribute__((noinline)) irgrid_index irgrid_pairs_pixels_run_f32(const float* s,
        const float* g, float* y, irgrid_index n, irgrid_index channels, irgrid_index y_cstride, int pixel,
        const irgrid_index* dims, int padding, int align, irgrid_index* fallback) {
#define IRGRID_PIXELS_RUN(c, px, pad) \
    irgrid_pairs_pixels_body(s, g, y, n, c, y_cstride, px, dims, pad, align, 1, fallback)
#define IRGRID_PIXELS_PADDING(pad)                                                                   \
    if (padding == pad)                                                                               \
        return pixel == 2 ? IRGRID_PIXELS_RUN(2, 2, pad)                                              \
                          : (channels == 3 ? IRGRID_PIXELS_RUN(3, 4, pad) : IRGRID_PIXELS_RUN(4, 4, pad));
#define IRGRID_STACKED_RUN(pad) \
    (irgrid_cpu_row_broadcasts() ? irgrid_pairs_pixels_body(s, g, y, n, 1, y_cstride, 2, dims, pad, align, 1, fallback) \
                                 : irgrid_pairs_pixels_body(s, g, y, n, 1, y_cstride, 2, dims, pad, align, 0, fallback))
    if (channels == 1)
        return padding == IRGRID_PAD_BORDER ? IRGRID_STACKED_RUN(IRGRID_PAD_BORDER) : IRGRID_STACKED_RUN(IRGRID_PAD_ZEROS);
#undef IRGRID_STACKED_RUN
    IRGRID_PIXELS_PADDING(IRGRID_PAD_ZEROS)
    IRGRID_PIXELS_PADDING(IRGRID_PAD_BORDER)
    IRGRID_PIXELS_PADDING(IRGRID_PAD_REFLECTION)
#undef IRGRID_PIXELS_PADDING
#undef IRGRID_PIXELS_RUN
    return 0;  /* (no other padding reaches here: irgrid_grid_sample_plan checks) */
}

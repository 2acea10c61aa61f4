/* 2-D nearest of one to four f32 channels, any padding, 16 points a vector (a part of simd.h's
   16-lane f32 section, after simd_cubic_points.h, whose transposed 16-byte loads, irgrid_quads_f32x16, it
   shares). Why: with a few channels the gather path read each channel with a gather of its own, and on Zen 5 a channel's read
   (about 0.5 ns a point, a 16-lane gather or 16 scalar loads) costs twice the point's taps; there 2-D
   nearest of two channels took 1.1-1.2x OpenVINO's time (benchmarks/README.md, "Nearest of few channels
   by points").

   The pixels hold `pixel` floats (grid_sample.c's points_pixel):
   - 1: no scratch; each channel plane of X is read by one 16-lane masked gather (a dropped tap reads
     nothing) or 16 scalar loads, the taps computed once for every channel;
   - 2 and 4: the channels interleaved (irgrid_interleave_narrow_f32; lanes past the call's channels are
     zeros), then one zero pixel, which a dropped tap reads instead: 16 points' pixels are two 8-lane
     64-bit gathers or 16 64-bit loads (2), or 16 16-byte loads (4), transposed into one vector a channel.
   A point's tap is irgrid_dim_taps' (irgrid_nearest_tap: the gather and interleaved paths' arithmetic lane
   for lane), and nearest's output is that tap's value itself (or +0 where none is kept), so every path
   gives the same bits. */

/* Pixels [0, n) of planes x + c * x_cstride (c < channels <= pixel, pixel 2 or 4) into s as pixels of
   `pixel` floats: pixel i's channel c at s[i * pixel + c], the channels past `channels` zeros. */
static IRGRID_AVX512 void irgrid_interleave_narrow_f32(const float* x, irgrid_index channels, irgrid_index x_cstride,
                                                       irgrid_index n, int pixel, float* s) {
    const __m512i low = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i high = _mm512_add_epi32(low, _mm512_set1_epi32(8));
    __m512 r[4], u[4], t[4];
    irgrid_index i, c;
    for (i = 0; i + 16 <= n; i += 16) {
        for (c = 0; c < pixel; c++)
            r[c] = c < channels ? _mm512_loadu_ps(x + c * x_cstride + i) : _mm512_setzero_ps();
        if (pixel == 2) {
            _mm512_storeu_ps(s + 2 * i, _mm512_permutex2var_ps(r[0], low, r[1]));
            _mm512_storeu_ps(s + 2 * i + 16, _mm512_permutex2var_ps(r[0], high, r[1]));
            continue;
        }
        /* pixel i + 4L + k in lane L of t[k], then lane L of t[0..3] is pixels i + 4L .. i + 4L + 3 */
        irgrid_transpose_4x4_lanes(r, t);
        u[0] = _mm512_shuffle_f32x4(t[0], t[1], 0x44);  /* t0.L0 t0.L1 t1.L0 t1.L1 */
        u[1] = _mm512_shuffle_f32x4(t[2], t[3], 0x44);
        u[2] = _mm512_shuffle_f32x4(t[0], t[1], 0xEE);  /* t0.L2 t0.L3 t1.L2 t1.L3 */
        u[3] = _mm512_shuffle_f32x4(t[2], t[3], 0xEE);
        _mm512_storeu_ps(s + 4 * i, _mm512_shuffle_f32x4(u[0], u[1], 0x88));
        _mm512_storeu_ps(s + 4 * i + 16, _mm512_shuffle_f32x4(u[0], u[1], 0xDD));
        _mm512_storeu_ps(s + 4 * i + 32, _mm512_shuffle_f32x4(u[2], u[3], 0x88));
        _mm512_storeu_ps(s + 4 * i + 48, _mm512_shuffle_f32x4(u[2], u[3], 0xDD));
    }
    for (; i < n; i++)
        for (c = 0; c < pixel; c++)
            s[i * pixel + c] = c < channels ? x[c * x_cstride + i] : 0;
}

/* The tap index along one dim (of `length` L) of 16 lanes' normalised coordinates g (`last`: L - 1 in every
   lane), with the lanes that keep it (*kept) and those the vector arithmetic leaves to the scalar path
   (added to *bad): simd_taps.h's irgrid_dim_taps for nearest (irgrid_pair_coordinate: irgrid_pixel_coordinate's
   FMA coordinate and range checks; RINT; irgrid_pad) operation for operation, with zeros and border padding's
   masks in mask registers rather than vectors (the whole run took 0.90-0.93x the time of
   irgrid_lane_taps_f32x16's taps). Reflection takes irgrid_pad itself: an index reflected once, lanes that
   would need more folds to the scalar path. */
IRGRID_AVX512_INLINE __m512 irgrid_nearest_tap(__m512 g, float length, __m512 last, const irgrid_pair_dim* d,
                                               int padding, int align, __mmask16* kept, __mmask16* bad) {
    const __m512 zero = _mm512_setzero_ps();
    __m512 i = _mm512_roundscale_ps(irgrid_pair_coordinate(g, d, bad), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 ok, far = zero;
    if (padding == IRGRID_PAD_BORDER) {
        *kept = 0xFFFF;
        return _mm512_min_ps(_mm512_max_ps(i, zero), last);
    }
    if (padding == IRGRID_PAD_REFLECTION) {
        i = irgrid_pad_f32x16(i, length, IRGRID_PAD_REFLECTION, align, &ok, &far);
        *bad |= IRGRID_MASK16(far);
        *kept = 0xFFFF;
        return i;
    }
    *kept = (__mmask16)~(_mm512_cmp_ps_mask(i, zero, _CMP_LT_OQ) | _mm512_cmp_ps_mask(i, last, _CMP_GT_OQ));
    return i;
}

/* 16 floats s[at[k]] (k < 16) by scalar loads. */
IRGRID_AVX512_INLINE __m512 irgrid_loads16(const float* s, const int* at) {
    const __m256 lo = _mm256_setr_ps(s[at[0]], s[at[1]], s[at[2]], s[at[3]], s[at[4]], s[at[5]], s[at[6]], s[at[7]]);
    const __m256 hi = _mm256_setr_ps(s[at[8]], s[at[9]], s[at[10]], s[at[11]], s[at[12]], s[at[13]], s[at[14]],
                                     s[at[15]]);
    return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

/* irgrid_nearest_points_run_f32 with `pixel`, `padding` and `loads` as constants. */
IRGRID_AVX512_INLINE irgrid_index irgrid_nearest_points_body(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, int pixel, const irgrid_index* dims,
        int padding, int align, int loads, irgrid_index* fallback) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const __m512i zero_pixel = _mm512_set1_epi32((int)plane);
    const irgrid_index height = dims[0], width = dims[1];  /* (locals: the fallback stores may alias dims) */
    const irgrid_pair_dim dy = irgrid_pair_dim_of((double)height, align);
    const irgrid_pair_dim dx = irgrid_pair_dim_of((double)width, align);
    const __m512 y_last = _mm512_set1_ps((float)(height - 1)), x_last = _mm512_set1_ps((float)(width - 1));
    const __m512 pitch = _mm512_set1_ps((float)width);
    __m512 t[4], gk[2], ix, iy;
    __m512i idx;
    __mmask16 kept, store, kx, ky, bad;
    irgrid_index p, m, c, k, nf = 0;
    int at[16];
    float coords[3][16];
    for (p = 0; p < n; p += 16) {
        m = n - p < 16 ? n - p : 16;
        store = (__mmask16)((1u << m) - 1);
        bad = 0;
        irgrid_lane_coords_f32x16(g, p, m, 2, gk, coords);
        iy = irgrid_nearest_tap(gk[1], (float)height, y_last, &dy, padding, align, &ky, &bad);
        ix = irgrid_nearest_tap(gk[0], (float)width, x_last, &dx, padding, align, &kx, &bad);
        bad &= store;
        kept = kx & ky & (__mmask16)~bad;
        for (k = 0; bad; k++, bad >>= 1)
            if (bad & 1)
                fallback[nf++] = p + k;
        /* the pixel's index, exact in f32 for a kept lane (points_pixel: a plane of fewer than 2^21 pixels) */
        idx = _mm512_cvttps_epi32(_mm512_fmadd_ps(iy, pitch, ix));
        if (pixel == 1) {
            if (loads)  /* a dropped lane reads s[0] (a plane has one pixel or more) and is zeroed */
                _mm512_storeu_si512(at, _mm512_maskz_mov_epi32(kept, idx));
            for (c = 0; c < channels; c++)
                _mm512_mask_storeu_ps(
                    y + c * y_cstride + p, store,
                    loads ? _mm512_maskz_mov_ps(kept, irgrid_loads16(s + c * plane, at))
                          : _mm512_mask_i32gather_ps(_mm512_setzero_ps(), kept, idx, s + c * plane, 4));
            continue;
        }
        idx = _mm512_mask_blend_epi32(kept, zero_pixel, idx);
        if (pixel == 2) {
            __m512 lo, hi;
            if (loads) {
                _mm512_storeu_si512(at, _mm512_slli_epi32(idx, 1));
                lo = irgrid_pairs8(s, at);
                hi = irgrid_pairs8(s, at + 8);
            } else {
                lo = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_castsi512_si256(idx), (const double*)s, 8));
                hi = _mm512_castpd_ps(_mm512_i32gather_pd(_mm512_extracti32x8_epi32(idx, 1), (const double*)s, 8));
            }
            t[0] = _mm512_permutex2var_ps(lo, even, hi);
            t[1] = _mm512_permutex2var_ps(lo, odd, hi);
            t[2] = t[3] = _mm512_setzero_ps();  /* (never stored: channels <= 2) */
        } else {
            _mm512_storeu_si512(at, _mm512_slli_epi32(idx, 2));
            irgrid_quads_f32x16(s, at, 0, 0, t);  /* a pixel's 4 channels */
        }
        for (c = 0; c < channels; c++)
            _mm512_mask_storeu_ps(y + c * y_cstride + p, store, t[c]);
    }
    return nf;
}

/* 2-D nearest, any padding, of points [0, n) (coordinates g, n x 2, innermost first) into
   y + c * y_cstride (c < channels <= pixel): pixel 1 reads X's planes s + c * plane, 2 and 4
   irgrid_interleave_narrow_f32's scratch s of a plane of `plane` pixels and the zero pixel after it;
   pixels of one and two floats with gathers, or (`loads`: where this CPU runs those slower, grid_sample.c's
   reads_by_loads) with scalar loads, the same values. Returns the points left to the scalar path (in
   fallback). */
static IRGRID_AVX512 __attribute__((noinline)) irgrid_index irgrid_nearest_points_run_f32(const float* s,
        const float* g, float* y, irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index plane,
        int pixel, const irgrid_index* dims, int padding, int align, int loads, irgrid_index* fallback) {
#define IRGRID_NEAREST_RUN(px, pad, ld) irgrid_nearest_points_body(s, g, y, n, channels, y_cstride, plane, px, dims, \
                                                                   pad, align, ld, fallback)
#define IRGRID_NEAREST_PADDING(pad)                                                                 \
    if (pixel == 4)                                                                                 \
        return IRGRID_NEAREST_RUN(4, pad, 0);                                                       \
    if (pixel == 2)                                                                                 \
        return loads ? IRGRID_NEAREST_RUN(2, pad, 1) : IRGRID_NEAREST_RUN(2, pad, 0);               \
    return loads ? IRGRID_NEAREST_RUN(1, pad, 1) : IRGRID_NEAREST_RUN(1, pad, 0);
    if (padding == IRGRID_PAD_ZEROS) {
        IRGRID_NEAREST_PADDING(IRGRID_PAD_ZEROS)
    }
    if (padding == IRGRID_PAD_BORDER) {
        IRGRID_NEAREST_PADDING(IRGRID_PAD_BORDER)
    }
    IRGRID_NEAREST_PADDING(IRGRID_PAD_REFLECTION)
#undef IRGRID_NEAREST_PADDING
#undef IRGRID_NEAREST_RUN
}

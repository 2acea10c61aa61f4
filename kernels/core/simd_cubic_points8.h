/* Cubic of a few channels over pixels of one channel (simd_cubic_points.h), 8 points a vector: where a call
   runs no 512-bit code (a CPU without AVX-512, the process capped at AVX2, or a call of fewer than
   WIDE_MIN_POINTS points; grid_sample.c's cubic_points). Under the AVX2 cap on Zen 5 it took 0.40-0.88x the
   8-channel row run's time at one to three 2-D channels and 0.47-0.57x at one 3-D channel, and volumes
   whose 8-channel row scratch is past what a call may take, which went to the scalar path (21-49 ms on X
   1x1x32x128x128 to 1x1x64x128x128), 1.9-8.0 ms (benchmarks/README.md, "Cubic of few channels by 8
   points"). The 16-point run's operations lane for lane (irgrid_cubic_window_f32 gives the 16-lane taps and
   weights; simd_cubic_points_sum.h's sums), so the same bits. A part of simd.h's 8-lane f32 section
   (simd_body.h includes it there). */

/* Row r's 4 taps of 8 points (their first taps at s + first[k] + offset) as 4 vectors, tap j of point k in
   lane k of t[j]: 8 loads of 4 floats, 4 x 4 transposes within 128-bit lanes (point 4L + k's taps in lane L
   of register k). */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_row_taps)(const float* s, const int* first, irgrid_index offset, int broadcast,
                                                    __m256* t) {
    __m256 z[4];
    int k;
    (void)broadcast;  /* always inserts: by 128-bit broadcasts and blends 1.08x the time (Zen 5, random 3-D grid) */
    for (k = 0; k < 4; k++)
        z[k] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(s + first[k] + offset)),
                                    _mm_loadu_ps(s + first[k + 4] + offset), 1);
    {
        const __m256 u0 = _mm256_unpacklo_ps(z[0], z[1]), u1 = _mm256_unpackhi_ps(z[0], z[1]);
        const __m256 u2 = _mm256_unpacklo_ps(z[2], z[3]), u3 = _mm256_unpackhi_ps(z[2], z[3]);
        t[0] = _mm256_shuffle_ps(u0, u2, 0x44);
        t[1] = _mm256_shuffle_ps(u0, u2, 0xEE);
        t[2] = _mm256_shuffle_ps(u1, u3, 0x44);
        t[3] = _mm256_shuffle_ps(u1, u3, 0xEE);
    }
}

#include "simd_cubic_points_sum.h"

/* The taps of a block of 8 points (irgrid_cubic_points16's, 8 lanes): the lanes that keep a tap as a
   vector of all-ones lanes. */
typedef struct {
    int first[8];
    float wt[3][4][8];
    __m256 kept;
    irgrid_index m;
} irgrid_cubic_points8;

/* Blocks of 8 points whose taps are computed before any is read: 128 points, as the 16-point run's. */
#define IRGRID_CUBIC_POINTS8_BLOCKS 16

/* irgrid_cubic_points8_run_f32x1 with `mirror` (reflection padding) a constant. */
IRGRID_AVX2_INLINE irgrid_index irgrid_cubic_points8_body_f32x1(const float* s, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims,
        int padding, int align, const int mirror, irgrid_index* fallback) {
    const int replicate = padding == IRGRID_PAD_BORDER;
    const irgrid_cubic_layout at = irgrid_cubic_layout_of(R, dims, padding != IRGRID_PAD_ZEROS);
    const __m256i no_taps = _mm256_set1_epi32(at.no_taps);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    irgrid_cubic_points8 q[IRGRID_CUBIC_POINTS8_BLOCKS];
    int rows[IRGRID_CUBIC_POINTS8_BLOCKS][16][8];  /* reflection's (irgrid_cubic_mirror_window) */
    __m256 reversed[IRGRID_CUBIC_POINTS8_BLOCKS], acc;
    irgrid_index p0, p, c, nf = 0;
    float* out;
    int i, blocks;
    for (p0 = 0; p0 < n; p0 += 8 * IRGRID_CUBIC_POINTS8_BLOCKS) {
        for (i = 0, p = p0; i < IRGRID_CUBIC_POINTS8_BLOCKS && p < n; i++, p += 8) {
            q[i].m = n - p < 8 ? n - p : 8;
            if (mirror) {
                irgrid_cubic_mirror_window_f32(g, p, q[i].m, (int)R, dims, at.pitches, align, rows[i], q[i].wt,
                                               &reversed[i], fallback, &nf);
                q[i].kept = _mm256_castsi256_ps(_mm256_cmpeq_epi32(lanes, lanes));
                continue;
            }
            irgrid_cubic_window_f32(g, p, q[i].m, (int)R, dims, at.pitches, align, replicate, 1, q[i].first, q[i].wt,
                                    fallback, &nf);
            q[i].kept = _mm256_castsi256_ps(replicate ? _mm256_cmpeq_epi32(lanes, lanes) : _mm256_xor_si256(
                _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i*)q[i].first), no_taps),
                _mm256_cmpeq_epi32(lanes, lanes)));
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++) {
                acc = SFX(irgrid_cubic_rows_sum)(s + c * at.size, q[i].first,
                                                 mirror ? (const int (*)[8])rows[i] : NULL, at.pitch,
                                                 at.plane, (const float (*)[4][8])q[i].wt, R,
                                                 mirror && _mm256_movemask_ps(reversed[i]),
                                                 mirror ? reversed[i] : _mm256_setzero_ps(), 0);
                acc = _mm256_and_ps(acc, q[i].kept);  /* a point without taps is +0, as the row runs leave it */
                out = y + c * y_cstride + p0 + 8 * i;
                if (q[i].m == 8)
                    _mm256_storeu_ps(out, acc);
                else
                    _mm256_maskstore_ps(out, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)q[i].m), lanes), acc);
            }
    }
    return nf;
}

/* irgrid_cubic_points_run_f32x1, 8 points a vector. */
static IRGRID_AVX2 irgrid_index irgrid_cubic_points8_run_f32x1(const float* s, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims,
        int padding, int align, irgrid_index* fallback) {
    if (padding == IRGRID_PAD_REFLECTION)
        return irgrid_cubic_points8_body_f32x1(s, g, y, n, channels, y_cstride, R, dims, padding, align, 1, fallback);
    return irgrid_cubic_points8_body_f32x1(s, g, y, n, channels, y_cstride, R, dims, padding, align, 0, fallback);
}

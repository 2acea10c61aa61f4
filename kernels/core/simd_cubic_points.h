/* 2-D and 3-D cubic of a few channels over pixels of one channel, 16 points a vector (a part of simd.h's
   16-lane f32 section, after simd_cubic.h, whose irgrid_cubic_window_f32x16 it calls). Why: the row runs put
   a group's channels in a pixel's lanes, so one channel fills one lane in 8 and every point costs 16 (2-D) or
   80 (3-D) FMAs of 8 lanes for one output; with one to three channels the gather path (a gather a tap and
   channel) took longer still, 1.7x OpenVINO's time at one 2-D channel. Here a point's row of 4 taps is one
   16-byte load, and 16 points' loads are transposed into the row's 4 tap vectors (benchmarks/README.md,
   "Cubic of few channels by points").

   The scratch is the row runs' layout with one float a pixel: per channel, in 3-D (irgrid_interleave_rows) D
   planes of H rows of W pixels, each row after 3 zeros, each plane after 3 zero rows, the planes after 3 zero
   planes and before 4; in 2-D one such plane, its rows before 4 zero rows. A point's taps then lie at
   constant strides from its first (irgrid_cubic_window), a dropped tap reads the padding's zeros. Border
   and reflection padding copy the pixels they map the 3 past each edge to instead
   (irgrid_mirror_padded_f32x1); reflection's taps past those lie in reverse order inside the dim
   (irgrid_cubic_mirror_window), read backwards. The taps, weights and sums are
   irgrid_cubic_run's (a row's 4 taps with the x weights, MUL then FMAs, the 4 rows with the y weights, in 3-D
   the 4 planes with the z weights), lane for lane, so the bits are the row runs' at 8 and 16 channels. A
   whole volume's scratch (a few hundred KiB a channel where the plan takes this run) stays in L2, so it is
   copied at once; a scattered grid's points are binned by coarse tiles (grid_sample.c's points_bins_pay),
   so that neighbouring points' rows hit L1. The layouts: simd_cubic_layout.h (simd_cubic_points8.h's
   8-point run reads them too). */

/* Four 4 x 4 transposes, one a 128-bit lane: lane L of t[j] holds element j of lane L of z[0], z[1], z[2] and
   z[3] (four floats each). */
IRGRID_AVX512_INLINE void irgrid_transpose_4x4_lanes(const __m512* z, __m512* t) {
    const __m512 u0 = _mm512_unpacklo_ps(z[0], z[1]), u1 = _mm512_unpackhi_ps(z[0], z[1]);
    const __m512 u2 = _mm512_unpacklo_ps(z[2], z[3]), u3 = _mm512_unpackhi_ps(z[2], z[3]);
    t[0] = _mm512_shuffle_ps(u0, u2, 0x44);
    t[1] = _mm512_shuffle_ps(u0, u2, 0xEE);
    t[2] = _mm512_shuffle_ps(u1, u3, 0x44);
    t[3] = _mm512_shuffle_ps(u1, u3, 0xEE);
}

/* 16 points' 4 floats at s + first[k] + offset as 4 vectors, float j of point k in lane k of t[j]: 16 loads
   of 4 floats, 4 x 4 transposes within 128-bit lanes (point 4L + k's floats in lane L of register k, so that
   the transposes leave points in order). The loads go into place by masked broadcasts (`broadcast`: a
   load and a blend each) or by inserts (a load and a shuffle each). On Zen 5 cubic's runs took 0.83-0.85x
   the time by broadcasts on a random 3-D grid of one channel and 0.87-0.93x on random 2-D grids of two
   and three (their loads, which miss L1 there, no longer wait for the shuffle unit that the transposes
   keep busy; smooth grids 0.99-1.01x), 2-D nearest's 4-channel pixels 1.02-1.04x (benchmarks/README.md,
   "Cubic's row loads by broadcasts"); on Zen 4 cubic's runs took 0.94-0.96x the time by inserts (cpu.h's
   irgrid_cpu_row_broadcasts). */
IRGRID_AVX512_INLINE void irgrid_quads_f32x16(const float* s, const int* first, irgrid_index offset, int broadcast,
                                              __m512* t) {
    __m512 z[4];
    int k;
    for (k = 0; k < 4; k++)
        if (broadcast) {
            z[k] = _mm512_broadcast_f32x4(_mm_loadu_ps(s + first[k] + offset));
            z[k] = _mm512_mask_broadcast_f32x4(z[k], 0x00F0, _mm_loadu_ps(s + first[k + 4] + offset));
            z[k] = _mm512_mask_broadcast_f32x4(z[k], 0x0F00, _mm_loadu_ps(s + first[k + 8] + offset));
            z[k] = _mm512_mask_broadcast_f32x4(z[k], 0xF000, _mm_loadu_ps(s + first[k + 12] + offset));
        } else {
            z[k] = _mm512_castps128_ps512(_mm_loadu_ps(s + first[k] + offset));
            z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 4] + offset), 1);
            z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 8] + offset), 2);
            z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 12] + offset), 3);
        }
    irgrid_transpose_4x4_lanes(z, t);
}

/* Row r's 4 taps of 16 points (their first taps at s + first[k] + offset) as 4 vectors, tap j of point k in
   lane k of t[j], their loads put in place by masked broadcasts (`broadcast`) or by inserts
   (irgrid_quads_f32x16; cpu.h's irgrid_cpu_row_broadcasts chooses). */
IRGRID_AVX512_INLINE void SFX(irgrid_cubic_row_taps)(const float* s, const int* first, irgrid_index offset, int broadcast,
                                                     __m512* t) {
    irgrid_quads_f32x16(s, first, offset, broadcast, t);
}

#include "simd_cubic_points_sum.h"

/* The taps of a block of 16 points: each one's first tap (a float index into a channel's scratch), the
   weights per dim (outermost first), the lanes that keep a tap and those stored. */
typedef struct {
    int first[16];
    float wt[3][4][16];
    __mmask16 kept, store;
} irgrid_cubic_points16;

/* Blocks of 16 points whose taps are computed before any is read, as the pair runs batch theirs (cpu.h's
   irgrid_cpu_batch_blocks: 4 or 8); the arrays hold the most. The batch only orders taps and reads: the
   same bits. */
#define IRGRID_CUBIC_POINTS_BLOCKS 8

/* irgrid_cubic_points_run_f32x1 with `mirror` (reflection padding) and `broadcast` (the row loads') constants. */
IRGRID_AVX512_INLINE irgrid_index irgrid_cubic_points_body_f32x1(const float* s, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims,
        int padding, int align, const int mirror, const int broadcast, irgrid_index* fallback) {
    const int replicate = padding == IRGRID_PAD_BORDER;
    const irgrid_cubic_layout at = irgrid_cubic_layout_of(R, dims, padding != IRGRID_PAD_ZEROS);
    const __m512i no_taps = _mm512_set1_epi32(at.no_taps);
    irgrid_cubic_points16 q[IRGRID_CUBIC_POINTS_BLOCKS];
    int rows[IRGRID_CUBIC_POINTS_BLOCKS][16][16];  /* reflection's (irgrid_cubic_mirror_window) */
    __m512 reversed[IRGRID_CUBIC_POINTS_BLOCKS];
    irgrid_index p0, p, m, c, nf = 0;
    __m512 acc;
    __m512i first;
    int i, blocks;
    const int batch = irgrid_cpu_batch_blocks();
    for (p0 = 0; p0 < n; p0 += 16 * batch) {
        for (i = 0, p = p0; i < batch && p < n; i++, p += 16) {
            m = n - p < 16 ? n - p : 16;
            q[i].store = (__mmask16)((1u << m) - 1);
            if (mirror) {
                irgrid_cubic_mirror_window_f32x16(g, p, m, (int)R, dims, at.pitches, align, rows[i], q[i].wt,
                                                  &reversed[i], fallback, &nf);
                q[i].kept = (__mmask16)0xFFFF;
                continue;
            }
            irgrid_cubic_window_f32x16(g, p, m, (int)R, dims, at.pitches, align, replicate, 1, q[i].first, q[i].wt,
                                       fallback, &nf);
            first = _mm512_loadu_si512(q[i].first);
            q[i].kept = replicate ? (__mmask16)0xFFFF : _mm512_cmpneq_epi32_mask(first, no_taps);
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++) {
                acc = SFX(irgrid_cubic_rows_sum)(s + c * at.size, q[i].first,
                                                 mirror ? (const int (*)[16])rows[i] : NULL, at.pitch,
                                                 at.plane, (const float (*)[4][16])q[i].wt, R,
                                                 mirror && _mm512_movepi32_mask(_mm512_castps_si512(reversed[i])),
                                                 mirror ? reversed[i] : _mm512_setzero_ps(), broadcast);
                /* a point without taps is +0, as the row runs leave it */
                _mm512_mask_storeu_ps(y + c * y_cstride + p0 + 16 * i, q[i].store, _mm512_maskz_mov_ps(q[i].kept, acc));
            }
    }
    return nf;
}

/* Cubic (rank R, 2 or 3) of points [0, n) over irgrid_interleave_padded_f32x1's scratch (zeros padding) or
   irgrid_mirror_padded_f32x1's (border and reflection) of `channels` channels into y + c * y_cstride; returns
   the points left to the scalar path (in fallback). A block's taps are computed once for every channel. */
static IRGRID_AVX512 irgrid_index irgrid_cubic_points_run_f32x1(const float* s, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims,
        int padding, int align, irgrid_index* fallback) {
#define IRGRID_CUBIC_POINTS_BODY(mirror, broadcast) \
    irgrid_cubic_points_body_f32x1(s, g, y, n, channels, y_cstride, R, dims, padding, align, mirror, broadcast, fallback)
    if (irgrid_cpu_row_broadcasts())
        return padding == IRGRID_PAD_REFLECTION ? IRGRID_CUBIC_POINTS_BODY(1, 1) : IRGRID_CUBIC_POINTS_BODY(0, 1);
    return padding == IRGRID_PAD_REFLECTION ? IRGRID_CUBIC_POINTS_BODY(1, 0) : IRGRID_CUBIC_POINTS_BODY(0, 0);
#undef IRGRID_CUBIC_POINTS_BODY
}

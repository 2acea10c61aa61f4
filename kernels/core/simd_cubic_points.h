/* 2-D cubic of a few channels, one channel at a time over pixels of one channel, 16 points a vector (a
   part of simd.h's 16-lane f32 section, after simd_cubic.h, whose irgrid_cubic_window_f32x16 it
   calls). Why: the row runs put a group's channels in a pixel's lanes, so one channel fills one lane in
   8 and every point costs 16 FMAs of 8 lanes; with one to three channels the gather path (16 gathers a
   point and channel) took longer still, 1.7x OpenVINO's time at one channel. Here a point's row of 4
   taps is one 16-byte load, and 16 points' loads are transposed into the 4 tap vectors of each row
   (benchmarks/README.md, "2-D bicubic of few channels by points").

   The scratch is irgrid_interleave_plane2d's layout with one float a pixel (its H rows of W pixels,
   each after 3 zeros, after 3 zero rows and before 4), zeros padding only: a point's 16 taps then lie
   at constant strides from its first (irgrid_cubic_window), a dropped tap reads the padding's zeros. The
   taps, weights and sums are irgrid_cubic_run's (a row's 4 taps with the x weights, MUL then FMAs, the
   4 rows with the y weights), lane for lane, so the bits are the row runs' at 8 and 16 channels. */

/* Planes x + c * x_cstride (c < channels; dims H, W) into s as described above, plane c at
   s + c * (H + 7) * (W + 3). */
static IRGRID_AVX512 void irgrid_interleave_plane2d_f32x1(const float* x, irgrid_index channels, irgrid_index x_cstride,
                                                          const irgrid_index* dims, float* s) {
    const irgrid_index width = dims[1], pitch = width + 3, size = (dims[0] + 7) * pitch;
    irgrid_index c, r;
    for (c = 0; c < channels; c++, x += x_cstride, s += size) {
        memset(s, 0, (size_t)(3 * pitch + 3) * sizeof(float));
        for (r = 0; r < dims[0]; r++) {
            memcpy(s + (r + 3) * pitch + 3, x + r * width, (size_t)width * sizeof(float));
            memset(s + (r + 4) * pitch, 0, 3 * sizeof(float));  /* the next row's leading zeros */
        }
        memset(s + (dims[0] + 3) * pitch, 0, (size_t)(4 * pitch) * sizeof(float));
    }
}

/* Row r's 4 taps of 16 points (their first taps at s + first[k] + r * pitch) as 4 vectors, tap j of
   point k in lane k of t[j]: 16 loads of 4 floats, 4 x 4 transposes within 128-bit lanes (point 4L + k's
   taps in lane L of register k, so that the transposes leave points in order). */
IRGRID_AVX512_INLINE void irgrid_cubic_row_taps(const float* s, const int* first, irgrid_index offset, __m512* t) {
    __m512 z[4], u[4];
    int k;
    for (k = 0; k < 4; k++) {
        z[k] = _mm512_castps128_ps512(_mm_loadu_ps(s + first[k] + offset));
        z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 4] + offset), 1);
        z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 8] + offset), 2);
        z[k] = _mm512_insertf32x4(z[k], _mm_loadu_ps(s + first[k + 12] + offset), 3);
    }
    u[0] = _mm512_unpacklo_ps(z[0], z[1]);
    u[1] = _mm512_unpackhi_ps(z[0], z[1]);
    u[2] = _mm512_unpacklo_ps(z[2], z[3]);
    u[3] = _mm512_unpackhi_ps(z[2], z[3]);
    t[0] = _mm512_shuffle_ps(u[0], u[2], 0x44);
    t[1] = _mm512_shuffle_ps(u[0], u[2], 0xEE);
    t[2] = _mm512_shuffle_ps(u[1], u[3], 0x44);
    t[3] = _mm512_shuffle_ps(u[1], u[3], 0xEE);
}

/* The taps of a block of 16 points: each one's first tap (a float index into a plane of the scratch),
   the x and y weights, the lanes that keep a tap and those stored. */
typedef struct {
    int first[16];
    float wt[3][4][16];
    __mmask16 kept, store;
} irgrid_cubic_points16;

/* Blocks of 16 points whose taps are computed before any is read (as the pair runs batch theirs). */
#define IRGRID_CUBIC_POINTS_BLOCKS 8

/* 2-D cubic, zeros padding, of points [0, n) over irgrid_interleave_plane2d_f32x1's scratch of
   `channels` planes (dims H, W) into y + c * y_cstride; returns the points left to the scalar path
   (in fallback). A block's taps are computed once for every channel. */
static IRGRID_AVX512 irgrid_index irgrid_cubic2d_run_f32x1(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, const irgrid_index* dims, int padding, int align,
        irgrid_index* fallback) {
    const irgrid_index pitch = dims[1] + 3, pitches[3] = {pitch, 1, 1}, size = (dims[0] + 7) * pitch;
    /* irgrid_cubic_window's offsets are in bytes of 64-byte pixels (PIXEL_OFFSET); here a pixel is a float */
    const __m512i no_taps = _mm512_set1_epi32((int)((dims[0] + 3) * pitch * 64));
    irgrid_cubic_points16 q[IRGRID_CUBIC_POINTS_BLOCKS];
    __m512 wx[4], wy[4], t[4], row, acc;
    __m512i first;
    irgrid_index p0, p, m, c, nf = 0;
    int i, j, r, blocks;
    (void)padding;
    for (p0 = 0; p0 < n; p0 += 16 * IRGRID_CUBIC_POINTS_BLOCKS) {
        for (i = 0, p = p0; i < IRGRID_CUBIC_POINTS_BLOCKS && p < n; i++, p += 16) {
            m = n - p < 16 ? n - p : 16;
            irgrid_cubic_window_f32x16(g, p, m, 2, dims, pitches, align, q[i].first, q[i].wt, fallback, &nf);
            first = _mm512_loadu_si512(q[i].first);
            q[i].kept = _mm512_cmpneq_epi32_mask(first, no_taps);
            q[i].store = (__mmask16)((1u << m) - 1);
            _mm512_storeu_si512(q[i].first, _mm512_srli_epi32(first, 6));
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++) {
                for (j = 0; j < 4; j++) {
                    wy[j] = _mm512_loadu_ps(q[i].wt[0][j]);
                    wx[j] = _mm512_loadu_ps(q[i].wt[1][j]);
                }
                acc = _mm512_setzero_ps();
                for (r = 0; r < 4; r++) {
                    irgrid_cubic_row_taps(s + c * size, q[i].first, r * pitch, t);
                    row = _mm512_mul_ps(wx[0], t[0]);
                    row = _mm512_fmadd_ps(wx[1], t[1], row);
                    row = _mm512_fmadd_ps(wx[2], t[2], row);
                    row = _mm512_fmadd_ps(wx[3], t[3], row);
                    acc = r ? _mm512_fmadd_ps(wy[r], row, acc) : _mm512_mul_ps(wy[0], row);
                }
                /* a point without taps is +0, as the row runs leave it */
                _mm512_mask_storeu_ps(y + c * y_cstride + p0 + 16 * i, q[i].store, _mm512_maskz_mov_ps(q[i].kept, acc));
            }
    }
    return nf;
}

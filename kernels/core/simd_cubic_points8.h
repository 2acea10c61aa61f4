/* Cubic of a few channels over pixels of one channel (simd_cubic_points.h), 8 points a vector: where a call
   runs no 512-bit code (a CPU without AVX-512, the process capped at AVX2, or a call of fewer than
   WIDE_MIN_POINTS points; grid_sample.c's cubic_points). Under the AVX2 cap on Zen 5 it took 0.40-0.88x the
   8-channel row run's time at one to three 2-D channels and 0.47-0.57x at one 3-D channel, and volumes
   whose 8-channel row scratch is past what a call may take, which went to the scalar path (21-49 ms on X
   1x1x32x128x128 to 1x1x64x128x128), 1.9-8.0 ms (benchmarks/README.md, "Cubic of few channels by 8
   points"). The 16-point run's operations lane for lane (irgrid_cubic_window_f32 gives the 16-lane taps and
   weights), so the same bits. A part of simd.h's 8-lane f32 section, after simd_body.h; also the scratch
   layouts both runs read. */

/* Planes x + c * x_cstride (c < channels; rank 2 or 3, dims outermost first) into s as simd_cubic_points.h
   describes,
   channel c at s + c * row_pixels (grid_sample.c's: (H + 7) * (W + 3), or (D + 7) * (H + 3) * (W + 3)). */
static IRGRID_AVX2 void irgrid_interleave_padded_f32x1(const float* x, irgrid_index channels, irgrid_index x_cstride,
                                                         irgrid_index rank, const irgrid_index* dims, float* s) {
    const irgrid_index depth = rank == 3 ? dims[0] : 1, height = dims[rank - 2], width = dims[rank - 1];
    const irgrid_index pitch = width + 3, plane = (height + 3) * pitch;
    const irgrid_index lead = rank == 3 ? 3 * plane : 0, size = rank == 3 ? (depth + 7) * plane : (height + 7) * pitch;
    irgrid_index c, z, r;
    float* t;
    for (c = 0; c < channels; c++, x += x_cstride, s += size) {
        memset(s, 0, (size_t)lead * sizeof(float));
        for (z = 0; z < depth; z++) {
            t = s + lead + z * plane;  /* 3 zero rows, then the rows, each after 3 zeros */
            memset(t, 0, (size_t)(3 * pitch) * sizeof(float));
            for (r = 0; r < height; r++) {
                memset(t + (r + 3) * pitch, 0, 3 * sizeof(float));
                memcpy(t + (r + 3) * pitch + 3, x + (z * height + r) * width, (size_t)width * sizeof(float));
            }
        }
        t = s + lead + depth * plane;  /* 2-D: the 4 zero rows; 3-D: the 4 zero planes */
        memset(t, 0, (size_t)(size - lead - depth * plane) * sizeof(float));
    }
}

/* Border padding's layout: every dim's edge pixel 3 times on each side (a row: x[0] 3 times, the W
   pixels, x[W - 1] 3 times; then the rows, and the planes, likewise), (H + 6) * (W + 6) or
   (D + 6) * (H + 6) * (W + 6) floats a channel (grid_sample.c's replicate_pixels). A point's taps are
   floor - 1 .. floor + 2, each clamped to the dim; with floor clamped to [-2, L] (beyond, all four taps
   are the edge pixel) they read those values at constant strides from the first. */
static IRGRID_AVX2 void irgrid_replicate_padded_f32x1(const float* x, irgrid_index channels, irgrid_index x_cstride,
                                                        irgrid_index rank, const irgrid_index* dims, float* s) {
    const irgrid_index depth = rank == 3 ? dims[0] : 1, height = dims[rank - 2], width = dims[rank - 1];
    const irgrid_index pitch = width + 6, plane = (height + 6) * pitch;
    const irgrid_index size = rank == 3 ? (depth + 6) * plane : plane;
    irgrid_index c, z, r, k;
    float *t, *row;
    for (c = 0; c < channels; c++, x += x_cstride, s += size) {
        t = rank == 3 ? s + 3 * plane : s;  /* the volume's first plane */
        for (z = 0; z < depth; z++, t += plane) {
            for (r = 0; r < height; r++) {
                const float* in = x + (z * height + r) * width;
                row = t + (r + 3) * pitch;
                memcpy(row + 3, in, (size_t)width * sizeof(float));
                for (k = 0; k < 3; k++) {
                    row[k] = in[0];
                    row[width + 3 + k] = in[width - 1];
                }
            }
            for (k = 0; k < 3; k++) {
                memcpy(t + k * pitch, t + 3 * pitch, (size_t)pitch * sizeof(float));
                memcpy(t + (height + 3 + k) * pitch, t + (height + 2) * pitch, (size_t)pitch * sizeof(float));
            }
        }
        for (k = 0; rank == 3 && k < 3; k++) {
            memcpy(s + k * plane, s + 3 * plane, (size_t)plane * sizeof(float));
            memcpy(s + (depth + 3 + k) * plane, s + (depth + 2) * plane, (size_t)plane * sizeof(float));
        }
    }
}

/* Row r's 4 taps of 8 points (their first taps at s + first[k] + offset) as 4 vectors, tap j of point k in
   lane k of t[j]: 8 loads of 4 floats, 4 x 4 transposes within 128-bit lanes (point 4L + k's taps in lane L
   of register k). */
IRGRID_AVX2_INLINE void irgrid_cubic_row_taps8(const float* s, const int* first, irgrid_index offset, __m256* t) {
    __m256 z[4];
    int k;
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

/* One plane's 4 rows of 8 points, summed as irgrid_cubic_plane_taps sums 16. */
IRGRID_AVX2_INLINE __m256 irgrid_cubic_plane_taps8(const float* s, const int* first, irgrid_index offset,
                                                   irgrid_index pitch, const __m256* wy, const __m256* wx) {
    __m256 t[4], row, acc = _mm256_setzero_ps();
    int r;
    for (r = 0; r < 4; r++) {
        irgrid_cubic_row_taps8(s, first, offset + r * pitch, t);
        row = _mm256_mul_ps(wx[0], t[0]);
        row = _mm256_fmadd_ps(wx[1], t[1], row);
        row = _mm256_fmadd_ps(wx[2], t[2], row);
        row = _mm256_fmadd_ps(wx[3], t[3], row);
        acc = r ? _mm256_fmadd_ps(wy[r], row, acc) : _mm256_mul_ps(wy[0], row);
    }
    return acc;
}

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

/* irgrid_cubic_points_run_f32x1, 8 points a vector. */
static IRGRID_AVX2 irgrid_index irgrid_cubic_points8_run_f32x1(const float* s, const float* g, float* y,
        irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims,
        int padding, int align, irgrid_index* fallback) {
    const int replicate = padding == IRGRID_PAD_BORDER, pad = replicate ? 6 : 3;  /* pixels around a row */
    const irgrid_index pitch = dims[R - 1] + pad, plane = R == 3 ? (dims[1] + pad) * pitch : pitch;
    const irgrid_index pitches[3] = {plane, R == 3 ? pitch : 1, 1};
    const irgrid_index size = (dims[0] + (replicate ? 6 : 7)) * plane;  /* a channel's scratch */
    const __m256i no_taps = _mm256_set1_epi32((int)((dims[0] + 3) * plane));  /* irgrid_cubic_window's */
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    irgrid_cubic_points8 q[IRGRID_CUBIC_POINTS8_BLOCKS];
    __m256 wx[4], wy[4], acc;
    irgrid_index p0, p, c, nf = 0;
    float* out;
    int i, j, blocks;
    for (p0 = 0; p0 < n; p0 += 8 * IRGRID_CUBIC_POINTS8_BLOCKS) {
        for (i = 0, p = p0; i < IRGRID_CUBIC_POINTS8_BLOCKS && p < n; i++, p += 8) {
            q[i].m = n - p < 8 ? n - p : 8;
            irgrid_cubic_window_f32(g, p, q[i].m, (int)R, dims, pitches, align, replicate, 1, q[i].first, q[i].wt,
                                    fallback, &nf);
            q[i].kept = _mm256_castsi256_ps(replicate ? _mm256_cmpeq_epi32(lanes, lanes) : _mm256_xor_si256(
                _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i*)q[i].first), no_taps),
                _mm256_cmpeq_epi32(lanes, lanes)));
        }
        blocks = i;
        for (c = 0; c < channels; c++)
            for (i = 0; i < blocks; i++) {
                for (j = 0; j < 4; j++) {
                    wy[j] = _mm256_loadu_ps(q[i].wt[R - 2][j]);
                    wx[j] = _mm256_loadu_ps(q[i].wt[R - 1][j]);
                }
                if (R == 2) {
                    acc = irgrid_cubic_plane_taps8(s + c * size, q[i].first, 0, pitch, wy, wx);
                } else {
                    acc = _mm256_mul_ps(_mm256_loadu_ps(q[i].wt[0][0]),
                                        irgrid_cubic_plane_taps8(s + c * size, q[i].first, 0, pitch, wy, wx));
                    for (j = 1; j < 4; j++)
                        acc = _mm256_fmadd_ps(
                            _mm256_loadu_ps(q[i].wt[0][j]),
                            irgrid_cubic_plane_taps8(s + c * size, q[i].first, j * plane, pitch, wy, wx), acc);
                }
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

/* In-register transposes for the AVX2 kernels (GridSample's interleaved path, DeformConv's
   transpose): r[i][j] <-> r[j][i] for 8 x 8 f32 and 4 x 4 f64. Included by simd.h and
   deform_columns.pyx, on x86-64 with GCC or Clang only. */
#ifndef IRGRID_SIMD_TRANSPOSE_H
#define IRGRID_SIMD_TRANSPOSE_H
#include <immintrin.h>
#ifndef IRGRID_AVX2_INLINE
#define IRGRID_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
#endif

IRGRID_AVX2_INLINE void irgrid_transpose_ps(__m256* r) {
    __m256 t[8], u[8];
    int i;
    for (i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (i = 0; i < 2; i++) {
        u[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (i = 0; i < 4; i++) {
        r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

IRGRID_AVX2_INLINE void irgrid_transpose_pd(__m256d* r) {
    __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#endif

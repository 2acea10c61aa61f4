/* AVX2+FMA GridSample for 2-D and 3-D data: 8 (f32) or 4 (f64) consecutive output points at a time.

   irgrid_simd_sample_{f32,f64} computes outputs of points [0, n) for `channels` channel planes: each
   group of lanes' taps (int32 plane indices, weights, validity masks) is computed once in registers
   from the normalised coordinates, IRGRID_SIMD_GROUPS groups into an L1 buffer, then every channel
   reads them: masked gathers (a masked-off lane is never read: zeros padding drops a tap without
   touching memory), or, where this CPU runs those slower, scalar loads (a masked-off lane reads the
   plane's first element instead and its value is masked away bit for bit), so an Inf elsewhere in X
   cannot leak into a dropped tap either way; summed tap by tap in the scalar path's tap order
   (outermost dim major) with FMA. A 2-D call of one or two channels runs group by group instead, each
   group's reads right after its taps (irgrid_fused); on AVX-512 CPUs the f32 taps of 2-D calls are
   computed 16 lanes at a time (irgrid_lane_taps_f32x16), the same operations lane for lane.
   Lanes the vector arithmetic does not cover (NaN or |g| >= 1e30 coordinates, |x| > 2**22 pixels
   after denormalising, reflection beyond one period) read nothing; their indices are returned in
   `fallback` for the caller's scalar path. The per-point arithmetic depends only on that point's
   coordinates, so results do not depend on the blocking or the thread count.
   Semantics follow interpolation.h's irgrid_scalar_dim_taps operation for operation (the same denormalisation,
   border clamp, reflection and Keys weights); only the final sum differs (FMA).
   Callers check irgrid_cpu_avx2() (AVX2 and FMA at run time) and
   irgrid_simd_fits(); elsewhere these functions are stubs that are never called. */
#ifndef IRGRID_SIMD_H
#define IRGRID_SIMD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "guards.h"
#include "interpolation.h"

/* Groups of lanes whose taps are prepared together, then applied channel by channel. */
#ifndef IRGRID_SIMD_GROUPS
#define IRGRID_SIMD_GROUPS 32
#endif

/* The gather path samples up to this many channels of a 2-D f32 call of at least a block of points group
   by group, right after each group's taps (irgrid_fused), rather than a block of groups channel by
   channel: the taps stay in registers. Not in 3-D, nor for small calls (one item of RAFT's lookups, 81
   points), whose reads miss the caches and gain from the block's prefetched rows
   (benchmarks/README.md, "On an Intel Xeon host"). */
#ifndef IRGRID_FUSED_CHANNELS
#define IRGRID_FUSED_CHANNELS 2
#endif
/* The most channels bilinear and trilinear read by pairs (simd_gather_path.h, irgrid_pairs_wide_f32):
   below the interleaved path's channel count (grid_sample.c's INTERLEAVE_MIN_CHANNELS_F32). */
#ifndef IRGRID_PAIRS_CHANNELS
#define IRGRID_PAIRS_CHANNELS 4
#endif

/* 3-D cubic (irgrid_cubic3d_run, irgrid_unbin) and the 16-channel interleaved run stream a channel
   group's output past the caches from this many bytes on (a core's L2): an output that large has left
   them before anything reads it, and a regular store first reads each line it writes (benchmarks/README.md,
   "Streaming tricubic's output") */
#define IRGRID_STREAM_MIN_BYTES (1 << 20)

/* On a grid the plan judges scattered (grid_sample.c's stream_output), the 8-channel interleaved run of
   linear (two blocks a line) and 2-D cubic's row runs stream a group's output from this many bytes on:
   below it, a benchmark's repeated calls find their output in L3, and streamed the 8-channel run took
   1.07-1.10x the time (X 1x8x256x256, 2 MiB a group); from 4 MiB it took 0.75-0.97x on random grids,
   2-D bicubic of 32 channels 0.85-0.88x (benchmarks/README.md, "Zen 4: large outputs of 8-channel pixels
   streamed"). The native fuzz targets lower it (tests/fuzz/native/build_targets.py), so that their small
   problems reach those runs. */
#ifndef IRGRID_STREAM_SCATTERED_MIN_BYTES
#define IRGRID_STREAM_SCATTERED_MIN_BYTES (4 << 20)
#endif

/* Whether a planar output y (its channel planes y_cstride items of type T apart) is streamed: its
   planes start on 64-byte lines and together reach min_bytes. */
#define IRGRID_STREAMS_FROM(y, y_cstride, channels, T, min_bytes)                                       \
    (((uintptr_t)(y) & 63) == 0 && (((y_cstride) * (irgrid_index)sizeof(T)) & 63) == 0                   \
     && (channels) * (y_cstride) * (irgrid_index)sizeof(T) >= (min_bytes))
#define IRGRID_STREAMS(y, y_cstride, channels, T) IRGRID_STREAMS_FROM(y, y_cstride, channels, T, IRGRID_STREAM_MIN_BYTES)

/* An interleaved run's block of outputs, transposed (acc[c]: channel c of the block's points), into
   the planar y: channel c's points [p, p + m) at y + c * y_cstride + p, masked where m < LANES
   (`lanes` holding 0, 1, ... LANES - 1). A macro, so that every run has its own copy of the code:
   one inline helper for the runs, taking acc by pointer, made every random-grid case 1.07-1.6x
   slower (2 threads, alternating processes). Uses the including body's vector macros. */
#define IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c)                   \
    do {                                                                                               \
        if ((m) == LANES) {                                                                            \
            for (c = 0; c < (channels); c++)                                                           \
                STOREU((y) + c * (y_cstride) + (p), (acc)[c]);                                         \
        } else {                                                                                       \
            store_mask = CMP(LOADU(lanes), SET1((FT)(m)), _CMP_LT_OQ);                                  \
            for (c = 0; c < (channels); c++)                                                           \
                MASKSTORE((y) + c * (y_cstride) + (p), store_mask, (acc)[c]);                          \
        }                                                                                              \
    } while (0)

/* Consecutive batch items of one channel sampled as one run of points (2-D bilinear by pairs,
   irgrid_pairs_items_f32): point q of the run is point q % per_item of item q / per_item, whose plane
   lies `plane` floats after the previous item's. `item` and `rem`: the item of the next block's first
   point and its index there. Why: RAFT's lookups are 2852 items of 81 points; one item at a time, each
   paid the call's setup and a partial block (benchmarks/README.md, "Few channels by pairs"). */
typedef struct {
    irgrid_index per_item, plane, item, rem;
} irgrid_items;

/* Moves the next block's first point `lanes` points on. */
static inline void irgrid_items_advance(irgrid_items* items, irgrid_index lanes) {
    items->rem += lanes;
    while (items->rem >= items->per_item) {
        items->rem -= items->per_item;
        items->item++;
    }
}

/* (IRGRID_NO_X86_SIMD: the portable build other CPUs get, on x86 too: tests/kernels/test_core_c.py) */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(IRGRID_NO_X86_SIMD)
#define IRGRID_SIMD_X86 1
#include <immintrin.h>
#define IRGRID_AVX2 __attribute__((target("avx2,fma")))
#define IRGRID_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
#include "simd_transpose.h"
#endif
#include "simd_cubic_layout.h"

/* Ranks, modes and sizes the gather path covers: 2-D nearest, linear and cubic, 3-D nearest and
   linear, with plane indices in int32 (mode 0 nearest, 1 linear, 2 cubic: interpolation.h's codes). */
static int irgrid_simd_fits(irgrid_index rank, int mode, irgrid_index plane) {
    return plane < ((irgrid_index)1 << 31)
           && ((rank == 2 && mode >= 0 && mode <= 2) || (rank == 3 && mode >= 0 && mode <= 1));
}

/* The interleaved path's: the gather path's and 3-D cubic (64 taps per point, where the gather
   path's per-group tap registers would not fit in L1). */
static int irgrid_interleave_fits(irgrid_index rank, int mode, irgrid_index plane) {
    return irgrid_simd_fits(rank, mode, plane) || (plane < ((irgrid_index)1 << 31) && rank == 3 && mode == 2);
}

#ifdef IRGRID_SIMD_X86
/* Keys' weights (A = -0.75) for taps at -1, 0, 1, 2 from floor(x), t = x - floor(x)
   (interpolation.h's cubic_weights), defined for a vector type by its set1, add, sub and mul. */
#define IRGRID_KEYS_FN(name, V, SET1, ADD, SUB, MUL) \
    IRGRID_AVX2_INLINE void name(V t, V* w) { \
        const V one = SET1(1.0), a = SET1(-0.75), a5 = SET1(5 * -0.75), a8 = SET1(8 * -0.75); \
        const V a4 = SET1(4 * -0.75), a2 = SET1(-0.75 + 2), a3 = SET1(-0.75 + 3); \
        V u = ADD(t, one), s = SUB(one, t), v = SUB(SET1(2.0), t); \
        w[0] = SUB(MUL(ADD(MUL(SUB(MUL(a, u), a5), u), a8), u), a4); \
        w[1] = ADD(MUL(MUL(SUB(MUL(a2, t), a3), t), t), one); \
        w[2] = ADD(MUL(MUL(SUB(MUL(a2, s), a3), s), s), one); \
        w[3] = SUB(MUL(ADD(MUL(SUB(MUL(a, v), a5), v), a8), v), a4); \
    }

/* Pixel coordinates (interpolation.h's denormalize, operation for operation) and cubic weights in
   double: the scalar path computes these in double even for f32 data (Cython's double literals), so
   the vector path does too: the same pixel coordinates (nearest ties!) and cubic weights, bit for bit. */
IRGRID_AVX2_INLINE __m256d irgrid_denormalize_pd(__m256d g, double length, int align) {
    const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5);
    if (align)
        return _mm256_mul_pd(_mm256_mul_pd(_mm256_add_pd(g, one), half), _mm256_set1_pd(length - 1));
    return _mm256_mul_pd(_mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(g, one), _mm256_set1_pd(length)), one), half);
}
IRGRID_KEYS_FN(irgrid_cubic_pd, __m256d, _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd, _mm256_mul_pd)

IRGRID_AVX2_INLINE __m256 irgrid_denormalize_ps(__m256 g, double length, int align) {
    __m256d lo = irgrid_denormalize_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(g)), length, align);
    __m256d hi = irgrid_denormalize_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(g, 1)), length, align);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

IRGRID_AVX2_INLINE void irgrid_cubic_ps(__m256 t, __m256* w) {
    __m256d lo[4], hi[4];
    int j;
    irgrid_cubic_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(t)), lo);
    irgrid_cubic_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(t, 1)), hi);
    for (j = 0; j < 4; j++)
        w[j] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo[j])), _mm256_cvtpd_ps(hi[j]), 1);
}

/* The FMA's two constants for a dim of `length` (exact in f32 up to 2**22 pixels). */
static inline void irgrid_pixel_constants(double length, int align, float* scale, float* offset) {
    *offset = (float)((length - 1) / 2);
    *scale = align ? *offset : (float)(length / 2);
}

/* A dim's pixel coordinate x = g * scale + offset as one FMA: the constants, which the pair runs
   (simd_pairs.h, irgrid_pairs8_f32) make once per call: GCC does not hoist their double arithmetic out
   of a block loop (it may trap), 16 scalar operations a block. */
typedef struct {
    __m256 scale, offset;
} irgrid_pair_dim8;

IRGRID_AVX2_INLINE irgrid_pair_dim8 irgrid_pair_dim8_of(double length, int align) {
    float scale, offset;
    irgrid_pair_dim8 d;
    irgrid_pixel_constants(length, align, &scale, &offset);
    d.scale = _mm256_set1_ps(scale);
    d.offset = _mm256_set1_ps(offset);
    return d;
}

/* The same two in f32: the pixel coordinate for every f32 vector path (simd_taps.h's
   irgrid_pixel_coordinate), the weights for the `native` taps of irgrid_dim_taps (the cubic runs,
   irgrid_cubic2d_run and irgrid_cubic3d_run). The double versions above were about half of the cubic
   runs' taps' work (the taps a third or more of 3-D cubic's time) and a quarter of a one-channel
   bilinear call. The pixel coordinate is one FMA, g * (L / 2) + (L - 1) / 2 (with align_corners
   g * (L - 1) / 2 + (L - 1) / 2), whose constants are exact in f32 (L <= 2**22, the vector paths'
   bound): the exact coordinate rounded once. The double version gives the same f32 for every f32 g
   and L > 1 (4e8 random pairs, |g| from 2**-44 to 1.5 and L up to 2**22, checked 2026-11-29); with L = 1
   it differs only where |g| < 2**-29 (the double g + 1 rounds: 0 in place of g / 2) or g < -1 with
   align_corners (-0 for +0), coordinates that sample the dim's one pixel with the same weights either
   way, so the outputs keep their bits. Computed as the formula reads, in f32, it was off by up to 3 of
   its ulps, 2.4e-4 pixels at 1500 pixels, enough to move a cubic output by 1e-4 between the paths.
   Keys' weights from t = x - floor(x) in [0, 1) differ from the double ones in their last bits only,
   so the gather path's cubic keeps the double ones (and, for its weights' sake, the double
   coordinate). */
IRGRID_AVX2_INLINE __m256 irgrid_denormalize_native_ps(__m256 g, double length, int align) {
    const irgrid_pair_dim8 d = irgrid_pair_dim8_of(length, align);
    return _mm256_fmadd_ps(g, d.scale, d.offset);
}
IRGRID_KEYS_FN(irgrid_cubic_native_ps, __m256, _mm256_set1_ps, _mm256_add_ps, _mm256_sub_ps, _mm256_mul_ps)

/* Two pairs of adjacent floats (a[0], a[1]) and (b[0], b[1]), one 64-bit load each (through memcpy: a
   pair need not be 8-byte aligned); for the 16- and the 8-lane pair reads. */
IRGRID_AVX2_INLINE __m128d irgrid_two_pairs(const float* a, const float* b) {
    double u, v;
    memcpy(&u, a, sizeof(double));
    memcpy(&v, b, sizeof(double));
    return _mm_set_pd(v, u);
}

/* ------------------------------------------------------------------ f32 taps, 16 lanes (AVX-512) */
/* simd_taps.h once more, for 16 f32 lanes in a zmm register: the gather path's per-dim taps
   (irgrid_lane_taps_f32x16), computed two groups at a time and split into the 8-lane groups its
   reads take (simd_gather_path.h, irgrid_gather_taps_wide_f32). The same operations lane for lane as
   the 8-lane taps: masks are kept as vectors of all-ones or zero lanes (compare into a k register,
   then spread), blends take a mask's sign bit as blendv does, floor and rounding are roundscale with
   the same rounding, and the double arithmetic of the pixel coordinates and cubic weights is done in
   two halves of 8 doubles; so every lane has the same bits as on the AVX2 path. Why: the taps were
   most of a few-channel call's time, and this halves their instructions (benchmarks/README.md, "On an
   Intel Xeon host"). */
#define IRGRID_AVX512_TARGET "avx2,fma,avx512f,avx512vl,avx512bw,avx512dq"
#define IRGRID_AVX512 __attribute__((target(IRGRID_AVX512_TARGET)))
/* GCC's SLP vectoriser packs the eight 16-bit masks of a block of pair taps through general registers
   into one 128-bit store; without it they are stored from the mask registers: 0.94-0.97x the time with
   one channel on Zen 5, 0.95-0.99x with two or three, the same bits (benchmarks/README.md, "Zen 5: the
   pair taps, prefetch by spread"). Clang has no such attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define IRGRID_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define IRGRID_NO_SLP
#endif
#define IRGRID_AVX512_INLINE static inline __attribute__((always_inline, target(IRGRID_AVX512_TARGET)))

IRGRID_AVX512_INLINE __m512d irgrid_denormalize_pd8(__m512d g, double length, int align) {
    const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5);
    if (align)
        return _mm512_mul_pd(_mm512_mul_pd(_mm512_add_pd(g, one), half), _mm512_set1_pd(length - 1));
    return _mm512_mul_pd(_mm512_sub_pd(_mm512_mul_pd(_mm512_add_pd(g, one), _mm512_set1_pd(length)), one), half);
}

/* irgrid_pair_dim8's 16-lane twin. */
typedef struct {
    __m512 scale, offset;
} irgrid_pair_dim;

IRGRID_AVX512_INLINE irgrid_pair_dim irgrid_pair_dim_of(double length, int align) {
    float scale, offset;
    irgrid_pair_dim d;
    irgrid_pixel_constants(length, align, &scale, &offset);
    d.scale = _mm512_set1_ps(scale);
    d.offset = _mm512_set1_ps(offset);
    return d;
}

/* irgrid_pixel_coordinate_f32x16 (native) with its lane masks in a mask register: the same bits, without
   spreading each compare into a vector and back. With the pair run's constants (simd_gather_path.h), its
   one-channel run took 0.86-0.88x the time on Zen 5 (benchmarks/README.md, "Zen 5: the pair taps,
   prefetch by spread"). */
IRGRID_AVX512_INLINE __m512 irgrid_pair_coordinate(__m512 g, const irgrid_pair_dim* d, __mmask16* bad) {
    const __m512 magnitude = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
    __mmask16 ok = _mm512_cmp_ps_mask(_mm512_and_ps(g, magnitude), _mm512_set1_ps(1e30f), _CMP_LT_OQ);
    __m512 x = _mm512_fmadd_ps(_mm512_maskz_mov_ps(ok, g), d->scale, d->offset);
    ok &= _mm512_cmp_ps_mask(_mm512_and_ps(x, magnitude), _mm512_set1_ps(4194304.0f), _CMP_LE_OQ);
    *bad |= (__mmask16)~ok;
    return _mm512_maskz_mov_ps(ok, x);
}

/* 8 lanes' pairs of adjacent floats xc[at[k]], xc[at[k] + 1] (k < 8) as a vector of 8 (left, right) pairs. */
IRGRID_AVX512_INLINE __m512 irgrid_pairs8(const float* xc, const int* at) {
    __m128d a = irgrid_two_pairs(xc + at[0], xc + at[1]), b = irgrid_two_pairs(xc + at[2], xc + at[3]);
    __m128d c = irgrid_two_pairs(xc + at[4], xc + at[5]), d = irgrid_two_pairs(xc + at[6], xc + at[7]);
    __m512d v = _mm512_insertf64x2(_mm512_castpd128_pd512(a), b, 1);
    v = _mm512_insertf64x2(v, c, 2);
    return _mm512_castpd_ps(_mm512_insertf64x2(v, d, 3));
}

IRGRID_AVX512_INLINE __m512 irgrid_denormalize_native_ps16(__m512 g, double length, int align) {
    const irgrid_pair_dim d = irgrid_pair_dim_of(length, align);
    return _mm512_fmadd_ps(g, d.scale, d.offset);
}

IRGRID_AVX512_INLINE __m512 irgrid_denormalize_ps16(__m512 g, double length, int align) {
    __m512d lo = irgrid_denormalize_pd8(_mm512_cvtps_pd(_mm512_castps512_ps256(g)), length, align);
    __m512d hi = irgrid_denormalize_pd8(_mm512_cvtps_pd(_mm512_extractf32x8_ps(g, 1)), length, align);
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
}

#undef IRGRID_AVX2_INLINE
#define IRGRID_AVX2_INLINE IRGRID_AVX512_INLINE
IRGRID_KEYS_FN(irgrid_cubic_pd8, __m512d, _mm512_set1_pd, _mm512_add_pd, _mm512_sub_pd, _mm512_mul_pd)

IRGRID_AVX512_INLINE void irgrid_cubic_ps16(__m512 t, __m512* w) {
    __m512d lo[4], hi[4];
    int j;
    irgrid_cubic_pd8(_mm512_cvtps_pd(_mm512_castps512_ps256(t)), lo);
    irgrid_cubic_pd8(_mm512_cvtps_pd(_mm512_extractf32x8_ps(t, 1)), hi);
    for (j = 0; j < 4; j++)
        w[j] = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo[j])), _mm512_cvtpd_ps(hi[j]), 1);
}

/* Keys' weights in f32 for the cubic runs' 16-channel pixels: the 8-lane irgrid_cubic_native_ps's
   operations (no FMA contraction in either build), so the same bits. */
IRGRID_KEYS_FN(irgrid_cubic_native_ps16, __m512, _mm512_set1_ps, _mm512_add_ps, _mm512_sub_ps, _mm512_mul_ps)

#define IRGRID_MASK16(m) _mm512_movepi32_mask(_mm512_castps_si512(m))
#define FT float
#define SFX(name) name##_f32x16
#define LANES 16
#define VF __m512
#define VI __m512i
#define SET1 _mm512_set1_ps
#define ZERO _mm512_setzero_ps
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define MUL _mm512_mul_ps
#define VMIN _mm512_min_ps
#define VMAX _mm512_max_ps
#define AND _mm512_and_ps
#define ANDNOT _mm512_andnot_ps
#define OR _mm512_or_ps
#define BLEND(a, b, m) _mm512_mask_blend_ps(IRGRID_MASK16(m), a, b)
#define CMP(a, b, p) _mm512_castsi512_ps(_mm512_movm_epi32(_mm512_cmp_ps_mask(a, b, p)))
#define FLOOR(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define RINT(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define MOVEMASK(m) ((int)IRGRID_MASK16(m))
#define LOADU _mm512_loadu_ps
#define TOINT _mm512_cvttps_epi32
#define ISET1 _mm512_set1_epi32
#define IADD _mm512_add_epi32
#define IMUL _mm512_mullo_epi32
#define DENORMALIZE irgrid_denormalize_ps16
#define CUBIC irgrid_cubic_ps16
#define NATIVE_DENORMALIZE irgrid_denormalize_native_ps16
#define NATIVE_CUBIC irgrid_cubic_native_ps16
#include "simd_taps.h"
/* The interleaved path's generic run with pixels of 16 f32 channels (64 bytes, a cache line): a point's
   tap is one load for 16 channels, its taps are computed once per 16 channels instead of 8, and the
   16 x 16 transposes (in and out) take a third fewer shuffles per value than 8 x 8. Why: the run and
   its copy-in are the whole time of many-channel nearest and linear calls (benchmarks/README.md,
   "16-channel pixels").
   The same taps (simd_taps.h at 16 lanes gives the 8-lane bits) and the same FMA chain per channel, so
   the same bits as 8-channel pixels. */
IRGRID_AVX512_INLINE void irgrid_transpose_ps16(__m512* r) {
    __m512 t[16], u[16], a0, a1, b0, b1;
    int i, j;
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {  /* u[4i + j], 128-bit lane L: column 4L + j of rows 4i .. 4i + 3 */
        u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (j = 0; j < 4; j++) {
        a0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44);
        a1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
        b0 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
        b1 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_f32x4(a0, b0, 0x88);
        r[4 + j] = _mm512_shuffle_f32x4(a0, b0, 0xDD);
        r[8 + j] = _mm512_shuffle_f32x4(a1, b1, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(a1, b1, 0xDD);
    }
}
#define FMADD _mm512_fmadd_ps
#define STOREU _mm512_storeu_ps
#define STREAM _mm512_stream_ps
#define MASKSTORE(p, m, v) _mm512_mask_storeu_ps(p, IRGRID_MASK16(m), v)
#define TRANSPOSE irgrid_transpose_ps16
#define ISTOREU(p, v) _mm512_storeu_si512((void*)(p), v)
#define KEEP_INDEX(idx, ok, other) _mm512_mask_blend_epi32(IRGRID_MASK16(ok), other, idx)
#define PIXEL_OFFSET(v) _mm512_slli_epi32(v, 6)
#pragma push_macro("IRGRID_AVX2")
#undef IRGRID_AVX2
#define IRGRID_AVX2 IRGRID_AVX512
#include "simd_interleave.h"
/* Cubic's runs over its row scratch too (irgrid_cubic2d_run_f32x16, irgrid_cubic3d_run_f32x16 and its
   binned outputs' irgrid_unbin_f32x16), the same sums per channel (benchmarks/README.md, "16-channel
   pixels for 2-D cubic", "16-channel pixels for 3-D cubic"). */
#include "simd_cubic.h"
#include "simd_binning.h"
#include "simd_cubic_points.h"
#include "simd_nearest_points.h"
#pragma pop_macro("IRGRID_AVX2")
#include "simd_undef.h"
#undef IRGRID_AVX2_INLINE
#define IRGRID_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma")))

/* ------------------------------------------------------------------ f32, 8 lanes */
#define FT float
#define SFX(name) name##_f32
#define LANES 8
#define VF __m256
#define VI __m256i
#define SET1 _mm256_set1_ps
#define ZERO _mm256_setzero_ps
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define FMADD _mm256_fmadd_ps
#define VMIN _mm256_min_ps
#define VMAX _mm256_max_ps
#define AND _mm256_and_ps
#define ANDNOT _mm256_andnot_ps
#define OR _mm256_or_ps
#define BLEND _mm256_blendv_ps
#define CMP _mm256_cmp_ps
#define FLOOR _mm256_floor_ps
#define RINT(v) _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define MOVEMASK _mm256_movemask_ps
#define LOADU _mm256_loadu_ps
#define STOREU _mm256_storeu_ps
#define STREAM _mm256_stream_ps
#define MASKSTORE(p, m, v) _mm256_maskstore_ps(p, _mm256_castps_si256(m), v)
#define TOINT _mm256_cvttps_epi32
#define ISET1 _mm256_set1_epi32
#define IADD _mm256_add_epi32
#define IMUL _mm256_mullo_epi32
#define IEXTRACT _mm256_extract_epi32
#define GATHER(src, base, idx, mask) _mm256_mask_i32gather_ps(src, base, idx, mask, 4)
#define DENORMALIZE irgrid_denormalize_ps
#define CUBIC irgrid_cubic_ps
#define NATIVE_DENORMALIZE irgrid_denormalize_native_ps
#define NATIVE_CUBIC irgrid_cubic_native_ps
#define TRANSPOSE irgrid_transpose_ps
#define ISTOREU(p, v) _mm256_storeu_si256((__m256i*)(p), v)
#define KEEP_INDEX(idx, ok, other) \
    _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(other), _mm256_castsi256_ps(idx), ok))
#define PIXEL_OFFSET(v) _mm256_slli_epi32(v, 5)
#include "simd_body.h"

/* ------------------------------------------------------------------ f64, 4 lanes */
#define FT double
#define SFX(name) name##_f64
#define LANES 4
#define VF __m256d
#define VI __m128i
#define SET1 _mm256_set1_pd
#define ZERO _mm256_setzero_pd
#define ADD _mm256_add_pd
#define SUB _mm256_sub_pd
#define MUL _mm256_mul_pd
#define FMADD _mm256_fmadd_pd
#define VMIN _mm256_min_pd
#define VMAX _mm256_max_pd
#define AND _mm256_and_pd
#define ANDNOT _mm256_andnot_pd
#define OR _mm256_or_pd
#define BLEND _mm256_blendv_pd
#define CMP _mm256_cmp_pd
#define FLOOR _mm256_floor_pd
#define RINT(v) _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define MOVEMASK _mm256_movemask_pd
#define LOADU _mm256_loadu_pd
#define STOREU _mm256_storeu_pd
#define STREAM _mm256_stream_pd
#define MASKSTORE(p, m, v) _mm256_maskstore_pd(p, _mm256_castpd_si256(m), v)
#define TOINT _mm256_cvttpd_epi32
#define ISET1 _mm_set1_epi32
#define IADD _mm_add_epi32
#define IMUL _mm_mullo_epi32
#define IEXTRACT _mm_extract_epi32
#define GATHER(src, base, idx, mask) _mm256_mask_i32gather_pd(src, base, idx, mask, 8)
#define DENORMALIZE irgrid_denormalize_pd
#define CUBIC irgrid_cubic_pd
#define NATIVE_DENORMALIZE irgrid_denormalize_pd
#define NATIVE_CUBIC irgrid_cubic_pd
#define TRANSPOSE irgrid_transpose_pd
#define ISTOREU(p, v) _mm_storeu_si128((__m128i*)(p), v)
/* a 64-bit lane mask narrowed to 32 bits: converting keeps the sign bit, all blendv reads */
#define KEEP_INDEX(idx, ok, other) \
    _mm_castps_si128(_mm_blendv_ps(_mm_castsi128_ps(other), _mm_castsi128_ps(idx), _mm256_cvtpd_ps(ok)))
#define PIXEL_OFFSET(v) _mm_slli_epi32(v, 5)
#include "simd_body.h"

/* 2-D bilinear (rows of 2 pixels or more) of points [0, n) of a run of one-channel
   items into y[0, n), by pairs, 16 lanes at a time where `wide`: the bits irgrid_simd_sample_f32 gives
   each item alone. x: item 0's plane; items: the item of point 0 and its index there (advanced past
   the run). Returns the fallback points as irgrid_simd_sample does (their indices in the run). */
static inline irgrid_index irgrid_pairs_items_f32(const float* x, const float* g, float* y, irgrid_index n,
        const irgrid_index* dims, int padding, int align, int wide, irgrid_items* items, irgrid_index* fallback) {
    return wide ? irgrid_pairs_wide_f32(x, g, y, n, 1, 0, 0, 2, dims, padding, align, items, fallback)
                : irgrid_pairs8_f32(x, g, y, n, 1, 0, 0, 2, dims, padding, align, items, fallback);
}

#else  /* no x86 SIMD: never called (irgrid_cpu_avx2() is 0) */
static inline irgrid_index irgrid_pairs_items_f32(const float* x, const float* g, float* y, irgrid_index n,
        const irgrid_index* dims, int padding, int align, int wide, irgrid_items* items, irgrid_index* fallback)
        { return -1; }
static irgrid_index irgrid_simd_sample_f32(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, int loads,
        int wide, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_simd_sample_f64(const double* x, const double* g, double* y, irgrid_index n,
        irgrid_index channels, irgrid_index x_cstride, irgrid_index y_cstride, irgrid_index rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, int loads,
        int wide, irgrid_index* fallback) { return -1; }
static void irgrid_interleave_f32(const float* x, irgrid_index channels, irgrid_index x_cstride, irgrid_index plane,
        float* s) {}
static void irgrid_interleave_pixels_f32(const float* x, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index n, float* s) {}
static void irgrid_interleave_pixels_f64(const double* x, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index n, double* s) {}
static void irgrid_interleave_f64(const double* x, irgrid_index channels, irgrid_index x_cstride, irgrid_index plane,
        double* s) {}
static void irgrid_rows_padding_f32(const irgrid_index* dims, float* s) {}
static void irgrid_interleave_plane2d_f32(const float* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, float* s) {}
static void irgrid_interleave_plane2d_f64(const double* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, double* s) {}
static irgrid_index irgrid_cubic2d_run_f32(const float* s, const float* g, float* y, irgrid_index n, irgrid_index channels,
        irgrid_index y_cstride, const irgrid_index* dims, int padding, int align, int streams, irgrid_index* fallback)
        { return -1; }
static irgrid_index irgrid_cubic2d_run_f64(const double* s, const double* g, double* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, const irgrid_index* dims, int padding, int align, int streams,
        irgrid_index* fallback) { return -1; }
static void irgrid_depth_range_f32(const float* g, irgrid_index n, float* lo, float* hi) { *lo = *hi = 0; }
static void irgrid_interleave_rows_f32(const float* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, irgrid_index z0, irgrid_index z1, float* s) {}
static void irgrid_rows_padding_f64(const irgrid_index* dims, double* s) {}
static void irgrid_depth_range_f64(const double* g, irgrid_index n, double* lo, double* hi) { *lo = *hi = 0; }
static void irgrid_interleave_rows_f64(const double* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, irgrid_index z0, irgrid_index z1, double* s) {}
static irgrid_index irgrid_interleaved_sample_f32(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, irgrid_index rank, const irgrid_index* dims,
        const irgrid_index* strides, int mode, int padding, int align, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_interleaved_streamed_f32(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, irgrid_index rank, const irgrid_index* dims,
        const irgrid_index* strides, int mode, int padding, int align, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_cubic3d_run_f32(const float* s, const float* g, float* y, irgrid_index n, irgrid_index channels,
        irgrid_index y_cstride, int by_point, const irgrid_index* dims, int padding, int align, irgrid_index* fallback)
        { return -1; }
static irgrid_index irgrid_cubic3d_run_f64(const double* s, const double* g, double* y, irgrid_index n, irgrid_index channels,
        irgrid_index y_cstride, int by_point, const irgrid_index* dims, int padding, int align, irgrid_index* fallback)
        { return -1; }
static void irgrid_tile_keys_f32(const float* g, irgrid_index n, irgrid_index rank, const double* scale,
        const double* offset, const irgrid_index* tiles, const int* order, int* keys) {}
static void irgrid_tile_keys_f64(const double* g, irgrid_index n, irgrid_index rank, const double* scale,
        const double* offset, const irgrid_index* tiles, const int* order, int* keys) {}
static void irgrid_unbin_f32(const float* out, const int* slot, irgrid_index n, irgrid_index channels, float* y,
        irgrid_index y_cstride) {}
static void irgrid_unbin_f64(const double* out, const int* slot, irgrid_index n, irgrid_index channels, double* y,
        irgrid_index y_cstride) {}
static irgrid_index irgrid_interleaved_sample_f64(const double* s, const double* g, double* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, irgrid_index rank, const irgrid_index* dims,
        const irgrid_index* strides, int mode, int padding, int align, irgrid_index* fallback) { return -1; }
static void irgrid_interleave_f32x16(const float* x, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index plane, float* s) {}
static void irgrid_interleave_pixels_f32x16(const float* x, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index n, float* s) {}
static void irgrid_interleave_plane2d_f32x16(const float* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, float* s) {}
static irgrid_index irgrid_cubic2d_run_f32x16(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, const irgrid_index* dims, int padding, int align, int streams,
        irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_cubic3d_run_f32x16(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, int by_point, const irgrid_index* dims, int padding, int align,
        irgrid_index* fallback) { return -1; }
static void irgrid_rows_padding_f32x16(const irgrid_index* dims, float* s) {}
static void irgrid_depth_range_f32x16(const float* g, irgrid_index n, float* lo, float* hi) { *lo = *hi = 0; }
static void irgrid_interleave_rows_f32x16(const float* x, irgrid_index channels, irgrid_index x_cstride,
        const irgrid_index* dims, irgrid_index z0, irgrid_index z1, float* s) {}
static void irgrid_unbin_f32x16(const float* out, const int* slot, irgrid_index n, irgrid_index channels, float* y,
        irgrid_index y_cstride) {}
static irgrid_index irgrid_interleaved_sample_f32x16(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, irgrid_index rank, const irgrid_index* dims,
        const irgrid_index* strides, int mode, int padding, int align, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_cubic_points_run_f32x1(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims, int padding,
        int align, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_cubic_points8_run_f32x1(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index R, const irgrid_index* dims, int padding,
        int align, irgrid_index* fallback) { return -1; }
static void irgrid_interleave_narrow_f32(const float* x, irgrid_index channels, irgrid_index x_cstride,
        irgrid_index n, int pixel, float* s) {}
static irgrid_index irgrid_nearest_points_run_f32(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, int pixel, const irgrid_index* dims,
        int padding, int align, int loads, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_nearest8_f32(const float* x, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, const irgrid_index* dims, int padding,
        int align, int loads, irgrid_index* fallback) { return -1; }
static irgrid_index irgrid_pairs_pixels_run_f32(const float* s, const float* g, float* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, int pixel, const irgrid_index* dims, int padding, int align,
        irgrid_index* fallback) { return -1; }
#endif
#endif

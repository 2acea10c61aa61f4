/* DeformConv's im2col and column transpose (deform_im2col.h): the tap loop, built for AVX2+FMA and for the
   baseline instruction set, chosen per call by the problem's simd policy. Compile with -ffp-contract=off
   (the bits) and, with GCC, -fno-tree-slp-vectorize (the scalar path's speed: setup.py, NO_SLP). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"
#include "deform_im2col.h"

/* dst[j] = sum over t < n of w[t] * x[off[t] + j], j < len; n a power of two: a balanced tree of
   pairs per block of 8 taps, blocks added in order. Written once as a macro, compiled twice: for
   AVX2+FMA (chosen at run time) and for the baseline instruction set. */
#define IRGRID_APPLY_BODY(T)                                                                    \
    ptrdiff_t j, t;                                                                             \
    if (n == 1) {                                                                               \
        const T w0 = w[0]; const T* __restrict a = x + off[0];                                  \
        for (j = 0; j < len; j++) dst[j] = w0 * a[j];                                           \
        return;                                                                                 \
    }                                                                                           \
    if (n == 2) {                                                                               \
        const T w0 = w[0], w1 = w[1]; const T* __restrict a = x + off[0];                       \
        const T* __restrict b = x + off[1];                                                     \
        for (j = 0; j < len; j++) dst[j] = w0 * a[j] + w1 * b[j];                               \
        return;                                                                                 \
    }                                                                                           \
    if (n == 4) {                                                                               \
        const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];                                     \
        const T* __restrict a = x + off[0]; const T* __restrict b = x + off[1];                 \
        const T* __restrict c = x + off[2]; const T* __restrict d = x + off[3];                 \
        for (j = 0; j < len; j++) dst[j] = (w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]);   \
        return;                                                                                 \
    }                                                                                           \
    for (t = 0; t < n; t += 8) {                                                                \
        const T w0 = w[t], w1 = w[t + 1], w2 = w[t + 2], w3 = w[t + 3];                         \
        const T w4 = w[t + 4], w5 = w[t + 5], w6 = w[t + 6], w7 = w[t + 7];                     \
        const T* __restrict a = x + off[t]; const T* __restrict b = x + off[t + 1];             \
        const T* __restrict c = x + off[t + 2]; const T* __restrict d = x + off[t + 3];         \
        const T* __restrict e = x + off[t + 4]; const T* __restrict f = x + off[t + 5];         \
        const T* __restrict g = x + off[t + 6]; const T* __restrict h = x + off[t + 7];         \
        if (t == 0) {                                                                           \
            for (j = 0; j < len; j++)                                                           \
                dst[j] = ((w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]))                    \
                         + ((w4 * e[j] + w5 * f[j]) + (w6 * g[j] + w7 * h[j]));                 \
        } else {                                                                                \
            for (j = 0; j < len; j++)                                                           \
                dst[j] += ((w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]))                   \
                          + ((w4 * e[j] + w5 * f[j]) + (w6 * g[j] + w7 * h[j]));                \
        }                                                                                       \
    }

#define IRGRID_APPLY_SIGNATURE(T, name)                                                         \
    static void name(const T* __restrict x, const ptrdiff_t* off, const T* w, ptrdiff_t n,      \
                     T* __restrict dst, ptrdiff_t len)

IRGRID_APPLY_SIGNATURE(float, irgrid_apply_taps_f32_base) { IRGRID_APPLY_BODY(float) }
IRGRID_APPLY_SIGNATURE(double, irgrid_apply_taps_f64_base) { IRGRID_APPLY_BODY(double) }

typedef void (*irgrid_apply_f32_fn)(const float*, const ptrdiff_t*, const float*, ptrdiff_t, float*, ptrdiff_t);
typedef void (*irgrid_apply_f64_fn)(const double*, const ptrdiff_t*, const double*, ptrdiff_t, double*,
                                    ptrdiff_t);
typedef int (*irgrid_stream_f32_fn)(const float*, const ptrdiff_t*, const float*, ptrdiff_t, float*, ptrdiff_t);
typedef void (*irgrid_transpose_f32_fn)(const float*, ptrdiff_t, float*, ptrdiff_t, ptrdiff_t, ptrdiff_t,
                                        ptrdiff_t, ptrdiff_t, const float*);
typedef unsigned (*irgrid_points8_f32_fn)(int, const float*, const float*, const float*, ptrdiff_t, const float*,
                                            const ptrdiff_t*, const ptrdiff_t*, float*, ptrdiff_t, ptrdiff_t, int, int);

/* The loops one call runs: the AVX2 build's where the policy and the CPU allow, else the baseline tap loop
   and NULL (the callers' plain C paths). */
typedef struct {
    irgrid_apply_f32_fn apply_f32;
    irgrid_apply_f64_fn apply_f64;
    irgrid_stream_f32_fn stream_f32;
    irgrid_transpose_f32_fn transpose_f32;
    irgrid_points8_f32_fn points8_f32;
} irgrid_deform_paths;

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx2,fma"))) IRGRID_APPLY_SIGNATURE(float, irgrid_apply_taps_f32_avx2)
{ IRGRID_APPLY_BODY(float) }
__attribute__((target("avx2,fma"))) IRGRID_APPLY_SIGNATURE(double, irgrid_apply_taps_f64_avx2)
{ IRGRID_APPLY_BODY(double) }
#include "simd_transpose.h"
/* The tap loop for 1, 2, 4 or 8 taps (the same arithmetic as IRGRID_APPLY_BODY, no FMA) writing
   with non-temporal stores: for a column tile larger than the caches, whose write-allocate reads
   cost as much as the writes. dst must be 32-byte aligned and len a multiple of 8; the caller
   fences (irgrid_store_fence) before the columns are read. */
__attribute__((target("avx2,fma"))) static int irgrid_stream_taps_f32_avx2(
        const float* x, const ptrdiff_t* off, const float* w, ptrdiff_t n, float* dst, ptrdiff_t len) {
    ptrdiff_t j;
    if ((n != 1 && n != 2 && n != 4 && n != 8) || (len & 7) || ((size_t)dst & 31)) return 0;
    if (n == 1) {
        const __m256 w0 = _mm256_set1_ps(w[0]); const float* a = x + off[0];
        for (j = 0; j < len; j += 8) _mm256_stream_ps(dst + j, _mm256_mul_ps(w0, _mm256_loadu_ps(a + j)));
    } else if (n == 2) {
        const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]);
        const float* a = x + off[0]; const float* b = x + off[1];
        for (j = 0; j < len; j += 8)
            _mm256_stream_ps(dst + j, _mm256_add_ps(_mm256_mul_ps(w0, _mm256_loadu_ps(a + j)),
                                                    _mm256_mul_ps(w1, _mm256_loadu_ps(b + j))));
    } else {
        const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]);
        const __m256 w2 = _mm256_set1_ps(w[2]), w3 = _mm256_set1_ps(w[3]);
        const float* a = x + off[0]; const float* b = x + off[1];
        const float* c = x + off[2]; const float* d = x + off[3];
        for (j = 0; j < len; j += 8) {
            __m256 v = _mm256_add_ps(
                _mm256_add_ps(_mm256_mul_ps(w0, _mm256_loadu_ps(a + j)),
                              _mm256_mul_ps(w1, _mm256_loadu_ps(b + j))),
                _mm256_add_ps(_mm256_mul_ps(w2, _mm256_loadu_ps(c + j)),
                              _mm256_mul_ps(w3, _mm256_loadu_ps(d + j))));
            if (n == 8) {
                const float* e = x + off[4]; const float* f = x + off[5];
                const float* g = x + off[6]; const float* h = x + off[7];
                v = _mm256_add_ps(v, _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(w[4]), _mm256_loadu_ps(e + j)),
                                  _mm256_mul_ps(_mm256_set1_ps(w[5]), _mm256_loadu_ps(f + j))),
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(w[6]), _mm256_loadu_ps(g + j)),
                                  _mm256_mul_ps(_mm256_set1_ps(w[7]), _mm256_loadu_ps(h + j)))));
            }
            _mm256_stream_ps(dst + j, v);
        }
    }
    return 1;
}
static void irgrid_store_fence(void) { _mm_sfence(); }
/* One 8 x 8 block of irgrid_transpose_f32_avx2 at source row r, column c. */
__attribute__((target("avx2,fma"), always_inline)) static inline void irgrid_transpose8_f32_avx2(
        const float* src, ptrdiff_t ss, float* dst, ptrdiff_t ds, ptrdiff_t r, ptrdiff_t c, const float* bias) {
    const float* s = src + r * ss + c;
    __m256 o[8];
    ptrdiff_t cc;
    for (cc = 0; cc < 8; cc++)
        o[cc] = _mm256_loadu_ps(s + cc * ss);
    irgrid_transpose_ps(o);
    for (cc = 0; cc < 8; cc++) {
        __m256 v = bias ? _mm256_add_ps(o[cc], _mm256_set1_ps(bias[c + cc])) : o[cc];
        _mm256_storeu_ps(dst + (c + cc) * ds + r, v);
    }
}
/* dst[c * ds + r] = src[r * ss + c] (+ bias[c]) over rows [r0, r1) and columns [c0, c1): 8 x 8
   blocks transposed in registers (simd_transpose.h), the edges one by one. A block writes half a line
   of each of 8 destination rows; the order keeps those lines in L1 until the other half is written:
   - 8 source rows at a time across at most 256 columns (16 KiB of destination lines);
   - where the destination's rows lie a multiple of 1 KiB apart (and the source's do not), a tile's
     destination rows fall in a few of L1's sets: tiles of 64 x 64, each walked 8 destination rows at a
     time, their lines written whole before the next strip.
   Measured (Zen 5, one thread, 64-byte aligned, against 8 source rows across the whole rectangle): the
   GEMM block (4096, 64) into the output (64, 4096) and the data (256, 3400) into channels-last
   (benchmarks/README.md, "The convolution engine's transposes"). */
__attribute__((target("avx2,fma"))) static void irgrid_transpose_f32_avx2(
        const float* src, ptrdiff_t ss, float* dst, ptrdiff_t ds, ptrdiff_t r0, ptrdiff_t r1,
        ptrdiff_t c0, ptrdiff_t c1, const float* bias) {
    enum { TILE = 64, SPAN = 256, SET_SPAN = 1024 };
    const int dst_strips = (ds * (ptrdiff_t)sizeof(float)) % SET_SPAN == 0
                           && (ss * (ptrdiff_t)sizeof(float)) % SET_SPAN != 0;
    ptrdiff_t r, c, rr, rt, ct, re, ce, r8 = r0 + (r1 - r0) / 8 * 8, c8 = c0 + (c1 - c0) / 8 * 8;
    if (dst_strips) {
        for (rt = r0; rt < r8; rt += TILE) {
            re = rt + TILE < r8 ? rt + TILE : r8;
            for (ct = c0; ct < c8; ct += TILE) {
                ce = ct + TILE < c8 ? ct + TILE : c8;
                for (c = ct; c < ce; c += 8)
                    for (r = rt; r < re; r += 8)
                        irgrid_transpose8_f32_avx2(src, ss, dst, ds, r, c, bias);
            }
        }
    } else {
        for (ct = c0; ct < c8; ct += SPAN) {
            ce = ct + SPAN < c8 ? ct + SPAN : c8;
            for (r = r0; r < r8; r += 8)
                for (c = ct; c < ce; c += 8)
                    irgrid_transpose8_f32_avx2(src, ss, dst, ds, r, c, bias);
        }
    }
    for (c = c0; c < c1; c++) {  /* the edges: rows past r8 for every column, columns past c8 */
        for (rr = (c < c8 ? r8 : r0); rr < r1; rr++)
            dst[c * ds + rr] = bias ? src[rr * ss + c] + bias[c] : src[rr * ss + c];
    }
}
/* The column rows of 8 consecutive output points at one kernel tap of a 2-D or 3-D f32 layer: the
   coordinate of dim d is base[8 * d + q] + off[d * off_step + q] (off NULL without offsets; mask NULL
   without a mask). Written here: every point without a NaN coordinate, under either boundary rule
   (`zeros`, else the edge rule): those whose 2**rank taps are all inside (in every dim
   0 <= floor(pos) <= length - 2 with pos not an integer: the same taps under both rules) from the
   strides, the others from their tap list built as linear_taps and point_taps build it (none inside:
   zeros). The coordinates of the 8 points are computed at once with the scalar path's products and
   sums (linear_taps, point_taps, the tap loop), so the columns are the same bits; with non-temporal
   stores when `stream` and a row is 32-byte aligned with len a multiple of 8 (the caller fences).
   Returns the bit mask of the points left to the caller (a NaN coordinate). The dims must be at most
   2**24, so that the comparisons in f32 are exact (the caller's dims_exact). Why: a quarter of the
   scalar path's instructions on dcn_64, and 3-D's im2col 0.3x the time (benchmarks/README.md, "How
   DeformConv got here", "3-D DeformConv's im2col"). rank is a constant in each caller below. */
__attribute__((target("avx2,fma"), always_inline)) static inline unsigned irgrid_points8_rank_avx2(
        const int rank, const float* x, const float* base, const float* off, ptrdiff_t off_step, const float* mask,
        const ptrdiff_t* dims, const ptrdiff_t* strides, float* dst, ptrdiff_t dst_step, ptrdiff_t len, int stream,
        int zeros) {
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), minus_one = _mm256_set1_ps(-1.0f);
    const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    __m256 low[3], frac[3], wv[8], ok = all, number = all, some = all;
    float w[8][8], fr[3][8], scale_of[8], list_w[8];
    int idx[3][8];
    unsigned lo_in[3], hi_in[3];
    ptrdiff_t delta[8], tap_off[8], q, j, d, e, count;
    const ptrdiff_t taps = (ptrdiff_t)1 << rank;
    for (d = 0; d < rank; d++) {
        __m256 pos = _mm256_loadu_ps(base + 8 * d);
        if (off)
            pos = _mm256_add_ps(pos, _mm256_loadu_ps(off + d * off_step));
        low[d] = _mm256_floor_ps(pos);
        frac[d] = _mm256_sub_ps(pos, low[d]);
        const __m256 last = _mm256_set1_ps((float)(dims[d] - 1)), before_last = _mm256_set1_ps((float)(dims[d] - 2));
        /* the first tap floor(pos) inside (under the edge rule: pos inside); floor(pos) + 1 inside; a second tap */
        const __m256 lo_ok = _mm256_and_ps(_mm256_cmp_ps(low[d], zero, _CMP_GE_OQ),
                                           _mm256_cmp_ps(low[d], last, _CMP_LE_OQ));
        const __m256 next_ok = _mm256_and_ps(_mm256_cmp_ps(low[d], minus_one, _CMP_GE_OQ),
                                             _mm256_cmp_ps(low[d], before_last, _CMP_LE_OQ));
        const __m256 second = _mm256_cmp_ps(frac[d], zero, _CMP_NEQ_OQ);
        /* the second tap's: floor(pos) + 1 (zeros), min(floor(pos) + 1, length - 1) (edge) */
        const __m256 hi_ok = _mm256_and_ps(zeros ? next_ok : lo_ok, second);
        ok = _mm256_and_ps(ok, _mm256_and_ps(_mm256_and_ps(lo_ok, next_ok), second));
        number = _mm256_and_ps(number, _mm256_cmp_ps(pos, pos, _CMP_ORD_Q));
        some = _mm256_and_ps(some, zeros ? _mm256_or_ps(lo_ok, hi_ok) : lo_ok);
        lo_in[d] = (unsigned)_mm256_movemask_ps(lo_ok);
        hi_in[d] = (unsigned)_mm256_movemask_ps(hi_ok);
    }
    const unsigned inside = (unsigned)_mm256_movemask_ps(ok);
    const unsigned partial = (unsigned)_mm256_movemask_ps(_mm256_and_ps(number, some)) & ~inside;
    const unsigned outside = (unsigned)_mm256_movemask_ps(_mm256_andnot_ps(some, number));
    const unsigned left = ~(inside | partial | outside) & 0xFFu;
    if (left == 0xFFu)
        return left;
    /* point_taps' weights, (scale * w_0) * w_1 * ..., and offsets: dim d doubles the list with its
       second tap (tap e takes dim d's second where bit d of e is set) */
    const __m256 scale = mask ? _mm256_loadu_ps(mask) : one;
    wv[0] = _mm256_mul_ps(scale, _mm256_sub_ps(one, frac[0]));
    wv[1] = _mm256_mul_ps(scale, frac[0]);
    delta[0] = 0;
    delta[1] = strides[0];
    for (d = 1, count = 2; d < rank; d++, count *= 2) {
        const __m256 w_lo = _mm256_sub_ps(one, frac[d]);
        for (e = 0; e < count; e++) {
            wv[count + e] = _mm256_mul_ps(wv[e], frac[d]);
            wv[e] = _mm256_mul_ps(wv[e], w_lo);
            delta[count + e] = delta[e] + strides[d];
        }
    }
    for (e = 0; e < taps; e++)
        _mm256_storeu_ps(w[e], wv[e]);
    for (d = 0; d < rank; d++) {  /* 0 where no tap is inside */
        _mm256_storeu_si256((__m256i*)idx[d], _mm256_cvttps_epi32(_mm256_and_ps(_mm256_and_ps(number, some), low[d])));
        _mm256_storeu_ps(fr[d], frac[d]);
    }
    _mm256_storeu_ps(scale_of, scale);
    for (q = 0; q < 8; q++) {
        float* out = dst + q * dst_step;
        if ((outside >> q) & 1u) {
            for (j = 0; j < len; j++)
                out[j] = 0;
            continue;
        }
        if (!((partial >> q) & 1u))
            continue;
        tap_off[0] = 0;
        w[0][q] = scale_of[q];
        for (d = 0, count = 1; d < rank; d++) {  /* point_taps over linear_taps' lists */
            const ptrdiff_t lo_off = idx[d][q] * strides[d];
            const ptrdiff_t hi_off = (zeros || idx[d][q] + 1 < dims[d] ? idx[d][q] + 1 : dims[d] - 1) * strides[d];
            const float f = fr[d][q], w_lo = 1 - f;
            if (((lo_in[d] & hi_in[d]) >> q) & 1u) {
                for (e = 0; e < count; e++) {
                    tap_off[count + e] = tap_off[e] + hi_off;
                    w[count + e][q] = w[e][q] * f;
                    tap_off[e] = tap_off[e] + lo_off;
                    w[e][q] = w[e][q] * w_lo;
                }
                count *= 2;
            } else {
                const int hi = (hi_in[d] >> q) & 1u;
                for (e = 0; e < count; e++) {
                    tap_off[e] = tap_off[e] + (hi ? hi_off : lo_off);
                    w[e][q] = w[e][q] * (hi ? f : w_lo);
                }
            }
        }
        for (e = 0; e < count; e++)
            list_w[e] = w[e][q];
        if (!(stream && irgrid_stream_taps_f32_avx2(x, tap_off, list_w, count, out, len)))
            irgrid_apply_taps_f32_avx2(x, tap_off, list_w, count, out, len);
    }
    for (q = 0; q < 8; q++) {
        if (!((inside >> q) & 1u))
            continue;
        const float* corner = x;
        for (d = 0; d < rank; d++)
            corner += idx[d][q] * strides[d];
        const float* a = corner + delta[0];
        const float* b = corner + delta[1];
        const float* c = corner + delta[2];
        const float* dd = corner + delta[3];
        const __m256 v0 = _mm256_set1_ps(w[0][q]), v1 = _mm256_set1_ps(w[1][q]);
        const __m256 v2 = _mm256_set1_ps(w[2][q]), v3 = _mm256_set1_ps(w[3][q]);
        float* out = dst + q * dst_step;
        const int nt = stream && !(len & 7) && !((size_t)out & 31);
        /* IRGRID_APPLY_BODY's sums, written out: through irgrid_apply_taps_f32_avx2 with a tap list, as
           the partial points above, these points took 1.05-1.16x the im2col's time (3-D and dcn_64). */
        for (j = 0; j + 8 <= len; j += 8) {
            __m256 v = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(v0, _mm256_loadu_ps(a + j)),
                                                   _mm256_mul_ps(v1, _mm256_loadu_ps(b + j))),
                                     _mm256_add_ps(_mm256_mul_ps(v2, _mm256_loadu_ps(c + j)),
                                                   _mm256_mul_ps(v3, _mm256_loadu_ps(dd + j))));
            if (rank == 3)
                v = _mm256_add_ps(v, _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(w[4][q]), _mm256_loadu_ps(corner + delta[4] + j)),
                                  _mm256_mul_ps(_mm256_set1_ps(w[5][q]), _mm256_loadu_ps(corner + delta[5] + j))),
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(w[6][q]), _mm256_loadu_ps(corner + delta[6] + j)),
                                  _mm256_mul_ps(_mm256_set1_ps(w[7][q]), _mm256_loadu_ps(corner + delta[7] + j)))));
            if (nt)
                _mm256_stream_ps(out + j, v);
            else
                _mm256_storeu_ps(out + j, v);
        }
        for (; j < len; j++) {
            float v = (w[0][q] * a[j] + w[1][q] * b[j]) + (w[2][q] * c[j] + w[3][q] * dd[j]);
            if (rank == 3)
                v = v + ((w[4][q] * corner[delta[4] + j] + w[5][q] * corner[delta[5] + j])
                         + (w[6][q] * corner[delta[6] + j] + w[7][q] * corner[delta[7] + j]));
            out[j] = v;
        }
    }
    return left;
}
__attribute__((target("avx2,fma"))) static unsigned irgrid_points8_f32_avx2(
        int rank, const float* x, const float* base, const float* off, ptrdiff_t off_step, const float* mask,
        const ptrdiff_t* dims, const ptrdiff_t* strides, float* dst, ptrdiff_t dst_step, ptrdiff_t len, int stream,
        int zeros) {
    if (rank == 2)
        return irgrid_points8_rank_avx2(2, x, base, off, off_step, mask, dims, strides, dst, dst_step, len, stream,
                                          zeros);
    return irgrid_points8_rank_avx2(3, x, base, off, off_step, mask, dims, strides, dst, dst_step, len, stream,
                                      zeros);
}

#else
static void irgrid_store_fence(void) {}
#endif

static int irgrid_deform_avx2(int simd) { return simd == IRGRID_DEFORM_SIMD_AUTO && irgrid_cpu_avx2(); }

static void irgrid_deform_select(int simd, irgrid_deform_paths* paths) {
    paths->apply_f32 = irgrid_apply_taps_f32_base;
    paths->apply_f64 = irgrid_apply_taps_f64_base;
    paths->stream_f32 = 0;
    paths->transpose_f32 = 0;
    paths->points8_f32 = 0;
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    if (irgrid_deform_avx2(simd)) {
        paths->apply_f32 = irgrid_apply_taps_f32_avx2;
        paths->apply_f64 = irgrid_apply_taps_f64_avx2;
        paths->stream_f32 = irgrid_stream_taps_f32_avx2;
        paths->transpose_f32 = irgrid_transpose_f32_avx2;
        paths->points8_f32 = irgrid_points8_f32_avx2;
    }
#endif
}

const char* irgrid_deform_simd_name(int simd) { return irgrid_deform_avx2(simd) ? "avx2+fma" : "baseline"; }

/* 0 <= i < length (length >= 0) as one unsigned comparison: GCC kept the two signed ones in the per-dim tap
   code, which gave 3-D DeformConv's im2col 8% more instructions than the Cython kernel it replaces. */
static inline int irgrid_deform_inside(irgrid_index i, irgrid_index length) { return (size_t)i < (size_t)length; }

#define IRGRID_T float
#define IRGRID_F32 1
#define IRGRID_TS(name) irgrid_deform_##name##_f32
#include "deform_im2col_typed.h"
#undef IRGRID_T
#undef IRGRID_F32
#undef IRGRID_TS
#define IRGRID_T double
#define IRGRID_F32 0
#define IRGRID_TS(name) irgrid_deform_##name##_f64
#include "deform_im2col_typed.h"
#undef IRGRID_T
#undef IRGRID_F32
#undef IRGRID_TS

/* *product = a * b for a, b >= 0, 0 when it would pass IRGRID_INDEX_LIMIT (so no size the kernel forms overflows). */
static int irgrid_deform_times(irgrid_index a, irgrid_index b, irgrid_index* product) {
    const irgrid_index limit = (irgrid_index)IRGRID_INDEX_LIMIT;
    if (a < 0 || b < 0 || (b > 0 && a > limit / b))
        return 0;
    *product = a * b;
    return 1;
}

int irgrid_deform_im2col_plan(irgrid_deform_im2col* p) {
    const irgrid_index limit = (irgrid_index)IRGRID_INDEX_LIMIT;
    irgrid_index plane = 1, points = 1, kernel_size = 1, size, span, reach;
    int d;
    memset(&p->schedule, 0, sizeof(p->schedule));
    if (p->rank < 1 || p->rank > IRGRID_DEFORM_MAX_RANK)
        return IRGRID_E_RANK;
    if ((p->boundary != IRGRID_DEFORM_ZEROS && p->boundary != IRGRID_DEFORM_EDGE)
            || (p->simd != IRGRID_DEFORM_SIMD_AUTO && p->simd != IRGRID_DEFORM_SIMD_BASELINE))
        return IRGRID_E_MODE;
    if (p->channels < 0 || p->groups < 1 || p->offset_groups < 1 || p->channels % p->groups
            || p->channels % p->offset_groups)
        return IRGRID_E_DIMS;
    for (d = p->rank - 1; d >= 0; d--) {
        if (p->in_dims[d] < 1 || p->out_dims[d] < 1 || p->kernel[d] < 1 || p->strides[d] < 1
                || p->dilations[d] < 1)
            return IRGRID_E_DIMS;
        if (!irgrid_deform_times(plane, p->channels, &p->in_strides[d])
                || !irgrid_deform_times(plane, p->in_dims[d], &plane)
                || !irgrid_deform_times(points, p->out_dims[d], &points)
                || !irgrid_deform_times(kernel_size, p->kernel[d], &kernel_size))
            return IRGRID_E_SIZE;
        /* The tap loop forms each position o * stride - pad + k * dilation (before its offset) in
           irgrid_index: each term within IRGRID_INDEX_LIMIT, so no sum of them overflows. */
        if (!irgrid_deform_times(p->out_dims[d] - 1, p->strides[d], &span)
                || !irgrid_deform_times(p->kernel[d], p->dilations[d], &reach)
                || p->pads_begin[d] > limit || p->pads_begin[d] < -limit)
            return IRGRID_E_SIZE;
    }
    if (!irgrid_deform_times(plane, p->channels, &size) || !irgrid_deform_times(kernel_size, p->channels, &size)
            || !irgrid_deform_times(size, points, &size)
            || !irgrid_deform_times(kernel_size, p->offset_groups, &size)
            || !irgrid_deform_times(size, p->rank + 1, &size) || !irgrid_deform_times(size, points, &size))
        return IRGRID_E_SIZE;
    if (!(0 <= p->tile_start && p->tile_start <= p->tile_stop && p->tile_stop <= points))
        return IRGRID_E_DIMS;
    p->points = points;
    p->kernel_size = kernel_size;
    p->schedule.phases = 1;
    if (p->tile_stop > p->tile_start && p->channels > 0)
        p->schedule.units[0] = (p->tile_stop - p->tile_start + IRGRID_DEFORM_CHUNK_POINTS - 1)
                               / IRGRID_DEFORM_CHUNK_POINTS;
    return IRGRID_OK;
}

void irgrid_deform_im2col_run(const irgrid_deform_im2col* p, int phase, void* shared, void* worker_scratch,
                              irgrid_index begin, irgrid_index end) {
    irgrid_deform_paths paths;
    irgrid_index unit, start, stop;
    (void)phase; (void)shared; (void)worker_scratch;
    irgrid_deform_select(p->simd, &paths);
    for (unit = begin; unit < end; unit++) {
        start = p->tile_start + unit * IRGRID_DEFORM_CHUNK_POINTS;
        stop = start + IRGRID_DEFORM_CHUNK_POINTS < p->tile_stop ? start + IRGRID_DEFORM_CHUNK_POINTS : p->tile_stop;
        if (p->f64)
            irgrid_deform_sample_points_f64(p, &paths, start, stop);
        else
            irgrid_deform_sample_points_f32(p, &paths, start, stop);
    }
}

int irgrid_deform_transpose_plan(irgrid_deform_transpose* p) {
    const irgrid_index b = IRGRID_DEFORM_TRANSPOSE_BLOCK;
    irgrid_index size;
    memset(&p->schedule, 0, sizeof(p->schedule));
    if (p->simd != IRGRID_DEFORM_SIMD_AUTO && p->simd != IRGRID_DEFORM_SIMD_BASELINE)
        return IRGRID_E_MODE;
    if (p->rows < 0 || p->cols < 0)
        return IRGRID_E_DIMS;
    if (!irgrid_deform_times(p->rows, p->cols, &size))
        return IRGRID_E_SIZE;
    p->col_blocks = p->cols / b + (p->cols % b != 0);  /* cols may be huge when rows is 0 */
    p->schedule.phases = 1;
    if (p->rows > 0 && p->cols > 0)
        p->schedule.units[0] = (p->rows + b - 1) / b * p->col_blocks;
    return IRGRID_OK;
}

void irgrid_deform_transpose_run(const irgrid_deform_transpose* p, int phase, void* shared, void* worker_scratch,
                                 irgrid_index begin, irgrid_index end) {
    const irgrid_index b = IRGRID_DEFORM_TRANSPOSE_BLOCK;
    irgrid_deform_paths paths;
    irgrid_index unit = begin, r0, r1, c0, c1, whole;
    (void)phase; (void)shared; (void)worker_scratch;
    irgrid_deform_select(p->simd, &paths);
    while (unit < end) {
        r0 = unit / p->col_blocks * b;
        whole = unit % p->col_blocks == 0 ? (end - unit) / p->col_blocks : 0;  /* whole rows of blocks: one rectangle */
        if (whole > 0) {
            r1 = r0 + whole * b;
            c0 = 0;
            c1 = p->cols;
            unit += whole * p->col_blocks;
        } else {
            r1 = r0 + b;
            c0 = unit % p->col_blocks * b;
            c1 = c0 + b < p->cols ? c0 + b : p->cols;
            unit += 1;
        }
        r1 = r1 < p->rows ? r1 : p->rows;
        if (p->f64)
            irgrid_deform_transpose_block_f64(&paths, (const double*)p->src, p->src_stride, (double*)p->dst,
                                              p->dst_stride, r0, r1, c0, c1, (const double*)p->bias);
        else
            irgrid_deform_transpose_block_f32(&paths, (const float*)p->src, p->src_stride, (float*)p->dst,
                                              p->dst_stride, r0, r1, c0, c1, (const float*)p->bias);
    }
}

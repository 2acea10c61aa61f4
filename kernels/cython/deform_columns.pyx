# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Deformable im2col for any number r of spatial dims: the column matrix a GEMM turns into a convolution.

The input comes channels-last, x (*in_dims, C), so every tap of a sampling point is a contiguous run
of channels. The column matrix is written point-major, one block per convolution group gc:

    col[gc, p, k * Cg + c'] = mask[g * K + k, p] * sum over taps t of w_t * x[tap_t, gc * Cg + c']
    pos_d = o_d * stride_d - pad_begin_d + k_d * dilation_d + offset[(g * K + k) * r + d, p]

with Cg = C / groups channels per group and g the offset group of channel gc * Cg + c'. So each
group's block (points, K * Cg) is what the GEMM reads as the transposed right operand, and per
(output point, kernel tap, offset group) the taps and weights (mask included) are computed once and
applied to all the group's channels with vector loads and contiguous stores (AVX2+FMA where the CPU
has it, chosen at import; plain C otherwise). Every column value is computed the same way whatever
the chunking, so results never depend on the thread count. In 2-D f32 (AVX2 build) the points
whose 4 taps are all inside take their coordinates 8 at a time (irgrid_interior8_f32, the same
products and sums, so the same bits); the others take the scalar path. On dcn_64 (C = 64, with
mask) callgrind counts 18.4 million instructions per call for the point-major scalar loop, 13.7
with kernel taps outer and the 2-D taps unrolled, 4.3 with the 8-point path; one thread took about
2.2, 1.1 and 0.65 ms (Zen 4).

Boundary rules (docs/semantics.md, "DeformConv"):
- BOUNDARY_ZEROS (ONNX DeformConv, OpenVINO bilinear_interpolation_pad=true): taps floor(x) and
  floor(x) + 1, each dropped when outside [0, L);
- BOUNDARY_EDGE (OpenVINO bilinear_interpolation_pad=false, DeformableConvolution-1): a point outside
  [0, L) in any dim gives 0; inside, taps floor(x) and min(ceil(x), L - 1).
A tap whose linear weight is exactly 0 (an integer coordinate) is not read. A NaN coordinate gives a
NaN column value; +-Inf and huge coordinates are outside (0); a point with no tap inside gives 0
whatever its mask. A point's tap count is a power of two (1 or 2 per dim); the taps are summed as a
balanced tree of pairs (per block of 8), rounded the same on both paths (setup.py builds with
-ffp-contract=off, so the compiler fuses no multiply-add).
"""
import os

from cython.parallel cimport parallel, prange
from cython cimport floating
from libc.math cimport NAN

from interpolation cimport (
    MAX_TAPS, MAX_RANK, PointStatus, POINT_OK, POINT_ZERO, POINT_NAN, clamp_coordinate,
)
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef extern from *:
    """
    #include <stddef.h>
    /* dst[j] = sum over t < n of w[t] * x[off[t] + j], j < len; n a power of two: a balanced tree of
       pairs per block of 8 taps, blocks added in order. Written once as a macro, compiled twice: for
       AVX2+FMA (chosen at run time) and for the baseline instruction set. */
    #define IRGRID_APPLY_BODY(T)                                                                    \\
        ptrdiff_t j, t;                                                                             \\
        if (n == 1) {                                                                               \\
            const T w0 = w[0]; const T* __restrict a = x + off[0];                                  \\
            for (j = 0; j < len; j++) dst[j] = w0 * a[j];                                           \\
            return;                                                                                 \\
        }                                                                                           \\
        if (n == 2) {                                                                               \\
            const T w0 = w[0], w1 = w[1]; const T* __restrict a = x + off[0];                       \\
            const T* __restrict b = x + off[1];                                                     \\
            for (j = 0; j < len; j++) dst[j] = w0 * a[j] + w1 * b[j];                               \\
            return;                                                                                 \\
        }                                                                                           \\
        if (n == 4) {                                                                               \\
            const T w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];                                     \\
            const T* __restrict a = x + off[0]; const T* __restrict b = x + off[1];                 \\
            const T* __restrict c = x + off[2]; const T* __restrict d = x + off[3];                 \\
            for (j = 0; j < len; j++) dst[j] = (w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]);   \\
            return;                                                                                 \\
        }                                                                                           \\
        for (t = 0; t < n; t += 8) {                                                                \\
            const T w0 = w[t], w1 = w[t + 1], w2 = w[t + 2], w3 = w[t + 3];                         \\
            const T w4 = w[t + 4], w5 = w[t + 5], w6 = w[t + 6], w7 = w[t + 7];                     \\
            const T* __restrict a = x + off[t]; const T* __restrict b = x + off[t + 1];             \\
            const T* __restrict c = x + off[t + 2]; const T* __restrict d = x + off[t + 3];         \\
            const T* __restrict e = x + off[t + 4]; const T* __restrict f = x + off[t + 5];         \\
            const T* __restrict g = x + off[t + 6]; const T* __restrict h = x + off[t + 7];         \\
            if (t == 0) {                                                                           \\
                for (j = 0; j < len; j++)                                                           \\
                    dst[j] = ((w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]))                    \\
                             + ((w4 * e[j] + w5 * f[j]) + (w6 * g[j] + w7 * h[j]));                 \\
            } else {                                                                                \\
                for (j = 0; j < len; j++)                                                           \\
                    dst[j] += ((w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]))                   \\
                              + ((w4 * e[j] + w5 * f[j]) + (w6 * g[j] + w7 * h[j]));                \\
            }                                                                                       \\
        }

    #define IRGRID_APPLY_SIGNATURE(T, name)                                                         \\
        static void name(const T* __restrict x, const ptrdiff_t* off, const T* w, ptrdiff_t n,      \\
                         T* __restrict dst, ptrdiff_t len)

    IRGRID_APPLY_SIGNATURE(float, irgrid_apply_taps_f32_base) { IRGRID_APPLY_BODY(float) }
    IRGRID_APPLY_SIGNATURE(double, irgrid_apply_taps_f64_base) { IRGRID_APPLY_BODY(double) }

    typedef void (*irgrid_apply_f32_fn)(const float*, const ptrdiff_t*, const float*, ptrdiff_t, float*, ptrdiff_t);
    typedef void (*irgrid_apply_f64_fn)(const double*, const ptrdiff_t*, const double*, ptrdiff_t, double*,
                                        ptrdiff_t);
    static irgrid_apply_f32_fn irgrid_apply_taps_f32 = irgrid_apply_taps_f32_base;
    static irgrid_apply_f64_fn irgrid_apply_taps_f64 = irgrid_apply_taps_f64_base;
    static const char* irgrid_deform_simd = "baseline";
    /* The AVX2 build's transpose and 2-D interior loops where selected (irgrid_deform_select), else NULL. */
    typedef void (*irgrid_transpose_f32_fn)(const float*, ptrdiff_t, float*, ptrdiff_t, ptrdiff_t, ptrdiff_t,
                                            ptrdiff_t, ptrdiff_t, const float*);
    static irgrid_transpose_f32_fn irgrid_transpose_f32 = 0;
    typedef unsigned (*irgrid_interior8_f32_fn)(const float*, const float*, const float*, const float*, const float*,
                                                const float*, ptrdiff_t, ptrdiff_t, ptrdiff_t, ptrdiff_t, float*,
                                                ptrdiff_t, ptrdiff_t, int);
    static irgrid_interior8_f32_fn irgrid_interior8_f32 = 0;

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
    static int irgrid_stream_taps_f32_none(const float* x, const ptrdiff_t* off, const float* w, ptrdiff_t n,
                                           float* dst, ptrdiff_t len) {
        (void)x; (void)off; (void)w; (void)n; (void)dst; (void)len; return 0;
    }
    static int (*irgrid_stream_taps_f32)(const float*, const ptrdiff_t*, const float*, ptrdiff_t, float*,
                                         ptrdiff_t) = irgrid_stream_taps_f32_none;
    static void irgrid_store_fence(void) { _mm_sfence(); }
    /* dst[c * ds + r] = src[r * ss + c] (+ bias[c]) over rows [r0, r1) and columns [c0, c1): 8 x 8
       blocks transposed in registers (simd_transpose.h), the edges one by one. */
    __attribute__((target("avx2,fma"))) static void irgrid_transpose_f32_avx2(
            const float* src, ptrdiff_t ss, float* dst, ptrdiff_t ds, ptrdiff_t r0, ptrdiff_t r1,
            ptrdiff_t c0, ptrdiff_t c1, const float* bias) {
        ptrdiff_t r, c, rr, cc, r8 = r0 + (r1 - r0) / 8 * 8, c8 = c0 + (c1 - c0) / 8 * 8;
        for (r = r0; r < r8; r += 8) {
            for (c = c0; c < c8; c += 8) {
                const float* s = src + r * ss + c;
                __m256 o[8];
                for (cc = 0; cc < 8; cc++)
                    o[cc] = _mm256_loadu_ps(s + cc * ss);
                irgrid_transpose_ps(o);
                for (cc = 0; cc < 8; cc++) {
                    __m256 v = bias ? _mm256_add_ps(o[cc], _mm256_set1_ps(bias[c + cc])) : o[cc];
                    _mm256_storeu_ps(dst + (c + cc) * ds + r, v);
                }
            }
        }
        for (c = c0; c < c1; c++) {  /* the edges: rows past r8 for every column, columns past c8 */
            for (rr = (c < c8 ? r8 : r0); rr < r1; rr++)
                dst[c * ds + rr] = bias ? src[rr * ss + c] + bias[c] : src[rr * ss + c];
        }
    }
    /* The column rows of 8 consecutive output points at one kernel tap of a 2-D f32 layer (y =
       base_y + off_y, x likewise, off_* NULL without offsets, mask NULL without a mask), written
       for the points whose 4 taps are all inside: 0 <= floor(y) <= H - 2 with y not an integer,
       likewise x (the same taps under both boundary rules). The coordinates of the 8 points are
       computed at once with the scalar path's products and sums (linear_taps, point_taps, the tap
       loop), so the columns are the same bits; with non-temporal stores when `stream` and a row is
       32-byte aligned with len a multiple of 8 (the caller fences). Returns the bit mask of the
       points left to the caller (NaN, outside, on an edge or at an integer coordinate). */
    __attribute__((target("avx2,fma"))) static unsigned irgrid_interior8_f32_avx2(
            const float* x, const float* base_y, const float* base_x, const float* off_y, const float* off_x,
            const float* mask, ptrdiff_t H, ptrdiff_t W, ptrdiff_t sy, ptrdiff_t sx, float* dst,
            ptrdiff_t dst_step, ptrdiff_t len, int stream) {
        __m256 py = _mm256_loadu_ps(base_y), px = _mm256_loadu_ps(base_x);
        const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
        float w[4][8];
        int iy[8], ix[8];
        ptrdiff_t q, j;
        if (off_y) {
            py = _mm256_add_ps(py, _mm256_loadu_ps(off_y));
            px = _mm256_add_ps(px, _mm256_loadu_ps(off_x));
        }
        const __m256 ly = _mm256_floor_ps(py), lx = _mm256_floor_ps(px);
        const __m256 fy = _mm256_sub_ps(py, ly), fx = _mm256_sub_ps(px, lx);
        __m256 ok = _mm256_and_ps(_mm256_cmp_ps(ly, zero, _CMP_GE_OQ),
                                  _mm256_cmp_ps(ly, _mm256_set1_ps((float)(H - 2)), _CMP_LE_OQ));
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(fy, zero, _CMP_NEQ_OQ));
        ok = _mm256_and_ps(ok, _mm256_and_ps(_mm256_cmp_ps(lx, zero, _CMP_GE_OQ),
                                             _mm256_cmp_ps(lx, _mm256_set1_ps((float)(W - 2)), _CMP_LE_OQ)));
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(fx, zero, _CMP_NEQ_OQ));
        const unsigned inside = (unsigned)_mm256_movemask_ps(ok);
        if (!inside)
            return 0xFFu;
        const __m256 scale = mask ? _mm256_loadu_ps(mask) : one;
        const __m256 wy0 = _mm256_mul_ps(scale, _mm256_sub_ps(one, fy)), wy1 = _mm256_mul_ps(scale, fy);
        const __m256 wx0 = _mm256_sub_ps(one, fx);
        _mm256_storeu_ps(w[0], _mm256_mul_ps(wy0, wx0));
        _mm256_storeu_ps(w[1], _mm256_mul_ps(wy1, wx0));
        _mm256_storeu_ps(w[2], _mm256_mul_ps(wy0, fx));
        _mm256_storeu_ps(w[3], _mm256_mul_ps(wy1, fx));
        _mm256_storeu_si256((__m256i*)iy, _mm256_cvttps_epi32(_mm256_and_ps(ok, ly)));  /* 0 where not inside */
        _mm256_storeu_si256((__m256i*)ix, _mm256_cvttps_epi32(_mm256_and_ps(ok, lx)));
        for (q = 0; q < 8; q++) {
            if (!((inside >> q) & 1u))
                continue;
            const float* a = x + iy[q] * sy + ix[q] * sx;
            const float* b = a + sy;
            const float* c = a + sx;
            const float* d = a + sy + sx;
            const float w0 = w[0][q], w1 = w[1][q], w2 = w[2][q], w3 = w[3][q];
            const __m256 v0 = _mm256_set1_ps(w0), v1 = _mm256_set1_ps(w1);
            const __m256 v2 = _mm256_set1_ps(w2), v3 = _mm256_set1_ps(w3);
            float* out = dst + q * dst_step;
            const int nt = stream && !(len & 7) && !((size_t)out & 31);
            for (j = 0; j + 8 <= len; j += 8) {
                const __m256 ab = _mm256_add_ps(_mm256_mul_ps(v0, _mm256_loadu_ps(a + j)),
                                                _mm256_mul_ps(v1, _mm256_loadu_ps(b + j)));
                const __m256 cd = _mm256_add_ps(_mm256_mul_ps(v2, _mm256_loadu_ps(c + j)),
                                                _mm256_mul_ps(v3, _mm256_loadu_ps(d + j)));
                const __m256 v = _mm256_add_ps(ab, cd);
                if (nt)
                    _mm256_stream_ps(out + j, v);
                else
                    _mm256_storeu_ps(out + j, v);
            }
            for (; j < len; j++)
                out[j] = (w0 * a[j] + w1 * b[j]) + (w2 * c[j] + w3 * d[j]);
        }
        return ~inside & 0xFFu;
    }
    static void irgrid_deform_select(int allow_simd) {
        irgrid_apply_taps_f32 = irgrid_apply_taps_f32_base;
        irgrid_apply_taps_f64 = irgrid_apply_taps_f64_base;
        irgrid_transpose_f32 = 0;
        irgrid_interior8_f32 = 0;
        irgrid_stream_taps_f32 = irgrid_stream_taps_f32_none;
        irgrid_deform_simd = "baseline";
        __builtin_cpu_init();
        if (allow_simd && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            irgrid_apply_taps_f32 = irgrid_apply_taps_f32_avx2;
            irgrid_apply_taps_f64 = irgrid_apply_taps_f64_avx2;
            irgrid_transpose_f32 = irgrid_transpose_f32_avx2;
            irgrid_interior8_f32 = irgrid_interior8_f32_avx2;
            irgrid_stream_taps_f32 = irgrid_stream_taps_f32_avx2;
            irgrid_deform_simd = "avx2+fma";
        }
    }
    #else
    static void irgrid_deform_select(int allow_simd) { (void)allow_simd; }
    static int irgrid_stream_taps_f32(const float* x, const ptrdiff_t* off, const float* w, ptrdiff_t n,
                                      float* dst, ptrdiff_t len) {
        (void)x; (void)off; (void)w; (void)n; (void)dst; (void)len; return 0;
    }
    static void irgrid_store_fence(void) {}
    #endif
    """
    void irgrid_apply_taps_f32(const float* x, const Py_ssize_t* off, const float* w, Py_ssize_t n, float* dst,
                               Py_ssize_t length) noexcept nogil
    void irgrid_apply_taps_f64(const double* x, const Py_ssize_t* off, const double* w, Py_ssize_t n,
                               double* dst, Py_ssize_t length) noexcept nogil
    ctypedef void (*transpose_f32_fn)(const float* src, Py_ssize_t ss, float* dst, Py_ssize_t ds, Py_ssize_t r0,
                                      Py_ssize_t r1, Py_ssize_t c0, Py_ssize_t c1, const float* bias) noexcept nogil
    transpose_f32_fn irgrid_transpose_f32
    ctypedef unsigned (*interior8_f32_fn)(const float* x, const float* base_y, const float* base_x,
                                          const float* off_y, const float* off_x, const float* mask, Py_ssize_t H,
                                          Py_ssize_t W, Py_ssize_t sy, Py_ssize_t sx, float* dst, Py_ssize_t dst_step,
                                          Py_ssize_t length, int stream) noexcept nogil
    interior8_f32_fn irgrid_interior8_f32
    int irgrid_stream_taps_f32(const float* x, const Py_ssize_t* off, const float* w, Py_ssize_t n, float* dst,
                               Py_ssize_t length) noexcept nogil
    void irgrid_store_fence() noexcept nogil
    void irgrid_deform_select(int allow_simd) noexcept nogil
    const char* irgrid_deform_simd


def select_simd(bint allow) -> str:
    """Choose the tap loop: AVX2+FMA when `allow` and the CPU has both (the default, set at import
    unless IRGRID_SIMD=0, as for GridSample), else the baseline build (tests run both). Returns the one
    in use: "avx2+fma" or "baseline".
    Not to be called while a kernel runs."""
    irgrid_deform_select(allow)
    return irgrid_deform_simd.decode()


select_simd(os.environ.get("IRGRID_SIMD", "").strip() != "0")

cdef enum Boundary:
    BOUNDARY_ZEROS = 0
    BOUNDARY_EDGE = 1

# Output points per work chunk: each chunk writes its points' full column rows.
cdef enum:
    CHUNK_POINTS = 16


cdef inline Py_ssize_t floor_index(floating x) noexcept nogil:
    """floor of a coordinate already clamped to +-2**52 (exact there; no libm call)."""
    cdef Py_ssize_t i = <Py_ssize_t>x
    return i - 1 if x < <floating>i else i


cdef inline PointStatus linear_taps(floating x, Py_ssize_t length, Py_ssize_t stride, int boundary,
                                    Py_ssize_t* offsets, floating* weights, Py_ssize_t* count) noexcept nogil:
    """The (at most 2) taps of one dim at pixel coordinate x: flat offsets and linear weights."""
    cdef Py_ssize_t lo, hi
    cdef floating frac
    cdef Py_ssize_t n = 0
    if x != x:
        return POINT_NAN
    if boundary == BOUNDARY_EDGE and not (x >= 0 and x < length):
        return POINT_ZERO
    x = clamp_coordinate(x)
    lo = floor_index(x)
    frac = x - <floating>lo
    hi = lo + 1
    if boundary == BOUNDARY_EDGE and hi > length - 1:
        hi = length - 1
    if 0 <= lo < length:
        offsets[0] = lo * stride
        weights[0] = 1 - frac
        n = 1
    if frac != 0 and 0 <= hi < length:
        offsets[n] = hi * stride
        weights[n] = frac
        n += 1
    count[0] = n
    return POINT_OK if n > 0 else POINT_ZERO


cdef inline void apply_taps(const floating* x, const Py_ssize_t* off, const floating* w, Py_ssize_t n,
                            floating* dst, Py_ssize_t length, bint stream) noexcept nogil:
    if floating is float:
        if stream and irgrid_stream_taps_f32(x, off, w, n, dst, length):
            return
        irgrid_apply_taps_f32(x, off, w, n, dst, length)
    else:
        irgrid_apply_taps_f64(x, off, w, n, dst, length)


cdef inline Py_ssize_t point_taps(const Py_ssize_t* dim_off, const floating* dim_w, const Py_ssize_t* dim_n,
                                  Py_ssize_t rank, floating scale, Py_ssize_t* off, floating* wt) noexcept nogil:
    """A point's taps from its per-dim taps (dim d's at dim_off/dim_w + 2 * d, dim_n[d] of them),
    weights (scale * w_0) * w_1 * ...: expanded forward, dim d doubling the list with its second
    tap (so the last dim varies slowest). Returns the tap count, a power of two."""
    cdef Py_ssize_t d, e, count = 1
    cdef Py_ssize_t lo_off, hi_off
    cdef floating lo_w, hi_w, w0_lo, w0_hi
    cdef Py_ssize_t o2[4]
    cdef floating w2[4]
    # The common 2-D and 3-D cases unrolled (same sums and products as the loop below); with setup.py's
    # NO_SLP, 3-D DeformConv 0.9x the time of the loop.
    if rank == 2 and dim_n[0] == 2 and dim_n[1] == 2:
        w0_lo, w0_hi = scale * dim_w[0], scale * dim_w[1]
        off[0], wt[0] = dim_off[0] + dim_off[2], w0_lo * dim_w[2]
        off[1], wt[1] = dim_off[1] + dim_off[2], w0_hi * dim_w[2]
        off[2], wt[2] = dim_off[0] + dim_off[3], w0_lo * dim_w[3]
        off[3], wt[3] = dim_off[1] + dim_off[3], w0_hi * dim_w[3]
        return 4
    if rank == 3 and dim_n[0] == 2 and dim_n[1] == 2 and dim_n[2] == 2:
        w0_lo, w0_hi = scale * dim_w[0], scale * dim_w[1]
        o2[0], w2[0] = dim_off[0] + dim_off[2], w0_lo * dim_w[2]
        o2[1], w2[1] = dim_off[1] + dim_off[2], w0_hi * dim_w[2]
        o2[2], w2[2] = dim_off[0] + dim_off[3], w0_lo * dim_w[3]
        o2[3], w2[3] = dim_off[1] + dim_off[3], w0_hi * dim_w[3]
        for e in range(4):
            off[e], wt[e] = o2[e] + dim_off[4], w2[e] * dim_w[4]
            off[4 + e], wt[4 + e] = o2[e] + dim_off[5], w2[e] * dim_w[5]
        return 8
    off[0] = 0
    wt[0] = scale
    for d in range(rank):
        lo_off, lo_w = dim_off[2 * d], dim_w[2 * d]
        if dim_n[d] == 2:
            hi_off, hi_w = dim_off[2 * d + 1], dim_w[2 * d + 1]
            for e in range(count):
                off[count + e] = off[e] + hi_off
                wt[count + e] = wt[e] * hi_w
                off[e] = off[e] + lo_off
                wt[e] = wt[e] * lo_w
            count = 2 * count
        else:
            for e in range(count):
                off[e] = off[e] + lo_off
                wt[e] = wt[e] * lo_w
    return count


cdef inline void sample_rank(const floating* x, const floating* offsets, const floating* mask, floating* col,
                             Py_ssize_t rank, const Py_ssize_t* in_dims, const Py_ssize_t* in_strides,
                             const Py_ssize_t* out_dims, const Py_ssize_t* kernel, const Py_ssize_t* strides,
                             const Py_ssize_t* dilations, const Py_ssize_t* pads_begin, Py_ssize_t channels,
                             Py_ssize_t points, Py_ssize_t kernel_size, Py_ssize_t groups,
                             Py_ssize_t offset_groups, bint has_offsets, bint has_mask, int boundary,
                             Py_ssize_t tile_start, Py_ssize_t tile_points, Py_ssize_t start, Py_ssize_t stop,
                             bint stream) noexcept nogil:
    """Column rows of output points [start, stop) (absolute indices, at most CHUNK_POINTS) for every
    group; inlined per rank by sample_points, so the per-dim loops of the common ranks unroll.

    x: (*in_dims, C); in_strides: element strides of the spatial dims in x (channels included);
    offsets: (G * K * rank, points); mask: (G * K, points); col: (groups, tile_points, K * Cg)
    holding points [tile_start, tile_start + tile_points). Kernel taps outer, points inner: a tap's
    offset and mask rows are read contiguously (walking every tap per point touched G * K * (r + 1)
    rows `points` apart, often a multiple of 4 KiB, so all in one L1 set).
    """
    cdef Py_ssize_t base[CHUNK_POINTS * MAX_RANK]  # o_d * stride_d - pad_begin_d per point of the chunk
    cdef Py_ssize_t kidx[MAX_RANK]  # kernel tap index per dim (an odometer over k)
    cdef Py_ssize_t koff[MAX_RANK]  # kidx_d * dilation_d
    cdef Py_ssize_t tap_off[MAX_TAPS]
    cdef floating tap_w[MAX_TAPS]
    cdef Py_ssize_t dim_off[2 * MAX_RANK]
    cdef floating dim_w[2 * MAX_RANK]
    cdef Py_ssize_t dim_n[MAX_RANK]
    cdef Py_ssize_t group_channels = channels // groups, offset_channels = channels // offset_groups
    cdef Py_ssize_t row_length = kernel_size * group_channels, block = tile_points * row_length
    cdef Py_ssize_t p, d, k, g, q, rest, count, c, c_first, c_end, gc, gc_first, seg_end, j, tap
    cdef floating pos
    cdef PointStatus status
    cdef floating* dst
    cdef float fy[8]
    cdef float fx[8]
    cdef const float* off_y
    cdef const float* off_x
    cdef const float* scale
    cdef unsigned long todo
    cdef unsigned left
    cdef bint interior8 = False
    for p in range(start, stop):
        rest = p
        for d in range(rank - 1, -1, -1):
            base[(p - start) * rank + d] = (rest % out_dims[d]) * strides[d] - pads_begin[d]
            rest = rest // out_dims[d]
    for g in range(offset_groups):
        c_first = g * offset_channels
        c_end = c_first + offset_channels
        gc_first = c_first // group_channels
        if floating is float:  # 2-D f32, the offset group within one convolution group (streamed or not)
            interior8 = (rank == 2 and irgrid_interior8_f32 != NULL
                         and c_end <= (gc_first + 1) * group_channels)
        for d in range(rank):
            kidx[d] = 0
            koff[d] = 0
        for k in range(kernel_size):
            tap = g * kernel_size + k
            todo = (<unsigned long>1 << (stop - start)) - 1  # points left to the scalar path
            if floating is float:
                q = 0
                while interior8 and q + 8 <= stop - start:
                    for j in range(8):
                        fy[j] = <float>(base[(q + j) * 2] + koff[0])
                        fx[j] = <float>(base[(q + j) * 2 + 1] + koff[1])
                    off_y = off_x = scale = NULL
                    if has_offsets:
                        off_y = offsets + tap * 2 * points + start + q
                        off_x = off_y + points
                    if has_mask:
                        scale = mask + tap * points + start + q
                    left = irgrid_interior8_f32(x + c_first, fy, fx, off_y, off_x, scale, in_dims[0], in_dims[1],
                                                in_strides[0], in_strides[1],
                                                col + gc_first * block + (start + q - tile_start) * row_length
                                                + k * group_channels + c_first - gc_first * group_channels,
                                                row_length, offset_channels, stream)
                    todo &= ~(<unsigned long>(~left & 0xFF) << q)
                    q += 8
            for p in range(start, stop):
                if not (todo >> (p - start)) & 1:
                    continue
                status = POINT_OK
                for d in range(rank):
                    pos = <floating>(base[(p - start) * rank + d] + koff[d])
                    if has_offsets:
                        pos = pos + offsets[(tap * rank + d) * points + p]
                    status = linear_taps(pos, in_dims[d], in_strides[d], boundary, dim_off + 2 * d, dim_w + 2 * d,
                                         dim_n + d)
                    if status == POINT_NAN:
                        break
                    if status == POINT_ZERO:  # a NaN in a later dim still makes the point NaN
                        for q in range(d + 1, rank):
                            pos = <floating>(base[(p - start) * rank + q] + koff[q])
                            if has_offsets:
                                pos = pos + offsets[(tap * rank + q) * points + p]
                            if pos != pos:
                                status = POINT_NAN
                        break
                count = 0
                if status == POINT_OK:
                    count = point_taps(dim_off, dim_w, dim_n, rank, mask[tap * points + p] if has_mask else 1,
                                       tap_off, tap_w)
                # The group's channels, split where a convolution group ends.
                c, gc = c_first, gc_first
                while c < c_end:
                    seg_end = min(c_end, (gc + 1) * group_channels)
                    dst = (col + gc * block + (p - tile_start) * row_length + k * group_channels
                           + c - gc * group_channels)
                    if count > 0:
                        apply_taps(x + c, tap_off, tap_w, count, dst, seg_end - c, stream)
                    else:
                        for j in range(seg_end - c):
                            dst[j] = NAN if status == POINT_NAN else 0
                    c = seg_end
                    gc = gc + 1
            for d in range(rank - 1, -1, -1):  # next kernel tap
                kidx[d] += 1
                koff[d] += dilations[d]
                if kidx[d] < kernel[d]:
                    break
                kidx[d] = 0
                koff[d] = 0


cdef void sample_points(const floating* x, const floating* offsets, const floating* mask, floating* col,
                        Py_ssize_t rank, const Py_ssize_t* in_dims, const Py_ssize_t* in_strides,
                        const Py_ssize_t* out_dims, const Py_ssize_t* kernel, const Py_ssize_t* strides,
                        const Py_ssize_t* dilations, const Py_ssize_t* pads_begin, Py_ssize_t channels,
                        Py_ssize_t points, Py_ssize_t kernel_size, Py_ssize_t groups, Py_ssize_t offset_groups,
                        bint has_offsets, bint has_mask, int boundary, Py_ssize_t tile_start,
                        Py_ssize_t tile_points, Py_ssize_t start, Py_ssize_t stop, bint stream) noexcept nogil:
    """sample_rank with the rank a constant for 2-D and 3-D."""
    if rank == 2:
        sample_rank(x, offsets, mask, col, 2, in_dims, in_strides, out_dims, kernel, strides, dilations,
                    pads_begin, channels, points, kernel_size, groups, offset_groups, has_offsets, has_mask,
                    boundary, tile_start, tile_points, start, stop, stream)
    elif rank == 3:
        sample_rank(x, offsets, mask, col, 3, in_dims, in_strides, out_dims, kernel, strides, dilations,
                    pads_begin, channels, points, kernel_size, groups, offset_groups, has_offsets, has_mask,
                    boundary, tile_start, tile_points, start, stop, stream)
    else:
        sample_rank(x, offsets, mask, col, rank, in_dims, in_strides, out_dims, kernel, strides, dilations,
                    pads_begin, channels, points, kernel_size, groups, offset_groups, has_offsets, has_mask,
                    boundary, tile_start, tile_points, start, stop, stream)
    if stream:
        irgrid_store_fence()


def deformable_columns(const floating[::1] x, const floating[::1] offsets, const floating[::1] mask,
                       floating[::1] col, Py_ssize_t channels, const Py_ssize_t[::1] in_dims,
                       const Py_ssize_t[::1] out_dims, const Py_ssize_t[::1] kernel,
                       const Py_ssize_t[::1] strides, const Py_ssize_t[::1] dilations,
                       const Py_ssize_t[::1] pads_begin, Py_ssize_t groups, Py_ssize_t offset_groups,
                       bint has_offsets, bint has_mask, bint edge_rule, Py_ssize_t tile_start,
                       Py_ssize_t tile_stop, int num_threads, bint stream_columns=False) -> None:
    """Fill col (groups, tile_stop - tile_start, K * C / groups) for output points [tile_start,
    tile_stop) of one item.

    x: (*in_dims, C) flat (channels-last); offsets (G * K * r, points) and mask (G * K, points) flat,
    ignored (any length) unless has_offsets / has_mask. edge_rule: BOUNDARY_EDGE, else
    BOUNDARY_ZEROS. The 2**r taps of a point must fit MAX_TAPS (r <= 12).
    """
    cdef Py_ssize_t rank = in_dims.shape[0]
    cdef Py_ssize_t plane = 1, points = 1, kernel_size = 1, d, chunk, start, n_chunks
    cdef Py_ssize_t tile_points = tile_stop - tile_start
    cdef Py_ssize_t[MAX_RANK] in_strides
    cdef int boundary = BOUNDARY_EDGE if edge_rule else BOUNDARY_ZEROS
    if rank < 1 or rank > MAX_RANK or (<Py_ssize_t>1 << rank) > MAX_TAPS:
        raise ValueError(f"{rank} spatial dims: 2**rank taps per point exceed the kernel's {MAX_TAPS}")
    if (out_dims.shape[0] != rank or kernel.shape[0] != rank or strides.shape[0] != rank
            or dilations.shape[0] != rank or pads_begin.shape[0] != rank):
        raise ValueError("every spatial parameter needs one value per spatial dim")
    if offset_groups < 1 or channels % offset_groups or groups < 1 or channels % groups:
        raise ValueError("channels must be a multiple of groups and of offset_groups")
    for d in range(rank - 1, -1, -1):
        if in_dims[d] < 1 or out_dims[d] < 1 or kernel[d] < 1 or strides[d] < 1 or dilations[d] < 1:
            raise ValueError("dims, kernel, strides and dilations must be positive")
        in_strides[d] = plane * channels
        plane *= in_dims[d]
        points *= out_dims[d]
        kernel_size *= kernel[d]
    if not 0 <= tile_start <= tile_stop <= points:
        raise ValueError("tile outside the output points")
    if x.shape[0] != channels * plane or col.shape[0] != channels * kernel_size * tile_points:
        raise ValueError("data or column buffer size does not match the shapes")
    if has_offsets and offsets.shape[0] != offset_groups * kernel_size * rank * points:
        raise ValueError("offset buffer size does not match the shapes")
    if has_mask and mask.shape[0] != offset_groups * kernel_size * points:
        raise ValueError("mask buffer size does not match the shapes")
    if tile_points == 0 or channels == 0:
        return
    n_chunks = (tile_points + CHUNK_POINTS - 1) // CHUNK_POINTS
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            for chunk in range(n_chunks):
                start = tile_start + chunk * CHUNK_POINTS
                sample_points(&x[0], &offsets[0], &mask[0], &col[0], rank, &in_dims[0], in_strides,
                              &out_dims[0], &kernel[0], &strides[0], &dilations[0], &pads_begin[0], channels,
                              points, kernel_size, groups, offset_groups, has_offsets, has_mask, boundary,
                              tile_start, tile_points, start, min(start + CHUNK_POINTS, tile_stop), stream_columns)
        return
    with nogil, parallel(num_threads=num_threads):
        irgrid_free_worker()  # every worker, even one a dynamic schedule leaves without a chunk
        for chunk in prange(n_chunks, schedule="dynamic"):
            start = tile_start + chunk * CHUNK_POINTS
            sample_points(&x[0], &offsets[0], &mask[0], &col[0], rank, &in_dims[0], in_strides,
                          &out_dims[0], &kernel[0], &strides[0], &dilations[0], &pads_begin[0], channels,
                          points, kernel_size, groups, offset_groups, has_offsets, has_mask, boundary,
                          tile_start, tile_points, start, min(start + CHUNK_POINTS, tile_stop), stream_columns)


cdef void transpose_block(const floating* src, Py_ssize_t src_stride, floating* dst, Py_ssize_t dst_stride,
                         Py_ssize_t r0, Py_ssize_t r1, Py_ssize_t c0, Py_ssize_t c1,
                         const floating* bias) noexcept nogil:
    """dst[c, r] = src[r, c] (+ bias[c]) for rows r in [r0, r1) and columns c in [c0, c1): the AVX2
    kernel for f32 where selected, else 8 x 8 tiles in plain C (8 source rows fit an 8-way L1 set
    even when the row stride is a power of two)."""
    cdef Py_ssize_t rb, re, cb, ce, r, c
    if floating is float:
        if irgrid_transpose_f32 != NULL:
            irgrid_transpose_f32(src, src_stride, dst, dst_stride, r0, r1, c0, c1, bias)
            return
    rb = r0
    while rb < r1:
        re = min(rb + 8, r1)
        cb = c0
        while cb < c1:
            ce = min(cb + 8, c1)
            for c in range(cb, ce):
                if bias != NULL:
                    for r in range(rb, re):
                        dst[c * dst_stride + r] = src[r * src_stride + c] + bias[c]
                else:
                    for r in range(rb, re):
                        dst[c * dst_stride + r] = src[r * src_stride + c]
            cb = ce
        rb = re


# Transpose work unit: a block of TRANSPOSE_BLOCK x TRANSPOSE_BLOCK source elements (16 KiB of f32).
cdef Py_ssize_t TRANSPOSE_BLOCK = 64


def transpose(const floating[:, :] src, floating[:, :] dst, bias, int num_threads) -> None:
    """dst (C, R) = src (R, C) transposed, plus bias (C,) per row of dst when given; both with unit
    inner stride. Parallel over 64 x 64 blocks of the source (so a plane of few rows, like the data
    of a 64-channel layer, still splits)."""
    cdef Py_ssize_t rows = src.shape[0], cols = src.shape[1], blocks, block, row_blocks, col_blocks, r0, c0
    cdef Py_ssize_t src_stride = src.strides[0] // sizeof(floating), dst_stride = dst.strides[0] // sizeof(floating)
    cdef const floating[::1] b
    cdef const floating* bias_ptr = NULL
    if dst.shape[0] != cols or dst.shape[1] != rows:
        raise ValueError("dst must be src's transpose in shape")
    if rows == 0 or cols == 0:
        return
    if src.strides[1] != sizeof(floating) or dst.strides[1] != sizeof(floating):
        raise ValueError("src and dst need a unit inner stride")
    if bias is not None:
        b = bias
        if b.shape[0] != cols:
            raise ValueError("bias needs one value per destination row")
        bias_ptr = &b[0]
    row_blocks = (rows + TRANSPOSE_BLOCK - 1) // TRANSPOSE_BLOCK
    col_blocks = (cols + TRANSPOSE_BLOCK - 1) // TRANSPOSE_BLOCK
    blocks = row_blocks * col_blocks
    num_threads = max(min(num_threads, blocks), 1)
    if num_threads == 1:
        with nogil:
            transpose_block(&src[0, 0], src_stride, &dst[0, 0], dst_stride, 0, rows, 0, cols, bias_ptr)
        return
    for block in prange(blocks, nogil=True, schedule="static", num_threads=num_threads):
        irgrid_free_worker()
        r0 = (block // col_blocks) * TRANSPOSE_BLOCK
        c0 = (block % col_blocks) * TRANSPOSE_BLOCK
        transpose_block(&src[0, 0], src_stride, &dst[0, 0], dst_stride, r0, min(r0 + TRANSPOSE_BLOCK, rows),
                        c0, min(c0 + TRANSPOSE_BLOCK, cols), bias_ptr)

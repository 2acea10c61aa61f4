/* The convolution engine's own GEMM (gemm.h). Blocks of 4 rows by IRGRID_GEMM_COLS columns share each
   load of b; the column loop is the vectorised one (AVX2 where the CPU has it and the process allows
   it, cpu.h; else the baseline build), and since every product and sum rounds on its own either gives
   the same bits. */
#include "gemm.h"

#include "cpu.h"

#include <string.h>

/* Columns of one block's accumulators (per row: 1 KiB of f32, 2 of f64). */
#define IRGRID_GEMM_COLS 256

#define IRGRID_GEMM_BLOCK(T, name)                                                                          \
    static inline __attribute__((always_inline)) void name(const T* a, const T* b, T* out, irgrid_index r0,   \
                                                           irgrid_index r1, irgrid_index inner,               \
                                                           irgrid_index cols) {                               \
        T acc[4][IRGRID_GEMM_COLS];                                                                          \
        irgrid_index i, j, o, c0, n;                                                                         \
        for (i = r0; i < r1; i += 4) {                                                                       \
            const irgrid_index m = r1 - i < 4 ? r1 - i : 4;                                                  \
            const T* a0 = a + i * inner;                                                                     \
            const T* a1 = m > 1 ? a0 + inner : a0;                                                           \
            const T* a2 = m > 2 ? a0 + 2 * inner : a0;                                                       \
            const T* a3 = m > 3 ? a0 + 3 * inner : a0;                                                       \
            for (c0 = 0; c0 < cols; c0 += IRGRID_GEMM_COLS) {                                                \
                n = cols - c0 < IRGRID_GEMM_COLS ? cols - c0 : IRGRID_GEMM_COLS;                             \
                memset(acc, 0, sizeof(acc));                                                                 \
                for (j = 0; j < inner; j++) {                                                                \
                    const T v0 = a0[j], v1 = a1[j], v2 = a2[j], v3 = a3[j];                                  \
                    const T* bj = b + j * cols + c0;                                                         \
                    for (o = 0; o < n; o++) {                                                                \
                        const T w = bj[o];                                                                   \
                        acc[0][o] = acc[0][o] + v0 * w;                                                      \
                        acc[1][o] = acc[1][o] + v1 * w;                                                      \
                        acc[2][o] = acc[2][o] + v2 * w;                                                      \
                        acc[3][o] = acc[3][o] + v3 * w;                                                      \
                    }                                                                                        \
                }                                                                                            \
                for (j = 0; j < m; j++)                                                                      \
                    memcpy(out + (i + j) * cols + c0, acc[j], (size_t)n * sizeof(T));                       \
            }                                                                                                \
        }                                                                                                    \
    }

IRGRID_GEMM_BLOCK(float, irgrid_gemm_rows_f32)
IRGRID_GEMM_BLOCK(double, irgrid_gemm_rows_f64)

static void irgrid_gemm_base(const irgrid_gemm* p, irgrid_index r0, irgrid_index r1) {
    if (p->f64)
        irgrid_gemm_rows_f64((const double*)p->a, (const double*)p->b, (double*)p->out, r0, r1, p->inner, p->cols);
    else
        irgrid_gemm_rows_f32((const float*)p->a, (const float*)p->b, (float*)p->out, r0, r1, p->inner, p->cols);
}

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("avx2"))) static void irgrid_gemm_avx2(const irgrid_gemm* p, irgrid_index r0, irgrid_index r1) {
    if (p->f64)
        irgrid_gemm_rows_f64((const double*)p->a, (const double*)p->b, (double*)p->out, r0, r1, p->inner, p->cols);
    else
        irgrid_gemm_rows_f32((const float*)p->a, (const float*)p->b, (float*)p->out, r0, r1, p->inner, p->cols);
}
#else
static void irgrid_gemm_avx2(const irgrid_gemm* p, irgrid_index r0, irgrid_index r1) { irgrid_gemm_base(p, r0, r1); }
#endif

int irgrid_gemm_plan(irgrid_gemm* p) {
    const irgrid_index limit = (irgrid_index)IRGRID_INDEX_LIMIT;
    memset(&p->schedule, 0, sizeof(p->schedule));
    if (p->rows < 0 || p->inner < 0 || p->cols < 0)
        return IRGRID_E_DIMS;
    if ((p->inner > 0 && (p->rows > limit / p->inner || p->cols > limit / p->inner))
            || (p->cols > 0 && p->rows > limit / p->cols))
        return IRGRID_E_SIZE;
    p->schedule.phases = 1;
    if (p->cols > 0)
        p->schedule.units[0] = (p->rows + IRGRID_GEMM_ROWS - 1) / IRGRID_GEMM_ROWS;
    return IRGRID_OK;
}

void irgrid_gemm_run(const irgrid_gemm* p, int phase, void* shared, void* worker_scratch, irgrid_index begin,
                     irgrid_index end) {
    const irgrid_index r0 = begin * IRGRID_GEMM_ROWS;
    const irgrid_index r1 = end * IRGRID_GEMM_ROWS < p->rows ? end * IRGRID_GEMM_ROWS : p->rows;
    (void)phase; (void)shared; (void)worker_scratch;
    if (irgrid_cpu_avx2())
        irgrid_gemm_avx2(p, r0, r1);
    else
        irgrid_gemm_base(p, r0, r1);
}

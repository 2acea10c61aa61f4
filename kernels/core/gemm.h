/* The convolution engine's own GEMM: out (rows, cols) = a (rows, inner) x b (inner, cols), all
   row-major and contiguous, for the column matrix times the filters where OpenVINO's MatMul does not
   run it (f64, which OpenVINO's CPU plugin computes in f32; IRGRID_GEMM=numpy; processes forked after
   OpenVINO ran), in irgrid's runtime and the native library alike (irgrid/ops/im2col.py).

   Each output is the sum over j = 0 .. inner - 1, in that order, of a[i, j] * b[j, o], every product
   and every sum rounded on its own (-ffp-contract=off, no FMA). So the bits depend on nothing else: not
   on the vector width, the blocking, the build or the thread count. The work unit is
   IRGRID_GEMM_ROWS rows of out. */
#ifndef IRGRID_GEMM_H
#define IRGRID_GEMM_H

#include "guards.h"
#include "schedule.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of out per work unit. */
#define IRGRID_GEMM_ROWS 16

typedef struct {
    int f64;                          /* 0: float, 1: double */
    irgrid_index rows, inner, cols;   /* out is (rows, cols), a (rows, inner), b (inner, cols) */
    const void* a;
    const void* b;
    void* out;
    irgrid_schedule schedule;         /* derived by irgrid_gemm_plan: one phase of ceil(rows / IRGRID_GEMM_ROWS) units */
} irgrid_gemm;

int irgrid_gemm_plan(irgrid_gemm* p);
void irgrid_gemm_run(const irgrid_gemm* p, int phase, void* shared, void* worker_scratch, irgrid_index begin,
                     irgrid_index end);

#ifdef __cplusplus
}
#endif

#endif

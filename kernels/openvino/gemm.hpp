// The GEMMs of the native DeformConv, the ones irgrid's runtime runs for the same problem (irgrid/ops/im2col.py),
// so both give the same bits: OpenVINO's MatMul at f32 for f32 (the one-op models irgrid/dense.py compiles),
// else the C core's own GEMM (kernels/core/gemm.h: f64, or IRGRID_GEMM=numpy).
#pragma once

#include <cstddef>

extern "C" {
#include "scratch.h"
}

namespace irgrid_ov {

// Whether f32 GEMMs run on OpenVINO's MatMul: unless IRGRID_GEMM=numpy (irgrid/dense.py's `backend`).
bool gemm_on_openvino();

// out (m, n) = a (m, k) x b, with b (k, n), or (n, k) transposed when transpose_b, plus bias[i] on row i
// when bias is given: OpenVINO's MatMul (+ Add) compiled for the CPU at f32 with `threads` threads and one
// stream, as irgrid/dense.py's `matmul` compiles it. All arrays contiguous.
void openvino_matmul(const float* a, const float* b, const float* bias, float* out, size_t m, size_t k, size_t n,
                     bool transpose_b, int threads);

// out (m, n) = a (m, k) x b (k, n) on the C core's GEMM, over the arena's threads.
template <class T>
void own_gemm(const T* a, const T* b, T* out, size_t m, size_t k, size_t n, int threads, irgrid_scratch_cache& cache);

}  // namespace irgrid_ov

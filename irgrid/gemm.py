"""Matrix products for the convolution layers (the GEMM after the im2col kernels).

Backend: numpy (its bundled OpenBLAS) by default, or a MatMul compiled once with OpenVINO when
`IRGRID_GEMM=openvino` (f32 only). Measured on the 2-vCPU AMD EPYC (Zen 3, AVX2) development VM, a
machine shared with other jobs (best of 8-12 calls, 256x2304 . 2304x3400 f32, 2 threads):
numpy 2.4 (OpenBLAS 0.3.31) 136-180 GFLOP/s, OpenVINO 2026 MatMul (f32 hint, INFERENCE_NUM_THREADS=2,
`infer(share_inputs=True)`) 65-90 GFLOP/s, plus about 200 us per call on small products. Two Zen 3
cores peak near 200 GFLOP/s in f32 (2 x 32 FLOP per cycle at about 3 GHz), so numpy is close to it;
older numpy wheels whose OpenBLAS takes this CPU for Haswell measured about 54 GFLOP/s, which is why
the switch exists, and benchmarks/bench.py prints both rates in the same run. OpenVINO's MatMul
computes f64 inputs in f32 (its f64 output carries f32 accuracy), so f64 always uses numpy.

Threads: numpy's GEMM runs on OpenBLAS's own pool (OPENBLAS_NUM_THREADS), not irgrid's thread count;
the OpenVINO backend compiles one MatMul per thread count. Neither makes results depend on irgrid's
thread count: OpenVINO's MatMul gave bitwise equal products at 1 and 2 threads
(tests/test_deform_conv_semantics.py).
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

BACKENDS = ("numpy", "openvino")


def backend() -> str:
    """The configured backend (env IRGRID_GEMM, default numpy); unknown names fall back to numpy."""
    name = os.environ.get("IRGRID_GEMM", "numpy").strip().lower()
    return name if name in BACKENDS else "numpy"


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, threads: int) -> np.ndarray:
    """out[...] = a @ b for 2-D C-contiguous a (M, K) and b (K, N) of one float dtype."""
    if backend() == "openvino" and a.dtype == np.float32 and out.dtype == np.float32:
        compiled = _openvino_matmul(a.shape[0], a.shape[1], b.shape[1], max(1, int(threads)))
        with compiled.lock:  # one infer request per compiled MatMul: calls from several threads queue
            result = compiled.request.infer([a, b], share_inputs=True)[0]
            out[...] = result
        return out
    return np.matmul(a, b, out=out)


class _CompiledMatMul:
    def __init__(self, m: int, k: int, n: int, threads: int) -> None:
        import openvino as ov
        import openvino.opset13 as ops

        left = ops.parameter([m, k], ov.Type.f32)
        right = ops.parameter([k, n], ov.Type.f32)
        model = ov.Model([ops.matmul(left, right, False, False)], [left, right], "irgrid_gemm")
        compiled = ov.Core().compile_model(model, "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1})
        self.request = compiled.create_infer_request()
        self.lock = threading.Lock()


@lru_cache(maxsize=64)
def _openvino_matmul(m: int, k: int, n: int, threads: int) -> _CompiledMatMul:
    """One compiled MatMul per (shapes, threads) (f32 only), kept for the process's lifetime."""
    return _CompiledMatMul(m, k, n, threads)

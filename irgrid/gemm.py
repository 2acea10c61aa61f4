"""Matrix products for the convolution layers (the GEMM after the im2col kernels).

Backend: for f32 a MatMul compiled once with OpenVINO (cached per shapes and thread count) by
default, numpy when `IRGRID_GEMM=numpy` or in a process forked after OpenVINO ran (irgrid.forks); f64
always numpy (OpenVINO's MatMul computes f64 inputs in f32: its f64 output carries f32 accuracy). Why
OpenVINO, measured on the 2-vCPU AMD EPYC (Zen 3, AVX2) development VM while other jobs shared it:
- numpy's OpenBLAS keeps its worker threads spinning after each product; beside irgrid's OpenMP
  im2col threads on 2 cores that stalls: a 16-channel 32x32 DCN layer took 0.65 ms per call
  (median) with OPENBLAS_NUM_THREADS=1 and 0.9 ms with OpenVINO's MatMul, but 32 ms with numpy's
  default threads (its best call 1.5 ms). OpenVINO's MatMul also honours irgrid's thread count,
  which numpy's OpenBLAS (its own OPENBLAS_NUM_THREADS) does not.
- Raw rate, 256x2304 . 2304x3400 f32, 2 threads, best of 8-12: numpy 2.4 (OpenBLAS 0.3.31)
  136-180 GFLOP/s, OpenVINO 2026 MatMul (f32 hint, INFERENCE_NUM_THREADS, `infer(share_inputs=True)`)
  65-90 GFLOP/s under that load; older numpy wheels whose OpenBLAS takes this CPU for Haswell
  measured about 54. Two Zen 3 cores peak near 200 GFLOP/s in f32. benchmarks/bench.py prints both
  rates in the same run, so the integrator can revisit the choice on a quiet machine.
- Per core (1 thread, CPU time, so other jobs on the VM matter less), OpenVINO's MatMul reaches
  72-78 GFLOP/s on (3400, 2304) . (2304, 256)^T, the shape deform_conv's neck case runs, near the
  ~78 GFLOP/s f32 FMA peak of a 2.45 GHz Zen 3 core (two cores: ~157). Compiling the filters in as
  a Constant was 5-13% faster, but costs 60-130 ms per new filter set and rounds differently from
  the parametric MatMul (results would depend on call history), so it is not done.
- On the Zen 4 (AVX-512) machine that replaced it, 2 threads, the shapes deform_conv runs: OpenVINO
  179-208 GFLOP/s on (4096, 576) . (576, 64) and 197-212 on the neck's (3400, 2304) . (2304, 256)
  against numpy's 157-166 and 187-190 (OpenBLAS 0.3.31); OpenVINO stays the default.
OpenVINO's MatMul gave bitwise equal products at 1 and 2 threads (tests/test_deform_conv_semantics.py),
so results do not depend on irgrid's thread count with either backend.
"""
from __future__ import annotations

import os
from functools import lru_cache, partial

import numpy as np

from .forks import fork_safe_lock, marks

BACKENDS = ("numpy", "openvino")


def backend() -> str:
    """The configured f32 backend (env IRGRID_GEMM, default openvino); unknown names give openvino."""
    name = os.environ.get("IRGRID_GEMM", "openvino").strip().lower()
    return name if name in BACKENDS else "openvino"


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, threads: int, *, transpose_b: bool = False,
           bias: np.ndarray | None = None) -> np.ndarray:
    """out[...] = a @ b (a @ b.T when transpose_b) for 2-D C-contiguous a (M, K) and b (K, N) or
    (N, K) of one float dtype, plus bias[i] on row i when a C-contiguous bias (M,) is given (on
    OpenVINO an Add in the compiled model, which fuses it into the MatMul's output stage); on
    OpenVINO a C-contiguous out is the MatMul's own output (no copy)."""
    if (backend() == "openvino" and a.dtype == np.float32 and out.dtype == np.float32
            and not marks.child_of_openvino):  # oneTBB may hang in a child forked after OpenVINO ran (forks.py)
        n = b.shape[0] if transpose_b else b.shape[1]
        compiled = _openvino_matmul(a.shape[0], a.shape[1], n, transpose_b, bias is not None, max(1, int(threads)))
        inputs = [a, b] if bias is None else [a, b, bias.reshape(-1, 1)]
        with compiled._lock:  # one infer request per compiled MatMul: calls from several threads queue
            if out.flags.c_contiguous:
                compiled.request.set_output_tensor(0, compiled.tensor(out))
                try:
                    compiled.request.infer(inputs, share_inputs=True, share_outputs=True)
                finally:  # the request must not keep the caller's array alive
                    compiled.request.set_output_tensor(0, compiled.own_output)
            else:
                out[...] = compiled.request.infer(inputs, share_inputs=True, share_outputs=True)[0]
        return out
    np.matmul(a, b.T if transpose_b else b, out=out)
    if bias is not None:
        out += bias[:, None]
    return out


class _CompiledMatMul:
    def __init__(self, m: int, k: int, n: int, transpose_b: bool, has_bias: bool, threads: int) -> None:
        import openvino as ov
        import openvino.opset13 as ops

        left = ops.parameter([m, k], ov.Type.f32)
        right = ops.parameter([n, k] if transpose_b else [k, n], ov.Type.f32)
        product, parameters = ops.matmul(left, right, False, transpose_b), [left, right]
        if has_bias:
            parameters.append(ops.parameter([m, 1], ov.Type.f32))
            product = ops.add(product, parameters[-1])
        model = ov.Model([product], parameters, "irgrid_gemm")
        compiled = _core().compile_model(model, "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1})
        self.request = compiled.create_infer_request()
        self.own_output = self.request.get_output_tensor(0)
        self.tensor = partial(ov.Tensor, shared_memory=True)
        self._lock = fork_safe_lock(self)
        marks.openvino = True


@lru_cache(maxsize=1)
def _core():
    """One OpenVINO Core for every compiled MatMul (creating a Core loads the plugins)."""
    import openvino as ov

    return ov.Core()


@lru_cache(maxsize=64)
def _openvino_matmul(m: int, k: int, n: int, transpose_b: bool, has_bias: bool, threads: int) -> _CompiledMatMul:
    """One compiled MatMul per (shapes, layout, bias or not, threads) (f32 only); the 64 most
    recently used are kept."""
    return _CompiledMatMul(m, k, n, transpose_b, has_bias, threads)

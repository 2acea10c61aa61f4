"""irgrid's runtime's dense layers on OpenVINO's CPU plugin: the f32 GEMM after the convolution
layers' im2col (`matmul`), and whole f32 layers OpenVINO runs much faster than numpy can
(`run_on_openvino`: Convolution, GroupConvolution, MaxPool, AvgPool).

Backend: for f32 a one-op OpenVINO model compiled once per shapes, attributes and thread count by
default; irgrid's own code (im2col and the convolution engine's GEMM, kernels/core/gemm.h, for
convolutions; irgrid's numpy glue for the others) when `IRGRID_GEMM=numpy` or in a process forked
after OpenVINO ran (irgrid.forks), and always for f64 (OpenVINO's CPU plugin computes f64 inputs in
f32: its f64 output carries f32 accuracy).

Why OpenVINO for the GEMM: numpy's OpenBLAS keeps its threads spinning beside irgrid's OpenMP im2col
threads and ignores irgrid's thread count; OpenVINO's MatMul honours it, matches or beats OpenBLAS on
the shapes the convolutions run, and gives bitwise equal products at 1 and 2 threads
(tests/ops/test_deform_conv_semantics.py), so results do not depend on irgrid's thread count with either
backend. The filters stay a Parameter: compiled in, they round differently and cost a compile each.
The native library's DeformConv compiles the same MatMul models (kernels/openvino/gemm.cpp) for the
same bits: keep the two in step.

Why OpenVINO for whole convolutions and pooling: several times faster than im2col or numpy per layer,
with the filters as a Parameter (one compiled model serves any filters, the same bits). Convolutions
whose result there would depend on the thread count (1-D, an output dim of 1) keep the im2col path
(`convolution_on_openvino`), so results never do. irgrid's numpy pooling follows what the CPU plugin
computes (irgrid/ops/glue/pooling.py), which runs it for f32.

Measurements: benchmarks/README.md, "Dense layers on OpenVINO".
"""
from __future__ import annotations

import os
from functools import lru_cache, partial
from typing import Callable, Sequence

import numpy as np

from .forks import fork_safe_lock, marks

BACKENDS = ("numpy", "openvino")


def backend() -> str:
    """The configured f32 backend (env IRGRID_GEMM, default openvino); unknown names give openvino."""
    name = os.environ.get("IRGRID_GEMM", "openvino").strip().lower()
    return name if name in BACKENDS else "openvino"


def on_openvino(*arrays: np.ndarray) -> bool:
    """Whether a product of these arrays runs on OpenVINO: all f32, the backend is OpenVINO, and this
    is no process forked after OpenVINO ran (oneTBB may hang there: irgrid.forks)."""
    return (backend() == "openvino" and all(a.dtype == np.float32 for a in arrays)
            and not marks.child_of_openvino)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, threads: int, *, transpose_b: bool = False,
           bias: np.ndarray | None = None) -> np.ndarray:
    """out[...] = a @ b (a @ b.T when transpose_b) on OpenVINO's MatMul, for arrays `on_openvino`
    accepts: 2-D C-contiguous f32 a (M, K) and b (K, N) or (N, K), plus bias[i] on row i when a
    C-contiguous bias (M,) is given (an Add in the compiled model, which fuses it into the MatMul's
    output stage); a C-contiguous out is the MatMul's own output (no copy)."""
    n = b.shape[0] if transpose_b else b.shape[1]
    compiled = _openvino_matmul(a.shape[0], a.shape[1], n, transpose_b, bias is not None, max(1, int(threads)))
    return compiled([a, b] if bias is None else [a, b, bias.reshape(-1, 1)], [out])[0]


def convolution_on_openvino(x: np.ndarray, w: np.ndarray, out_dims: tuple[int, ...]) -> bool:
    """Whether a Convolution of these arrays runs on OpenVINO: f32 2-D and 3-D convolutions whose output
    dims are all 2 or more, where OpenVINO's result does not depend on the thread count (module docstring)."""
    return on_openvino(x, w) and x.ndim >= 4 and min(out_dims) >= 2 and x.size > 0 and w.size > 0


def run_on_openvino(build: Callable[..., list], settings: tuple, inputs: Sequence[np.ndarray],
                    outs: Sequence[np.ndarray], threads: int) -> list[np.ndarray]:
    """outs[i][...] = output i of the one-op OpenVINO model `build(parameters, *settings)` on f32 inputs;
    compiled once per (build, input shapes, settings, threads)."""
    compiled = _compiled_layer(build, tuple(a.shape for a in inputs), settings, max(1, int(threads)))
    return compiled([np.ascontiguousarray(a) for a in inputs], outs)


class _OneOp:
    """A one-op OpenVINO model compiled for the CPU at f32 with one infer request: calls from several
    threads queue on its lock."""

    def __init__(self, model, threads: int) -> None:
        import openvino as ov

        compiled = _core().compile_model(model, "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1})
        self.request = compiled.create_infer_request()
        self.own_outputs = [self.request.get_output_tensor(i) for i in range(len(compiled.outputs))]
        self.tensor = partial(ov.Tensor, shared_memory=True)
        self._lock = fork_safe_lock(self)
        marks.openvino = True

    def __call__(self, inputs: list[np.ndarray], outs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Runs on C-contiguous inputs; each C-contiguous out is the model's own output (no copy)."""
        direct = [i for i, out in enumerate(outs) if out.flags.c_contiguous]
        with self._lock:
            for i in direct:
                self.request.set_output_tensor(i, self.tensor(outs[i]))
            try:
                results = self.request.infer(inputs, share_inputs=True, share_outputs=True)
                for i, out in enumerate(outs):
                    if i not in direct:
                        out[...] = results[i]
            finally:  # the request must not keep the caller's arrays alive
                for i in direct:
                    self.request.set_output_tensor(i, self.own_outputs[i])
        return list(outs)


@lru_cache(maxsize=1)
def _core():
    """One OpenVINO Core for every compiled model (creating a Core loads the plugins)."""
    import openvino as ov

    return ov.Core()


@lru_cache(maxsize=64)
def _openvino_matmul(m: int, k: int, n: int, transpose_b: bool, has_bias: bool, threads: int) -> _OneOp:
    """One compiled MatMul per (shapes, layout, bias or not, threads); the 64 most recently used are kept."""
    import openvino as ov
    import openvino.opset13 as ops

    left = ops.parameter([m, k], ov.Type.f32)
    right = ops.parameter([n, k] if transpose_b else [k, n], ov.Type.f32)
    product, parameters = ops.matmul(left, right, False, transpose_b), [left, right]
    if has_bias:
        parameters.append(ops.parameter([m, 1], ov.Type.f32))
        product = ops.add(product, parameters[-1])
    return _OneOp(ov.Model([product], parameters, "irgrid_gemm"), threads)


@lru_cache(maxsize=64)
def _compiled_layer(build: Callable[..., list], shapes: tuple[tuple[int, ...], ...], settings: tuple,
                    threads: int) -> _OneOp:
    """One compiled model per (build, input shapes, settings, threads); the 64 most recently used are kept."""
    import openvino as ov
    import openvino.opset13 as ops

    parameters = [ops.parameter(list(shape), ov.Type.f32) for shape in shapes]
    return _OneOp(ov.Model(build(parameters, *settings), parameters, f"irgrid_{build.__name__}"), threads)

"""irgrid's runtime's dense layers on OpenVINO's CPU plugin or numpy: the GEMM after the convolution
layers' im2col (`matmul`), and whole f32 layers OpenVINO runs much faster than numpy can
(`run_on_openvino`: Convolution, GroupConvolution, MaxPool, AvgPool).

Backend: for f32 a one-op OpenVINO model compiled once per shapes, attributes and thread count by
default, numpy (im2col + GEMM for convolutions, irgrid's numpy glue for the others) when
`IRGRID_GEMM=numpy` or in a process forked after OpenVINO ran (irgrid.forks); f64 always numpy
(OpenVINO's CPU plugin computes f64 inputs in f32: its f64 output carries f32 accuracy).

Why OpenVINO for the GEMM, measured on the 2-vCPU AMD EPYC (Zen 3, AVX2) development VM while other
jobs shared it:
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

Why OpenVINO for whole convolutions (Convolution-1 in irgrid's runtime; Zen 4, 2 threads, f32, one
convolution + ReLU per model, median ms): the im2col path took 0.42 against OpenVINO's 0.047 on an
STN's 1x1x28x28 7x7 8-channel layer (8.9x), 38 against 8.2 on a 1x16x256x256 3x3 32-channel one
(4.6x), 52 against 6.4 on a VoxelMorph encoder's stride-2 1x2x80x96x112 3x3x3 16-channel one (8.1x),
889 against 244 on its 48-to-16-channel decoder layer (3.6x) and 10.4 against 8.8 on 64 to 64
channels at 128x128 (1.2x); an audit measured a VoxelMorph flow head 8.6x slower and a whole 3-D
spatial transformer 11x. OpenVINO's convolution (oneDNN) with the filters as a Parameter ran as fast
as with them compiled in (0.92-1.04x; 1.4x on the 0.05 ms STN layer) and gave the same bits, so one
compiled model serves any filters. It gave the same bits at 1 and 2 threads on 800 random 2-D
and 3-D shapes whose output dims are all 2 or more, but not on 1-D convolutions and not on some whose
output has a dim of 1 (7 of 120 and 4 of 300 random ones differed by an ulp at 1 thread against 2);
those keep the im2col path (`convolution_on_openvino`), so results never depend on the thread count.
On one such shape (1x1x5x1, a 3x3 kernel, strides 1x2, pads 1) the plugin (2026.4) also wrote 0 at 3 of
its 5 outputs, where im2col gives torch's values (tests/test_convolution.py).
GroupConvolution (oneDNN's grouped and depthwise kernels) gave the same bits at 1 and 2 threads on 300
random 2-D and 3-D shapes whose output dims are all 2 or more, and takes the same rule.

Pooling (MaxPool-1/-8/-14, AvgPool-1/-14; Zen 4, 2 threads, f32, median ms): numpy took 121 against
OpenVINO's 21 on a 2x2x2 stride-2 MaxPool of 1x16x64x96x112 (5.9x), 67 against 1.5 on a 3x3 stride-1
one of 1x64x128x128 (44x), 0.10 against 0.035 on 1x8x22x22. irgrid's numpy pooling follows what the
CPU plugin computes (irgrid/ops/glue/pooling.py), which runs it for f32.
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
    """out[...] = a @ b (a @ b.T when transpose_b) for 2-D C-contiguous a (M, K) and b (K, N) or
    (N, K) of one float dtype, plus bias[i] on row i when a C-contiguous bias (M,) is given (on
    OpenVINO an Add in the compiled model, which fuses it into the MatMul's output stage); on
    OpenVINO a C-contiguous out is the MatMul's own output (no copy)."""
    if on_openvino(a, out):
        n = b.shape[0] if transpose_b else b.shape[1]
        compiled = _openvino_matmul(a.shape[0], a.shape[1], n, transpose_b, bias is not None, max(1, int(threads)))
        return compiled([a, b] if bias is None else [a, b, bias.reshape(-1, 1)], [out])[0]
    np.matmul(a, b.T if transpose_b else b, out=out)
    if bias is not None:
        out += bias[:, None]
    return out


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

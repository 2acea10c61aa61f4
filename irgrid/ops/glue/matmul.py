"""MatMul-1: batched matrix product with numpy's rules for 1-D operands and batch broadcasting.

transpose_a / transpose_b swap the two innermost dims of an operand of rank >= 2; a 1-D operand is
a row (a) or column (b) vector whatever they say, and its unit dim is dropped from the output.
f16 is multiplied in f32 and rounded once, as OpenVINO's CPU plugin.

A large f32 product of one matrix pair (every batch dim 1, at least LARGE_PRODUCT multiply-adds) runs on
OpenVINO's MatMul (irgrid.dense.matmul) rather than numpy's: OpenBLAS keeps its threads spinning for a
while after each product, and on a machine with few cores they took the next inference's OpenMP kernels'
CPUs. DCNv2's product (256 x 2304 by 2304 x 3400) is followed by nine GridSamples in the next call, which
took 3.5-8.7 ms each back to back against 1.3-1.6 ms when something else ran between the calls
(benchmarks/README.md, "The glue MatMul, back to back"). OpenVINO's MatMul gives the same bits at any thread
count on these shapes (tests/glue/test_glue_matmul.py); numpy's and OpenVINO's products differ in the
last bits (their summation orders).
"""
from __future__ import annotations

import numpy as np

from ... import dense
from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...memory import check_fits
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos, broadcast, merge_dim
from .broadcasting import same_element_type

LARGE_PRODUCT = 1 << 26  # multiply-adds


def _matrix(shape: tuple, transpose: bool, index: int) -> tuple:
    if not shape:
        raise ShapeError("MatMul operands must have rank >= 1, got a scalar", input=index)
    if len(shape) == 1:
        return (1, shape[0]) if index == 0 else (shape[0], 1)
    return shape[:-2] + (shape[-1], shape[-2]) if transpose else shape


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    a, b = inputs
    element_type = same_element_type(inputs)
    ma, mb = _matrix(a.shape, attrs["transpose_a"], 0), _matrix(b.shape, attrs["transpose_b"], 1)
    merge_dim(ma[-1], mb[-2], f"inner dims of {format_shape(a.shape)} and {format_shape(b.shape)} differ", 1)
    try:
        batch = broadcast(ma[:-2], mb[:-2])
    except ShapeError as exc:
        raise ShapeError(f"batch dims: {exc.reason}", input=1) from None
    rows = () if len(a.shape) == 1 else (ma[-2],)
    cols = () if len(b.shape) == 1 else (mb[-1],)
    return [TensorInfo(batch + rows + cols, element_type)]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    (out,) = _infer(attrs, array_infos(inputs))
    check_fits(out.shape, inputs[0].dtype)  # batch broadcasting may multiply the inputs' sizes
    a, b = (np.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x
            for x, flag in zip(inputs, (attrs["transpose_a"], attrs["transpose_b"])))
    if a.ndim >= 2 and b.ndim >= 2 and _one_pair(out.shape[:-2]) and dense.on_openvino(a, b) \
            and out.shape[-2] * out.shape[-1] * a.shape[-1] >= LARGE_PRODUCT:
        return [_on_openvino(a.reshape(a.shape[-2:]), b.reshape(b.shape[-2:]), out.shape, ctx.threads)]
    with np.errstate(all="ignore"):  # IEEE results: inf * 0 is NaN
        if a.dtype == np.float16:
            product = np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        else:
            product = np.matmul(a, b)
    return [np.asarray(product)]  # a 0-d array: numpy gives two vectors' product as a scalar


def _one_pair(batch: tuple) -> bool:
    return all(d == 1 for d in batch)


def _on_openvino(a: np.ndarray, b: np.ndarray, shape: tuple, threads: int) -> np.ndarray:
    """a @ b of two matrices on OpenVINO's MatMul, as an array of `shape` (the product with unit batch
    dims); b is read transposed in place where it is a transposed view."""
    out = np.empty(shape, np.float32)
    transposed = not b.flags.c_contiguous and b.T.flags.c_contiguous
    dense.matmul(np.ascontiguousarray(a), b.T if transposed else np.ascontiguousarray(b),
                 out.reshape(out.shape[-2:]), threads, transpose_b=transposed)
    return out


register(OpSpec(type="MatMul", versions=("opset1",), inputs=(2, 2),
                attrs=(Attr("transpose_a", "bool", False), Attr("transpose_b", "bool", False)),
                infer=_infer, run=_run, summary="Matrix product (transpose_a/b, 1-D operands, batch broadcasting)."))

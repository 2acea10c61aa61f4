"""AdaptiveAvgPool-8 and AdaptiveMaxPool-8: output_size (input 1) windows over 1 to 3 spatial dims.

Output position i of a spatial axis of length L pools [floor(i * L / n), ceil((i + 1) * L / n)), as
torch's adaptive pooling (the windows overlap when n does not divide L). Both are separable, so each
axis is reduced in turn, one gathered slice per window position (no loop per output element), the
last axis first: AdaptiveMaxPool's index is then that of the first maximum in row-major order, a
flat position in the item's spatial dims (as torch's return_indices). The sum is divided once by the
window's size. Floating-point data only, as the specs define them.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import along, int_values, require_float
from .index_inputs import value_infos, vector_length


def _output_shape(inputs: list[TensorInfo]) -> tuple[int | None, ...] | None:
    data, size = inputs
    require_float(data, 0, "data")
    length = vector_length(size, 1, "output_size")
    if data.rank is None:
        return None
    if data.rank not in (3, 4, 5):
        raise ShapeError(f"data must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), got "
                         f"{format_shape(data.shape)}", input=0)
    spatial = data.rank - 2
    if length is not None and length != spatial:
        raise ShapeError(f"output_size has {length} values, data {format_shape(data.shape)} {spatial} spatial "
                         f"dims", input=1)
    values = int_values(size)
    if values is not None and any(v < 1 for v in values):
        raise ShapeError(f"output_size {values} must be positive", input=1)
    return (*data.shape[:2], *(values if values is not None else [None] * spatial))


def _infer(with_indices: bool):
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        shape = _output_shape(inputs)
        out = [TensorInfo(shape, inputs[0].element_type)]
        if with_indices:
            out.append(TensorInfo(shape, attrs["index_element_type"]))
        return out
    return infer


def _windows(length: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(count, dtype=np.int64)
    return i * length // count, -(-(i + 1) * length // count)


def _avg(x: np.ndarray, out_dims: list[int]) -> np.ndarray:
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    sizes = np.ones((), np.int64)
    with np.errstate(all="ignore"):
        for axis in reversed(range(2, x.ndim)):
            start, end = _windows(work.shape[axis], out_dims[axis - 2])
            total = np.zeros(work.shape[:axis] + (len(start),) + work.shape[axis + 1:], work.dtype)
            for j in range(int((end - start).max())):
                inside = (start + j < end).reshape(along(axis, total.ndim))
                total += np.where(inside, np.take(work, np.minimum(start + j, end - 1), axis), 0)
            work = total
            sizes = sizes * (end - start).reshape(along(axis, total.ndim))
        return (work / sizes.astype(work.dtype)).astype(x.dtype, copy=False)


def _max(x: np.ndarray, out_dims: list[int], index_dtype: np.dtype) -> list[np.ndarray]:
    """Strict `>` in window order: a repeated last element (windows padded to one length) never wins."""
    best = x
    spatial = x.shape[2:]
    index = np.arange(prod(spatial), dtype=np.int64).reshape((1, 1) + spatial)
    for axis in reversed(range(2, x.ndim)):
        start, end = _windows(x.shape[axis], out_dims[axis - 2])
        values = np.take(best, start, axis)
        where = np.take(np.broadcast_to(index, best.shape), start, axis)
        for j in range(1, int((end - start).max())):
            at = np.minimum(start + j, end - 1)
            tap = np.take(best, at, axis)
            take = tap > values
            np.copyto(values, tap, where=take)
            np.copyto(where, np.take(np.broadcast_to(index, best.shape), at, axis), where=take)
        best, index = values, where
    return [best, index.astype(index_dtype)]


def _run(with_indices: bool):
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        out_dims = list(_output_shape(value_infos(inputs))[2:])
        if with_indices:
            return _max(inputs[0], out_dims, np.dtype(np.int32 if attrs["index_element_type"] == "i32" else np.int64))
        return [_avg(inputs[0], out_dims)]
    return run


register(OpSpec(type="AdaptiveAvgPool", versions=("opset8",), inputs=(2, 2), attrs=(),
                infer=_infer(False), run=_run(False),
                summary="Mean over output_size windows that cover the input (torch's adaptive_avg_pool)."))
register(OpSpec(type="AdaptiveMaxPool", versions=("opset8",), inputs=(2, 2), outputs=2,
                attrs=(Attr("index_element_type", "str", "i64", choices=("i32", "i64")),),
                infer=_infer(True), run=_run(True),
                summary="Max over output_size windows, and its flat spatial index (i32 or i64)."))

"""Transpose, Concat and Gather: layers that move data between positions."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir.dims import format_shape
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import int_values, merge_dim, normalize_axis
from .index_inputs import contiguous


# numpy copies an array whose last dim is short (a grid's 2 or 3 coordinates) through its iterator,
# element by element: a 1x3x24x32x32 f32 displacement to channels-last took 0.089 ms, and stacking its
# coordinates as that last dim (one strided copy each) 0.025; a Gather of the last axis 0.063 against
# 0.024. From 16 channels on both take the same time.
SHORT_LAST = 8


def _columns(sources: list[np.ndarray]) -> np.ndarray:
    """The same-shaped arrays stacked as the last dim of a new C-contiguous array (np.stack alone
    would lay it out as its sources are)."""
    out = np.empty((*sources[0].shape, len(sources)), sources[0].dtype)
    return np.stack(sources, axis=-1, out=out)


def _order(values: list[int], rank: int) -> list[int]:
    if not values:
        return list(range(rank))[::-1]
    if sorted(values) != list(range(rank)):
        raise ShapeError(f"order {values} is not a permutation of {rank} axes")
    return values


def _transpose_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, order = inputs
    values = int_values(order)
    if values is None:
        return [TensorInfo((None,) * len(data.shape), data.element_type)]
    return [TensorInfo(tuple(data.shape[i] for i in _order(values, len(data.shape))), data.element_type)]


def _transpose_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, order = inputs
    moved = data.transpose(_order([int(v) for v in order.reshape(-1)], data.ndim))
    if moved.ndim > 1 and 1 < moved.shape[-1] <= SHORT_LAST and not moved.flags.c_contiguous:
        return [_columns([moved[..., c] for c in range(moved.shape[-1])])]
    return [contiguous(moved)]


register(OpSpec(type="Transpose", versions=("opset1",), inputs=(2, 2), attrs=(),
                infer=_transpose_infer, run=_transpose_run, summary="Permute axes."))


def _concat_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    first = inputs[0]
    rank = len(first.shape)
    axis = normalize_axis(attrs["axis"], rank)
    out = list(first.shape)
    for index, info in enumerate(inputs[1:], start=1):
        if info.element_type != first.element_type:
            raise ShapeError(f"element type {info.element_type} differs from input 0's {first.element_type}",
                             input=index)
        if len(info.shape) != rank:
            raise ShapeError(f"rank of {format_shape(info.shape)} differs from input 0's "
                             f"{format_shape(first.shape)}", input=index)
        for i, d in enumerate(info.shape):
            if i == axis:
                out[i] = None if out[i] is None or d is None else out[i] + d
            else:
                out[i] = merge_dim(out[i], d, f"dim {i} differs between inputs", index)
    return [TensorInfo(tuple(out), first.element_type)]


register(OpSpec(type="Concat", versions=("opset1",), inputs=(1, 1 << 16),
                attrs=(Attr("axis", "int", 0, required=True),),
                infer=_concat_infer,
                run=lambda attrs, inputs, ctx: [np.concatenate(inputs, axis=attrs["axis"])],
                summary="Join tensors along an axis."))


def _gather_axis(values: list[int] | None, rank: int) -> int | None:
    if values is None:
        return None
    if len(values) != 1:
        raise ShapeError(f"axis must be a scalar, got {values}")
    return normalize_axis(values[0], rank)


def _batch_dims(attrs: Attrs, indices_rank: int) -> int:
    batch_dims = attrs.get("batch_dims", 0)
    return batch_dims + indices_rank if batch_dims < 0 else batch_dims


def _gather_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, indices, axis_info = inputs
    axis = _gather_axis(int_values(axis_info), len(data.shape))
    batch_dims = _batch_dims(attrs, len(indices.shape))
    if axis is None:
        rank = len(data.shape) - 1 + len(indices.shape) - batch_dims
        return [TensorInfo((None,) * rank, data.element_type)]
    if not 0 <= batch_dims <= min(axis, len(indices.shape)):
        raise ShapeError(f"batch_dims {batch_dims} must lie in [0, min(axis, indices rank)]")
    for i in range(batch_dims):
        merge_dim(data.shape[i], indices.shape[i], f"batch dim {i} differs between data and indices")
    shape = data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis + 1:]
    return [TensorInfo(tuple(shape), data.element_type)]


def _gather_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    """Negative indices count from the end; out-of-range ones give zeros (as OpenVINO's Gather-8)."""
    data, indices, axis_value = inputs
    axis = _gather_axis([int(v) for v in axis_value.reshape(-1)], data.ndim)
    batch_dims = _batch_dims(attrs, indices.ndim)
    size = data.shape[axis]
    idx = np.where(indices < 0, indices + size, indices).astype(np.int64)
    valid = (idx >= 0) & (idx < size)
    safe = np.where(valid, idx, 0)
    if batch_dims == 0 and valid.all():  # the common case in one pass (a grid's xyz reversed: 10x faster)
        if axis == data.ndim - 1 and data.ndim > 1 and safe.ndim == 1 and 1 < safe.size <= SHORT_LAST:
            return [_columns([data[..., i] for i in safe])]
        return [np.asarray(np.take(data, safe, axis=axis))]  # an ndarray also for a 0-d result
    batch = int(np.prod(data.shape[:batch_dims], dtype=np.int64))
    data_b = data.reshape((batch,) + data.shape[batch_dims:])
    safe_b = safe.reshape((batch,) + safe.shape[batch_dims:])
    valid_b = valid.reshape(safe_b.shape)
    local_axis = axis - batch_dims + 1
    parts = []
    for b in range(batch):
        taken = np.take(data_b[b], safe_b[b], axis=local_axis - 1)
        mask = valid_b[b].reshape((1,) * (local_axis - 1) + valid_b[b].shape + (1,) * (data_b.ndim - local_axis - 1))
        parts.append(np.where(mask, taken, np.zeros((), data.dtype)))
    out_shape = data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis + 1:]
    return [np.stack(parts).reshape(out_shape) if parts else np.zeros(out_shape, data.dtype)]


register(OpSpec(type="Gather", versions=("opset1",), inputs=(3, 3), attrs=(),
                infer=_gather_infer, run=_gather_run, summary="Take slices by index along an axis."))
register(OpSpec(type="Gather", versions=("opset7", "opset8"), inputs=(3, 3),
                attrs=(Attr("batch_dims", "int", 0),),
                infer=_gather_infer, run=_gather_run, summary="Gather with batch_dims."))

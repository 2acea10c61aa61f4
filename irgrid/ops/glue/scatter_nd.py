"""ScatterNDUpdate: a copy of `data` whose elements or slices named by `indices` are replaced by `updates`
(opset15: or reduced with them). OpenVINO's PyTorch and ONNX frontends emit it for an in-place tensor
assignment, such as VoxelMorph's grid normalisation `new_locs[:, i, ...] = ...`.

As OpenVINO's CPU plugin and reference implementation do: negative indices count from the end; updates
to one position apply in index order (with `none` the last one stays); an index outside [-size, size)
is an InputError (OpenVINO raises); indices without elements, also of shape (n, 0), change nothing; f16
reduces in f32, rounded once at the end, as OpenVINO (plugin and constant folding) computes it. Boolean
data reduces `sum`, `sub` and `prod` as OR, XOR and AND, as OpenVINO's specification and reference
implementation say (docs/semantics.md: its CPU plugin's `sub` differs).
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .index_inputs import checked_indices, require_integer

_REDUCTIONS = {"sum": np.add, "sub": np.subtract, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
_BOOLEAN_REDUCTIONS = {**_REDUCTIONS, "sum": np.logical_or, "sub": np.logical_xor, "prod": np.logical_and}


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, indices, updates = inputs
    require_integer(indices, 1, "indices")
    if updates.element_type != data.element_type:
        raise ShapeError(f"updates' element type {updates.element_type} differs from data's {data.element_type}",
                         input=2)
    if data.shape is not None and not data.shape:
        raise ShapeError("data must have rank 1 or more, got []", input=0)
    if indices.shape is not None and not indices.shape:
        raise ShapeError("indices must have rank 1 or more, got []", input=1)
    if data.shape is None or indices.shape is None or indices.shape[-1] is None:
        return [TensorInfo(data.shape, data.element_type)]
    depth = indices.shape[-1]
    if depth > len(data.shape):
        raise ShapeError(f"indices' last dim {depth} is above data's rank {len(data.shape)}", input=1)
    expected = tuple(indices.shape[:-1]) + tuple(data.shape[depth:])
    if updates.shape is not None:
        single = not expected and len(updates.shape) == 1 and updates.shape[0] in (1, None)  # the spec allows it
        differ = len(updates.shape) != len(expected) or any(
            want is not None and got is not None and want != got for want, got in zip(expected, updates.shape))
        if differ and not single:
            raise ShapeError(f"updates must have shape {format_shape(expected)} (indices' dims but the last, "
                             f"then data's past the first {depth}), got {format_shape(updates.shape)}", input=2)
    return [TensorInfo(data.shape, data.element_type)]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, indices, updates = inputs
    out = np.array(data, order="C")
    if indices.size == 0:  # OpenVINO leaves data as it is, also for indices of shape (n, 0)
        return [out]
    depth = indices.shape[-1]
    positions = checked_indices(indices, np.array(data.shape[:depth], np.int64),
                                lambda at: f"dim {at[-1]} of data {format_shape(data.shape)}")
    positions = positions.reshape(int(np.prod(indices.shape[:-1])), depth)
    flat = np.ravel_multi_index(tuple(positions.T), data.shape[:depth]) if depth else np.zeros(len(positions), np.int64)
    target = out.reshape((-1,) + data.shape[depth:])  # a view: out is C-contiguous
    values = updates.reshape((len(flat),) + data.shape[depth:])
    reduction = attrs.get("reduction", "none")
    if reduction == "none":
        last = len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]  # each position's last update
        target[flat[last]] = values[last]
    elif data.dtype == np.float16:  # reduced in f32 and rounded once, as OpenVINO computes f16
        wide = target.astype(np.float32)
        _REDUCTIONS[reduction].at(wide, flat, values.astype(np.float32))
        target[...] = wide
    else:
        (_BOOLEAN_REDUCTIONS if data.dtype == np.bool_ else _REDUCTIONS)[reduction].at(target, flat, values)
    return [out]


register(OpSpec(type="ScatterNDUpdate", versions=("opset4",), inputs=(3, 3), attrs=(),
                infer=_infer, run=_run, summary="Replace elements or slices at N-D indices."))
register(OpSpec(type="ScatterNDUpdate", versions=("opset15",), inputs=(3, 3),
                attrs=(Attr("reduction", "str", "none", choices=("none", *_REDUCTIONS)),),
                infer=_infer, run=_run, summary="ScatterNDUpdate with a reduction (sum, sub, prod, min, max)."))

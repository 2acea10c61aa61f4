"""Reshape, Squeeze, Unsqueeze and ShapeOf: layers that change a shape, not the data order."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir import element_types
from ...ir.dims import Shape, format_shape, is_static, num_elements
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import int_values, normalize_axis


def reshape_target(attrs: Attrs, data: Shape, target: list[int]) -> Shape:
    """Output shape of Reshape for a known target (0 copies a dim when special_zero, -1 infers one)."""
    special_zero = attrs["special_zero"]
    if target.count(-1) > 1:
        raise ShapeError(f"target shape {target} has more than one -1")
    out: list[int | None] = []
    for i, v in enumerate(target):
        if v == 0 and special_zero:
            if data is None or i >= len(data):
                raise ShapeError(f"special_zero copies dim {i}, which the input lacks")
            out.append(data[i])
        elif v < -1:
            raise ShapeError(f"target shape {target} has a negative dim")
        else:
            out.append(v)
    if -1 in out:
        # Dims copied by special_zero appear on both sides, so leave them out of both products
        # (this also resolves [0, 6] -> [0, -1, 3] to [0, 2, 3], as OpenVINO does).
        copied = {i for i, v in enumerate(target) if v == 0 and special_zero}
        rest_in = None if data is None else [d for i, d in enumerate(data) if i not in copied]
        known = [d for i, d in enumerate(out) if d != -1 and i not in copied]
        if rest_in is not None and None not in rest_in and None not in known:
            total, rest = num_elements(rest_in), num_elements(known)
            if rest == 0 or total % rest:
                raise ShapeError(f"cannot reshape {format_shape(data)} to {target}")
            out[out.index(-1)] = total // rest
        else:
            out[out.index(-1)] = None
    if data is not None and is_static(data) and is_static(tuple(out)) and num_elements(data) != num_elements(out):
        raise ShapeError(f"cannot reshape {format_shape(data)} ({num_elements(data)} elements) to "
                         f"{format_shape(tuple(out))}")
    return tuple(out)


def _reshape_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, target_info = inputs
    target = int_values(target_info)
    if target is None:
        rank = target_info.shape[0] if target_info.shape else None
        shape = None if rank is None else (None,) * rank
    else:
        shape = reshape_target(attrs, data.shape, target)
    return [TensorInfo(shape, data.element_type)]


def _reshape_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, target = inputs
    shape = reshape_target(attrs, data.shape, [int(v) for v in target.reshape(-1)])
    return [data.reshape(shape)]


register(OpSpec(type="Reshape", versions=("opset1",), inputs=(2, 2),
                attrs=(Attr("special_zero", "bool", False, required=True),),
                infer=_reshape_infer, run=_reshape_run, summary="Reshape (special_zero, -1)."))


def _axes(info: TensorInfo | None, rank: int) -> list[int] | None:
    values = None if info is None else int_values(info)
    if values is None:
        return None
    axes = sorted(normalize_axis(a, rank, "axis") for a in values)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"axes {values} repeat an axis")
    return axes


def _squeeze_shape(data: Shape, axes: list[int] | None) -> Shape:
    if axes is None:
        if None in data:
            return None
        return tuple(d for d in data if d != 1)
    for a in axes:
        if data[a] not in (1, None):
            raise ShapeError(f"cannot squeeze axis {a} of size {data[a]}")
    return tuple(d for i, d in enumerate(data) if i not in axes)


def _squeeze_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data = inputs[0]
    if len(inputs) == 2 and inputs[1].value is None:
        return [TensorInfo(None, data.element_type)]
    axes = _axes(inputs[1] if len(inputs) == 2 else None, len(data.shape))
    return [TensorInfo(_squeeze_shape(data.shape, axes), data.element_type)]


def _squeeze_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data = inputs[0]
    axes = None
    if len(inputs) == 2:
        axes = _axes(TensorInfo(inputs[1].shape, "i64", inputs[1]), data.ndim)
    return [data.reshape(_squeeze_shape(data.shape, axes))]


register(OpSpec(type="Squeeze", versions=("opset1",), inputs=(1, 2), attrs=(),
                infer=_squeeze_infer, run=_squeeze_run, summary="Remove size-1 axes."))


def _unsqueeze_shape(data: Shape, values: list[int]) -> Shape:
    rank = len(data) + len(values)
    axes = _axes(TensorInfo((len(values),), "i64", np.array(values)), rank)
    rest = iter(data)
    return tuple(1 if i in axes else next(rest) for i in range(rank))


def _unsqueeze_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, axes = inputs
    values = int_values(axes)
    shape = None if values is None else _unsqueeze_shape(data.shape, values)
    return [TensorInfo(shape, data.element_type)]


def _unsqueeze_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, axes = inputs
    return [data.reshape(_unsqueeze_shape(data.shape, [int(v) for v in axes.reshape(-1)]))]


register(OpSpec(type="Unsqueeze", versions=("opset1",), inputs=(2, 2), attrs=(),
                infer=_unsqueeze_infer, run=_unsqueeze_run, summary="Insert size-1 axes."))


def _shape_of_type(attrs: Attrs) -> str:
    return attrs.get("output_type", "i64")


def _shape_of_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    return [TensorInfo((len(inputs[0].shape),), _shape_of_type(attrs))]


def _shape_of_fold(attrs: Attrs, inputs: list[TensorInfo]) -> np.ndarray | None:
    shape = inputs[0].shape
    if not is_static(shape):
        return None
    return np.array(shape, dtype=element_types.numpy_dtype(_shape_of_type(attrs)))


def _shape_of_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    return [np.array(inputs[0].shape, dtype=element_types.numpy_dtype(_shape_of_type(attrs)))]


register(OpSpec(type="ShapeOf", versions=("opset1",), inputs=(1, 1), attrs=(),
                infer=_shape_of_infer, run=_shape_of_run, fold=_shape_of_fold,
                summary="The shape of a tensor (i64)."))
register(OpSpec(type="ShapeOf", versions=("opset3",), inputs=(1, 1),
                attrs=(Attr("output_type", "element_type", "i64", choices=("i32", "i64")),),
                infer=_shape_of_infer, run=_shape_of_run, fold=_shape_of_fold,
                summary="The shape of a tensor (i32 or i64)."))

"""Broadcast-1, Broadcast-3 and Tile-1: copy data out to a larger shape.

Broadcast modes: `numpy` (data right-aligned to target_shape, each data dim 1 or equal to the target's),
`bidirectional` (Broadcast-3: numpy broadcasting of data and target_shape both ways) and `explicit`
(axes_mapping names the output axis of each data axis). OpenVINO's `pdpd` mode is not supported. The
output is materialised (checked against the machine's memory first), as downstream layers expect.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import Shape, format_shape
from ...memory import check_fits
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import broadcast, int_values
from .index_inputs import contiguous, value_infos, vector_length


def _target(info: TensorInfo, index: int, what: str) -> tuple[list[int] | None, int | None]:
    """A shape-like input's values (checked non-negative) and length."""
    length = vector_length(info, index, what)
    values = int_values(info)
    if values is not None and any(v < 0 for v in values):
        raise ShapeError(f"{what} {values} has a negative value", input=index)
    return values, length


def _numpy_shape(data: Shape, target: list[int]) -> Shape:
    if len(data) > len(target):
        raise ShapeError(f"data {format_shape(data)} has a higher rank than target_shape {target}", input=0)
    for d, t in zip(reversed(data), reversed(target)):
        if d not in (1, None, t):
            raise ShapeError(f"data {format_shape(data)} does not broadcast to {target}", input=0)
    return tuple(target)


def _explicit_layout(data: Shape, target: list[int], mapping: list[int]) -> Shape:
    """The data's dims placed at their mapped output axes, 1 elsewhere (what np.broadcast_to expands)."""
    if len(mapping) != len(data):
        raise ShapeError(f"axes_mapping {mapping} needs one axis per data dim ({len(data)})", input=2)
    if any(not 0 <= a < len(target) for a in mapping) or any(a >= b for a, b in zip(mapping, mapping[1:])):
        raise ShapeError(f"axes_mapping {mapping} must be increasing axes of the {len(target)}-D output", input=2)
    layout = [1] * len(target)
    for d, axis in zip(data, mapping):
        if d not in (1, None, target[axis]):
            raise ShapeError(f"data dim {d} does not broadcast to output dim {target[axis]} (axis {axis})", input=0)
        layout[axis] = d
    return tuple(layout)


def _broadcast_plan(attrs: Attrs, inputs: list[TensorInfo]) -> tuple[Shape, Shape | None]:
    """(output shape, the shape data is viewed as before np.broadcast_to; None if not known yet)."""
    data = inputs[0]
    mode = attrs["mode"]
    target, length = _target(inputs[1], 1, "target_shape")
    if mode == "explicit" and len(inputs) != 3:
        raise ShapeError("explicit mode needs the axes_mapping input", input=1)
    if target is None:
        if length is None:
            return None, None
        rank = max(length, len(data.shape)) if mode == "bidirectional" else length
        return (None,) * rank, None
    if mode == "numpy":
        return _numpy_shape(data.shape, target), data.shape
    if mode == "bidirectional":
        try:
            return broadcast(data.shape, tuple(target)), data.shape
        except ShapeError as exc:
            raise ShapeError(exc.reason, input=1) from None
    mapping, _ = _target(inputs[2], 2, "axes_mapping")
    if mapping is None:
        return tuple(target), None
    return tuple(target), _explicit_layout(data.shape, target, mapping)


def _broadcast_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    shape, _ = _broadcast_plan(attrs, inputs)
    return [TensorInfo(shape, inputs[0].element_type)]


def _materialise(view: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    check_fits(shape, view.dtype)
    return contiguous(np.broadcast_to(view, shape))


def _broadcast_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    shape, layout = _broadcast_plan(attrs, value_infos(inputs))
    return [_materialise(inputs[0].reshape(layout), shape)]


# Broadcast-1's explicit mode is OpenVINO's AutoBroadcastType NONE, written mode="none".
register(OpSpec(type="Broadcast", versions=("opset1",), inputs=(2, 3),
                attrs=(Attr("mode", "str", "numpy", choices={"numpy": "numpy", "none": "explicit",
                                                             "explicit": "explicit"}),),
                infer=_broadcast_infer, run=_broadcast_run,
                summary="Broadcast data to target_shape (numpy or explicit axes_mapping)."))
register(OpSpec(type="Broadcast", versions=("opset3",), inputs=(2, 3),
                attrs=(Attr("mode", "str", "numpy", choices=("numpy", "explicit", "bidirectional")),),
                infer=_broadcast_infer, run=_broadcast_run,
                summary="Broadcast data to target_shape (numpy, bidirectional or explicit axes_mapping)."))


def _tile_shape(data: Shape, repeats: list[int]) -> Shape:
    rank = max(len(data), len(repeats))
    dims = (1,) * (rank - len(data)) + tuple(data)
    repeats = [1] * (rank - len(repeats)) + repeats
    return tuple(None if d is None else d * r for d, r in zip(dims, repeats))


def _tile_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, repeats_info = inputs
    repeats, length = _target(repeats_info, 1, "repeats")
    if repeats is None:
        shape = None if length is None else (None,) * max(length, len(data.shape))
        return [TensorInfo(shape, data.element_type)]
    return [TensorInfo(_tile_shape(data.shape, repeats), data.element_type)]


def _tile_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    (out,) = _tile_infer(attrs, value_infos(inputs))
    check_fits(out.shape, inputs[0].dtype)
    return [np.tile(inputs[0], [int(r) for r in inputs[1].reshape(-1)])]


register(OpSpec(type="Tile", versions=("opset1",), inputs=(2, 2), attrs=(), infer=_tile_infer, run=_tile_run,
                summary="Repeat data along each axis (repeats may add leading axes)."))

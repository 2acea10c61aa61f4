"""Slice-8 and StridedSlice-1: strided windows of a tensor, with Python's slicing rules.

Both clamp out-of-range starts and stops as Python's `slice.indices` does, so `[-100:100]` is the whole
axis and a negative step walks backwards, with one exception OpenVINO (its shape inference, reference
and CPU plugin) shares with ONNX's Slice: under a negative step a start below -dim is clamped to the
first element, not before it (`x[-7:-7:-1]` of 5 elements is `[x[0]]`; Python gives `[]`). Shape
inference and the run share one plan per layer: the run applies, as a numpy index, exactly the plan
that gave the static output dims.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...ir.dims import Shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import int_values
from .index_inputs import contiguous, unique_axes, value_infos, vector_length


def _window(dim: int | None, start: int | None, stop: int | None, step: int | None) -> slice:
    """The slice of an axis of `dim` elements, a start below -dim under a negative step clamped to the
    first element (see above)."""
    if dim is not None and step is not None and step < 0 and start is not None and start < -dim:
        start = 0
    return slice(start, stop, step)


def _sliced_size(dim: int | None, window: slice) -> int | None:
    if dim is None or window.step is None:
        return None
    return len(range(*window.indices(dim)))


def _check_step(step: int | None, index: int) -> None:
    if step == 0:
        raise ShapeError("a step is 0", input=index)


# ---------------------------------------------------------------------------------------------
# Slice-8: data, start, stop, step, axes (optional)
# ---------------------------------------------------------------------------------------------


def _slice_plan(inputs: list[TensorInfo]) -> tuple[Shape, dict[int, slice] | None]:
    """Output shape and {axis: slice} (None while the starts, stops, steps or axes are unknown)."""
    data = inputs[0]
    rank = len(data.shape)
    names = ("start", "stop", "step", "axes")
    lengths = {vector_length(info, i, names[i - 1]) for i, info in enumerate(inputs[1:], start=1)} - {None}
    if len(lengths) > 1:
        raise ShapeError(f"start, stop, step (and axes) have different lengths {sorted(lengths)}", input=2)
    axes_values = int_values(inputs[4]) if len(inputs) == 5 else None
    if len(inputs) == 5 and axes_values is None:
        return (None,) * rank, None
    if axes_values is None:
        if not lengths:
            return (None,) * rank, None
        axes_values = list(range(lengths.pop()))
    axes = unique_axes(axes_values, rank, 4 if len(inputs) == 5 else 1)
    starts, stops, steps = (int_values(info) for info in inputs[1:4])
    for step in steps or ():
        _check_step(step, 3)
    shape = list(data.shape)
    if starts is None or stops is None or steps is None:
        for axis in axes:
            shape[axis] = None
        return tuple(shape), None
    plan = {axis: _window(shape[axis], b, e, s) for axis, b, e, s in zip(axes, starts, stops, steps)}
    for axis, window in plan.items():
        shape[axis] = _sliced_size(shape[axis], window)
    return tuple(shape), plan


def _slice_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    shape, _ = _slice_plan(inputs)
    return [TensorInfo(shape, inputs[0].element_type)]


def _slice_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _, plan = _slice_plan(value_infos(inputs))
    data = inputs[0]
    return [contiguous(data[tuple(plan.get(axis, slice(None)) for axis in range(data.ndim))])]


register(OpSpec(type="Slice", versions=("opset8",), inputs=(4, 5), attrs=(),
                infer=_slice_infer, run=_slice_run,
                summary="Strided window per axis (negative steps, clamped bounds, optional axes)."))


# ---------------------------------------------------------------------------------------------
# StridedSlice-1: data, begin, end, strides (optional); masks per entry of begin
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One item of the numpy index a StridedSlice builds: a new axis, an index or a slice of `axis`."""

    kind: str  # "new", "index" or "slice"
    axis: int = -1
    entry: int = -1  # position in begin/end/strides, -1 for axes the ellipsis or the tail cover


def _bit(mask: list[int], i: int) -> bool:
    return i < len(mask) and mask[i] != 0


def _entries(attrs: Attrs, count: int, rank: int) -> list[_Entry]:
    """The index items for `count` begin values over a `rank`-D input (masks applied, ellipsis expanded)."""
    ellipses = [i for i in range(count) if _bit(attrs["ellipsis_mask"], i)]
    if len(ellipses) > 1:
        raise ShapeError(f"ellipsis_mask has {len(ellipses)} bits set; at most one is allowed")
    consumed = sum(1 for i in range(count) if i not in ellipses and not _bit(attrs["new_axis_mask"], i))
    if consumed > rank:
        raise ShapeError(f"begin has {consumed} entries for input axes but the input has rank {rank}", input=1)
    entries, axis = [], 0
    for i in range(count):
        if i in ellipses:
            for _ in range(rank - consumed):
                entries.append(_Entry("slice", axis))
                axis += 1
        elif _bit(attrs["new_axis_mask"], i):
            entries.append(_Entry("new"))
        else:
            entries.append(_Entry("index" if _bit(attrs["shrink_axis_mask"], i) else "slice", axis, i))
            axis += 1
    entries.extend(_Entry("slice", a) for a in range(axis, rank))
    return entries


def _strided_plan(attrs: Attrs, inputs: list[TensorInfo]) -> tuple[Shape, tuple | None]:
    """Output shape and the numpy index (None while begin, end or strides are unknown)."""
    data = inputs[0]
    counts = {vector_length(info, i, name) for i, (info, name) in
              enumerate(zip(inputs[1:], ("begin", "end", "strides")), start=1)} - {None}
    if len(counts) > 1:
        raise ShapeError(f"begin, end and strides have different lengths {sorted(counts)}", input=2)
    if not counts:
        return None, None
    count = counts.pop()
    begin, end = int_values(inputs[1]), int_values(inputs[2])
    strides = int_values(inputs[3]) if len(inputs) == 4 else [1] * count
    for stride in strides or ():
        _check_step(stride, 3)
    known = begin is not None and end is not None and strides is not None
    shape, index = [], []
    for item in _entries(attrs, count, len(data.shape)):
        dim = None if item.axis < 0 else data.shape[item.axis]
        if item.kind == "new":
            shape.append(1)
            index.append(np.newaxis)
        elif item.entry < 0:  # covered by the ellipsis or past the last entry: the whole axis
            shape.append(dim)
            index.append(slice(None))
        elif not known:
            if item.kind == "slice":
                shape.append(None)
        elif item.kind == "index":
            at = begin[item.entry]
            if dim is not None and not -dim <= at < dim:
                raise ShapeError(f"shrink_axis_mask takes index {at} of axis {item.axis} of size {dim}", input=1)
            index.append(at)
        else:
            i = item.entry
            window = _window(dim, None if _bit(attrs["begin_mask"], i) else begin[i],
                             None if _bit(attrs["end_mask"], i) else end[i], strides[i])
            shape.append(_sliced_size(dim, window))
            index.append(window)
    return tuple(shape), tuple(index) if known else None


def _strided_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    shape, _ = _strided_plan(attrs, inputs)
    return [TensorInfo(shape, inputs[0].element_type)]


def _strided_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _, index = _strided_plan(attrs, value_infos(inputs))
    return [contiguous(inputs[0][index])]


_MASK = dict(kind="ints", default=[0])
register(OpSpec(type="StridedSlice", versions=("opset1",), inputs=(3, 4),
                attrs=(Attr("begin_mask", required=True, **_MASK), Attr("end_mask", required=True, **_MASK),
                       Attr("new_axis_mask", **_MASK), Attr("shrink_axis_mask", **_MASK),
                       Attr("ellipsis_mask", **_MASK)),
                infer=_strided_infer, run=_strided_run,
                summary="Strided slice with begin/end/new_axis/shrink_axis/ellipsis masks."))

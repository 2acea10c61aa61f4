"""Split-1 (equal parts) and VariadicSplit-1 (given lengths, one of them -1): several outputs per layer.

The number of outputs is fixed by the attribute (Split) or by the lengths input's size (VariadicSplit);
the graph pass checks it against the outputs the IR declares (`count_outputs`) before inference lists
them.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import int_values
from .index_inputs import contiguous, scalar_axis, value_infos, vector_length


def _parts(data: TensorInfo, axis: int | None, lengths: list[int | None]) -> list[TensorInfo]:
    if axis is None:
        return [TensorInfo((None,) * len(data.shape), data.element_type) for _ in lengths]
    return [TensorInfo(data.shape[:axis] + (n,) + data.shape[axis + 1:], data.element_type) for n in lengths]


def _split_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, axis_info = inputs
    count = attrs["num_splits"]
    axis = scalar_axis(axis_info, len(data.shape), 1)
    dim = None if axis is None else data.shape[axis]
    if dim is not None and dim % count:
        raise ShapeError(f"dim {axis} of size {dim} does not split into {count} equal parts", input=0)
    return _parts(data, axis, [None if dim is None else dim // count] * count)


def _variadic_lengths(lengths: list[int], dim: int | None) -> list[int | None]:
    """The lengths with their -1 resolved (None while the split dim is unknown)."""
    if lengths.count(-1) > 1 or any(n < -1 for n in lengths):
        raise ShapeError(f"split_lengths {lengths} may hold one -1 and otherwise sizes >= 0", input=2)
    known = sum(n for n in lengths if n != -1)
    if dim is None:
        return [None if n == -1 else n for n in lengths]
    if (-1 in lengths and known > dim) or (-1 not in lengths and known != dim):
        raise ShapeError(f"split_lengths {lengths} do not add up to dim size {dim}", input=2)
    return [dim - known if n == -1 else n for n in lengths]


def _variadic_count(attrs: Attrs, inputs: list[TensorInfo]) -> int:
    count = vector_length(inputs[2], 2, "split_lengths")
    if count is None:
        raise ShapeError("split_lengths must have a static size (it sets the number of outputs)", input=2)
    return count


def _variadic_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, axis_info, lengths_info = inputs
    axis = scalar_axis(axis_info, len(data.shape), 1)
    count = _variadic_count(attrs, inputs)
    values = int_values(lengths_info)
    if values is None:
        return _parts(data, axis, [None] * count)
    return _parts(data, axis, _variadic_lengths(values, None if axis is None else data.shape[axis]))


def _cut(data: np.ndarray, axis: int, lengths: list[int]) -> list[np.ndarray]:
    bounds = np.cumsum([0, *lengths])
    index = [slice(None)] * data.ndim
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        index[axis] = slice(int(lo), int(hi))
        parts.append(contiguous(data[tuple(index)]))
    return parts


def _runner(infer):
    """Run by the op's own inference on the actual values, then cut at the lengths it found."""
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        infos = value_infos(inputs)
        parts = infer(attrs, infos)
        axis = scalar_axis(infos[1], inputs[0].ndim, 1)
        return _cut(inputs[0], axis, [part.shape[axis] for part in parts])
    return run


register(OpSpec(type="Split", versions=("opset1",), inputs=(2, 2),
                attrs=(Attr("num_splits", "int", 1, required=True, minimum=1),),
                infer=_split_infer, run=_runner(_split_infer), count_outputs=lambda attrs, inputs: attrs["num_splits"],
                summary="Split into num_splits equal parts along an axis."))
register(OpSpec(type="VariadicSplit", versions=("opset1",), inputs=(3, 3), attrs=(),
                infer=_variadic_infer, run=_runner(_variadic_infer), count_outputs=_variadic_count,
                summary="Split into parts of given lengths (one may be -1) along an axis."))

"""ScatterElementsUpdate-3 and -12: a copy of data with updates written (or reduced) at positions that
indices give along one axis.

updates[p] goes to output[p with p[axis] replaced by indices[p]]; indices and updates have one shape, of
data's rank. Along the axis it may exceed data's dim (indices repeat positions); along the other axes it
must not (OpenVINO accepts that and its CPU plugin then writes to wrong positions: refused here).

What OpenVINO's CPU plugin does, and irgrid with it (2026.4, measured):
- Negative indices count from the end of the axis, in both versions (the -3 spec refuses them). An index
  outside [-s, s-1] is an InputError; the CPU plugin raises for s and above and writes outside the
  tensor for -s-1 and below.
- Repeated positions are applied in the order of their place along the axis, so with reduction `none`
  the last one wins (the specs leave the order undefined) and float sums add up in that order.
- use_init_val false starts each written position from the reduction's neutral value (0; 1 for prod;
  the type's largest / lowest finite value for min / max) instead of data; positions nothing writes to
  keep data's value. It does not matter for `none`.
- min and max keep the value they hold unless an update is strictly smaller / larger: a NaN update is
  skipped, a NaN already there stays, and of +0 and -0 the first one stays (OpenVINO's reference
  implementation differs: it replaces a NaN it holds).
- mean is the sum (in data's type, wrapping for integers) divided, in f64, by the number of updates
  (+1 for use_init_val), and cast back: integer means round down, as the -12 spec and OpenVINO's
  reference implementation (constant folding) say (-7 / 2 gives -4; the CPU plugin rounds toward zero, -3).
- Boolean data: sum is OR, prod is AND, min is AND, max is OR; mean is refused (as OpenVINO refuses it).
The CPU plugin computes f64 data in f32 and i64 data in i32; irgrid computes in data's own type.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...errors import IRGridError, ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo, register
from ..common import along, merge_dim
from .index_inputs import checked_indices, require_integer, scalar_axis, value_infos
from .scatter_nd import strided_block

_REDUCTIONS = ("none", "sum", "prod", "min", "max", "mean")


def _axis(attrs: Attrs, inputs: list[TensorInfo]) -> int | None:
    """Validates the inputs; the axis normalised for data's rank, None while it is unknown."""
    data, indices, updates, axis_info = inputs
    require_integer(indices, 1, "indices")
    if updates.element_type != data.element_type:
        raise ShapeError(f"updates are {updates.element_type} but data is {data.element_type}", input=2)
    if attrs.get("reduction") == "mean" and data.element_type == "boolean":
        raise ShapeError("reduction mean is not defined for boolean data", input=0)
    rank = len(data.shape)
    if len(indices.shape) != rank:
        raise ShapeError(f"indices {format_shape(indices.shape)} must have the rank of data "
                         f"{format_shape(data.shape)}", input=1)
    if len(updates.shape) != rank:
        raise ShapeError(f"updates {format_shape(updates.shape)} must have the shape of indices "
                         f"{format_shape(indices.shape)}", input=2)
    for i, (a, b) in enumerate(zip(indices.shape, updates.shape)):
        merge_dim(a, b, f"dim {i} of updates differs from indices'", 2)
    axis = scalar_axis(axis_info, rank, 3)
    if axis is not None:
        for i, (d, n) in enumerate(zip(data.shape, indices.shape)):
            if i != axis and d is not None and n is not None and n > d:
                raise ShapeError(f"dim {i} of indices {format_shape(indices.shape)} exceeds data's "
                                 f"{format_shape(data.shape)} (only the axis, {axis}, may)", input=1)
    return axis


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    _axis(attrs, inputs)
    return [TensorInfo(inputs[0].shape, inputs[0].element_type)]


def _targets(indices: np.ndarray, data_shape: tuple[int, ...], axis: int) -> np.ndarray:
    """The flat output position of each update (C order), negative indices normalised, range checked."""
    size = data_shape[axis]
    idx = checked_indices(indices, size, lambda at: f"axis {axis} of size {size}")
    strides = [int(np.prod(data_shape[d + 1:], dtype=np.int64)) for d in range(len(data_shape))]
    flat = idx * strides[axis]
    for d, n in enumerate(indices.shape):
        if d != axis:
            flat += (np.arange(n, dtype=np.int64) * strides[d]).reshape(along(d, indices.ndim))
    return flat


def _assign_last(out: np.ndarray, flat: np.ndarray, updates: np.ndarray, axis: int) -> None:
    """out[flat] = updates, the last along the axis winning where positions repeat. Positions repeat
    only within one line along the axis, so one step per index along the axis assigns distinct positions;
    with many short steps a stable sort finds each position's last update instead."""
    steps = flat.shape[axis]
    if steps * 32 <= flat.size:
        for flat_j, updates_j in zip(np.moveaxis(flat, axis, 0), np.moveaxis(updates, axis, 0)):
            out[flat_j.reshape(-1)] = updates_j.reshape(-1)
        return
    flat, updates = flat.reshape(-1), updates.reshape(-1)
    order = np.argsort(flat, kind="stable")
    sorted_flat = flat[order]
    last = np.append(sorted_flat[1:] != sorted_flat[:-1], True)
    out[sorted_flat[last]] = updates[order[last]]


def _neutral(reduction: str, dtype: np.dtype):
    if dtype == np.bool_:
        return reduction in ("prod", "min")
    if reduction in ("sum", "mean", "none"):
        return 0
    if reduction == "prod":
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.max if reduction == "min" else info.min


def _extremum(out: np.ndarray, flat: np.ndarray, updates: np.ndarray, smaller: bool) -> None:
    """Float min / max in update order, each position keeping what it holds unless an update is
    strictly smaller (larger): NaN updates are skipped, a NaN held stays, ties keep the first (+-0)."""
    skip = np.inf if smaller else -np.inf
    clean = np.where(np.isnan(updates), updates.dtype.type(skip), updates)
    best = out.copy()
    (np.minimum if smaller else np.maximum).at(best, flat, clean)  # the value; NaN where one was held
    # which element holds it: the value held before when equal (ties keep it), else the first update equal
    first = np.full(out.size, flat.size, np.int64)
    equal = updates == best[flat]
    np.minimum.at(first, flat[equal], np.flatnonzero(equal))
    take = (first < flat.size) & ~(out == best)
    out[take] = updates[first[take]]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, indices, updates, _ = inputs
    axis = _axis(attrs, value_infos(inputs))
    reduction, use_init = attrs.get("reduction", "none"), attrs.get("use_init_val", True)
    result = data.copy()  # C-contiguous, so `out` below is a view
    if indices.size == 0:
        return [result]
    flat = _targets(indices, data.shape, axis)
    if reduction == "none":
        _assign_last(result.reshape(-1), flat, updates, axis)
        return [result]
    out, flat, values = result.reshape(-1), flat.reshape(-1), updates.reshape(-1)
    if not use_init:
        out[flat] = _neutral(reduction, data.dtype)
    boolean = data.dtype == np.bool_
    with np.errstate(all="ignore"):  # IEEE results: inf - inf is NaN, NaN compares
        if reduction in ("sum", "mean"):
            (np.logical_or if boolean else np.add).at(out, flat, values)
        elif reduction == "prod":
            (np.logical_and if boolean else np.multiply).at(out, flat, values)
        elif boolean:
            (np.logical_and if reduction == "min" else np.logical_or).at(out, flat, values)
        elif data.dtype.kind == "f":
            _extremum(out, flat, values, reduction == "min")
        else:
            (np.minimum if reduction == "min" else np.maximum).at(out, flat, values)
        if reduction == "mean":
            counts = np.bincount(flat, minlength=out.size)
            hit = np.flatnonzero(counts)
            mean = out[hit].astype(np.float64) / (counts[hit] + int(use_init))
            out[hit] = mean.astype(data.dtype) if data.dtype.kind == "f" else np.floor(mean).astype(data.dtype)
    return [result]


def _prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
    """With constant indices and no reduction (`x[:, 0] = ...` in torch's dynamo export): the positions
    computed and checked once, and where they form a strided block without repeats (a slice
    assignment), one assignment to a strided view of the output (scatter_nd.strided_block), as
    ScatterNDUpdate's slice assignments. Bitwise `_run`'s results; indices out of range are left to
    `_run`, which reports them on every call."""
    data, indices = inputs[0], inputs[1]
    if indices.value is None or indices.value.size == 0 or attrs.get("reduction", "none") != "none":
        return None
    axis = _axis(attrs, inputs)
    if axis is None:
        return None
    try:
        flat = _targets(indices.value, tuple(data.shape), axis)
    except IRGridError:
        return None
    block = strided_block(flat.reshape(-1))
    if block is None:
        def assign(arrays: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
            result = arrays[0].copy()
            _assign_last(result.reshape(-1), flat, arrays[2], axis)
            return [result]
        return assign
    offset, shape, strides = block

    def assign_block(arrays: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        result = arrays[0].copy()
        out = result.reshape(-1)
        as_strided(out[offset:], shape, tuple(s * out.strides[0] for s in strides))[...] = arrays[2].reshape(shape)
        return [result]
    return assign_block


register(OpSpec(type="ScatterElementsUpdate", versions=("opset3",), inputs=(4, 4), attrs=(),
                infer=_infer, run=_run, prepare=_prepare,
                summary="Copy of data with updates written at indices along an axis (the last repeat wins)."))
register(OpSpec(type="ScatterElementsUpdate", versions=("opset12",), inputs=(4, 4),
                attrs=(Attr("reduction", "str", "none", choices=_REDUCTIONS),
                       Attr("use_init_val", "bool", True)),
                infer=_infer, run=_run, prepare=_prepare,
                summary="ScatterElementsUpdate with reduction none/sum/prod/min/max/mean and use_init_val."))

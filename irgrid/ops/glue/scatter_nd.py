"""ScatterNDUpdate: a copy of `data` whose elements or slices named by `indices` are replaced by `updates`
(opset15: or reduced with them). OpenVINO's PyTorch and ONNX frontends emit it for an in-place tensor
assignment, such as VoxelMorph's grid normalisation `new_locs[:, i, ...] = ...`.

As OpenVINO's reference implementation does: negative indices count from the end; updates to one
position apply in index order (with `none` the last one stays; the CPU plugin assigns from several
threads and keeps any, docs/semantics.md); an index outside [-size, size) is an InputError (OpenVINO
raises); indices without elements, also of shape (n, 0), change nothing; f16 reduces in f32, rounded
once at the end, as OpenVINO (plugin and constant folding) computes it. Boolean
data reduces `sum`, `sub` and `prod` as OR, XOR and AND, as OpenVINO's specification and reference
implementation say (docs/semantics.md: its CPU plugin's `sub` differs).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ...errors import IRGridError, ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo, register
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


def _flat_positions(indices: np.ndarray, data_shape: tuple[int, ...]) -> np.ndarray:
    """Each index tuple as its row of data viewed as (-1,) + data.shape[depth:], in index order
    (InputError for an index out of range); indices must have elements."""
    depth = indices.shape[-1]
    positions = checked_indices(indices, np.array(data_shape[:depth], np.int64),
                                lambda at: f"dim {at[-1]} of data {format_shape(data_shape)}")
    positions = positions.reshape(int(np.prod(indices.shape[:-1])), depth)
    return np.ravel_multi_index(tuple(positions.T), data_shape[:depth]) if depth else np.zeros(len(positions), np.int64)


def _rows(data_shape: tuple[int, ...], depth: int) -> tuple[int, ...]:
    """The shape data is viewed as for its index tuples: one row per tuple (not -1: rows may be empty)."""
    return (int(np.prod(data_shape[:depth])),) + tuple(data_shape[depth:])


def _last_updates(flat: np.ndarray) -> np.ndarray:
    """The update index of each position's last update (the one that stays with `none`), by position."""
    return len(flat) - 1 - np.unique(flat[::-1], return_index=True)[1]


def _reduce_into(target: np.ndarray, flat: np.ndarray, values: np.ndarray, reduction: str) -> None:
    """target[flat[k]] = reduction(target[flat[k]], values[k]) for every k in order, repeats included;
    f16 reduced in f32 and rounded once, as OpenVINO computes it."""
    if target.dtype == np.float16:
        wide = target.astype(np.float32)
        _REDUCTIONS[reduction].at(wide, flat, values.astype(np.float32))
        target[...] = wide
    else:
        (_BOOLEAN_REDUCTIONS if target.dtype == np.bool_ else _REDUCTIONS)[reduction].at(target, flat, values)


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, indices, updates = inputs
    out = np.array(data, order="C")
    if indices.size == 0:  # OpenVINO leaves data as it is, also for indices of shape (n, 0)
        return [out]
    depth = indices.shape[-1]
    flat = _flat_positions(indices, data.shape)
    target = out.reshape(_rows(data.shape, depth))  # a view: out is C-contiguous
    values = updates.reshape((len(flat),) + data.shape[depth:])
    reduction = attrs.get("reduction", "none")
    if reduction == "none" and (len(flat) < 2 or bool(np.all(flat[1:] > flat[:-1]))):
        target[flat] = values  # ascending positions repeat none (NonZero's, a mask assignment's): no sort
    elif reduction == "none":
        last = _last_updates(flat)
        target[flat[last]] = values[last]
    else:
        _reduce_into(target, flat, values, reduction)
    return [out]


def strided_block(flat: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
    """(offset, shape, strides) when the positions `flat` are offset + sum(i_k * strides[k]) over the
    multi-indices i of `shape` in C order, with positive strides and no position twice (what a slice
    assignment writes: `x[:, 0] = ...` on (N, C, H, W) is offset 0, shape (N, H*W), strides (C*H*W, 1));
    else None. Found from the innermost run outwards: each level's run is its longest prefix of equal
    steps (levels whose steps chain merge into one), so at most log2(len) levels, each checked whole."""
    shape: list[int] = []
    strides: list[int] = []
    rest = flat
    while len(rest) > 1:
        steps = np.diff(rest)
        step = int(steps[0])
        if step <= 0:
            return None
        breaks = np.flatnonzero(steps != step)
        run = len(rest) if not breaks.size else int(breaks[0]) + 1
        if len(rest) % run:
            return None
        rows = rest.reshape(-1, run)
        if not np.array_equal(rows, rows[:, :1] + step * np.arange(run, dtype=rows.dtype)):
            return None
        shape.insert(0, run)
        strides.insert(0, step)
        rest = rows[:, 0]
    # no position twice: ordered by stride, each level's stride clears the extent of the ones below it
    extent = 1
    for size, stride in sorted(zip(shape, strides), key=lambda level: level[1]):
        if stride < extent:
            return None
        extent = stride * size
    return int(rest[0]), tuple(shape), tuple(strides)


def _prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
    """With constant indices (a slice assignment's, in every export route): the indices checked,
    ravelled and, for `none`, deduplicated once. Indices addressing a strided block without repeats
    (`strided_block`: slice assignment) become one assignment to a strided view of the output, numpy's
    slice assignment (PWC-Net's 1.78 M index tuples: 343 ms a call before). The results are bitwise
    `_run`'s: the same values land at the same positions, and reductions apply in the same order.
    Indices out of range are left to `_run`, which reports them on every call as before."""
    data, indices, _ = inputs
    if indices.value is None:
        return None
    index_values = indices.value
    if index_values.size == 0:
        return lambda arrays, ctx: [np.array(arrays[0], order="C")]
    trailing = tuple(data.shape[index_values.shape[-1]:])
    rows_shape = _rows(data.shape, index_values.shape[-1])
    try:
        flat = _flat_positions(index_values, tuple(data.shape))
    except IRGridError:
        return None
    reduction = attrs.get("reduction", "none")
    if reduction != "none":
        def reduce(arrays: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
            data, _, updates = arrays
            out = np.array(data, order="C")
            target = out.reshape(rows_shape)
            values = updates.reshape((len(flat),) + trailing)
            _reduce_into(target, flat, values, reduction)
            return [out]
        return reduce
    block = strided_block(flat) if np.prod(trailing) else None
    if block is not None:
        offset, shape, strides = block

        def assign_block(arrays: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
            data, _, updates = arrays
            out = np.array(data, order="C")
            rows = out.reshape(rows_shape)
            view = as_strided(rows[offset:], shape + trailing,
                              tuple(s * rows.strides[0] for s in strides) + rows.strides[1:])
            view[...] = updates.reshape(shape + trailing)
            return [out]
        return assign_block
    last = _last_updates(flat)
    positions = flat[last]
    repeats = len(last) < len(flat)  # else every update stays, and their order cannot matter

    def assign(arrays: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, _, updates = arrays
        out = np.array(data, order="C")
        values = updates.reshape((len(flat),) + trailing)
        out.reshape(rows_shape)[positions if repeats else flat] = values[last] if repeats else values
        return [out]
    return assign


register(OpSpec(type="ScatterNDUpdate", versions=("opset4",), inputs=(3, 3), attrs=(),
                infer=_infer, run=_run, prepare=_prepare, summary="Replace elements or slices at N-D indices."))
register(OpSpec(type="ScatterNDUpdate", versions=("opset15",), inputs=(3, 3),
                attrs=(Attr("reduction", "str", "none", choices=("none", *_REDUCTIONS)),),
                infer=_infer, run=_run, prepare=_prepare,
                summary="ScatterNDUpdate with a reduction (sum, sub, prod, min, max)."))

"""Checks and reads of the small integer inputs that drive shapes (axes, starts, lengths, repeats),
and `contiguous`, how the data-movement layers return what they index.

Their values are known at compile time when the graph computes them from constants or static shapes
(inference folds them), and shape inference then gives static output dims.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ...errors import InputError, ShapeError
from ...ir import element_types
from ...ir.dims import format_shape
from ...registry import TensorInfo
from ..common import FLOAT_TYPES, int_values, normalize_axis

INTEGER_TYPES = ("i8", "u8", "i16", "u16", "i32", "i64", "u32", "u64")
NUMERIC_TYPES = INTEGER_TYPES + FLOAT_TYPES  # every type but boolean


def require_integer(info: TensorInfo, index: int, what: str) -> None:
    if info.element_type not in INTEGER_TYPES:
        raise ShapeError(f"{what} must be an integer tensor, got {info.element_type}", input=index)


def vector_length(info: TensorInfo, index: int, what: str) -> int | None:
    """The length of a 1-D integer input (None when unknown); a scalar counts as one value."""
    require_integer(info, index, what)
    if info.shape is None:
        return None
    if len(info.shape) > 1:
        raise ShapeError(f"{what} must be 1-D, got {format_shape(info.shape)}", input=index)
    return info.shape[0] if info.shape else 1


def scalar_axis(info: TensorInfo, rank: int, index: int) -> int | None:
    """A scalar (or one-value) axis input, normalised for `rank`; None when not known yet."""
    if vector_length(info, index, "axis") not in (1, None):
        raise ShapeError(f"axis must be a scalar, got {format_shape(info.shape)}", input=index)
    values = int_values(info)
    if values is None:
        return None
    try:
        return normalize_axis(values[0], rank)
    except ShapeError as exc:
        raise ShapeError(exc.reason, input=index) from None


def unique_axes(values: list[int], rank: int, index: int) -> list[int]:
    """Axes normalised for `rank`, each at most once (in the given order)."""
    try:
        axes = [normalize_axis(v, rank) for v in values]
    except ShapeError as exc:
        raise ShapeError(exc.reason, input=index) from None
    if len(set(axes)) != len(axes):
        raise ShapeError(f"axes {values} repeat an axis", input=index)
    return axes


def checked_indices(indices: np.ndarray, sizes: np.ndarray | int, dim: Callable[[tuple[int, ...]], str]) -> np.ndarray:
    """The index input (input 1) as int64, a negative index counted from the end of the dim it addresses
    (`sizes`, broadcast against indices); an index outside [-size, size) is an InputError naming its
    position and `dim(position)` (OpenVINO's plugin reads or writes outside the tensor for some)."""
    values = indices
    if values.dtype == np.uint64:  # values past the int64 range stay out of range
        values = np.minimum(values, np.uint64(np.iinfo(np.int64).max))
    values = values.astype(np.int64, copy=False)
    if values.size and values.min() >= 0:  # the usual case: two reads, no copy (callers never write to it)
        if np.all(values.max(axis=tuple(range(values.ndim - np.ndim(sizes)))) < sizes):
            return values
    values = np.where(values < 0, values + sizes, values)
    bad = (values < 0) | (values >= sizes)
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(f"index {int(indices[at])} at indices{list(at)} is out of range for {dim(at)}", input=1)
    return values


def value_infos(arrays: Sequence[np.ndarray]) -> list[TensorInfo]:
    """Run-time inputs as TensorInfos with their values, so a run function can reuse its op's `infer`."""
    return [TensorInfo(a.shape, element_types.from_dtype(a.dtype), a) for a in arrays]


def contiguous(x: np.ndarray | np.generic) -> np.ndarray:
    """A C-contiguous array of x's shape: np.ascontiguousarray would turn a 0-d result into shape (1,),
    and indexing every axis of an array gives a numpy scalar, not an array."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)

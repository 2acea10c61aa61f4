"""Helpers that many operators' shape inference and run functions share.

Errors name the input at fault by index (`input=`); the graph pass locates them at the layer.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ShapeError
from ..ir import element_types
from ..ir.dims import Shape, format_shape
from ..memory import allocate
from ..registry import TensorInfo

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def require_rank(info: TensorInfo, ranks: Sequence[int], index: int, what: str) -> None:
    if info.rank not in ranks:
        want = " or ".join(map(str, ranks))
        raise ShapeError(f"{what} must have rank {want}, got {format_shape(info.shape)}", input=index)


def require_float(info: TensorInfo, index: int, what: str) -> None:
    if info.element_type not in FLOAT_TYPES:
        raise ShapeError(f"{what} must be a floating-point tensor, got {info.element_type}", input=index)


def array_infos(arrays: Sequence[np.ndarray]) -> list[TensorInfo]:
    """Run-time inputs as TensorInfos, so a run function can validate them with its op's `infer`."""
    return [TensorInfo(a.shape, element_types.from_dtype(a.dtype)) for a in arrays]


def merge_dim(a: int | None, b: int | None, what: str, index: int | None = None) -> int | None:
    """Two dims that must agree: the known one, or an error when both are known and differ."""
    if a is not None and b is not None and a != b:
        raise ShapeError(f"{what}: {a} != {b}", input=index)
    return a if a is not None else b


def broadcast(a: Shape, b: Shape) -> Shape:
    """numpy broadcasting over dims that may be unknown."""
    if a is None or b is None:
        return None
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        elif x == y:
            out.append(x)
        else:
            raise ShapeError(f"shapes {format_shape(a)} and {format_shape(b)} do not broadcast")
    return tuple(out)


def int_values(info: TensorInfo) -> list[int] | None:
    """A constant integer input as a flat list, None when not known before run time. A float constant is
    truncated (as OpenVINO reads it); NaN or an infinity there is a ShapeError (int() would raise a
    ValueError or an OverflowError)."""
    if info.value is None:
        return None
    values = np.asarray(info.value).reshape(-1)
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        raise ShapeError(f"integers expected, and this constant input holds {values[~np.isfinite(values)][0]}")
    return [int(v) for v in values]


def along(axis: int, ndim: int) -> list[int]:
    """The shape that lays a 1-D array along `axis` of an ndim-dimensional one, for broadcasting."""
    return [-1 if d == axis else 1 for d in range(ndim)]


def compute_dtype(*arrays: np.ndarray) -> np.dtype:
    """The float type a kernel computes in: f64 when any input is f64, else f32 (f16, bf16, ints)."""
    if any(a.dtype == np.float64 for a in arrays):
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def output_buffer(ctx_out: Sequence[np.ndarray | None], index: int, shape: tuple[int, ...],
                  dtype: np.dtype) -> np.ndarray:
    """The caller's preallocated output when it fits, else a fresh array (refused if it cannot fit)."""
    if len(ctx_out) > index and ctx_out[index] is not None:
        buffer = ctx_out[index]
        if buffer.shape == tuple(shape) and buffer.dtype == dtype:
            return buffer
    return allocate(shape, dtype)


def to_integer(values: np.ndarray, dtype: np.dtype, rounding=np.rint) -> np.ndarray:
    """Float values to an integer type: NaN -> 0, rounded (half to even by default), saturated."""
    info = np.iinfo(dtype)
    # float(info.max) of a 64-bit type rounds up past the range; step back to the largest float inside.
    hi = np.nextafter(np.float64(info.max), 0) if info.bits == 64 else info.max
    with np.errstate(invalid="ignore"):
        rounded = rounding(np.nan_to_num(values.astype(np.float64, copy=False), nan=0.0, posinf=np.inf,
                                         neginf=-np.inf))
    result = np.asarray(np.clip(rounded, info.min, hi).astype(dtype))  # a 0-d input's ufuncs give a scalar
    result[rounded > hi] = info.max  # hi < info.max only for 64-bit types
    return result

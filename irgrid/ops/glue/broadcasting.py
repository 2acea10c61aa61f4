"""Element-wise layers over broadcast inputs (OpenVINO's `auto_broadcast`: numpy or none).

One registration path serves the arithmetic, comparison and logical binary layers (and Select's
shape rule): operands of one element type, broadcast with numpy's rules over dims that may be
unknown, an output of the operands' type or a fixed one (boolean for comparisons).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ...errors import ShapeError
from ...ir import element_types
from ...ir.attributes import Attr
from ...ir.dims import Shape, format_shape
from ...memory import check_fits
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos, broadcast

AUTO_BROADCAST = Attr("auto_broadcast", "str", "numpy", choices=("numpy", "none"))

BinaryFn = Callable[[Attrs, np.ndarray, np.ndarray], np.ndarray]

# numpy's inner loop runs along the output's last dim: with a grid's 2 or 3 coordinates there and an
# operand broadcast along the others, it runs 3 elements at a time (1x24x32x32x3 * 1x1x1x1x3 in f32:
# 0.115 ms). Rows of at least ROW_ELEMENTS, the short operand tiled along them: 0.015 ms.
ROW_ELEMENTS = 192


def broadcast_infos(attrs: Attrs, inputs: Sequence[TensorInfo], first: int = 0) -> Shape:
    """The output shape of `inputs` (input indices start at `first`) under `auto_broadcast`."""
    shape = inputs[0].shape
    for index, info in enumerate(inputs[1:], start=first + 1):
        if attrs["auto_broadcast"] == "none":
            if len(shape) != len(info.shape) or any(x is not None and y is not None and x != y
                                                    for x, y in zip(shape, info.shape)):
                raise ShapeError(f"auto_broadcast=none needs equal shapes, got {format_shape(shape)} "
                                 f"and {format_shape(info.shape)}", input=index)
        try:
            shape = broadcast(shape, info.shape)
        except ShapeError as exc:
            raise ShapeError(exc.reason, input=index) from None
    return shape


def same_element_type(inputs: Sequence[TensorInfo], first: int = 0) -> str:
    """The operands' common element type; a ShapeError names the first operand that differs."""
    for index, info in enumerate(inputs[1:], start=first + 1):
        if info.element_type != inputs[0].element_type:
            raise ShapeError(f"element type {info.element_type} differs from input {first}'s "
                             f"{inputs[0].element_type}", input=index)
    return inputs[0].element_type


def register_binary(type_: str, fn: BinaryFn, summary: str, *, attrs: tuple[Attr, ...] = (),
                    result_type: str | None = None, operand_types: tuple[str, ...] | None = None,
                    versions: tuple[str, ...] = ("opset1",)) -> None:
    """Register a binary layer computing `fn(attrs, a, b)` (numpy errors silenced: IEEE results).

    result_type: the output's element type (None: the operands'); operand_types: the types allowed.
    """
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        element_type = same_element_type(inputs)
        if operand_types is not None and element_type not in operand_types:
            raise ShapeError(f"{type_} takes {' or '.join(operand_types)} operands, got {element_type}", input=0)
        return [TensorInfo(broadcast_infos(attrs, inputs), result_type or element_type)]

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        (out,) = infer(attrs, array_infos(inputs))  # inference skips inputs of unknown rank: check here
        a, b = inputs
        dtype = element_types.numpy_dtype(result_type) if result_type else a.dtype
        check_fits(out.shape, dtype)  # broadcasting may multiply the inputs' sizes
        rows = _long_rows(a, b, tuple(out.shape))
        with np.errstate(all="ignore"):
            if rows is not None:
                return [np.asarray(fn(attrs, *rows), dtype=dtype).reshape(out.shape)]
            if _by_component(a, b, tuple(out.shape)):
                result = np.empty(out.shape, dtype)
                for j in range(out.shape[-1]):
                    result[..., j] = fn(attrs, a[..., min(j, a.shape[-1] - 1)], b[..., min(j, b.shape[-1] - 1)])
                return [result]
            return [np.asarray(fn(attrs, a, b), dtype=dtype)]

    register(OpSpec(type=type_, versions=versions, inputs=(2, 2), attrs=(AUTO_BROADCAST, *attrs),
                    infer=infer, run=run, summary=summary))


def _by_component(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether to compute one component of the output's short last dim at a time: both operands
    broadcast along other dims (RAFT's lookup, coords (2852, 1, 1, 2) + window (1, 9, 9, 2)), where
    `_long_rows` does not apply and numpy's inner loop would run k elements at a time; per component it
    runs along the other dims (4.0 against 1.07 ms on that case)."""
    return (len(shape) > 1 and 1 < shape[-1] <= 4 and a.ndim == b.ndim == len(shape)
            and a.shape[:-1] != shape[:-1] and b.shape[:-1] != shape[:-1]
            and int(np.prod(shape, dtype=np.int64)) >= ROW_ELEMENTS * 64)


def _long_rows(a: np.ndarray, b: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """a and b as rows of m times the output's short last dim k (ROW_ELEMENTS), the same elements in
    the same order, when each is C-contiguous of the output's shape, varies along the last dim only
    (tiled m times) or is one value; None where that does not apply or would not help."""
    if not shape or shape[-1] * 8 > ROW_ELEMENTS or a.shape == b.shape:
        return None
    k, lead = shape[-1], int(np.prod(shape[:-1], dtype=np.int64))
    want = 1 << (-(-ROW_ELEMENTS // max(k, 1)) - 1).bit_length()  # a power of two: rows of >= ROW_ELEMENTS
    m = min(lead & -lead, want)  # ... that divides the leading dims
    if m < 8:
        return None
    rows = []
    for operand in (a, b):
        if operand.shape == shape and operand.flags.c_contiguous:
            rows.append(operand.reshape(lead // m, k * m))
        elif operand.size == 1:
            rows.append(operand.reshape(()))
        elif operand.size == k and operand.shape[-1] == k:
            rows.append(np.tile(operand.reshape(k), m))
        else:
            return None
    return rows[0], rows[1]

"""Add, Subtract, Multiply, Divide with OpenVINO's `auto_broadcast` (numpy or none)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...errors import ShapeError
from ...ir.dims import format_shape
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import broadcast

_BROADCAST = Attr("auto_broadcast", "str", "numpy", choices={"numpy": "numpy", "none": "none"})


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    a, b = inputs
    if a.element_type != b.element_type:
        raise ShapeError(f"inputs have different element types {a.element_type} and {b.element_type}",
                         input=1)
    if attrs["auto_broadcast"] == "none":
        if a.rank != b.rank or any(x is not None and y is not None and x != y for x, y in zip(a.shape, b.shape)):
            raise ShapeError(f"auto_broadcast=none needs equal shapes, got {format_shape(a.shape)} "
                             f"and {format_shape(b.shape)}", input=1)
    return [TensorInfo(broadcast(a.shape, b.shape), a.element_type)]


def _integer_divide(a: np.ndarray, b: np.ndarray, python_division: bool) -> np.ndarray:
    if np.any(b == 0):
        raise ZeroDivisionError("integer division by zero")
    quotient = np.floor_divide(a, b)
    if python_division:
        return quotient
    # C division truncates toward zero: step floored quotients with a remainder back up.
    return quotient + ((quotient < 0) & (quotient * b != a))


def _divide(attrs: Attrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _integer_divide(a, b, attrs["m_pythondiv"])
    return np.divide(a, b)


def _register(type_: str, fn: Callable[[Attrs, np.ndarray, np.ndarray], np.ndarray], attrs=()) -> None:
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        a, b = inputs
        with np.errstate(all="ignore"):
            return [np.asarray(fn(attrs, a, b), dtype=a.dtype)]

    register(OpSpec(type=type_, versions=("opset1",), inputs=(2, 2), attrs=(_BROADCAST, *attrs),
                    infer=_infer, run=run, summary=f"Element-wise {type_.lower()} (numpy)."))


_register("Add", lambda attrs, a, b: np.add(a, b))
_register("Subtract", lambda attrs, a, b: np.subtract(a, b))
_register("Multiply", lambda attrs, a, b: np.multiply(a, b))
_register("Divide", _divide, (Attr("m_pythondiv", "bool", True),))

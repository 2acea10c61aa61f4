"""Add, Subtract, Multiply, Divide, Minimum, Maximum and Power with OpenVINO's `auto_broadcast`.

Minimum and Maximum choose as OpenVINO's CPU plugin (x86 minps/maxps): `a if a < b else b` and
`a if a > b else b`, so a NaN in `a` gives `b`, a NaN in `b` gives NaN, and min(-0, 0) is 0 (the spec
is silent; OpenVINO's reference implementation picks the other operand in those cases).
Integer Power is exact integer exponentiation (wrapping like the other integer ops); a negative
exponent gives the truncated quotient 1 / a^-e (0 unless a is 1 or -1), as OpenVINO's reference
implementation (its CPU plugin computes integer powers in f32, exact only below 2^24).
Mod (sign of the dividend) and FloorMod (sign of the divisor) compute floats as OpenVINO's CPU plugin,
a - b * trunc(a / b) and a - b * floor(a / b) in the data's type (not numpy's exact fmod-based
remainder: they differ in the last bits), and integers exactly (the CPU plugin goes through f32).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...ir.attributes import Attr
from ...registry import Attrs
from .broadcasting import BinaryFn, register_binary
from .index_inputs import NUMERIC_TYPES


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


def _remainder(rounding: Callable[[np.ndarray], np.ndarray], integer: Callable) -> BinaryFn:
    def remainder(attrs: Attrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iu":
            if np.any(b == 0):
                raise ZeroDivisionError("integer modulo by zero")
            return integer(a, b)
        if a.dtype == np.float16:  # one rounding, from f32, as OpenVINO
            a, b = a.astype(np.float32), b.astype(np.float32)
        return a - b * rounding(a / b)
    return remainder


def _integer_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    powers = np.power(a, np.maximum(b, 0).astype(b.dtype))
    if b.dtype.kind == "u" or not np.any(b < 0):
        return powers
    # 1 / a^k truncated toward zero: +-1 for a = +-1, else 0 (also for a = 0, where OpenVINO converts
    # pow(0, -k) = inf to an integer: undefined behaviour in C++).
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(a.dtype)
    return np.where(b < 0, inverse, powers)


def _power(attrs: Attrs, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _integer_power(a, b)
    if a.dtype == np.float16:  # one rounding, from f32, as OpenVINO
        return np.power(a.astype(np.float32), b.astype(np.float32))
    return np.power(a, b)


_ARITHMETIC = {
    "Add": (lambda attrs, a, b: np.add(a, b), "Element-wise add (numpy).", ()),
    "Subtract": (lambda attrs, a, b: np.subtract(a, b), "Element-wise subtract (numpy).", ()),
    "Multiply": (lambda attrs, a, b: np.multiply(a, b), "Element-wise multiply (numpy).", ()),
    "Divide": (_divide, "Element-wise divide (numpy).", (Attr("m_pythondiv", "bool", True),)),
    "Minimum": (lambda attrs, a, b: np.where(a < b, a, b), "Element-wise minimum.", ()),
    "Maximum": (lambda attrs, a, b: np.where(a > b, a, b), "Element-wise maximum.", ()),
    "Power": (_power, "Element-wise a to the power b (exact for integers).", ()),
    "Mod": (_remainder(np.trunc, np.fmod), "Remainder with the dividend's sign (C fmod).", ()),
    "FloorMod": (_remainder(np.floor, np.mod), "Remainder with the divisor's sign (Python %).", ()),
}
for _name, (_fn, _summary, _attrs) in _ARITHMETIC.items():  # OpenVINO refuses boolean operands for all
    register_binary(_name, _fn, _summary, attrs=_attrs, operand_types=NUMERIC_TYPES)

"""Unary element-wise math: Abs, Negative, Relu, Floor, Ceiling, Round-5, Sqrt, Exp, Log, Sigmoid, Tanh.

Each keeps its input's shape and element type. f16 is computed in f32 and rounded once to f16, as
OpenVINO's CPU plugin does, so a single operation agrees with it exactly. Rounding ops are the
identity on integers; the transcendental ones accept floating-point tensors only (what OpenVINO's
CPU plugin computes them in).

Where OpenVINO's CPU plugin departs from the op specs, irgrid follows the specs and OpenVINO's reference
implementation (what it folds constants with): exp(NaN) and relu(NaN) are NaN (the CPU plugin gives inf
and 0), and half_away_from_zero rounds 0.49999997 to 0 and 8388609 to itself (the CPU plugin computes
floor(|x| + 0.5) and gives 1 and 8388610).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...errors import LayerAttributeError, ShapeError
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos, require_float

UnaryFn = Callable[[Attrs, np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _round_half_away_from_zero(x: np.ndarray) -> np.ndarray:
    """Exact for every float: x - trunc(x) is exact, unlike floor(|x| + 0.5) at 0.49999997."""
    whole = np.trunc(x)
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)


def _round(attrs: Attrs, x: np.ndarray) -> np.ndarray:
    return np.rint(x) if attrs["mode"] == "half_to_even" else _round_half_away_from_zero(x)


def _register(type_: str, fn: UnaryFn, summary: str, *, floats_only: bool = False, integer_identity: bool = False,
              versions: tuple[str, ...] = ("opset1",), attrs: tuple[Attr, ...] = (),
              check_attrs: Callable[[Attrs], None] | None = None, aliases: tuple[str, ...] = ()) -> None:
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        (x,) = inputs
        if check_attrs is not None:
            check_attrs(attrs)
        if x.element_type == "boolean":
            raise ShapeError(f"{type_} takes a numeric input, got boolean", input=0)
        if floats_only:
            require_float(x, 0, f"{type_}'s input")
        return [TensorInfo(x.shape, x.element_type)]

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        (x,) = inputs
        if x.dtype.kind in "iub":
            if floats_only or x.dtype.kind == "b":  # inference skips inputs of unknown rank: refuse here
                infer(attrs, array_infos([x]))
            if integer_identity:
                return [x]
        wide = x.astype(np.float32) if x.dtype == np.float16 else x
        with np.errstate(all="ignore"):
            return [np.asarray(fn(attrs, wide)).astype(x.dtype, copy=False)]

    for name in (type_, *aliases):
        register(OpSpec(type=name, versions=versions, inputs=(1, 1), attrs=attrs, infer=infer, run=run,
                        summary=summary if name == type_ else f"Alias of {type_}."))


_register("Abs", lambda attrs, x: np.abs(x), "Absolute value.")
_register("Negative", lambda attrs, x: np.negative(x), "Negation.")
# OpenVINO's Relu is written "ReLU" in IR files (its serializer renames it) and read under both names.
_register("ReLU", lambda attrs, x: np.maximum(x, np.zeros((), x.dtype)), "max(x, 0).", aliases=("Relu",))
_register("Floor", lambda attrs, x: np.floor(x), "Round down (identity on integers).", integer_identity=True)
_register("Ceiling", lambda attrs, x: np.ceil(x), "Round up (identity on integers).", integer_identity=True)
_register("Round", _round, "Round to nearest, half_to_even or half_away_from_zero (identity on integers).",
          integer_identity=True, versions=("opset5",),
          attrs=(Attr("mode", "str", "half_to_even", required=True,
                      choices=("half_to_even", "half_away_from_zero")),))
_register("Sqrt", lambda attrs, x: np.sqrt(x), "Square root (NaN below 0).", floats_only=True)
_register("Exp", lambda attrs, x: np.exp(x), "e to the x.", floats_only=True)
_register("Log", lambda attrs, x: np.log(x), "Natural logarithm (NaN below 0, -inf at 0).", floats_only=True)
_register("Sigmoid", lambda attrs, x: _sigmoid(x), "Logistic function 1 / (1 + exp(-x)).", floats_only=True)
_register("Tanh", lambda attrs, x: np.tanh(x), "Hyperbolic tangent.", floats_only=True)


def _check_clamp_attrs(attrs: Attrs) -> None:
    if attrs["min"] > attrs["max"]:
        raise LayerAttributeError(f"min {attrs['min']:g} is above max {attrs['max']:g}")


def _clamp_bounds(attrs: Attrs, dtype: np.dtype) -> tuple[np.generic, np.generic]:
    """min and max in the data's type: for integers ceil(min) and floor(max) (the Clamp-1 spec), held
    inside the type's range."""
    _check_clamp_attrs(attrs)
    lo, hi = attrs["min"], attrs["max"]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = math.ceil(lo), math.floor(hi)
        return dtype.type(min(max(lo, info.min), info.max)), dtype.type(max(min(hi, info.max), info.min))
    return dtype.type(lo), dtype.type(hi)


def _clamp(attrs: Attrs, x: np.ndarray) -> np.ndarray:
    """min(max(x, lo), hi) with Maximum's and Minimum's choices, so NaN becomes min as in OpenVINO's CPU
    plugin (its reference implementation keeps NaN)."""
    lo, hi = _clamp_bounds(attrs, x.dtype)
    raised = np.where(x > lo, x, lo)
    return np.where(raised < hi, raised, hi)


_register("Clamp", _clamp, "Clamp to [min, max] (integers: [ceil(min), floor(max)]).",
          attrs=(Attr("min", "float", 0.0, required=True), Attr("max", "float", 0.0, required=True)),
          check_attrs=_check_clamp_attrs)

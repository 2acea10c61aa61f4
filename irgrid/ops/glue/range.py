"""Range-4 (inputs of any numeric types, `output_type`) and Range-1 (one type throughout): arange.

The length is max(ceil((stop - start) / step), 0), computed in f64 (exactly, for integer outputs).
Integer outputs first cast start, stop and step to the output type, rounding toward zero, as the
Range-4 spec and OpenVINO's reference implementation do (its CPU plugin instead computes fractional
inputs in float and rounds each value: 0.5, 5.5, 1.5 gives [0, 1, 2, 3, 4] here and [0, 2, 4, 5]
there, and it gives 5 values for start 5, stop 0, step 1, where the spec's formula gives none).
Float outputs are start + i * step computed in f32 (f64 for f64), as OpenVINO's reference; its CPU
plugin adds step repeatedly within each thread's chunk, so its last ulps depend on the thread count.
With constant inputs (the usual arange over a static size) the output shape is static and the value
folds.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import ShapeError
from ...ir import element_types
from ...ir.attributes import Attr
from ...memory import check_fits
from ...registry import OpSpec, TensorInfo, register
from .index_inputs import INTEGER_TYPES, NUMERIC_TYPES, value_infos

_NAMES = ("start", "stop", "step")


def _scalars(inputs: list[TensorInfo]) -> list[float | int] | None:
    """start, stop, step as Python numbers (None when any is unknown); checks they are numeric scalars."""
    for index, info in enumerate(inputs):
        if info.element_type not in NUMERIC_TYPES:
            raise ShapeError(f"{_NAMES[index]} must be numeric, got {info.element_type}", input=index)
        if info.shape not in ((), (1,)):
            raise ShapeError(f"{_NAMES[index]} must be a scalar", input=index)
    if any(info.value is None for info in inputs):
        return None
    values = [np.asarray(info.value).reshape(-1)[0].item() for info in inputs]
    for index, value in enumerate(values):
        if not math.isfinite(value):
            raise ShapeError(f"{_NAMES[index]} is {value}", input=index)
    return values


def _plan(output_type: str, inputs: list[TensorInfo]) -> tuple[list[float | int] | None, int | None]:
    """(start, stop, step) in the output's terms and the length; (None, None) while unknown."""
    values = _scalars(inputs)
    if values is None:
        return None, None
    if output_type in INTEGER_TYPES:
        values = [int(v) for v in values]  # int() truncates toward zero
        info = np.iinfo(element_types.numpy_dtype(output_type))
        for index, value in enumerate(values):
            if not info.min <= value <= info.max:  # a cast OpenVINO leaves undefined
                raise ShapeError(f"{_NAMES[index]} {value} does not fit output type {output_type}", input=index)
    start, stop, step = values
    if step == 0:
        raise ShapeError("step is 0" + (" after truncation to an integer" if output_type in INTEGER_TYPES else ""),
                         input=2)
    if isinstance(step, int):
        length = max(-((start - stop) // step), 0)  # exact ceil((stop - start) / step)
    else:
        length = max(math.ceil((stop - start) / step), 0)
    return values, length


def _infer(output_type: str, inputs: list[TensorInfo]) -> list[TensorInfo]:
    _, length = _plan(output_type, inputs)
    return [TensorInfo((length,), output_type)]


def _values(output_type: str, start, step, length: int) -> np.ndarray:
    dtype = element_types.numpy_dtype(output_type)
    check_fits((length,), dtype)
    if dtype.kind in "iu":
        return (start + np.arange(length, dtype=np.int64) * step).astype(dtype)
    wide = np.float64 if dtype == np.float64 else np.float32
    return (wide(start) + np.arange(length, dtype=wide) * wide(step)).astype(dtype)


def _run(output_type: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    values, length = _plan(output_type, value_infos(inputs))
    return [_values(output_type, values[0], values[2], length)]


def _range1_type(inputs: list[TensorInfo]) -> str:
    for index, info in enumerate(inputs[1:], start=1):
        if info.element_type != inputs[0].element_type:
            raise ShapeError(f"Range-1 needs one element type: {_NAMES[index]} is {info.element_type}, start "
                             f"{inputs[0].element_type}", input=index)
    return inputs[0].element_type


register(OpSpec(type="Range", versions=("opset4",), inputs=(3, 3),
                attrs=(Attr("output_type", "element_type", "i64", required=True),),
                infer=lambda attrs, inputs: _infer(attrs["output_type"], inputs),
                run=lambda attrs, inputs, ctx: _run(attrs["output_type"], inputs),
                summary="arange(start, stop, step) of output_type (integer outputs truncate the inputs)."))
register(OpSpec(type="Range", versions=("opset1",), inputs=(3, 3), attrs=(),
                infer=lambda attrs, inputs: _infer(_range1_type(inputs), inputs),
                run=lambda attrs, inputs, ctx: _run(_range1_type(value_infos(inputs)), inputs),
                summary="arange(start, stop, step) in the inputs' one element type."))

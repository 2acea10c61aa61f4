"""Convert: element type conversion.

Float to integer truncates toward zero; out-of-range values, undefined by the spec (OpenVINO's CPU
plugin wraps them through i32), saturate to the target range and NaN becomes 0. To bf16 rounds to
nearest even on the bf16 grid (kept as f32, irgrid's carrier for bf16).
"""
from __future__ import annotations

import numpy as np

from ...ir import element_types
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import to_integer


def convert(x: np.ndarray, element_type: str) -> np.ndarray:
    dtype = element_types.numpy_dtype(element_type)
    if element_type == "bf16":
        return element_types.round_to_bf16(x)
    if dtype.kind in "iu" and x.dtype.kind == "f":
        return to_integer(x, dtype, np.trunc)
    if dtype.kind == "b":
        return x != 0
    with np.errstate(over="ignore"):  # f32 -> f16 overflow gives +-inf, as intended
        return x.astype(dtype)


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    return [TensorInfo(inputs[0].shape, attrs["destination_type"])]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    return [convert(inputs[0], attrs["destination_type"])]


register(OpSpec(type="Convert", versions=("opset1",), inputs=(1, 1),
                attrs=(Attr("destination_type", "element_type", "f32", required=True),), infer=_infer, run=_run,
                summary="Element type conversion (numpy)."))

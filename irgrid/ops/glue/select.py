"""Select-1: `then` where a boolean condition holds, else `else`, the three inputs broadcast together."""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...memory import check_fits
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos
from .broadcasting import AUTO_BROADCAST, broadcast_infos, same_element_type


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    condition, then, otherwise = inputs
    if condition.element_type != "boolean":
        raise ShapeError(f"the condition must be boolean, got {condition.element_type}", input=0)
    element_type = same_element_type([then, otherwise], first=1)
    return [TensorInfo(broadcast_infos(attrs, inputs), element_type)]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    (out,) = _infer(attrs, array_infos(inputs))
    condition, then, otherwise = inputs
    check_fits(out.shape, then.dtype)
    return [np.where(condition, then, otherwise)]


register(OpSpec(type="Select", versions=("opset1",), inputs=(3, 3), attrs=(AUTO_BROADCAST,), infer=_infer,
                run=_run, summary="Choose then/else by a boolean condition (broadcast)."))

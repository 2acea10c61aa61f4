"""Comparisons (Greater, Less, Equal, ...) and Logical* layers: boolean results over broadcast inputs.

Comparisons take operands of any one element type and follow IEEE (a NaN compares unequal to all);
the logical layers take boolean operands only, as OpenVINO's type checks require.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos
from .broadcasting import register_binary

_COMPARISONS = {"Greater": np.greater, "Less": np.less, "Equal": np.equal, "GreaterEqual": np.greater_equal,
                "LessEqual": np.less_equal, "NotEqual": np.not_equal}
_LOGICAL = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalXor": np.logical_xor}

for _name, _fn in _COMPARISONS.items():
    register_binary(_name, lambda attrs, a, b, fn=_fn: fn(a, b), f"Element-wise {_fn.__name__} (boolean result).",
                    result_type="boolean")
# OpenVINO writes LogicalXor as opset2 (where its current class was named), the others as opset1.
for _name, _fn in _LOGICAL.items():
    register_binary(_name, lambda attrs, a, b, fn=_fn: fn(a, b), f"Element-wise {_fn.__name__} of booleans.",
                    result_type="boolean", operand_types=("boolean",),
                    versions=("opset1", "opset2") if _name == "LogicalXor" else ("opset1",))


def _not_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    (x,) = inputs
    if x.element_type != "boolean":
        raise ShapeError(f"LogicalNot takes a boolean input, got {x.element_type}", input=0)
    return [TensorInfo(x.shape, "boolean")]


def _not_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _not_infer(attrs, array_infos(inputs))
    return [np.logical_not(inputs[0])]


register(OpSpec(type="LogicalNot", versions=("opset1",), inputs=(1, 1), attrs=(), infer=_not_infer, run=_not_run,
                summary="Element-wise not of booleans."))

"""Comparisons (Greater, Less, Equal, ...), Logical* and Bitwise*-13 layers over broadcast inputs.

Comparisons take operands of any one element type, follow IEEE (a NaN compares unequal to all) and
give booleans; the logical layers take boolean operands only, as OpenVINO's type checks require; the
bitwise ones (what OpenVINO's PyTorch frontend emits for `|`, `&`, `^`, `~`, also on boolean masks)
take booleans or integers and keep their type.
"""
from __future__ import annotations

import numpy as np

from ...errors import ShapeError
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import array_infos
from .broadcasting import register_binary
from .index_inputs import INTEGER_TYPES

_COMPARISONS = {"Greater": np.greater, "Less": np.less, "Equal": np.equal, "GreaterEqual": np.greater_equal,
                "LessEqual": np.less_equal, "NotEqual": np.not_equal}
_LOGICAL = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalXor": np.logical_xor}
_BITWISE = {"BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor}
_BITWISE_TYPES = ("boolean", *INTEGER_TYPES)

for _name, _fn in _COMPARISONS.items():
    register_binary(_name, lambda attrs, a, b, fn=_fn: fn(a, b), f"Element-wise {_fn.__name__} (boolean result).",
                    result_type="boolean")
# OpenVINO writes LogicalXor as opset2 (where its current class was named), the others as opset1.
for _name, _fn in _LOGICAL.items():
    register_binary(_name, lambda attrs, a, b, fn=_fn: fn(a, b), f"Element-wise {_fn.__name__} of booleans.",
                    result_type="boolean", operand_types=("boolean",),
                    versions=("opset1", "opset2") if _name == "LogicalXor" else ("opset1",))
for _name, _fn in _BITWISE.items():
    register_binary(_name, lambda attrs, a, b, fn=_fn: fn(a, b), f"Element-wise {_fn.__name__} of booleans or "
                    "integers.", operand_types=_BITWISE_TYPES, versions=("opset13",))


def _register_not(type_: str, version: str, operand_types: tuple[str, ...], summary: str) -> None:
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        (x,) = inputs
        if x.element_type not in operand_types:
            raise ShapeError(f"{type_} takes {' or '.join(operand_types)} input, got {x.element_type}", input=0)
        return [TensorInfo(x.shape, x.element_type)]

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        infer(attrs, array_infos(inputs))  # inference skips inputs of unknown rank: check them here
        return [np.invert(inputs[0])]  # logical not on booleans, bitwise not on integers

    register(OpSpec(type=type_, versions=(version,), inputs=(1, 1), attrs=(), infer=infer, run=run, summary=summary))


_register_not("LogicalNot", "opset1", ("boolean",), "Element-wise not of booleans.")
_register_not("BitwiseNot", "opset13", _BITWISE_TYPES, "Element-wise bitwise not of booleans or integers.")

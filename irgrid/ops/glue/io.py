"""Parameter, Const (Constant) and Result: where values enter and leave a graph."""
from __future__ import annotations

import numpy as np

from ...inference import parameter_info
from ...ir.model import Layer
from ...registry import Attr, OpSpec, RunContext, TensorInfo, register


def _parameter_run(layer: Layer, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    raise AssertionError("the executor feeds Parameters itself")


register(OpSpec(
    type="Parameter", versions=("opset1",), inputs=(0, 0),
    attrs=(Attr("element_type", "element_type"), Attr("shape", "shape", default=None)),
    infer=lambda layer, inputs: [parameter_info(layer)],
    run=_parameter_run,
    summary="A model input."))


def _const_infer(layer: Layer, inputs: list[TensorInfo]) -> list[TensorInfo]:
    value = layer.const
    return [TensorInfo(value.shape, layer.attrs["element_type"], value)]


def _const_run(layer: Layer, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    return [np.require(layer.const, requirements="A")]  # .bin offsets need not be aligned


_CONST_ATTRS = (Attr("element_type", "element_type"), Attr("shape", "shape"),
                Attr("offset", "int", minimum=0), Attr("size", "int", minimum=0))

register(OpSpec(type="Const", versions=("opset1",), inputs=(0, 0), attrs=_CONST_ATTRS,
                infer=_const_infer, run=_const_run, summary="A constant read from the .bin."))
register(OpSpec(type="Constant", versions=("opset1",), inputs=(0, 0), attrs=_CONST_ATTRS,
                infer=_const_infer, run=_const_run, summary="Alias of Const."))

register(OpSpec(
    type="Result", versions=("opset1",), inputs=(1, 1), attrs=(),
    infer=lambda layer, inputs: [TensorInfo(inputs[0].shape, inputs[0].element_type)],
    run=lambda layer, inputs, ctx: [inputs[0]],
    summary="A model output."))

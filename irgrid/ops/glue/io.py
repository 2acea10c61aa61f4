"""Parameter, Const (Constant) and Result: where values enter and leave a graph.

Parameters and Consts are the graph's sources: the graph pass gives their values (the caller's
inputs, the .bin payload the reader loaded), so they register no infer or run function.
"""
from __future__ import annotations

from ...ir.attributes import CONST_ATTRS, Attr
from ...registry import OpSpec, TensorInfo, register

register(OpSpec(
    type="Parameter", versions=("opset1",), inputs=(0, 0),
    attrs=(Attr("element_type", "element_type", "f32", required=True), Attr("shape", "shape", None)),
    infer=None, run=None, summary="A model input."))
register(OpSpec(type="Const", versions=("opset1",), inputs=(0, 0), attrs=CONST_ATTRS,
                infer=None, run=None, summary="A constant read from the .bin."))
register(OpSpec(type="Constant", versions=("opset1",), inputs=(0, 0), attrs=CONST_ATTRS,
                infer=None, run=None, summary="Alias of Const."))
register(OpSpec(
    type="Result", versions=("opset1",), inputs=(1, 1), attrs=(), outputs=0,
    infer=lambda attrs, inputs: [TensorInfo(inputs[0].shape, inputs[0].element_type)],
    run=lambda attrs, inputs, ctx: [inputs[0]],
    summary="A model output."))

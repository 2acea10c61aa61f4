"""Conversion rules for OpenVINO's ONNX and PyTorch frontends, onto irgrid's operators.

Each rule maps a source node to OpenVINO's native op where OpenVINO has the variant (4-D GridSample:
`GridSample-9`) and to irgrid's own op otherwise (any other rank, or an unknown rank), so converted
models run natively wherever they can. Facts the rules rely on (docs/openvino.md):
- an ONNX rule replaces OpenVINO's built-in converter of that op type in every rank; com.microsoft ops
  need the domain-qualified `ConversionExtension(op_type, domain, fn)`;
- the ONNX node's opset version is not exposed, so GridSample accepts both the opset-16 names
  (bilinear, bicubic) and the opset-20 names (linear, cubic); absent attributes get ONNX's defaults;
- PyTorch's TorchScript graphs call `aten::grid_sampler`, `torch.export` graphs
  `aten.grid_sampler_2d.default` / `aten.grid_sampler_3d.default`; their mode, padding and
  align_corners arrive as constant inputs. The generic `ConversionExtension` serves both frontends
  (`openvino.frontend.pytorch` itself cannot be imported without torch).
- ONNX DeformConv-19/22: an absent optional input (B before a given mask) arrives as a `NullNode`
  of dynamic rank. 2-D maps to OpenVINO's DeformableConvolution-8 with
  bilinear_interpolation_pad=true (the same zero-padded bilinear sampling, docs/semantics.md) plus
  an Add of the bias; other or unknown ranks map to irgrid's DeformConv irgrid1, with absent list
  attributes written by rank (dilations and strides ones, pads zeros, kernel_shape from W).
- ONNX AffineGrid-20 and TorchScript's `aten::affine_grid_generator` (OpenVINO has no rule for the
  latter; its ONNX import decomposes the former in f32 only) map to AffineGrid irgrid1; torch passes
  a literal size as constant values, which become an i64 Constant, and `x.size()` as a tensor.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import openvino.opset1 as opset1
import openvino.opset8 as opset8
import openvino.opset9 as opset9
from openvino._pyopenvino import GeneralFailure  # what NodeContext raises for a non-constant input
from openvino.frontend import ConversionExtension
from openvino.frontend.onnx import ConversionExtension as OnnxConversionExtension

from ..ops.deform_conv import onnx_geometry
from ..registry import find
from .ops import op_class

# aten::grid_sampler's integer codes (torch/nn/functional.py: GRID_SAMPLE_INTERPOLATION_MODES, ...).
_TORCH_MODES = {0: "linear", 1: "nearest", 2: "cubic"}
_TORCH_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}
# The ONNX rules check a node's input count (and DeformConv's attributes) by irgrid1's specs, as irgrid's
# reader checks an IR's layers.
_GRID_SAMPLE, _DEFORM_CONV, _AFFINE_GRID = (find(op, "irgrid1") for op in ("GridSample", "DeformConv", "AffineGrid"))
# GridSample's mode spellings, from the registry: OpenVINO GridSample-9's `mode` attribute writes a
# canonical mode as opset9 spells it; ONNX's spellings are irgrid1's (canonical or bi-prefixed).
_OPSET9_MODE = next(attr for attr in find("GridSample", "opset9").attrs if attr.name == "mode")
_ONNX_MODES = next(attr for attr in _GRID_SAMPLE.attrs if attr.name == "mode").choices


def conversion_extensions() -> list:
    """Conversion rules for `ov.convert_model(..., extension=...)` and `core.add_extension(...)`."""
    return [
        ConversionExtension("GridSample", _onnx_grid_sample),
        ConversionExtension("DeformConv", _onnx_deform_conv),
        ConversionExtension("AffineGrid", _onnx_affine_grid),
        OnnxConversionExtension("GridSample", "com.microsoft", _onnx_grid_sample),
        *(ConversionExtension(name, _torch_grid_sample)
          for name in ("aten::grid_sampler", "aten.grid_sampler_2d.default", "aten.grid_sampler_3d.default")),
        ConversionExtension("aten::affine_grid_generator", _torch_affine_grid),
    ]


def grid_sample(data, grid, mode: str, padding_mode: str, align_corners: bool) -> list:
    """GridSample on OpenVINO outputs: native GridSample-9 for 4-D data, irgrid1 otherwise."""
    rank = data.get_partial_shape().rank
    if rank.is_static and rank.get_length() == 4:
        node = opset9.grid_sample(data, grid, {"mode": _OPSET9_MODE.write(mode), "padding_mode": padding_mode,
                                               "align_corners": align_corners})
    else:
        node = op_class("GridSample", "irgrid1")([data, grid], mode=mode, padding_mode=padding_mode,
                                                 align_corners=align_corners)
    return node.outputs()


def _onnx_grid_sample(node) -> list:
    _GRID_SAMPLE.check_input_count(node.get_input_size())
    mode = str(node.get_attribute("mode", "linear"))
    if mode not in _ONNX_MODES:
        raise ValueError(f"GridSample: unknown mode {mode!r}")
    return grid_sample(node.get_input(0), node.get_input(1), _ONNX_MODES[mode],
                       str(node.get_attribute("padding_mode", "zeros")),
                       bool(node.get_attribute("align_corners", 0)))


def _torch_grid_sample(node) -> list:
    const: Callable[[int], object] = node.get_values_from_const_input
    return grid_sample(node.get_input(0), node.get_input(1), _TORCH_MODES[int(const(2))],
                       _TORCH_PADDINGS[int(const(3))], bool(const(4)))


def _affine_grid(theta, size, align_corners: bool) -> list:
    """AffineGrid irgrid1 (OpenVINO has none; its ONNX import decomposes the function in f32 only and
    mishandles size-1 dims with align_corners)."""
    return op_class("AffineGrid", "irgrid1")([theta, size], align_corners=align_corners).outputs()


def _onnx_affine_grid(node) -> list:
    _AFFINE_GRID.check_input_count(node.get_input_size())
    return _affine_grid(node.get_input(0), node.get_input(1), bool(node.get_attribute("align_corners", 0)))


def _torch_affine_grid(node) -> list:
    """aten::affine_grid_generator(theta, size: int[], align_corners: bool): a literal size arrives as
    constant values, which become the i64 size tensor AffineGrid takes; `x.size()` (the PyTorch
    tutorial's spelling) arrives as the tensor the frontend built from aten::size, converted to i64."""
    try:
        size = opset1.constant(np.asarray(node.get_values_from_const_input(1), np.int64)).output(0)
    except GeneralFailure:  # not a constant
        size = opset1.convert(node.get_input(1), "i64").output(0)
    return _affine_grid(node.get_input(0), size, bool(node.get_values_from_const_input(2)))


def _optional_input(node, index: int):
    """An ONNX node's optional input, None when absent (not given, or given as an empty name)."""
    if index >= node.get_input_size():
        return None
    value = node.get_input(index)
    return None if value.get_node().get_type_name() == "NullNode" else value


def _onnx_deform_conv(node) -> list:
    _DEFORM_CONV.check_input_count(node.get_input_size())
    x, w, offset = (node.get_input(i) for i in range(3))
    bias, mask = _optional_input(node, 3), _optional_input(node, 4)
    kernel_rank = w.get_partial_shape().rank
    r = kernel_rank.get_length() - 2 if kernel_rank.is_static else None
    if r is None or any(not d.is_static for d in list(w.get_partial_shape())[2:]):
        raise ValueError("DeformConv: W must have a static rank and static spatial dims")
    kernel = [d.get_length() for d in list(w.get_partial_shape())[2:]]
    attrs = _DEFORM_CONV.parse_attrs({
        "strides": list(node.get_attribute("strides", [1] * r)),
        "dilations": list(node.get_attribute("dilations", [1] * r)),
        "pads": list(node.get_attribute("pads", [0] * (2 * r))),
        "group": int(node.get_attribute("group", 1)), "offset_group": int(node.get_attribute("offset_group", 1)),
        "kernel_shape": list(node.get_attribute("kernel_shape", kernel))})
    if r == 2:  # OpenVINO's own layer, after irgrid1's checks of the attributes against W
        geometry = onnx_geometry(attrs, kernel)
        conv = opset8.deformable_convolution(x, offset, w, geometry.strides, geometry.pads_begin,
                                             geometry.pads_end, geometry.dilations, mask=mask,
                                             group=attrs["group"], deformable_group=attrs["offset_group"],
                                             bilinear_interpolation_pad=True)
        if bias is None:
            return conv.outputs()
        shape = opset1.constant(np.array([1, -1, 1, 1], np.int64))
        return opset1.add(conv, opset1.reshape(bias, shape, False)).outputs()
    inputs = [x, w, offset]
    if bias is not None or mask is not None:
        if bias is None:  # OpenVINO has no empty Constant: B of zeros stands for "no bias"
            out_channels = w.get_partial_shape()[0]
            if not out_channels.is_static:
                raise ValueError("DeformConv: a mask without B needs W's dim 0 (output channels) static")
            bias = opset1.convert_like(opset1.constant(np.zeros(out_channels.get_length(), np.float32)), x).output(0)
        inputs.append(bias)
    if mask is not None:
        inputs.append(mask)
    return op_class("DeformConv", "irgrid1")(inputs, attrs=attrs).outputs()

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
"""
from __future__ import annotations

from typing import Callable

import openvino.opset9 as opset9
from openvino.frontend import ConversionExtension
from openvino.frontend.onnx import ConversionExtension as OnnxConversionExtension

from .ops import op_class

# OpenVINO GridSample-9's spelling of each canonical mode.
_OPSET9_MODES = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}
_ONNX_MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic", "nearest": "nearest"}
# aten::grid_sampler's integer codes (torch/nn/functional.py: GRID_SAMPLE_INTERPOLATION_MODES, ...).
_TORCH_MODES = {0: "linear", 1: "nearest", 2: "cubic"}
_TORCH_PADDINGS = {0: "zeros", 1: "border", 2: "reflection"}


def conversion_extensions() -> list:
    """Conversion rules for `ov.convert_model(..., extension=...)` and `core.add_extension(...)`."""
    return [
        ConversionExtension("GridSample", _onnx_grid_sample),
        OnnxConversionExtension("GridSample", "com.microsoft", _onnx_grid_sample),
        *(ConversionExtension(name, _torch_grid_sample)
          for name in ("aten::grid_sampler", "aten.grid_sampler_2d.default", "aten.grid_sampler_3d.default")),
    ]


def grid_sample(data, grid, mode: str, padding_mode: str, align_corners: bool) -> list:
    """GridSample on OpenVINO outputs: native GridSample-9 for 4-D data, irgrid1 otherwise."""
    rank = data.get_partial_shape().rank
    if rank.is_static and rank.get_length() == 4:
        node = opset9.grid_sample(data, grid, {"mode": _OPSET9_MODES[mode], "padding_mode": padding_mode,
                                               "align_corners": align_corners})
    else:
        node = op_class("GridSample", "irgrid1")([data, grid], mode=mode, padding_mode=padding_mode,
                                                 align_corners=align_corners)
    return node.outputs()


def _onnx_grid_sample(node) -> list:
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

"""Convolution-1 (OpenVINO, native): a plain convolution for the graphs around the grid operators
(spatial transformers' localisation nets, registration and flow networks' U-Nets).

Any rank with one or more spatial dims; attributes strides, pads_begin, pads_end, dilations,
auto_pad. f32 2-D and 3-D convolutions run on OpenVINO's own Convolution (irgrid/dense.py: 1.2-9x
faster than im2col here, the same bits at any thread count); the others (f64, 1-D, an output dim of
1, `IRGRID_GEMM=numpy`, a process forked after OpenVINO ran) run the deformable path with no offsets
(every sampling point on the grid, one tap each): the im2col kernel, tiling and GEMM of
irgrid/ops/deform_conv.py.
"""
from __future__ import annotations

import numpy as np

from ..dense import convolution_on_openvino, run_layer
from ..errors import ShapeError
from ..ir.dims import format_shape
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, output_buffer, require_float
from .deform_conv import OPENVINO_CONV_ATTRS, Geometry, check_channels, convolve, openvino_geometry, require_same_type


def _checked(attrs: Attrs, inputs: list[TensorInfo]) -> tuple[TensorInfo, Geometry]:
    data, filters = inputs
    if data.rank is None or data.rank < 3:
        raise ShapeError(f"data must have rank 3 or more (N, C, spatial dims), got {format_shape(data.shape)}",
                         input=0)
    require_float(data, 0, "data")
    require_same_type(inputs)
    if filters.rank != data.rank or any(k is None for k in filters.shape[2:]):
        raise ShapeError(f"filters must have rank {data.rank} like the data, with static spatial dims, got "
                         f"{format_shape(filters.shape)}", input=1)
    out_channels = check_channels(data, filters, 1, 1)
    geometry = openvino_geometry(attrs, data.shape[2:], tuple(filters.shape[2:]))
    out_dims = geometry.output_dims(data.shape[2:])
    return TensorInfo((data.shape[0], out_channels, *out_dims), data.element_type), geometry


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _, geometry = _checked(attrs, array_infos(inputs))
    data, filters = inputs
    out_dims = geometry.output_dims(data.shape[2:])
    if convolution_on_openvino(data, filters, out_dims):
        out = output_buffer(ctx.out, 0, (data.shape[0], filters.shape[0], *out_dims), data.dtype)
        return run_layer(_openvino_convolution, (geometry,), inputs, [out], ctx.threads)
    return [convolve(data, filters, geometry, threads=ctx.threads, out=ctx.out)]


def _openvino_convolution(parameters: list, geometry: Geometry) -> list:
    """OpenVINO's own Convolution, the filters a Parameter (irgrid/dense.py: as fast, the same bits)."""
    import openvino.opset1 as ops

    data, filters = parameters
    return [ops.convolution(data, filters, list(geometry.strides), list(geometry.pads_begin), list(geometry.pads_end),
                            list(geometry.dilations))]


register(OpSpec(
    type="Convolution", versions=("opset1",), inputs=(2, 2), native=True, kernel=True, engine="OpenVINO f32, Cython",
    attrs=OPENVINO_CONV_ATTRS, infer=lambda attrs, inputs: [_checked(attrs, inputs)[0]], run=_run,
    summary="Convolution-1, any rank; f32 2-D/3-D on OpenVINO's Convolution, else im2col + GEMM."))

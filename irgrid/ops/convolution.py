"""Convolution-1 and GroupConvolution-1 (OpenVINO, native): the plain convolutions of the graphs around
the grid operators (spatial transformers' localisation nets, registration and flow networks' U-Nets,
depthwise layers).

Any rank with one or more spatial dims; attributes strides, pads_begin, pads_end, dilations,
auto_pad. GroupConvolution's filters are (groups, oC / groups, C / groups, kernel...). f32 2-D and 3-D
convolutions run on OpenVINO's own layer (irgrid/dense.py: 1.2-9x faster than im2col here, the same
bits at any thread count); the others (f64, 1-D, an output dim of 1, `IRGRID_GEMM=numpy`, a process
forked after OpenVINO ran) run the deformable path with no offsets (every sampling point on the grid,
one tap each): the im2col kernel, tiling and per-group GEMMs of irgrid/ops/im2col.py.
"""
from __future__ import annotations

from math import prod

import numpy as np

from ..dense import convolution_on_openvino, run_on_openvino
from ..errors import ShapeError
from ..ir.dims import format_shape
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, output_buffer, require_float
from .im2col import ENTRY, OPENVINO_CONV_ATTRS, Geometry, check_channels, convolve, openvino_geometry, require_same_type


def _checked(attrs: Attrs, inputs: list[TensorInfo], grouped: bool) -> tuple[TensorInfo, Geometry, int]:
    """The output, the geometry and the group count (1 for Convolution)."""
    data, filters = inputs
    if data.rank is None or data.rank < 3:
        raise ShapeError(f"data must have rank 3 or more (N, C, spatial dims), got {format_shape(data.shape)}",
                         input=0)
    require_float(data, 0, "data")
    require_same_type(inputs)
    lead = 2 if grouped else 1  # filters dims before (C / groups, kernel...)
    if filters.rank != data.rank + lead - 1 or any(k is None for k in filters.shape[lead + 1:]):
        want = "(groups, oC / groups, C / groups, kernel...)" if grouped else f"rank {data.rank} like the data"
        raise ShapeError(f"filters must be {want}, with static spatial dims, got {format_shape(filters.shape)}",
                         input=1)
    group = 1
    if grouped:
        group = filters.shape[0]
        if group is None or group < 1:
            raise ShapeError(f"the group count (filters dim 0) must be static and positive, got "
                             f"{format_shape(filters.shape)}", input=1)
        per_group = filters.shape[1]
        filters = TensorInfo((None if per_group is None else group * per_group, *filters.shape[2:]),
                             filters.element_type)
    out_channels = check_channels(data, filters, group, 1)
    geometry = openvino_geometry(attrs, data.shape[2:], tuple(filters.shape[2:]))
    out_dims = geometry.output_dims(data.shape[2:])
    return TensorInfo((data.shape[0], out_channels, *out_dims), data.element_type), geometry, group


def _run(grouped: bool):
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        out, geometry, group = _checked(attrs, array_infos(inputs), grouped)
        data, filters = inputs
        if convolution_on_openvino(data, filters, out.shape[2:]):
            buffer = output_buffer(ctx.out, 0, out.shape, data.dtype)
            return run_on_openvino(_openvino_convolution, (geometry, grouped), inputs, [buffer], ctx.threads)
        flat = filters.reshape(prod(filters.shape[:2]), *filters.shape[2:]) if grouped else filters
        return [convolve(data, flat, geometry, group=group, threads=ctx.threads, out=ctx.out)]
    return run


def _openvino_convolution(parameters: list, geometry: Geometry, grouped: bool) -> list:
    """OpenVINO's own (Group)Convolution, the filters a Parameter (irgrid/dense.py: as fast, the same bits)."""
    import openvino.opset1 as ops

    data, filters = parameters
    layer = ops.group_convolution if grouped else ops.convolution
    return [layer(data, filters, list(geometry.strides), list(geometry.pads_begin), list(geometry.pads_end),
                  list(geometry.dilations))]


for _type, _grouped, _summary in (
        ("Convolution", False, "Convolution-1, any rank; f32 2-D/3-D on OpenVINO's Convolution, else im2col + GEMM."),
        ("GroupConvolution", True, "GroupConvolution-1 (depthwise too), any rank; f32 2-D/3-D on OpenVINO's, else "
                                   "im2col + a GEMM per group.")):
    register(OpSpec(
        type=_type, versions=("opset1",), inputs=(2, 2), native=True, kernel=True, engine="OpenVINO f32, Cython",
        attrs=OPENVINO_CONV_ATTRS, infer=lambda attrs, inputs, grouped=_grouped: [_checked(attrs, inputs, grouped)[0]],
        run=_run(_grouped), entry=f"OpenVINO {_type} (f32 2-D/3-D), else {ENTRY}", summary=_summary))

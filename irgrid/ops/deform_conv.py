"""Deformable convolution: OpenVINO DeformableConvolution-1/-8 and ONNX DeformConv-19/22 (irgrid1).

Versions:
- DeformableConvolution opset1 (native): inputs (data, offsets, filters), 2-D; attributes strides,
  pads_begin, pads_end, dilations, auto_pad (explicit, valid, same_upper, same_lower), group,
  deformable_group. Always OpenVINO's `bilinear_interpolation_pad=false` boundary rule.
- DeformableConvolution opset8 (native): inputs (data, offsets, filters, mask?), no bias; adds
  `bilinear_interpolation_pad` (default false).
- DeformConv irgrid1 (irgrid's own): ONNX DeformConv-19/22 for any number r >= 1 of spatial dims:
  inputs (X, W, offset, B?, mask?); attributes dilations, group, kernel_shape, offset_group, pads,
  strides. OpenVINO's attribute visitor refuses empty lists, so the list attributes have non-empty
  defaults that stand for ONNX's "absent": dilations [1] and strides [1] (a 1-element list applies to
  every spatial axis), pads [0] (likewise), kernel_shape [0] (taken from W). A converter from ONNX
  writes absent attributes as these defaults, or in full by rank: dilations and strides r ones, pads
  2r zeros, kernel_shape W's spatial dims. ONNX lets B be absent while mask is given; in the IR an
  empty B (shape (0,)) means "no bias".

Shared semantics (docs/semantics.md, "DeformConv"):
- Offsets hold (dy, dx) (in general outermost-dim-first) pairs per offset group and kernel element:
  channel (g * K + k) * r + d; the mask channel is g * K + k. OpenVINO's `deformable_group` is
  ONNX's `offset_group`: input channel c belongs to offset group c // (C / groups).
- ONNX and `bilinear_interpolation_pad=true` sample zero-padded N-linearly (taps outside the input
  are 0). `bilinear_interpolation_pad=false` (OpenVINO's default, and all of v1) gives 0 for a point
  outside [0, H) x [0, W) and, inside, clamps the second tap to the last row/column
  (`min(ceil(y), H - 1)`), as OpenVINO's reference and CPU plugin compute it.
- A NaN offset makes that sample NaN (so the output points using it are NaN); +-Inf or huge offsets
  put the point outside (0); a point with no tap inside contributes 0 whatever its mask; NaN/Inf
  masks multiply the samples that are inside. OpenVINO's own result on NaN offsets is undefined (its
  CPU plugin crashes with bilinear_interpolation_pad=false, so irgrid's OpenVINO device runs this
  implementation in its place: docs/openvino.md); onnx.reference fails when H or W is 1.

Computation: the convolution engine of irgrid/ops/im2col.py (`convolve`).
"""
from __future__ import annotations

import math
from functools import partial
from typing import Sequence

import numpy as np

from ..errors import LayerAttributeError, ShapeError
from ..ir.attributes import Attr
from ..ir.dims import format_shape
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, merge_dim, require_float
from .im2col import (ENTRY, OPENVINO_CONV_ATTRS, Geometry, check_channels, convolve, openvino_geometry,
                     require_same_type, spatial_values)


def _require_rank(info: TensorInfo, rank: int, index: int, what: str) -> None:
    if info.rank != rank:
        raise ShapeError(f"{what} must have rank {rank} like the data, got {format_shape(info.shape)}", input=index)


def check_sampling_input(info: TensorInfo, index: int, what: str, batch: int | None, channels: int | None,
                         out_dims: tuple[int | None, ...], rank: int, per_tap: str = "") -> None:
    """An offset or mask input: rank, batch, channel count and spatial dims = the output's."""
    _require_rank(info, rank, index, what)
    require_float(info, index, what)
    merge_dim(info.shape[0], batch, f"{what} batch differs from the data's", index)
    merge_dim(info.shape[1], channels, f"{what} channels must be offset groups x kernel size{per_tap}", index)
    for axis, (got, want) in enumerate(zip(info.shape[2:], out_dims)):
        merge_dim(got, want, f"{what} spatial dim {axis} must equal the output's", index)


def infer_deformable(data: TensorInfo, filters: TensorInfo, offsets: TensorInfo, mask: TensorInfo | None,
                     geometry_of, group: int, offset_groups: int, indices: dict[str, int],
                     fixed_rank: int | None = None) -> tuple[TensorInfo, Geometry | None]:
    """Checks shared by every deformable version; returns the output info and the geometry (None
    while the kernel's dims are unknown).

    geometry_of(spatial input dims, kernel) -> Geometry; indices name each input's position.
    """
    if data.rank is None or data.rank < 3 or (fixed_rank and data.rank != fixed_rank):
        want = str(fixed_rank) if fixed_rank else "at least 3 (N, C and a spatial dim)"
        raise ShapeError(f"data must have rank {want}, got {format_shape(data.shape)}", input=0)
    from .._kernels.constants import MAX_TAPS_PER_POINT  # built: see irgrid._unbuilt

    r = data.rank - 2
    if 2 ** r > MAX_TAPS_PER_POINT:  # the 2**r taps of an N-linear point fill one kernel block at most
        raise ShapeError(f"{r} spatial dims: irgrid's kernel supports up to "
                         f"{MAX_TAPS_PER_POINT.bit_length() - 1}", input=0)
    require_float(data, 0, "data")
    _require_rank(filters, data.rank, indices["filters"], "filters")
    require_float(filters, indices["filters"], "filters")
    out_channels = check_channels(data, filters, group, indices["filters"])
    channels = data.shape[1]
    if channels is not None and channels % offset_groups:
        raise ShapeError(f"input channels {channels} are not divisible by the {offset_groups} offset groups",
                         input=0)
    kernel = tuple(filters.shape[2:])
    if 0 in filters.shape[:1] + kernel:
        raise ShapeError(f"filters' output channels and kernel dims must be positive, got "
                         f"{format_shape(filters.shape)}", input=indices["filters"])
    if None in kernel:  # known at run time only (OpenVINO's reshape passes): nothing more to check
        geometry, out_dims, taps = None, (None,) * r, None
    else:
        geometry = geometry_of(data.shape[2:], kernel)
        out_dims = geometry.output_dims(data.shape[2:])
        taps = offset_groups * math.prod(kernel)
    batch = data.shape[0]
    check_sampling_input(offsets, indices["offsets"], "offsets", batch, taps and taps * r, out_dims, data.rank,
                         f" x {r} spatial dims")
    if mask is not None:
        check_sampling_input(mask, indices["mask"], "mask", batch, taps, out_dims, data.rank)
    return TensorInfo((batch, out_channels, *out_dims), data.element_type), geometry


# --- OpenVINO DeformableConvolution-1 / -8 ------------------------------------------------------

def _openvino_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    return [_openvino_checked(attrs, inputs)[0]]


def _openvino_checked(attrs: Attrs, inputs: list[TensorInfo]) -> tuple[TensorInfo, Geometry]:
    data, offsets, filters = inputs[:3]
    mask = inputs[3] if len(inputs) > 3 else None
    require_same_type(inputs)
    return infer_deformable(data, filters, offsets, mask, partial(openvino_geometry, attrs), attrs["group"],
                            attrs["deformable_group"], {"offsets": 1, "filters": 2, "mask": 3}, fixed_rank=4)


def _openvino_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _, geometry = _openvino_checked(attrs, array_infos(inputs))
    data, offsets, filters = inputs[:3]
    boundary = "zeros" if attrs.get("bilinear_interpolation_pad") else "edge"
    return [convolve(data, filters, geometry, offsets=offsets, mask=inputs[3] if len(inputs) > 3 else None,
                     group=attrs["group"], offset_groups=attrs["deformable_group"], boundary=boundary,
                     threads=ctx.threads, out=ctx.out)]


_DEFORMABLE_V1_ATTRS = (*OPENVINO_CONV_ATTRS, Attr("group", "int", 1, minimum=1),
                        Attr("deformable_group", "int", 1, minimum=1))
_SUMMARY = "Bilinear sampling at learned offsets, im2col + GEMM per group."
register(OpSpec(
    type="DeformableConvolution", versions=("opset1",), inputs=(3, 3), native=True, kernel=True, entry=ENTRY,
    attrs=_DEFORMABLE_V1_ATTRS, infer=_openvino_infer, run=_openvino_run,
    summary=f"OpenVINO DeformableConvolution-1 (2-D). {_SUMMARY}"))
register(OpSpec(
    type="DeformableConvolution", versions=("opset8",), inputs=(3, 4), native=True, kernel=True, entry=ENTRY,
    attrs=(*_DEFORMABLE_V1_ATTRS, Attr("bilinear_interpolation_pad", "bool", False)),
    infer=_openvino_infer, run=_openvino_run,
    summary=f"OpenVINO DeformableConvolution-8 (2-D, optional mask, both boundary rules). {_SUMMARY}"))


# --- ONNX DeformConv-19/22 as irgrid1 --------------------------------------------------------------

def onnx_geometry(attrs: Attrs, kernel: Sequence[int]) -> Geometry:
    """DeformConv irgrid1's parsed attributes for W's spatial dims `kernel` (also the ONNX conversion
    rule's check where it maps 2-D DeformConv to OpenVINO's DeformableConvolution-8)."""
    r = len(kernel)
    if list(attrs["kernel_shape"]) != [0] and tuple(attrs["kernel_shape"]) != tuple(kernel):
        raise ShapeError(f"kernel_shape {list(attrs['kernel_shape'])} differs from W's spatial dims "
                         f"{list(kernel)}", input=1)
    pads = attrs["pads"]
    if len(pads) == 1:
        pads = list(pads) * (2 * r)
    if len(pads) != 2 * r:
        raise LayerAttributeError(f"attribute pads needs {2 * r} values (begins, then ends), got {len(pads)}")
    return Geometry(tuple(kernel), spatial_values(attrs["strides"], r, "strides", broadcast=True),
                    spatial_values(attrs["dilations"], r, "dilations", broadcast=True),
                    tuple(pads[:r]), tuple(pads[r:]))


def _onnx_checked(attrs: Attrs, inputs: list[TensorInfo]) -> tuple[TensorInfo, Geometry]:
    x, w, offset = inputs[:3]
    bias = inputs[3] if len(inputs) > 3 else None
    mask = inputs[4] if len(inputs) > 4 else None
    require_same_type(inputs)
    info, geometry = infer_deformable(x, w, offset, mask, lambda _, kernel: onnx_geometry(attrs, kernel),
                                      attrs["group"], attrs["offset_group"], {"filters": 1, "offsets": 2, "mask": 4})
    if bias is not None:
        require_float(bias, 3, "B")
        if bias.rank != 1 or (bias.shape[0] not in (0, None) and w.shape[0] is not None
                              and bias.shape[0] != w.shape[0]):
            raise ShapeError(f"B must be 1-D of length oC = {w.shape[0]} (or empty for no bias), got "
                             f"{format_shape(bias.shape)}", input=3)
    return info, geometry


def _onnx_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    _, geometry = _onnx_checked(attrs, array_infos(inputs))
    x, w, offset = inputs[:3]
    return [convolve(x, w, geometry, offsets=offset, bias=inputs[3] if len(inputs) > 3 else None,
                     mask=inputs[4] if len(inputs) > 4 else None, group=attrs["group"],
                     offset_groups=attrs["offset_group"], boundary="zeros", threads=ctx.threads, out=ctx.out)]


register(OpSpec(
    type="DeformConv", versions=("irgrid1",), inputs=(3, 5), native=False, kernel=True, entry=ENTRY,
    attrs=(Attr("dilations", "ints", [1], minimum=1), Attr("group", "int", 1, minimum=1),
           Attr("kernel_shape", "ints", [0], minimum=0), Attr("offset_group", "int", 1, minimum=1),
           Attr("pads", "ints", [0], minimum=0), Attr("strides", "ints", [1], minimum=1)),
    infer=lambda attrs, inputs: [_onnx_checked(attrs, inputs)[0]], run=_onnx_run,
    summary=f"ONNX DeformConv-19/22, any rank (1-D, 2-D, 3-D, ...). {_SUMMARY}"))

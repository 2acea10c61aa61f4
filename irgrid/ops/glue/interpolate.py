"""Interpolate-4 and -11: resize data over the axes given (nn.Upsample / F.interpolate / ONNX Resize).

Inputs: -4 takes data, sizes, scales and optional axes (shape_calculation_mode says whether sizes or
scales set the output); -11 takes data, sizes-or-scales (by that mode) and optional axes. Axes default
to every axis. The data is zero-padded by pads_begin / pads_end first (on every axis; lists shorter
than the rank are extended with zeros, longer ones cut), then each listed axis is resampled on its own
(see `interpolate_taps`). Output dims follow OpenVINO's shape inference: sizes as given, or, with
scales, trunc(f32(padded dim) * (f32(scale) + 1e-6)) (a scale of exactly 1 keeps the dim); the scale
the coordinates use is the one given, or output / padded input for sizes. With sizes, scales or axes
not known before run time, the dims they set are unknown (all of them when the axes are).

Refused as unsupported (UnsupportedLayerError, so `auto` runs the model on OpenVINO):
- mode bilinear_pillow and bicubic_pillow (-11);
- antialias=true (OpenVINO's reference ignores it for linear_onnx and cubic, and for linear its CPU plugin
  and its reference give results that differ by more than the data's spread: no one definition to follow);
- modes other than nearest on integer data (OpenVINO rounds or truncates those per mode).
See docs/semantics.md for the choices made where OpenVINO's reference and CPU plugin leave room.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...errors import ShapeError, UnsupportedLayerError
from ...ir.attributes import Attr
from ...ir.dims import Shape, format_shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import FLOAT_TYPES, compute_dtype, int_values, require_float
from . import interpolate_taps as taps
from .index_inputs import NUMERIC_TYPES, require_integer, unique_axes, value_infos

_MODES = ("nearest", "linear", "linear_onnx", "cubic")
_PILLOW = ("bilinear_pillow", "bicubic_pillow")
_COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")


def _attrs(modes: tuple[str, ...]) -> tuple[Attr, ...]:
    return (Attr("mode", "str", "nearest", required=True, choices=modes),
            Attr("shape_calculation_mode", "str", "sizes", required=True, choices=("sizes", "scales")),
            Attr("coordinate_transformation_mode", "str", "half_pixel", choices=_COORDINATE_MODES),
            Attr("nearest_mode", "str", "round_prefer_floor", choices=_NEAREST_MODES),
            Attr("antialias", "bool", False),
            Attr("pads_begin", "ints", [0], minimum=0),
            Attr("pads_end", "ints", [0], minimum=0),
            Attr("cube_coeff", "float", -0.75))


def _refuse_unsupported(attrs: Attrs, data: TensorInfo) -> None:
    mode = attrs["mode"]
    if mode in _PILLOW:
        raise UnsupportedLayerError(f"mode={mode} is not supported by irgrid")
    if attrs["antialias"]:
        raise UnsupportedLayerError("antialias=true is not supported by irgrid")
    if mode != "nearest" and data.element_type not in FLOAT_TYPES:
        raise UnsupportedLayerError(f"mode={mode} on {data.element_type} data is not supported by irgrid "
                                    "(only nearest interpolates integer data)")


def _require_1d(info: TensorInfo, index: int, what: str) -> int | None:
    """The length of a 1-D input, None when unknown."""
    if info.shape is None:
        return None
    if len(info.shape) != 1:
        raise ShapeError(f"{what} must be 1-D, got {format_shape(info.shape)}", input=index)
    return info.shape[0]


class _Plan(NamedTuple):
    """What inference settles: the output shape, the interpolated axes, the scale per axis that the
    coordinates use (given ones; None for sizes, whose scales wait for the input dims) and the pads."""

    shape: Shape
    axes: list[int] | None
    scales: list[float] | None
    pads: list[list[int]] | None


def _plan(attrs: Attrs, inputs: list[TensorInfo], scales_port: int, axes_port: int) -> _Plan:
    data = inputs[0]
    if data.element_type not in NUMERIC_TYPES:
        raise ShapeError(f"data must be a numeric tensor, got {data.element_type}", input=0)
    _refuse_unsupported(attrs, data)
    using_scales = attrs["shape_calculation_mode"] == "scales"
    port = scales_port if using_scales else 1
    what = "scales" if using_scales else "sizes"
    if scales_port == 2:  # -4 has both inputs; OpenVINO checks both types, whichever is used
        require_integer(inputs[1], 1, "sizes")
        require_float(inputs[2], 2, "scales")
    else:
        (require_float if using_scales else require_integer)(inputs[1], 1, what)
    length = _require_1d(inputs[port], port, what)
    axes_info = inputs[axes_port] if len(inputs) > axes_port else None
    if axes_info is not None:
        require_integer(axes_info, axes_port, "axes")
        _require_1d(axes_info, axes_port, "axes")
    if data.rank is None:
        return _Plan(None, None, None, None)
    rank = data.rank
    if rank == 0:
        raise ShapeError("data must have rank 1 or more, got a scalar", input=0)
    if axes_info is None:
        axes = list(range(rank))
    else:
        values = int_values(axes_info)
        if values is None:
            return _Plan((None,) * rank, None, None, None)
        if min(values, default=0) < 0:  # OpenVINO refuses negative axes (ONNX's frontend normalises them)
            raise ShapeError(f"axes {values} must not be negative", input=axes_port)
        axes = unique_axes(values, rank, axes_port)
    if length is not None and length != len(axes):
        raise ShapeError(f"{what} has {length} values for {len(axes)} axes {axes}", input=port)
    pads = [(list(attrs[name]) + [0] * rank)[:rank] for name in ("pads_begin", "pads_end")]
    padded = [None if d is None else d + b + e for d, b, e in zip(data.shape, *pads)]
    out = list(padded)
    given = inputs[port].value
    if given is None:
        for axis in axes:
            out[axis] = None
        return _Plan(tuple(out), axes, None, pads)
    if using_scales:
        scales = np.asarray(given, np.float32).reshape(-1)
        if not (np.isfinite(scales) & (scales > 0)).all():
            raise ShapeError(f"scales {scales.tolist()} must be finite and positive", input=port)
        for axis, scale in zip(axes, scales):
            if padded[axis] is not None and scale != 1:
                out[axis] = int(np.float32(padded[axis]) * (scale + np.float32(1e-6)))
        coordinate_scales = [float(s) for s in scales]
    else:
        sizes = [int(v) for v in np.asarray(given).reshape(-1)]
        if min(sizes, default=0) < 0:
            raise ShapeError(f"sizes {sizes} must not be negative", input=port)
        for axis, size in zip(axes, sizes):
            out[axis] = size
        coordinate_scales = None  # output / input, in the compute type, once the input dims are known
    for axis in axes:
        if padded[axis] == 0 and out[axis] not in (0, None):
            raise ShapeError(f"axis {axis} is empty (after padding) and cannot be resized to {out[axis]}",
                             input=0)
    return _Plan(tuple(out), axes, coordinate_scales, pads)


def _infer(scales_port: int, axes_port: int):
    def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
        plan = _plan(attrs, inputs, scales_port, axes_port)
        return [TensorInfo(plan.shape, inputs[0].element_type)]
    return infer


def _axis_taps(attrs: Attrs, in_len: int, out_len: int, scale: float,
               dtype: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
    mode = attrs["mode"]
    coords = taps.source_coordinates(attrs["coordinate_transformation_mode"], out_len, in_len, scale, dtype)
    if mode == "nearest":
        return taps.nearest_indices(attrs["nearest_mode"], coords, in_len, scale < 1), None
    if mode == "linear_onnx":
        return taps.linear_onnx_taps(coords, in_len)
    if mode == "cubic":
        return taps.cubic_taps(coords, in_len, attrs["cube_coeff"])
    return taps.linear_taps(coords, in_len)


def interpolate(attrs: Attrs, x: np.ndarray, plan: _Plan) -> np.ndarray:
    """x padded and resampled along plan.axes to plan.shape (every value known)."""
    if any(b or e for b, e in zip(*plan.pads)):
        x = np.pad(x, list(zip(*plan.pads)))
    nearest = attrs["mode"] == "nearest"
    dtype = compute_dtype(x)  # coordinates (and, but for nearest, values) in f32, or f64 for f64 data
    t = dtype.type
    lengths = {axis: (x.shape[axis], plan.shape[axis]) for axis in plan.axes}
    scales = (dict(zip(plan.axes, plan.scales)) if plan.scales is not None else
              {axis: float(t(n) / t(m)) if m else 1.0 for axis, (m, n) in lengths.items()})
    result = x if nearest else x.astype(dtype)
    # Shrink first; among equal ratios the last axis first, whose gather (element by element, where the
    # others copy rows) then runs on the smallest array: nearest x2 of 1x32x32x32x32 7.9 ms against 25.8.
    for axis in sorted(plan.axes, key=lambda a: (lengths[a][1] / max(lengths[a][0], 1), -a)):
        in_len, out_len = lengths[axis]
        if out_len == in_len:  # the coordinates are the identity then, in every mode
            continue
        if out_len == 0 or result.size == 0:
            shape = list(result.shape)
            shape[axis] = out_len
            result = np.empty(shape, result.dtype)
            continue
        indices, weights = _axis_taps(attrs, in_len, out_len, scales[axis], dtype)
        result = taps.resample(result, axis, indices, weights)
    return result if result.dtype == x.dtype else result.astype(x.dtype)


def _run(scales_port: int, axes_port: int):
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        plan = _plan(attrs, value_infos(inputs), scales_port, axes_port)
        return [np.ascontiguousarray(interpolate(attrs, inputs[0], plan))]
    return run


_REFUSED = "refused: antialias, and modes other than nearest on integer data"
register(OpSpec(type="Interpolate", versions=("opset4",), inputs=(3, 4), attrs=_attrs(_MODES),
                infer=_infer(2, 3), run=_run(2, 3),
                summary="Resize over axes: nearest (all nearest modes), linear, linear_onnx, cubic; every "
                        f"coordinate mode, pads, sizes or scales ({_REFUSED})."))
register(OpSpec(type="Interpolate", versions=("opset11",), inputs=(2, 3), attrs=_attrs(_MODES + _PILLOW),
                infer=_infer(1, 2), run=_run(1, 2),
                summary=f"Interpolate-4 with sizes-or-scales in one input ({_REFUSED}; bilinear_pillow, "
                        "bicubic_pillow)."))

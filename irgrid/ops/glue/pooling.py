"""MaxPool-1/-8/-14 and AvgPool-1/-14 over the 1 to 3 spatial dims of an (N, C, spatial...) tensor.

The window geometry (strides, dilations, pads, auto_pad, output dims per rounding_type) is
convolution's (`openvino_geometry`, `Geometry.output_dims`), as in OpenVINO's shape inference.
f32 data runs on OpenVINO's own MaxPool and AvgPool (irgrid/dense.py: 3-40x faster than numpy here);
other types, `IRGRID_GEMM=numpy` and a process forked after OpenVINO ran take numpy: one strided
slice per kernel tap over a padded copy (no loop per output element).

What OpenVINO's CPU plugin does (2026.4, measured), and irgrid with it:
- MaxPool starts each window at the type's lowest finite value and takes an element only when it is
  strictly larger, in the kernel's row-major order: NaN and -inf are never taken, ties keep the first
  element, and a window with nothing above the lowest value (all padding, say) gives that value
  (-3.4e38 for f32, not -inf) and index 0 of its channel.
- MaxPool-8/-14 indices are flat positions in data.shape[axis:] (axis 0: in the whole tensor, 1: in
  the batch item, 2 and on: in the trailing dims), of type index_element_type.
- `ceil` keeps a last window that starts in the end padding or past it; `ceil_torch` drops it.
- AvgPool divides by the window's real elements when exclude-pad is set or no pad is non-zero; else
  by the whole kernel size, also for a window that ceil rounding runs past the padded input (torch
  divides by the part inside the padded input). A window that ceil rounding starts past the padded
  input is 0 (the CPU plugin writes +0.0 or -0.0 there, by position; its reference 0); an exclude-pad
  window inside the padding is 0/0 = NaN, as in the plugin. With exclude-pad each pad must be below
  the kernel (OpenVINO's check). AvgPool takes floating-point data (its spec's type); f16 in f32,
  rounded once.
The CPU plugin computes i64 MaxPool in i32 (an empty window gives the i32 lowest); irgrid in i64.
"""
from __future__ import annotations

from itertools import product
from math import prod

import numpy as np

from ...errors import LayerAttributeError, ShapeError
from ...ir.attributes import Attr
from ...ir.dims import format_shape
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ...dense import on_openvino, run_on_openvino
from ..common import along, array_infos, normalize_axis, output_buffer, require_float
from ..im2col import AUTO_PADS, Geometry, openvino_geometry
from .index_inputs import NUMERIC_TYPES


def _checked(attrs: Attrs, data: TensorInfo) -> tuple[Geometry | None, tuple[int | None, ...]]:
    """Validates data and attributes; the geometry (None for an unknown rank) and the output shape."""
    kernel = tuple(attrs["kernel"])
    if data.rank is None:
        return None, (None,) * (len(kernel) + 2)
    if data.rank not in (3, 4, 5):
        raise ShapeError(f"data must have rank 3, 4 or 5 (N, C, 1 to 3 spatial dims), got "
                         f"{format_shape(data.shape)}", input=0)
    if len(kernel) != data.rank - 2:
        raise LayerAttributeError(f"attribute kernel needs {data.rank - 2} values for data "
                                  f"{format_shape(data.shape)}, got {len(kernel)}")
    for dim, what in ((data.shape[0], "batch"), (data.shape[1], "channel count")):
        if dim == 0:
            raise ShapeError(f"data's {what} is 0", input=0)
    full = {**attrs, "dilations": attrs.get("dilations", [1] * len(kernel))}
    geometry = openvino_geometry(full, data.shape[2:], kernel)
    if attrs.get("exclude-pad"):
        for axis, (k, begin, end) in enumerate(zip(kernel, geometry.pads_begin, geometry.pads_end)):
            if begin >= k or end >= k:
                raise LayerAttributeError(f"with exclude-pad, pads ({begin}, {end}) of spatial axis {axis} "
                                          f"must be below the kernel ({k})")
    out_dims = geometry.output_dims(data.shape[2:], attrs["rounding_type"])
    return geometry, (*data.shape[:2], *out_dims)


def _padded(x: np.ndarray, geometry: Geometry, out_dims: tuple[int, ...], fill) -> np.ndarray:
    """x with pads_begin before each spatial axis and, after, as much as the last window reaches."""
    shape = list(x.shape[:2])
    inner = [slice(None), slice(None)]
    for axis, length in enumerate(x.shape[2:]):
        begin = geometry.pads_begin[axis]
        span = geometry.dilations[axis] * (geometry.kernel[axis] - 1) + 1
        reach = (out_dims[axis] - 1) * geometry.strides[axis] + span
        shape.append(max(reach, begin + length))
        inner.append(slice(begin, begin + length))
    padded = np.full(shape, fill, x.dtype)
    padded[tuple(inner)] = x
    return padded


def _taps(geometry: Geometry, out_dims: tuple[int, ...]):
    """(kernel offsets, slice of the padded copy) per tap, in the kernel's row-major order."""
    for offsets in product(*(range(k) for k in geometry.kernel)):
        yield offsets, (slice(None), slice(None), *(
            slice(o * d, o * d + (n - 1) * s + 1, s)
            for o, d, s, n in zip(offsets, geometry.dilations, geometry.strides, out_dims)))


def _max_pool(x: np.ndarray, geometry: Geometry, out_shape: tuple[int, ...], axis: int | None,
              index_dtype: np.dtype | None) -> list[np.ndarray]:
    """Values and, with an axis, indices (see the module docstring for which element wins)."""
    out_dims = out_shape[2:]
    if x.dtype == np.float16:  # as the CPU plugin: in f32, so an empty window gives f32's lowest (-inf)
        return [out.astype(np.float16) if k == 0 else out
                for k, out in enumerate(_max_pool(x.astype(np.float32), geometry, out_shape, axis, index_dtype))]
    if x.dtype.kind == "f":
        lowest = np.finfo(x.dtype).min
        x = np.fmax(x, lowest)  # NaN and -inf to the lowest value: never taken
    else:
        lowest = np.iinfo(x.dtype).min
    padded = _padded(x, geometry, out_dims, lowest)
    taps = list(_taps(geometry, out_dims))
    if axis is None:
        best = padded[taps[0][1]].copy()
        for _, tap in taps[1:]:
            np.maximum(best, padded[tap], out=best)
        return [best]
    best = np.full(out_shape, lowest, x.dtype)
    index = np.zeros(out_shape, np.int64)
    spatial = x.shape[2:]
    steps = [prod(spatial[a + 1:]) for a in range(len(spatial))]
    starts = [np.arange(n) * s - b for n, s, b in zip(out_dims, geometry.strides, geometry.pads_begin)]
    for offsets, tap in taps:
        view = padded[tap]
        take = view > best
        if not take.any():
            continue
        position = sum((start + o * d).reshape(along(a, len(spatial))) * step
                       for a, (start, o, d, step) in enumerate(zip(starts, offsets, geometry.dilations, steps)))
        np.copyto(best, view, where=take)
        np.copyto(index, position, where=take)
    items = np.arange(out_shape[0] * out_shape[1], dtype=np.int64).reshape(out_shape[:2] + (1,) * len(out_dims))
    index += items * prod(spatial)
    index %= prod(x.shape[axis:])
    return [best, index.astype(index_dtype)]


def _avg_pool(x: np.ndarray, geometry: Geometry, out_shape: tuple[int, ...], exclude_pad: bool) -> np.ndarray:
    out_dims = out_shape[2:]
    work = x.astype(np.float32) if x.dtype == np.float16 else x
    padded = _padded(work, geometry, out_dims, 0)
    total = None
    with np.errstate(all="ignore"):
        for _, tap in _taps(geometry, out_dims):
            total = padded[tap].copy() if total is None else np.add(total, padded[tap], out=total)
        real = exclude_pad or not any(geometry.pads_begin + geometry.pads_end)
        divisor = np.ones((1, 1) + (1,) * len(out_dims), np.int64) if real else np.int64(prod(geometry.kernel))
        past = np.zeros((1, 1) + (1,) * len(out_dims), bool)  # windows starting past the padded input
        for axis, (n, length) in enumerate(zip(out_dims, x.shape[2:])):
            shape = along(axis + 2, len(out_shape))
            first = np.arange(n) * geometry.strides[axis] - geometry.pads_begin[axis]
            past = past | (first >= length + geometry.pads_end[axis]).reshape(shape)
            if real:
                inside = np.clip(first + geometry.kernel[axis], 0, length) - np.clip(first, 0, length)
                divisor = divisor * inside.reshape(shape)
        result = np.where(past, work.dtype.type(0), total / np.asarray(divisor).astype(work.dtype))
    return result.astype(x.dtype, copy=False)


def _max_checked(attrs: Attrs, data: TensorInfo) -> tuple[Geometry | None, tuple[int | None, ...]]:
    """`_checked` for MaxPool: numeric data, and MaxPool-8's axis within data's rank."""
    if data.element_type not in NUMERIC_TYPES:
        raise ShapeError(f"MaxPool takes numeric data, got {data.element_type}", input=0)
    if data.rank is not None and "axis" in attrs:
        _axis(attrs, data.rank)
    return _checked(attrs, data)


def _max_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    (data,) = inputs
    _, shape = _max_checked(attrs, data)
    out = [TensorInfo(shape, data.element_type)]
    if "index_element_type" in attrs:
        out.append(TensorInfo(shape, attrs["index_element_type"]))
    return out


def _axis(attrs: Attrs, rank: int) -> int:
    """MaxPool-8's axis for data of `rank`; a ShapeError at the data when outside [-rank, rank)."""
    try:
        return normalize_axis(attrs["axis"], rank)
    except ShapeError as exc:
        raise ShapeError(f"attribute {exc.reason}", input=0) from None


def _max_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray | None]:
    """Values, and MaxPool-8/-14's indices, or None for them when nothing reads them (ctx.needed): the CPU
    plugin computes a MaxPool whose indices are used with its reference code (a 3x3 MaxPool of
    1x64x128x128: 395 ms against 1.1 ms for the values alone), and numpy spends most of its time on them."""
    (x,) = inputs
    geometry, shape = _max_checked(attrs, array_infos(inputs)[0])
    has_indices = "axis" in attrs
    indices = has_indices and (not ctx.needed or ctx.needed[1])
    index_dtype = np.dtype(np.int32 if attrs.get("index_element_type") == "i32" else np.int64)
    if on_openvino(x) and x.size:
        outs = [output_buffer(ctx.out, 0, shape, x.dtype)]
        if indices:
            outs.append(output_buffer(ctx.out, 1, shape, index_dtype))
        settings = _settings(attrs, "dilations", "index_element_type", "axis") + (("indices", indices),)
        results = run_on_openvino(_openvino_max_pool, settings, inputs, outs, ctx.threads)
    else:
        results = _max_pool(x, geometry, shape, _axis(attrs, x.ndim) if indices else None, index_dtype)
    return results + [None] if has_indices and not indices else results


def _avg_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    (data,) = inputs
    require_float(data, 0, "AvgPool's data")
    return [TensorInfo(_checked(attrs, data)[1], data.element_type)]


def _avg_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    (data,) = array_infos(inputs)
    require_float(data, 0, "AvgPool's data")
    geometry, shape = _checked(attrs, data)
    if on_openvino(inputs[0]) and inputs[0].size:
        return run_on_openvino(_openvino_avg_pool, _settings(attrs, "exclude-pad"), inputs,
                         [output_buffer(ctx.out, 0, shape, inputs[0].dtype)], ctx.threads)
    return [_avg_pool(inputs[0], geometry, shape, attrs["exclude-pad"])]


def _settings(attrs: Attrs, *extra: str) -> tuple:
    """The window's attributes and `extra` ones (those present), hashable, as the builders take them."""
    names = ("strides", "pads_begin", "pads_end", "kernel", "rounding_type", "auto_pad", *extra)
    return tuple((name, tuple(attrs[name]) if isinstance(attrs[name], list) else attrs[name])
                 for name in names if name in attrs)


def _openvino_max_pool(parameters: list, *settings: tuple) -> list:
    """OpenVINO's MaxPool on the layer's own attributes: -1 for MaxPool-1, else -14 (-8's superset),
    its indices an output only when they are wanted."""
    import openvino.opset1 as ops1
    import openvino.opset14 as ops14

    a = dict(settings)
    strides, begin, end, kernel = (list(a[name]) for name in ("strides", "pads_begin", "pads_end", "kernel"))
    if "axis" not in a:
        return [ops1.max_pool(parameters[0], strides, begin, end, kernel, a["rounding_type"], a["auto_pad"]).output(0)]
    node = ops14.max_pool(parameters[0], strides, list(a["dilations"]), begin, end, kernel, a["rounding_type"],
                          a["auto_pad"], a["index_element_type"], a["axis"])
    return node.outputs() if a["indices"] else [node.output(0)]


def _openvino_avg_pool(parameters: list, *settings: tuple) -> list:
    """OpenVINO's AvgPool on the layer's own attributes (-14 for ceil_torch, else -1)."""
    import openvino.opset1 as ops1
    import openvino.opset14 as ops14

    a = dict(settings)
    ops = ops14 if a["rounding_type"] == "ceil_torch" else ops1
    return [ops.avg_pool(parameters[0], list(a["strides"]), list(a["pads_begin"]), list(a["pads_end"]),
                         list(a["kernel"]), a["exclude-pad"], a["rounding_type"], a["auto_pad"]).output(0)]


def _rounding(*names: str) -> Attr:
    return Attr("rounding_type", "str", "floor", choices=names)


_WINDOW = (Attr("strides", "ints", [1], required=True, minimum=1),
           Attr("pads_begin", "ints", [0], required=True, minimum=0),
           Attr("pads_end", "ints", [0], required=True, minimum=0),
           Attr("kernel", "ints", [1], required=True, minimum=1),
           Attr("auto_pad", "str", "explicit", choices=AUTO_PADS))
_INDICES = (Attr("dilations", "ints", [1], minimum=1),
            Attr("index_element_type", "str", "i64", choices=("i32", "i64")),
            Attr("axis", "int", 0))
_EXCLUDE_PAD = Attr("exclude-pad", "bool", False, required=True)
_ENGINE = "OpenVINO f32, numpy"
_MAX_ENTRY, _AVG_ENTRY = (f"OpenVINO {op} (f32), else numpy" for op in ("MaxPool", "AvgPool"))  # OpSpec.entry

register(OpSpec(type="MaxPool", versions=("opset1",), inputs=(1, 1), attrs=(*_WINDOW, _rounding("floor", "ceil")),
                infer=_max_infer, run=_max_run, engine=_ENGINE, entry=_MAX_ENTRY,
                summary="Max over windows, 1-3 spatial dims (pads, auto_pad, floor/ceil)."))
register(OpSpec(type="MaxPool", versions=("opset8",), inputs=(1, 1), outputs=2,
                attrs=(*_WINDOW, _rounding("floor", "ceil"), *_INDICES), infer=_max_infer, run=_max_run,
                engine=_ENGINE, entry=_MAX_ENTRY,
                summary="MaxPool with dilations and a second output: the flat indices from axis."))
register(OpSpec(type="MaxPool", versions=("opset14",), inputs=(1, 1), outputs=2,
                attrs=(*_WINDOW, _rounding("floor", "ceil", "ceil_torch"), *_INDICES), infer=_max_infer, run=_max_run,
                engine=_ENGINE, entry=_MAX_ENTRY, summary="MaxPool-8 with rounding_type ceil_torch."))
register(OpSpec(type="AvgPool", versions=("opset1",), inputs=(1, 1),
                attrs=(*_WINDOW, _EXCLUDE_PAD, _rounding("floor", "ceil")), infer=_avg_infer, run=_avg_run,
                engine=_ENGINE, entry=_AVG_ENTRY,
                summary="Mean over windows, 1-3 spatial dims (exclude-pad, auto_pad, floor/ceil)."))
register(OpSpec(type="AvgPool", versions=("opset14",), inputs=(1, 1),
                attrs=(*_WINDOW, _EXCLUDE_PAD, _rounding("floor", "ceil", "ceil_torch")), infer=_avg_infer,
                run=_avg_run, engine=_ENGINE, entry=_AVG_ENTRY, summary="AvgPool-1 with rounding_type ceil_torch."))

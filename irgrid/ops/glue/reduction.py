"""ReduceSum/Mean/Max/Min/Prod-1 (axes input, keep_dims) and Softmax-1/-8.

f16 is reduced in f32 and rounded once, as OpenVINO's CPU plugin; integer sums and products wrap in
the data's type. An empty axes list reduces nothing (the output is the input). Reducing over a
zero-size axis gives 0 for Sum and Mean, 1 for Prod, and the type's lowest or highest finite value
for Max or Min, as OpenVINO's CPU plugin (its reference implementation gives inf for Min there).
Which value Max and Min return when a NaN is reduced is left open (OpenVINO's CPU plugin depends on
the NaN's position); irgrid propagates it, as numpy.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...errors import ShapeError
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register
from ..common import int_values, normalize_axis, require_float
from .index_inputs import unique_axes, value_infos, vector_length

ReduceFn = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]


def _axes(inputs: list[TensorInfo]) -> list[int] | None:
    data, axes_info = inputs
    vector_length(axes_info, 1, "axes")
    values = int_values(axes_info)
    return None if values is None else unique_axes(values, len(data.shape), 1)


def _reduce_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, axes_info = inputs
    if data.element_type == "boolean":
        raise ShapeError("takes a numeric input, got boolean (ReduceLogicalAnd/Or reduce booleans)", input=0)
    axes = _axes(inputs)
    keep = attrs["keep_dims"]
    if axes is None:
        count = vector_length(axes_info, 1, "axes")
        if keep:
            shape = (None,) * len(data.shape)
        else:
            shape = None if count is None else (None,) * (len(data.shape) - count)
        return [TensorInfo(shape, data.element_type)]
    shape = tuple(1 if i in axes else d for i, d in enumerate(data.shape) if keep or i not in axes)
    return [TensorInfo(shape, data.element_type)]


def _extreme(pick: Callable, limit: Callable[[np.dtype], object]) -> ReduceFn:
    """Max or Min; a zero-size reduction gives the type's limit instead of numpy's error."""
    def reduce(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        if any(x.shape[a] == 0 for a in axes):
            return np.full([d for i, d in enumerate(x.shape) if i not in axes], limit(x.dtype), x.dtype)
        return pick(x, axis=axes)
    return reduce


def _limits(dtype: np.dtype) -> tuple:
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min, info.max


def _mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = np.sum(x, axis=axes, dtype=x.dtype)
    if x.dtype.kind in "iu":  # integer division truncating toward zero, as OpenVINO
        return (np.trunc(total / count) if count else total).astype(x.dtype)
    return total / x.dtype.type(count) if count else total  # 0 over an empty axis, as OpenVINO


_REDUCTIONS: dict[str, ReduceFn] = {
    "ReduceSum": lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype),
    "ReduceProd": lambda x, axes: np.prod(x, axis=axes, dtype=x.dtype),
    "ReduceMean": _mean,
    "ReduceMax": _extreme(np.max, lambda dtype: _limits(dtype)[0]),
    "ReduceMin": _extreme(np.min, lambda dtype: _limits(dtype)[1]),
}


def _reduce_runner(fn: ReduceFn):
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        infos = value_infos(inputs)
        _reduce_infer(attrs, infos)  # inference skips inputs of unknown rank: check them here
        axes = tuple(_axes(infos))
        data = inputs[0]
        wide = data.astype(np.float32) if data.dtype == np.float16 else data
        with np.errstate(all="ignore"):
            out = np.asarray(fn(wide, axes)).astype(data.dtype, copy=False)
        if attrs["keep_dims"]:
            out = out.reshape([1 if i in axes else d for i, d in enumerate(data.shape)])
        return [out]
    return run


for _type, _fn in _REDUCTIONS.items():
    register(OpSpec(type=_type, versions=("opset1",), inputs=(2, 2), attrs=(Attr("keep_dims", "bool", False),),
                    infer=_reduce_infer, run=_reduce_runner(_fn),
                    summary=f"{_type[6:]} over the given axes (keep_dims, negative axes)."))


def _softmax_infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    (x,) = inputs
    require_float(x, 0, "Softmax's input")
    normalize_axis(attrs["axis"], len(x.shape))
    return [TensorInfo(x.shape, x.element_type)]


def _softmax_run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    """exp(x - max) / sum: the max shift keeps exp finite (as OpenVINO)."""
    (x,) = inputs
    _softmax_infer(attrs, value_infos(inputs))
    axis = attrs["axis"]
    if x.size == 0:
        return [x.copy()]
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    with np.errstate(all="ignore"):
        shifted = np.exp(wide - np.max(wide, axis=axis, keepdims=True))
        return [(shifted / np.sum(shifted, axis=axis, keepdims=True)).astype(x.dtype, copy=False)]


# OpenVINO writes Softmax as "SoftMax" in IR files and reads both names. Softmax-1's axis is >= 0.
_SOFTMAX_VERSIONS = (("opset1", Attr("axis", "int", 1, minimum=0), "Softmax along a non-negative axis."),
                     ("opset8", Attr("axis", "int", 1), "Softmax along an axis (negative counts from the end)."))
for _version, _axis, _summary in _SOFTMAX_VERSIONS:
    for _name in ("SoftMax", "Softmax"):
        register(OpSpec(type=_name, versions=(_version,), inputs=(1, 1), attrs=(_axis,), infer=_softmax_infer,
                        run=_softmax_run, summary=_summary if _name == "SoftMax" else "Alias of SoftMax."))

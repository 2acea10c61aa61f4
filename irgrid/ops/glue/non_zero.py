"""NonZero-3: the coordinates of data's non-zero elements, shape (rank, count) in row-major order, of
`output_type` (i64 or i32). `torch.onnx.export` (dynamo) writes boolean-mask assignment
(`mask[mask < 0.9999] = 0`, PWC-Net's warp) as NonZero feeding ScatterNDUpdate.

The count depends on the values, so inference gives the dim as unknown (None) unless data is a
constant (then the layer folds); the compiled model allocates such outputs per call, as it does for
any output whose shape is not static. As OpenVINO's CPU plugin: NaN is non-zero, -0.0 is zero, boolean
True is non-zero; a 0-d input gives shape (1, count): (1, 1) holding 0 when non-zero, else (1, 0).
"""
from __future__ import annotations

import numpy as np

from ...ir import element_types
from ...ir.attributes import Attr
from ...registry import Attrs, OpSpec, RunContext, TensorInfo, register


def _infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    (data,) = inputs
    rank = max(len(data.shape), 1)
    count = None if data.value is None else int(np.count_nonzero(data.value))
    return [TensorInfo((rank, count), attrs["output_type"])]


def _run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    (data,) = inputs
    dtype = element_types.numpy_dtype(attrs["output_type"])
    if data.ndim == 0:  # np.nonzero refuses 0-d arrays
        return [np.zeros((1, int(data != 0)), dtype)]
    return [np.stack(np.nonzero(data)).astype(dtype, copy=False)]


register(OpSpec(type="NonZero", versions=("opset3",), inputs=(1, 1),
                attrs=(Attr("output_type", "element_type", "i64", choices=("i32", "i64")),),
                infer=_infer, run=_run,
                summary="Coordinates of the non-zero elements, (rank, count) of output_type (i64 or i32)."))

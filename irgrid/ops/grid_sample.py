"""GridSample: sample data at normalised grid positions (nearest, N-linear, N-cubic).

Versions:
- opset9 (OpenVINO GridSample-9): 4-D data, modes bilinear|bicubic|nearest;
- irgrid1: ONNX GridSample-22 semantics for data of any rank r + 2 (r >= 1). The opset-16 and
  com.microsoft names bilinear/bicubic are accepted, so this one layer carries ONNX 16/20/22 and
  com.microsoft GridSample.
Both run the same kernel (cython_kernels/grid_sample.pyx); disputed semantics are settled in
NOTES.md and documented in the README (nearest ties to even, per-tap cubic padding, NaN/Inf points).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..ir.dims import format_shape
from ..ir.model import Layer
from ..registry import Attr, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, compute_dtype, input_port, merge_dim, output_buffer, require_float, to_integer

MODES = {"nearest": 0, "linear": 1, "cubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}
TAPS_PER_DIM = {"nearest": 1, "linear": 2, "cubic": 4}
MAX_TAPS = 4096  # taps per output point the kernel buffers (cubic up to 6-D, linear up to 12-D)

_MODE_ALIASES = {"bilinear": "linear", "bicubic": "cubic"}


def _infer(layer: Layer, inputs: list[TensorInfo]) -> list[TensorInfo]:
    data, grid = inputs
    ranks = (4,) if layer.version == "opset9" else None
    if data.rank < 3 or (ranks and data.rank not in ranks):
        want = "4" if ranks else "at least 3 (N, C and one spatial dim)"
        raise ShapeError(f"data must have rank {want}, got {format_shape(data.shape)}",
                         layer=layer, port=input_port(layer, 0))
    r = data.rank - 2
    if grid.rank != data.rank:
        raise ShapeError(f"grid must have rank {data.rank} like the data (N, {r} spatial dims, {r}), got "
                         f"{format_shape(grid.shape)}", layer=layer, port=input_port(layer, 1))
    require_float(grid, layer, 1, "grid")
    merge_dim(grid.shape[-1], r, layer, f"grid's last dim must equal the {r} spatial dims of the data",
              input_port(layer, 1))
    batch = merge_dim(data.shape[0], grid.shape[0], layer, "data and grid batch sizes differ",
                      input_port(layer, 1))
    taps = TAPS_PER_DIM[layer.attrs["mode"]] ** r
    if taps > MAX_TAPS:
        raise ShapeError(f"{layer.attrs['mode']} sampling in {r} dims needs {taps} taps per point; "
                         f"irgrid supports up to {MAX_TAPS}", layer=layer)
    if data.element_type == "boolean":
        raise ShapeError("boolean data is not supported", layer=layer, port=input_port(layer, 0))
    return [TensorInfo((batch, data.shape[1], *grid.shape[1:-1]), data.element_type)]


def _run(layer: Layer, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    data, grid = inputs
    _infer(layer, array_infos(inputs))
    return [sample(data, grid, layer.attrs["mode"], layer.attrs["padding_mode"],
                   layer.attrs["align_corners"], ctx.threads, ctx.out, layer)]


def sample(data: np.ndarray, grid: np.ndarray, mode: str, padding_mode: str, align_corners: bool,
           threads: int, out=(), layer: Layer | None = None) -> np.ndarray:
    """Run the kernel on arrays already checked by `_infer`; output in data's dtype.

    f32 and f64 run natively; f16, bf16 and integer data (and mixed data/grid types) are computed in
    f32, or f64 when either input is f64 or the data is a 32/64-bit integer; integers are then
    rounded half to even and saturated, NaN giving 0.
    """
    from .._kernels.grid_sample import grid_sample

    wide_int = data.dtype.kind in "iu" and data.dtype.itemsize >= 4
    dtype = np.dtype(np.float64) if wide_int else compute_dtype(data, grid)
    n, c = data.shape[:2]
    out_shape = (n, c, *grid.shape[1:-1])
    y = output_buffer(out if data.dtype == dtype else (), 0, out_shape, dtype, layer)
    x_flat = np.ascontiguousarray(data, dtype).reshape(-1)
    grid_flat = np.ascontiguousarray(grid, dtype).reshape(-1)
    dims = np.array(data.shape[2:], dtype=np.intp)
    points = math.prod(grid.shape[1:-1])
    grid_sample(x_flat, grid_flat, y.reshape(-1), n, c, dims, points, MODES[mode], PADDINGS[padding_mode],
                bool(align_corners), threads)
    if data.dtype == dtype:
        return y
    if data.dtype.kind in "iu":
        return to_integer(y, data.dtype)
    return y.astype(data.dtype)


register(OpSpec(
    type="GridSample", versions=("opset9", "irgrid1"), inputs=(2, 2),
    attrs=(Attr("align_corners", "bool", default=False),
           Attr("mode", "str", default="linear", allowed=tuple(MODES), aliases=_MODE_ALIASES),
           Attr("padding_mode", "str", default="zeros", allowed=tuple(PADDINGS))),
    infer=_infer, run=_run, kernel=True,
    summary="opset9: OpenVINO GridSample-9 (4-D). irgrid1: ONNX GridSample-16/20/22 and com.microsoft, "
            "any rank. Modes nearest, (bi)linear, (bi)cubic; paddings zeros, border, reflection."))

"""GridSample: sample data at normalised grid positions (nearest, N-linear, N-cubic).

Versions:
- opset9 (OpenVINO GridSample-9, native in OpenVINO): 4-D data, modes bilinear|bicubic|nearest;
- irgrid1 (irgrid's own): ONNX GridSample-22 semantics for data of any rank r + 2 (r >= 1). The
  opset-16 and com.microsoft names bilinear/bicubic are accepted, so this one layer carries ONNX
  16/20/22 and com.microsoft GridSample.
Both run the same kernel (cython_kernels/sampling.pyx); the semantics where peers disagree (nearest
ties to even, per-tap cubic padding, NaN/Inf points) are documented in docs/semantics.md.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..errors import ShapeError
from ..ir.attributes import Attr
from ..ir.dims import format_shape
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import array_infos, compute_dtype, merge_dim, output_buffer, require_float, to_integer


def infer(attrs: Attrs, inputs: list[TensorInfo], rank: int | None = None) -> list[TensorInfo]:
    """Output (N, C, *grid spatial dims) in data's type; `rank` fixes the data rank (opset9: 4)."""
    from .._kernels.constants import MAX_TAPS_PER_POINT, TAPS_PER_DIM  # built: see irgrid._unbuilt

    data, grid = inputs
    if data.rank < 3 or (rank and data.rank != rank):
        want = str(rank) if rank else "at least 3 (N, C and one spatial dim)"
        raise ShapeError(f"data must have rank {want}, got {format_shape(data.shape)}", input=0)
    r = data.rank - 2
    if grid.rank != data.rank:
        raise ShapeError(f"grid must have rank {data.rank} like the data (N, {r} spatial dims, {r}), got "
                         f"{format_shape(grid.shape)}", input=1)
    require_float(grid, 1, "grid")
    merge_dim(grid.shape[-1], r, f"grid's last dim must equal the {r} spatial dims of the data", 1)
    batch = merge_dim(data.shape[0], grid.shape[0], "data and grid batch sizes differ", 1)
    taps = TAPS_PER_DIM[attrs["mode"]] ** r
    if taps > MAX_TAPS_PER_POINT:
        raise ShapeError(f"{attrs['mode']} sampling in {r} dims needs {taps} taps per point; "
                         f"irgrid supports up to {MAX_TAPS_PER_POINT}")
    if data.element_type == "boolean":
        raise ShapeError("boolean data is not supported", input=0)
    return [TensorInfo((batch, data.shape[1], *grid.shape[1:-1]), data.element_type)]


def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext, rank: int | None = None) -> list[np.ndarray]:
    data, grid = inputs
    infer(attrs, array_infos(inputs), rank)
    return [sample(data, grid, attrs["mode"], attrs["padding_mode"], attrs["align_corners"], ctx.threads,
                   ctx.out)]


def sample(data: np.ndarray, grid: np.ndarray, mode: str, padding_mode: str, align_corners: bool,
           threads: int, out=()) -> np.ndarray:
    """Run the kernel on arrays already checked by `infer`; output in data's dtype.

    f32 and f64 run natively; f16, bf16 and integer data (and mixed data/grid types) are computed in
    f32, or f64 when either input is f64 or the data is a 32/64-bit integer; integers are then
    rounded half to even and saturated, NaN giving 0.
    """
    from .._kernels.constants import MODES, PADDINGS
    from .._kernels.sampling import grid_sample

    wide_int = data.dtype.kind in "iu" and data.dtype.itemsize >= 4
    dtype = np.dtype(np.float64) if wide_int else compute_dtype(data, grid)
    n, c = data.shape[:2]
    out_shape = (n, c, *grid.shape[1:-1])
    y = output_buffer(out if data.dtype == dtype else (), 0, out_shape, dtype)
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


def _attrs(mode_spellings: dict[str, str]) -> tuple[Attr, ...]:
    return (Attr("align_corners", "bool", False),
            Attr("mode", "str", "linear", choices=mode_spellings),
            Attr("padding_mode", "str", "zeros", choices={name: name for name in ("zeros", "border", "reflection")}))


_SUMMARY = "Modes nearest, (bi)linear, (bi)cubic; paddings zeros, border, reflection."
register(OpSpec(
    type="GridSample", versions=("opset9",), inputs=(2, 2), native=True, kernel=True,
    attrs=_attrs({"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}),
    infer=partial(infer, rank=4), run=partial(run, rank=4),
    summary=f"OpenVINO GridSample-9 (4-D). {_SUMMARY}"))
register(OpSpec(
    type="GridSample", versions=("irgrid1",), inputs=(2, 2), native=False, kernel=True,
    attrs=_attrs({"linear": "linear", "cubic": "cubic", "nearest": "nearest",
                  "bilinear": "linear", "bicubic": "cubic"}),
    infer=infer, run=run,
    summary=f"ONNX GridSample-16/20/22 and com.microsoft, any rank (OpenVINO has 4-D only). {_SUMMARY}"))

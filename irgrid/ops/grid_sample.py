"""GridSample: sample data at normalised grid positions (nearest, N-linear, N-cubic).

Versions:
- opset9 (OpenVINO GridSample-9, native in OpenVINO): 4-D data, modes bilinear|bicubic|nearest;
- irgrid1 (irgrid's own): ONNX GridSample-22 semantics for data of any rank r + 2 (r >= 1). The
  opset-16 and com.microsoft names bilinear/bicubic are accepted, so this one layer carries ONNX
  16/20/22 and com.microsoft GridSample.
Both run the same kernel (kernels/cython/sampling.pyx) through its one entry, `SamplePlan`; the
semantics where peers disagree (nearest ties to even, per-tap cubic padding, NaN/Inf points) are
documented in docs/semantics.md.
"""
from __future__ import annotations

from functools import cache, partial

import numpy as np

from ..errors import ShapeError
from ..ir.attributes import Attr
from ..ir.dims import format_shape
from ..ir.element_types import numpy_dtype
from ..registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo, register
from ..timing import tunes_kernels
from .common import array_infos, compute_dtype, merge_dim, output_buffer, require_float, to_integer


@cache
def _kernels():
    """The kernel modules (constants, sampling), imported on first use (irgrid imports without them
    from an un-built source folder: irgrid._unbuilt), then kept: an import statement in a function
    costs about a microsecond per call."""
    from .._kernels import constants, sampling

    return constants, sampling


def infer(attrs: Attrs, inputs: list[TensorInfo], rank: int | None = None) -> list[TensorInfo]:
    """Output (N, C, *grid spatial dims) in data's type; `rank` fixes the data rank (opset9: 4)."""
    constants = _kernels()[0]
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
    taps = constants.TAPS_PER_DIM[attrs["mode"]] ** r
    if taps > constants.MAX_TAPS_PER_POINT:
        raise ShapeError(f"{attrs['mode']} sampling in {r} dims needs {taps} taps per point; "
                         f"irgrid supports up to {constants.MAX_TAPS_PER_POINT}")
    if data.element_type == "boolean":
        raise ShapeError("boolean data is not supported", input=0)
    if 0 in data.shape[2:]:  # no pixel for border or reflection padding to take
        raise ShapeError(f"data's spatial dims must be positive, got {format_shape(data.shape)}", input=0)
    return [TensorInfo((batch, data.shape[1], *grid.shape[1:-1]), data.element_type)]


def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext, rank: int | None = None) -> list[np.ndarray]:
    data, grid = inputs
    infer(attrs, array_infos(inputs), rank)
    return [sample(data, grid, attrs["mode"], attrs["padding_mode"], attrs["align_corners"], ctx.threads,
                   ctx.out)]


def prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
    """For static shapes with data and grid both f32 or both f64 (the kernel's own types): the plan,
    built once; other types go through `run`, which converts them."""
    data, grid = inputs
    if data.element_type not in ("f32", "f64") or grid.element_type != data.element_type:
        return None
    try:
        plan = sample_plan(data.shape, grid.shape, numpy_dtype(data.element_type), attrs["mode"],
                           attrs["padding_mode"], attrs["align_corners"], tune=tunes_kernels())
    except ValueError:
        return None  # shapes the kernel refuses (a zero-sized spatial dim): `run` reports them per call
    return plan.run


def sample_plan(data_shape: tuple[int, ...], grid_shape: tuple[int, ...], dtype: np.dtype, mode: str,
                padding_mode: str, align_corners: bool, affine_dims: tuple[int, ...] | None = None,
                grid_align_corners: bool = False, displacement: tuple | None = None, tune: bool = False):
    """The kernel's plan (`sampling.SamplePlan`; ValueError for shapes it refuses) for f32 or f64 data
    and grid of these shapes: `plan(data, grid, out=None, num_threads=1)` samples. With `affine_dims`
    the grid is instead theta (N, r, r + 1) of an AffineGrid of those dims (runtime/fusion.py); with
    `displacement` (component, gain, scale, shift) a displacement field (runtime/displacement.py). With
    `tune` (a compiled model's step: `irgrid.timing.tunes_kernels`), `plan.run` times the kernel's paths
    on its first call and keeps the fastest (`SamplePlan.tune`)."""
    constants, sampling = _kernels()
    return sampling.SamplePlan(data_shape, grid_shape, dtype, constants.MODES[mode], constants.PADDINGS[padding_mode],
                               bool(align_corners), affine_dims, bool(grid_align_corners), displacement, tune)


def sample(data: np.ndarray, grid: np.ndarray, mode: str, padding_mode: str, align_corners: bool,
           threads: int, out=()) -> np.ndarray:
    """Run the kernel on arrays already checked by `infer`; output in data's dtype.

    f32 and f64 run natively; f16, bf16 and integer data (and mixed data/grid types) are computed in
    f32, or f64 when either input is f64 or the data is a 32/64-bit integer; integers are then
    rounded half to even and saturated, NaN giving 0.
    """
    wide_int = data.dtype.kind in "iu" and data.dtype.itemsize >= 4
    dtype = np.dtype(np.float64) if wide_int else compute_dtype(data, grid)
    plan = sample_plan(data.shape, grid.shape, dtype, mode, padding_mode, align_corners)
    y = output_buffer(out if data.dtype == dtype else (), 0, plan.out_shape, dtype)
    plan(data.astype(dtype, copy=False), grid.astype(dtype, copy=False), y, threads)
    if data.dtype == dtype:
        return y
    if data.dtype.kind in "iu":
        return to_integer(y, data.dtype)
    return y.astype(data.dtype)


def _attrs(mode_spellings: dict[str, str]) -> tuple[Attr, ...]:
    return (Attr("align_corners", "bool", False),
            Attr("mode", "str", "linear", choices=mode_spellings),
            Attr("padding_mode", "str", "zeros", choices=("zeros", "border", "reflection")))


_ENTRY = "sampling.SamplePlan"  # OpSpec.entry
_SUMMARY = "Modes nearest, (bi)linear, (bi)cubic; paddings zeros, border, reflection."
register(OpSpec(
    type="GridSample", versions=("opset9",), inputs=(2, 2), native=True, kernel=True, entry=_ENTRY,
    attrs=_attrs({"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}),
    infer=partial(infer, rank=4), run=partial(run, rank=4), prepare=prepare,
    summary=f"OpenVINO GridSample-9 (4-D). {_SUMMARY}"))
register(OpSpec(
    type="GridSample", versions=("irgrid1",), inputs=(2, 2), native=False, kernel=True, entry=_ENTRY,
    attrs=_attrs({"linear": "linear", "cubic": "cubic", "nearest": "nearest",
                  "bilinear": "linear", "bicubic": "cubic"}),
    infer=infer, run=run, prepare=prepare,
    summary=f"ONNX GridSample-16/20/22 and com.microsoft, any rank (OpenVINO has 4-D only). {_SUMMARY}"))

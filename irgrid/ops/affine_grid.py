"""AffineGrid: the sampling grid of a batch of affine matrices (torch `affine_grid`, ONNX AffineGrid-20).

Version irgrid1 (irgrid's own; OpenVINO has no AffineGrid op, its ONNX import decomposes the ONNX
function, in f32 only). Inputs theta (N, 2, 3) or (N, 3, 4) in f16, bf16, f32 or f64 and size, i64
(or i32) [N, C, H, W] or [N, C, D, H, W], constant or computed at run time; output (N, H, W, 2) or
(N, D, H, W, 3) in theta's type. The semantic definition is the ONNX function body: along an axis of
L points the base coordinate i is -1 + (i + 0.5) * 2 / L (align_corners=0) or -1 + i * 2 / (L - 1)
(align_corners=1), and each point's coordinates are theta @ [x, y, (z,) 1].

Where peers disagree, irgrid is defined (docs/semantics.md):
- a size-1 spatial dim with align_corners=1 gives coordinate 0, the single pixel's centre, as torch
  does (the spec divides by zero there: onnx.reference gives -1, onnxruntime +1, and OpenVINO's
  decomposition a wrong shape);
- N = 1 works (the function body fails for it in onnx.reference);
- f16 and bf16 are computed in f32 and returned in theta's type (bf16 rounded to nearest even, as
  every bf16 output is); f32 and f64 run natively.
Kernel: kernels/cython/affine_grid_kernel.pyx; an AffineGrid feeding only GridSamples is fused into
them by the executor (irgrid/runtime/fusion.py), with the same arithmetic (kernels/core/affine.h).
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import element_types
from ..ir.attributes import Attr
from ..ir.dims import format_shape
from ..registry import Attrs, OpSpec, RunContext, TensorInfo, register
from .common import compute_dtype, int_values, merge_dim, output_buffer, require_float, require_rank


# ONNX says i64; OpenVINO's CPU plugin converts i64 to i32 around extension ops, so i32 is accepted too.
_SIZE_TYPES = ("i64", "i32")


def _spatial_rank(theta: TensorInfo, size: TensorInfo) -> int | None:
    """2 or 3, from the size's length or else theta's shape (None if neither tells); errors when the
    two disagree."""
    length = size.shape[0]
    if length is not None and length not in (4, 5):
        raise ShapeError(f"size must have 4 elements (N, C, H, W) or 5 (N, C, D, H, W), got {length}", input=1)
    rows, cols = theta.shape[1:]
    if length is not None:
        rank = length - 2
        if rows not in (None, rank) or cols not in (None, rank + 1):
            raise ShapeError(f"theta must have shape (N, {rank}, {rank + 1}) for a {length}-element size, got "
                             f"{format_shape(theta.shape)}", input=0)
        return rank
    ranks = [r for r in (2, 3) if rows in (None, r) and cols in (None, r + 1)]
    if not ranks:
        raise ShapeError(f"theta must have shape (N, 2, 3) or (N, 3, 4), got {format_shape(theta.shape)}", input=0)
    return ranks[0] if len(ranks) == 1 else None


def infer(attrs: Attrs, inputs: list[TensorInfo]) -> list[TensorInfo]:
    """Output (N, *size[2:], r) in theta's type; static when size is known at compile time."""
    theta, size = inputs
    require_rank(theta, (3,), 0, "theta")
    require_float(theta, 0, "theta")
    require_rank(size, (1,), 1, "size")
    if size.element_type not in _SIZE_TYPES:
        raise ShapeError(f"size must be an i64 tensor, got {size.element_type}", input=1)
    rank = _spatial_rank(theta, size)
    if rank is None:
        return [TensorInfo(None, theta.element_type)]
    values = int_values(size)
    if values is None:
        return [TensorInfo((theta.shape[0], *(None,) * rank, rank), theta.element_type)]
    if any(v <= 0 for v in values):
        raise ShapeError(f"size {values} must be positive", input=1)
    batch = merge_dim(theta.shape[0], values[0], "theta's batch and size[0] differ", 1)
    return [TensorInfo((batch, *values[2:], rank), theta.element_type)]


def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
    theta, size = inputs
    (info,) = infer(attrs, [TensorInfo(theta.shape, element_types.from_dtype(theta.dtype)),
                            TensorInfo(size.shape, element_types.from_dtype(size.dtype), size)])
    return [affine_grid(theta, info.shape, attrs["align_corners"], ctx.threads, ctx.out)]


def affine_grid(theta: np.ndarray, out_shape: tuple[int, ...], align_corners: bool, threads: int,
                out=()) -> np.ndarray:
    """Run the kernel on a theta already checked by `infer`; output in theta's dtype (f16 computed in f32)."""
    from .._kernels.affine_grid_kernel import affine_grid as kernel

    dtype = compute_dtype(theta)
    grid = output_buffer(out if theta.dtype == dtype else (), 0, out_shape, dtype)
    kernel(np.ascontiguousarray(theta, dtype).reshape(-1), grid.reshape(-1), theta.shape[0],
           np.array(out_shape[1:-1], dtype=np.intp), bool(align_corners), threads)
    return grid if theta.dtype == dtype else grid.astype(theta.dtype)


register(OpSpec(
    type="AffineGrid", versions=("irgrid1",), inputs=(2, 2), native=False, kernel=True,
    attrs=(Attr("align_corners", "bool", False),),
    infer=infer, run=run, entry="affine_grid_kernel.affine_grid",
    summary="ONNX AffineGrid-20 / torch affine_grid, 2-D and 3-D (OpenVINO has none). "
            "Size-1 dims with align_corners give 0."))

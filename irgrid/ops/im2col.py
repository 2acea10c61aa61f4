"""The convolution engine: im2col + GEMM for deformable and plain convolutions, and the geometry
(strides, dilations, pads, auto_pad) that convolutions and pooling share.

Used by DeformableConvolution / DeformConv (irgrid/ops/deform_conv.py), Convolution /
GroupConvolution where they do not run on OpenVINO's own layer (irgrid/ops/convolution.py) and
the pooling ops' geometry (irgrid/ops/glue/pooling.py).

Computation (`convolve`): per item the data is transposed channels-last (AVX2 8 x 8 register
blocks), so a sampling tap reads a contiguous run of channels; a deformable im2col in C
(kernels/core/deform_im2col.c, driven by kernels/cython/deform_columns.pyx) writes the column
matrix point-major per group, (tile, K * C / group), tile by tile (at most TILE_BYTES with its GEMM
block, one tile being fastest, or NARROW_TILE_BYTES where the GEMM does little work per column value), with non-temporal stores when the tile outgrows the caches and the GEMM
is compute-bound
(STREAM_BYTES, STREAM_MIN_CHANNELS); one GEMM per group: OpenVINO's MatMul for f32 (irgrid/dense.py),
else the engine's own (kernels/core/gemm.h: f64, IRGRID_GEMM=numpy, processes forked after OpenVINO
ran). Below FILTERS_FIRST output channels per group, and always on the engine's own GEMM, it is columns
times the filters reordered to (K * C / group, oC / group), a (tile, oC / group) block that a blocked
transpose writes into the output with the bias added; from there filters times columns transposed
writes the output layout directly, the bias added inside the MatMul. The transposes run on one thread
up to TRANSPOSE_PARALLEL_BYTES.
The native library's DeformConv (kernels/openvino/ops.cpp) makes the same choices from the same
constants (the tile budgets, the streaming thresholds and FILTERS_FIRST reach it through
kernels/openvino/convolution_plan.inc) and compiles the same MatMul models, so it gives these bits.
The GEMM bounds the layer (benchmarks/README.md, "The convolution engine's time").
f32 and f64 run natively; f16 and bf16 in f32.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..dense import matmul, on_openvino
from ..errors import LayerAttributeError, ShapeError
from ..ir.attributes import Attr
from ..memory import allocate
from ..registry import Attrs, TensorInfo
from .common import compute_dtype, merge_dim, output_buffer

# Work-buffer budget per tile: the im2col tile and its GEMM block hold at most this many bytes (one
# output point's, C * K + oC / group values, is the floor); one tile is fastest, so the budget is as
# large as the memory goal allows (benchmarks/README.md, "The convolution engine's constants").
TILE_BYTES = 64 * 2**20

# A column tile larger than this is written with non-temporal stores: far beyond the L2s, the cached
# stores' line reads cost as much as the writes...
STREAM_BYTES = 4 * 2**20
# ... when the GEMM does enough work per column value (2 * oC / group flops) to hide reading the
# tile back from memory (benchmarks/README.md, "The convolution engine's constants").
STREAM_MIN_CHANNELS = 64
# Below that, where the GEMM is bound by reading the columns, a tile holds at most this many bytes, so
# that the GEMM reads it back from the caches (the 3-D case, 16 output channels: 0.73-0.80x the time
# of one 28 MiB tile; benchmarks/README.md, "3-D DeformConv's im2col").
NARROW_TILE_BYTES = 4 * 2**20

# From this many output channels per group the GEMM runs filters times columns transposed, giving
# the output's (oC, points) layout with the bias added inside OpenVINO's MatMul; below it columns
# times the (K * C / group, oC / group) filters and a transpose: the faster of the two on each side
# (benchmarks/README.md, "The convolution engine's constants").
FILTERS_FIRST = 256

# The transposes in and out run on one thread up to this many bytes: waking OpenMP's second thread
# costs more than it saves there (benchmarks/README.md, "The convolution engine's constants").
TRANSPOSE_PARALLEL_BYTES = 2 * 2**20

# What runs a convolution on this engine, as `CompiledModel.describe()` names it (OpSpec.entry).
ENTRY = "deform_columns.deformable_columns + GEMM"

AUTO_PADS = {"explicit": "explicit", "notset": "explicit", "valid": "valid", "same_upper": "same_upper",
             "same_lower": "same_lower"}


@dataclass(frozen=True)
class Geometry:
    """A convolution's spatial parameters, one value per spatial dim, pads already resolved."""

    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pads_begin: tuple[int, ...]
    pads_end: tuple[int, ...]

    def output_dims(self, in_dims: Sequence[int | None], rounding: str = "floor") -> tuple[int | None, ...]:
        """Output spatial dims; ShapeError (at the data, input 0) when one would not be positive.

        rounding (OpenVINO's pooling `rounding_type`): `floor` keeps only windows that fit the padded
        input; `ceil` adds one more where a window would run past it; `ceil_torch` then drops that
        window when it would start past the input and pads_begin (torch's ceil_mode rule)."""
        dims = []
        for axis, length in enumerate(in_dims):
            if length is None:
                dims.append(None)
                continue
            span = self.dilations[axis] * (self.kernel[axis] - 1) + 1
            padded = length + self.pads_begin[axis] + self.pads_end[axis]
            if padded < span:
                raise ShapeError(f"spatial axis {axis}: the dilated kernel ({span}) is larger than the padded "
                                 f"input ({padded}); the output size would not be positive", input=0)
            stride = self.strides[axis]
            count = (padded - span + (stride - 1 if rounding != "floor" else 0)) // stride + 1
            if rounding == "ceil_torch" and (count - 1) * stride >= length + self.pads_begin[axis]:
                count -= 1
            dims.append(count)
        return tuple(dims)


def spatial_values(values: Sequence[int], count: int, name: str, broadcast: bool = False) -> tuple[int, ...]:
    """An attribute list with one value per spatial dim (`count`); a 1-element list is repeated
    when `broadcast` (irgrid1's stand-in for an absent ONNX attribute)."""
    values = tuple(values)
    if broadcast and len(values) == 1:
        return values * count
    if len(values) != count:
        raise LayerAttributeError(f"attribute {name} needs {count} values for this input, got {len(values)}")
    return values


def openvino_geometry(attrs: Attrs, in_dims: Sequence[int | None], kernel: Sequence[int]) -> Geometry:
    """OpenVINO's strides/dilations/pads_begin/pads_end/auto_pad as a Geometry (auto_pad resolved
    per axis as OpenVINO's convolution shape inference does; unknown input dims get pads 0)."""
    r = len(kernel)
    strides = spatial_values(attrs["strides"], r, "strides")
    dilations = spatial_values(attrs["dilations"], r, "dilations")
    begin = spatial_values(attrs["pads_begin"], r, "pads_begin")
    end = spatial_values(attrs["pads_end"], r, "pads_end")
    auto_pad = attrs["auto_pad"]
    if auto_pad == "valid":
        begin = end = (0,) * r
    elif auto_pad in ("same_upper", "same_lower"):
        begin_list, end_list = [], []
        for length, k, s, d in zip(in_dims, kernel, strides, dilations):
            total = 0 if length is None else max(0, (-(-length // s) - 1) * s + d * (k - 1) + 1 - length)
            small, large = total // 2, total - total // 2
            begin_list.append(small if auto_pad == "same_upper" else large)
            end_list.append(large if auto_pad == "same_upper" else small)
        begin, end = tuple(begin_list), tuple(end_list)
    return Geometry(tuple(kernel), strides, dilations, begin, end)


def require_same_type(inputs: list[TensorInfo]) -> None:
    """Every input in the data's element type (OpenVINO's and ONNX's type constraint)."""
    for index, info in enumerate(inputs[1:], start=1):
        if info.element_type != inputs[0].element_type:
            raise ShapeError(f"input {index} has element type {info.element_type}, the data "
                             f"{inputs[0].element_type}", input=index)


def check_channels(data: TensorInfo, filters: TensorInfo, group: int, filters_index: int) -> int | None:
    """C and oC divisible by group and filters (oC, C / group, ...); returns oC."""
    channels, out_channels = data.shape[1], filters.shape[0]
    if channels is not None and channels % group:
        raise ShapeError(f"input channels {channels} are not divisible by group {group}", input=0)
    if out_channels is not None and out_channels % group:
        raise ShapeError(f"output channels {out_channels} (filters dim 0) are not divisible by group {group}",
                         input=filters_index)
    per_group = None if channels is None else channels // group
    merge_dim(filters.shape[1], per_group, "filters dim 1 must be input channels / group", filters_index)
    return out_channels


OPENVINO_CONV_ATTRS = (
    Attr("strides", "ints", [1, 1], required=True, minimum=1),
    Attr("pads_begin", "ints", [0, 0], required=True, minimum=0),
    Attr("pads_end", "ints", [0, 0], required=True, minimum=0),
    Attr("dilations", "ints", [1, 1], required=True, minimum=1),
    Attr("auto_pad", "str", "explicit", choices=AUTO_PADS),
)

def tile_points(per_point: int, points: int, itemsize: int, per_group: int) -> int:
    """Output points per tile: the tile's buffers (per_point values per point) stay within
    TILE_BYTES, below STREAM_MIN_CHANNELS output channels per group within NARROW_TILE_BYTES too, or
    hold one point when a single point's are larger."""
    budget = TILE_BYTES if per_group >= STREAM_MIN_CHANNELS else min(TILE_BYTES, NARROW_TILE_BYTES)
    return max(1, min(points, budget // max(1, per_point * itemsize)))


def _work_layout(channels: int, plane: int, kernel_size: int, per_group: int, filters_first: bool, points: int,
                 itemsize: int) -> tuple[int, int]:
    """(elements, tile) of convolve's work array: per tile of output points the column matrix (C * K
    values a point, first, so it starts aligned) and, unless the filters come first, its GEMM block
    (oC / group a point), then one item's data channels-last."""
    block = 0 if filters_first else per_group  # filters first: the GEMM writes the output
    tile = tile_points(channels * kernel_size + block, points, itemsize, per_group)
    return channels * plane + (channels * kernel_size + block) * tile, tile


def workspace_bytes(x_shape: Sequence[int], w_shape: Sequence[int], out_dims: Sequence[int], itemsize: int) -> int:
    """Extra memory convolve needs besides its inputs and output: its work array and the reordered
    filters."""
    per_group = w_shape[0] // (x_shape[1] // w_shape[1])
    elements, _ = _work_layout(x_shape[1], math.prod(x_shape[2:]), math.prod(w_shape[2:]), per_group,
                               itemsize == 4 and per_group >= FILTERS_FIRST, math.prod(out_dims), itemsize)
    return (elements + math.prod(w_shape)) * itemsize + 64  # + scratch's alignment


_scratch = threading.local()


def scratch(size: int, dtype: np.dtype) -> np.ndarray:
    """A 1-D work array of `size` elements starting on a 64-byte boundary (the streaming column
    stores need 32), reused across calls from one Python thread while it fits TILE_BYTES (a fresh
    array each call costs a page fault per 4 KiB); larger requests get a fresh array. The kept buffer lives as long as its thread."""
    nbytes = size * np.dtype(dtype).itemsize
    buffer = getattr(_scratch, "buffer", None)
    if nbytes > TILE_BYTES or buffer is None or buffer.nbytes < nbytes + 64:
        buffer = allocate((nbytes + 64,), np.uint8)
        if nbytes <= TILE_BYTES:
            _scratch.buffer = buffer
    start = -buffer.ctypes.data % 64
    return buffer[start:start + nbytes].view(dtype)


def convolve(x: np.ndarray, w: np.ndarray, geometry: Geometry, *, offsets: np.ndarray | None = None,
             mask: np.ndarray | None = None, bias: np.ndarray | None = None, group: int = 1,
             offset_groups: int = 1, boundary: str = "zeros", threads: int = 1, out=()) -> np.ndarray:
    """(Deformable) convolution of inputs already checked by an `infer`; output in x's dtype.

    Without offsets every sampling point is a grid point (a plain convolution on the same path).
    Per item: the data channels-last; per tile of output points the column matrix, point-major per
    group (groups, tile, K * C / groups); per group one GEMM, columns times the filters reordered to
    (K, C / groups, oC / groups) into a (tile, oC / groups) block that is transposed into the output
    with the bias added, or, on OpenVINO's MatMul from FILTERS_FIRST output channels per group, the
    filters (oC / groups, K, C / groups) times the columns transposed, straight into the output.
    """
    from .._kernels.deform_columns import deformable_columns, gemm, transpose

    dtype = compute_dtype(x, w, *(a for a in (offsets, mask, bias) if a is not None))
    n, channels = x.shape[:2]
    out_channels = w.shape[0]
    in_dims = x.shape[2:]
    out_dims = geometry.output_dims(in_dims)
    kernel_size = math.prod(geometry.kernel)
    points, plane = math.prod(out_dims), math.prod(in_dims)
    y = output_buffer(out if x.dtype == dtype else (), 0, (n, out_channels, *out_dims), dtype)
    y_points = y.reshape(n, out_channels, points)
    per_group, group_rows = out_channels // group, kernel_size * (channels // group)
    openvino_gemm = on_openvino(np.empty(0, dtype))
    filters_first = openvino_gemm and per_group >= FILTERS_FIRST
    # (k, c) order, as the columns: (oC / group, K * C / group) filters first, else its transpose
    weights = np.asarray(w, dtype).reshape(group, per_group, -1, kernel_size)
    weights = np.ascontiguousarray(weights.transpose(0, 1, 3, 2) if filters_first else weights.transpose(0, 3, 2, 1))
    weights = weights.reshape((group, per_group, group_rows) if filters_first else (group, group_rows, per_group))
    bias = None if bias is None or bias.size == 0 else np.ascontiguousarray(bias, dtype)
    elements, tile = _work_layout(channels, plane, kernel_size, per_group, filters_first, points, dtype.itemsize)
    work = scratch(elements, dtype)
    column_buffer, work = work[:channels * kernel_size * tile], work[channels * kernel_size * tile:]
    data = work[work.size - channels * plane:]  # before it, the GEMM block unless filters come first
    stream = column_buffer.nbytes > STREAM_BYTES and per_group >= STREAM_MIN_CHANNELS
    dummy = np.zeros(1, dtype)
    spatial = [np.array(values, dtype=np.intp) for values in
               (in_dims, out_dims, geometry.kernel, geometry.strides, geometry.dilations, geometry.pads_begin)]
    in_threads = threads if data.nbytes > TRANSPOSE_PARALLEL_BYTES else 1
    out_threads = threads if tile * per_group * dtype.itemsize > TRANSPOSE_PARALLEL_BYTES else 1
    for item in range(n):
        transpose(np.ascontiguousarray(x[item], dtype).reshape(channels, plane), data.reshape(plane, channels), None,
                  in_threads)
        offsets_flat = dummy if offsets is None else np.ascontiguousarray(offsets[item], dtype).reshape(-1)
        mask_flat = dummy if mask is None else np.ascontiguousarray(mask[item], dtype).reshape(-1)
        for start in range(0, points, tile):
            stop = min(start + tile, points)
            columns = column_buffer[:channels * kernel_size * (stop - start)]
            deformable_columns(data, offsets_flat, mask_flat, columns, channels, *spatial, group, offset_groups,
                               offsets is not None, mask is not None, boundary == "edge", start, stop, threads, stream)
            columns = columns.reshape(group, stop - start, group_rows)
            for g in range(group):
                rows = slice(g * per_group, (g + 1) * per_group)
                group_bias = None if bias is None else bias[rows]
                if filters_first:  # straight into the output (a copy unless one tile)
                    matmul(weights[g], columns[g], y_points[item, rows, start:stop], threads, transpose_b=True,
                           bias=group_bias)
                else:
                    product = work[:(stop - start) * per_group].reshape(stop - start, per_group)
                    (matmul if openvino_gemm else gemm)(columns[g], weights[g], product, threads)
                    transpose(product, y_points[item, rows, start:stop], group_bias, out_threads)
    return y if x.dtype == dtype else y.astype(x.dtype)

"""Fusing an AffineGrid into the GridSamples it feeds, so no grid tensor is ever written.

A spatial transformer computes grid = AffineGrid(theta, size), then GridSample(X, grid): the grid
(N, H, W, 2) is as large as a channel plane of the output, written once and read once. When an
AffineGrid's only consumers are GridSamples (opset9 or irgrid1, at their grid input), each GridSample
runs the kernel's `SamplePlan` with the AffineGrid's theta instead, which computes each point's
coordinates from theta on the fly (kernels/core/affine.h's `irgrid_affine_points`, the function
AffineGrid's own kernel calls) and then takes the same taps. The result is bitwise that of the unfused pair.

Fused only where bitwise holds without further thought: theta and the sampled data both f32 or both
f64 (an f16 or bf16 grid would be rounded between the two layers). Not fused: an AffineGrid whose
grid is a model output, feeds any other layer, or is constant (then it is folded at compile time).
`compile_model(..., fuse=False)` turns fusion off.

torch's dynamo exporter writes no AffineGrid: it writes F.affine_grid decomposed (a constant lattice
times theta, summed). That pattern is fused the same way (`_plan_decomposed`), within f32 tolerance of
the unfused graph rather than bitwise: its docstring says why.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass
from functools import partial

import numpy as np

from ..errors import IRGridError, ShapeError
from ..inference import Key
from ..ir import element_types
from ..ir.dims import is_static, num_elements
from ..ir.model import Layer, Model
from ..ops import affine_grid, grid_sample
from ..ops.common import array_infos, output_buffer
from ..registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo
from ..timing import tunes_kernels

FUSED_KERNEL = "sampling.SamplePlan"  # with theta as its coords (the describe row says fused)
_FUSABLE_TYPES = ("f32", "f64")


@dataclass
class Fusion:
    """A GridSample that runs with its AffineGrid fused in."""

    affine: Layer  # the AffineGrid, no longer a step of its own
    layer: Layer  # stands in for the GridSample: same type, name, id and ports, the fused op
    inputs: list[Key]  # data, theta, size


@dataclass
class FusionPlan:
    fused: dict[str, Fusion]  # GridSample layer id -> its fusion
    absorbed: dict[str, list[str]]  # AffineGrid layer id -> ids of the GridSamples it was fused into
    declined: dict[str, str]  # AffineGrid layer id -> why it was not fused


def plan_fusions(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], returned: set[Key]) -> FusionPlan:
    """Find every AffineGrid -> GridSample pair that can run fused (see the module docstring)."""
    consumers = consumers_of(model)
    plan = FusionPlan({}, {}, {})
    for layer_id in model.order:
        layer = model.layers[layer_id]
        key = (layer_id, 0)
        if layer.type != "AffineGrid" or key in constants:
            continue
        users = consumers[key]
        theta_src, size_src = (model.producer(layer, i) for i in range(2))
        theta_type = infos[(theta_src.layer, theta_src.output)].element_type
        reason = None
        if key in returned:
            reason = "its grid is a model output"
        elif not users or any(user.type != "GridSample" or index != 1 for user, index in users):
            reason = "its grid feeds layers other than GridSample's grid input"
        else:
            data_types = {infos[input_key(model, user, 0)].element_type for user, _ in users}
            if theta_type not in _FUSABLE_TYPES or data_types != {theta_type}:
                reason = (f"theta is {theta_type} and the sampled data {'/'.join(sorted(data_types))}; fusion "
                          "needs both f32 or both f64")
        if reason:
            plan.declined[layer_id] = reason
            continue
        for user, _ in users:
            op = _fused_op(layer, user.op)
            stand_in = dataclasses.replace(user, op=op, attrs={**user.attrs, "grid_align_corners":
                                                               layer.attrs["align_corners"]})
            inputs = [input_key(model, user, 0), (theta_src.layer, theta_src.output), (size_src.layer, size_src.output)]
            plan.fused[user.id] = Fusion(layer, stand_in, inputs)
        plan.absorbed[layer_id] = [user.id for user, _ in users]
    for layer_id in model.order:
        layer = model.layers[layer_id]
        if layer.type == "Reshape" and (layer_id, 0) not in constants:
            _plan_decomposed(model, infos, constants, returned, consumers, layer, plan)
    return plan


def _plan_decomposed(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], returned: set[Key],
                     consumers: dict[Key, list[tuple[Layer, int]]], reshape: Layer, plan: FusionPlan) -> None:
    """torch.onnx.export's dynamo exporter writes F.affine_grid as its decomposition (torch/_decomp):

        base (1, P, r + 1, 1) constant: the lattice [x, (y, z,) 1] of the P = (D *) H * W points
        grid = Reshape(ReduceSum(Multiply(base, Unsqueeze(Transpose(theta, [0, 2, 1]), 1)), axis 2),
                       (N, (D,) H, W, r))

    which GridSample reads like an AffineGrid's. Where the base is that lattice (to 4 ulps, see below)
    and only GridSamples read the grid, they run fused with theta as an AffineGrid's would (no grid
    tensor, nor the (N, P, r + 1, r) product); else nothing changes.

    Not bitwise the unfused graph: the exporter's lattice is torch.linspace's, which differs from the
    AffineGrid kernel's start + i * step by up to 2 ulps (of 1.0) in most sizes (1177 of 1196 tried);
    the sum is in the kernel's order ((t0 x + t1 y) + t2 z) + t3, as the ReduceSum adds. So each
    coordinate moves by a few ulps, within f32 tolerance of torch (tests/test_fusion_decomposed_affine.py:
    1e-5 on images in [0, 1], where the unfused graph is itself 7e-6 from torch) for a 30x faster step;
    fusing was chosen over exactness here, as OpenVINO's own decomposition is no closer to torch.
    """
    users = consumers[(reshape.id, 0)]
    if not users or (reshape.id, 0) in returned or any(u.type != "GridSample" or i != 1 for u, i in users):
        return
    chain = _decomposed_chain(model, consumers, reshape)
    if chain is None:
        return
    reduce_sum, multiply, unsqueeze, transpose, base_key = chain
    theta_key = input_key(model, transpose, 0)
    theta, base, grid = infos[theta_key], infos[base_key], infos[(reshape.id, 0)]
    reason = None
    if any((layer.id, 0) in returned for layer in chain[:4]):
        reason = "a part of the decomposed affine grid is a model output"
    elif not is_static(grid.shape) or theta.shape is None or len(grid.shape) not in (4, 5):
        reason = "the decomposed affine grid's shape is not static"
    else:
        rank = len(grid.shape) - 2
        data_types = {infos[input_key(model, user, 0)].element_type for user, _ in users}
        if (theta.shape != (grid.shape[0], rank, rank + 1) or grid.shape[-1] != rank
                or base.value is None or base.value.shape != (1, num_elements(grid.shape[1:-1]), rank + 1, 1)):
            return  # shapes of some other computation
        align_corners = _lattice_align_corners(base.value, grid.shape[1:-1])
        if theta.element_type not in _FUSABLE_TYPES or data_types != {theta.element_type}:
            reason = (f"theta is {theta.element_type} and the sampled data {'/'.join(sorted(data_types))}; fusion "
                      "needs both f32 or both f64")
        elif base.element_type != theta.element_type or align_corners is None:
            reason = "the decomposed affine grid's base is not the affine lattice"
    if reason:
        plan.declined[reduce_sum.id] = reason
        return
    dims = tuple(grid.shape[1:-1])
    for user, _ in users:
        op = _decomposed_op(reduce_sum, user.op, dims)
        stand_in = dataclasses.replace(user, op=op, attrs={**user.attrs, "grid_align_corners": align_corners})
        plan.fused[user.id] = Fusion(reduce_sum, stand_in, [input_key(model, user, 0), theta_key])
    for layer in (reshape, *chain[:4]):
        plan.absorbed[layer.id] = [user.id for user, _ in users]


def _decomposed_chain(model: Model, consumers: dict[Key, list[tuple[Layer, int]]], reshape: Layer
                      ) -> tuple[Layer, Layer, Layer, Layer, Key] | None:
    """(ReduceSum, Multiply, Unsqueeze, Transpose, the base's key) feeding `reshape`, each read by the
    next alone, with the decomposition's axes; else None."""
    def producer(layer: Layer, index: int, type_: str) -> Layer | None:
        src = model.producer(layer, index)
        found = model.layers[src.layer]
        only = consumers[(src.layer, src.output)] == [(layer, index)]
        return found if found.type == type_ and src.output == 0 and only else None

    def constant(layer: Layer, index: int) -> list[int] | None:
        src = model.producer(layer, index)
        value = model.layers[src.layer].const
        return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]

    reduce_sum = producer(reshape, 0, "ReduceSum")
    if reduce_sum is None or reduce_sum.attrs.get("keep_dims") or constant(reduce_sum, 1) not in ([2], [-2]):
        return None
    multiply = producer(reduce_sum, 0, "Multiply")
    if multiply is None or multiply.attrs.get("auto_broadcast") != "numpy":
        return None
    for side in (0, 1):
        unsqueeze = producer(multiply, side, "Unsqueeze")
        if unsqueeze is not None and constant(unsqueeze, 1) in ([1], [-3]):
            transpose = producer(unsqueeze, 0, "Transpose")
            if transpose is not None and constant(transpose, 1) == [0, 2, 1]:
                return reduce_sum, multiply, unsqueeze, transpose, input_key(model, multiply, 1 - side)
    return None


def _lattice_align_corners(base: np.ndarray, dims: tuple[int, ...]) -> bool | None:
    """Whether `base` (1, P, r + 1, 1) is the AffineGrid lattice of `dims` with align_corners 0 or 1
    (each coordinate within 4 ulps of 1.0 of the kernel's, the last column exactly 1); None if neither."""
    points = base.reshape(-1, len(dims) + 1)
    if not np.all(points[:, -1] == 1):
        return None
    dtype = base.dtype
    tolerance = 4 * np.finfo(dtype).eps
    for align_corners in (False, True):
        axes = []
        for length in dims:
            if align_corners:
                step, start = ((dtype.type(2) / dtype.type(length - 1), dtype.type(-1)) if length > 1
                               else (dtype.type(0), dtype.type(0)))
            else:
                step = dtype.type(2) / dtype.type(length)
                start = dtype.type(-1) + step / dtype.type(2)
            axes.append(start + np.arange(length).astype(dtype) * step)
        lattice = np.stack(np.meshgrid(*axes, indexing="ij")[::-1], -1).reshape(-1, len(dims))  # x first
        if np.all(np.abs(points[:, :-1] - lattice) <= tolerance):
            return align_corners
    return None


def _decomposed_op(reduce_sum: Layer, sample_op: OpSpec, dims: tuple[int, ...]) -> OpSpec:
    """The fused op on (data, theta), the AffineGrid's size being (N, C) + dims."""
    def size_info(data: TensorInfo, theta: TensorInfo) -> TensorInfo:
        batch = theta.shape[0] if theta.shape is not None else None
        channels = data.shape[1] if data.shape is not None and len(data.shape) > 1 else None
        value = None if batch is None or channels is None else np.array([batch, channels, *dims], np.int64)
        return TensorInfo((2 + len(dims),), "i64", value)

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, theta = inputs
        size = np.array([theta.shape[0], data.shape[1] if data.ndim > 1 else 1, *dims], np.int64)
        return _run_fused(attrs, [data, theta, size], ctx, reduce_sum, sample_op)

    def prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
        return _prepare_fused(attrs, [*inputs, size_info(*inputs)], reduce_sum, sample_op)  # reads (data, theta)

    return OpSpec(type="GridSample", versions=("fused",), attrs=(), inputs=(2, 2), infer=None, run=run,
                  prepare=prepare, native=False, kernel=True, entry=FUSED_KERNEL,
                  summary="GridSample at the points of a decomposed affine grid, fused")


def input_key(model: Model, layer: Layer, index: int) -> Key:
    """The tensor feeding input `index` of `layer`."""
    src = model.producer(layer, index)
    return (src.layer, src.output)


def consumers_of(model: Model) -> dict[Key, list[tuple[Layer, int]]]:
    """Each tensor's readers: (layer, input index), the fusions' view of the graph."""
    consumers: dict[Key, list[tuple[Layer, int]]] = defaultdict(list)
    for (layer_id, index), src in model.sources.items():
        consumers[(src.layer, src.output)].append((model.layers[layer_id], index))
    return consumers


def _fused_op(affine: Layer, sample_op: OpSpec) -> OpSpec:
    return OpSpec(type="GridSample", versions=("fused",), attrs=(), inputs=(3, 3), infer=None,
                  run=partial(_run_fused, affine=affine, sample_op=sample_op),
                  prepare=partial(_prepare_fused, affine=affine, sample_op=sample_op), native=False, kernel=True,
                  entry=FUSED_KERNEL,
                  summary="GridSample at the points of a fused AffineGrid")


def _fused_plan(attrs: Attrs, inputs: list[TensorInfo], affine: Layer, sample_op: OpSpec, tune: bool = False):
    """Validate as the two layers would (AffineGrid's errors located at the AffineGrid); the kernel's
    plan for data, theta and a known size (`tune`: a prepared step's, grid_sample.sample_plan)."""
    data, theta, size = inputs
    try:
        (grid,) = affine_grid.infer({"align_corners": attrs["grid_align_corners"]}, [theta, size])
    except IRGridError as exc:
        raise exc.located(affine) from None
    sample_op.infer(attrs, [data, grid])
    if data.element_type != theta.element_type:  # the plan fuses only equal f32/f64 types; a run-time change is refused
        raise ShapeError(f"fused AffineGrid: theta is {theta.element_type}, data {data.element_type}", input=1)
    return grid_sample.sample_plan(data.shape, theta.shape, element_types.numpy_dtype(data.element_type),
                                   attrs["mode"], attrs["padding_mode"], attrs["align_corners"], grid.shape[1:-1],
                                   attrs["grid_align_corners"], tune=tune)


def _run_fused(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext, affine: Layer,
               sample_op: OpSpec) -> list[np.ndarray]:
    data, theta, size = inputs
    plan = _fused_plan(attrs, [*array_infos([data, theta]),
                               TensorInfo(size.shape, element_types.from_dtype(size.dtype), size)], affine, sample_op)
    return [plan(data, theta, output_buffer(ctx.out, 0, plan.out_shape, data.dtype), ctx.threads)]


def _prepare_fused(attrs: Attrs, inputs: list[TensorInfo], affine: Layer, sample_op: OpSpec) -> PreparedFn | None:
    """The plan once, when the size is a constant (the grid's dims are then static)."""
    if inputs[2].value is None:
        return None
    try:
        return _fused_plan(attrs, inputs, affine, sample_op, tunes_kernels()).run
    except ValueError:
        return None  # shapes the kernel refuses: `run` reports them per call

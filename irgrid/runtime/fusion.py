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
from ..ir.model import Layer, Model
from ..ops import affine_grid, grid_sample
from ..ops.common import array_infos, output_buffer
from ..registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo

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
    consumers: dict[Key, list[tuple[Layer, int]]] = defaultdict(list)
    for (layer_id, index), src in model.sources.items():
        consumers[(src.layer, src.output)].append((model.layers[layer_id], index))
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
            data_types = {infos[_key(model, user, 0)].element_type for user, _ in users}
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
            inputs = [_key(model, user, 0), (theta_src.layer, theta_src.output), (size_src.layer, size_src.output)]
            plan.fused[user.id] = Fusion(layer, stand_in, inputs)
        plan.absorbed[layer_id] = [user.id for user, _ in users]
    return plan


def _key(model: Model, layer: Layer, index: int) -> Key:
    src = model.producer(layer, index)
    return (src.layer, src.output)


def _fused_op(affine: Layer, sample_op: OpSpec) -> OpSpec:
    return OpSpec(type="GridSample", versions=("fused",), attrs=(), inputs=(3, 3), infer=None,
                  run=partial(_run_fused, affine=affine, sample_op=sample_op),
                  prepare=partial(_prepare_fused, affine=affine, sample_op=sample_op), native=False, kernel=True,
                  summary="GridSample at the points of a fused AffineGrid")


def _fused_plan(attrs: Attrs, inputs: list[TensorInfo], affine: Layer, sample_op: OpSpec):
    """Validate as the two layers would (AffineGrid's errors located at the AffineGrid); the kernel's
    plan for data, theta and a known size."""
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
                                   attrs["grid_align_corners"])


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
        return _fused_plan(attrs, inputs, affine, sample_op).run
    except ValueError:
        return None  # shapes the kernel refuses: `run` reports them per call

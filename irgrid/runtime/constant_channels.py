"""A GridSample of constant data whose channels are all the same samples one channel.

PWC-Net's warp (and the flow networks that copy it) computes its occlusion mask as
`grid_sample(torch.ones(x.size()), vgrid)`: a constant of C identical channels, sampled at the warp's
points. GridSample computes each channel on its own with the same taps and weights, so every channel of
the result holds the bits of channel 0's. Where the data is a constant (folded at compile time) whose
channels are identical bit for bit, the step samples one channel and gives the result to every channel as
a broadcast view (read-only, no copy): 1/C of the work, the same values. Element-wise steps read the view
as it is (the chain kernel steps over the channels with stride 0). Works on a GridSample fused with its coordinates (fusion.py, displacement.py) as on a
plain one.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..inference import Key
from ..ir.dims import is_static
from ..ir.model import Model
from ..memory import allocate
from ..registry import Attrs, OpSpec, PreparedFn, RunContext, TensorInfo
from .fusion import Fusion, FusionPlan, input_key


def plan_constant_channels(model: Model, infos: dict[Key, TensorInfo], constants: dict[Key, np.ndarray],
                           returned: set[Key], plan: FusionPlan) -> None:
    """Makes each GridSample of constant data with identical channels (module docstring) sample one
    channel, in `plan` (keeping the fusion it has). Not where its output is a model output: the caller
    gets arrays of its own, and the one-channel buffer is reused by the next call."""
    for layer in model.layers.values():
        if layer.type != "GridSample" or layer.id in plan.absorbed or (layer.id, 0) in returned:
            continue
        fusion = plan.fused.get(layer.id)
        step = fusion.layer if fusion else layer
        inputs = fusion.inputs if fusion else [input_key(model, layer, i) for i in range(len(layer.inputs))]
        data, out = constants.get(inputs[0]), infos.get((layer.id, 0))
        if (data is None or data.ndim < 3 or data.shape[1] < 2 or out is None or out.shape is None
                or not is_static(out.shape) or not _same_channels(data)):
            continue
        one = np.ascontiguousarray(data[:, :1])
        one.flags.writeable = False
        stand_in = dataclasses.replace(step, op=_one_channel_op(step.op, one, tuple(out.shape)))
        plan.fused[layer.id] = Fusion(fusion.affine if fusion else model.layers[inputs[0][0]], stand_in, inputs)


def _same_channels(data: np.ndarray) -> bool:
    """Whether every channel (axis 1) holds channel 0's bits."""
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(data.shape[0], data.shape[1], -1)
    return bool(np.all(raw == raw[:, :1]))


def _one_channel_op(op: OpSpec, one: np.ndarray, shape: tuple[int, ...]) -> OpSpec:
    """`op` on the one channel `one` in place of its data input (which it no longer reads), its result
    broadcast to `shape`; its one-channel result in a buffer of its own, reused by every call."""
    out_shape = (shape[0], 1, *shape[2:])
    buffer: list[np.ndarray] = []

    def context(ctx: RunContext) -> RunContext:
        if not buffer:
            buffer.append(allocate(out_shape, one.dtype))
        return RunContext(ctx.threads, buffer)

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        (result,) = op.run(attrs, [one, *inputs[1:]], context(ctx))
        return [np.broadcast_to(result, shape)]

    def prepare(attrs: Attrs, inputs: list[TensorInfo]) -> PreparedFn | None:
        prepared = op.prepare and op.prepare(attrs, [TensorInfo(one.shape, inputs[0].element_type, one), *inputs[1:]])
        if prepared is None:
            return None

        def fast(args: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
            (result,) = prepared([one, *args[1:]], context(ctx))
            return [np.broadcast_to(result, shape)]
        return fast

    return dataclasses.replace(op, run=run, prepare=prepare, kernel=False, entry=op.entry or "sampling.SamplePlan",
                               summary=f"{op.summary}, on one of its constant data's identical channels")

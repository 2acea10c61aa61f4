"""Boolean-mask assignment as torch's dynamo exporter writes it, run as a masked fill.

`mask[mask < 0.9999] = 0` (PWC-Net's warp) reaches an IR, through `torch.onnx.export` (dynamo) and
`irgrid convert`, as

    cond    = Less(mask, 0.9999)
    indices = Transpose(NonZero(cond), [1, 0])                      (count, rank): one row per True
    updates = Broadcast(0, ReduceSum(Convert(Reshape(cond, [-1]))))  (count,): the scalar, count times
    out     = ScatterNDUpdate(mask, indices, updates)

which is `where(cond, 0, mask)`: NonZero's indices are distinct, in range and address single elements
when cond has mask's shape, and every update is the same scalar. Run as written, the millions of index
tuples flow through NonZero, a Transpose and the scatter (issue 41: 560 ms of the block's 1.1 s on
irgrid's runtime); as a masked fill it is one pass over cond and mask, bitwise the same values. Where
the pattern holds (static equal shapes, a constant single-element value of mask's type, a
ScatterNDUpdate without reduction), the ScatterNDUpdate runs as that fill on (mask, cond) and the
index layers that only fed it run no more (`describe()` lists them as fused into it).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..inference import Key
from ..ir.dims import is_static
from ..ir.model import Layer, Model
from ..ops.common import output_buffer
from ..registry import Attrs, OpSpec, RunContext, TensorInfo
from .fusion import Fusion, FusionPlan, consumers_of, input_key


FILL_VALUE = "fill_value"  # a stand-in's attribute: the value it fills in


def fill_value(layer: Layer) -> np.ndarray | None:
    """The value a boolean-mask assignment's stand-in (from plan_mask_assignments) fills in where cond
    holds, its inputs being (data, cond): it computes Select(cond, value, data). None for other layers."""
    return layer.attrs.get(FILL_VALUE)


def mask_assignments(model: Model, infos: dict[Key, TensorInfo]) -> dict[str, tuple[Layer, Key, np.ndarray]]:
    """The ScatterNDUpdates that are boolean-mask assignments (module docstring), by layer id: their
    NonZero, cond's key and the fill value."""
    found = {}
    for layer_id in model.order:
        scatter = model.layers[layer_id]
        if scatter.type == "ScatterNDUpdate" and scatter.attrs.get("reduction", "none") == "none":
            pattern = _pattern(model, infos, scatter)
            if pattern is not None:
                found[layer_id] = pattern
    return found


def plan_mask_assignments(model: Model, infos: dict[Key, TensorInfo], returned: set[Key], plan: FusionPlan) -> None:
    """Adds each ScatterNDUpdate that is a boolean-mask assignment to `plan` (module docstring)."""
    consumers = consumers_of(model)
    for layer_id, (non_zero, cond_key, value) in mask_assignments(model, infos).items():
        scatter = model.layers[layer_id]
        op = _fill_op(value)
        stand_in = dataclasses.replace(scatter, op=op, attrs={**scatter.attrs, FILL_VALUE: value})
        plan.fused[scatter.id] = Fusion(non_zero, stand_in, [input_key(model, scatter, 0), cond_key])
        live = {model.producer(scatter, 0).layer, cond_key[0]}
        for dead in _dead_after(model, infos, consumers, returned, scatter, live, plan):
            plan.absorbed[dead] = [scatter.id]


def _pattern(model: Model, infos: dict[Key, TensorInfo], scatter: Layer) -> tuple[Layer, Key, np.ndarray] | None:
    """(the NonZero, cond's key, the fill value as a 0-d array of data's type) where `scatter` is a
    boolean-mask assignment; else None."""
    def producer(layer: Layer, index: int, *types: str) -> Layer | None:
        found = model.layers[model.producer(layer, index).layer]
        return found if found.type in types else None

    data = infos[input_key(model, scatter, 0)]
    transpose = producer(scatter, 1, "Transpose")
    broadcast = producer(scatter, 2, "Broadcast")
    if transpose is None or broadcast is None or data.shape is None or not is_static(data.shape):
        return None
    perm = infos[input_key(model, transpose, 1)].value
    non_zero = producer(transpose, 0, "NonZero")
    if non_zero is None or perm is None or [int(v) for v in np.asarray(perm).reshape(-1)] != [1, 0]:
        return None
    cond_key = input_key(model, non_zero, 0)
    cond, value = infos[cond_key], infos[input_key(model, broadcast, 0)]
    if cond.shape != data.shape or value.value is None or np.asarray(value.value).size != 1 \
            or value.element_type != data.element_type or len(data.shape) == 0:
        return None
    return non_zero, cond_key, np.asarray(value.value).reshape(())


def _dead_after(model: Model, infos: dict[Key, TensorInfo], consumers: dict[Key, list[tuple[Layer, int]]],
                returned: set[Key], scatter: Layer, live: set[str], plan: FusionPlan) -> list[str]:
    """The layers that fed only the scatter's indices and updates (directly or through each other), which
    no longer run once it reads cond instead; `live`: the layers whose outputs the fill reads."""
    dead: set[str] = set()
    dropped = {(scatter.id, 1), (scatter.id, 2)}
    pending = [model.producer(scatter, 1).layer, model.producer(scatter, 2).layer]
    while pending:
        layer_id = pending.pop()
        layer = model.layers[layer_id]
        if (layer_id in dead or layer_id in live or layer_id in plan.fused
                or layer.type in ("Parameter", "Const", "Constant")):
            continue
        keys = [(layer_id, i) for i in range(len(layer.outputs))]
        if infos[keys[0]].value is not None:  # folded at compile time: not a step to drop
            continue
        if any(key in returned for key in keys) or any(
                (user.id, index) not in dropped for key in keys for user, index in consumers[key]):
            continue
        dead.add(layer_id)
        for index in range(len(layer.inputs)):
            dropped.add((layer_id, index))
            pending.append(model.producer(layer, index).layer)
    return sorted(dead, key=model.order.index)


def _fill_op(value: np.ndarray) -> OpSpec:
    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        data, cond = inputs
        out = output_buffer(ctx.out, 0, data.shape, data.dtype)
        np.copyto(out, data)
        np.copyto(out, value, where=cond.astype(bool, copy=False))
        return [out]

    return OpSpec(type="ScatterNDUpdate", versions=("mask",), attrs=(), inputs=(2, 2), infer=None, run=run,
                  native=False, summary="boolean-mask assignment as a masked fill")

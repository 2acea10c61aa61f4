"""Chains of element-wise layers run as one pass over their output (kernels/core/elementwise.h).

The glue around the grid operators is often a chain of element-wise layers over full-size tensors:
PWC-Net's occlusion mask is Less, Select, Greater, Select and Multiply over 4x3x436x1024 values, two
fifths of the block on irgrid's runtime, each layer one numpy call that reads and writes a whole tensor on
one thread. Run as one chain (`irgrid._kernels.elementwise.Chain`), each block of the output is computed
through all the steps while its values are in the cache, on every thread: the inputs are read once and
the output written once.

What joins a chain: arithmetic (Add, Subtract, Multiply, Divide, Minimum, Maximum), comparisons,
Select and the logical layers (the kernel module's `OPERATIONS`), and the boolean-mask assignments
that mask_assignment.py runs as fills (a Select of the fill value), computing in f32 or f64 (and
booleans), with static shapes, not folded, and not fused or absorbed by another plan (fusion.py,
displacement.py). A layer joins the chain of the layer it feeds when every step that reads its output
(after the other plans: a layer they absorbed reads nothing) is in that chain, its output is no model
output, and it has the chain's output shape (inputs from outside the chain may broadcast). The layer
whose output leaves the chain runs it; the others are listed as fused into it, as are the layers fused
into a mask assignment that joined. A layer alone runs as a chain of one when its output has at least
ALONE_ELEMENTS elements, where the threads pay; smaller ones stay numpy calls (benchmarks/README.md,
"Element-wise chains").

Bitwise the unfused layers: each step computes what the layer's numpy call computes, element by element
in the same type (the kernel's header says how), at any thread count.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from functools import cache

import numpy as np

from ..inference import Key
from ..ir import element_types
from ..ir.dims import is_static, num_elements
from ..ir.model import Layer, Model
from ..ops.common import output_buffer
from ..registry import Attrs, OpSpec, RunContext, TensorInfo
from .fusion import Fusion, FusionPlan, input_key
from .mask_assignment import fill_value

_FLOATS = ("f32", "f64")
ALONE_ELEMENTS = 1 << 21


@cache
def _kernel():
    """irgrid._kernels.elementwise, imported on first use (irgrid imports without its kernels from an
    un-built source folder: irgrid._unbuilt)."""
    from .._kernels import elementwise

    return elementwise


@dataclasses.dataclass
class _Chain:
    layers: list[Layer]  # in model order; the last one's output leaves the chain
    operations: list[int]  # each layer's operation
    reads: list[list[Key]]  # each layer's operands, in the operation's order
    inputs: list[Key]  # what the chain reads from outside, in order of first use (fill values included)
    float_type: str


def plan_elementwise_chains(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], returned: set[Key],
                            plan: FusionPlan) -> None:
    """Adds every chain of element-wise layers (module docstring) to `plan`: the last layer runs the
    chain, the others are absorbed into it."""
    readers = _readers(model, plan)
    fills = {layer_id: value for layer_id, fusion in plan.fused.items()
             if (value := fill_value(fusion.layer)) is not None}
    position = {layer_id: i for i, layer_id in enumerate(model.order)}
    joined: set[str] = set()
    for layer_id in reversed(model.order):
        layer = model.layers[layer_id]
        if layer_id in joined or not _joins(layer, infos, constants, plan, fills):
            continue
        chain = _grow(model, infos, constants, returned, plan, fills, readers, position, layer, joined)
        op = None if chain is None else _chain_op(chain, infos, fills)
        if op is None:
            continue
        joined.update(member.id for member in chain.layers)
        sink = chain.layers[-1]
        members = {member.id for member in chain.layers}
        plan.fused[sink.id] = Fusion(chain.layers[0], dataclasses.replace(sink, op=op),
                                     [key for key in chain.inputs if key[0] not in fills])
        for absorbed, into in plan.absorbed.items():  # what a member mask assignment had absorbed
            if into[0] in members:
                plan.absorbed[absorbed] = [sink.id]
        for member in chain.layers[:-1]:
            plan.fused.pop(member.id, None)
            plan.absorbed[member.id] = [sink.id]


def _readers(model: Model, plan: FusionPlan) -> dict[Key, set[str]]:
    """Each tensor's readers among the layers that still run after the other plans: a fused layer reads its
    fusion's inputs, an absorbed one nothing."""
    readers: dict[Key, set[str]] = defaultdict(set)
    for layer_id, layer in model.layers.items():
        if layer_id in plan.absorbed:
            continue
        fusion = plan.fused.get(layer_id)
        keys = fusion.inputs if fusion else [input_key(model, layer, i) for i in range(len(layer.inputs))]
        for key in keys:
            readers[key].add(layer_id)
    return readers


def _joins(layer: Layer, infos: dict[Key, TensorInfo], constants: set[Key], plan: FusionPlan,
           fills: dict[str, np.ndarray]) -> bool:
    """Whether the layer may be a step of a chain: a type the kernel runs (or a mask assignment's fill),
    static, in f32/f64 or booleans, not folded and not part of another plan."""
    key = (layer.id, 0)
    if layer.id in fills:
        pass
    elif (layer.op is None or layer.op.type not in _kernel().OPERATIONS or not layer.op.native
          or layer.id in plan.fused or layer.id in plan.absorbed):
        return False
    info = infos.get(key)
    return (len(layer.outputs) == 1 and key not in constants and info is not None and info.shape is not None
            and is_static(info.shape) and len(info.shape) <= _kernel().MAX_RANK
            and info.element_type in (*_FLOATS, "boolean"))


def _operation(model: Model, plan: FusionPlan, fills: dict[str, np.ndarray], layer: Layer) -> tuple[int, list[Key]]:
    """A member's operation and operands: a fill is Select(cond, its value, data), its value an input
    of the chain's own (keyed by the layer's id and -1)."""
    if layer.id in fills:
        data, cond = plan.fused[layer.id].inputs
        return _kernel().OPERATIONS["Select"], [cond, (layer.id, -1), data]
    return _kernel().OPERATIONS[layer.op.type], [input_key(model, layer, i) for i in range(len(layer.inputs))]


def _grow(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], returned: set[Key], plan: FusionPlan,
          fills: dict[str, np.ndarray], readers: dict[Key, set[str]], position: dict[str, int], sink: Layer,
          joined: set[str]) -> _Chain | None:
    """The chain `sink` ends: the layers that join it (module docstring), grown from sink towards its
    inputs until none joins; None for one small layer (module docstring), more than the kernel holds, or
    more than one float type."""
    shape = infos[(sink.id, 0)].shape
    members = {sink.id: (sink, _operation(model, plan, fills, sink))}
    grown = True
    while grown:
        grown = False
        for _, (_, operands) in list(members.values()):
            for key in operands:
                if key[1] < 0 or key[0] in members or key[0] in joined or key in returned:
                    continue
                producer = model.layers[key[0]]
                if (_joins(producer, infos, constants, plan, fills) and infos[key].shape == shape
                        and readers[key] <= members.keys()):
                    members[producer.id] = (producer, _operation(model, plan, fills, producer))
                    grown = True
    ordered = sorted(members.values(), key=lambda member: position[member[0].id])
    if len(ordered) > _kernel().MAX_STEPS or (len(ordered) == 1 and num_elements(shape) < ALONE_ELEMENTS):
        return None
    layers = [layer for layer, _ in ordered]
    operations = [operation for _, (operation, _) in ordered]
    reads = [operands for _, (_, operands) in ordered]
    inputs = list(dict.fromkeys(key for keys in reads for key in keys if key[0] not in members or key[1] < 0))
    outside = [infos[key] for key in inputs if key[1] >= 0]
    types = {info.element_type for info in outside} | {infos[(layer.id, 0)].element_type for layer in layers}
    types.discard("boolean")
    if (len(types) != 1 or not types <= set(_FLOATS) or len(inputs) > _kernel().MAX_REGISTERS
            or any(info.shape is None or len(info.shape) > len(shape) for info in outside)):
        return None
    return _Chain(layers, operations, reads, inputs, types.pop())


def _program(chain: _Chain) -> tuple[list[tuple[int, int, int, int, int]], int]:
    """The chain's steps (operation, out, a, b, c) over registers, the inputs first, a temporary reused
    once its last reader has run (a step never writes a register it reads), and the register count."""
    register = {key: i for i, key in enumerate(chain.inputs)}
    last_read = {key: i for i, keys in enumerate(chain.reads) for key in keys}
    free: list[int] = []
    count = len(chain.inputs)
    steps = []
    for i, (layer, operation, keys) in enumerate(zip(chain.layers, chain.operations, chain.reads)):
        operands = [register[key] for key in keys]
        if i == len(chain.layers) - 1:
            out = 0  # the last step writes the output
        elif free:
            out = free.pop()
        else:
            out, count = count, count + 1
        for key in dict.fromkeys(keys):
            if last_read[key] == i and key not in chain.inputs:
                free.append(register[key])
        register[(layer.id, 0)] = out
        a, b, c = (operands + [0, 0])[:3]
        steps.append((operation, out, a, b, c))
    return steps, count


def _chain_op(chain: _Chain, infos: dict[Key, TensorInfo], fills: dict[str, np.ndarray]) -> OpSpec | None:
    """The op that runs the chain in place of its last layer, on the chain's inputs from the graph (fill
    values are its own); None where the kernel refuses the program (more registers than it has, an
    operation on a type it does not take)."""
    steps, registers = _program(chain)
    sink = chain.layers[-1]
    out = infos[(sink.id, 0)]
    shape, dtype = tuple(out.shape), element_types.numpy_dtype(out.element_type)
    float_dtype = element_types.numpy_dtype(chain.float_type)
    booleans = [key[1] >= 0 and infos[key].element_type == "boolean" for key in chain.inputs]
    try:
        kernel = _kernel().Chain(float_dtype, booleans, steps, registers)
    except ValueError:
        return None
    # where each input comes from: the graph's inputs in turn (None), or a fill value
    own = [None if key[1] >= 0 else np.asarray(fills[key[0]], float_dtype) for key in chain.inputs]

    def run(attrs: Attrs, inputs: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        given = iter(inputs)
        result = output_buffer(ctx.out, 0, shape, dtype)
        kernel.run([next(given) if value is None else value for value in own], result, ctx.threads)
        return [result]

    count = len(own) - sum(value is not None for value in own)
    return OpSpec(type=sink.type, versions=("chain",), attrs=(), inputs=(count, count), infer=None, run=run,
                  native=False, kernel=True, entry="elementwise.Chain",
                  summary=f"{len(chain.layers)} element-wise layers in one pass")

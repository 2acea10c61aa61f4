"""`compile_model`: a topological plan with constants folded, AffineGrids and displacement warps fused
into the GridSamples they feed (fusion.py, displacement.py), output buffers preallocated, and layers whose input shapes are all static
prepared once (their op's `prepare` hook: validation moves from every call to compile time);
`CompiledModel.describe()` shows the plan.

A call's own cost matters for small models (a small GridSample's kernel takes well under a microsecond):
the call path checks inputs with a fast path for static shapes, runs each step's runner built at compile
time (`execution.layer_runner`) with one RunContext per step, and skips the aliasing check for outputs a
prepared step returns fresh (benchmarks/README.md, "Per-call cost").

A model with dynamic input dims (what `ov.convert_model` writes unless given `input=`) cannot fold
the glue that builds grids from the input's shape, so it runs that glue on every call. From the
second call with one set of input shapes (`SPECIALIZE_AFTER`) it runs a plan compiled for those
shapes instead, as `-shape` would give, keeping the last `SPECIALIZED_PLANS` of them: the same
results, several times faster a call. Once SPECIALIZED_PLANS plans have been dropped for others, the
model compiles no more (its plans stay, other shapes run the dynamic plan): more shapes in rotation than
plans kept would otherwise compile one on nearly every call (benchmarks/README.md, "Specialised plans")."""
from __future__ import annotations

import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..binding import read_model
from ..declared import declared_mismatches
from ..errors import InputError, IRGridError, ShapeError
from ..forks import fork_safe_lock
from ..input_arrays import input_array, inputs_by_name
from ..inference import Key, infer_model, oversized
from ..ir import element_types
from ..ir.dims import is_static
from ..ir.model import Layer, Model
from ..memory import allocate
from ..registry import PreparedFn, RunContext, TensorInfo
from ..shapes import ShapeArg, resolve_shapes
from ..threads import kernel_threads, validate_threads
from .describe import describe_plan, format_plan, step_kernel
from .execution import LAYER_FAILURES, layer_error, layer_runner, prepare_layer
from .constant_channels import plan_constant_channels
from .displacement import plan_displacement_warps
from .elementwise_chains import plan_elementwise_chains
from .fusion import FusionPlan, plan_fusions
from .mask_assignment import plan_mask_assignments


SPECIALIZE_AFTER = 2  # calls with one set of input shapes before a plan is compiled for them
SPECIALIZED_PLANS = 4  # plans for specific input shapes kept per model (least recently used dropped)
_SEEN_SHAPES = 64  # sets of input shapes counted towards SPECIALIZE_AFTER


@dataclass(frozen=True)
class LayerTime:
    """One layer's share of a profiled run."""

    name: str
    type: str
    kernel: str
    seconds: float


@dataclass
class _Step:
    layer: Layer
    inputs: list[Key]
    out: list[np.ndarray | None]  # preallocated outputs (kernel layers with static shapes)
    types: list[str]  # output element types
    release: list[Key] = field(default_factory=list)  # values no later step needs
    fused: Layer | None = None  # the layer fused into this step (an AffineGrid, a mask assignment's NonZero)
    prepared: PreparedFn | None = None  # the op's prepared run function (static input shapes), else None
    ctx: RunContext = field(init=False)  # reused by every call (calls are serialised); threads set per call
    keys: list[Key] = field(init=False)  # its outputs' keys
    run: PreparedFn = field(init=False)  # execution.layer_runner, built once
    # Where its inputs, outputs and releases lie in a call's list of values (CompiledModel._slots)
    input_slots: list[int] = field(init=False)
    output_slots: slice = field(init=False)
    release_slots: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.ctx = RunContext(1, self.out)
        self.keys = [(self.layer.id, index) for index in range(len(self.out))]
        self.run = layer_runner(self.layer, self.types, self.prepared)


class CompiledModel:
    """A model ready to run: call it (or `infer`) with `{input name: array}`.

    Calls from several Python threads are serialised (intermediate buffers are reused between
    calls, and each kernel already uses all the threads it is given).
    """

    def __init__(self, model: Model, shapes: ShapeArg | None = None, threads: int | None = None,
                 fuse: bool = True) -> None:
        self.model = model
        self.threads = threads
        self.fuse = fuse
        overrides, declared_hold = resolve_shapes(model, shapes)
        infos = infer_model(model, overrides, fold_limit=None)  # raises the first problem
        problems = (declared_mismatches(model, infos) if declared_hold else []) + oversized(model, infos)
        if problems:
            first = problems[0]
            more = f" ({len(problems) - 1} more problems: run `irgrid check`)" if len(problems) > 1 else ""
            raise ShapeError(first.message + more, layer=first.layer, port=first.port)
        self.inputs = [(p, infos[(p.id, 0)]) for p in model.parameters]
        self._input_names = [model.input_names(p) for p, _ in self.inputs]
        self.outputs = [(name, model.producer(r, 0)) for name, r in zip(model.output_names(), model.results)]
        self._constants = {key: info.value for key, info in infos.items()
                           if info.value is not None and model.layers[key[0]].type != "Parameter"}
        for value in self._constants.values():
            value.flags.writeable = False  # shared by every call: outputs that are constants get copied
        self._infos = infos
        returned = {(src.layer, src.output) for _, src in self.outputs}
        self._fusions = (plan_fusions(model, infos, set(self._constants), returned) if fuse
                         else FusionPlan({}, {}, {}))
        if fuse:
            plan_displacement_warps(model, infos, self._constants, returned, self._fusions)
            plan_mask_assignments(model, infos, returned, self._fusions)
            plan_constant_channels(model, infos, self._constants, returned, self._fusions)
            plan_elementwise_chains(model, infos, set(self._constants), returned, self._fusions)
        self._steps = self._plan(infos, returned)
        slots = self._slots()
        self._buffers = [b for step in self._steps for b in step.out if b is not None]
        # Outputs a prepared step returns are fresh arrays (returned values never get a reused buffer).
        self._fresh = {key for step in self._steps if step.prepared for key in step.keys} & returned
        self._output_keys = [(name, (src.layer, src.output)) for name, src in self.outputs]
        # Results fed by one tensor: each one after the first gets its own copy (the caller may write into it)
        self._repeats = {i for i, (_, key) in enumerate(self._output_keys)
                         if key in [k for _, k in self._output_keys[:i]]}
        # Per output: its name, slot, whether it may view a buffer, input or constant (then checked each
        # call) and whether it repeats an earlier output (then always copied).
        self._output_plan = [(name, slots[key], key not in self._fresh, index in self._repeats)
                             for index, (name, key) in enumerate(self._output_keys)]
        # The fast path of `_feed`: a dict of exact ndarrays under Parameter names, of static shapes
        # (only when no Parameter name is another input's tensor name, which the full check refuses).
        unambiguous = all(sum(p.name in names for names in self._input_names) == 1 for p, _ in self.inputs)
        static = all(is_static(info.shape) for _, info in self.inputs)
        self._fast_feed = ([(p.name, element_types.numpy_dtype(info.element_type), tuple(info.shape))
                            for p, info in self.inputs] if unambiguous and static else None)
        self._specialize = unambiguous and not static  # plans by input shapes (module docstring)
        self._seen: OrderedDict[tuple, int] = OrderedDict()  # input shapes -> calls, while unspecialised
        self._plans: OrderedDict[tuple, CompiledModel | None] = OrderedDict()  # None: shapes it refused
        self._dropped = 0  # plans dropped for others: from SPECIALIZED_PLANS on, no more are compiled
        self._lock = fork_safe_lock(self)  # calls are serialised (shared buffers)

    def _plan(self, infos: dict[Key, TensorInfo], returned: set[Key]) -> list[_Step]:
        steps = []
        for layer_id in self.model.order:
            layer = self.model.layers[layer_id]
            if (layer.type in ("Parameter", "Result") or (layer_id, 0) in self._constants
                    or layer_id in self._fusions.absorbed):
                continue
            fusion = self._fusions.fused.get(layer_id)
            if fusion is not None:
                layer, inputs = fusion.layer, fusion.inputs
            else:
                producers = (self.model.producer(layer, i) for i in range(len(layer.inputs)))
                inputs = [(s.layer, s.output) for s in producers]
            out = []
            for index in range(len(layer.outputs)):
                info = infos.get((layer_id, index))
                # A value the caller receives gets a fresh array each call (reusing a buffer would
                # mean copying it out); intermediates of static shape reuse one buffer.
                static = info is not None and is_static(info.shape)  # `oversized` refused what cannot fit
                reuse = static and layer.op.kernel and (layer_id, index) not in returned
                out.append(allocate(info.shape, element_types.numpy_dtype(info.element_type), layer)
                           if reuse else None)
            types = [infos[(layer_id, i)].element_type for i in range(len(layer.outputs))]
            input_infos = [infos[key] for key in inputs]
            prepared = (prepare_layer(layer, input_infos) if all(is_static(i.shape) for i in input_infos)
                        else None)
            steps.append(_Step(layer, inputs, out, types, fused=fusion and fusion.affine, prepared=prepared))
        last_use: dict[Key, int] = {}
        for i, step in enumerate(steps):
            for key in step.inputs:
                last_use[key] = i
        for step in steps:
            step.ctx.needed = [key in last_use or key in returned for key in step.keys]
        for key, i in last_use.items():
            # The last step releases nothing: the call returns right after it.
            if key not in returned and key not in self._constants and i < len(steps) - 1:
                steps[i].release.append(key)
        return steps

    def _slots(self) -> dict[Key, int]:
        """Numbers every value a call handles, the parameters first (in input order), then the
        constants, then each step's outputs: a call keeps its values in one list (`_run`), which
        costs less per access than a dict keyed by (layer id, port). Sets each step's slots; returns
        the numbering."""
        keys = [(p.id, 0) for p, _ in self.inputs] + list(self._constants)
        self._constant_values = list(self._constants.values())
        for step in self._steps:
            step.output_slots = slice(len(keys), len(keys) + len(step.keys))
            keys += step.keys
        slots = {key: slot for slot, key in enumerate(keys)}
        for step in self._steps:
            step.input_slots = [slots[key] for key in step.inputs]
            step.release_slots = [slots[key] for key in step.release]
        self._unset = [None] * (len(keys) - len(self._constants) - len(self.inputs))
        return slots

    def _feed(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> list[np.ndarray]:
        """The inputs as arrays, in the order of `self.inputs` (checked and converted)."""
        if self._fast_feed is not None and type(inputs) is dict and len(inputs) == len(self._fast_feed):
            values = []
            for name, dtype, shape in self._fast_feed:
                array = inputs.get(name)
                if type(array) is not np.ndarray or array.shape != shape or array.dtype != dtype:
                    break  # the checks below say what is wrong, or accept it (a tensor name, a list)
                values.append(array)
            else:
                return values
        inputs = inputs_by_name(inputs, [p.name for p, _ in self.inputs])
        remaining = dict(inputs)
        values = []
        for (parameter, info), names in zip(self.inputs, self._input_names):
            found = [n for n in names if n in remaining]
            if not found:
                raise InputError(f"input {names[0]!r} is missing (given: {', '.join(map(str, inputs)) or 'none'})")
            if len(found) > 1:
                raise InputError(f"input {names[0]!r} is given twice (as {' and '.join(map(repr, found))})")
            values.append(input_array(parameter.name, info, remaining.pop(found[0])))
        if remaining:
            raise InputError(f"the model has no input named {next(iter(remaining))!r} "
                             f"(inputs: {', '.join(self.model.input_names(p)[0] for p, _ in self.inputs)})")
        return values

    def infer(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> "OrderedDict[str, np.ndarray]":
        """Run the model; returns `{output name: array}` in model output order."""
        with self._lock:
            return self._run(inputs)

    def infer_profiled(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]
                       ) -> tuple["OrderedDict[str, np.ndarray]", list[LayerTime]]:
        """Run the model and time each step (benchmark_app's -pc): the outputs, and per step its layer
        name, type, kernel and seconds."""
        timings: list[LayerTime] = []
        with self._lock:
            return self._run(inputs, timings), timings

    def _specialized(self, fed: list[np.ndarray]) -> CompiledModel | None:
        """The plan compiled for these inputs' shapes, once they have come SPECIALIZE_AFTER times."""
        shapes = tuple(array.shape for array in fed)
        if shapes in self._plans:
            self._plans.move_to_end(shapes)
            return self._plans[shapes]
        if self._dropped >= SPECIALIZED_PLANS:
            return None
        calls = self._seen.pop(shapes, 0) + 1
        if calls < SPECIALIZE_AFTER:
            self._seen[shapes] = calls
            if len(self._seen) > _SEEN_SHAPES:
                self._seen.popitem(last=False)
            return None
        return self._plan_for(shapes)

    def _plan_for(self, shapes: tuple) -> CompiledModel | None:
        """The plan for these input shapes, compiled now and kept with the others (None: they were refused)."""
        if shapes in self._plans:
            return self._plans[shapes]
        try:
            plan = CompiledModel(self.model, {p.name: shape for (p, _), shape in zip(self.inputs, shapes)},
                                 self.threads, self.fuse)
        except IRGridError:  # left to this plan, which says what is wrong with the inputs, or runs them
            plan = None
        self._plans[shapes] = plan
        if len(self._plans) > SPECIALIZED_PLANS:
            self._plans.popitem(last=False)
            self._dropped += 1
        return plan

    def _run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray],
             timings: list[LayerTime] | None = None) -> "OrderedDict[str, np.ndarray]":
        fed = self._feed(inputs)
        if self._specialize:
            plan = self._specialized(fed)
            if plan is not None:
                return plan._run({p.name: array for (p, _), array in zip(self.inputs, fed)}, timings)
        values = fed + self._constant_values + self._unset  # by slot (`_slots`)
        threads = kernel_threads(self.threads)
        for step in self._steps:
            args = list(map(values.__getitem__, step.input_slots))
            step.ctx.threads = threads
            start = time.perf_counter() if timings is not None else 0.0
            try:
                results = step.run(args, step.ctx)
            except LAYER_FAILURES as exc:
                raise layer_error(step.layer, exc) from None
            if timings is not None:
                timings.append(LayerTime(step.layer.name, step.layer.type, step_kernel(step),
                                         time.perf_counter() - start))
            values[step.output_slots] = results
            for slot in step.release_slots:
                values[slot] = None
        # Preallocated buffers are reused by the next call, and the caller may refill an input: an
        # output viewing either is copied; so is a constant (read-only, shared by every call).
        outputs = OrderedDict()
        for name, slot, may_view, repeat in self._output_plan:
            value = values[slot]
            if repeat or may_view and (not value.flags.writeable or
                                       any(np.may_share_memory(value, b) for b in self._buffers + fed)):
                value = value.copy()
            outputs[name] = value
        return outputs

    __call__ = infer

    def describe(self, structured: bool = False,
                 inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | None = None) -> str | dict:
        """The plan: every layer in order, what became of it (run, fused into which layer, folded),
        each step's kernel and output buffer, and the plan's peak memory; text, or a dict when
        `structured`. Given `inputs` of a model with dynamic input dims, the plan specialised to their
        shapes, which is what runs them (module docstring), rather than the generic one with its `?`
        dims and no buffers."""
        if inputs is not None and self._specialize:
            with self._lock:
                plan = self._plan_for(tuple(array.shape for array in self._feed(inputs)))
            if plan is not None:
                return plan.describe(structured)
        plan = describe_plan(self.model, self._infos, set(self._constants), self._steps, self._fusions,
                             self.fuse)
        return plan if structured else format_plan(plan)


def compile_model(model: Model | str | os.PathLike, shapes: ShapeArg | None = None,
                  threads: int | None = None, fuse: bool = True) -> CompiledModel:
    """Read (if given a path), check and plan a model; `threads` overrides the global knob; `fuse`
    runs each AffineGrid inside the GridSamples it feeds (fusion.py)."""
    if not isinstance(model, Model):
        model = read_model(model)
    if threads is not None:
        threads = validate_threads(threads, "threads=")
    return CompiledModel(model, shapes, threads, fuse)

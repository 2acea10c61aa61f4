"""Shape and value inference over a whole model, shared by the checker and the executor (running a
layer is irgrid/runtime/execution.py's).

Layers are visited in topological order. Each op's `infer` sees its inputs' `TensorInfo`s (shape with
unknown dims, element type, value when constant). Values propagate where they are known at compile
time: Consts, `fold` hooks (ShapeOf of a static shape) and any layer whose inputs are all known, up to
a size limit, so that shape subgraphs (ShapeOf -> Gather -> Concat -> Reshape) resolve statically.
"""
from __future__ import annotations

from typing import Callable

from .errors import IRGridError, Problem, ShapeError
from .ir import element_types
from .ir.dims import is_static, num_elements
from .ir.model import Layer, Model
from .memory import check_fits
from .registry import RunContext, TensorInfo
from .runtime.execution import run_layer
from .threads import kernel_threads

Key = tuple[str, int]  # (layer id, output index)


def parameter_info(layer: Layer) -> TensorInfo:
    """The declared output of a Parameter."""
    port = layer.outputs[0]
    dims = layer.attrs["shape"]
    shape = port.shape if dims is None and port.dims else (None if dims is None else tuple(d.static for d in dims))
    return TensorInfo(shape, layer.attrs["element_type"])


def infer_model(model: Model, overrides: dict[str, TensorInfo] | None = None,
                fold_limit: int | None = 1 << 16,
                on_problem: Callable[[Problem], None] | None = None) -> dict[Key, TensorInfo]:
    """Infer every output; `overrides` replace Parameter infos by layer id.

    fold_limit caps the element count of values computed at inference time (None: no cap).
    Problems go to `on_problem`; without it the first one is raised as its error. Layers left
    unbound (their problem already reported by binding) and what depends on them are skipped.
    """
    infos: dict[Key, TensorInfo] = {}
    for layer_id in model.order:
        layer = model.layers[layer_id]
        if layer.op is None:
            continue
        if layer.type == "Parameter":
            infos[(layer_id, 0)] = (overrides or {}).get(layer_id) or parameter_info(layer)
            continue
        if layer.const is not None:
            infos[(layer_id, 0)] = TensorInfo(layer.const.shape, layer.attrs["element_type"], layer.const)
            continue
        inputs = [infos.get((src.layer, src.output)) for src in
                  (model.producer(layer, i) for i in range(len(layer.inputs)))]
        if any(info is None for info in inputs):
            continue  # an upstream layer already failed and was reported
        try:
            outputs = _infer_layer(layer, inputs, fold_limit)
        except IRGridError as exc:
            if on_problem is None:
                raise exc.located(layer) from None
            on_problem(Problem.from_error(exc, layer))
            continue
        for index, info in enumerate(outputs):
            infos[(layer_id, index)] = info
    return infos


def _infer_layer(layer: Layer, inputs: list[TensorInfo], fold_limit: int | None) -> list[TensorInfo]:
    if any(info.shape is None for info in inputs) and layer.type != "Result":
        outputs = _unknown_rank_outputs(layer, inputs)
    else:
        if layer.op.count_outputs is not None:
            _check_output_count(layer, layer.op.count_outputs(layer.attrs, inputs))
        outputs = layer.op.infer(layer.attrs, inputs)
    if layer.type != "Result":
        _check_output_count(layer, len(outputs))
    elif layer.outputs:  # its info is the model output's; an output port would feed a value no step computes
        raise ShapeError(f"a Result has no outputs, and the IR declares {len(layer.outputs)}", layer=layer)
    if layer.op.fold is not None:
        value = layer.op.fold(layer.attrs, inputs)
        if value is not None:
            outputs[0].value = value
    elif inputs and all(info.value is not None for info in inputs) and layer.type != "Result":
        sizes = [num_elements(o.shape) for o in outputs if o.shape is not None and None not in o.shape]
        if len(sizes) == len(outputs) and (fold_limit is None or max(sizes, default=0) <= fold_limit):
            for info in outputs:
                check_fits(info.shape, element_types.numpy_dtype(info.element_type), layer)
            # threads only for a kernel: a count above 1 marks this process for its forks (threads.py)
            ctx = RunContext(kernel_threads() if layer.op.kernel else 1)
            values = run_layer(layer, [info.value for info in inputs], ctx, [o.element_type for o in outputs])
            for info, value in zip(outputs, values):
                info.value = value
    return outputs


def _check_output_count(layer: Layer, count: int) -> None:
    if count != len(layer.outputs):
        raise ShapeError(f"produces {count} outputs but the IR declares {len(layer.outputs)}", layer=layer)


def oversized(model: Model, infos: dict[Key, TensorInfo]) -> list[Problem]:
    """Every value of static shape (a Parameter included) that could not fit in this machine's memory,
    located at the layer and port that produce it, so it is refused before anything is allocated."""
    problems = []
    for layer_id in model.order:
        layer = model.layers[layer_id]
        for index, port in enumerate(layer.outputs):
            info = infos.get((layer_id, index))
            if info is None or not is_static(info.shape):
                continue
            try:
                check_fits(info.shape, element_types.numpy_dtype(info.element_type))
            except ShapeError as exc:
                problems.append(Problem(layer, port.id, exc.reason, "memory"))
    return problems


def _unknown_rank_outputs(layer: Layer, inputs: list[TensorInfo]) -> list[TensorInfo]:
    """With an input of unknown rank, an op's outputs are taken as unknown too (checked at run time)."""
    element_type = inputs[0].element_type
    return [TensorInfo(None, port.element_type or element_type) for port in layer.outputs]

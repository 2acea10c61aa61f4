"""Where inferred shapes and types contradict the dims and precisions the IR declares on its ports.

Shared by `check_model` (which reports every mismatch) and `compile_model` (which refuses them).
"""
from __future__ import annotations

from .errors import Problem
from .inference import Key
from .ir.dims import Dim, format_shape
from .ir.model import Model, Port
from .registry import TensorInfo


def declared_mismatches(model: Model, infos: dict[Key, TensorInfo]) -> list[Problem]:
    """Where the inferred shape or type of a value contradicts a port that carries it."""
    problems = []
    for layer_id in model.order:
        layer = model.layers[layer_id]
        for index, port in enumerate(layer.outputs):
            info = infos.get((layer_id, index))
            message = info and _mismatch(port, info, "output")
            if not message and info and layer.type == "Parameter" and layer.attrs["shape"]:
                # OpenVINO writes a bounded input dim (1..10) in the shape attribute, -1 on the port
                message = _shape_mismatch(layer.attrs["shape"], info.shape, "output")
            if message:
                problems.append(Problem(layer, port.id, message))
        for index, port in enumerate(layer.inputs):
            src = model.producer(layer, index)
            info = infos.get((src.layer, src.output))
            message = info and _mismatch(port, info, "input")
            if message:
                problems.append(Problem(layer, port.id, message))
    return problems


def _mismatch(port: Port, info: TensorInfo, direction: str) -> str | None:
    if port.element_type and info.element_type != port.element_type:
        return f"{direction} is {info.element_type} but the IR declares {port.element_type}"
    if not port.dims:  # IR v11 writes both scalars and dynamic-rank ports without <dim>: undecidable
        return None
    return _shape_mismatch(port.dims, info.shape, direction)


def _shape_mismatch(declared: tuple[Dim, ...], shape: tuple[int | None, ...] | None, direction: str) -> str | None:
    if shape is None:
        return None
    inferred = format_shape(shape)
    if len(declared) != len(shape):
        return f"{direction} shape is {inferred} but the IR declares {format_shape(declared)}"
    bad = [i for i, (d, v) in enumerate(zip(declared, shape)) if not d.admits(v)]
    if bad:
        return (f"{direction} shape is {inferred} but the IR declares {format_shape(declared)} "
                f"(dim {', '.join(map(str, bad))})")
    return None

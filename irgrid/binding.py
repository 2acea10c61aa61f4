"""Binding: each IR layer to its registered operator, a pass of its own after reading.

The reader knows only the IR format; this pass looks every layer up in the registry, checks its input
count and parses its attributes by the operator's spec. It collects every problem (`irgrid check` on
a model with five unsupported layer types names all five) or raises the first.
"""
from __future__ import annotations

import os
from typing import Callable

from . import ops  # noqa: F401  (importing the operator package registers every operator)
from .errors import IRGridError, Problem
from .ir.model import Layer, Model
from .ir.reader import read_ir
from .registry import find


def bind_layer(layer: Layer) -> None:
    """Set `layer.op` and `layer.attrs`; raises the layer's first problem, located."""
    try:
        spec = find(layer.type, layer.version)
        spec.check_input_count(len(layer.inputs))
        layer.attrs = spec.parse_attrs(layer.raw_attrs)
    except IRGridError as exc:
        raise exc.located(layer) from None
    layer.op = spec


def bind_model(model: Model, on_problem: Callable[[Problem], None] | None = None) -> Model:
    """Bind every layer; problems go to `on_problem`, else the first is raised. Unbound layers keep
    `op = None` (inference skips them and what depends on them)."""
    for layer in model.layers.values():
        try:
            bind_layer(layer)
        except IRGridError as exc:
            if on_problem is None:
                raise
            on_problem(Problem.from_error(exc, layer))
    return model


def read_model(xml_path: str | os.PathLike, bin_path: str | os.PathLike | None = None) -> Model:
    """Read an IR (`bin_path` defaults to the .xml's stem with `.bin`) and bind its layers."""
    return bind_model(read_ir(xml_path, bin_path))

"""The graph the reader builds: layers with ports, edges, and Const payloads from the .bin."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .dims import Dim, Shape, to_shape


@dataclass
class Port:
    id: int
    element_type: str | None  # canonical element type from `precision`, None if not declared
    dims: tuple[Dim, ...] | None  # declared dims, None for an unknown rank
    names: tuple[str, ...] = ()

    @property
    def shape(self) -> Shape:
        return to_shape(self.dims)


@dataclass
class Layer:
    id: str
    name: str
    type: str
    version: str
    raw_attrs: dict[str, str]
    inputs: list[Port]
    outputs: list[Port]
    attrs: dict[str, Any] = field(default_factory=dict)  # parsed by the op's attribute spec
    op: Any = None  # the registered OpSpec
    const: np.ndarray | None = None  # payload of a Const layer


@dataclass(frozen=True)
class Source:
    """The producer of a value: a layer and the index of its output."""

    layer: str
    output: int


@dataclass
class Model:
    name: str
    ir_version: int
    layers: dict[str, Layer]  # in document order
    sources: dict[tuple[str, int], Source]  # (layer id, input index) -> producer
    order: list[str]  # layer ids in topological order
    path: str | None = None

    @property
    def parameters(self) -> list[Layer]:
        return [layer for layer in self.layers.values() if layer.type == "Parameter"]

    @property
    def results(self) -> list[Layer]:
        return [layer for layer in self.layers.values() if layer.type == "Result"]

    def producer(self, layer: Layer, index: int) -> Source:
        return self.sources[(layer.id, index)]

    def output_name(self, result: Layer) -> str:
        """The tensor name feeding a Result, else the Result's own name."""
        src = self.producer(result, 0)
        names = self.layers[src.layer].outputs[src.output].names
        return names[0] if names else result.name

    def output_names(self) -> list[str]:
        """One unique name per Result, in order: the tensor name, else (or when taken) the Result's name."""
        names: list[str] = []
        for result in self.results:
            name = self.output_name(result)
            names.append(result.name if name in names else name)
        return names

    def input_names(self, parameter: Layer) -> tuple[str, ...]:
        """Every name a Parameter answers to: its layer name, then its tensor names."""
        names = (parameter.name,) + parameter.outputs[0].names
        return tuple(dict.fromkeys(names))

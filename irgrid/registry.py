"""The operator registry: one `OpSpec` per (type, version), shared by reader, checker and executor.

Each module in `irgrid/ops/` declares its operator once: a declarative attribute spec, a shape
inference function over dims that may be unknown, and the function that runs it. The README's
support table and the OpenVINO extension read the same records.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .errors import LayerAttributeError, UnsupportedLayerError
from .ir import element_types
from .ir.dims import Shape, parse_shape_text
from .ir.model import Layer

_REQUIRED = object()


@dataclass
class TensorInfo:
    """What inference knows of a value: its shape, element type and, when constant, the value."""

    shape: Shape
    element_type: str
    value: np.ndarray | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


@dataclass
class RunContext:
    """What a run function gets beyond its inputs."""

    threads: int
    out: Sequence[np.ndarray | None] = ()  # preallocated outputs, where the executor has them


@dataclass(frozen=True)
class Attr:
    """One `<data>` attribute: its kind, default (omit for required), allowed values and aliases.

    kind: "bool", "int", "float", "str", "ints", "floats", "element_type" or "shape".
    aliases map other versions' spellings to the canonical value (e.g. bilinear -> linear).
    """

    name: str
    kind: str
    default: Any = _REQUIRED
    allowed: tuple | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    minimum: float | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def parse(self, text: str) -> Any:
        """Parse the attribute text; raises ValueError with a short reason."""
        value = _PARSERS[self.kind](text)
        if isinstance(value, str):
            value = self.aliases.get(value, value)
        if self.allowed is not None and value not in self.allowed:
            raise ValueError(f"must be one of {', '.join(map(str, self.allowed))}")
        if self.minimum is not None:
            items = value if isinstance(value, (list, tuple)) else [value]
            if any(v < self.minimum for v in items):
                raise ValueError(f"must be >= {self.minimum}")
        return value


def _parse_bool(text: str) -> bool:
    key = text.strip().lower()
    if key in ("true", "1"):
        return True
    if key in ("false", "0"):
        return False
    raise ValueError("is not a boolean (true/false/1/0)")


def _parse_int(text: str) -> int:
    text = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,19}", text):
        raise ValueError("is not an integer")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text.strip())
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    return value


def _parse_list(item: Callable[[str], Any]) -> Callable[[str], list]:
    def parse(text: str) -> list:
        text = text.strip()
        return [item(part) for part in text.split(",")] if text else []
    return parse


def _parse_element_type(text: str) -> str:
    name = element_types.normalise(text)
    if name is None:
        raise ValueError(f"is not an element type irgrid supports ({', '.join(element_types.SUPPORTED)})")
    return name


_PARSERS: dict[str, Callable[[str], Any]] = {
    "bool": _parse_bool,
    "int": _parse_int,
    "float": _parse_float,
    "str": lambda text: text.strip().lower(),
    "ints": _parse_list(_parse_int),
    "floats": _parse_list(_parse_float),
    "element_type": _parse_element_type,
    "shape": parse_shape_text,
}

InferFn = Callable[[Layer, list[TensorInfo]], list[TensorInfo]]
RunFn = Callable[[Layer, list[np.ndarray], RunContext], list[np.ndarray]]


@dataclass(frozen=True, eq=False)
class OpSpec:
    """Everything irgrid knows about one operator type in some versions."""

    type: str
    versions: tuple[str, ...]
    attrs: tuple[Attr, ...]
    inputs: tuple[int, int]  # (fewest, most) inputs accepted
    infer: InferFn
    run: RunFn
    summary: str
    kernel: bool = False  # True when a Cython kernel runs it (README table)
    fold: Callable[[Layer, list[TensorInfo]], np.ndarray | None] | None = None  # value from shapes

    def parse_attrs(self, layer: Layer) -> dict[str, Any]:
        parsed = {}
        for attr in self.attrs:
            text = layer.raw_attrs.get(attr.name)
            if text is None:
                if attr.required:
                    raise LayerAttributeError(f"required attribute '{attr.name}' is missing", layer=layer)
                parsed[attr.name] = attr.default
                continue
            try:
                parsed[attr.name] = attr.parse(text)
            except ValueError as exc:
                raise LayerAttributeError(f"attribute {attr.name}={text!r} {exc}", layer=layer) from None
        return parsed


_REGISTRY: dict[tuple[str, str], OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Add an operator under each of its versions; a key registered twice is a programming error."""
    for version in spec.versions:
        key = (spec.type, version)
        if key in _REGISTRY:
            raise RuntimeError(f"operator {key} is registered twice")
        _REGISTRY[key] = spec
    return spec


def lookup(layer: Layer) -> OpSpec:
    _load_ops()
    spec = _REGISTRY.get((layer.type, layer.version))
    if spec is not None:
        return spec
    known = sorted(v for (t, v) in _REGISTRY if t == layer.type)
    if known:
        raise UnsupportedLayerError(
            f"version {layer.version!r} is not supported; irgrid supports {layer.type} "
            f"versions {', '.join(known)}", layer=layer)
    raise UnsupportedLayerError(f"operator type {layer.type!r} is not supported by irgrid", layer=layer)


def all_specs() -> list[OpSpec]:
    """Each registered OpSpec once, in registration order."""
    _load_ops()
    return list(dict.fromkeys(_REGISTRY.values()))


def support_table() -> list[tuple[str, str, str, str]]:
    """(type, versions, engine, summary) per operator: the README's table and `irgrid ops`."""
    specs = sorted(all_specs(), key=lambda spec: not spec.kernel)  # grid operators first
    return [(spec.type, ", ".join(spec.versions), "Cython" if spec.kernel else "numpy", spec.summary)
            for spec in specs]


def _load_ops() -> None:
    from . import ops  # noqa: F401  (importing the package registers every operator)

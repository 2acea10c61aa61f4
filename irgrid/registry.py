"""The operator registry: one `OpSpec` per (type, version), the contract every operator fulfils.

An operator is IR-free: its shape inference and run function take the parsed attributes and the
inputs' `TensorInfo`s / arrays, never an IR layer, and raise `IRGridError`s with `input=` (the index
of the input at fault). The graph passes that call them (binding, inference, the executor) add the
layer's type, name, id and port. So the same functions serve irgrid's runtime, the OpenVINO extension
(`irgrid.openvino`, generated from these records) and the IR writer (`irgrid.builder`).

Operator modules (`irgrid/ops/`) register themselves when imported; this module imports none of them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .errors import LayerAttributeError, ParseError, UnsupportedLayerError
from .ir.attributes import Attr, parse_attrs
from .ir.dims import Shape

__all__ = ["Attr", "OpSpec", "RunContext", "TensorInfo", "all_specs", "find", "register", "support_table"]


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
    # Which outputs anything reads (empty: all of them); a run function may return None for the others
    # (MaxPool's indices cost OpenVINO's plugin 400x its values: irgrid/ops/glue/pooling.py).
    needed: Sequence[bool] = ()


Attrs = Mapping[str, Any]
InferFn = Callable[[Attrs, list[TensorInfo]], list[TensorInfo]]
RunFn = Callable[[Attrs, list[np.ndarray], RunContext], list[np.ndarray]]
FoldFn = Callable[[Attrs, list[TensorInfo]], "np.ndarray | None"]
PreparedFn = Callable[[list[np.ndarray], RunContext], list[np.ndarray]]
PrepareFn = Callable[[Attrs, list[TensorInfo]], "PreparedFn | None"]


@dataclass(frozen=True, eq=False)
class OpSpec:
    """Everything irgrid knows about one operator type in some versions.

    native: OpenVINO itself has this (type, version), so the extension never registers it again;
    irgrid-owned versions (`irgrid1`) are the ones `irgrid.openvino.extensions()` provides.
    infer/run are None only for the graph's sources (Parameter, Const), which the graph pass handles.
    prepare: the compiled model's hook for a layer whose inputs all have static shapes (after `infer`
    accepted them): it returns a callable `(arrays, ctx) -> outputs` that gives what `run` gives,
    bitwise, validated once instead of per call (`run` re-runs `infer`, converts, allocates: tens of
    microseconds a call), or None to use `run`. The callable gets arrays of exactly those shapes and
    types and returns fresh arrays, or ctx.out's buffers where given.
    """

    type: str
    versions: tuple[str, ...]
    attrs: tuple[Attr, ...]
    inputs: tuple[int, int]  # (fewest, most) inputs accepted
    infer: InferFn | None
    run: RunFn | None
    summary: str
    native: bool = True
    outputs: int = 1
    kernel: bool = False  # True when a Cython kernel runs it (README table)
    engine: str = ""  # the README table's engine when not "Cython"/"numpy" by `kernel`
    # what runs it as `CompiledModel.describe()` names it (a kernel module's entry point, from the
    # modules irgrid._kernels.OPERATOR_KERNELS lists) when not "Cython"/"numpy" by `kernel`
    entry: str = ""
    fold: FoldFn | None = None  # a value known from input shapes alone (ShapeOf)
    prepare: PrepareFn | None = None  # a run function for static input shapes (see above)
    # ops whose number of outputs varies: that number for these attributes and inputs, checked against
    # the IR's output ports before `infer` builds them (a Split into 10**8 parts is refused at once)
    count_outputs: Callable[[Attrs, list[TensorInfo]], int] | None = None

    def parse_attrs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Canonical attribute values from IR text or Python values; LayerAttributeError otherwise."""
        return parse_attrs(self.attrs, given, LayerAttributeError)

    def check_input_count(self, count: int) -> None:
        """ParseError unless the operator takes `count` inputs."""
        fewest, most = self.inputs
        if not fewest <= count <= most:
            want = str(fewest) if fewest == most else f"{fewest} to {most}"
            raise ParseError(f"has {count} inputs, {self.type} takes {want}")

    def write_attrs(self, attrs: Mapping[str, Any]) -> dict[str, str]:
        """Canonical attribute values as this version's IR text."""
        return {attr.name: attr.write(attrs[attr.name]) for attr in self.attrs}


_REGISTRY: dict[tuple[str, str], OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Add an operator under each of its versions; a key registered twice is a programming error."""
    for version in spec.versions:
        key = (spec.type, version)
        if key in _REGISTRY:
            raise RuntimeError(f"operator {key} is registered twice")
        _REGISTRY[key] = spec
    return spec


def find(type_: str, version: str) -> OpSpec:
    """The OpSpec of (type, version); UnsupportedLayerError naming the versions irgrid has."""
    spec = _REGISTRY.get((type_, version))
    if spec is not None:
        return spec
    known = sorted(v for (t, v) in _REGISTRY if t == type_)
    if known:
        raise UnsupportedLayerError(f"version {version!r} is not supported; irgrid supports {type_} "
                                    f"versions {', '.join(known)}")
    raise UnsupportedLayerError(f"operator type {type_!r} is not supported by irgrid")


def irgrid_owned(type_: str, version: str) -> OpSpec | None:
    """The OpSpec of (type, version) when irgrid owns it (the extension provides it), else None."""
    spec = _REGISTRY.get((type_, version))
    return spec if spec is not None and not spec.native else None


def all_specs() -> list[OpSpec]:
    """Each registered OpSpec once, in registration order."""
    return list(dict.fromkeys(_REGISTRY.values()))


def support_table() -> list[tuple[str, str, str, str]]:
    """(type, versions, engine, summary) per operator: the README's table and `irgrid ops`."""
    specs = sorted(all_specs(), key=lambda spec: not spec.kernel)  # grid operators first
    return [(spec.type, ", ".join(spec.versions), spec.engine or ("Cython" if spec.kernel else "numpy"),
             spec.summary) for spec in specs]

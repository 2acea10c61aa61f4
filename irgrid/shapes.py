"""Resolving user-given input shapes (`shapes={"feat": (1, 256, 50, 84)}`) against a model."""
from __future__ import annotations

import numbers
from typing import Mapping, Sequence

from .errors import InputError
from .ir.attributes import INT64_MAX
from .ir.model import Layer, Model
from .inference import parameter_info
from .registry import TensorInfo

ShapeArg = Mapping[str, Sequence[int | None]]


def find_parameter(model: Model, name: str) -> Layer:
    """The Parameter answering to `name` (its layer name or any of its tensor names)."""
    for parameter in model.parameters:
        if name in model.input_names(parameter):
            return parameter
    known = ", ".join(model.input_names(p)[0] for p in model.parameters)
    raise InputError(f"the model has no input named {name!r} (inputs: {known})")


def resolve_shapes(model: Model, shapes: ShapeArg | None) -> tuple[dict[str, TensorInfo], bool]:
    """Parameter overrides by layer id, and whether the IR's declared dims still hold.

    Shapes that fit the Parameters' declared dims specialise the model, so every declared dim stays
    a constraint to check (a bounded dim such as 1..10 too: a shape outside it is a problem); shapes
    that contradict static dims reshape it, and the declared dims downstream describe the old shapes,
    so they are not compared.
    """
    overrides: dict[str, TensorInfo] = {}
    declared_hold = True
    if shapes is not None and not isinstance(shapes, Mapping):
        raise InputError(f"shapes must map input names to dims, got {type(shapes).__name__}")
    for name, dims in (shapes or {}).items():
        parameter = find_parameter(model, name)
        shape = shape_arg(name, dims)
        declared = parameter_info(parameter).shape
        if declared is not None and (len(declared) != len(shape) or any(
                a is not None and b is not None and a != b for a, b in zip(declared, shape))):
            declared_hold = False
        overrides[parameter.id] = TensorInfo(shape, parameter.attrs["element_type"])
    return overrides, declared_hold


def shape_arg(name: str, dims: object) -> tuple[int | None, ...]:
    """A user-given shape as dims: each an integer (negative or None: dynamic); InputError otherwise
    (a string, a float such as 1.5 or NaN, a missing shape)."""
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence):
        raise InputError(f"the shape of input {name!r} must be a sequence of dims, got {dims!r}")
    if not all(d is None or isinstance(d, numbers.Integral) for d in dims):
        raise InputError(f"the shape of input {name!r} must hold integers (or None), got {list(dims)!r}")
    if any(d is not None and d >= INT64_MAX for d in dims):  # OpenVINO reads 2**63 - 1 as "dynamic"
        raise InputError(f"the shape of input {name!r} has a dim of 2**63 - 1 or more, got {list(dims)!r}")
    return tuple(None if d is None or d < 0 else int(d) for d in dims)


def name_single_input(shapes: Mapping[str, Sequence[int | None]], names: Sequence[str]) -> dict:
    """Shapes by input name, where the key "" (benchmark_app's unnamed `-shape [1,3,8,8]`) names the
    single input; InputError when the model has several."""
    shapes = dict(shapes)
    if "" in shapes:
        if len(names) != 1:
            raise InputError(f"-shape without a name needs a single-input model; this one has {len(names)}: "
                             "write name[d1,d2,...]")
        shapes[names[0]] = shapes.pop("")
    return shapes

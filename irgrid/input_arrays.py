"""Checking the arrays given to a compiled model against its inputs, the same on either device
(irgrid's runtime and OpenVINO's CPU plugin), so that a wrong dtype (a big-endian float included) or
shape is an InputError naming the input, never a misread buffer or a runtime's own exception."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InputError
from .ir import element_types
from .ir.dims import format_shape
from .memory import check_fits
from .registry import TensorInfo


def inputs_by_name(inputs: Any, names: Sequence[str]) -> Mapping[str, Any]:
    """A model's inputs as given: a mapping of names to arrays, or a sequence of arrays in input order
    (`names`, one per input); InputError for anything else."""
    if not isinstance(inputs, (Mapping, Sequence)) or isinstance(inputs, (str, bytes)):
        raise InputError("inputs must map input names to arrays, or be a sequence of arrays in input order; "
                         f"got {type(inputs).__name__}")
    if isinstance(inputs, Mapping):
        return inputs
    if len(inputs) != len(names):
        raise InputError(f"expected {len(names)} inputs, got {len(inputs)}")
    return dict(zip(names, inputs))


def input_array(name: str, info: TensorInfo, value: Any) -> np.ndarray:
    """`value` (an array or anything numpy reads as one) as the input `name` of type and shape `info`;
    InputError otherwise. bf16 inputs may come as numpy's bfloat16 (ml_dtypes) or as f32. A masked
    array with masked elements is refused: numpy would hand over the values under the mask."""
    if np.ma.isMaskedArray(value) and np.ma.getmaskarray(value).any():
        raise InputError(f"input {name!r} is a masked array with masked elements; fill them (numpy.ma.filled) "
                         "or pass its data")
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InputError(f"input {name!r} is not an array: {exc}") from None
    element_type = info.element_type
    if element_type in element_types.SUPPORTED:  # OpenVINO's others (u1, string, ...): left to it
        expected = element_types.numpy_dtype(element_type)
        if element_type == "bf16" and array.dtype.name == "bfloat16":
            array = array.astype(np.float32)
        if array.dtype != expected:
            raise InputError(f"input {name!r} must be {element_type} ({expected}), got {array.dtype}")
    shape = info.shape
    if shape is not None:
        if array.ndim != len(shape):
            raise InputError(f"input {name!r} must have rank {len(shape)} {format_shape(shape)}, "
                             f"got shape {list(array.shape)}")
        bad = [i for i, (d, a) in enumerate(zip(shape, array.shape)) if d is not None and d != a]
        if bad:
            raise InputError(f"input {name!r} must have shape {format_shape(shape)}, got "
                             f"{list(array.shape)} (dim {', '.join(map(str, bad))})")
    return array


def random_inputs(inputs: Sequence[tuple[Any, TensorInfo]], seed: int) -> dict[str, np.ndarray]:
    """Random arrays for a compiled model's `inputs` ((input with a `.name`, TensorInfo) pairs, as both
    devices list them), by name: floats uniform in [-1, 1), booleans, integers in [0, 10). What `irgrid
    infer` runs without -i, and what `auto` measures the runtimes on."""
    rng = np.random.default_rng(seed)
    arrays = {}
    for parameter, info in inputs:
        if info.shape is None or None in info.shape:
            raise InputError(f"input {parameter.name!r} has dynamic shape {info.shape}: give -shape or -i")
        dtype = element_types.numpy_dtype(info.element_type)
        check_fits(info.shape, dtype, what=f"random input {parameter.name!r}")
        if dtype.kind == "f":
            arrays[parameter.name] = rng.uniform(-1, 1, info.shape).astype(dtype)
        elif dtype.kind == "b":
            arrays[parameter.name] = rng.integers(0, 2, info.shape).astype(bool)
        else:
            arrays[parameter.name] = rng.integers(0, 10, info.shape).astype(dtype)
    return arrays

"""Checking the arrays given to a compiled model against its inputs, the same on either device
(irgrid's runtime and OpenVINO's CPU plugin), so that a wrong dtype (a big-endian float included) or
shape is an InputError naming the input, never a misread buffer or a runtime's own exception."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .errors import InputError
from .ir import element_types
from .ir.dims import format_shape
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

"""OpenVINO element types and how irgrid holds them in numpy.

numpy has no bfloat16, so bf16 tensors are widened to f32 when read (exactly: bf16 is the top half of
an f32) and carried as f32; `Port.element_type` still says "bf16".
"""
from __future__ import annotations

import numpy as np

# IR element_type name -> (numpy dtype irgrid computes with, bytes per element in the .bin)
_TYPES: dict[str, tuple[np.dtype, int]] = {
    "f16": (np.dtype(np.float16), 2),
    "bf16": (np.dtype(np.float32), 2),
    "f32": (np.dtype(np.float32), 4),
    "f64": (np.dtype(np.float64), 8),
    "i8": (np.dtype(np.int8), 1),
    "u8": (np.dtype(np.uint8), 1),
    "i16": (np.dtype(np.int16), 2),
    "u16": (np.dtype(np.uint16), 2),
    "i32": (np.dtype(np.int32), 4),
    "i64": (np.dtype(np.int64), 8),
    "u32": (np.dtype(np.uint32), 4),
    "u64": (np.dtype(np.uint64), 8),
    "boolean": (np.dtype(np.bool_), 1),
}

# Port `precision` spellings of IR v10 ("FP32", "I64", "BOOL") mapped to element type names.
_PRECISION_ALIASES = {
    "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64", "bool": "boolean",
    "i8": "i8", "u8": "u8", "i16": "i16", "u16": "u16", "i32": "i32", "i64": "i64",
    "u32": "u32", "u64": "u64",
}

# bf16 is carried as f32, so an f32 array maps back to "f32".
_BY_DTYPE = {dtype: name for name, (dtype, _) in _TYPES.items() if name != "bf16"}

SUPPORTED = tuple(_TYPES)


def normalise(name: str) -> str | None:
    """Canonical element type for an `element_type` or `precision` spelling, None if unknown."""
    key = name.strip().lower()
    if key in _TYPES:
        return key
    return _PRECISION_ALIASES.get(key)


def numpy_dtype(element_type: str) -> np.dtype:
    """The dtype irgrid computes with for a canonical element type."""
    return _TYPES[element_type][0]


def storage_size(element_type: str) -> int:
    """Bytes per element in the .bin (2 for bf16, which irgrid widens to f32)."""
    return _TYPES[element_type][1]


def from_dtype(dtype: np.dtype) -> str:
    """Element type name of a numpy dtype (bf16 arrays from ml_dtypes map to "bf16")."""
    dtype = np.dtype(dtype)
    name = _BY_DTYPE.get(dtype)
    if name is not None:
        return name
    if dtype.name == "bfloat16":
        return "bf16"
    raise ValueError(f"dtype {dtype} has no OpenVINO element type irgrid supports")


def decode(raw: np.ndarray, element_type: str) -> np.ndarray:
    """Turn raw little-endian storage into the array irgrid computes with (bf16 bits -> f32)."""
    if element_type == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return raw.view(numpy_dtype(element_type))


def round_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round values to the nearest bf16 (ties to even), returned as f32, irgrid's bf16 carrier."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    quiet_nan = bits | np.uint32(0x00400000)  # keep NaN a NaN (rounding could carry it into Inf)
    return np.where(np.isnan(x), quiet_nan & np.uint32(0xFFFF0000), rounded).astype(np.uint32).view(np.float32)

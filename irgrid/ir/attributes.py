"""Layer attributes (`<data .../>`): one declarative `Attr` per attribute reads, validates and writes it.

An operator lists its attributes once (in `irgrid/ops/`); the same list parses IR text, checks values
given from Python (`IRBuilder`, the OpenVINO extension's ops), and writes IR text back (also what
OpenVINO's `visit_attributes` is handed, so that its reading of an IR is checked by `parse`); every
attribute has a default, required ones too. `choices` maps each IR spelling of a version to the
canonical value the kernels see (GridSample-9 `bilinear` -> `linear`), so kernels see one vocabulary.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from . import element_types
from .dims import Dim, parse_shape_text


def _parse_bool(text: str) -> bool:
    key = text.strip().lower()
    if key in ("true", "1"):
        return True
    if key in ("false", "0"):
        return False
    raise ValueError("is not a boolean (true/false/1/0)")


INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _parse_int(text: str) -> int:
    """An int64, as OpenVINO stores integer attributes (a larger one would overflow the kernels' C longs)."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,19}", text):
        raise ValueError("is not an integer")
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError("is outside the int64 range")
    return value


def _parse_float(text: str) -> float:
    value = float(text.strip())
    if not math.isfinite(value):
        raise ValueError("is not a finite number")
    return value


def _parse_list(item: Callable[[str], Any]) -> Callable[[str], list]:
    def parse(text: str) -> list:
        text = text.strip().strip("[]")
        return [item(part) for part in text.split(",")] if text.strip() else []
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


def format_value(value: Any) -> str:
    """A Python value as IR attribute text (`true`, `1, 2`, `?,3`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Dim):
        return str(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value)
    return str(value)


def format_shape_attr(dims: tuple[Dim, ...] | None) -> str:
    """A Parameter's `shape` attribute: `1,3,?,8`, or `...` for an unknown rank."""
    return "..." if dims is None else ",".join(str(d) for d in dims)


@dataclass(frozen=True)
class Attr:
    """One attribute: kind, typed default, whether the IR must give it, spellings and bounds.

    kind: "bool", "int", "float", "str", "ints", "floats", "element_type" or "shape".
    choices: IR spelling -> canonical value; the first spelling of a value is the one written. A
    sequence of spellings stands for themselves.
    """

    name: str
    kind: str
    default: Any
    required: bool = False
    choices: Mapping[str, Any] | Sequence[str] | None = None
    minimum: float | None = None

    def __post_init__(self) -> None:
        if self.choices is not None and not isinstance(self.choices, Mapping):
            object.__setattr__(self, "choices", {spelling: spelling for spelling in self.choices})

    def parse(self, value: Any) -> Any:
        """IR text or a Python value -> the canonical value; raises ValueError with a short reason."""
        text = value if isinstance(value, str) else format_value(value)
        parsed = _PARSERS[self.kind](text)
        if self.choices is not None:
            if parsed not in self.choices:
                raise ValueError(f"must be one of {', '.join(map(str, self.choices))}")
            parsed = self.choices[parsed]
        if self.minimum is not None:
            items = parsed if isinstance(parsed, (list, tuple)) else [parsed]
            if any(v < self.minimum for v in items):
                raise ValueError(f"must be >= {self.minimum:g}")
        return parsed

    def write(self, value: Any) -> str:
        """The canonical value as this version's IR text."""
        if self.choices is not None:
            value = next(spelling for spelling, canonical in self.choices.items() if canonical == value)
        if self.kind == "shape":
            return format_shape_attr(value)
        return format_value(value)

    def visit_value(self, value: Any) -> str:
        """The value as OpenVINO's attribute visitor takes it: the IR text. The visitor parses a typed
        value by its Python type and leniently ("yes" reads as false, "1.5" as 1), where the text is
        handed to `parse` as irgrid's reader hands it."""
        return self.write(value)


def parse_attrs(attrs: tuple[Attr, ...], given: Mapping[str, Any], on_error: Callable[[str], Exception]) -> dict:
    """Every attribute's canonical value from `given` (IR text or Python values), defaults filled in.

    A missing required attribute or a bad value raises `on_error(reason)`; attributes the list does not
    name are ignored (as OpenVINO's reader ignores them).
    """
    parsed = {}
    for attr in attrs:
        value = given.get(attr.name)
        if value is None:
            if attr.required:
                raise on_error(f"required attribute '{attr.name}' is missing")
            parsed[attr.name] = attr.default
            continue
        try:
            parsed[attr.name] = attr.parse(value)
        except ValueError as exc:
            raise on_error(f"attribute {attr.name}={value!r} {exc}") from None
    return parsed


# Const is part of the IR format itself (its payload lives in the .bin), so the reader parses it.
CONST_ATTRS = (Attr("element_type", "element_type", "f32", required=True),
               Attr("shape", "shape", (), required=True),
               Attr("offset", "int", 0, required=True, minimum=0),
               Attr("size", "int", 0, required=True, minimum=0))

"""Dimensions as the IR declares them and as shape inference computes them.

Inference works on `Shape = tuple[int | None, ...]` (None: unknown), or None for an unknown rank.
The IR may declare a dim as a number, `-1` / `?` (unknown), or an interval `1..10` / `..10` / `2..`;
`Dim` keeps the interval so a checker can say whether an inferred dim fits it.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Iterable, Optional

Shape = Optional[tuple[Optional[int], ...]]

# No real tensor dim reaches this; larger numbers in an IR are malformed, not merely big.
MAX_DIM = 2**48


@dataclass(frozen=True)
class Dim:
    """A declared dim: lo == hi for a static one, hi None for an unbounded one."""

    lo: int = 0
    hi: int | None = None

    @property
    def static(self) -> int | None:
        return self.lo if self.hi == self.lo else None

    def admits(self, value: int | None) -> bool:
        if value is None:
            return True
        return self.lo <= value and (self.hi is None or value <= self.hi)

    def __str__(self) -> str:
        if self.static is not None:
            return str(self.lo)
        if self.lo == 0 and self.hi is None:
            return "?"
        return f"{self.lo if self.lo else ''}..{'' if self.hi is None else self.hi}"


def parse_dim(text: str) -> Dim:
    """Parse one IR dim; raises ValueError with a short reason."""
    text = text.strip()
    if text in ("-1", "?"):
        return Dim()
    if ".." in text:
        lo_text, hi_text = text.split("..", 1)
        lo = _parse_count(lo_text) if lo_text.strip() else 0
        hi = _parse_count(hi_text) if hi_text.strip() and hi_text.strip() != "-1" else None
        if hi is not None and hi < lo:
            raise ValueError(f"empty interval {text!r}")
        return Dim(lo, hi)
    value = _parse_count(text)
    return Dim(value, value)


def _parse_count(text: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a dimension")
    value = int(text)
    if value > MAX_DIM:
        raise ValueError(f"dimension {value} is absurdly large")
    return value


def parse_shape_text(text: str) -> tuple[Dim, ...] | None:
    """Parse "1,3,?,8" (a Parameter's `shape`); "..." or "?" alone mean an unknown rank."""
    text = text.strip().strip("[]")
    if text in ("...", "?"):
        return None
    if not text:
        return ()
    return tuple(parse_dim(part) for part in text.split(","))


def to_shape(dims: Iterable[Dim] | None) -> Shape:
    """Declared dims to the inference form (intervals become unknown)."""
    return None if dims is None else tuple(d.static for d in dims)


def format_shape(shape: Shape | Iterable[Dim]) -> str:
    if shape is None:
        return "[...]"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def num_elements(shape: Iterable[int]) -> int:
    return prod(int(d) for d in shape)


def is_static(shape: Shape) -> bool:
    return shape is not None and all(d is not None for d in shape)

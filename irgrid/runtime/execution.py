"""Running one layer: what runs it (`layer_runner`, `prepare_layer`), and its failures located at the
layer (`layer_error`). A compiled model (compiled.py) builds one runner per step; constant folding
(irgrid/inference.py) runs a layer once with `run_layer`."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..errors import IRGridError, ShapeError
from ..ir.element_types import round_to_bf16
from ..ir.model import Layer
from ..registry import PreparedFn, RunContext, TensorInfo

# What an op may raise on bad values or shapes (numpy's own errors in glue layers included).
# OverflowError: int() of an infinite float taken as an index (a float Transpose order fed at run time).
LAYER_FAILURES = (IRGridError, ValueError, IndexError, ZeroDivisionError, OverflowError, TypeError, MemoryError)


def layer_error(layer: Layer, exc: BaseException) -> IRGridError:
    """An op's exception as an IRGridError located at the layer: a numpy failure in a glue layer
    becomes a ShapeError naming it."""
    if isinstance(exc, IRGridError):
        return exc.located(layer)
    if isinstance(exc, MemoryError):  # a size known only at run time (from input values) that cannot fit
        return ShapeError(f"ran out of memory: {exc or 'allocation failed'}", layer=layer)
    return ShapeError(f"failed: {exc}", layer=layer)


def run_layer(layer: Layer, args: list[np.ndarray], ctx: RunContext, output_types: list[str]) -> list[np.ndarray]:
    """Run one layer's op once (constant folding; a compiled model keeps each step's `layer_runner`);
    errors are located at the layer."""
    try:
        return layer_runner(layer, output_types)(args, ctx)
    except LAYER_FAILURES as exc:
        raise layer_error(layer, exc) from None


def layer_runner(layer: Layer, output_types: list[str], prepared: PreparedFn | None = None) -> PreparedFn:
    """What runs one layer, `(arrays, ctx) -> outputs`: its `prepared` function when given, else its op's
    `run` with its attributes. bf16 outputs, carried as f32 and computed in f32, are rounded to bf16 as
    a bf16 tensor would store them (a no-op after layers that only move data). Errors are the op's own:
    callers locate them with `layer_error` (the compiled model builds this once per step)."""
    run = prepared if prepared is not None else partial(layer.op.run, layer.attrs)
    if "bf16" not in output_types:
        return run

    def rounded(args: list[np.ndarray], ctx: RunContext) -> list[np.ndarray]:
        return [round_to_bf16(value) if element_type == "bf16" and value.dtype == np.float32 else value
                for value, element_type in zip(run(args, ctx), output_types)]
    return rounded


def prepare_layer(layer: Layer, inputs: list[TensorInfo]) -> PreparedFn | None:
    """The layer's op's `prepare` for these static inputs (None when it has none or declines);
    errors located at the layer, as `run_layer` locates them."""
    if layer.op.prepare is None:
        return None
    try:
        return layer.op.prepare(layer.attrs, inputs)
    except LAYER_FAILURES as exc:
        raise layer_error(layer, exc) from None

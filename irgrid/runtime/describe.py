"""What a compiled plan does, for people (`CompiledModel.describe()`, `irgrid infer --plan`).

Every layer in plan order and what became of it: an input, a constant (read or folded at compile
time), a step (with its kernel and output buffer: preallocated once, or a fresh array per call; once a
GridSample step has run, the path policies its first call chose by timing, "tuned"), or fused into
another step. The peak memory is the largest sum, over the steps, of the bytes alive while
that step runs: constants and preallocated buffers (alive for the model's life), the inputs and each
step's fresh outputs from their creation to their last use (model outputs to the end). A layer that
returns a view of its input (Reshape) is counted as its own bytes, so the peak is an upper bound.
"""
from __future__ import annotations

from typing import Any

from ..inference import Key
from ..ir import element_types
from ..ir.dims import num_elements
from ..ir.model import Model
from ..registry import TensorInfo
from .fusion import FusionPlan


def step_kernel(step) -> str:
    """What runs a plan step: its op's `entry` (a kernel's entry point; a fused op's too), or numpy."""
    op = step.layer.op
    return op.entry or ("Cython" if op.kernel else "numpy")


def _nbytes(info: TensorInfo | None) -> int | None:
    if info is None or info.shape is None or None in info.shape:
        return None
    return num_elements(info.shape) * element_types.numpy_dtype(info.element_type).itemsize


def _output(info: TensorInfo | None, buffer: str) -> dict:
    shape = None if info is None or info.shape is None else list(info.shape)
    dtype = None if info is None else str(element_types.numpy_dtype(info.element_type))
    return {"shape": shape, "element_type": info and info.element_type, "dtype": dtype, "buffer": buffer,
            "bytes": _nbytes(info)}


def describe_plan(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], steps: list, fusions: FusionPlan,
                  fuse: bool) -> dict[str, Any]:
    """The plan as a dict: `layers` in order, `peak_bytes`, `peak_step`, `peak_exact`."""
    by_layer = {step.layer.id: (number, step) for number, step in enumerate(steps, start=1)}
    layers = []
    for layer_id in model.order:
        layer = model.layers[layer_id]
        row: dict[str, Any] = {"id": layer.id, "name": layer.name, "type": layer.type, "version": layer.version}
        keys = [(layer_id, i) for i in range(len(layer.outputs))]
        if layer.type == "Parameter":
            row.update(status="input", outputs=[_output(infos.get(k), "caller") for k in keys])
        elif layer.type == "Result":
            row.update(status="output")
        elif layer_id in fusions.absorbed:
            into = fusions.absorbed[layer_id]
            row.update(status="fused", into=[model.layers[i].name for i in into],
                       kernel=step_kernel(by_layer[into[0]][1]))
        elif keys and keys[0] in constants:
            row.update(status="constant" if layer.type in ("Const", "Constant") else "folded",
                       outputs=[_output(infos.get(k), "constant") for k in keys])
        else:
            number, step = by_layer[layer_id]
            row.update(status="step", step=number, kernel=step_kernel(step),
                       outputs=[_output(infos.get(k), "preallocated" if buffer is not None else "fresh")
                                for k, buffer in zip(keys, step.out)])
            tuned = getattr(getattr(step.prepared, "__self__", None), "tuned_choice", None)
            if tuned is not None:  # a GridSample step that chose its kernel's path by timing (SamplePlan.tune)
                row["tuned"] = tuned or "the plan's own"
            if step.fused:
                row["fused"] = [step.fused.name]
                row["fused_type"] = step.fused.type
            if layer_id in fusions.declined:
                row["not_fused"] = fusions.declined[layer_id]
        layers.append(row)
    peak, peak_step, exact = _peak(model, infos, constants, steps)
    return {"model": model.name, "fuse": fuse, "steps": len(steps), "layers": layers, "peak_bytes": peak,
            "peak_step": peak_step, "peak_exact": exact}


def _peak(model: Model, infos: dict[Key, TensorInfo], constants: set[Key], steps: list) -> tuple[int, str | None, bool]:
    """(peak bytes, name of the step where it is reached, whether every size was known)."""
    exact = True

    def size(key: Key) -> int:
        nonlocal exact
        n = _nbytes(infos.get(key))
        exact = exact and n is not None
        return n or 0

    resident = sum(size(k) for k in constants)
    resident += sum(size((step.layer.id, i)) for step in steps for i, b in enumerate(step.out) if b is not None)
    live = {(p.id, 0): size((p.id, 0)) for p in model.parameters}
    peak, where = resident + sum(live.values()), None
    for step in steps:
        for i, buffer in enumerate(step.out):
            if buffer is None:
                live[(step.layer.id, i)] = size((step.layer.id, i))
        total = resident + sum(live.values())
        if total > peak or where is None:
            peak, where = max(peak, total), step.layer.name
        for key in step.release:
            live.pop(key, None)
    return peak, where, exact


def format_plan(plan: dict[str, Any]) -> str:
    """The plan as text: one line per layer, then the peak memory."""
    steps = f'{plan["steps"]} step{"" if plan["steps"] == 1 else "s"}'
    lines = [f'Plan of "{plan["model"]}": {steps}, fusion {"on" if plan["fuse"] else "off"}']
    for row in plan["layers"]:
        head = f'{row["step"]:>4}' if row["status"] == "step" else "    "
        what = f'{row["name"]} ({row["type"]} {row["version"]})'
        if row["status"] == "step":
            fused = f' with {row["fused_type"]} "{row["fused"][0]}" fused in' if "fused" in row else ""
            tuned = f' (paths timed: {row["tuned"]})' if "tuned" in row else ""
            detail = f'{row["kernel"]}{fused}{tuned}'
        elif row["status"] == "fused":
            detail = "fused into " + ", ".join(f'"{name}"' for name in row["into"])
        else:
            detail = row["status"]
        outputs = "; ".join(_format_output(o) for o in row.get("outputs", ()))
        lines.append(f"{head}  {what:<44} {detail:<48} {outputs}".rstrip())
        if "not_fused" in row:
            lines.append(f"      (not fused: {row['not_fused']})")
    bound = "" if plan["peak_exact"] else "at least "
    lines.append(f'Peak memory: {bound}{plan["peak_bytes"]} bytes ({plan["peak_bytes"] / 2**20:.2f} MiB) of live '
                 f'values, at step "{plan["peak_step"]}" (constants, preallocated buffers, inputs and the values '
                 "still needed; the kernels' scratch comes on top: GridSample's channel scratch and binning "
                 "buffers, DeformConv's work buffer of up to 64 MiB per calling thread, kept between calls)")
    return "\n".join(lines)


def _format_output(output: dict) -> str:
    dims = output["shape"]
    shape = "?" if dims is None else "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"
    return f'{shape} {output["element_type"]} {output["buffer"]}'

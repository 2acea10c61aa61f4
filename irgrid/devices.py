"""Which runtime runs a model: irgrid's own, or OpenVINO's CPU plugin with irgrid's extension.

`auto` (the CLI's default, as benchmark_app's `-d`) runs OpenVINO where irgrid lacks a layer
(ConvolutionBackpropData, MVN, ...), whose layers it then runs while irgrid's extension runs the grid
operators. A model computing in f64 stays on irgrid's runtime (OpenVINO's CPU plugin computes f64 in
f32), as does one in a process forked after OpenVINO ran (irgrid.forks). ONNX files always go through
OpenVINO's frontend with irgrid's conversion rules. Where both runtimes run a model, `auto` measures
both (on the inputs the CLI will run, else random inputs of the model's shapes) and keeps the faster
(irgrid/timing.py's `auto_mode` and `race`, `_measured`): rules by layer type picked the slower runtime for five of seven
glue-heavy blocks of real architectures (issue 41), and which runtime wins changes with the CPU (an
AMD Zen host and an Intel Xeon have swapped the winner of a GridSample by 2x). Without inputs or
known input shapes, or with IRGRID_AUTO=rules, it decides by these rules, measured where they were
written:

Why convolutional networks go to OpenVINO (2 threads, Zen 4, medians; irgrid's runtime against
OpenVINO with irgrid's extension, on the same IR): OpenVINO runs such layers as one pipeline (a
convolution's bias and activation fused into it, its blocked layouts kept from layer to layer, skip
Concats written in place), where irgrid's runtime runs each Convolution and pooling on its own one-op
OpenVINO model (reordering its data in and out) and the layers between them in numpy. Run 96
(benchmarks/README.md, "Whole networks"): the PyTorch tutorial's spatial transformer on 8 images of
28x28 took 1.05 ms against 0.16, a VoxelMorph-style registration U-Net at 64x64x64 152 against 102.
Models that build a grid and sample it (the flow_warp, volume_warp and spatial_transformer samples)
ran about as fast on irgrid's runtime (0.7-1.2x), which gives them its checks, f64 and thread-count
independent bits.

Models with layers of data-dependent output shape (`DATA_DEPENDENT_LAYERS`: NonZero) also go to
OpenVINO by these rules: the millions of index tuples such layers produce flow through numpy far
slower than through OpenVINO's CPU plugin. Not counted: a NonZero that only serves a boolean-mask
assignment (`mask[mask < 0.9999] = 0` as torch's dynamo exporter writes it), which irgrid's runtime
runs as a masked fill (runtime/mask_assignment.py): PWC-Net's warp from that export went from 1124
to 185 ms there, against OpenVINO's 296 (benchmarks/README.md, "auto on the glue-heavy blocks").
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np

from .binding import bind_layer, bind_model
from .errors import InputError, IRGridError, OpenVINOError, Problem, UnsupportedLayerError, printable
from .forks import marks
from .inference import infer_model
from .input_arrays import random_inputs
from .ir.reader import read_ir
from .runtime.compiled import CompiledModel
from .runtime.mask_assignment import mask_assignments
from .shapes import name_single_input
from .timing import auto_mode, race

DEVICES = ("auto", "irgrid", "openvino")
# The layers of convolutional networks: a model holding any runs faster on OpenVINO (module docstring).
CNN_LAYERS = ("Convolution", "GroupConvolution", "MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool")
# Layers whose output shape depends on the values: a model holding any runs faster on OpenVINO (as above).
DATA_DEPENDENT_LAYERS = ("NonZero",)
# auto's measurement: random inputs of this seed, at most this many alternating rounds, stopping once a
# round ends past this many seconds; OpenVINO is picked when irgrid's runtime takes more than
# PREFER_IRGRID times its time (irgrid's runtime gives f64, its checks and thread-count independent bits).
MEASURE_SEED = 0
MEASURE_ROUNDS = 5
MEASURE_SECONDS = 1.0
PREFER_IRGRID = 1.05


def open_model(path: str | os.PathLike, device: str = "auto",
               shapes: Mapping[str, Sequence[int | None]] | None = None,
               threads: int | None = None, profile: bool = False,
               inputs_for: Callable[[object], Mapping[str, np.ndarray]] | None = None) -> tuple[object, str]:
    """A callable compiled model on the chosen device, and a line saying which and why.

    `shapes` may name the single input "" (see `name_single_input`); `profile` makes OpenVINO keep the
    per-layer counters `infer_profiled` returns (irgrid's runtime times its steps whenever asked);
    `inputs_for(compiled)`: the inputs `auto` measures the runtimes on (the ones the caller will run),
    else random inputs of the model's shapes."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}")
    if Path(path).suffix.lower() in (".npy", ".npz"):  # not left to OpenVINO, whose other frontends log
        raise InputError(f"{path} holds arrays, not a model: give the model (.xml, or .onnx)")
    if Path(path).suffix.lower() != ".xml":
        if device == "irgrid":
            raise UnsupportedLayerError(f"{path}: irgrid's runtime reads OpenVINO IR (.xml); "
                                        "convert it with `irgrid convert` or use -d openvino")
        return _openvino(path, shapes, threads, profile), "openvino (CPU plugin, irgrid extension): not an IR, " \
                                                 "converted by OpenVINO's frontend with irgrid's rules"
    if device == "openvino":
        try:
            return _openvino(path, shapes, threads, profile), "openvino (CPU plugin, irgrid extension): as asked"
        except OpenVINOError as exc:
            raise _located(exc, _lacking_layers(path)) from None
    model = read_ir(path)
    problems: list[Problem] = []
    bind_model(model, on_problem=problems.append)
    blocking = [p for p in problems if device == "irgrid" or p.kind != "unsupportedlayer"]
    if blocking:
        bind_layer(blocking[0].layer)  # raises that problem as its own error type
    if not problems:
        shapes = name_single_input(shapes or {}, [p.name for p in model.parameters]) or None
        to_openvino, why = _by_rules(model) if device == "auto" else (False, "supports every layer")
        measure = device == "auto" and auto_mode() == "measure"
        if to_openvino and not measure:
            return _openvino(path, shapes, threads, profile), f"openvino (CPU plugin, irgrid extension): {why}"
        try:
            compiled = CompiledModel(model, shapes, threads)
        except UnsupportedLayerError as exc:  # a variant of a supported layer (Interpolate antialias=true)
            if device == "irgrid":
                raise
            try:
                ov_compiled = _openvino(path, shapes, threads, profile)
            except OpenVINOError as refused:
                raise _located(refused, [Problem.from_error(exc, exc.layer)] if exc.layer else []) from None
            return ov_compiled, \
                f"openvino (CPU plugin, irgrid extension): irgrid lacks a variant of " \
                f"{exc.layer.type}-{exc.layer.version} ({exc.reason})"
        if measure:
            return _measured(path, model, compiled, (shapes, threads, profile), inputs_for, to_openvino, why)
        return compiled, f"irgrid ({why})"
    lacking = sorted({f"{p.layer.type}-{p.layer.version}" for p in problems})
    try:
        compiled = _openvino(path, shapes, threads, profile)
    except OpenVINOError as exc:
        raise _located(exc, problems) from None
    return compiled, f"openvino (CPU plugin, irgrid extension): irgrid lacks {', '.join(lacking)}"


def _by_rules(model) -> tuple[bool, str]:
    """Whether `auto` sends a model both runtimes run to OpenVINO by its layers alone (the module
    docstring's rules), and why."""
    network = sorted({layer.type for layer in model.layers.values() if layer.type in CNN_LAYERS})
    dependent = [layer for layer in model.layers.values() if layer.type in DATA_DEPENDENT_LAYERS]
    if dependent and not network:  # the NonZeros of mask assignments irgrid runs as masked fills do not count
        filled = {non_zero.id for non_zero, _, _ in mask_assignments(model, _infos(model)).values()}
        dependent = sorted({layer.type for layer in dependent if layer.id not in filled})
    if not (network or dependent):
        return False, "supports every layer"
    kind, layers = ("a convolutional network", network) if network else ("data-dependent shapes", dependent)
    kept = _kept_from_openvino(model)
    if kept is None:
        return True, f"{kind} ({', '.join(layers)}), which OpenVINO runs faster"
    return False, f"supports every layer; {kind} kept from OpenVINO: {kept}"


def _infos(model) -> dict:
    """The model's inferred tensors, as compiling it would infer them (declared shapes; no problem raised)."""
    return infer_model(model, on_problem=lambda problem: None)


def _measured(path, model, compiled: CompiledModel, options: tuple, inputs_for, to_openvino: bool,
              why: str) -> tuple[object, str]:
    """`auto` by measurement (`auto_mode`): irgrid's runtime where OpenVINO would not compute the model
    as irgrid does (`_kept_from_openvino`), else the faster of the two on `inputs_for`'s inputs, or
    random ones of the model's shapes; by the rules (`to_openvino`, `why`) where there are neither.
    `options`: open_model's (shapes, threads, profile)."""
    kept = _kept_from_openvino(model)
    if kept is not None:
        return compiled, f"irgrid (supports every layer; kept from OpenVINO: {kept})"
    if inputs_for is None and not all(info.shape is not None and None not in info.shape
                                      for _, info in compiled.inputs):
        if to_openvino:
            return _openvino(path, *options), \
                f"openvino (CPU plugin, irgrid extension): {why}; not measured: dynamic input shapes"
        return compiled, f"irgrid ({why}; not measured: dynamic input shapes)"
    try:
        ov_compiled = _openvino(path, *options)
    except OpenVINOError as exc:
        return compiled, f"irgrid (supports every layer; OpenVINO refused the model: {exc.reason})"
    try:
        inputs = inputs_for(compiled) if inputs_for else random_inputs(compiled.inputs, MEASURE_SEED)
        ours, theirs = race([compiled, ov_compiled], inputs, MEASURE_ROUNDS, MEASURE_SECONDS)
    except IRGridError as exc:  # inputs a model refuses (random indices out of range, dynamic shapes, ...)
        if to_openvino:
            return ov_compiled, f"openvino (CPU plugin, irgrid extension): {why}; not measured: {exc}"
        return compiled, f"irgrid ({why}; not measured: {exc})"
    if ours > theirs * PREFER_IRGRID:
        return ov_compiled, f"openvino (CPU plugin, irgrid extension): faster here, measured " \
                            f"{theirs * 1e3:.3g} ms a call against irgrid's {ours * 1e3:.3g}"
    return compiled, f"irgrid (supports every layer; measured {ours * 1e3:.3g} ms a call against " \
                     f"OpenVINO's {theirs * 1e3:.3g})"


def _lacking_layers(path) -> list[Problem]:
    """The layers of an IR irgrid has no operator for (none when irgrid cannot read it)."""
    if Path(path).suffix.lower() != ".xml":
        return []
    problems: list[Problem] = []
    try:
        bind_model(read_ir(path), on_problem=problems.append)
    except IRGridError:
        return []
    return [p for p in problems if p.kind == "unsupportedlayer"]


def _located(exc: OpenVINOError, lacking: Sequence[Problem]) -> OpenVINOError:
    """OpenVINO's refusal of a model holding layers irgrid lacks, located at one of them: neither runtime
    runs it, and OpenVINO's reader names no layer ("Opset opset9 doesn't contain the operation with type:
    GridSampler"). The layer is the first whose type OpenVINO's message names, else the first lacking
    one; the line says why irgrid cannot run it (type, version, name and id, as `irgrid check`), then
    what OpenVINO said."""
    if exc.layer is not None or not lacking:
        return exc
    named = [p for p in lacking if re.search(rf"\b{re.escape(p.layer.type)}\b", exc.reason)]
    problem = (named or lacking)[0]
    layer = problem.layer
    return OpenVINOError(f"neither irgrid nor OpenVINO runs {printable(layer.type)}-"
                         f"{printable(layer.version) or '(no version)'}: {problem.message}; OpenVINO says: {exc.reason}",
                         layer=layer, port=problem.port)


def _kept_from_openvino(model) -> str | None:
    """Why OpenVINO would not compute this model as irgrid does, or None: f64 values, which its CPU
    plugin computes in f32 (the element types irgrid infers, not the IR's declared precisions), or a
    process forked after OpenVINO ran (its device refuses there)."""
    if marks.child_of_openvino:
        return "a process forked after OpenVINO ran"
    infos = infer_model(model, fold_limit=0, on_problem=lambda problem: None)  # types only, nothing folded
    if any(info.element_type == "f64" for info in infos.values()):
        return "f64 values, which OpenVINO computes in f32"
    return None


def _openvino(path, shapes, threads, profile):
    from .openvino.runner import OpenVINOModel  # imports openvino only when it is used

    return OpenVINOModel(path, shapes, threads, profile)

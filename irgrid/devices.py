"""Which runtime runs a model: irgrid's own, or OpenVINO's CPU plugin with irgrid's extension.

`auto` (the CLI's default, as benchmark_app's `-d`) runs irgrid's runtime when irgrid supports every
layer and the model is no convolutional network (`CNN_LAYERS`), and otherwise OpenVINO, which runs
the layers irgrid lacks (ConvolutionBackpropData, MVN, ...) or the network's layers while irgrid's extension
runs the grid operators. A model computing in f64 stays on irgrid's runtime (OpenVINO's CPU plugin
computes f64 in f32), as does one in a process forked after OpenVINO ran (irgrid.forks). ONNX files
always go through OpenVINO's frontend with irgrid's conversion rules.

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

Models with layers of data-dependent output shape (`DATA_DEPENDENT_LAYERS`: NonZero, what torch's dynamo
exporter makes of boolean-mask assignment `mask[mask < 0.9999] = 0`) also go to OpenVINO: the millions
of index tuples they produce flow through NonZero, a Transpose and ScatterNDUpdate, which numpy moves
far slower than OpenVINO's CPU plugin. PWC-Net's backward warp with its occlusion mask, 4x3x436x1024,
dynamo export, 2 threads on a shared machine (runs interleaved): irgrid's runtime 2204 ms against
OpenVINO's 893 (benchmarks/README.md, "auto on the glue-heavy blocks"). The other exports of that
block (slice and mask assignments as ScatterNDUpdate with constant indices, or Select) and the spatial
transformers stay on irgrid's runtime, as fast or faster there.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping, Sequence

from .binding import bind_layer, bind_model
from .errors import InputError, IRGridError, OpenVINOError, Problem, UnsupportedLayerError, printable
from .forks import marks
from .inference import infer_model
from .ir.reader import read_ir
from .runtime.compiled import CompiledModel
from .shapes import name_single_input

DEVICES = ("auto", "irgrid", "openvino")
# The layers of convolutional networks: a model holding any runs faster on OpenVINO (module docstring).
CNN_LAYERS = ("Convolution", "GroupConvolution", "MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool")
# Layers whose output shape depends on the values: a model holding any runs faster on OpenVINO (as above).
DATA_DEPENDENT_LAYERS = ("NonZero",)


def open_model(path: str | os.PathLike, device: str = "auto",
               shapes: Mapping[str, Sequence[int | None]] | None = None,
               threads: int | None = None, profile: bool = False) -> tuple[object, str]:
    """A callable compiled model on the chosen device, and a line saying which and why.

    `shapes` may name the single input "" (see `name_single_input`); `profile` makes OpenVINO keep the
    per-layer counters `infer_profiled` returns (irgrid's runtime times its steps whenever asked)."""
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
    network = sorted({layer.type for layer in model.layers.values() if layer.type in CNN_LAYERS})
    dependent = sorted({layer.type for layer in model.layers.values() if layer.type in DATA_DEPENDENT_LAYERS})
    why = "supports every layer"
    if not problems and device == "auto" and (network or dependent):
        kind, layers = ("a convolutional network", network) if network else ("data-dependent shapes", dependent)
        kept = _kept_from_openvino(model)
        if kept is None:
            return _openvino(path, shapes, threads, profile), \
                f"openvino (CPU plugin, irgrid extension): {kind} ({', '.join(layers)}), which OpenVINO runs faster"
        why += f"; {kind} kept from OpenVINO: {kept}"
    if not problems:
        shapes = name_single_input(shapes or {}, [p.name for p in model.parameters]) or None
        try:
            return CompiledModel(model, shapes, threads), f"irgrid ({why})"
        except UnsupportedLayerError as exc:  # a variant of a supported layer (Interpolate antialias=true)
            if device == "irgrid":
                raise
            try:
                compiled = _openvino(path, shapes, threads, profile)
            except OpenVINOError as refused:
                raise _located(refused, [Problem.from_error(exc, exc.layer)] if exc.layer else []) from None
            return compiled, \
                f"openvino (CPU plugin, irgrid extension): irgrid lacks a variant of " \
                f"{exc.layer.type}-{exc.layer.version} ({exc.reason})"
    lacking = sorted({f"{p.layer.type}-{p.layer.version}" for p in problems})
    try:
        compiled = _openvino(path, shapes, threads, profile)
    except OpenVINOError as exc:
        raise _located(exc, problems) from None
    return compiled, f"openvino (CPU plugin, irgrid extension): irgrid lacks {', '.join(lacking)}"


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

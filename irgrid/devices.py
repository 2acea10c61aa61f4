"""Which runtime runs a model: irgrid's own, or OpenVINO's CPU plugin with irgrid's extension.

`auto` (the CLI's default, as benchmark_app's `-d`) runs irgrid's runtime when irgrid supports every
layer, and otherwise OpenVINO, which runs the layers irgrid lacks (GroupConvolution, MVN, ...) while
irgrid's extension runs the variants OpenVINO lacks. ONNX files always go through OpenVINO's
frontend with irgrid's conversion rules.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

from .binding import bind_layer, bind_model
from .errors import InputError, Problem, UnsupportedLayerError
from .ir.reader import read_ir
from .runtime.compiled import CompiledModel
from .shapes import name_single_input

DEVICES = ("auto", "irgrid", "openvino")


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
        return _openvino(path, shapes, threads, profile), "openvino (CPU plugin, irgrid extension): as asked"
    model = read_ir(path)
    problems: list[Problem] = []
    bind_model(model, on_problem=problems.append)
    blocking = [p for p in problems if device == "irgrid" or p.kind != "unsupportedlayer"]
    if blocking:
        bind_layer(blocking[0].layer)  # raises that problem as its own error type
    if not problems:
        shapes = name_single_input(shapes or {}, [p.name for p in model.parameters]) or None
        try:
            return CompiledModel(model, shapes, threads), "irgrid (supports every layer)"
        except UnsupportedLayerError as exc:  # a variant of a supported layer (Interpolate antialias=true)
            if device == "irgrid":
                raise
            return _openvino(path, shapes, threads, profile), \
                f"openvino (CPU plugin, irgrid extension): irgrid lacks a variant of " \
                f"{exc.layer.type}-{exc.layer.version} ({exc.reason})"
    lacking = sorted({f"{p.layer.type}-{p.layer.version}" for p in problems})
    return _openvino(path, shapes, threads, profile), \
        f"openvino (CPU plugin, irgrid extension): irgrid lacks {', '.join(lacking)}"


def _openvino(path, shapes, threads, profile):
    from .openvino.runner import OpenVINOModel  # imports openvino only when it is used

    return OpenVINOModel(path, shapes, threads, profile)

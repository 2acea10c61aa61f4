"""`OpenVINOModel`: a model run by OpenVINO's CPU plugin with irgrid's extension, called exactly like
irgrid's own `CompiledModel` (`{input name: array}` in, `{output name: array}` out), so the CLI and
callers treat both devices alike.

The plugin is compiled at f32 precision (on CPUs with bf16 units its default hint is bf16, which
drifts by 1e-2 from irgrid's results). numpy has no bf16: bf16 tensors are exchanged as raw bits
and carried as f32, as irgrid carries them.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import openvino as ov
import openvino.opset1 as ov_ops
from openvino.frontend import FrontEndManager

from ..binding import bind_layer, bind_model
from ..errors import InputError, IRGridError, OpenVINOError, ShapeError
from ..forks import fork_safe_lock, marks
from ..input_arrays import input_array, inputs_by_name
from ..ir import element_types
from ..inference import infer_model
from ..ir.reader import read_ir
from ..registry import TensorInfo, irgrid_owned
from ..runtime.mask_assignment import mask_assignments
from ..shapes import name_single_input, shape_arg
from .conversion import conversion_extensions
from .gridsample9 import replace_gridsample9
from .native import NativeLibraryError, library_path
from .ops import extensions, stand_in_class

# A Python exception's line inside OpenVINO's message (an irgrid op or conversion rule raised it).
_PYTHON_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception): ")


@dataclass(frozen=True)
class ModelInput:
    """An input as the CLI names it (CompiledModel's inputs are IR Parameter layers with a `.name`)."""

    name: str
    names: tuple[str, ...]


class OpenVINOModel:
    """Read (IR or ONNX, with irgrid's op extension and conversion rules) and compile on OpenVINO CPU."""

    def __init__(self, path: str | os.PathLike, shapes: Mapping[str, Sequence[int | None]] | None = None,
                 threads: int | None = None, profile: bool = False) -> None:
        """`profile` turns on OpenVINO's per-layer counters (PERF_COUNT) for `infer_profiled`."""
        self.threads = threads
        _refuse_in_a_fork_child()
        marks.openvino = True
        # Kept as long as the model: the Core holds the native library, whose code the model's irgrid ops
        # run (and are destroyed by); freed first, it would unload the library under them.
        self._core = core = ov.Core()
        self.extension = add_irgrid_extension(core)
        native = self.extension == NATIVE
        core.add_extension(conversion_extensions())
        config = {"INFERENCE_PRECISION_HINT": "f32", "PERF_COUNT": "YES" if profile else "NO"}
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        check_onnx(path)
        try:
            model = _read(core, path)
            _stand_in_for_crashing_layers(model)
            if shapes:
                shapes = name_single_input(shapes, [_input_names(port)[0] for port in model.inputs])
                ports = {name: _port(model.inputs, name) for name in shapes}
                model.reshape({ports[name]: _reshaped(ports[name], shape_arg(name, dims))
                               for name, dims in shapes.items()})
            if native:
                replaced = replace_gridsample9(model, config)
                if replaced:
                    self.extension += f"; its GridSample runs {replaced} GridSample-9 layer" \
                                      f"{'s' if replaced > 1 else ''}, where it is faster on this CPU"
            selects = _mask_assignments_as_select(model, path)
            if selects:
                self.extension += f"; {selects} boolean-mask assignment{'s' if selects > 1 else ''} run as Select"
            self._compiled = core.compile_model(model, "CPU", config)
        except RuntimeError as exc:
            raise OpenVINOError(openvino_reason(exc)) from None
        self.inputs = [(ModelInput((names := _input_names(port))[0], names),
                        TensorInfo(_shape(port.get_partial_shape()), port.get_element_type().get_type_name()))
                       for port in self._compiled.inputs]
        self.outputs = _output_names(self._compiled.outputs)
        self._request = self._compiled.create_infer_request()
        self._lock = fork_safe_lock(self)

    def __call__(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray]) -> "OrderedDict[str, np.ndarray]":
        with self._lock:
            return self._run(inputs)

    infer = __call__

    def infer_profiled(self, inputs: Mapping[str, np.ndarray]) -> tuple["OrderedDict[str, np.ndarray]", list]:
        """Run once and return OpenVINO's per-layer counters (needs `profile=True`), shaped like
        CompiledModel's: layer name, type, the kernel OpenVINO ran it with, seconds."""
        from ..runtime.compiled import LayerTime

        with self._lock:
            outputs = self._run(inputs)
            counters = [LayerTime(info.node_name, info.node_type, info.exec_type, info.real_time.total_seconds())
                        for info in self._request.profiling_info if info.status.name == "EXECUTED"]
        return outputs, counters

    def _run(self, inputs: Mapping[str, np.ndarray]) -> "OrderedDict[str, np.ndarray]":
        _refuse_in_a_fork_child()
        tensors = {}
        remaining = dict(inputs_by_name(inputs, [model_input.name for model_input, _ in self.inputs]))
        for port, (model_input, info) in zip(self._compiled.inputs, self.inputs):
            found = [n for n in model_input.names if n in remaining]
            if not found:
                raise InputError(f"input {model_input.name!r} is missing")
            array = input_array(model_input.name, info, remaining.pop(found[0]))
            _check_int32_range(model_input.name, info.element_type, array)
            try:
                tensors[port] = _tensor(array, info.element_type)
            except (RuntimeError, TypeError) as exc:  # a type irgrid does not know (u1, string, ...)
                raise InputError(f"input {model_input.name!r}: {openvino_reason(exc)}") from None
        if remaining:
            raise InputError(f"the model has no input named {next(iter(remaining))!r}")
        try:
            self._request.infer(tensors)
        except RuntimeError as exc:
            if _PYTHON_INTERRUPT in str(exc):  # Ctrl-C while an irgrid op ran: OpenVINO wrapped it
                raise KeyboardInterrupt from None
            raise OpenVINOError(openvino_reason(exc)) from None
        return OrderedDict((name, _array(self._request.get_output_tensor(i))) for i, name in enumerate(self.outputs))


# How OpenVINO reports a KeyboardInterrupt raised inside an irgrid op's evaluate (a RuntimeError).
_PYTHON_INTERRUPT = "KeyboardInterrupt"


NATIVE = "irgrid's native extension"


def add_irgrid_extension(core: ov.Core) -> str:
    """irgrid's operators into `core`: the native library where it can be used, else irgrid's Python ops;
    returns which, for the device line (NATIVE for the library)."""
    try:
        path = library_path()
    except NativeLibraryError as exc:
        core.add_extension(extensions())
        return f"irgrid's Python ops; {exc.reason}"
    _keep_loaded(path)
    core.add_extension(str(path))
    return NATIVE


@functools.cache
def _keep_loaded(path: Path) -> None:
    """Loads the native library for the rest of the process (RTLD_NODELETE): the nodes of its ops hold
    its code (their destructors, clone_with_new_inputs), and a node created outside a Core's reader (by
    a NodeFactory, gridsample9.py) does not keep the library loaded, so a Core or
    factory freed before the model's last node unloaded it under them (a segfault at exit)."""
    ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_NODELETE)


def _refuse_in_a_fork_child() -> None:
    """OpenVINOError in a process forked after OpenVINO ran: its oneTBB workers may hang there (forks.py)."""
    if marks.child_of_openvino:
        raise OpenVINOError("this process was forked after OpenVINO ran, where OpenVINO's CPU plugin may hang "
                            "(its oneTBB workers are not copied by fork); start workers with the 'spawn' or "
                            "'forkserver' method, or use irgrid's runtime (-d irgrid)")


def _read(core: ov.Core, path: str | os.PathLike) -> ov.Model:
    """core.read_model; an irgrid op's refusal of an IR layer is reported as irgrid's reader reports it,
    naming the layer (OpenVINO's reader validates an op before it names it)."""
    try:
        return core.read_model(str(path))
    except RuntimeError as exc:
        own = _PYTHON_ERROR.search(str(exc)) and _irgrid_op_error(path)
        if own:
            raise own from None
        raise


def _irgrid_op_error(path: str | os.PathLike) -> IRGridError | None:
    """The first refusal irgrid's binding finds among an IR's irgrid-owned layers, located."""
    if Path(path).suffix.lower() != ".xml":
        return None
    try:
        layers = read_ir(path).layers.values()
    except IRGridError:
        return None
    for layer in layers:
        if irgrid_owned(layer.type, layer.version):
            try:
                bind_layer(layer)
            except IRGridError as exc:
                return exc
    return None


def _stand_in_for_crashing_layers(model: ov.Model) -> None:
    """OpenVINO's CPU plugin (2026.4) segfaults on a NaN offset in DeformableConvolution-1, and in -8
    without bilinear_interpolation_pad: irgrid's implementation of the same layer (the same results, and
    NaN where an offset is NaN) runs in place of each such layer, under its name and tensor names."""
    for node in model.get_ordered_ops():
        if node.get_type_name() != "DeformableConvolution":
            continue
        attrs = node.get_attributes()
        if attrs.get("bilinear_interpolation_pad"):
            continue
        stand_in = stand_in_class("DeformableConvolution", node.get_type_info().version_id)(
            [node.input_value(i) for i in range(node.get_input_size())], **attrs)
        stand_in.set_friendly_name(node.get_friendly_name())
        for old, new in zip(node.outputs(), stand_in.outputs()):
            new.get_tensor().set_names(old.get_names())
            old.replace(new)


def _mask_assignments_as_select(model: ov.Model, path: str | os.PathLike) -> int:
    """Each boolean-mask assignment of an IR (NonZero -> Transpose -> ScatterNDUpdate of a broadcast
    scalar, as torch's dynamo exporter writes `mask[mask < t] = v`; irgrid.runtime.mask_assignment
    finds them, as for irgrid's runtime) becomes Select(cond, v, data) under the scatter's name: the
    same values, without the index tuples flowing through NonZero and the scatter; returns how many."""
    if Path(path).suffix.lower() != ".xml":
        return 0
    try:
        ir = read_ir(path)
        bind_model(ir, on_problem=lambda problem: None)
        found = mask_assignments(ir, infer_model(ir, on_problem=lambda problem: None))
    except IRGridError:
        return 0
    names = {ir.layers[layer_id].name for layer_id in found}
    replaced = 0
    for node in model.get_ordered_ops():
        if node.get_type_name() != "ScatterNDUpdate" or node.get_friendly_name() not in names:
            continue
        non_zero = node.input_value(1).get_node().input_value(0).get_node()
        value = node.input_value(2).get_node().input_value(0)
        select = ov_ops.select(non_zero.input_value(0), value, node.input_value(0))
        select.set_friendly_name(node.get_friendly_name())
        select.output(0).get_tensor().set_names(node.output(0).get_names())
        node.output(0).replace(select.output(0))
        replaced += 1
    return replaced


_INT32 = np.iinfo(np.int32)


def _check_int32_range(name: str, element_type: str, array: np.ndarray) -> None:
    """OpenVINO's CPU plugin computes most i64 and u64 layers (and irgrid's ops) in i32, so a larger
    value would wrap silently (5000000001 + 1 gives 705032706): refused, as irgrid's runtime computes it."""
    if element_type in ("i64", "u64") and array.size and (array.min() < _INT32.min or array.max() > _INT32.max):
        raise InputError(f"input {name!r} has {element_type} values outside the int32 range, which OpenVINO's CPU "
                         f"plugin computes {element_type} in (they would wrap); run it on irgrid's runtime")


def check_onnx(path: str | os.PathLike) -> None:
    """An .onnx file that OpenVINO's ONNX frontend cannot read is refused here: left to
    `read_model`, OpenVINO would try every frontend, and the TensorFlow one logs lines of its own to
    stderr before the error (the CLI's error is one line)."""
    if Path(path).suffix.lower() != ".onnx" or not Path(path).is_file():
        return  # a missing file: read_model names it
    if not FrontEndManager().load_by_framework("onnx").supported(str(path)):
        raise OpenVINOError(f"{path}: not an ONNX model that OpenVINO's ONNX frontend can read")


def openvino_reason(exc: Exception) -> str:
    """OpenVINO's multi-line exception as one line, and the fix when an IR needs irgrid's extension.

    An error raised in one of irgrid's ops or conversion rules (a Python exception inside OpenVINO)
    arrives as its own line ("LayerAttributeError: ..."), followed by pybind11's traceback ("At:" and
    indented frames) and, from a conversion, a "Summary:" of failed operations: that line is the reason,
    after the plugin's "Node NAME of type Reference" where it names the layer. Otherwise the last line."""
    lines, skipping = [], False
    for raw in str(exc).splitlines():
        line = raw.strip()
        if line in ("At:", "Summary:"):
            skipping = True
        elif not (skipping and (not line or raw[:1].isspace() or line.startswith("--"))):
            skipping = False
            if line and not line.startswith("Exception from"):
                lines.append(line)
    python = [line for line in lines if _PYTHON_ERROR.search(line)]
    if python:
        node = next((line for line in lines if line.startswith("Node ") and " of type " in line), None)
        return f"{node}: {python[-1]}" if node else python[-1]
    reason = lines[-1] if lines else str(exc)
    if "unsupported opset: irgrid" in reason:
        reason += (" (this IR uses irgrid's own operators: add them with "
                   "`core.add_extension(irgrid.openvino.extensions())`, or run `irgrid infer`; a version "
                   "this irgrid lacks needs a newer irgrid)")
    return reason


def _input_names(port) -> tuple[str, ...]:
    """Every name an input answers to, the one to show first: its tensor names, then its Parameter's name
    (as irgrid's runtime, `Model.input_names`); OpenVINO's PyTorch frontend may leave a tensor unnamed."""
    tensor_names = sorted(port.get_names())
    if tensor_names:
        tensor_names.remove(port.get_any_name())
        tensor_names.insert(0, port.get_any_name())
    return tuple(dict.fromkeys([*tensor_names, port.get_node().get_friendly_name()]))


def _output_names(ports) -> list[str]:
    """One name per output, as irgrid's runtime gives them (`Model.output_names`): the tensor name, else
    (unnamed, as `ov.convert_model` of a PyTorch module leaves its Results' tensors, or taken) the Result's."""
    names: list[str] = []
    for port in ports:
        result = port.get_node().get_friendly_name()
        name = port.get_any_name() if port.get_names() else result
        names.append(result if name in names else name)
    return names


def _port(ports, name: str):
    for port in ports:
        if name in _input_names(port):
            return port
    raise InputError(f"the model has no input named {name!r}")


def _reshaped(port, shape: tuple[int | None, ...]) -> ov.PartialShape:
    """The input's new shape; as irgrid's runtime, a dim outside a bounded declared dim (1..10) is refused
    (OpenVINO's reshape would take it), while a static declared dim may change."""
    declared = port.get_partial_shape()
    if declared.rank.is_static and len(declared) == len(shape):
        for axis, (dim, want) in enumerate(zip(declared, shape)):
            if want is not None and dim.is_dynamic and not dim.compatible(ov.Dimension(want)):
                raise ShapeError(f"input {_input_names(port)[0]!r}: shape {list(shape)} lies outside the IR's declared "
                                 f"{declared} (dim {axis})")
    return ov.PartialShape([-1 if d is None else d for d in shape])


def _shape(partial: ov.PartialShape):
    if partial.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in partial)


def _tensor(array: np.ndarray, element_type: str) -> ov.Tensor:
    if element_type == "bf16":
        bits = (element_types.round_to_bf16(array).view(np.uint32) >> 16).astype(np.uint16)
        return ov.Tensor(bits, list(array.shape), ov.Type.bf16)
    return ov.Tensor(np.ascontiguousarray(array))


def _array(tensor: ov.Tensor) -> np.ndarray:
    data = tensor.data
    if tensor.get_element_type() == ov.Type.bf16:  # raw bits in a float16-typed view
        return element_types.decode(np.ascontiguousarray(data).view(np.uint8), "bf16").reshape(data.shape)
    return data.copy()

"""One `openvino.Op` subclass per irgrid-owned (type, version), generated from its `OpSpec`.

- `visit_attributes` comes from the attribute spec: each value goes to the visitor as its IR text and
  comes back parsed by irgrid's own parser (OpenVINO's visitor parses typed values leniently);
- `validate_and_infer_types` runs the operator's own shape inference on OpenVINO's partial shapes
  (dynamic dims and dynamic rank; a Constant input's value is passed on, as irgrid's inference does);
- `evaluate` runs the operator's own run function, whose Cython kernels release the GIL, writing
  into OpenVINO's output tensor when its type and layout allow.

OpenVINO's CPU plugin clones the op once and calls that one object from every infer request and stream
at once, so `evaluate` keeps no per-call state on the op. The plugin also converts f16, bf16 and f64
to f32 and i64 to i32 around Python ops, declaring those types on the clone it runs
(docs/openvino.md): inside OpenVINO an f64 model's irgrid op computes in f32, where irgrid's own
runtime computes in f64. Inputs are still cast to the types the running op declares, so another
plugin's choices are honoured too.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any, NamedTuple

import numpy as np
import openvino as ov

from .. import _kernels
from .._kernels import OPERATOR_KERNELS
from ..errors import IRGridError
from ..forks import marks
from ..ir import element_types
from ..ir.dims import Shape, is_static
from ..registry import OpSpec, RunContext, TensorInfo, all_specs, find, irgrid_owned
from ..threads import kernel_threads

# Each kernel module gives its OpenMP workers the CPUs of the thread that imports it
# (kernels/cython/worker_cpus.h): imported here, with irgrid.openvino, before OpenVINO runs an op on a
# thread it pinned to one core.
for _kernel in OPERATOR_KERNELS:
    import_module(f"{_kernels.__name__}.{_kernel}")

_CLASSES: dict[tuple[str, str], type] = {}


class _Plan(NamedTuple):
    """What `evaluate` needs of an op as configured (not per-call state), set by
    `validate_and_infer_types`."""

    input_types: list[tuple[np.dtype, bool]]  # (numpy dtype, is bf16) per input port
    output_types: list[tuple[np.dtype, bool]]  # likewise per output port
    static: bool  # output shapes known: no per-call inference
    prepared: Any  # the op's prepared run function for static inputs, or None


def extensions() -> list[ov.OpExtension]:
    """What `core.add_extension()` takes: an op extension per irgrid-owned (type, version)."""
    return [ov.OpExtension(op_class(spec.type, version))
            for spec in all_specs() if not spec.native for version in spec.versions]


def op_class(type_: str, version: str) -> type:
    """The generated `openvino.Op` subclass of an irgrid-owned (type, version), created once."""
    key = (type_, version)
    if key not in _CLASSES:
        spec = irgrid_owned(type_, version)
        if spec is None:
            raise KeyError(f"{type_} {version} is not an irgrid-owned operator")
        _CLASSES[key] = _make_class(spec, version)
    return _CLASSES[key]


def stand_in_class(type_: str, version: str) -> type:
    """irgrid's implementation of OpenVINO's own (type, version), as an op of version `irgrid_<version>`
    that the OpenVINO runner puts in place of OpenVINO's layer where that crashes (docs/openvino.md).
    Never registered as an extension or written to an IR."""
    key = (type_, f"irgrid_{version}")
    if key not in _CLASSES:
        _CLASSES[key] = _make_class(find(type_, version), key[1])
    return _CLASSES[key]


def _make_class(spec: OpSpec, version: str) -> type:
    type_info = ov.DiscreteTypeInfo(spec.type, version)

    def __init__(self, inputs: list | None = None, attrs: dict[str, Any] | None = None, **given: Any) -> None:
        """`cls()` (OpenVINO's IR reader), `cls(inputs, mode="cubic")` (Python values or IR text),
        or `cls(inputs, attrs=canonical)` (clones)."""
        ov.Op.__init__(self, self)  # first: raising before it leaves a half-built native object
        self._attrs = dict(attrs) if attrs is not None else _parse(spec, given, self)
        if inputs is not None:
            self.set_arguments(list(inputs))
            self.constructor_validate_and_infer_types()

    def get_type_info(self) -> ov.DiscreteTypeInfo:
        return type_info

    def visit_attributes(self, visitor) -> bool:
        values = {attr.name: attr.visit_value(self._attrs[attr.name]) for attr in spec.attrs}
        visitor.on_attributes(values)  # reading an IR fills `values` in place
        self._attrs = _parse(spec, values, self)
        return True

    def validate_and_infer_types(self) -> None:
        _call(spec, self, spec.check_input_count, self.get_input_size())
        infos = [_input_info(self, i) for i in range(self.get_input_size())]
        if any(info.element_type is None for info in infos):
            for index in range(spec.outputs):
                self.set_output_type(index, ov.Type.dynamic, ov.PartialShape.dynamic())
            return
        if any(info.shape is None for info in infos):  # irgrid's inference needs every input's rank
            outputs = [TensorInfo(None, infos[0].element_type)] * spec.outputs
        else:
            outputs = _call(spec, self, spec.infer, self._attrs, infos)
        for index, info in enumerate(outputs):
            self.set_output_type(index, getattr(ov.Type, info.element_type), _partial_shape(info.shape))
        # What evaluate needs of the op as configured (not per-call state): the numpy types it declares,
        # whether output shapes must be inferred per call, and for static inputs the op's prepared run
        # function (validated once here, as irgrid's compiled model does; immutable, so shared by every
        # infer request).
        static = all(is_static(info.shape) for info in outputs)
        prepared = (_call(spec, self, spec.prepare, self._attrs, infos)
                    if spec.prepare and static and all(is_static(info.shape) for info in infos) else None)
        self._plan = _Plan([(element_types.numpy_dtype(info.element_type), info.element_type == "bf16")
                            for info in infos],
                           [(element_types.numpy_dtype(info.element_type), info.element_type == "bf16")
                            for info in outputs],
                           static, prepared)

    def clone_with_new_inputs(self, new_inputs: list) -> ov.Op:
        return cls(new_inputs, attrs=self._attrs)

    def evaluate(self, outputs: list, inputs: list) -> bool:
        marks.openvino = True  # OpenVINO runs in this process, maybe on a Core of the user's (forks.py)
        # Indexed, never iterated: iterating OpenVINO's TensorVector costs about 10 us per element
        # (pybind11 ends the iteration with a C++ exception), indexing under 1 us.
        inputs, outputs = [inputs[i] for i in range(len(inputs))], [outputs[i] for i in range(len(outputs))]
        input_types, output_types, static, prepared = self._plan
        arrays = [_array(tensor, dtype, bf16) for tensor, (dtype, bf16) in zip(inputs, input_types)]
        if not static:  # size OpenVINO's output tensors before the kernel writes into them
            # Input values go in too: an output shape may depend on one (AffineGrid's size).
            infos = _call(spec, self, spec.infer, self._attrs, [TensorInfo(a.shape, _type_name(a), a) for a in arrays])
            for tensor, info in zip(outputs, infos):
                tensor.shape = list(info.shape)
        targets = [data if data.dtype == dtype and not bf16 and data.flags.c_contiguous else None
                   for data, (dtype, bf16) in ((tensor.data, types) for tensor, types in zip(outputs, output_types))]
        ctx = RunContext(kernel_threads(), targets)
        values = (_call(spec, self, prepared, arrays, ctx) if prepared
                  else _call(spec, self, spec.run, self._attrs, arrays, ctx))
        for tensor, target, value, (_, bf16) in zip(outputs, targets, values, output_types):
            if value is not target:
                _store(tensor, value, bf16)
        return True

    namespace = dict(__init__=__init__, get_type_info=get_type_info, visit_attributes=visit_attributes,
                     validate_and_infer_types=validate_and_infer_types,
                     clone_with_new_inputs=clone_with_new_inputs, evaluate=evaluate,
                     __doc__=f"irgrid's {spec.type} ({version}) as an OpenVINO op: {spec.summary}",
                     __module__=__name__, __qualname__=f"{spec.type}_{version}")
    cls = type(f"{spec.type}_{version}", (ov.Op,), namespace)
    return cls


def _parse(spec: OpSpec, given: dict[str, Any], node: ov.Op) -> dict[str, Any]:
    try:
        return spec.parse_attrs(given)
    except IRGridError as exc:
        raise _located(exc, spec, node) from None


def _call(spec: OpSpec, node: ov.Op, fn, *args):
    """An operator function, its errors naming the OpenVINO node."""
    try:
        return fn(*args)
    except IRGridError as exc:
        raise _located(exc, spec, node) from None


def _located(exc: IRGridError, spec: OpSpec, node: ov.Op) -> IRGridError:
    # Until a node is named (OpenVINO's IR reader and ONNX frontend name it after validating it), its
    # friendly name is one OpenVINO generated ("GridSample_12"), which the model does not contain.
    name = node.get_friendly_name()
    where = f'{spec.type} node "{name}"' if name != node.get_name() else f"{spec.type} node"
    if exc.input is not None:
        where += f", input {exc.input}"
    return type(exc)(f"{where}: {exc.reason}")


def _input_info(node: ov.Op, index: int) -> TensorInfo:
    """An input's partial shape, element type (None if dynamic) and value when it is a Constant."""
    partial = node.get_input_partial_shape(index)
    shape: Shape = None
    if partial.rank.is_static:
        shape = tuple(d.get_length() if d.is_static else None for d in partial)
    et = node.get_input_element_type(index)
    name = None if et.is_dynamic() else et.get_type_name()
    source = node.input_value(index).get_node()
    value = source.get_data() if source.get_type_name() == "Constant" else None
    if value is not None and name == "bf16":
        value = element_types.decode(np.ascontiguousarray(value).view(np.uint8), "bf16").reshape(value.shape)
    return TensorInfo(shape, name, value)


def _partial_shape(shape: Shape) -> ov.PartialShape:
    if shape is None:
        return ov.PartialShape.dynamic()
    return ov.PartialShape([ov.Dimension() if d is None else ov.Dimension(d) for d in shape])


def _type_name(array: np.ndarray) -> str:
    return element_types.from_dtype(array.dtype)


def _array(tensor: ov.Tensor, dtype: np.dtype, bf16: bool) -> np.ndarray:
    """A tensor's data in the type the running op declares (another plugin may hand a different one);
    bf16 arrives as raw bits in a float16-typed view and is carried as f32, as irgrid does. (The types
    come from the op's plan: each OpenVINO Tensor query costs microseconds.)"""
    data = tensor.data
    if bf16:
        data = element_types.decode(np.ascontiguousarray(data).view(np.uint8), "bf16").reshape(data.shape)
    return data if data.dtype == dtype else data.astype(dtype)


def _store(tensor: ov.Tensor, value: np.ndarray, bf16: bool) -> None:
    """Write a result the kernel could not write in place into OpenVINO's output tensor."""
    data = tensor.data
    if bf16:
        data.view(np.uint16)[...] = (element_types.round_to_bf16(value).view(np.uint32) >> 16).astype(np.uint16)
    else:
        np.copyto(data, value, casting="unsafe")

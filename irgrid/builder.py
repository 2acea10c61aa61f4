"""Build IR v11 models, including layers OpenVINO has no Python builder for (irgrid1 GridSample,
ExperimentalDetectronPriorGridGenerator). Attributes are checked and written by each operator's
attribute spec; output dims come from its shape inference.

    b = IRBuilder("volume_warp")
    vol = b.parameter("volume", (1, 1, 32, 64, 64))
    grid = b.parameter("grid", (1, 32, 64, 64, 3))
    (y,) = b.layer("GridSample", "irgrid1", [vol, grid], {"mode": "linear"})
    b.result(y, "warped")
    b.save("model.xml")
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from lxml import etree

from .ir import element_types
from .ir.attributes import format_shape_attr, format_value
from .ir.dims import Dim, Shape
from .registry import OpSpec, TensorInfo, find


@dataclass(frozen=True, eq=False)
class Value:
    """An output of a layer being built (with its value, for a Const)."""

    layer_id: int
    port_id: int
    shape: Shape
    element_type: str
    names: tuple[str, ...] = ()
    value: np.ndarray | None = None


_PRECISIONS = {"f16": "FP16", "bf16": "BF16", "f32": "FP32", "f64": "FP64", "i8": "I8", "u8": "U8",
               "i16": "I16", "u16": "U16", "i32": "I32", "i64": "I64", "u32": "U32", "u64": "U64",
               "boolean": "BOOL"}


class IRBuilder:
    """Add Parameters, Consts, layers and Results, then `save` the .xml and .bin."""

    def __init__(self, name: str = "model") -> None:
        self.root = etree.Element("net", name=name, version="11")
        self.layers = etree.SubElement(self.root, "layers")
        self.edges = etree.SubElement(self.root, "edges")
        self.blob = bytearray()
        self.next_id = 0

    def _add(self, type_: str, version: str, name: str, attrs: Mapping[str, str], inputs: Sequence[Value],
             outputs: Sequence[tuple[Shape, str, tuple[str, ...]]]) -> list[Value]:
        layer_id = self.next_id
        self.next_id += 1
        layer = etree.SubElement(self.layers, "layer", id=str(layer_id), name=name, type=type_, version=version)
        if attrs:
            etree.SubElement(layer, "data", dict(attrs))
        if inputs:
            ports = etree.SubElement(layer, "input")
            for port_id, value in enumerate(inputs):
                self._port(ports, port_id, value.shape, value.element_type)
                etree.SubElement(self.edges, "edge", {"from-layer": str(value.layer_id),
                                                      "from-port": str(value.port_id),
                                                      "to-layer": str(layer_id), "to-port": str(port_id)})
        values = []
        if outputs:
            ports = etree.SubElement(layer, "output")
            for offset, (shape, element_type, names) in enumerate(outputs):
                port_id = len(inputs) + offset
                self._port(ports, port_id, shape, element_type, names)
                values.append(Value(layer_id, port_id, shape, element_type, names))
        return values

    @staticmethod
    def _port(parent, port_id: int, shape: Shape, element_type: str, names: tuple[str, ...] = ()) -> None:
        port = etree.SubElement(parent, "port", id=str(port_id), precision=_PRECISIONS[element_type])
        if names:
            port.set("names", ",".join(n.replace(",", "\\,") for n in names))
        for d in shape or ():
            etree.SubElement(port, "dim").text = "-1" if d is None else str(d)

    def parameter(self, name: str, shape: Shape, element_type: str = "f32") -> Value:
        dims = None if shape is None else tuple(Dim() if d is None else Dim(d, d) for d in shape)
        attrs = {"shape": format_shape_attr(dims), "element_type": element_type}
        return self._add("Parameter", "opset1", name, attrs, [], [(shape, element_type, (name,))])[0]

    def const(self, array: np.ndarray, name: str | None = None, element_type: str | None = None) -> Value:
        array = np.ascontiguousarray(array)
        element_type = element_type or element_types.from_dtype(array.dtype)
        raw = _encode(array, element_type)
        while len(self.blob) % 8:
            self.blob.append(0)
        attrs = {"element_type": element_type, "shape": ",".join(map(str, array.shape)),
                 "offset": str(len(self.blob)), "size": str(len(raw))}
        self.blob += raw
        name = name or f"Const_{self.next_id}"
        (value,) = self._add("Const", "opset1", name, attrs, [], [(array.shape, element_type, (name,))])
        return Value(value.layer_id, value.port_id, value.shape, value.element_type, value.names, array)

    def layer(self, type_: str, version: str, inputs: Sequence[Value], attrs: Mapping[str, Any] | None = None,
              name: str | None = None, outputs: Sequence[tuple[Shape, str]] | None = None) -> list[Value]:
        """Add a layer of a registered operator; attributes are checked and written by its spec, and
        its output shapes and types inferred unless given (given outputs skip the checks, for
        building deliberately wrong IRs)."""
        name = name or f"{type_}_{self.next_id}"
        spec = find(type_, version)
        if outputs is None:
            parsed = spec.parse_attrs(attrs or {})
            infos = spec.infer(parsed, [TensorInfo(v.shape, v.element_type, v.value) for v in inputs])
            outputs = [(info.shape, info.element_type) for info in infos]
            text = spec.write_attrs(parsed)
        else:
            text = {k: _text(spec, k, v) for k, v in (attrs or {}).items()}
        return self._add(type_, version, name, text, inputs,
                         [(shape, et, (f"{name}:{i}",) if i else (name,)) for i, (shape, et) in enumerate(outputs)])

    def result(self, value: Value, name: str | None = None) -> None:
        self._add("Result", "opset1", name or f"Result_{self.next_id}", {}, [value], [])

    def to_xml(self) -> bytes:
        return etree.tostring(self.root, pretty_print=True, xml_declaration=True, encoding="utf-8")

    def save(self, xml_path: str | os.PathLike) -> Path:
        xml_path = Path(xml_path)
        xml_path.write_bytes(self.to_xml())
        xml_path.with_suffix(".bin").write_bytes(bytes(self.blob))
        return xml_path


def _encode(array: np.ndarray, element_type: str) -> bytes:
    if element_type == "bf16":  # carried as f32: keep the top 16 bits (values must be on the bf16 grid)
        return (array.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    if element_type == "boolean":
        return array.astype(np.uint8).tobytes()
    return array.astype(element_types.numpy_dtype(element_type).newbyteorder("<")).tobytes()


def _text(spec: OpSpec, name: str, value: Any) -> str:
    """An attribute as IR text: by the spec when it names it, else as given (deliberately bad IRs)."""
    attr = next((a for a in spec.attrs if a.name == name), None)
    if attr is None or isinstance(value, str):
        return value if isinstance(value, str) else format_value(value)
    return attr.write(attr.parse(value))

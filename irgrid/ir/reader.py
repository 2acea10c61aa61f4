"""Read an OpenVINO IR (v10/v11 .xml + .bin) into a `Model`, refusing anything unsafe or inconsistent.

The XML parser never resolves entities, loads a DTD or touches the network, and any DOCTYPE is
refused outright (so XXE and billion-laughs payloads fail before expansion). Const payloads are views
into a read-only memory map of the .bin, bounds-checked against the file before anything is touched.
"""
from __future__ import annotations

import os
import re
from collections import deque
from pathlib import Path

import numpy as np
from lxml import etree

from ..errors import LayerAttributeError, ParseError, WeightsError
from . import element_types
from .attributes import CONST_ATTRS, parse_attrs
from .dims import Dim, num_elements, parse_dim
from .model import Layer, Model, Port, Source

SUPPORTED_IR_VERSIONS = (10, 11)
# A declared tensor larger than this (256 TiB) is malformed, not merely big.
MAX_DECLARED_BYTES = 2**48
MAX_XML_BYTES = 1 << 30


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=True)


def read_ir(xml_path: str | os.PathLike, bin_path: str | os.PathLike | None = None) -> Model:
    """Read `xml_path` and its weights (`bin_path`, default: the same stem with `.bin`).

    Layers are not yet bound to operators (`irgrid.binding` does that).
    """
    xml_path = Path(xml_path)
    bin_path = Path(bin_path) if bin_path is not None else xml_path.with_suffix(".bin")
    try:
        size = xml_path.stat().st_size
    except OSError as exc:
        raise ParseError(f"cannot read {xml_path}: {exc.strerror}") from None
    if size > MAX_XML_BYTES:
        raise ParseError(f"{xml_path} is {size} bytes, larger than any IR irgrid reads")
    try:
        tree = etree.parse(str(xml_path), _parser())
    except etree.XMLSyntaxError as exc:
        if xml_path.suffix.lower() == ".onnx":  # infer takes one (through OpenVINO); check and -d irgrid read IR
            raise ParseError(f"{xml_path} is an ONNX model, not OpenVINO IR: convert it with `irgrid convert` "
                             "(or run it with `irgrid infer`, through OpenVINO)") from None
        raise ParseError(f"{xml_path} is not well-formed XML: {exc}") from None
    except OSError as exc:
        raise ParseError(f"cannot read {xml_path}: {exc}") from None
    return _build(tree, xml_path, bin_path)


def _build(tree: etree._ElementTree, xml_path: Path, bin_path: Path) -> Model:
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise ParseError(f"{xml_path}: a DOCTYPE is not allowed in an IR (entities are never expanded)")
    root = tree.getroot()
    if root.tag != "net":
        raise ParseError(f"{xml_path}: root element is <{root.tag}>, expected <net>")
    version = _int(root.get("version", ""), "net version")
    if version not in SUPPORTED_IR_VERSIONS:
        raise ParseError(f"{xml_path}: IR version {version} is not supported (irgrid reads "
                         f"{', '.join(map(str, SUPPORTED_IR_VERSIONS))})")
    layers: dict[str, Layer] = {}
    for element in root.iterfind("layers/layer"):
        layer = _layer(element)
        if layer.id in layers:
            raise ParseError(f"duplicate layer id {layer.id}", layer=layer)
        layers[layer.id] = layer
    # OpenVINO's reader refuses these too: a graph with nothing to compute or nothing it returns.
    if not layers:
        raise ParseError(f"{xml_path}: the model has no layers")
    if not any(layer.type == "Result" for layer in layers.values()):
        raise ParseError(f"{xml_path}: the model has no Result layer (no output)")
    sources = _edges(root, layers)
    order = _topological_order(layers, sources)
    model = Model(name=root.get("name", xml_path.stem), ir_version=version, layers=layers,
                  sources=sources, order=order, path=str(xml_path))
    _load_consts(model, bin_path)
    return model


def _int(text: str, what: str, layer: Layer | None = None) -> int:
    text = text.strip()
    if not re.fullmatch(r"-?\d{1,19}", text):
        raise ParseError(f"{what} {text!r} is not an integer", layer=layer)
    return int(text)


def _split_names(text: str | None) -> tuple[str, ...]:
    if not text:
        return ()
    return tuple(n.replace("\\,", ",").strip() for n in re.split(r"(?<!\\),", text) if n.strip())


def _layer(element: etree._Element) -> Layer:
    layer_id = element.get("id")
    if layer_id is None or not layer_id.strip():
        raise ParseError(f"a <layer> has no id (name {element.get('name')!r})")
    if not re.fullmatch(r"\d{1,19}", layer_id.strip()):  # OpenVINO's ids are unsigned integers
        raise ParseError(f"layer id {layer_id!r} is not a non-negative integer (name {element.get('name')!r})")
    data = element.find("data")
    layer = Layer(id=layer_id.strip(), name=element.get("name", ""), type=element.get("type", ""),
                  version=element.get("version", ""), raw_attrs=dict(data.attrib) if data is not None else {},
                  inputs=[], outputs=[])
    if not layer.type:
        raise ParseError("layer has no type", layer=layer)
    seen: set[int] = set()
    for direction, ports in (("input", layer.inputs), ("output", layer.outputs)):
        for port_el in element.iterfind(f"{direction}/port"):
            port = _port(port_el, layer)
            if port.id in seen:
                raise ParseError(f"port id {port.id} is declared twice", layer=layer)
            seen.add(port.id)
            ports.append(port)
    return layer


def _port(element: etree._Element, layer: Layer) -> Port:
    port_id = _int(element.get("id", ""), "port id", layer)
    precision = element.get("precision")
    element_type = None
    if precision is not None and precision.strip().lower() not in ("", "unspecified", "dynamic", "undefined"):
        element_type = element_types.normalise(precision)
        if element_type is None:
            raise ParseError(f"unknown element type {precision!r}", layer=layer, port=port_id)
    dims = []
    for dim_el in element.iterfind("dim"):
        try:
            dims.append(parse_dim(dim_el.text or ""))
        except ValueError as exc:
            raise ParseError(f"bad dim: {exc}", layer=layer, port=port_id) from None
    port = Port(id=port_id, element_type=element_type, dims=tuple(dims),
                names=_split_names(element.get("names")))
    _refuse_absurd(port.dims, element_type, layer, port_id)
    return port


def _refuse_absurd(dims: tuple[Dim, ...], element_type: str | None, layer: Layer, port: int | None) -> None:
    static = [d.static for d in dims]
    if any(d is None for d in static):
        return
    itemsize = element_types.numpy_dtype(element_type).itemsize if element_type else 1
    if num_elements(static) * itemsize > MAX_DECLARED_BYTES:
        raise ParseError(f"declared shape {list(static)} is absurdly large", layer=layer, port=port)


def _edges(root: etree._Element, layers: dict[str, Layer]) -> dict[tuple[str, int], Source]:
    """Each input's producer. The ports are indexed by id once per layer (by their position, as the
    layer lists them), so a layer of many ports reads in linear time."""
    sources: dict[tuple[str, int], Source] = {}
    ports: dict[str, tuple[dict[int, int], dict[int, int]]] = {}

    def index(layer: Layer, direction: int, port_id: int) -> int:
        if layer.id not in ports:
            ports[layer.id] = tuple({p.id: i for i, p in reversed(list(enumerate(side)))}
                                    for side in (layer.inputs, layer.outputs))
        return ports[layer.id][direction][port_id]

    for edge in root.iterfind("edges/edge"):
        ends = [edge.get(k) for k in ("from-layer", "from-port", "to-layer", "to-port")]
        if any(e is None for e in ends):
            raise ParseError(f"an <edge> lacks one of from-layer/from-port/to-layer/to-port: {dict(edge.attrib)}")
        src_id, src_port, dst_id, dst_port = ends[0].strip(), _int(ends[1], "edge from-port"), \
            ends[2].strip(), _int(ends[3], "edge to-port")
        if src_id not in layers or dst_id not in layers:
            missing = src_id if src_id not in layers else dst_id
            raise ParseError(f"edge {src_id}:{src_port} -> {dst_id}:{dst_port} names layer {missing}, "
                             "which does not exist")
        src, dst = layers[src_id], layers[dst_id]
        try:
            out_index = index(src, 1, src_port)
        except KeyError:
            raise ParseError(f"edge to layer {dst_id} starts at output port {src_port}, which this "
                             "layer does not have", layer=src, port=src_port) from None
        try:
            in_index = index(dst, 0, dst_port)
        except KeyError:
            raise ParseError(f"edge from layer {src_id} ends at input port {dst_port}, which this "
                             "layer does not have", layer=dst, port=dst_port) from None
        if (dst_id, in_index) in sources:
            raise ParseError("input port is fed by two edges", layer=dst, port=dst_port)
        sources[(dst_id, in_index)] = Source(src_id, out_index)
    for layer in layers.values():
        for index, port in enumerate(layer.inputs):
            if (layer.id, index) not in sources:
                raise ParseError("input port is not connected to any edge", layer=layer, port=port.id)
    return sources


def _topological_order(layers: dict[str, Layer], sources: dict[tuple[str, int], Source]) -> list[str]:
    """Kahn's algorithm, stable in document order; leftover layers lie on a cycle."""
    pending = {lid: len(layer.inputs) for lid, layer in layers.items()}
    consumers: dict[str, list[str]] = {lid: [] for lid in layers}
    for (dst, _), src in sources.items():
        consumers[src.layer].append(dst)
    ready = deque(lid for lid, n in pending.items() if n == 0)
    order = []
    while ready:
        lid = ready.popleft()
        order.append(lid)
        for dst in consumers[lid]:
            pending[dst] -= 1
            if pending[dst] == 0:
                ready.append(dst)
    if len(order) != len(layers):
        # Walk up from a blocked layer through blocked producers until a layer repeats: that one is
        # on a cycle (the first blocked layer may merely sit downstream of it).
        producers: dict[str, list[str]] = {lid: [] for lid in layers}
        for (dst, _), src in sources.items():
            producers[dst].append(src.layer)
        lid, seen = next(lid for lid in layers if pending[lid] > 0), set()
        while lid not in seen:
            seen.add(lid)
            lid = next(p for p in producers[lid] if pending[p] > 0)
        raise ParseError("the graph has a cycle through this layer", layer=layers[lid])
    return order


def _load_consts(model: Model, bin_path: Path) -> None:
    consts = [layer for layer in model.layers.values() if layer.type in ("Const", "Constant")]
    if not consts:
        return
    blob = _map_bin(bin_path, consts[0])
    for layer in consts:
        attrs = parse_attrs(CONST_ATTRS, layer.raw_attrs, lambda reason: LayerAttributeError(reason, layer=layer))
        layer.const = _const_payload(layer, attrs, blob)


def _map_bin(bin_path: Path, first: Layer) -> np.ndarray:
    try:
        if bin_path.stat().st_size == 0:
            return np.zeros(0, np.uint8)
        return np.memmap(bin_path, dtype=np.uint8, mode="r")
    except OSError as exc:
        raise WeightsError(f"cannot read weights {bin_path}: {exc.strerror or exc}", layer=first) from None


def _const_payload(layer: Layer, attrs: dict, blob: np.ndarray) -> np.ndarray:
    element_type, dims = attrs["element_type"], attrs["shape"]
    if dims is None or any(d.static is None for d in dims):
        raise WeightsError(f"shape {layer.raw_attrs.get('shape')!r} is not static", layer=layer)
    shape = tuple(d.static for d in dims)
    offset, size = attrs["offset"], attrs["size"]
    count = num_elements(shape)
    if count == 0:  # ov.save_model writes empty Consts with size 1 and no meaningful offset
        return np.zeros(shape, element_types.numpy_dtype(element_type))
    expected = count * element_types.storage_size(element_type)
    if expected != size:
        raise WeightsError(f"size {size} does not match shape {list(shape)} of {element_type} "
                           f"({expected} bytes)", layer=layer)
    if offset + size > blob.size:
        raise WeightsError(f"bytes {offset}..{offset + size} lie past the end of the .bin "
                           f"({blob.size} bytes)", layer=layer)
    raw = blob[offset:offset + size]
    if element_type == "boolean":
        return (raw != 0).reshape(shape)
    # .bin offsets need not be aligned for the element type; kernels need aligned arrays.
    return np.require(element_types.decode(raw, element_type).reshape(shape), requirements="A")


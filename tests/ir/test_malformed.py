"""Malformed, unsafe and absurd IRs: each raises the right irgrid error, naming the culprit.

Every case starts from a valid IR written by ov.save_model (or irgrid's IRBuilder for the layer
OpenVINO cannot build) and breaks one thing in its text or its .bin.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import openvino.opset9 as ops9
import pytest
from lxml import etree

import irgrid
from irgrid import (LayerAttributeError, ParseError, ShapeError, UnsupportedLayerError, WeightsError)
from irgrid.builder import IRBuilder
from oracles import prior_grid_network, save_ov

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _base_model() -> ov.Model:
    data = ops.parameter([1, 3, 4, 4], np.float32, name="data")
    w = ops.constant(np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1), name="w")
    add = ops.add(data, w, name="add")
    b = ops.constant(np.float32(0.5), name="b")
    add2 = ops.add(add, b, name="add2")
    add2.output(0).get_tensor().set_names({"out"})
    return ov.Model([ops.result(add2, name="res")], [data], "base")


@pytest.fixture
def base(tmp_path) -> Path:
    """The valid IR: data(0) -> add(2) <- w(1); add -> add2(4) <- b(3); add2 -> res(5)."""
    path = save_ov(_base_model(), tmp_path, "base")
    # The base IR itself is fine: the errors below come from the edits alone.
    model = irgrid.read_model(path)
    assert irgrid.check_model(model) == []
    x = np.zeros((1, 3, 4, 4), np.float32)
    np.testing.assert_array_equal(irgrid.compile_model(model)({"data": x})["out"],
                                  x + np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1) + 0.5)
    return path


def edit(src: Path, fn=None, name: str = "edited", bin_bytes: bytes | None = None) -> Path:
    """Copy an IR with `fn(root)` applied to its XML tree (and optionally other .bin bytes)."""
    root = etree.fromstring(src.read_bytes())
    if fn is not None:
        fn(root)
    dst = src.with_name(f"{name}.xml")
    dst.write_bytes(etree.tostring(root, xml_declaration=True, encoding="utf-8"))
    dst.with_suffix(".bin").write_bytes(src.with_suffix(".bin").read_bytes() if bin_bytes is None else bin_bytes)
    return dst


def layer_el(root, name: str):
    return root.find(f".//layers/layer[@name='{name}']")


def port_el(root, name: str, port_id: int):
    return layer_el(root, name).find(f".//port[@id='{port_id}']")


def edge_el(root, to_layer: str, to_port: str):
    return root.find(f".//edges/edge[@to-layer='{to_layer}'][@to-port='{to_port}']")


def names_layer(message: str, type_: str, name: str, layer_id: str) -> bool:
    """The message locates the layer by type, name and id."""
    return type_ in message and f'"{name}"' in message and f"id {layer_id}" in message


def raises(cls, path: Path, *, fn=irgrid.read_model, seconds: float = 5.0) -> str:
    """`fn(path)` raises `cls` (exactly that subclass) within `seconds`; returns the message."""
    start = time.perf_counter()
    with pytest.raises(cls) as info:
        fn(path)
    elapsed = time.perf_counter() - start
    assert type(info.value) is cls, f"{type(info.value).__name__} instead of {cls.__name__}: {info.value}"
    assert elapsed < seconds, f"took {elapsed:.2f} s"
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# Weights (.bin)
# ---------------------------------------------------------------------------------------------


def test_truncated_bin(base):
    blob = base.with_suffix(".bin").read_bytes()
    assert len(blob) == 16
    msg = raises(WeightsError, edit(base, bin_bytes=blob[:14]))
    # Const "b" lives at bytes 12..16.
    assert names_layer(msg, "Const", "b", "3")
    assert "16" in msg and "14" in msg


def test_empty_bin_with_consts(base):
    msg = raises(WeightsError, edit(base, bin_bytes=b""))
    assert "Const" in msg and "past the end" in msg


def test_missing_bin(base):
    path = edit(base)
    path.with_suffix(".bin").unlink()
    msg = raises(WeightsError, path)
    assert "edited.bin" in msg


def test_const_offset_past_end(base):
    msg = raises(WeightsError, edit(base, lambda r: layer_el(r, "w").find("data").set("offset", "1000")))
    assert names_layer(msg, "Const", "w", "1")
    assert "1000" in msg


def test_const_offset_near_int64_max(base):
    msg = raises(WeightsError, edit(base, lambda r: layer_el(r, "w").find("data").set("offset", str(2**63 - 1))))
    assert names_layer(msg, "Const", "w", "1")


def test_const_size_shape_mismatch(base):
    msg = raises(WeightsError, edit(base, lambda r: layer_el(r, "w").find("data").set("size", "8")))
    assert names_layer(msg, "Const", "w", "1")
    assert "size 8" in msg and "12" in msg


def test_const_shape_changed_size_kept(base):
    msg = raises(WeightsError, edit(base, lambda r: layer_el(r, "w").find("data").set("shape", "1,3,2,1")))
    assert names_layer(msg, "Const", "w", "1")


def test_const_negative_offset(base):
    msg = raises(LayerAttributeError, edit(base, lambda r: layer_el(r, "w").find("data").set("offset", "-4")))
    assert names_layer(msg, "Const", "w", "1") and "offset" in msg


# ---------------------------------------------------------------------------------------------
# Dims
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["abc", "-5", "-2", "3.5", "1e3", "0x10", "four", "1,2", "1..x", "5..2", "+3"])
def test_bad_dim(base, text):
    def fn(root):
        port_el(root, "add", 2).findall("dim")[1].text = text

    msg = raises(ParseError, edit(base, fn))
    assert names_layer(msg, "Add", "add", "2")
    assert "port 2" in msg


@pytest.mark.parametrize("text", ["abc", "-3", "2.5", "1;3"])
def test_bad_parameter_shape_attribute(base, text):
    msg = raises(LayerAttributeError, edit(base, lambda r: layer_el(r, "data").find("data").set("shape", f"1,{text},4,4")))
    assert names_layer(msg, "Parameter", "data", "0") and "shape" in msg


def test_non_integer_port_id(base):
    msg = raises(ParseError, edit(base, lambda r: port_el(r, "add", 2).set("id", "two")))
    assert names_layer(msg, "Add", "add", "2") and "two" in msg


def test_duplicate_port_id(base):
    msg = raises(ParseError, edit(base, lambda r: port_el(r, "add", 2).set("id", "1")))
    assert names_layer(msg, "Add", "add", "2") and "1" in msg


# ---------------------------------------------------------------------------------------------
# Graph structure
# ---------------------------------------------------------------------------------------------


def test_dangling_edge_to_missing_layer(base):
    msg = raises(ParseError, edit(base, lambda r: edge_el(r, "5", "0").set("to-layer", "99")))
    assert "99" in msg


def test_dangling_edge_from_missing_port(base):
    msg = raises(ParseError, edit(base, lambda r: edge_el(r, "4", "1").set("from-port", "7")))
    assert names_layer(msg, "Const", "b", "3") and "port 7" in msg


def test_edge_to_an_output_port(base):
    msg = raises(ParseError, edit(base, lambda r: edge_el(r, "4", "1").set("to-port", "2")))
    assert names_layer(msg, "Add", "add2", "4") and "port 2" in msg


def test_edge_missing_attribute(base):
    def fn(root):
        del edge_el(root, "4", "1").attrib["from-port"]

    msg = raises(ParseError, edit(base, fn))
    assert "from-port" in msg


def test_duplicate_layer_id(base):
    msg = raises(ParseError, edit(base, lambda r: layer_el(r, "b").set("id", "1")))
    assert "duplicate" in msg and names_layer(msg, "Const", "b", "1")


def test_input_port_fed_twice(base):
    def fn(root):
        etree.SubElement(root.find("edges"), "edge", {"from-layer": "0", "from-port": "0",
                                                     "to-layer": "4", "to-port": "0"})

    msg = raises(ParseError, edit(base, fn))
    assert names_layer(msg, "Add", "add2", "4") and "port 0" in msg


def test_input_never_fed(base):
    def fn(root):
        edge = edge_el(root, "4", "1")
        edge.getparent().remove(edge)

    msg = raises(ParseError, edit(base, fn))
    assert names_layer(msg, "Add", "add2", "4") and "port 1" in msg


def _feed_add_from_add2(root):
    edge = edge_el(root, "2", "0")
    edge.set("from-layer", "4")
    edge.set("from-port", "2")


def test_cycle(base):
    # add's first input now comes from add2, which depends on add.
    msg = raises(ParseError, edit(base, _feed_add_from_add2))
    assert "cycle" in msg
    assert names_layer(msg, "Add", "add", "2") or names_layer(msg, "Add", "add2", "4")


def test_cycle_names_a_layer_on_the_cycle(base):
    """The Result listed first in the document sits downstream of the add <-> add2 cycle, not on it:
    the error must name a layer that is on the cycle."""
    def fn(root):
        _feed_add_from_add2(root)
        layers = root.find("layers")
        result = layer_el(root, "res")
        layers.remove(result)
        layers.insert(0, result)

    msg = raises(ParseError, edit(base, fn))
    assert "cycle" in msg
    assert names_layer(msg, "Add", "add", "2") or names_layer(msg, "Add", "add2", "4"), msg


def test_self_loop(base):
    def fn(root):
        edge = edge_el(root, "4", "1")
        edge.set("from-layer", "4")
        edge.set("from-port", "2")

    msg = raises(ParseError, edit(base, fn))
    assert "cycle" in msg and names_layer(msg, "Add", "add2", "4")


def test_wrong_input_count(base):
    def fn(root):
        extra = etree.SubElement(layer_el(root, "add2").find("input"), "port", id="9", precision="FP32")
        etree.SubElement(root.find("edges"), "edge", {"from-layer": "3", "from-port": "0",
                                                     "to-layer": "4", "to-port": "9"})
        assert extra is not None

    msg = raises(ParseError, edit(base, fn))
    assert names_layer(msg, "Add", "add2", "4") and "3 inputs" in msg


def test_layer_without_id(base):
    def fn(root):
        del layer_el(root, "b").attrib["id"]

    msg = raises(ParseError, edit(base, fn))
    assert "'b'" in msg or '"b"' in msg


# ---------------------------------------------------------------------------------------------
# Types, versions, attributes
# ---------------------------------------------------------------------------------------------


def test_unknown_layer_type(base):
    msg = raises(UnsupportedLayerError, edit(base, lambda r: layer_el(r, "add2").set("type", "FancyOp")))
    assert names_layer(msg, "FancyOp", "add2", "4")


def test_unknown_layer_version_lists_supported(base):
    msg = raises(UnsupportedLayerError, edit(base, lambda r: layer_el(r, "add2").set("version", "opset99")))
    assert names_layer(msg, "Add", "add2", "4")
    assert "opset99" in msg and "opset1" in msg


def test_unknown_gather_version_lists_all_supported(tmp_path):
    x = ops.parameter([3, 4], np.float32, name="x")
    g = ops.gather(x, ops.constant(np.array([2, 0], np.int32)), ops.constant(np.int32(0)), name="g")
    path = save_ov(ov.Model([ops.result(g)], [x], "g"), tmp_path)
    msg = raises(UnsupportedLayerError, edit(path, lambda r: layer_el(r, "g").set("version", "opset42")))
    assert names_layer(msg, "Gather", "g", "3")
    for version in ("opset1", "opset7", "opset8"):
        assert version in msg


@pytest.mark.parametrize("version", ["12", "9", "0", "abc", ""])
def test_unknown_ir_version_lists_supported(base, version):
    msg = raises(ParseError, edit(base, lambda r: r.set("version", version)))
    if version.isdigit():
        assert "10" in msg and "11" in msg and version in msg


def test_unknown_port_precision(base):
    msg = raises(ParseError, edit(base, lambda r: port_el(r, "add", 2).set("precision", "FP128")))
    assert names_layer(msg, "Add", "add", "2") and "port 2" in msg and "FP128" in msg


def test_unknown_const_element_type(base):
    msg = raises(LayerAttributeError, edit(base, lambda r: layer_el(r, "w").find("data").set("element_type", "f128")))
    assert names_layer(msg, "Const", "w", "1") and "element_type" in msg and "f128" in msg


def test_unknown_parameter_element_type(base):
    msg = raises(LayerAttributeError,
                 edit(base, lambda r: layer_el(r, "data").find("data").set("element_type", "q4")))
    assert names_layer(msg, "Parameter", "data", "0") and "q4" in msg


def test_bad_auto_broadcast(base):
    msg = raises(LayerAttributeError,
                 edit(base, lambda r: layer_el(r, "add").find("data").set("auto_broadcast", "sometimes")))
    assert names_layer(msg, "Add", "add", "2") and "auto_broadcast" in msg and "sometimes" in msg


def _prior_grid_ir(tmp_path: Path, **attrs) -> Path:
    b, _, _, _ = prior_grid_network("pg", np.zeros((2, 4), np.float32), (1, 4, 3, 5), (1, 3, 30, 50))
    path = b.save(tmp_path / "pg.xml")
    irgrid.read_model(path)  # valid before the edit

    def fn(root):
        data = layer_el(root, "pg").find("data")
        for key, value in attrs.items():
            data.set(key, value)

    return edit(path, fn, "pg_bad")


@pytest.mark.parametrize("attr,value", [("flatten", "maybe"), ("flatten", "yes"), ("h", "-1"), ("w", "2.5"),
                                        ("h", "many"), ("stride_x", "abc"), ("stride_y", "nan"),
                                        ("stride_x", "inf"), ("stride_y", "-4")])
def test_prior_grid_bad_attribute(tmp_path, attr, value):
    msg = raises(LayerAttributeError, _prior_grid_ir(tmp_path, **{attr: value}))
    assert names_layer(msg, "ExperimentalDetectronPriorGridGenerator", "pg", "3")
    assert attr in msg and value in msg


def _grid_sample_ir(tmp_path: Path) -> Path:
    data = ops.parameter([1, 2, 4, 4], np.float32, name="data")
    grid = ops.parameter([1, 3, 3, 2], np.float32, name="grid")
    gs = ops9.grid_sample(data, grid, {"align_corners": False, "mode": "bilinear", "padding_mode": "zeros"})
    gs.set_friendly_name("gs")
    return save_ov(ov.Model([ops.result(gs)], [data, grid], "gs"), tmp_path, "gs")


@pytest.mark.parametrize("attr,value", [("mode", "foo"), ("padding_mode", "mirror"), ("align_corners", "maybe")])
def test_grid_sample_bad_attribute(tmp_path, attr, value):
    path = _grid_sample_ir(tmp_path)
    irgrid.read_model(path)
    msg = raises(LayerAttributeError, edit(path, lambda r: layer_el(r, "gs").find("data").set(attr, value)))
    assert names_layer(msg, "GridSample", "gs", "2") and attr in msg and value in msg


def test_missing_required_attribute(tmp_path):
    x = ops.parameter([2], np.float32, name="x")
    c = ops.convert(x, "i32", name="conv")
    path = save_ov(ov.Model([ops.result(c)], [x], "c"), tmp_path)

    def fn(root):
        del layer_el(root, "conv").find("data").attrib["destination_type"]

    msg = raises(LayerAttributeError, edit(path, fn))
    assert names_layer(msg, "Convert", "conv", "1") and "destination_type" in msg


def test_bad_gather_batch_dims(tmp_path):
    x = ops.parameter([3, 4], np.float32, name="x")
    g = ops.gather(x, ops.constant(np.array([2, 0], np.int32)), ops.constant(np.int32(0)), name="g")
    path = save_ov(ov.Model([ops.result(g)], [x], "g"), tmp_path)
    msg = raises(LayerAttributeError, edit(path, lambda r: layer_el(r, "g").find("data").set("batch_dims", "1.5")))
    assert names_layer(msg, "Gather", "g", "3") and "batch_dims" in msg


# ---------------------------------------------------------------------------------------------
# Not an IR at all
# ---------------------------------------------------------------------------------------------


def test_not_well_formed(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text('<?xml version="1.0"?>\n<net name="x" version="11"><layers><layer id="0"></net>')
    raises(ParseError, path)


def test_wrong_root(tmp_path):
    path = tmp_path / "root.xml"
    path.write_text('<?xml version="1.0"?>\n<model version="11"/>')
    msg = raises(ParseError, path)
    assert "<model>" in msg and "<net>" in msg


def test_missing_xml(tmp_path):
    msg = raises(ParseError, tmp_path / "nothing_here.xml")
    assert "nothing_here.xml" in msg


def test_binary_garbage(tmp_path):
    path = tmp_path / "garbage.xml"
    path.write_bytes(bytes(range(256)) * 4)
    raises(ParseError, path)


# ---------------------------------------------------------------------------------------------
# Unsafe XML: external entities, entity expansion bombs (run in a child process with a timeout).
# ---------------------------------------------------------------------------------------------

_LAYER = ('<layers><layer id="0" name="{name}" type="Parameter" version="opset1"><data shape="1" '
          'element_type="f32"/><output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>'
          '</layers><edges/>')

_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    import irgrid
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        irgrid.read_model(sys.argv[1])
        result = {"error": None}
    except Exception as exc:
        result = {"error": type(exc).__name__, "message": str(exc)}
    result["seconds"] = time.perf_counter() - start
    result["rss_growth_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    print(json.dumps(result))
""")


def _read_in_child(path: Path, timeout: float = 30.0) -> dict:
    import json

    env = dict(os.environ, IRGRID_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True,
                          timeout=timeout, cwd=path.parent, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("TOPSECRET-4242-DO-NOT-LEAK")
    return path


@pytest.mark.parametrize("where", ["attribute", "text", "name"])
def test_xxe_general_entity(tmp_path, secret, where):
    entity = "&xxe;"
    layers = _LAYER.format(name=entity if where == "name" else "p")
    body = {"attribute": f'<net name="{entity}" version="11">{layers}</net>',
            "text": f'<net name="m" version="11">{layers}<meta>{entity}</meta></net>',
            "name": f'<net name="m" version="11">{layers}</net>'}[where]
    path = tmp_path / "xxe.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file://{secret}">]>\n{body}')
    with pytest.raises(ParseError) as info:
        irgrid.read_model(path)
    assert type(info.value) is ParseError
    assert "TOPSECRET" not in str(info.value) and "TOPSECRET" not in repr(info.value.__cause__)


def test_xxe_parameter_entity(tmp_path, secret):
    path = tmp_path / "xxe_param.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY % ext SYSTEM "file://{secret}"> %ext;]>\n'
                    f'<net name="m" version="11">{_LAYER.format(name="p")}</net>')
    msg = raises(ParseError, path)
    assert "TOPSECRET" not in msg


def test_xxe_external_dtd(tmp_path, secret):
    path = tmp_path / "xxe_dtd.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE net SYSTEM "file://{secret}">\n'
                    f'<net name="m" version="11">{_LAYER.format(name="p")}</net>')
    msg = raises(ParseError, path)
    assert "TOPSECRET" not in msg


def test_xxe_never_opens_the_file(tmp_path):
    """The entity points at a FIFO: opening it for reading would block with no writer, so a reader that
    touches the file hangs and the child process times out."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    path = tmp_path / "xxe_fifo.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY xxe SYSTEM "file://{fifo}">'
                    f'<!ENTITY % p SYSTEM "file://{fifo}"> %p;]>\n'
                    f'<net name="&xxe;" version="11">{_LAYER.format(name="&xxe;")}&xxe;</net>')
    try:
        result = _read_in_child(path, timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("reading the model opened the external entity (blocked on the FIFO)")
    assert result["error"] == "ParseError"


def _billion_laughs(levels: int = 10, fanout: int = 10, where: str = "text") -> str:
    entities = '<!ENTITY lol0 "lollollollollollollollollollol">\n'
    for i in range(1, levels):
        entities += f'<!ENTITY lol{i} "' + f"&lol{i - 1};" * fanout + '">\n'
    ref = f"&lol{levels - 1};"
    name = ref if where == "attribute" else "p"
    body = _LAYER.format(name=name) + (f"<meta>{ref}</meta>" if where == "text" else "")
    return f'<?xml version="1.0"?>\n<!DOCTYPE net [\n{entities}]>\n<net name="m" version="11">{body}</net>'


@pytest.mark.parametrize("where", ["text", "attribute", "unused"])
def test_billion_laughs_fails_fast_with_bounded_memory(tmp_path, where):
    path = tmp_path / "lol.xml"
    path.write_text(_billion_laughs(where=where))  # 10**10 * 30 bytes if expanded
    result = _read_in_child(path, timeout=30)
    assert result["error"] == "ParseError", result
    assert result["seconds"] < 2.0, result
    assert result["rss_growth_kib"] < 64 * 1024, result


def test_quadratic_blowup_fails_fast(tmp_path):
    big = "A" * 100_000
    refs = "&a;" * 20_000  # 2 GB if expanded
    path = tmp_path / "quad.xml"
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "{big}">]>\n'
                    f'<net name="m" version="11">{_LAYER.format(name="p")}<meta>{refs}</meta></net>')
    result = _read_in_child(path, timeout=30)
    assert result["error"] == "ParseError", result
    assert result["seconds"] < 2.0, result
    assert result["rss_growth_kib"] < 256 * 1024, result


# ---------------------------------------------------------------------------------------------
# Absurd declared shapes: refused before anything is allocated.
# ---------------------------------------------------------------------------------------------


def test_port_dim_of_ten_to_the_fifteen(base):
    def fn(root):
        for port in (port_el(root, "add", 2), port_el(root, "add2", 0)):
            port.findall("dim")[2].text = str(10**15)

    msg = raises(ParseError, edit(base, fn), seconds=1.0)
    assert names_layer(msg, "Add", "add", "2") and "port 2" in msg


def test_port_dims_whose_product_is_astronomical(base):
    def fn(root):
        for dim in port_el(root, "add2", 2).findall("dim"):
            dim.text = str(2**40)

    msg = raises(ParseError, edit(base, fn), seconds=1.0)
    assert names_layer(msg, "Add", "add2", "4") and "port 2" in msg


def test_port_dim_with_thousands_of_digits(base):
    def fn(root):
        port_el(root, "add", 2).findall("dim")[0].text = "9" * 5000

    msg = raises(ParseError, edit(base, fn), seconds=1.0)
    assert names_layer(msg, "Add", "add", "2")


def test_parameter_shape_of_ten_to_the_fifteen(base):
    msg = raises(LayerAttributeError,
                 edit(base, lambda r: layer_el(r, "data").find("data").set("shape", f"1,3,{10**15},4")),
                 seconds=1.0)
    assert names_layer(msg, "Parameter", "data", "0")


def test_const_shape_astronomical_size_small(base):
    """Each dim is below any per-dim limit but the byte count is ~3e29 while size says 12."""
    huge = str(2**48)
    msg = raises(WeightsError, edit(base, lambda r: layer_el(r, "w").find("data").set("shape", f"{huge},{huge}")),
                 seconds=1.0)
    assert names_layer(msg, "Const", "w", "1") and "size 12" in msg


def test_const_shape_and_size_huge(base):
    """Shape and size agree (4 TB) but the .bin has 16 bytes: refused without mapping 4 TB."""
    def fn(root):
        data = layer_el(root, "w").find("data")
        data.set("shape", "1000000,1000000")
        data.set("size", str(4 * 10**12))

    msg = raises(WeightsError, edit(base, fn), seconds=1.0)
    assert names_layer(msg, "Const", "w", "1") and "past the end" in msg


def test_huge_kernel_output_refused_at_compile(tmp_path):
    """A 65536 x 65536 feature map gives a prior grid of ~343 GB: reading works, checking reports it
    (nothing is allocated), compiling refuses with a ShapeError instead of crashing."""
    b = IRBuilder("huge")
    priors = b.const(np.zeros((5, 4), np.float32), "priors")
    feat = b.parameter("feat", (1, 1, 65536, 65536))
    image = b.parameter("image", (1, 3, 800, 800))
    (y,) = b.layer("ExperimentalDetectronPriorGridGenerator", "opset6", [priors, feat, image],
                   {"flatten": True, "h": 0, "w": 0, "stride_x": 0.0, "stride_y": 0.0}, name="pg")
    b.result(y, "rois")
    path = b.save(tmp_path / "huge.xml")
    model = irgrid.read_model(path)
    (problem,) = irgrid.check_model(model)
    assert (problem.kind, problem.layer.name, problem.port) == ("memory", "pg", 3) and "320.0 GiB" in problem.message
    msg = raises(ShapeError, model, fn=irgrid.compile_model, seconds=2.0)
    assert names_layer(msg, "ExperimentalDetectronPriorGridGenerator", "pg", "3") and "GiB" in msg


_FOLD_CHILD = textwrap.dedent("""
    import json, resource, sys, time
    # Safety net: this child may not grow past 4 GiB of address space, whatever irgrid does.
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import irgrid
    start = time.perf_counter()
    try:
        irgrid.compile_model(sys.argv[1])
        result = {"error": None}
    except BaseException as exc:
        result = {"error": type(exc).__name__, "message": str(exc),
                  "irgrid": isinstance(exc, irgrid.IRGridError)}
    result["seconds"] = time.perf_counter() - start
    print(json.dumps(result))
""")


def test_constant_folding_of_huge_broadcast_refused(tmp_path):
    """Two small Consts (800 kB each) broadcast by an Add into a 200000 x 200000 f32 tensor (149 GiB,
    more than this machine has). Compiling folds constants: that must be refused with an irgrid
    ShapeError, as kernel outputs are (ops.common.allocate), not attempted (MemoryError / OOM kill)."""
    import json

    a = ops.constant(np.ones((200_000, 1), np.float32), name="a")
    b = ops.constant(np.ones((1, 200_000), np.float32), name="b")
    y = ops.add(a, b, name="huge_add")
    x = ops.parameter([1], np.float32, name="x")
    z = ops.multiply(y, x, name="scale")
    path = save_ov(ov.Model([ops.result(z)], [x], "fold"), tmp_path)
    assert path.with_suffix(".bin").stat().st_size < 2_000_000
    problems = irgrid.check_model(path)  # declared shapes are consistent; the sizes are absurd
    assert [(p.kind, p.layer.name) for p in problems] == [("memory", "huge_add"), ("memory", "scale")]
    env = dict(os.environ, IRGRID_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-c", _FOLD_CHILD, str(path)], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["error"] == "ShapeError", result
    assert result["seconds"] < 2.0, result
    assert names_layer(result["message"], "Add", "huge_add", "2") or "GiB" in result["message"], result


# ---------------------------------------------------------------------------------------------
# Models OpenVINO's reader refuses too, and models too large for this machine
# ---------------------------------------------------------------------------------------------


def test_no_layers(base):
    def strip(root):
        for layer in root.find("layers"):
            root.find("layers").remove(layer)
        for edge in root.find("edges"):
            root.find("edges").remove(edge)
    assert "has no layers" in raises(ParseError, edit(base, strip))


def test_no_result(base):
    def drop_result(root):
        layers = root.find("layers")
        layers.remove(layer_el(root, "res"))
        edges = root.find("edges")
        edges.remove(edge_el(root, "5", "0"))
    assert "no Result layer" in raises(ParseError, edit(base, drop_result))


@pytest.mark.parametrize("bad_id", ["-1", "x7", "1.5"])
def test_layer_id_not_a_non_negative_integer(base, bad_id):
    def renumber(root):
        layer_el(root, "b").set("id", bad_id)
        root.find(".//edges/edge[@from-layer='3']").set("from-layer", bad_id)
    assert f"layer id '{bad_id}' is not a non-negative integer" in raises(ParseError, edit(base, renumber))


def test_reshape_without_special_zero(tmp_path):
    data = ops.parameter([2, 3], np.float32, name="x")
    shaped = ops.reshape(data, ops.constant(np.array([3, 2], np.int64)), special_zero=False)
    path = save_ov(ov.Model([ops.result(shaped)], [data]), tmp_path)
    path.write_text(path.read_text().replace('special_zero="false"', ""))
    message = raises(LayerAttributeError, path)
    assert names_layer(message, "Reshape", shaped.get_friendly_name(), "2") and "special_zero" in message


def test_parameter_too_large_for_this_machine(base):
    """112 GiB of f32: `check` reports it (naming the layer, port and bytes) and compile_model refuses it
    before anything is allocated, instead of numpy's MemoryError at the first call."""
    def enlarge(root):
        for element in (port_el(root, "data", 0), port_el(root, "add", 0), port_el(root, "add", 2),
                        port_el(root, "add2", 0), port_el(root, "add2", 2), port_el(root, "res", 0)):
            element.findall("dim")[2].text = "100000"
            element.findall("dim")[3].text = "100000"
        layer_el(root, "data").find("data").set("shape", "1,3,100000,100000")
    path = edit(base, enlarge)
    problems = irgrid.check_model(path)
    assert {p.kind for p in problems} == {"memory"}
    first = problems[0]
    assert first.layer.name == "data" and first.port == 0 and "needs 111.8 GiB" in first.message
    assert "needs 111.8 GiB" in raises(ShapeError, path, fn=irgrid.compile_model)


# ---------------------------------------------------------------------------------------------
# Sizes an attribute or a large file sets (found by fuzzing, 2026-11-27)
# ---------------------------------------------------------------------------------------------


def _split_model(tmp_path, variadic: bool, count: int) -> Path:
    """A Split (num_splits=count) or a VariadicSplit (lengths a Parameter of `count` values) on a
    dynamic dim, declaring one output: its count is refused before anything lists its outputs."""
    b = IRBuilder("split")
    x = b.parameter("x", (2, None))
    axis = b.const(np.array(1, np.int64))
    if variadic:
        lengths = b.parameter("lengths", (count,), "i64")
        (part,) = b.layer("VariadicSplit", "opset1", [x, axis, lengths], {}, outputs=[((2, None), "f32")])
    else:
        (part,) = b.layer("Split", "opset1", [x, axis], {"num_splits": count}, outputs=[((2, None), "f32")])
    b.result(part)
    return b.save(tmp_path / "split.xml")


@pytest.mark.parametrize("variadic", [False, True])
def test_split_into_10_to_the_8_parts_refused_at_once(tmp_path, variadic):
    path = _split_model(tmp_path, variadic, 10 ** 8)
    message = raises(ShapeError, path, fn=irgrid.compile_model)
    assert "produces 100000000 outputs but the IR declares 1" in message
    assert ("VariadicSplit" if variadic else "Split") in message


@pytest.mark.parametrize("value", ["9223372036854775808", "-9223372036854775809", "9999999999999999999"])
def test_integer_attribute_beyond_int64(tmp_path, value):
    """OpenVINO stores integer attributes as int64; a larger one would overflow a kernel's C long."""
    data = ops.parameter([1, 2, 4, 4], np.float32, name="x")
    conv = ops.convolution(data, ops.constant(np.ones((1, 2, 1, 1), np.float32)), [1, 1], [0, 0], [0, 0], [1, 1])
    path = save_ov(ov.Model([ops.result(conv)], [data]), tmp_path)
    path.write_text(path.read_text().replace('strides="1, 1"', f'strides="{value}, 1"'))
    message = raises(LayerAttributeError, path)
    assert "strides" in message and "outside the int64 range" in message


def _big_ir(path: Path, layers: list[str], edges: list[str]) -> Path:
    path.write_text(f'<?xml version="1.0"?><net name="big" version="11"><layers>{"".join(layers)}</layers>'
                    f'<edges>{"".join(edges)}</edges></net>')
    path.with_suffix(".bin").write_bytes(b"")
    return path


PARAMETER_1 = ('<layer id="0" name="x" type="Parameter" version="opset1"><data shape="1" element_type="f32"/>'
               '<output><port id="0" precision="FP32"><dim>1</dim></port></output></layer>')


def test_long_cycle_read_in_linear_time(tmp_path):
    """20000 Adds on one cycle (4 MB of XML): found and reported in seconds (the edge scan per blocked
    layer took 23 s)."""
    n = 20000
    layers, edges = [PARAMETER_1], []
    for i in range(1, n + 1):
        layers.append(f'<layer id="{i}" name="a{i}" type="Add" version="opset1"><input><port id="0"><dim>1</dim>'
                      '</port><port id="1"><dim>1</dim></port></input><output><port id="2" precision="FP32">'
                      '<dim>1</dim></port></output></layer>')
        edges += [f'<edge from-layer="0" from-port="0" to-layer="{i}" to-port="0"/>',
                  f'<edge from-layer="{i - 1 if i > 1 else n}" from-port="2" to-layer="{i}" to-port="1"/>']
    path = _big_ir(tmp_path / "cycle.xml", layers, edges)
    assert "cycle" in raises(ParseError, path, seconds=15)


def test_layer_of_many_ports_read_in_linear_time(tmp_path):
    """A Concat of 40000 inputs: each edge finds its port by id in a dict (a scan of the ports per edge
    was quadratic: 7 s at 20000)."""
    n = 40000
    ports = "".join(f'<port id="{i}" precision="FP32"><dim>1</dim></port>' for i in range(n))
    layers = [PARAMETER_1,
              f'<layer id="1" name="c" type="Concat" version="opset1"><data axis="0"/><input>{ports}</input>'
              f'<output><port id="{n}" precision="FP32"><dim>{n}</dim></port></output></layer>',
              '<layer id="2" name="r" type="Result" version="opset1"><input><port id="0" precision="FP32">'
              f'<dim>{n}</dim></port></input></layer>']
    edges = [f'<edge from-layer="0" from-port="0" to-layer="1" to-port="{i}"/>' for i in range(n)]
    edges.append(f'<edge from-layer="1" from-port="{n}" to-layer="2" to-port="0"/>')
    path = _big_ir(tmp_path / "concat.xml", layers, edges)
    start = time.perf_counter()
    compiled = irgrid.compile_model(path)
    assert time.perf_counter() - start < 15
    (joined,) = compiled({"x": np.arange(1, 2, dtype=np.float32)}).values()
    np.testing.assert_array_equal(joined, np.ones(n, np.float32))  # n copies of x

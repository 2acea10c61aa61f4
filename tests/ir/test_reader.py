"""irgrid.read_model on IRs written by OpenVINO itself (ov.save_model), compared with OpenVINO's reading.

Oracles: OpenVINO's own parse of the same file (`core.read_model` -> Constant.get_data(), partial
shapes, tensor names) and OpenVINO's CPU plugin run of it (at f32). bf16 has no numpy type: OpenVINO
hands its bits over as a float16-typed view, which the tests widen to f32 themselves (bits << 16).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

import irgrid
from irgrid.ir.dims import Dim
from oracles import save_ov

# ---------------------------------------------------------------------------------------------
# Every element type: a Const of that type feeding a Result.
# "extreme" values exercise the whole range of the type (compared with OpenVINO's parse of the
# Const, bit for bit); "plain" values stay where OpenVINO's CPU plugin computes the type exactly
# (it runs f64 in f32, and i64/u32/u64 in i32, saturating), to compare with OpenVINO's run.
# ---------------------------------------------------------------------------------------------

BF16_VALUES = np.array([1.5, -2.25, 3.0e38, 1 / 3, -0.0, np.inf, 1e-40, 7.0], np.float32)

EXTREME = {
    "f16": np.array([[1.5, -2.25, 65504, np.inf], [-np.inf, 6e-8, 0.0, -0.0]], np.float16),
    "bf16": BF16_VALUES,
    "f32": np.array([[1.5, -2.25, 3.4e38, np.inf], [1e-45, 0.1, -0.0, np.nan]], np.float32),
    "f64": np.array([[0.1, 1e300, -1e-300, 5.0, 2.0**-1074, -np.inf]], np.float64),
    "i8": np.array([-128, 127, 0, -1], np.int8),
    "u8": np.array([0, 255, 7], np.uint8),
    "i16": np.array([-32768, 32767, 12], np.int16),
    "u16": np.array([0, 65535, 300], np.uint16),
    "i32": np.array([[-2**31, 2**31 - 1], [0, -7]], np.int32),
    "i64": np.array([-2**63, 2**63 - 1, 5, -(2**40)], np.int64),
    "u32": np.array([0, 2**32 - 1, 2**31], np.uint32),
    "u64": np.array([0, 2**64 - 1, 2**63 + 5], np.uint64),
    "boolean": np.array([[True, False, True], [False, False, True]], bool),
}

PLAIN = {
    "f16": np.array([0.5, -3.0, 1000.0, 0.099975586], np.float16),
    "bf16": np.array([1.5, -2.25, 0.33203125, 256.0], np.float32),
    "f32": np.array([[1.5, -2.25], [0.1, 12345.678]], np.float32),
    "f64": np.array([0.1, -2.5, 1.0e10, 3.0], np.float64),
    "i8": np.array([-128, 127, 3], np.int8),
    "u8": np.array([0, 255, 9], np.uint8),
    "i16": np.array([-32768, 32767], np.int16),
    "u16": np.array([0, 65535], np.uint16),
    "i32": np.array([-2**31, 2**31 - 1, 4], np.int32),
    "i64": np.array([-2**31, 2**31 - 1, -5], np.int64),
    "u32": np.array([0, 2**31 - 1, 17], np.uint32),
    "u64": np.array([0, 2**31 - 1, 17], np.uint64),
    "boolean": np.array([True, False, False, True], bool),
}

NUMPY_DTYPE = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64, "i8": np.int8,
               "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "i64": np.int64,
               "u32": np.uint32, "u64": np.uint64, "boolean": np.bool_}


def widen_bf16(raw: np.ndarray) -> np.ndarray:
    """OpenVINO's bf16 data (a float16-typed view of the bits) as f32, computed here, not by irgrid."""
    return (np.ascontiguousarray(raw).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def bits(a: np.ndarray) -> np.ndarray:
    """A view that compares floats bit for bit (NaN, -0.0 and denormals included)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    return a


def _const_model(et: str) -> ov.Model:
    ov_type = getattr(ov.Type, et)
    extreme = ops.constant(EXTREME[et], ov_type, name="extreme_const")
    plain = ops.constant(PLAIN[et], ov_type, name="plain_const")
    extreme.output(0).get_tensor().set_names({"extreme"})
    plain.output(0).get_tensor().set_names({"plain"})
    outputs = [ops.result(extreme), ops.result(plain)]
    if et == "bf16":
        converted = ops.convert(plain, "f32")
        converted.output(0).get_tensor().set_names({"plain_f32"})
        outputs.append(ops.result(converted))
    return ov.Model(outputs, [], f"const_{et}")


@pytest.mark.parametrize("et", list(EXTREME))
def test_const_payload_matches_openvino_parse(et, tmp_path, ov_core):
    path = save_ov(_const_model(et), tmp_path)
    assert f'element_type="{et}"' in path.read_text()

    ov_consts = {op.get_friendly_name(): op.get_data() for op in ov_core.read_model(str(path)).get_ops()
                 if op.get_type_name() == "Constant"}
    model = irgrid.read_model(path)
    consts = {layer.name: layer for layer in model.layers.values() if layer.type == "Const"}
    assert set(consts) == {"extreme_const", "plain_const"}
    for name, layer in consts.items():
        expected = ov_consts[name]
        if et == "bf16":
            expected = widen_bf16(expected)
        assert layer.const.dtype == NUMPY_DTYPE[et]
        assert layer.const.shape == expected.shape
        np.testing.assert_array_equal(bits(layer.const), bits(expected.astype(NUMPY_DTYPE[et])))
        assert layer.outputs[0].element_type == et
    # The numbers the test put in, too (bf16: values already on the bf16 grid except 1/3 and 1e-40).
    if et != "bf16":
        np.testing.assert_array_equal(bits(consts["extreme_const"].const), bits(EXTREME[et]))


@pytest.mark.parametrize("et", list(EXTREME))
def test_const_compiled_output_matches_openvino_run(et, tmp_path, ov_core, ov_run):
    path = save_ov(_const_model(et), tmp_path)
    ov_compiled = ov_core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ov_result = ov_compiled([])
    ov_outputs = {out.get_any_name(): np.asarray(ov_result[out]) for out in ov_compiled.outputs}

    outputs = irgrid.compile_model(path)({})
    expected_names = ["extreme", "plain"] + (["plain_f32"] if et == "bf16" else [])
    assert list(outputs) == expected_names
    plain = outputs["plain"]
    assert plain.dtype == NUMPY_DTYPE[et]
    ov_plain = ov_outputs["plain"]
    if et == "bf16":
        ov_plain = widen_bf16(ov_plain)
        # Convert(bf16 -> f32) in OpenVINO equals irgrid's widened carrier exactly.
        np.testing.assert_array_equal(outputs["plain_f32"], ov_outputs["plain_f32"])
        np.testing.assert_array_equal(plain, ov_plain)
    elif et == "f64":
        # OpenVINO's CPU plugin runs f64 in f32: 0.1 comes back rounded to f32 (tolerance 1 f32 ulp).
        np.testing.assert_allclose(plain, ov_plain, rtol=2.0**-23, atol=0)
    else:
        np.testing.assert_array_equal(plain, ov_plain.astype(NUMPY_DTYPE[et]))
    # The extreme Const's output is the value read from the .bin, as OpenVINO parses it.
    ov_extreme = {op.get_friendly_name(): op.get_data() for op in ov_core.read_model(str(path)).get_ops()
                  if op.get_type_name() == "Constant"}["extreme_const"]
    if et == "bf16":
        ov_extreme = widen_bf16(ov_extreme)
    np.testing.assert_array_equal(bits(outputs["extreme"]), bits(ov_extreme.astype(NUMPY_DTYPE[et])))


def test_bf16_const_widening_is_exact(tmp_path, ov_core):
    """1/3 and 1e-40 are not on the bf16 grid: OpenVINO rounds them when building the Const; irgrid
    must read back exactly the 16 bits stored, widened (value = bits << 16)."""
    path = save_ov(_const_model("bf16"), tmp_path)
    model = irgrid.read_model(path)
    const = next(layer for layer in model.layers.values() if layer.name == "extreme_const")
    # Decode the stored bits straight from the .bin, independently of irgrid.
    offset = int(const.raw_attrs["offset"])
    raw = np.frombuffer(path.with_suffix(".bin").read_bytes(), "<u2", count=BF16_VALUES.size, offset=offset)
    expected = (raw.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(bits(const.const), bits(expected))
    # Values on the grid survive unchanged.
    on_grid = [0, 1, 4, 5, 7]
    np.testing.assert_array_equal(const.const[on_grid], BF16_VALUES[on_grid])


# ---------------------------------------------------------------------------------------------
# Ports: dynamic dims, intervals, several tensor names, rt_info, IR v10.
# ---------------------------------------------------------------------------------------------

def _dynamic_model() -> ov.Model:
    x = ops.parameter(ov.PartialShape([-1, ov.Dimension(1, 10), 4, ov.Dimension(2, -1)]), np.float32, name="x")
    x.output(0).get_tensor().set_names({"x", "x_alias", "with,comma"})
    c = ops.constant(np.arange(4, dtype=np.float32).reshape(4, 1), name="c")
    y = ops.multiply(ops.add(x, c), ops.constant(np.float32(2.0)))
    y.output(0).get_tensor().set_names({"y", "y_other"})
    return ov.Model([ops.result(y)], [x], "dynamic")


def _set_port_dims(xml: str, dims: list[str]) -> str:
    """Rewrite every 4-D port's dims, and the Parameter's `shape`, as `dims` (text edit of what
    ov.save_model wrote), so OpenVINO's parse of the Parameter shows the same dims."""
    root = etree.fromstring(xml.encode())
    for port in root.iter("port"):
        found = port.findall("dim")
        if len(found) == 4:
            for element, text in zip(found, dims):
                element.text = text
    for data in root.iterfind(".//layer[@type='Parameter']/data"):
        data.set("shape", ",".join(dims))
    return etree.tostring(root, encoding="unicode")


def _bounds(dim) -> tuple[int, int]:
    """(min, max) of an irgrid Dim in OpenVINO's convention (-1: unbounded)."""
    return dim.lo, -1 if dim.hi is None else dim.hi


def _ov_bounds(partial_shape) -> list[tuple[int, int]]:
    return [(d.get_min_length(), d.get_max_length()) for d in partial_shape]


EXPECTED_BOUNDS = {"?": (0, -1), "-1": (0, -1), "1..10": (1, 10), "2..": (2, -1), "..7": (0, 7),
                   "0..": (0, -1), "2..6": (2, 6), "1..9": (1, 9), "4": (4, 4)}


def _write(path: Path, text: str, bin_from: Path) -> Path:
    path.write_text(text)
    path.with_suffix(".bin").write_bytes(bin_from.with_suffix(".bin").read_bytes())
    return path


def test_dynamic_dims_minus_one_as_saved(tmp_path, ov_core, ov_run):
    path = save_ov(_dynamic_model(), tmp_path)
    text = path.read_text()
    assert "<dim>-1</dim>" in text
    model = irgrid.read_model(path)
    x = model.layers[next(lid for lid, layer in model.layers.items() if layer.name == "x")]
    assert x.outputs[0].dims == (Dim(0, None), Dim(0, None), Dim(4, 4), Dim(0, None))
    # The Parameter's own `shape` attribute keeps the interval OpenVINO wrote.
    assert [str(d) for d in x.attrs["shape"]] == ["?", "1..10", "4", "2.."]
    data = np.random.default_rng(1).normal(size=(3, 5, 4, 2)).astype(np.float32)
    (expected,) = ov_run(str(path), [data])
    out = irgrid.compile_model(path)({"x": data})
    np.testing.assert_allclose(out["y"], expected, rtol=1e-6, atol=0)
    np.testing.assert_allclose(out["y"], (data + np.arange(4, dtype=np.float32).reshape(4, 1)) * 2, rtol=1e-6)


@pytest.mark.parametrize("dims", [["?", "1..10", "4", "2.."], ["-1", "1..10", "4", "2.."],
                                  ["-1", "1..10", "4", "..7"], ["?", "?", "4", "-1"],
                                  ["0..", "2..6", "4", "1..9"]])
def test_port_dims_question_mark_and_ranges(dims, tmp_path, ov_core, ov_run):
    saved = save_ov(_dynamic_model(), tmp_path)
    path = _write(tmp_path / "edited.xml", _set_port_dims(saved.read_text(), dims), saved)
    # OpenVINO refuses "?" and "..7" inside <dim> (only its `shape` attributes take them); irgrid
    # reads both.
    ov_reads = not any(d == "?" or d.startswith("..") for d in dims)
    model = irgrid.read_model(path)
    expected = [EXPECTED_BOUNDS[d] for d in dims]
    # Every port carrying the 4-D value, and the Parameter's shape attribute, parse to these bounds.
    ports = [p for layer in model.layers.values() for p in layer.inputs + layer.outputs if len(p.dims) == 4]
    assert len(ports) == 6  # x out, Add in/out, Multiply in/out, Result in
    for port in ports:
        assert [_bounds(d) for d in port.dims] == expected
    x = next(layer for layer in model.layers.values() if layer.name == "x")
    assert [_bounds(d) for d in x.attrs["shape"]] == expected
    # Inside every interval: clean, and the run matches numpy (and OpenVINO where it reads the file).
    data = np.random.default_rng(2).normal(size=(2, 3, 4, 5)).astype(np.float32)
    assert irgrid.check_model(model, shapes={"x": data.shape}) == []
    out = irgrid.compile_model(model)({"x": data})["y"]
    np.testing.assert_allclose(out, (data + np.arange(4, dtype=np.float32).reshape(4, 1)) * 2, rtol=1e-6)
    if ov_reads:
        ov_model = ov_core.read_model(str(path))
        # ... which is how OpenVINO parses the same Parameter.
        assert _ov_bounds(ov_model.input(0).get_partial_shape()) == expected
        (reference,) = ov_run(str(path), [data])
        np.testing.assert_allclose(out, reference, rtol=1e-6, atol=0)


def test_interval_dims_are_constraints_for_check(tmp_path):
    saved = save_ov(_dynamic_model(), tmp_path)
    path = _write(tmp_path / "edited.xml", _set_port_dims(saved.read_text(), ["?", "1..10", "4", "2.."]), saved)
    model = irgrid.read_model(path)
    assert irgrid.check_model(model, shapes={"x": (1, 10, 4, 2)}) == []
    problems = irgrid.check_model(model, shapes={"x": (1, 11, 4, 2)})
    assert problems, "a dim of 11 lies outside the declared interval 1..10"
    assert all("1..10" in str(p) for p in problems)
    assert any(p.layer.name == "x" and p.port == 0 for p in problems)


def test_bounds_in_the_parameter_shape_are_constraints_for_check(tmp_path, ov_core):
    """ov.save_model writes a bounded dim (1..10) in the Parameter's `shape` only (its ports say -1);
    OpenVINO reads the bounds from there, and so does irgrid's check."""
    path = save_ov(_dynamic_model(), tmp_path)
    assert 'shape="?,1..10,4,2.."' in path.read_text()
    assert str(ov_core.read_model(str(path)).input(0).get_partial_shape()) == "[?,1..10,4,2..]"
    assert irgrid.check_model(path, shapes={"x": (1, 10, 4, 2)}) == []
    (problem,) = irgrid.check_model(path, shapes={"x": (1, 11, 4, 1)})
    assert problem.layer.name == "x" and "[?,1..10,4,2..] (dim 1, 3)" in str(problem)


def test_several_tensor_names(tmp_path, ov_core, ov_run):
    path = save_ov(_dynamic_model(), tmp_path)
    assert 'names="' in path.read_text()
    model = irgrid.read_model(path)
    ov_model = ov_core.read_model(str(path))
    x = next(layer for layer in model.layers.values() if layer.name == "x")
    assert set(x.outputs[0].names) == set(ov_model.input(0).get_names()) == {"x", "x_alias", "with,comma"}
    y = next(layer for layer in model.layers.values() if layer.type == "Multiply")
    assert set(y.outputs[0].names) == set(ov_model.output(0).get_names()) == {"y", "y_other"}
    data = np.ones((1, 2, 4, 3), np.float32)
    (expected,) = ov_run(str(path), [data])
    compiled = irgrid.compile_model(model)
    for name in ("x", "x_alias", "with,comma"):
        out = compiled({name: data})
        assert len(out) == 1 and next(iter(out)) in {"y", "y_other"}
        np.testing.assert_allclose(next(iter(out.values())), expected, rtol=1e-6)


def test_rt_info_is_tolerated(tmp_path, ov_core, ov_run):
    x = ops.parameter([1, 3, 4, 4], np.float32, name="x")
    x.set_layout(ov.Layout("NCHW"))
    y = ops.add(x, ops.constant(np.float32(1.5)))
    y.output(0).get_tensor().set_names({"y"})
    model = ov.Model([ops.result(y)], [x], "rt")
    model.set_rt_info("value", ["framework", "key"])
    saved = save_ov(model, tmp_path)
    root = etree.fromstring(saved.read_bytes())
    # Layer-level rt_info as older OpenVINO versions wrote it, and rt_info on an input port.
    for layer in root.iter("layer"):
        rt = etree.SubElement(layer, "rt_info")
        etree.SubElement(rt, "attribute", name="fused_names", version="0", value="a,b")
    for port in root.iter("port"):
        if port.getparent().tag == "input":
            etree.SubElement(etree.SubElement(port, "rt_info"), "attribute", name="old_api_map_order",
                             version="0", value="0,1,2,3")
    text = etree.tostring(root, encoding="unicode")
    assert text.count("<rt_info>") >= 4
    path = _write(tmp_path / "edited.xml", text, saved)
    data = np.random.default_rng(3).normal(size=(1, 3, 4, 4)).astype(np.float32)
    (expected,) = ov_run(str(path), [data])
    assert irgrid.check_model(path) == []
    np.testing.assert_array_equal(irgrid.compile_model(path)({"x": data})["y"], expected)


def test_ir_v10_accepted(tmp_path, ov_core, ov_run):
    saved = save_ov(_dynamic_model(), tmp_path)
    text = saved.read_text()
    text, count = re.subn(r'(<net [^>]*version=")11(")', r"\g<1>10\2", text)
    assert count == 1
    path = _write(tmp_path / "v10.xml", text, saved)
    model = irgrid.read_model(path)
    assert model.ir_version == 10
    data = np.random.default_rng(4).normal(size=(2, 2, 4, 3)).astype(np.float32)
    (expected,) = ov_run(str(path), [data])
    np.testing.assert_allclose(irgrid.compile_model(model)({"x": data})["y"], expected, rtol=1e-6)


def test_v10_precision_spellings(tmp_path):
    """IR v10 ports spell types as FP32/I64/BOOL; each maps to the canonical element type."""
    x = ops.parameter([2, 3], np.float32, name="x")
    idx = ops.constant(np.array([1, 0], np.int64), name="idx")
    g = ops.gather(x, idx, ops.constant(np.int64(0)))
    g.output(0).get_tensor().set_names({"g"})
    m = ov.Model([ops.result(g)], [x], "gather")
    saved = save_ov(m, tmp_path)
    text = saved.read_text().replace('version="11"', 'version="10"', 1)
    assert 'precision="I64"' in text and 'precision="FP32"' in text
    path = _write(tmp_path / "v10.xml", text, saved)
    model = irgrid.read_model(path)
    types = {p.element_type for layer in model.layers.values() for p in layer.inputs + layer.outputs}
    assert types <= {"f32", "i64", None} and {"f32", "i64"} <= types
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(irgrid.compile_model(model)({"x": data})["g"], data[[1, 0]])


def test_read_model_explicit_bin_path(tmp_path, ov_run):
    saved = save_ov(_dynamic_model(), tmp_path)
    other = tmp_path / "weights_elsewhere.bin"
    other.write_bytes(saved.with_suffix(".bin").read_bytes())
    saved.with_suffix(".bin").unlink()
    model = irgrid.read_model(saved, other)
    c = next(layer for layer in model.layers.values() if layer.name == "c")
    np.testing.assert_array_equal(c.const, np.arange(4, dtype=np.float32).reshape(4, 1))


def test_empty_const_as_saved_by_openvino(tmp_path, ov_run):
    """ov.save_model writes a zero-element Const with size="1" (one padding byte in the .bin);
    OpenVINO reads it back. Here: Transpose with an empty `order` (reverse all axes)."""
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    y = ops.transpose(x, ops.constant(np.array([], np.int64), name="order"))
    y.output(0).get_tensor().set_names({"y"})
    path = save_ov(ov.Model([ops.result(y)], [x], "empty_const"), tmp_path)
    assert re.search(r'<data element_type="i64" shape="0" offset="\d+" size="1"', path.read_text())
    data = np.random.default_rng(5).normal(size=(2, 3, 4)).astype(np.float32)
    (expected,) = ov_run(str(path), [data])
    model = irgrid.read_model(path)
    order = next(layer for layer in model.layers.values() if layer.name == "order")
    assert order.const.shape == (0,) and order.const.dtype == np.int64
    out = irgrid.compile_model(model)({"x": data})["y"]
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out, data.transpose(2, 1, 0))

"""Glue layers built with openvino.opset*, saved with save_ov, run by OpenVINO and by irgrid.

Oracle: OpenVINO's CPU plugin at f32 on the same IR. Floating results are compared exactly (these
layers move data, or do one IEEE operation that both sides do in f32), except where stated.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset7 as o7
import openvino.opset8 as o8
import openvino.opset13 as ops
import pytest
from lxml import etree

import irgrid
from oracles import assert_same, named, rng, run_both, save_ov


# ---------------------------------------------------------------------------------------------
# Convert
# ---------------------------------------------------------------------------------------------

CONVERT_SOURCE = np.array([0.0, -0.0, 0.4, 0.5, 0.6, 1.5, 2.5, -0.5, -1.5, -2.7, 3.99, 127.9, 128.0, -129.0,
                           255.5, 256.0, -300.0, 40000.0, -40000.0, 3e9, -3e9, 1e20, -1e20, 1e-3],
                          np.float32)
INT_DTYPES = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32}


@pytest.mark.parametrize("dst", ["i8", "u8", "i16", "u16", "i32", "f16", "f64", "boolean"])
def test_convert_from_f32(dst, tmp_path, ov_run):
    """Compared with OpenVINO where the Convert spec defines the result: for integer targets only values
    whose truncation fits the target (out of range, the spec says "undefined": OpenVINO's CPU plugin
    wraps through i32 there, irgrid saturates, tested separately below)."""
    values = CONVERT_SOURCE
    if dst in INT_DTYPES:
        info = np.iinfo(INT_DTYPES[dst])
        values = values[(np.trunc(values) >= info.min) & (np.trunc(values) <= info.max)]
        assert values.size >= 10
    x = ops.parameter(list(values.shape), np.float32, name="x")
    y = named(ops.convert(x, dst), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "cvt"), [values], tmp_path, ov_run)
    assert got[0].dtype == {**INT_DTYPES, "f16": np.float16, "f64": np.float64, "boolean": np.bool_}[dst]
    assert_same(expected, got)
    if dst in INT_DTYPES:  # truncation toward zero, computed here
        np.testing.assert_array_equal(got[0], np.trunc(values).astype(INT_DTYPES[dst]))


@pytest.mark.parametrize("dst", ["i8", "u8", "i32", "i64"])
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
def test_convert_a_scalar_to_integer(src, dst, tmp_path, ov_run):
    """A 0-d float (a shape subgraph's scalar) to an integer type: run, and folded as a constant."""
    x = ops.parameter([], src, name="x")
    y = named(ops.convert(x, dst), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "cvt"), [np.array(2.7, src)], tmp_path, ov_run)
    assert got[0].shape == () and got[0].dtype == expected[0].dtype
    assert_same(expected, got)
    folded = named(ops.add(ops.convert(ops.constant(np.array(3.9, src)), dst), ops.convert(x, dst)), "y")
    expected, got = run_both(ov.Model([ops.result(folded)], [x], "cvt"), [np.array(2.7, src)], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("dst", list(INT_DTYPES))
def test_convert_out_of_range_saturates(dst, tmp_path):
    """irgrid's documented choice where OpenVINO's spec leaves the result undefined: truncate toward
    zero, saturate to the target range, NaN -> 0 (expected values computed here with numpy)."""
    values = np.concatenate([CONVERT_SOURCE, np.array([np.nan, np.inf, -np.inf], np.float32)])
    x = ops.parameter(list(values.shape), np.float32, name="x")
    y = named(ops.convert(x, dst), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "cvt"), tmp_path)
    got = irgrid.compile_model(path)({"x": values})["y"]
    info = np.iinfo(INT_DTYPES[dst])
    with np.errstate(invalid="ignore"):
        want = np.clip(np.nan_to_num(np.trunc(values.astype(np.float64)), nan=0.0, posinf=info.max,
                                     neginf=info.min), info.min, info.max).astype(INT_DTYPES[dst])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst", [("i32", "f32"), ("i32", "u8"), ("i32", "i8"), ("u8", "i32"),
                                     ("i32", "f16"), ("boolean", "f32"), ("f16", "f32"), ("i8", "u8")])
def test_convert_between_types(src, dst, tmp_path, ov_run):
    values = {"i32": np.array([-2**31, -300, -129, -1, 0, 1, 127, 128, 255, 256, 70000, 2**24 + 1], np.int32),
              "u8": np.array([0, 1, 127, 128, 255], np.uint8),
              "i8": np.array([-128, -1, 0, 1, 127], np.int8),
              "boolean": np.array([True, False, True]),
              "f16": np.array([0.5, -1.25, 65504.0, -np.inf, 1e-4], np.float16)}[src]
    x = ops.parameter(list(values.shape), getattr(ov.Type, src), name="x")
    y = named(ops.convert(x, dst), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "cvt"), [values], tmp_path, ov_run)
    assert_same(expected, got)


def test_convert_to_bf16(tmp_path):
    """Round to nearest even on the bf16 grid, against ml_dtypes (installed with onnx). OpenVINO
    2026.4's CPU plugin is no oracle here: it rounds 1/3 and -2.7 toward zero but 1e30 up."""
    import ml_dtypes

    values = np.array([1.0, 1 / 3, -2.7, 1e30, 3.0e38, 1.00390625, 1.01171875, -0.0, np.inf, np.nan],
                      np.float32)
    x = ops.parameter([values.size], np.float32, name="x")
    y = named(ops.convert(ops.convert(x, "bf16"), "f32"), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "bf16"), tmp_path)
    (got,) = irgrid.compile_model(path)({"x": values}).values()
    np.testing.assert_array_equal(got, values.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert got[5] == 1.0 and got[6] == np.float32(1.015625)  # ties: 1 + 2^-8 down, 1 + 3*2^-8 up


# ---------------------------------------------------------------------------------------------
# Reshape, Transpose, Squeeze, Unsqueeze, Concat
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,target,special_zero", [
    ((2, 3, 4, 5), [0, -1, 5], True),
    ((2, 3, 4, 5), [0, 0, 20], True),
    ((2, 3, 4, 5), [-1, 4, 5], True),
    ((2, 3, 4, 5), [6, -1], False),
    ((2, 3, 4, 5), [120], False),
    ((2, 3, 4, 5), [-1], False),
    ((2, 3, 4, 5), [0, 3, 2, 2, 5], True),
    ((1, 6), [0, 3, 2], True),
    ((0, 6), [0, -1, 3], True),
])
def test_reshape(shape, target, special_zero, tmp_path, ov_run):
    data = rng(1).normal(size=shape).astype(np.float32)
    x = ops.parameter(list(shape), np.float32, name="x")
    y = named(ops.reshape(x, ops.constant(np.array(target, np.int64)), special_zero), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "reshape"), [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("shape,order", [((2, 3, 4, 5), [0, 2, 3, 1]), ((2, 3, 4, 5), [3, 2, 1, 0]),
                                         ((2, 3, 4, 5), [1, 0, 2, 3]), ((2, 3, 4, 5), []), ((), [])])
def test_transpose(shape, order, tmp_path, ov_run):
    data = np.asarray(rng(2).normal(size=shape).astype(np.float32))
    x = ops.parameter(list(shape), np.float32, name="x")
    y = named(ops.transpose(x, ops.constant(np.array(order, np.int64))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "t"), [data], tmp_path, ov_run)
    assert_same(expected, got)
    assert got[0].flags.c_contiguous


@pytest.mark.parametrize("axes", [[0], [2], [-1], [0, 2], [-4, -2]])
def test_squeeze(axes, tmp_path, ov_run):
    data = rng(3).normal(size=(1, 3, 1, 1)).astype(np.float32)
    x = ops.parameter([1, 3, 1, 1], np.float32, name="x")
    y = named(o1.squeeze(x, ops.constant(np.array(axes, np.int64))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "sq"), [data], tmp_path, ov_run)
    assert_same(expected, got)


def test_squeeze_without_axes(tmp_path, ov_run):
    """Squeeze-1 with a single input removes every size-1 dim (axes input deleted from the XML)."""
    data = rng(4).normal(size=(1, 3, 1, 2)).astype(np.float32)
    x = ops.parameter([1, 3, 1, 2], np.float32, name="x")
    axes = ops.constant(np.array([0], np.int64), name="axes")
    y = named(o1.squeeze(x, axes, name="sq"), "y")

    def drop_axes(root):
        sq = root.find(".//layer[@name='sq']")
        axes_layer = root.find(".//layer[@name='axes']")
        port = sq.find("input").findall("port")[1]
        sq.find("input").remove(port)
        edges = root.find("edges")
        for edge in list(edges):
            if edge.get("from-layer") == axes_layer.get("id"):
                edges.remove(edge)
        # The output now drops both size-1 dims: declare [3, 2].
        for p in (sq.find("output/port"), root.find(".//layer[@type='Result']/input/port")):
            for dim in p.findall("dim"):
                p.remove(dim)
            for d in (3, 2):
                etree.SubElement(p, "dim").text = str(d)
        axes_layer.getparent().remove(axes_layer)

    expected, got = run_both(ov.Model([ops.result(y)], [x], "sq"), [data], tmp_path, ov_run, edit=drop_axes)
    assert got[0].shape == (3, 2)
    assert_same(expected, got)


@pytest.mark.parametrize("axes", [[0], [-1], [1, 3], [-1, 0], [2], [0, 1, 2]])
def test_unsqueeze(axes, tmp_path, ov_run):
    data = rng(5).normal(size=(3, 4)).astype(np.float32)
    x = ops.parameter([3, 4], np.float32, name="x")
    y = named(ops.unsqueeze(x, ops.constant(np.array(axes, np.int64))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "usq"), [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_concat(axis, tmp_path, ov_run):
    shapes = {0: [(1, 2, 3), (2, 2, 3), (3, 2, 3)], 1: [(2, 1, 3), (2, 4, 3), (2, 2, 3)],
              -1: [(2, 2, 1), (2, 2, 5), (2, 2, 2)], -3: [(1, 2, 3), (2, 2, 3), (3, 2, 3)]}[axis]
    arrays = [rng(6 + i).normal(size=s).astype(np.float32) for i, s in enumerate(shapes)]
    params = [ops.parameter(list(s), np.float32, name=f"x{i}") for i, s in enumerate(shapes)]
    y = named(ops.concat(params, axis), "y")
    expected, got = run_both(ov.Model([ops.result(y)], params, "cat"), arrays, tmp_path, ov_run)
    assert_same(expected, got)


def test_concat_with_const_and_int(tmp_path, ov_run):
    a = np.array([[1, -2], [3, 4]], np.int32)
    x = ops.parameter([2, 2], np.int32, name="x")
    y = named(ops.concat([x, ops.constant(np.array([[7, 8]], np.int32)), x], 0), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "cat"), [a], tmp_path, ov_run)
    assert_same(expected, got)


# ---------------------------------------------------------------------------------------------
# ShapeOf
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version,output_type", [("opset1", "i64"), ("opset3", "i64"), ("opset3", "i32")])
def test_shape_of(version, output_type, tmp_path, ov_run):
    data = np.zeros((2, 3, 5), np.float32)
    x = ops.parameter([2, 3, 5], np.float32, name="x")
    s = o1.shape_of(x) if version == "opset1" else o3.shape_of(x, output_type)
    y = named(s, "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "shape"), tmp_path)
    assert f'type="ShapeOf" version="{version}"' in path.read_text()
    expected = ov_run(str(path), [data])
    got = irgrid.compile_model(path)({"x": data})["y"]
    assert got.dtype == np.dtype(np.int64 if output_type == "i64" else np.int32)
    np.testing.assert_array_equal(got, expected[0])
    np.testing.assert_array_equal(got, [2, 3, 5])


def test_shape_of_dynamic_input(tmp_path, ov_run):
    x = ops.parameter(ov.PartialShape([-1, 3, -1]), np.float32, name="x")
    y = named(o3.shape_of(x, "i32"), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "shape"), tmp_path)
    compiled = irgrid.compile_model(path)
    for shape in [(1, 3, 1), (4, 3, 7)]:
        data = np.zeros(shape, np.float32)
        (expected,) = ov_run(str(path), [data])
        np.testing.assert_array_equal(compiled({"x": data})["y"], expected)


# ---------------------------------------------------------------------------------------------
# Gather v1 / v7 / v8
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis,indices", [(0, [2, 0, 1, 1]), (1, [[0, 3], [2, 2]]), (-1, [4, 0]), (2, 3)])
def test_gather_v1(axis, indices, tmp_path, ov_run):
    data = rng(10).normal(size=(3, 4, 5)).astype(np.float32)
    x = ops.parameter([3, 4, 5], np.float32, name="x")
    idx = ops.constant(np.array(indices, np.int64))
    y = named(o1.gather(x, idx, ops.constant(np.int64(axis))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "g1"), [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("opset", [o7, o8], ids=["v7", "v8"])
@pytest.mark.parametrize("axis,batch_dims,indices_shape", [(1, 1, (2, 3)), (2, 1, (2, 4)), (2, 2, (2, 3, 2)),
                                                          (2, -1, (2, 3, 2)), (1, 0, (2, 2))])
def test_gather_batch_dims(opset, axis, batch_dims, indices_shape, tmp_path, ov_run):
    data = rng(11).normal(size=(2, 3, 4, 5)).astype(np.float32)
    indices = rng(12).integers(0, data.shape[axis], size=indices_shape).astype(np.int32)
    x = ops.parameter(list(data.shape), np.float32, name="x")
    i = ops.parameter(list(indices_shape), np.int32, name="i")
    y = named(opset.gather(x, i, ops.constant(np.int64(axis)), batch_dims), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x, i], "g"), [data, indices], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("axis,batch_dims", [(0, 0), (1, 0), (1, 1), (-1, 1)])
def test_gather_v8_negative_indices(axis, batch_dims, tmp_path, ov_run):
    data = rng(13).normal(size=(2, 4, 5)).astype(np.float32)
    size = data.shape[axis]
    indices = np.array([[-1, 0, -size, 1], [-2, size - 1, -1, 0]], np.int64)
    x = ops.parameter(list(data.shape), np.float32, name="x")
    i = ops.parameter(list(indices.shape), np.int64, name="i")
    y = named(o8.gather(x, i, ops.constant(np.int64(axis)), batch_dims), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x, i], "g8"), [data, indices], tmp_path, ov_run)
    assert_same(expected, got)


def test_gather_v8_integer_data_and_scalar_index(tmp_path, ov_run):
    data = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    x = ops.parameter([2, 3, 4], np.int32, name="x")
    y = named(o8.gather(x, ops.constant(np.int32(-1)), ops.constant(np.int32(1))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "g8"), [data], tmp_path, ov_run)
    assert got[0].shape == (2, 4)
    assert_same(expected, got)


# ---------------------------------------------------------------------------------------------
# Add / Subtract / Multiply / Divide
# ---------------------------------------------------------------------------------------------

BROADCAST_SHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (2, 3)),
                    ((5, 1, 1, 3), (1, 4, 2, 1)), ((), (2, 2)),
                    # a grid's short last dim, the other operand along it only or one value: long rows
                    ((2, 16, 8, 3), (1, 1, 1, 3)), ((3,), (4, 8, 8, 3)), ((2, 16, 8, 2), ()),
                    ((2, 16, 8, 3), (2, 16, 8, 1)),
                    # both broadcast along other dims (RAFT's coords + window): one component at a time
                    ((64, 1, 1, 2), (1, 16, 16, 2)), ((40, 1, 3), (1, 128, 1))]


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=[f"{a}x{b}" for a, b in BROADCAST_SHAPES])
def test_arithmetic_broadcast_f32(op, shapes, tmp_path, ov_run):
    sa, sb = shapes
    a = rng(20).normal(size=sa).astype(np.float32)
    b = rng(21).normal(size=sb).astype(np.float32) + np.float32(3.0)
    pa = ops.parameter(list(sa), np.float32, name="a")
    pb = ops.parameter(list(sb), np.float32, name="b")
    y = named(getattr(ops, op)(pa, pb), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], op), [a, b], tmp_path, ov_run)
    assert got[0].shape == np.broadcast_shapes(sa, sb)
    # Divide: OpenVINO's JIT may use a reciprocal-multiply; allow 1 ulp there.
    if op == "divide":
        np.testing.assert_array_max_ulp(got[0], expected[0], maxulp=1)
    else:
        assert_same(expected, got)


_INTEGER_OPERANDS = {
    # i32 reaches 2**30 (multiply wraps as in OpenVINO); i64 stays small, because OpenVINO's CPU
    # plugin runs i64 in i32, so both are exact.
    np.int32: lambda: (np.array([[5, -7, 0, 2**30], [1, 2, 3, -4]]), np.array([3, -2, 9, 2])),
    np.int64: lambda: (rng(42).integers(-1000, 1000, size=(3, 4)), rng(43).integers(-1000, 1000, size=(4,))),
}


@pytest.mark.parametrize("dtype", list(_INTEGER_OPERANDS))
@pytest.mark.parametrize("op", ["add", "subtract", "multiply"])
def test_arithmetic_integer(op, dtype, tmp_path, ov_run):
    a, b = (v.astype(dtype) for v in _INTEGER_OPERANDS[dtype]())
    pa = ops.parameter(list(a.shape), dtype, name="a")
    pb = ops.parameter(list(b.shape), dtype, name="b")
    y = named(getattr(ops, op)(pa, pb), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], op), [a, b], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def test_arithmetic_with_const_operand(tmp_path, ov_run):
    a = rng(22).normal(size=(2, 3)).astype(np.float32)
    pa = ops.parameter([2, 3], np.float32, name="a")
    y = named(ops.multiply(ops.subtract(pa, ops.constant(np.float32(0.25))),
                           ops.constant(np.array([1.0, -2.0, 0.5], np.float32))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa], "c"), [a], tmp_path, ov_run)
    assert_same(expected, got)


DIV_A = [7, -7, 7, -7, 0, 6, -6, 1, -1, 100, -100, 2**20]
DIV_B = [2, 2, -2, -2, 3, 3, 3, 5, 5, -7, 7, -3]


def _folded_divide(ov_core, tmp_path, a, b, pythondiv: str | None):
    """OpenVINO's reference Divide (constant folding of Const / Const, run when the model compiles)."""
    d = o1.divide(ops.constant(a), ops.constant(b), name="div")
    path = save_ov(ov.Model([ops.result(d)], [], "folded"), tmp_path, "folded")
    root = etree.fromstring(path.read_bytes())
    data = root.find(".//layer[@name='div']/data")
    if pythondiv is None:
        data.attrib.pop("m_pythondiv", None)
    else:
        data.set("m_pythondiv", pythondiv)
    path.write_bytes(etree.tostring(root))
    compiled = ov_core.compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return np.asarray(compiled([])[compiled.outputs[0]])


@pytest.mark.parametrize("pythondiv", ["true", "false"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_divide(pythondiv, dtype, tmp_path, ov_core, ov_run):
    """Divide-1 spec: m_pythondiv=true floors, false truncates. Oracles: OpenVINO's reference Divide
    (its constant folding) and numpy here. OpenVINO's CPU kernel is the oracle only for truncation:
    it ignores m_pythondiv and always truncates (2026.4: -7 / 2 = -3 with m_pythondiv=true)."""
    a = np.array(DIV_A, dtype)
    b = np.array(DIV_B, dtype)
    pa = ops.parameter([a.size], dtype, name="a")
    pb = ops.parameter([b.size], dtype, name="b")
    y = named(o1.divide(pa, pb, name="div"), "y")

    def set_mode(root):
        root.find(".//layer[@name='div']/data").set("m_pythondiv", pythondiv)

    path = save_ov(ov.Model([ops.result(y)], [pa, pb], "div"), tmp_path)
    root = etree.fromstring(path.read_bytes())
    set_mode(root)
    path.write_bytes(etree.tostring(root))
    got = irgrid.compile_model(path)({"a": a, "b": b})["y"]
    assert got.dtype == dtype
    want = np.floor_divide(a, b) if pythondiv == "true" else np.trunc(a / b).astype(dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, _folded_divide(ov_core, tmp_path, a, b, pythondiv))
    if pythondiv == "false":
        (cpu,) = ov_run(str(path), [a, b])
        np.testing.assert_array_equal(got, cpu)


def test_divide_default_attribute_is_python_division(tmp_path, ov_core):
    a = np.array([-7, 7, -1], np.int32)
    b = np.array([2, -2, 3], np.int32)
    pa = ops.parameter([3], np.int32, name="a")
    pb = ops.parameter([3], np.int32, name="b")
    y = named(o1.divide(pa, pb, name="div"), "y")
    path = save_ov(ov.Model([ops.result(y)], [pa, pb], "div"), tmp_path)
    root = etree.fromstring(path.read_bytes())
    root.find(".//layer[@name='div']/data").attrib.pop("m_pythondiv", None)
    path.write_bytes(etree.tostring(root))
    got = irgrid.compile_model(path)({"a": a, "b": b})["y"]
    np.testing.assert_array_equal(got, [-4, -4, -1])
    np.testing.assert_array_equal(got, _folded_divide(ov_core, tmp_path, a, b, None))


def test_float_divide_by_zero_follows_ieee(tmp_path, ov_run):
    a = np.array([1.0, -1.0, 0.0, 2.0], np.float32)
    b = np.array([0.0, 0.0, 0.0, -0.0], np.float32)
    pa = ops.parameter([4], np.float32, name="a")
    pb = ops.parameter([4], np.float32, name="b")
    y = named(ops.divide(pa, pb), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], "div0"), [a, b], tmp_path, ov_run)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[0], [np.inf, -np.inf, np.nan, -np.inf])


# ---------------------------------------------------------------------------------------------
# A shape subgraph: ShapeOf -> Gather -> Concat -> Reshape resolves statically.
# ---------------------------------------------------------------------------------------------


def _shape_chain_model(shape_of, gather, index_type=np.int64) -> ov.Model:
    x = ops.parameter([2, 3, 4, 5], np.float32, name="x")
    shape = shape_of(x)
    batch_channels = gather(shape, ops.constant(np.array([0, 1], index_type)), ops.constant(index_type(0)))
    minus_one = ops.constant(np.array([-1], index_type))
    target = ops.concat([batch_channels, minus_one], 0)
    y = named(ops.reshape(x, target, False), "y")
    z = named(ops.add(y, ops.constant(np.float32(1.0))), "z")
    return ov.Model([ops.result(z)], [x], "chain")


@pytest.mark.parametrize("variant", ["v1", "v3_i32", "v8"])
def test_shape_chain_resolves_statically(variant, tmp_path, ov_run):
    shape_of, gather, index_type = {"v1": (o1.shape_of, o1.gather, np.int64),
                                    "v3_i32": (lambda x: o3.shape_of(x, "i32"), o7.gather, np.int32),
                                    "v8": (o3.shape_of, o8.gather, np.int64)}[variant]
    model = _shape_chain_model(shape_of, gather, index_type)
    path = save_ov(model, tmp_path)
    ir = irgrid.read_model(path)
    assert irgrid.check_model(ir) == []
    compiled = irgrid.compile_model(ir)
    # Statically resolved: the Reshape output has a fully known shape before anything runs.
    from irgrid.inference import infer_model

    infos = infer_model(ir)
    reshape = next(layer for layer in ir.layers.values() if layer.type == "Reshape")
    assert infos[(reshape.id, 0)].shape == (2, 3, 20)
    data = rng(30).normal(size=(2, 3, 4, 5)).astype(np.float32)
    (expected,) = ov_run(str(path), [data])
    got = compiled({"x": data})["z"]
    assert got.shape == (2, 3, 20)
    np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------------------------------------
# Other element types through the glue layers
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_arithmetic_f16(op, tmp_path, ov_run):
    """f16: OpenVINO computes in f32 and rounds once to f16; numpy's f16 ufuncs do the same for a
    single operation, so results must agree exactly."""
    a = rng(40).normal(size=(2, 3, 4)).astype(np.float16)
    b = (rng(41).normal(size=(3, 1)) + 3).astype(np.float16)
    pa = ops.parameter([2, 3, 4], np.float16, name="a")
    pb = ops.parameter([3, 1], np.float16, name="b")
    y = named(getattr(ops, op)(pa, pb), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], op), [a, b], tmp_path, ov_run)
    assert got[0].dtype == np.float16
    assert_same(expected, got)


def test_arithmetic_f64(tmp_path, ov_run):
    """f64: irgrid computes in f64, OpenVINO's CPU plugin in f32: rtol 1e-6."""
    a = rng(44).normal(size=(4, 5))
    b = rng(45).normal(size=(5,)) + 3.0
    pa = ops.parameter([4, 5], np.float64, name="a")
    pb = ops.parameter([5], np.float64, name="b")
    y = named(ops.divide(ops.add(pa, pb), pb), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], "f64"), [a, b], tmp_path, ov_run)
    assert got[0].dtype == np.float64
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    np.testing.assert_allclose(got[0], (a + b) / b, rtol=1e-15)


def test_gather_v8_out_of_range_indices_give_zeros(tmp_path, ov_run):
    """Gather-8 spec: an index outside [-size, size) yields zeros."""
    data = rng(46).normal(size=(3, 4)).astype(np.float32) + 10
    indices = np.array([0, 4, -5, 3, 100, -1], np.int32)
    x = ops.parameter([3, 4], np.float32, name="x")
    i = ops.parameter([6], np.int32, name="i")
    y = named(o8.gather(x, i, ops.constant(np.int32(1))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x, i], "g8"), [data, indices], tmp_path, ov_run)
    assert_same(expected, got)
    assert np.all(got[0][:, [1, 2, 4]] == 0)


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.uint8, np.int64, np.bool_])
def test_data_movement_other_types(dtype, tmp_path, ov_run):
    data = (rng(47).integers(0, 2, size=(2, 3, 4)) if dtype == np.bool_
            else rng(47).integers(-50, 50, size=(2, 3, 4)).astype(dtype) if dtype != np.uint8
            else rng(47).integers(0, 200, size=(2, 3, 4))).astype(dtype)
    x = ops.parameter([2, 3, 4], dtype, name="x")
    t = ops.transpose(x, ops.constant(np.array([2, 0, 1], np.int64)))
    g = o8.gather(t, ops.constant(np.array([[1, 0], [-1, 2]], np.int64)), ops.constant(np.int64(2)), 0)
    c = ops.concat([g, g], 0)
    r = named(ops.reshape(ops.unsqueeze(c, ops.constant(np.array([0], np.int64))),
                          ops.constant(np.array([0, -1], np.int64)), True), "y")
    expected, got = run_both(ov.Model([ops.result(r)], [x], "move"), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)

"""Slice-8, StridedSlice-1, Split-1 and VariadicSplit-1 against OpenVINO's CPU plugin on saved IRs.

These layers only move data: results are compared exactly, and shapes must be the ones OpenVINO
declares (check_model compares irgrid's inference with the IR's port dims).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset13 as ops
import pytest

import irgrid
from irgrid.errors import ShapeError
from irgrid.inference import infer_model
from irgrid.registry import TensorInfo, find
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov

BIG = 2**63 - 1
DTYPES = [np.float32, np.float16, np.int32, np.int64, np.uint8]


def _data(shape, dtype=np.float32) -> np.ndarray:
    return (rng(7).normal(size=shape) * 50).astype(dtype)


def _i64(values) -> ov.Node:
    return ops.constant(np.array(values, np.int64))


SLICES = [  # start, stop, step, axes
    ([1], [3], [1], None),
    ([0, 1], [4, -1], [2, 1], None),
    ([-1], [-100], [-1], [2]),
    ([10], [-10], [-2], [1]),
    ([-100, 100], [100, -100], [1, -1], [0, -1]),
    ([0], [BIG], [3], [-2]),
    ([BIG], [-BIG - 1], [-1], [0]),
    ([2, 0], [2, 5], [1, 1], [1, 2]),  # empty along axis 1
    ([3], [0], [1], [0]),  # start past stop with a positive step: empty
    ([1, 2, 0], [-1, 1, 5], [1, -1, 2], [2, 0, 1]),
    ([-7, -9], [-7, -100], [-1, -2], [1, 2]),  # negative steps from below -dim: the first element
]


@pytest.mark.parametrize("start,stop,step,axes", SLICES)
def test_slice(start, stop, step, axes, tmp_path, ov_run):
    data = _data((4, 5, 6))
    x = ops.parameter(list(data.shape), np.float32, name="x")
    extra = [] if axes is None else [_i64(axes)]
    y = named(o8.slice(x, _i64(start), _i64(stop), _i64(step), *extra), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "slice"), [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("dtype", DTYPES)
def test_slice_types_and_i32_bounds(dtype, tmp_path, ov_run):
    data = _data((3, 7), dtype)
    x = ops.parameter(list(data.shape), dtype, name="x")
    bounds = [ops.constant(np.array(v, np.int32)) for v in ([-1, 6], [-5, 0], [-1, -2], [0, 1])]
    y = named(o8.slice(x, *bounds), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "slice"), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def test_slice_runtime_bounds(tmp_path, ov_run):
    """Starts and stops given at run time: output dims unknown at compile time, right at run time."""
    data = _data((4, 6))
    x = ops.parameter([4, 6], np.float32, name="x")
    b = ops.parameter([2], np.int64, name="b")
    e = ops.parameter([2], np.int64, name="e")
    y = named(o8.slice(x, b, e, _i64([1, -1]), _i64([0, 1])), "y")
    for begin, end in (([0, 5], [4, 0]), ([-3, -1], [100, -100])):
        expected, got = run_both(ov.Model([ops.result(y)], [x, b, e], "slice"),
                                 [data, np.array(begin), np.array(end)], tmp_path, ov_run)
        assert_same(expected, got)


STRIDED = [  # begin, end, strides, begin_mask, end_mask, new_axis, shrink, ellipsis
    ([0, 1, 2], [2, 3, 5], [1, 1, 1], [0, 0, 0], [0, 0, 0], [], [], []),
    ([1, 0, -1], [0, 0, 0], [1, 1, -1], [0, 1, 0], [1, 1, 1], [], [], []),
    ([0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1], [1, 1, 1], [], [], []),
    ([-1, 4, 0], [-100, 0, 6], [-1, -2, 2], [0, 0, 0], [0, 0, 0], [], [], []),
    ([1], [2], [1], [0], [0], [], [1], []),  # shrink axis 0
    ([0, -1], [0, 0], [1, 1], [1, 0], [1, 0], [], [0, 1], []),  # shrink the last item of axis 1
    ([0, 0, 1], [0, 0, 3], [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 0, 0], [], []),  # new axis first
    ([0, 2], [0, 4], [1, 1], [0, 0], [0, 0], [0, 0], [], [1, 0]),  # ellipsis then the last axis
    pytest.param([1, 0, 1], [3, 0, 2], [1, 1, 1], [0, 0, 0], [0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0],
                 id="new-axis-then-shrink-cpu-reads-garbage"),
    ([0, 0, 2, 0], [2, 0, 4, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 1], [], [0, 0, 0, 0]),
    ([1, 0, 1], [2, 0, 3], [1, 1, -1], [0, 0, 1], [0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0]),
    pytest.param([2, 0], [2, 2], [1, 1], [1, 0], [0, 0], [], [1, 0], [],
                 id="shrink-with-begin-mask-cpu-takes-0"),  # the spec and reference take begin
    ([5, 9, 9], [-9, 9, -9], [-3, 1, -2], [0, 0, 0], [0, 0, 0], [], [], []),
    ([-6, -5, -7], [-6, 0, -7], [-2, -1, -1], [0, 0, 0], [0, 0, 0], [], [], []),  # begins below -dim
]


@pytest.mark.parametrize("begin,end,strides,begin_mask,end_mask,new_axis,shrink,ellipsis", STRIDED)
def test_strided_slice(begin, end, strides, begin_mask, end_mask, new_axis, shrink, ellipsis, tmp_path, ov_run,
                       ov_core, request):
    """Against OpenVINO's reference implementation (constant folding) in every case, and its CPU plugin
    except where that deviates (2026.4: a new axis before a shrunk axis reads uninitialised memory; a
    shrunk axis with its begin_mask bit set takes index 0 instead of begin)."""
    data = _data((3, 4, 6))

    def build(x):
        return o1.strided_slice(x, _i64(begin), _i64(end), _i64(strides), begin_mask, end_mask, new_axis,
                                shrink, ellipsis)

    x = ops.parameter(list(data.shape), np.float32, name="x")
    expected, got = run_both(ov.Model([ops.result(named(build(x), "y"))], [x], "ss"), [data], tmp_path, ov_run)
    assert_same(ov_reference(ov_core, build, [data]), got)
    if "cpu" not in request.node.callspec.id:
        assert_same(expected, got)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_slice_without_strides_input(dtype, tmp_path, ov_run):
    """StridedSlice-1 with three inputs: strides default to 1 (strides deleted from the XML)."""
    data = _data((3, 5), dtype)
    x = ops.parameter([3, 5], dtype, name="x")
    strides = ops.constant(np.array([1, 1], np.int32), name="strides")
    y = named(o1.strided_slice(x, ops.constant(np.array([-2, 1], np.int32)), ops.constant(np.array([3, -1], np.int32)),
                               strides, [0, 0], [0, 0], name="ss"), "y")

    def drop_strides(root):
        ss = root.find(".//layer[@name='ss']")
        layer = root.find(".//layer[@name='strides']")
        ss.find("input").remove(ss.find("input").findall("port")[3])
        for edge in list(root.find("edges")):
            if edge.get("from-layer") == layer.get("id"):
                root.find("edges").remove(edge)
        layer.getparent().remove(layer)

    expected, got = run_both(ov.Model([ops.result(y)], [x], "ss"), [data], tmp_path, ov_run, edit=drop_strides)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def _named_outputs(node, prefix: str) -> list:
    for i, out in enumerate(node.outputs()):
        out.get_tensor().set_names({f"{prefix}{i}"})
    return [ops.result(out) for out in node.outputs()]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis,parts", [(0, 2), (1, 3), (-1, 1), (-1, 2), (2, 4)])
def test_split(axis, parts, dtype, tmp_path, ov_run):
    data = _data((2, 6, 4), dtype)
    x = ops.parameter(list(data.shape), dtype, name="x")
    split = o1.split(x, ops.constant(np.int64(axis)), parts)
    expected, got = run_both(ov.Model(_named_outputs(split, "y"), [x], "split"), [data], tmp_path, ov_run)
    assert len(got) == parts
    assert_same(expected, got)


@pytest.mark.parametrize("axis,lengths", [(1, [1, 2, 3]), (1, [-1, 2]), (0, [2, 0]), (-1, [4]), (-1, [1, -1, 1]),
                                          (2, [0, 4, 0])])
def test_variadic_split(axis, lengths, tmp_path, ov_run):
    data = _data((2, 6, 4))
    x = ops.parameter(list(data.shape), np.float32, name="x")
    split = o1.variadic_split(x, ops.constant(np.int32(axis)), ops.constant(np.array(lengths, np.int32)))
    expected, got = run_both(ov.Model(_named_outputs(split, "y"), [x], "vsplit"), [data], tmp_path, ov_run)
    assert len(got) == len(lengths)
    assert_same(expected, got)


def test_dynamic_dims(tmp_path, ov_run):
    """A dynamic batch and width: check_model agrees with the IR's dynamic dims, and each run is exact."""
    x = ops.parameter(ov.PartialShape([-1, 6, -1]), np.float32, name="x")
    a, b = o1.split(x, ops.constant(np.int64(1)), 2).outputs()
    s = o8.slice(a, _i64([0]), _i64([-1]), _i64([1]), _i64([2]))
    t = o1.strided_slice(b, _i64([0, 1]), _i64([0, 3]), _i64([1, 1]), [1, 0], [1, 0], [], [], [])
    v0, v1 = o1.variadic_split(x, ops.constant(np.int64(2)), _i64([1, -1])).outputs()
    outs = [named(s, "y0"), named(t, "y1")]
    v0.get_tensor().set_names({"v0"})
    v1.get_tensor().set_names({"v1"})
    model = ov.Model([ops.result(o) for o in outs] + [ops.result(v0), ops.result(v1)], [x], "dyn")
    path = save_ov(model, tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for shape in [(1, 6, 2), (3, 6, 7)]:
        data = _data(shape)
        expected = ov_run(str(path), [data])
        assert_same(expected, list(compiled({"x": data}).values()))


def test_shape_subgraph_folds_to_static(tmp_path, ov_run):
    """ShapeOf -> Slice / StridedSlice / Split of the shape -> Reshape resolves to static dims."""
    x = ops.parameter([2, 3, 4, 5], np.float32, name="x")
    shape = ops.shape_of(x)
    head = o8.slice(shape, _i64([0]), _i64([2]), _i64([1]))
    tail = o1.strided_slice(shape, _i64([-2]), _i64([0]), _i64([1]), [0], [1])
    h, w = o1.split(tail, ops.constant(np.int64(0)), 2).outputs()
    target = ops.concat([head, ops.multiply(h, w)], 0)
    y = named(ops.reshape(x, target, False), "y")
    model = ov.Model([ops.result(y)], [x], "fold")
    path = save_ov(model, tmp_path)
    ir = irgrid.read_model(path)
    infos = infer_model(ir)
    reshape = next(layer for layer in ir.layers.values() if layer.type == "Reshape")
    assert infos[(reshape.id, 0)].shape == (2, 3, 20)
    data = _data((2, 3, 4, 5))
    expected, got = run_both(model, [data], tmp_path, ov_run)
    assert_same(expected, got)


def _const(values) -> TensorInfo:
    return TensorInfo((len(values),), "i64", np.array(values, np.int64))


@pytest.mark.parametrize("type_,version,attrs,inputs,index,message", [
    ("Slice", "opset8", {}, [[0], [2], [0]], 3, "step is 0"),
    ("Slice", "opset8", {}, [[0], [2], [1], [3]], 4, "out of range"),
    ("Slice", "opset8", {}, [[0, 0], [2, 2], [1, 1], [1, -2]], 4, "repeat"),
    ("Slice", "opset8", {}, [[0, 0], [2], [1, 1]], 2, "different lengths"),
    ("StridedSlice", "opset1", {"begin_mask": "0", "end_mask": "0", "shrink_axis_mask": "1"},
     [[5], [6], [1]], 1, "shrink_axis_mask"),
    ("StridedSlice", "opset1", {"begin_mask": "0", "end_mask": "0"}, [[0] * 4, [1] * 4, [1] * 4], 1, "rank 3"),
    ("StridedSlice", "opset1", {"begin_mask": "0", "end_mask": "0"}, [[0], [1], [0]], 3, "step is 0"),
    ("Split", "opset1", {"num_splits": "4"}, [1], 0, "equal parts"),
    ("Split", "opset1", {"num_splits": "2"}, [3], 1, "out of range"),
    ("VariadicSplit", "opset1", {}, [1, [2, 2]], 2, "add up"),
    ("VariadicSplit", "opset1", {}, [1, [-1, -1]], 2, "one -1"),
])
def test_bad_values_are_shape_errors_naming_the_input(type_, version, attrs, inputs, index, message):
    """Values OpenVINO's own validation refuses (so no IR can be built with them): irgrid's inference
    raises a ShapeError naming the input at fault."""
    spec = find(type_, version)
    infos = [TensorInfo((3, 5, 6), "f32")] + [_const(v) if isinstance(v, list) else
                                              TensorInfo((), "i64", np.array(v, np.int64)) for v in inputs]
    with pytest.raises(ShapeError, match=message) as info:
        spec.infer(spec.parse_attrs(attrs), infos)
    assert info.value.input == index


def test_unknown_rank_input(tmp_path, ov_run, ov_core):
    """A Parameter of dynamic rank: inference leaves the ranks open, and every layer runs with the
    concrete array (shapes known only then). OpenVINO's CPU plugin refuses dynamic ranks, so its
    copy of the IR is reshaped to each concrete shape first."""
    x = ops.parameter(ov.PartialShape.dynamic(), np.float32, name="x")
    s = o8.slice(x, _i64([1]), _i64([BIG]), _i64([2]), _i64([-1]))
    a, b = o1.split(s, ops.constant(np.int64(0)), 2).outputs()
    t = o1.strided_slice(ops.add(a, b), _i64([0, -1]), _i64([0, 0]), _i64([1, -1]), [1, 1], [1, 1], [], [], [])
    y = named(o1.relu(ops.reduce_sum(t, _i64([-1]), True)), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "rank"), tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for shape in [(2, 5), (4, 3, 6)]:
        data = _data(shape)
        static = ov_core.read_model(str(path))
        static.reshape({"x": list(shape)})
        expected = ov_run(static, [data])
        got = [compiled({"x": data})["y"]]
        assert got[0].shape == expected[0].shape
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("shape,begin,shrink", [((5,), [-2], [1]), ((3, 4), [2, -1], [1, 1]), ((3, 4), [1, 0], [0, 1])])
def test_strided_slice_shrinking_to_a_scalar(shape, begin, shrink, tmp_path, ov_run):
    """Shrinking every axis gives a 0-d tensor (not shape (1,)), a scalar that later layers broadcast."""
    data = _data(shape)
    x = ops.parameter(list(shape), np.float32, name="x")
    s = o1.strided_slice(x, _i64(begin), _i64([b + 1 for b in begin]), _i64([1] * len(begin)), [0] * len(begin),
                         [0] * len(begin), [], shrink, [])
    y = named(ops.add(s, ops.constant(np.zeros((2, 1), np.float32))), "y")
    expected, got = run_both(ov.Model([ops.result(named(s, "s")), ops.result(y)], [x], "scalar"), [data], tmp_path,
                             ov_run)
    assert_same(expected, got)

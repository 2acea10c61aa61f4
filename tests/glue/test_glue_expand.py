"""Range-4/-1, Broadcast-3/-1 and Tile-1 against OpenVINO (CPU plugin at f32 on saved IRs; its
reference implementation through folded constants where the CPU plugin departs from the Range spec).

Exact, except Range with fractional float steps against the CPU plugin, which accumulates the step
within each thread's chunk (so its last ulps depend on the thread count): atol 1e-6 there, and exact
against OpenVINO's reference (start + i * step in f32).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset8 as o8
import openvino.opset13 as ops
import pytest
from openvino.opset4.ops import range as range4  # openvino.opset4.range is Range-1

import irgrid
from irgrid.errors import ShapeError
from irgrid.inference import infer_model
from irgrid.registry import TensorInfo, find
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov

DTYPES = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64}
INTEGRAL = [(0, 10, 1), (2, 11, 3), (10, 0, -2), (5, 5, 1), (-3, 4, 2), (100, 1000, 37), (0, -9, -4)]
FRACTIONAL = [(0, 1, 0.1), (0.1, 1.0, 0.1), (1.5, -2.5, -0.5), (0, 7, 0.75), (-1, 1, 2 / 7)]


def _range_model(build, values, dtypes):
    arrays = [np.array(v, t) for v, t in zip(values, dtypes)]
    params = [ops.parameter([], a.dtype, name=n) for n, a in zip(("start", "stop", "step"), arrays)]
    return ov.Model([ops.result(named(build(*params), "y"))], params, "range"), arrays


@pytest.mark.parametrize("output_type", list(DTYPES))
@pytest.mark.parametrize("input_type", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("values", INTEGRAL, ids=str)
def test_range4_integral_inputs(values, input_type, output_type, tmp_path, ov_run):
    """Inputs given at run time: the output's length is dynamic at compile time."""
    model, arrays = _range_model(lambda *p: range4(*p, output_type), values, [input_type] * 3)
    expected, got = run_both(model, arrays, tmp_path, ov_run)
    assert got[0].dtype == DTYPES[output_type]
    assert_same(expected, got)


@pytest.mark.parametrize("output_type", ["f32", "f16"])
@pytest.mark.parametrize("values", FRACTIONAL, ids=str)
def test_range4_fractional(values, output_type, tmp_path, ov_run, ov_core):
    build = lambda *p: range4(*p, output_type)  # noqa: E731
    model, arrays = _range_model(build, values, [np.float32] * 3)
    expected, got = run_both(model, arrays, tmp_path, ov_run)
    assert got[0].shape == expected[0].shape
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-6 if output_type == "f32" else 1e-3)
    assert_same(ov_reference(ov_core, build, arrays), got)


@pytest.mark.parametrize("values", [(5, 0, 1), (0, 5, -1), (3, -2, 2)], ids=str)
def test_range4_empty(values, tmp_path, ov_core):
    """A step pointing away from stop gives no values (the spec's max(ceil((stop - start) / step), 0)
    and OpenVINO's reference; OpenVINO 2026.4's CPU plugin gives |stop - start| / |step| values)."""
    arrays = [np.array(v, np.int64) for v in values]
    (reference,) = ov_reference(ov_core, lambda *c: range4(*c, "i64"), arrays)
    model, _ = _range_model(lambda *p: range4(*p, "i64"), values, [np.int64] * 3)
    got = irgrid.compile_model(save_ov(model, tmp_path))(arrays)["y"]
    assert reference.shape == (0,)
    assert_same([reference], [got])


@pytest.mark.parametrize("output_type", ["i32", "i64"])
@pytest.mark.parametrize("values", [(0.5, 5.5, 1.5), (-0.5, 5.9, 1.9), (5.7, -0.5, -1.9), (-2.9, 3.9, 1.2)], ids=str)
def test_range4_fractional_inputs_to_integers_truncate(values, output_type, tmp_path, ov_core):
    """The spec and OpenVINO's reference truncate start, stop and step to the output type first (the
    CPU plugin computes in float and rounds each value instead)."""
    arrays = [np.array(v, np.float32) for v in values]
    (reference,) = ov_reference(ov_core, lambda *c: range4(*c, output_type), arrays)
    model, _ = _range_model(lambda *p: range4(*p, output_type), values, [np.float32] * 3)
    got = irgrid.compile_model(save_ov(model, tmp_path))(arrays)["y"]
    assert_same([reference], [got])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("values", [(0, 10, 1), (10, 0, -3), (1, 2, 5), (0.5, 3, 0.5)], ids=str)
def test_range1(values, dtype, tmp_path, ov_run):
    if np.dtype(dtype).kind == "i" and not all(float(v).is_integer() for v in values):
        values = tuple(int(v) + 1 for v in values)
    model, arrays = _range_model(o1.range, values, [dtype] * 3)
    expected, got = run_both(model, arrays, tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


@pytest.mark.parametrize("values,message", [((0, 5, 0), "step is 0"), ((0, 5, 0.5), "after truncation"),
                                            ((0, np.inf, 1), "stop is inf"), ((0, 1e30, 1), "stop .* does not fit")])
def test_range_bad_values_name_the_input(values, message):
    spec = find("Range", "opset4")
    infos = [TensorInfo((), "f32", np.array(v, np.float32)) for v in values]
    with pytest.raises(ShapeError, match=message) as info:
        spec.infer(spec.parse_attrs({"output_type": "i64"}), infos)
    assert info.value.input == (1 if message.startswith("stop") else 2)


def test_shape_of_gather_range_folds_to_static(tmp_path, ov_run):
    """ShapeOf -> Gather -> Range (an arange over the width, as torch.arange(W) exports) resolves
    statically: check_model sees static shapes and the Range value is folded at compile time."""
    x = ops.parameter([2, 3, 5, 7], np.float32, name="x")
    width = o8.gather(ops.shape_of(x), ops.constant(np.int64(3)), ops.constant(np.int64(0)))
    xs = range4(ops.constant(np.int64(0)), width, ops.constant(np.int64(1)), "f32")
    y = named(ops.add(x, xs), "y")
    model = ov.Model([ops.result(y)], [x], "fold")
    path = save_ov(model, tmp_path)
    ir = irgrid.read_model(path)
    infos = infer_model(ir)
    (range_layer,) = [layer for layer in ir.layers.values() if layer.type == "Range"]
    assert infos[(range_layer.id, 0)].shape == (7,)
    np.testing.assert_array_equal(infos[(range_layer.id, 0)].value, np.arange(7, dtype=np.float32))
    data = rng(1).normal(size=(2, 3, 5, 7)).astype(np.float32)
    expected, got = run_both(model, [data], tmp_path, ov_run)
    assert_same(expected, got)


BROADCASTS = [  # data shape, target, mode, axes_mapping
    ((3,), [2, 3], "numpy", None),
    ((1, 3), [4, 2, 3], "numpy", None),
    ((2, 1), [2, 5], "numpy", None),
    ((), [2, 2], "numpy", None),
    ((3,), [3, 1], "bidirectional", None),
    ((2, 1, 4), [3, 1], "bidirectional", None),
    ((1, 3), [1], "bidirectional", None),
    ((3,), [3, 2], "explicit", [0]),
    ((3,), [2, 3, 4], "explicit", [1]),
    ((2, 4), [2, 3, 4], "explicit", [0, 2]),
    ((1, 4), [2, 3, 4], "explicit", [1, 2]),
]


@pytest.mark.parametrize("version,data_shape,target,mode,mapping",
                         [("v3", *case) for case in BROADCASTS] +
                         [("v1", *case) for case in BROADCASTS if case[2] != "bidirectional"])  # not in v1
def test_broadcast(version, data_shape, target, mode, mapping, tmp_path, ov_run):
    data = rng(2).normal(size=data_shape).astype(np.float32)
    x = ops.parameter(list(data_shape), np.float32, name="x")
    extra = [] if mapping is None else [ops.constant(np.array(mapping, np.int64))]
    shape = ops.constant(np.array(target, np.int64))
    node = o3.broadcast(x, shape, *extra, broadcast_spec=mode) if version == "v3" else o1.broadcast(
        x, shape, *extra, mode=mode)
    expected, got = run_both(ov.Model([ops.result(named(node, "y"))], [x], "bc"), [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64, np.uint8, np.bool_])
def test_broadcast_types_and_runtime_target(dtype, tmp_path, ov_run):
    """target_shape given at run time: dynamic output dims at compile time, exact at run time."""
    data = (rng(3).integers(0, 2, size=(3, 1)) if dtype == np.bool_ else rng(3).integers(-9, 9, size=(3, 1)) % 200
            ).astype(dtype)
    x = ops.parameter([3, 1], dtype, name="x")
    t = ops.parameter([3], np.int64, name="t")
    y = named(o3.broadcast(x, t, broadcast_spec="bidirectional"), "y")
    for target in ([2, 1, 4], [1, 3, 1]):
        expected, got = run_both(ov.Model([ops.result(y)], [x, t], "bc"), [data, np.array(target)], tmp_path, ov_run)
        assert got[0].dtype == dtype
        assert_same(expected, got)


@pytest.mark.parametrize("data_shape,target,mode,mapping,index,message", [
    ((3,), [1], "numpy", None, 0, "does not broadcast"),
    ((2, 3), [3], "numpy", None, 0, "higher rank"),
    ((3,), [4, 2], "bidirectional", None, 1, "do not broadcast"),
    ((3,), [3, 2], "explicit", [1], 0, "does not broadcast"),
    ((2, 3), [2, 3], "explicit", [1, 0], 2, "increasing"),
    ((2,), [2, -1], "numpy", None, 1, "negative"),
])
def test_broadcast_errors_name_the_input(data_shape, target, mode, mapping, index, message):
    spec = find("Broadcast", "opset3")
    infos = [TensorInfo(data_shape, "f32"), TensorInfo((len(target),), "i64", np.array(target))]
    if mapping is not None:
        infos.append(TensorInfo((len(mapping),), "i64", np.array(mapping)))
    with pytest.raises(ShapeError, match=message) as info:
        spec.infer(spec.parse_attrs({"mode": mode}), infos)
    assert info.value.input == index


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
@pytest.mark.parametrize("data_shape,repeats", [((2, 3), [2, 1]), ((2, 3), [3]), ((2, 3), [2, 1, 3]),
                                                ((1, 2, 3), [1, 0, 2]), ((4,), [1]), ((2, 3), [1, 1])])
def test_tile(data_shape, repeats, dtype, tmp_path, ov_run):
    data = (rng(4).integers(0, 100, size=data_shape)).astype(dtype)
    x = ops.parameter(list(data_shape), dtype, name="x")
    y = named(o1.tile(x, ops.constant(np.array(repeats, np.int64))), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "tile"), [data], tmp_path, ov_run)
    assert_same(expected, got)


def test_tile_dynamic(tmp_path, ov_run):
    x = ops.parameter(ov.PartialShape([-1, 3]), np.float32, name="x")
    y = named(o1.tile(x, ops.constant(np.array([2, 1, 2], np.int32))), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "tile"), tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for rows in (1, 4):
        data = rng(rows).normal(size=(rows, 3)).astype(np.float32)
        assert_same(ov_run(str(path), [data]), [compiled({"x": data})["y"]])


def test_huge_broadcast_is_refused_not_allocated():
    """A target larger than the machine's memory is a ShapeError, at compile time (folding) or run time."""
    spec = find("Tile", "opset1")
    from irgrid.registry import RunContext

    with pytest.raises(ShapeError, match="GiB"):
        spec.run({}, [np.zeros((2, 2), np.float32), np.array([2**31, 2**31])], RunContext(1))

"""Reduce*-1 and Softmax-1/-8 against OpenVINO's CPU plugin (f32 inference) on saved IRs.

Max and Min, and integer Sum and Prod, are exact; float sums are compared with rtol 1e-6 (numpy sums
pairwise, OpenVINO in its own order) and f16 within one ulp (both reduce in f32 and round once);
Softmax with rtol 1e-6 (OpenVINO's SIMD exp differs from libm in the last ulps).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset13 as ops
import pytest

import irgrid
from irgrid.inference import infer_model
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov

REDUCTIONS = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
AXES = [[1], [-1], [0, 2], [-3, -1], [0, 1, 2], [], 2]


def _reduce_model(name, shape, dtype, axes, keep_dims):
    x = ops.parameter(list(shape), dtype, name="x")
    y = named(getattr(o1, name)(x, ops.constant(np.array(axes, np.int64)), keep_dims), "y")
    return ov.Model([ops.result(y)], [x], "reduce")


def _compare(got, expected, dtype, name):
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if np.dtype(dtype).kind in "iu" or name in ("reduce_max", "reduce_min"):
        np.testing.assert_array_equal(got, expected)
    elif dtype == np.float16:
        np.testing.assert_array_max_ulp(got, expected, maxulp=1)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 if name != "reduce_prod" else 0)


@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axes", AXES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_f32(name, axes, keep_dims, tmp_path, ov_run, ov_core):
    """Empty axes without keep_dims (the input unchanged) against OpenVINO's reference implementation:
    the CPU plugin refuses that configuration."""
    data = rng(1).uniform(0.5, 1.5, size=(3, 4, 5)).astype(np.float32)
    model = _reduce_model(name, data.shape, np.float32, axes, keep_dims)
    if axes == [] and not keep_dims:
        (expected,) = ov_reference(ov_core, lambda c: getattr(o1, name)(c, ops.constant(np.array([], np.int64)),
                                                                          False), [data])
        got = irgrid.compile_model(save_ov(model, tmp_path))({"x": data})["y"]
        assert_same([expected, data], [got, got])
        return
    expected, got = run_both(model, [data], tmp_path, ov_run)
    _compare(got[0], expected[0], np.float32, name)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_other_types(name, dtype, tmp_path, ov_run):
    """Integer means of sums that do not divide evenly, negative ones included."""
    data = rng(2).integers(-9, 10, size=(4, 3, 2)).astype(dtype)
    if dtype == np.float16:
        data = data / 8
    expected, got = run_both(_reduce_model(name, data.shape, dtype, [0, 2], False), [data], tmp_path, ov_run)
    _compare(got[0], expected[0], dtype, name)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduce_over_zero_size_axis(name, dtype, tmp_path, ov_run):
    data = np.zeros((2, 0, 3), dtype)
    expected, got = run_both(_reduce_model(name, data.shape, dtype, [1], False), [data], tmp_path, ov_run)
    assert_same(expected, got)


def test_reduce_dynamic_dims_and_runtime_axes(tmp_path, ov_run):
    x = ops.parameter(ov.PartialShape([-1, 4, -1]), np.float32, name="x")
    a = ops.parameter([1], np.int64, name="a")
    y0 = named(o1.reduce_max(x, ops.constant(np.array([-1], np.int64)), True), "y0")
    y1 = named(o1.reduce_sum(x, a, False), "y1")
    path = save_ov(ov.Model([ops.result(y0), ops.result(y1)], [x, a], "dyn"), tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for shape, axis in [((1, 4, 2), 0), ((3, 4, 5), -1)]:
        data = rng(3).normal(size=shape).astype(np.float32)
        expected = ov_run(str(path), [data, np.array([axis])])
        got = list(compiled({"x": data, "a": np.array([axis])}).values())
        assert_same(expected[:1], got[:1])
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-6, atol=1e-6)


def test_reduce_folds_shape_arithmetic(tmp_path, ov_run):
    """ReduceProd of ShapeOf (the element count torch's flatten exports) folds: static Reshape."""
    x = ops.parameter([2, 3, 4], np.float32, name="x")
    count = o1.reduce_prod(ops.shape_of(x), ops.constant(np.array([0], np.int64)), True)
    y = named(ops.reshape(x, count, False), "y")
    model = ov.Model([ops.result(y)], [x], "flat")
    ir = irgrid.read_model(save_ov(model, tmp_path))
    (reshape,) = [layer for layer in ir.layers.values() if layer.type == "Reshape"]
    assert infer_model(ir)[(reshape.id, 0)].shape == (24,)
    data = rng(4).normal(size=(2, 3, 4)).astype(np.float32)
    expected, got = run_both(model, [data], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("version,axis", [("v1", 0), ("v1", 1), ("v1", 2), ("v8", -1), ("v8", -3), ("v8", 1)])
def test_softmax(version, axis, dtype, tmp_path, ov_run):
    data = (rng(5).normal(size=(2, 3, 7)) * 5).astype(dtype)
    data[0, 0, :3] = [80, -80, 0]  # large logits: the max shift keeps exp finite
    x = ops.parameter(list(data.shape), dtype, name="x")
    y = named((o1.softmax if version == "v1" else o8.softmax)(x, axis), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [x], "softmax"), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    if dtype == np.float16:
        np.testing.assert_array_max_ulp(got[0], expected[0], maxulp=1)
    else:
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=1e-30)

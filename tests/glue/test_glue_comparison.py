"""Comparisons, Logical*, Bitwise*, Select, Clamp, Minimum, Maximum, Power, Mod and FloorMod against
OpenVINO (CPU plugin at f32 on saved IRs; its reference implementation through folded constants where
the two differ).

All exact: comparisons and selections are exact, and Power's f32 results agree exactly on the values
used here (small integral and half-integral powers); f32 Power with random operands gets rtol 1e-6.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov

SHAPE_PAIRS = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 2))]
COMPARISONS = ["greater", "less", "equal", "greater_equal", "less_equal", "not_equal"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


def _binary_model(op, a: np.ndarray, b: np.ndarray) -> ov.Model:
    pa = ops.parameter(list(a.shape), a.dtype, name="a")
    pb = ops.parameter(list(b.shape), b.dtype, name="b")
    return ov.Model([ops.result(named(op(pa, pb), "y"))], [pa, pb], "binary")


def _operands(shapes, dtype):
    """Small integers (so equal pairs occur), with NaN, +-inf and +-0 mixed in for float types."""
    a, b = (rng(i).integers(-3, 4, size=s).astype(dtype) for i, s in enumerate(shapes))
    if np.dtype(dtype).kind == "f" and a.size >= 4:
        a.reshape(-1)[:4] = [np.nan, np.inf, -0.0, -np.inf]
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=[f"{a}x{b}" for a, b in SHAPE_PAIRS])
@pytest.mark.parametrize("name", COMPARISONS)
def test_comparison(name, shapes, dtype, tmp_path, ov_run, ov_core):
    """IEEE comparisons (NaN compares unequal to everything), as OpenVINO's reference implementation
    and its CPU plugin on AVX2 compute them; the plugin's AVX-512 kernels answer True for NaN > b and
    NaN >= b (seen with OpenVINO 2026.4.1 on Zen 4), so NaN operands are checked against the reference."""
    a, b = _operands(shapes, dtype)
    op = getattr(o1, name)
    expected, got = run_both(_binary_model(op, a, b), [a, b], tmp_path, ov_run)
    assert got[0].dtype == np.bool_
    assert_same(ov_reference(ov_core, op, [a, b]), got)
    plain = ~np.broadcast_to(np.isnan(a.astype(np.float32)), got[0].shape)
    np.testing.assert_array_equal(got[0][plain], expected[0][plain])


@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=[f"{a}x{b}" for a, b in SHAPE_PAIRS])
@pytest.mark.parametrize("name", LOGICAL)
def test_logical(name, shapes, tmp_path, ov_run):
    a, b = (rng(i).integers(0, 2, size=s).astype(np.bool_) for i, s in enumerate(shapes))
    expected, got = run_both(_binary_model(getattr(o1, name), a, b), [a, b], tmp_path, ov_run)
    assert_same(expected, got)


def test_logical_not(tmp_path, ov_run):
    a = rng(3).integers(0, 2, size=(3, 5)).astype(np.bool_)
    x = ops.parameter([3, 5], np.bool_, name="x")
    expected, got = run_both(ov.Model([ops.result(named(o1.logical_not(x), "y"))], [x], "not"), [a], tmp_path, ov_run)
    assert_same(expected, got)


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.int64])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"])
def test_bitwise(name, dtype, tmp_path, ov_run):
    """Bitwise*-13: what OpenVINO's PyTorch frontend emits for `mask_a | mask_b` (booleans) and for
    integer bit operations (i64 within the i32 range: OpenVINO's CPU plugin runs i64 in i32)."""
    if dtype == np.bool_:
        a, b = (rng(i).integers(0, 2, size=s).astype(np.bool_) for i, s in enumerate(((2, 3, 4), (3, 1))))
    else:
        info = np.iinfo(dtype)
        a, b = (rng(i).integers(max(info.min, -2**31), min(info.max, 2**31 - 1), size=s, endpoint=True).astype(dtype)
                for i, s in enumerate(((2, 3, 4), (3, 1))))
    if name == "bitwise_not":
        x = ops.parameter(list(a.shape), dtype, name="a")
        model, inputs = ov.Model([ops.result(named(ops.bitwise_not(x), "y"))], [x], "not"), [a]
    else:
        model, inputs = _binary_model(getattr(ops, name), a, b), [a, b]
    expected, got = run_both(model, inputs, tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


@pytest.mark.parametrize("build", [o1.logical_and, o1.logical_not], ids=["and", "not"])
def test_logical_refuses_non_boolean(build, tmp_path):
    """OpenVINO's validation refuses these; the IR is edited after building a boolean one."""
    x = ops.parameter([3], np.bool_, name="x")
    node = build(x, x) if build is o1.logical_and else build(x)
    path = save_ov(ov.Model([ops.result(named(node, "y"))], [x], "logic"), tmp_path)
    path.write_text(path.read_text().replace('element_type="boolean"', 'element_type="u8"')
                    .replace('precision="BOOL"', 'precision="U8"'))
    problems = irgrid.check_model(path)
    assert any("boolean" in p.message and p.layer.type.startswith("Logical") for p in problems)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shapes", [((2, 3, 4),) * 3, ((2, 1, 4), (3, 1), (4,)), ((), (2, 3), (1, 3)),
                                    ((2, 3), (), ())], ids=["same", "mixed", "scalar-cond", "scalar-values"])
def test_select(shapes, dtype, tmp_path, ov_run):
    condition = rng(5).integers(0, 2, size=shapes[0]).astype(np.bool_)
    then, otherwise = ((rng(6 + i).normal(size=s) * 20).astype(dtype) for i, s in enumerate(shapes[1:]))
    params = [ops.parameter(list(v.shape), v.dtype, name=n) for n, v in zip("cte", (condition, then, otherwise))]
    y = named(o1.select(*params), "y")
    expected, got = run_both(ov.Model([ops.result(y)], params, "select"), [condition, then, otherwise],
                             tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def test_select_refuses_non_boolean_condition(tmp_path):
    c = ops.parameter([3], np.bool_, name="c")
    t = ops.parameter([3], np.float32, name="t")
    path = save_ov(ov.Model([ops.result(named(o1.select(c, t, t), "y"))], [c, t], "select"), tmp_path)
    path.write_text(path.read_text().replace('element_type="boolean"', 'element_type="f32"')
                    .replace('precision="BOOL"', 'precision="FP32"'))
    (problem,) = irgrid.check_model(path)
    assert problem.layer.type == "Select" and "condition must be boolean" in problem.message


def _minmax_operands(dtype):
    a = np.array([np.nan, 1, np.nan, -0.0, 0.0, 2, -np.inf, 5], np.float32)
    b = np.array([1, np.nan, np.nan, 0.0, -0.0, 3, 4, np.inf], np.float32)
    if np.dtype(dtype).kind != "f":
        a, b = (np.nan_to_num(v, nan=7, posinf=100, neginf=-100) for v in (a, b))
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("name", ["minimum", "maximum"])
def test_minimum_maximum(name, dtype, tmp_path, ov_run, ov_core):
    """Exactly as OpenVINO's CPU plugin, NaN and signed zeros included (its reference implementation
    differs only there: checked on the other values)."""
    a, b = _minmax_operands(dtype)
    op = getattr(o1, name)
    expected, got = run_both(_binary_model(op, a, b), [a, b], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)
    assert np.array_equal(np.signbit(got[0]), np.signbit(expected[0]))
    (reference,) = ov_reference(ov_core, op, [a, b])
    plain = ~(np.isnan(a.astype(np.float32)) | np.isnan(b.astype(np.float32)) | ((a == 0) & (b == 0)))
    np.testing.assert_array_equal(got[0][plain], reference[plain])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("bounds", [(-1.5, 2.5), (0.0, 0.0), (-2.0, 1.0), (0.3, 100.7)])
def test_clamp(bounds, dtype, tmp_path, ov_run, ov_core):
    """Floats exactly as OpenVINO's CPU plugin (NaN -> min; the reference implementation keeps NaN);
    integers clamp to [ceil(min), floor(max)] (the spec), checked with the reference on every value and
    the CPU plugin except u8 below a fractional min (it computes u8 in f32 and truncates: 0 -> 0 for
    min 0.3)."""
    values = np.array([np.nan, -np.inf, np.inf, -3, -2, -1.5, -1, -0.5, 0, 0.25, 0.3, 1, 2, 2.5, 3, 200], np.float32)
    if np.dtype(dtype).kind != "f":
        values = np.unique(np.trunc(np.nan_to_num(values, nan=5, posinf=120, neginf=-120)))
        values = values[values >= 0] if dtype == np.uint8 else values
    data = values.astype(dtype)

    def clamp(x):
        return o1.clamp(x, *bounds)

    x = ops.parameter(list(data.shape), dtype, name="x")
    expected, got = run_both(ov.Model([ops.result(named(clamp(x), "y"))], [x], "clamp"), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    cpu_agrees = ~((dtype == np.uint8) & (data < bounds[0]) & (bounds[0] % 1 != 0))
    np.testing.assert_array_equal(got[0][cpu_agrees], expected[0][cpu_agrees])
    (reference,) = ov_reference(ov_core, clamp, [data])
    finite = ~np.isnan(data.astype(np.float32))
    np.testing.assert_array_equal(got[0][finite], reference[finite])


def test_clamp_min_above_max_is_an_attribute_error(tmp_path):
    x = ops.parameter([3], np.float32, name="x")
    path = save_ov(ov.Model([ops.result(named(o1.clamp(x, 0.0, 1.0), "y"))], [x], "clamp"), tmp_path)
    path.write_text(path.read_text().replace('min="0"', 'min="2"'))
    (problem,) = irgrid.check_model(path)
    assert problem.kind == "layerattribute" and "above max" in problem.message


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_power_float(dtype, tmp_path, ov_run):
    base = np.array([2, -2, 0.5, 0, -0.0, 3, -3, np.nan, np.inf, 1, 4, -8, 2.5, 0.25], np.float32).astype(dtype)
    exponent = np.array([3, 3, -2, 0, -1, 0.5, 0.5, 0, 1, np.nan, -0.5, 1 / 3, 2, 1.5], np.float32).astype(dtype)
    expected, got = run_both(_binary_model(o1.power, base, exponent), [base, exponent], tmp_path, ov_run)
    assert got[0].dtype == dtype
    np.testing.assert_array_equal(np.isnan(got[0]), np.isnan(expected[0]))
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6 if dtype == np.float32 else 1e-3, atol=0)


def test_power_float_random(tmp_path, ov_run):
    base = rng(8).uniform(0.1, 10, size=(4, 50)).astype(np.float32)
    exponent = rng(9).uniform(-3, 3, size=(50,)).astype(np.float32)
    expected, got = run_both(_binary_model(o1.power, base, exponent), [base, exponent], tmp_path, ov_run)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_power_integer(dtype, tmp_path, ov_run, ov_core):
    """Exact integer powers and truncated negative powers, against OpenVINO's reference implementation
    on every value and its CPU plugin (which computes in f32) where results stay below 2^24."""
    base = np.array([2, -2, 3, 1, -1, -1, 0, 5, 7, 3, 10, -3, 2], dtype)
    exponent = np.array([-1, -1, 2, -3, -3, -2, 0, 3, 2, 19, 9, 13, 0], dtype)
    expected, got = run_both(_binary_model(o1.power, base, exponent), [base, exponent], tmp_path, ov_run)
    assert got[0].dtype == dtype
    (reference,) = ov_reference(ov_core, o1.power, [base, exponent])
    np.testing.assert_array_equal(got[0], reference)
    small = np.abs(reference) < 2**24
    np.testing.assert_array_equal(got[0][small], expected[0][small])


def test_comparisons_feed_select_with_dynamic_dims(tmp_path, ov_run):
    """An occlusion-style mask on a dynamic batch: check_model clean, exact on two batch sizes."""
    x = ops.parameter(ov.PartialShape([-1, 2, 3]), np.float32, name="x")
    limit = ops.constant(np.float32(0.5))
    inside = o1.logical_and(o1.greater(x, ops.negative(limit)), o1.less_equal(x, limit))
    y = named(o1.select(inside, o1.clamp(ops.multiply(x, ops.constant(np.float32(3))), -1, 1),
                        ops.constant(np.float32(0))), "y")
    model = ov.Model([ops.result(y)], [x], "mask")
    path = save_ov(model, tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for batch in (1, 4):
        data = rng(batch).uniform(-1, 1, size=(batch, 2, 3)).astype(np.float32)
        assert_same(ov_run(str(path), [data]), [compiled({"x": data})["y"]])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64])
@pytest.mark.parametrize("name", ["mod", "floor_mod"])
def test_mod_and_floor_mod(name, dtype, tmp_path, ov_run, ov_core):
    """Floats exactly as OpenVINO's CPU plugin (a - b * trunc or floor of a / b in the data's type);
    integers exactly as its reference implementation, and as the CPU plugin below 2^24 (it computes
    integers in f32)."""
    a = (rng(10).normal(size=(4, 50)) * 30).astype(np.float32)
    b = (rng(11).normal(size=(50,)) * 4).astype(np.float32)
    a[0, :6], b[:6] = [5.5, -5.5, 5.5, -5.5, 0, 7], [2, 2, -2, -2, 3, 0.1]
    if np.dtype(dtype).kind == "i":
        a, b = np.trunc(a), np.where(np.trunc(b) == 0, 3, np.trunc(b))
        a[1, :2] = [2**30, -(2**30) - 3]
    a, b = a.astype(dtype), b.astype(dtype)
    op = getattr(o1, name)
    expected, got = run_both(_binary_model(op, a, b), [a, b], tmp_path, ov_run)
    assert got[0].dtype == dtype
    if np.dtype(dtype).kind == "i":
        (reference,) = ov_reference(ov_core, op, [a, b])
        np.testing.assert_array_equal(got[0], reference)
        small = np.abs(a) < 2**24
        np.testing.assert_array_equal(got[0][small], expected[0][small])
    else:
        assert_same(expected, got)

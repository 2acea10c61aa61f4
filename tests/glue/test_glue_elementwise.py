"""Unary element-wise glue layers against OpenVINO's CPU plugin (f32 inference) on saved IRs.

Exact agreement for the ops that are one correctly rounded IEEE operation (Abs, Negative, Relu, Floor,
Ceiling, Round, Sqrt) and for integers; rtol 1e-6 (f32) for Exp, Log, Sigmoid and Tanh, whose SIMD
approximations in OpenVINO may differ from libm in the last ulps, and one f16 ulp for them in f16.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset5 as o5
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import assert_same, named, ov_reference, rng, run_both, save_ov

SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 1e-30, -1e-30, 3.7, -3.7,
                    1e6 + 0.5, 8388609.0, -8388609.0, 1e30, -1e30, np.inf, -np.inf, np.nan], np.float32)

EXACT = {"absolute": o1.absolute, "negative": o1.negative, "relu": o1.relu, "floor": o1.floor,
         "ceiling": o1.ceiling, "sqrt": o1.sqrt,
         "round_even": lambda x: o5.round(x, "half_to_even"),
         "round_away": lambda x: o5.round(x, "half_away_from_zero")}
TRANSCENDENTAL = {"exp": o1.exp, "log": o1.log, "sigmoid": o1.sigmoid, "tanh": o1.tanh}


def _unary_model(op, shape, dtype) -> ov.Model:
    x = ops.parameter(list(shape), dtype, name="x")
    return ov.Model([ops.result(named(op(x), "y"))], [x], "unary")


def _float_data(dtype) -> np.ndarray:
    values = np.concatenate([SPECIAL, rng(1).normal(scale=4, size=43).astype(np.float32)])
    with np.errstate(over="ignore"):  # 1e30 -> inf in f16
        return values.astype(dtype).reshape(4, 16)


def _cpu_follows_spec(name: str, data: np.ndarray) -> np.ndarray:
    """Where OpenVINO's CPU kernels match the op spec (and its reference implementation): they give
    exp(NaN) = inf and relu(NaN) = 0, and round half away from zero as floor(|x| + 0.5), which sends
    0.49999997 to 1 and the odd integer 8388609 to 8388610."""
    if name in ("exp", "relu"):
        return ~np.isnan(data)
    if name == "round_away":
        return ~np.isin(np.abs(data.astype(np.float32)), np.array([0.49999997, 8388609.0], np.float32))
    return np.ones(data.shape, bool)


def _compare(got: np.ndarray, want: np.ndarray, exact: bool) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if exact:
        np.testing.assert_array_equal(got, want)
    elif got.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_max_ulp(got, want, maxulp=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name", list(EXACT) + list(TRANSCENDENTAL))
def test_float_unary(name, dtype, tmp_path, ov_run, ov_core):
    """All values against OpenVINO's reference implementation, and against its CPU plugin where that
    follows the spec (see _cpu_follows_spec)."""
    op = {**EXACT, **TRANSCENDENTAL}[name]
    data = _float_data(dtype)
    expected, got = run_both(_unary_model(op, data.shape, dtype), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    agree = _cpu_follows_spec(name, data)
    _compare(got[0][agree], expected[0][agree], name in EXACT)
    (reference,) = ov_reference(ov_core, op, [data])
    _compare(got[0], reference, name in EXACT)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", ["absolute", "negative", "relu", "floor", "ceiling", "round_even", "round_away"])
def test_integer_unary(name, dtype, tmp_path, ov_run):
    data = np.array([[-7, -1, 0, 1, 2, 1000], [-1000, 5, -3, 3, 120, -120]], dtype)
    expected, got = run_both(_unary_model(EXACT[name], data.shape, dtype), [data], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def test_transcendental_refuses_integer_input(tmp_path):
    x = ops.parameter([3], np.float32, name="x")
    y = named(o1.exp(ops.convert(x, "i32")), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "exp_int"), tmp_path)
    (problem,) = irgrid.check_model(path)
    assert problem.layer.type == "Exp" and "floating-point" in problem.message


def test_unary_dynamic_shape(tmp_path, ov_run):
    x = ops.parameter(ov.PartialShape([-1, 3]), np.float32, name="x")
    y = named(o1.sigmoid(o1.relu(o1.negative(x))), "y")
    model = ov.Model([ops.result(y)], [x], "dyn")
    path = save_ov(model, tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for rows in (1, 5):
        data = rng(rows).normal(size=(rows, 3)).astype(np.float32)
        (expected,) = ov_run(str(path), [data])
        np.testing.assert_allclose(compiled({"x": data})["y"], expected, rtol=1e-6, atol=0)

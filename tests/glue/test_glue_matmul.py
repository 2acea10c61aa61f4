"""MatMul-1 against OpenVINO's CPU plugin (f32 inference) on saved IRs.

Float products are sums whose order differs between numpy's BLAS and OpenVINO's kernels: rtol 1e-5
with atol 1e-5 (operands of unit scale, inner dims <= 16). Integer products of small values are exact.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import named, rng, run_both, save_ov

CASES = [  # a shape, b shape, transpose_a, transpose_b
    ((3, 4), (4, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((4, 3), (5, 4), True, True),
    ((2, 3, 4), (4, 5), False, False),
    ((2, 1, 3, 4), (5, 4, 6), False, False),
    ((2, 3, 4), (2, 5, 4), False, True),
    ((4,), (4, 5), True, False),  # 1-D a: a row vector, transpose ignored
    ((3, 4), (4,), False, True),  # 1-D b: a column vector, transpose ignored
    ((4,), (4,), False, False),
    ((4,), (2, 4, 5), False, False),
    ((2, 3, 4), (4,), False, False),
    ((1, 3, 16), (7, 16, 2), False, False),
]


@pytest.mark.parametrize("a_shape,b_shape,transpose_a,transpose_b", CASES)
def test_matmul_f32(a_shape, b_shape, transpose_a, transpose_b, tmp_path, ov_run):
    a = rng(1).normal(size=a_shape).astype(np.float32)
    b = rng(2).normal(size=b_shape).astype(np.float32)
    pa, pb = (ops.parameter(list(v.shape), np.float32, name=n) for n, v in (("a", a), ("b", b)))
    y = named(o1.matmul(pa, pb, transpose_a, transpose_b), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], "mm"), [a, b], tmp_path, ov_run)
    assert got[0].shape == expected[0].shape
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int64])
def test_matmul_other_types(dtype, tmp_path, ov_run):
    """f16: tolerance one f16 ulp of the largest result (both sum in f32 and round once); integers exact."""
    a = rng(3).integers(-5, 6, size=(2, 3, 8)).astype(dtype)
    b = rng(4).integers(-5, 6, size=(8, 4)).astype(dtype)
    if dtype == np.float16:
        a, b = a / 4, b / 8
    pa, pb = (ops.parameter(list(v.shape), dtype, name=n) for n, v in (("a", a), ("b", b)))
    y = named(o1.matmul(pa, pb, False, False), "y")
    expected, got = run_both(ov.Model([ops.result(y)], [pa, pb], "mm"), [a, b], tmp_path, ov_run)
    assert got[0].dtype == dtype
    if dtype == np.float16:
        np.testing.assert_array_max_ulp(got[0], expected[0], maxulp=1)
    else:
        np.testing.assert_array_equal(got[0], expected[0])


def test_matmul_with_constant_weights_and_dynamic_batch(tmp_path, ov_run):
    """A linear layer (x @ W^T) on a dynamic batch: check_model clean, two batch sizes run."""
    w = rng(5).normal(size=(6, 4)).astype(np.float32)
    x = ops.parameter(ov.PartialShape([-1, -1, 4]), np.float32, name="x")
    y = named(o1.matmul(x, ops.constant(w), False, True), "y")
    path = save_ov(ov.Model([ops.result(y)], [x], "linear"), tmp_path)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for shape in [(1, 1, 4), (3, 5, 4)]:
        data = rng(6).normal(size=shape).astype(np.float32)
        (expected,) = ov_run(str(path), [data])
        np.testing.assert_allclose(compiled({"x": data})["y"], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("a,b,attrs,index,message", [
    ((3, 4), (5, 6), {}, 1, "inner dims"),
    ((2, 3, 4), (3, 4, 5), {}, 1, "batch dims"),
    ((), (4,), {}, 0, "scalar"),
    ((3, 4), (3, 5), {"transpose_b": "true"}, 1, "inner dims"),
])
def test_matmul_shape_errors_name_the_input(a, b, attrs, index, message):
    from irgrid.errors import ShapeError
    from irgrid.registry import TensorInfo, find

    spec = find("MatMul", "opset1")
    with pytest.raises(ShapeError, match=message) as info:
        spec.infer(spec.parse_attrs(attrs), [TensorInfo(a, "f32"), TensorInfo(b, "f32")])
    assert info.value.input == index


@pytest.mark.parametrize("shapes", [((256, 2304), (1, 2304, 3400), False), ((1, 3400, 2304), (256, 2304), True)],
                         ids=["dcnv2", "transposed_b"])
def test_a_large_product_runs_on_openvino_with_the_same_bits_at_any_thread_count(shapes, tmp_path, ov_run):
    """A product of at least LARGE_PRODUCT multiply-adds runs on OpenVINO's MatMul (irgrid/ops/glue/matmul.py):
    the same bits at 1 and 2 threads, OpenVINO's own MatMul's within 1e-5 (a sum order may differ per
    compiled model), numpy's within 1e-3 absolute (sums of 2304 products of N(0, 1) values, of magnitude up
to about 200: two summation orders differ by up to 2e-4 there)."""
    from irgrid.ops.glue.matmul import LARGE_PRODUCT

    a_shape, b_shape, transpose_b = shapes
    assert 256 * 3400 * 2304 >= LARGE_PRODUCT
    a = rng(3).normal(size=a_shape).astype(np.float32)
    b = rng(4).normal(size=b_shape).astype(np.float32)
    pa, pb = (ops.parameter(list(v.shape), np.float32, name=n) for n, v in (("a", a), ("b", b)))
    path = save_ov(ov.Model([ops.result(named(o1.matmul(pa, pb, False, transpose_b), "y"))], [pa, pb], "mm"),
                   tmp_path)
    one, two = (irgrid.compile_model(path, threads=t)([a, b])["y"] for t in (1, 2))
    assert one.tobytes() == two.tobytes()
    np.testing.assert_allclose(one, ov_run(str(path), [a, b])[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(one, np.matmul(a, np.swapaxes(b, -1, -2) if transpose_b else b), rtol=0,
                               atol=1e-3)

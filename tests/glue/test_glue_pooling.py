"""MaxPool-1/-8/-14, AvgPool-1/-14, AdaptiveAvgPool-8, AdaptiveMaxPool-8 and PReLU-1.

f32 MaxPool and AvgPool run on OpenVINO's own layers (irgrid/dense.py), the rest in numpy; the
`backend` fixture runs the pooling tests both ways (IRGRID_GEMM=numpy forces numpy).

Oracles: OpenVINO's CPU plugin on saved IRs at f32 (max-pool values and all indices exactly equal;
averages and PReLU rtol 1e-6, atol 1e-6), onnx.reference for f64 (1e-12 relative: OpenVINO computes
f64 in f32), torch where neither settles it (ceil_torch, AdaptiveMaxPool's i64 indices, which the CPU
plugin refuses), and an end-to-end spatial transformer converted from torch.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset8 as o8
import openvino.opset14 as o14
import pytest

import irgrid
from irgrid.builder import IRBuilder
from irgrid.errors import ShapeError
from irgrid.inference import infer_model
from oracles import assert_same, rng, run_both, save_ov

MEAN = dict(rtol=1e-6, atol=1e-6)


@pytest.fixture(params=["openvino", "numpy"])
def backend(request, monkeypatch) -> str:
    monkeypatch.setenv("IRGRID_GEMM", request.param)
    return request.param


def _data(shape, dtype=np.float32, seed=0) -> np.ndarray:
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng(seed).integers(max(info.min, -100), min(info.max, 100), size=shape).astype(dtype)
    return rng(seed).normal(size=shape).astype(dtype)


def _model(build, x: np.ndarray) -> ov.Model:
    p = o14.parameter(list(x.shape), x.dtype, name="x")
    node = build(p)
    outs = [o14.result(out) for out in node.outputs()]
    for k, out in enumerate(outs):
        out.output(0).get_tensor().set_names({f"y{k}"})
    return ov.Model(outs, [p], "pool")


# spatial shape, kernel, strides, dilations, pads_begin, pads_end, auto_pad, rounding
WINDOWS = [
    ((9,), (3,), (2,), (1,), (1,), (1,), "explicit", "floor"),
    ((10,), (2,), (3,), (2,), (0,), (1,), "explicit", "ceil"),
    ((7, 9), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "explicit", "floor"),
    ((7, 8), (2, 3), (2, 2), (1, 2), (0, 1), (1, 0), "explicit", "ceil"),
    ((6, 7), (2, 2), (2, 2), (1, 1), (0, 0), (0, 0), "explicit", "ceil"),
    ((7, 9), (3, 2), (2, 3), (1, 1), (0, 0), (0, 0), "same_upper", "floor"),
    ((7, 9), (3, 4), (2, 1), (1, 1), (0, 0), (0, 0), "same_lower", "floor"),
    ((7, 9), (3, 3), (2, 2), (1, 1), (5, 5), (5, 5), "valid", "ceil"),
    ((4, 6, 5), (2, 2, 2), (2, 2, 2), (1, 1, 1), (0, 0, 0), (0, 0, 0), "explicit", "floor"),
    ((5, 6, 7), (3, 2, 3), (2, 1, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), "explicit", "ceil"),
]
IDS = [f"{len(w[0])}d-{w[6]}-{w[7]}-{i}" for i, w in enumerate(WINDOWS)]


@pytest.mark.parametrize("version", [1, 8, 14])
@pytest.mark.parametrize("window", WINDOWS, ids=IDS)
def test_max_pool(window, version, tmp_path, ov_run, backend):
    """Ranks 1-3 of spatial dims, strides, dilations (-8, -14), pads, auto_pad, floor/ceil, both outputs:
    values and i64 indices exactly as the CPU plugin's (ceil windows running past the padded input)."""
    spatial, kernel, strides, dilations, begin, end, auto_pad, rounding = window
    if version == 1 and any(d != 1 for d in dilations):
        dilations = (1,) * len(kernel)
    x = _data((2, 3, *spatial))
    if version == 1:
        build = lambda p: o1.max_pool(p, strides, begin, end, kernel, rounding, auto_pad)  # noqa: E731
    else:
        build = lambda p: (o8 if version == 8 else o14).max_pool(  # noqa: E731
            p, strides, dilations, begin, end, kernel, rounding, auto_pad)
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    assert len(got) == (1 if version == 1 else 2)
    assert_same(expected, got)


@pytest.mark.parametrize("index_type", ["i32", "i64"])
@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_max_pool_indices_axis(axis, index_type, tmp_path, ov_run, backend):
    """Indices are flat positions in data.shape[axis:], of index_element_type; windows all in padding
    give the lowest value and index 0 of their channel."""
    x = _data((2, 3, 5, 6), seed=1)
    build = lambda p: o14.max_pool(p, [2, 2], [1, 1], [2, 1], [1, 2], [2, 2], "ceil", None,  # noqa: E731
                                   index_type, axis)
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    assert got[1].dtype == np.dtype(index_type.replace("i", "int"))
    assert_same(expected, got)


@pytest.mark.parametrize("version", [8, 14])
def test_max_pool_indices_nothing_reads(version, tmp_path, ov_run, backend, monkeypatch):
    """MaxPool-8/-14 whose indices no layer reads (as torch's nn.MaxPool2d converts): the values are the
    CPU plugin's, and the indices are not computed (on OpenVINO its plugin takes 400x as long for them)."""
    from irgrid.ops.glue import pooling

    calls, original = [], pooling.run_on_openvino
    monkeypatch.setattr(pooling, "run_on_openvino", lambda *args: calls.append(args) or original(*args))
    x = _data((2, 3, 9, 8), seed=4)
    p = o14.parameter(list(x.shape), np.float32, name="x")
    node = (o8 if version == 8 else o14).max_pool(p, [2, 2], [1, 1], [1, 0], [0, 1], [3, 2], "ceil")
    result = o14.result(node.output(0))
    result.output(0).get_tensor().set_names({"y0"})
    expected, got = run_both(ov.Model([result], [p], "pool"), [x], tmp_path, ov_run)
    assert_same(expected, got)
    assert [len(args[3]) for args in calls] == ([1] if backend == "openvino" else [])


def test_results_do_not_depend_on_the_thread_count(tmp_path, backend):
    """Random MaxPool (values and indices) and AvgPool windows, 1 and 2 threads: the same bits."""
    generator = np.random.default_rng(7)
    for case in range(24):
        rank = 1 + case % 3
        kernel = [int(generator.integers(1, 4)) for _ in range(rank)]
        spatial = [int(generator.integers(k, k + 9)) for k in kernel]
        strides = [int(generator.integers(1, 3)) for _ in range(rank)]
        pads = [int(generator.integers(0, k)) for k in kernel]
        x = _data((int(generator.integers(1, 3)), int(generator.choice([1, 3, 16])), *spatial), seed=case)
        if case % 2:
            build = lambda p: o14.max_pool(p, strides, [1] * rank, pads, pads, kernel, "ceil")  # noqa: E731
        else:
            build = lambda p: o14.avg_pool(p, strides, pads, pads, kernel, bool(case % 4), "ceil")  # noqa: E731
        path = save_ov(_model(build, x), tmp_path, f"m{case}")
        one, two = (irgrid.compile_model(path, threads=n)({"x": x}) for n in (1, 2))
        for a, b in zip(one.values(), two.values()):
            assert np.array_equal(a, b, equal_nan=True), (case, kernel, spatial, strides, pads)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.float16])
def test_max_pool_types(dtype, tmp_path, ov_run):
    """Integer and f16 data; padding at the type's lowest value is never taken (f16 in f32: an empty
    window is -inf). (i64: the CPU plugin computes it in i32, so its empty windows differ.)"""
    x = _data((1, 2, 5, 7), dtype, seed=2)
    if dtype == np.int8:
        x[0, 0, :2] = -128
    build = lambda p: o8.max_pool(p, [2, 2], [1, 1], [1, 1], [1, 1], [2, 2], "ceil")  # noqa: E731
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


def test_max_pool_nan_and_inf(tmp_path, ov_run, backend):
    """NaN and -inf are never taken (a window of only those gives the lowest finite value); +inf is."""
    x = np.array([[[-np.inf, -np.inf, np.nan, 1, 2, np.nan, np.nan, np.nan, -np.inf, 3, np.inf, 0]]], np.float32)
    build = lambda p: o14.max_pool(p, [2], [1], [1], [1], [2])  # noqa: E731
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    assert_same(expected, got)
    assert got[0][0, 0, 0] == np.finfo(np.float32).min


AVG_CASES = [(window, exclude_pad) for window in WINDOWS for exclude_pad in (True, False)
             if not (exclude_pad and window[6] == "explicit"  # OpenVINO refuses pads of the kernel's size there
                     and any(b >= k or e >= k for b, e, k in zip(window[4], window[5], window[1])))]


@pytest.mark.parametrize("version", [1, 14])
@pytest.mark.parametrize("window, exclude_pad", AVG_CASES,
                         ids=[f"{IDS[WINDOWS.index(w)]}-{'exclude' if e else 'include'}-pad" for w, e in AVG_CASES])
def test_avg_pool(window, exclude_pad, version, tmp_path, ov_run, backend):
    """Divisors as the CPU plugin's: the real elements with exclude-pad or no padding, else the whole
    kernel (also where ceil rounding runs a window past the padded input)."""
    spatial, kernel, strides, _, begin, end, auto_pad, rounding = window
    x = _data((2, 3, *spatial), seed=3)
    build = lambda p: (o1 if version == 1 else o14).avg_pool(  # noqa: E731
        p, strides, begin, end, kernel, exclude_pad, rounding, auto_pad)
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    assert got[0].shape == expected[0].shape
    np.testing.assert_allclose(got[0], expected[0], **MEAN)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("length, kernel, stride, pads, auto_pad, exclude_pad", [
    (2, 1, 3, 0, "explicit", False), (2, 1, 3, 0, "same_upper", True), (4, 2, 3, 1, "explicit", True),
    (1, 2, 3, 1, "explicit", True)])
def test_avg_pool_window_past_the_input(length, kernel, stride, pads, auto_pad, exclude_pad, dtype, tmp_path, ov_run,
                                        backend):
    """A window that ceil rounding starts past the padded input holds no element: 0 there as the CPU
    plugin's (its +0.0 or -0.0 by position), not numpy's 0/0, on both backends and in f16."""
    x = np.arange(1, length + 1, dtype=dtype).reshape(1, 1, length)
    build = lambda p: o1.avg_pool(p, [stride], [pads], [pads], [kernel], exclude_pad, "ceil", auto_pad)  # noqa: E731
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[0].reshape(-1)[-1] == 0


def test_avg_pool_divisor_past_the_padded_input(tmp_path, ov_run, backend):
    """The case where OpenVINO and torch differ: include-pad, pads, ceil: the last window [5, 8) of a
    padded [-1, 7) input is divided by the kernel size 3 (torch divides by 2)."""
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 6)
    build = lambda p: o1.avg_pool(p, [2], [1], [1], [3], False, "ceil")  # noqa: E731
    expected, got = run_both(_model(build, x), [x], tmp_path, ov_run)
    np.testing.assert_array_equal(got[0], [[[1, 3, 5, 2]]])
    np.testing.assert_array_equal(expected[0], got[0])


@pytest.mark.parametrize("dims,kernel,stride,pad", [((9,), 2, 2, 1), ((7, 10), 3, 2, 1), ((5, 6, 7), 2, 2, 1),
                                                    ((7, 8), 3, 3, 0)])
def test_ceil_torch_against_torch(dims, kernel, stride, pad, tmp_path, ov_run):
    """MaxPool-14 and AvgPool-14 ceil_torch: torch's ceil_mode output dims (a window starting in the end
    padding dropped), max values and spatial indices (axis 2), exclude-pad averages; and OpenVINO's."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = len(dims)
    x = _data((1, 2, *dims), seed=4)
    pool = [F.max_pool1d, F.max_pool2d, F.max_pool3d][r - 1]
    avg = [F.avg_pool1d, F.avg_pool2d, F.avg_pool3d][r - 1]
    values, indices = pool(torch.tensor(x), kernel, stride, pad, ceil_mode=True, return_indices=True)
    mean = avg(torch.tensor(x), kernel, stride, pad, ceil_mode=True, count_include_pad=False)
    build = lambda p: [o14.max_pool(p, [stride] * r, [1] * r, [pad] * r, [pad] * r, [kernel] * r, "ceil_torch",  # noqa: E731
                                    axis=2),
                       o14.avg_pool(p, [stride] * r, [pad] * r, [pad] * r, [kernel] * r, True, "ceil_torch")]
    p = o14.parameter(list(x.shape), np.float32, name="x")
    nodes = build(p)
    model = ov.Model([o14.result(o) for n in nodes for o in n.outputs()], [p], "torch")
    expected, got = run_both(model, [x], tmp_path, ov_run)
    np.testing.assert_array_equal(got[0], values.numpy())
    np.testing.assert_array_equal(got[1], indices.numpy())
    np.testing.assert_allclose(got[2], mean.numpy(), **MEAN)
    assert_same(expected[:2], got[:2])
    np.testing.assert_allclose(got[2], expected[2], **MEAN)


def _onnx_pool(op: str, x: np.ndarray, **attrs) -> np.ndarray:
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    return ReferenceEvaluator(model).run(None, {"x": x})[0]


@pytest.mark.parametrize("dims,kernel,strides,dilations,begin,end,ceil", [
    ((11,), (3,), (2,), (2,), (1,), (2,), 1),
    ((7, 9), (3, 2), (2, 2), (1, 2), (1, 0), (1, 1), 0),
    ((7, 9), (3, 3), (2, 2), (2, 1), (1, 1), (1, 1), 1),
    ((4, 5, 6), (2, 2, 3), (1, 2, 2), (1, 1, 1), (0, 1, 1), (1, 0, 1), 0),
])
def test_max_pool_f64_against_onnx_reference(dims, kernel, strides, dilations, begin, end, ceil, tmp_path):
    """f64 stays f64: onnx.reference's MaxPool (dilations, ceil_mode, pads), exactly."""
    x = rng(5).normal(size=(2, 2, *dims))
    expected = _onnx_pool("MaxPool", x, kernel_shape=kernel, strides=strides, dilations=dilations,
                          pads=[*begin, *end], ceil_mode=ceil)
    path = save_ov(_model(lambda p: o14.max_pool(p, strides, dilations, begin, end, kernel,
                                                 "ceil" if ceil else "floor"), x), tmp_path)
    got = irgrid.compile_model(path)({"x": x})["y0"]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("count_include_pad", [0, 1])
@pytest.mark.parametrize("dims,kernel,strides,begin,end,ceil", [
    ((11,), (3,), (2,), (1,), (2,), 0),
    ((7, 9), (3, 2), (2, 2), (1, 0), (1, 1), 0),
    ((7, 9), (3, 3), (2, 2), (0, 0), (0, 0), 1),
    ((4, 5, 6), (2, 2, 3), (1, 2, 2), (0, 1, 1), (1, 0, 1), 0),
])
def test_avg_pool_f64_against_onnx_reference(dims, kernel, strides, begin, end, ceil, count_include_pad, tmp_path):
    """f64: onnx.reference's AveragePool (count_include_pad both ways) to 1e-12 relative, where ONNX and
    OpenVINO define the same divisor (not ceil windows past the padded input with pads)."""
    x = rng(6).normal(size=(2, 2, *dims))
    expected = _onnx_pool("AveragePool", x, kernel_shape=kernel, strides=strides, pads=[*begin, *end],
                          ceil_mode=ceil, count_include_pad=count_include_pad)
    path = save_ov(_model(lambda p: o14.avg_pool(p, strides, begin, end, kernel, not count_include_pad,
                                                 "ceil" if ceil else "floor"), x), tmp_path)
    got = irgrid.compile_model(path)({"x": x})["y0"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------------------------
# Adaptive pooling
# ---------------------------------------------------------------------------------------------

ADAPTIVE = [((2, 3, 10), (4,)), ((2, 3, 5, 7), (3, 4)), ((1, 2, 6, 6), (6, 1)), ((1, 2, 4, 5, 7), (2, 3, 3)),
            ((1, 2, 3, 4), (5, 7))]


@pytest.mark.parametrize("shape,size", ADAPTIVE, ids=[str(s) for _, s in ADAPTIVE])
def test_adaptive_pools(shape, size, tmp_path, ov_run):
    """AdaptiveAvgPool and AdaptiveMaxPool (i32 indices: the CPU plugin refuses i64) on the CPU plugin,
    output_size a constant (i32 and i64), windows overlapping and repeating (output above input)."""
    x = _data(shape, seed=7)
    p = o14.parameter(list(shape), np.float32, name="x")
    avg = o8.adaptive_avg_pool(p, o14.constant(np.array(size, np.int64)))
    mx = o8.adaptive_max_pool(p, o14.constant(np.array(size, np.int32)), "i32")
    model = ov.Model([o14.result(o) for o in (avg.output(0), *mx.outputs())], [p], "adaptive")
    expected, got = run_both(model, [x], tmp_path, ov_run)
    np.testing.assert_allclose(got[0], expected[0], **MEAN)
    assert got[2].dtype == np.int32
    assert_same(expected[1:], got[1:])


@pytest.mark.parametrize("shape,size", ADAPTIVE, ids=[str(s) for _, s in ADAPTIVE])
def test_adaptive_pools_f64_against_torch(shape, size, tmp_path):
    """f64 and i64 indices: torch's adaptive_avg_pool / adaptive_max_pool(return_indices=True)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    r = len(size)
    x = rng(8).normal(size=shape)
    mean = [F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d][r - 1](torch.tensor(x), size)
    values, indices = [F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d][r - 1](
        torch.tensor(x), size, return_indices=True)
    p = o14.parameter(list(shape), np.float64, name="x")
    avg = o8.adaptive_avg_pool(p, o14.constant(np.array(size, np.int32)))
    mx = o8.adaptive_max_pool(p, o14.constant(np.array(size, np.int64)), "i64")
    path = save_ov(ov.Model([o14.result(o) for o in (avg.output(0), *mx.outputs())], [p], "a"), tmp_path)
    got = list(irgrid.compile_model(path)({"x": x}).values())
    np.testing.assert_allclose(got[0], mean.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got[1], values.numpy())
    assert got[2].dtype == np.int64
    np.testing.assert_array_equal(got[2], indices.numpy())


# ---------------------------------------------------------------------------------------------
# PReLU
# ---------------------------------------------------------------------------------------------

SLOPES = [((2, 3, 5, 7), (3,)), ((2, 3, 5, 7), (7,)), ((2, 3, 5, 7), (1,)), ((2, 3, 5, 7), ()),
          ((2, 3, 5, 7), (1, 3, 1, 1)), ((2, 3, 5, 7), (5, 7)), ((2, 3, 5, 7), (3, 1, 1)),
          ((2, 3, 5, 3), (3,)), ((2, 7), (7,)), ((2, 7), (2, 1)), ((4,), (4,)), ((2, 3, 4), (1, 1, 1, 1))]


@pytest.mark.parametrize("data_shape,slope_shape", SLOPES, ids=[f"{d}-{s}" for d, s in SLOPES])
def test_prelu(data_shape, slope_shape, tmp_path, ov_run):
    """Slope broadcasting as OpenVINO's: a 1-D slope of the channel count per channel (also when the
    last dim has that size too), otherwise numpy-style; the output keeps data's shape."""
    x = _data(data_shape, seed=9)
    slope = np.linspace(0.05, 0.95, int(np.prod(slope_shape))).astype(np.float32).reshape(slope_shape)
    p, q = o14.parameter(list(data_shape), np.float32, name="x"), o14.parameter(list(slope_shape), np.float32, name="s")
    model = ov.Model([o14.result(o1.prelu(p, q))], [p, q], "prelu")
    expected, got = run_both(model, [x, slope], tmp_path, ov_run)
    np.testing.assert_allclose(got[0], expected[0], **MEAN)
    assert got[0].shape == data_shape


@pytest.mark.parametrize("slopes", [(0.0, 0.2, 1.0), (1.0, 1.5, 3.0), (-0.5, 0.2, 1.5)],
                         ids=["in-0-1", "from-1", "mixed"])
def test_prelu_special_values(slopes, tmp_path, ov_run):
    """NaN, +-inf, +-0.0 and the largest floats, per-channel slopes in [0, 1], from 1 up, and of both
    kinds (irgrid computes each set its own way): bit for bit the CPU plugin's, except the sign of a
    zero times a negative slope. There OpenVINO's spec keeps x (x >= 0) and so does irgrid, while the
    CPU plugin's answer depends on its instruction set: AVX-512 hosts keep x, AVX2 hosts (a
    first-generation Zen, 2026-12-02) give slope * x (+0.0 at -0.0, -0.0 at +0.0), as torch's prelu
    does at -0.0."""
    special = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, -1.0, 1.0, -3.4e38, 3.4e38, -1e-45, 2.5, -7.25],
                       np.float32)
    x = np.stack([special * k for k in (1, -1, 0.5)])[None]  # (1, 3, 12)
    p = o14.parameter(list(x.shape), np.float32, name="x")
    model = ov.Model([o14.result(o1.prelu(p, o14.constant(np.array(slopes, np.float32))))], [p], "prelu")
    expected, got = run_both(model, [x], tmp_path, ov_run)
    signed_zero = (x == 0) & (np.array(slopes, np.float32)[None, :, None] < 0)
    assert got[0][~signed_zero].tobytes() == expected[0][~signed_zero].tobytes()
    assert (expected[0][signed_zero] == 0).all()
    assert got[0][signed_zero].tobytes() == x[signed_zero].tobytes()  # the spec's x for x >= 0


def test_prelu_f32_slope_on_f64_data(tmp_path):
    """An f64 model converted from PyTorch keeps LeakyReLU's slope in f32; OpenVINO takes it, and so does
    irgrid, computing in f64 with the slope widened: torch in f64 with that slope, to 1e-12."""
    import torch

    x = _data((2, 3, 5), np.float64, seed=12) * 10
    p = o14.parameter(list(x.shape), np.float64, name="x")
    path = save_ov(ov.Model([o14.result(o1.prelu(p, o14.constant(np.array([0.2], np.float32))))], [p], "prelu"),
                   tmp_path)
    got = list(irgrid.compile_model(path)({"x": x}).values())[0]
    expected = torch.nn.functional.prelu(torch.from_numpy(x), torch.tensor([float(np.float32(0.2))], dtype=torch.float64))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected.numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float64])
def test_prelu_types_and_leaky_relu(dtype, tmp_path, ov_run):
    """Integer, f16 and f64 data; f64 against torch's leaky_relu to 1e-12 (the CPU plugin computes f32)."""
    x = (_data((2, 4, 3), np.float32, seed=10) * 10).astype(dtype)
    slope = np.array([0.01 if dtype != np.int32 else 2], dtype)
    p, q = o14.parameter(list(x.shape), dtype, name="x"), o14.constant(slope)
    model = ov.Model([o14.result(o1.prelu(p, q))], [p], "prelu")
    if dtype == np.float64:
        torch = pytest.importorskip("torch")
        path = save_ov(model, tmp_path)
        got = list(irgrid.compile_model(path)({"x": x}).values())[0]
        expected = torch.nn.functional.leaky_relu(torch.tensor(x), 0.01).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
        return
    expected, got = run_both(model, [x], tmp_path, ov_run)
    assert got[0].dtype == dtype
    assert_same(expected, got)


# ---------------------------------------------------------------------------------------------
# Shapes and errors
# ---------------------------------------------------------------------------------------------

def _shape(partial: ov.PartialShape):
    return None if partial.rank.is_dynamic else tuple(d.get_length() if d.is_static else None for d in partial)


def test_dynamic_dims(tmp_path, ov_core, ov_run):
    """Dynamic batch and spatial dims: inference gives OpenVINO's static dims and leaves the others
    unknown; an output_size given at run time; the runs agree with OpenVINO."""
    x = o14.parameter(ov.PartialShape([-1, 3, -1, 9]), np.float32, name="x")
    size = o14.parameter([2], np.int32, name="size")
    layers = [o14.max_pool(x, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2], "ceil_torch", "same_upper"),
              o14.avg_pool(x, [2, 1], [1, 0], [1, 1], [3, 2], True, "ceil"),
              o8.adaptive_avg_pool(x, size), o8.adaptive_max_pool(x, size, "i32"),
              o1.prelu(x, o14.constant(np.array([0.1, 0.2, 0.3], np.float32)))]
    model = ov.Model([o14.result(o) for n in layers for o in n.outputs()], [x, size], "dyn")
    path = save_ov(model, tmp_path)
    declared = {(op.get_friendly_name(), k): _shape(op.get_output_partial_shape(k))
                for op in ov_core.read_model(str(path)).get_ops() for k in range(op.get_output_size())}
    irgrid_model = irgrid.read_model(path)
    infos = infer_model(irgrid_model)
    pools = [layer for layer in irgrid_model.layers.values() if layer.type in ("MaxPool", "AvgPool", "PReLU")
             or layer.type.startswith("Adaptive")]
    assert len(pools) == 5
    for layer in pools:
        for k in range(len(layer.outputs)):
            assert infos[(layer.id, k)].shape == declared[(layer.name, k)], (layer.type, k)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for shape in [(2, 3, 8, 9), (1, 3, 5, 9)]:
        data = _data(shape, seed=11)
        feeds = [data, np.array([3, 2], np.int32)]
        expected = ov_run(str(path), feeds)
        got = list(compiled({"x": data, "size": feeds[1]}).values())
        assert len(got) == len(expected) == 7
        for e, g in zip(expected, got):
            assert e.shape == g.shape
            np.testing.assert_allclose(g, e, **MEAN)


def _bad_model(tmp_path, type_, version, attrs, inputs, outputs=1):
    b = IRBuilder("bad")
    ins = [b.const(v) if isinstance(v, np.ndarray) else b.parameter(f"p{k}", *v) for k, v in enumerate(inputs)]
    ys = b.layer(type_, version, ins, attrs, name="bad", outputs=[((2,), "f32")] * outputs)
    for y in ys:
        b.result(y)
    return b.save(tmp_path / "bad.xml")


POOL = {"strides": [1, 1], "pads_begin": [0, 0], "pads_end": [0, 0], "kernel": [2, 2]}
BAD = [  # type, version, attrs, inputs, outputs, port at fault, message
    ("MaxPool", "opset1", POOL, [((3, 4), "f32")], 1, 0, "rank 3, 4 or 5"),
    ("MaxPool", "opset8", {**POOL, "dilations": [1, 1]}, [((1, 2, 3, 4), "boolean")], 2, 0, "numeric"),
    ("MaxPool", "opset14", {**POOL, "dilations": [1, 1], "pads_end": [0, -0], "kernel": [5, 2]},
     [((1, 2, 3, 4), "f32")], 2, 0, "larger than the padded input"),
    ("MaxPool", "opset8", {**POOL, "dilations": [1, 1], "axis": 4}, [((1, 2, 3, 4), "f32")], 2, 0, "axis 4"),
    ("AvgPool", "opset1", {**POOL, "exclude-pad": True}, [((1, 2, 3, 4), "i32")], 1, 0, "floating-point"),
    ("AvgPool", "opset14", {**POOL, "exclude-pad": False}, [((1, 2, 3, 4, 5, 6), "f32")], 1, 0, "rank 3, 4 or 5"),
    ("AdaptiveAvgPool", "opset8", {}, [((1, 2, 3, 4), "f32"), np.array([2, 2, 2], np.int64)], 1, 1, "3 values"),
    ("AdaptiveAvgPool", "opset8", {}, [((1, 2, 3, 4), "f32"), np.array([2, 0], np.int64)], 1, 1, "positive"),
    ("AdaptiveMaxPool", "opset8", {}, [((1, 2, 3, 4), "f32"), np.array([2.0, 2.0], np.float32)], 2, 1, "integer"),
    ("AdaptiveMaxPool", "opset8", {}, [((2, 3), "f32"), np.array([2], np.int64)], 2, 0, "rank 3, 4 or 5"),
    ("PReLU", "opset1", {}, [((2, 3, 4, 5), "f32"), np.ones(4, np.float32)], 1, 1, "does not broadcast"),
    ("PReLU", "opset1", {}, [((2, 3, 4, 5), "f32"), np.ones(3, np.int32)], 1, 1, "slope is i32"),
]


@pytest.mark.parametrize("type_,version,attrs,inputs,outputs,port,message", BAD,
                         ids=[f"{case[0]}-{case[1]}-{case[-1]}" for case in BAD])
def test_bad_layers(type_, version, attrs, inputs, outputs, port, message, tmp_path):
    """Ranks, types and shapes OpenVINO refuses: `irgrid check` reports the layer and port at fault,
    and compile_model refuses the model naming them."""
    path = _bad_model(tmp_path, type_, version, attrs, inputs, outputs)
    (problem,) = [p for p in irgrid.check_model(path) if p.layer.name == "bad" and message in p.message]
    port_id = problem.layer.inputs[port].id
    assert problem.port == port_id, str(problem)
    with pytest.raises(ShapeError, match=rf'{type_} layer "bad" \(id \d+\), port {port_id}: .*{message}'):
        irgrid.compile_model(path)


@pytest.mark.parametrize("old,new,message", [('kernel="2, 2"', 'kernel="0, 2"', "kernel"),
                                             ('strides="1, 1"', 'strides="1, 0"', "strides"),
                                             ('kernel="2, 2"', 'kernel="2, 2, 2"', "kernel needs 2 values"),
                                             ('pads_end="1, 1"', 'pads_end="1, 2"', "exclude-pad"),
                                             ('rounding_type="floor"', 'rounding_type="ceil_torch"',
                                              "rounding_type")])
def test_bad_attributes(old, new, message, tmp_path):
    """Attributes OpenVINO refuses (edited into an IR it wrote; ceil_torch is not an AvgPool-1 value):
    `irgrid check` reports the layer, compile_model refuses it naming the layer."""
    x = o14.parameter([1, 2, 5, 6], np.float32, name="x")
    pool = o1.avg_pool(x, [1, 1], [0, 0], [1, 1], [2, 2], True, name="pool")
    path = save_ov(ov.Model([o14.result(pool)], [x], "attrs"), tmp_path)
    assert path.read_text().count(old) == 1
    path.write_text(path.read_text().replace(old, new))
    (problem,) = irgrid.check_model(path)
    assert problem.layer.name == "pool" and message in problem.message, str(problem)
    with pytest.raises(irgrid.IRGridError, match=r'layer "pool" \(id \d+\)'):
        irgrid.compile_model(path)


# ---------------------------------------------------------------------------------------------
# End to end
# ---------------------------------------------------------------------------------------------

def test_spatial_transformer_end_to_end(tmp_path):
    """The PyTorch spatial-transformer tutorial's shape: a localisation net (Conv2d, MaxPool2d, ReLU,
    LeakyReLU, AdaptiveAvgPool2d, Linear) predicting theta, then affine_grid and grid_sample, converted
    with ov.convert_model: irgrid's runtime gives torch's output; `auto` picks OpenVINO for such a
    convolutional network (irgrid/devices.py), which gives it too."""
    torch = pytest.importorskip("torch")
    from irgrid.devices import open_model
    import irgrid.openvino as iov

    class STN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.loc = torch.nn.Sequential(
                torch.nn.Conv2d(1, 4, 5), torch.nn.MaxPool2d(2, stride=2), torch.nn.ReLU(True),
                torch.nn.Conv2d(4, 6, 3), torch.nn.MaxPool2d(2, stride=2, ceil_mode=True), torch.nn.LeakyReLU(0.1),
                torch.nn.AdaptiveAvgPool2d((3, 3)))
            self.fc = torch.nn.Linear(6 * 3 * 3, 6)
            torch.nn.init.normal_(self.fc.weight, std=0.01)
            self.fc.bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def forward(self, x):
            theta = self.fc(self.loc(x).flatten(1)).view(-1, 2, 3)
            grid = torch.nn.functional.affine_grid(theta, x.size(), align_corners=False)
            return torch.nn.functional.grid_sample(x, grid, align_corners=False)

    torch.manual_seed(0)
    module = STN().eval()
    x = torch.rand(2, 1, 28, 28)  # an image in [0, 1)
    with torch.no_grad():
        expected = module(x).numpy()
    model = ov.convert_model(module, example_input=x, extension=iov.conversion_extensions())
    path = save_ov(model, tmp_path)
    types = {layer.type for layer in irgrid.read_model(path).layers.values()}
    assert {"MaxPool", "AdaptiveAvgPool", "PReLU"} <= types, types
    name = model.inputs[0].get_any_name()
    (got,) = irgrid.compile_model(path)({name: x.numpy()}).values()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    runner, reason = open_model(path, "auto")
    assert reason.startswith("openvino") and "convolutional network (AdaptiveAvgPool, Convolution, MaxPool)" in reason
    (got,) = runner({name: x.numpy()}).values()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)

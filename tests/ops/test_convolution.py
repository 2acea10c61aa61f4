"""Convolution-1 on irgrid's runtime: f32 2-D and 3-D layers run on OpenVINO's Convolution
(irgrid/dense.py), the rest on the im2col path; which path runs must not change results with the thread
count.

Oracles: OpenVINO's CPU plugin running the same IR at f32 (rtol 1e-5, atol 1e-5: the same oneDNN
convolution, compiled with the filters as a Parameter instead of a Constant), and
onnx.reference's Conv for f64 (rtol 1e-12, atol 1e-12).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

import irgrid
from irgrid import dense
from oracles import save_ov


def _ov_conv(tmp_path, x_shape, w, strides, pads_begin, pads_end, dilations, auto_pad="explicit",
             dtype=np.float32, name="model"):
    import openvino as ov
    import openvino.opset1 as ops1

    data = ops1.parameter(list(x_shape), dtype, name="data")
    filters = ov.op.Constant(w.astype(dtype))  # opset1.constant rounds f64 values to f32 (OpenVINO 2026.4)
    node = ops1.convolution(data, filters, strides, pads_begin, pads_end, dilations, auto_pad)
    return save_ov(ov.Model([node], [data], "conv"), tmp_path, name)


def _run(path, x, threads=2):
    return irgrid.compile_model(path, threads=threads)({"data": x})


def _output(result):
    return next(iter(result.values()))


def _random_case(rng, rank):
    """A random convolution of `rank` spatial dims: (x shape, filters, strides, pads_begin, pads_end,
    dilations), with some output dims of 1 among them."""
    kernel = [int(rng.integers(1, 4)) for _ in range(rank)]
    dims = [int(rng.integers(1, 10)) + k - 1 for k in kernel]
    channels, out_channels = int(rng.choice([1, 2, 3, 8, 16])), int(rng.choice([1, 3, 8, 16]))
    x_shape = (int(rng.integers(1, 3)), channels, *dims)
    w = rng.standard_normal((out_channels, channels, *kernel)).astype(np.float32)
    strides = [int(rng.integers(1, 3)) for _ in range(rank)]
    pads_begin = [int(rng.integers(0, 2)) for _ in range(rank)]
    pads_end = [int(rng.integers(0, 2)) for _ in range(rank)]
    dilations = [int(rng.integers(1, 3)) if k > 1 and d > 2 * k else 1 for k, d in zip(kernel, dims)]
    return x_shape, w, strides, pads_begin, pads_end, dilations


@pytest.mark.parametrize("rank, auto_pad, strides, dilations", [
    (2, "explicit", [1, 1], [1, 1]), (2, "same_upper", [2, 1], [1, 2]), (2, "valid", [1, 2], [2, 1]),
    (3, "explicit", [2, 2, 2], [1, 1, 1]), (3, "same_lower", [1, 2, 1], [2, 1, 1])])
def test_f32_runs_openvinos_convolution(rank, auto_pad, strides, dilations, tmp_path, ov_run):
    rng = np.random.default_rng(rank)
    x = rng.standard_normal((2, 6, *(12, 11, 10)[:rank])).astype(np.float32)
    w = rng.standard_normal((5, 6, *(3,) * rank)).astype(np.float32)
    path = _ov_conv(tmp_path, x.shape, w, strides, [1] * rank, [0] * rank, dilations, auto_pad)
    (want,) = ov_run(path, [x])
    before = dense._compiled_layer.cache_info().misses
    got = _output(_run(path, x))
    assert dense._compiled_layer.cache_info().misses == before + 1  # it ran on OpenVINO
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    with pytest.MonkeyPatch.context() as patch:  # the im2col path agrees to rounding
        patch.setenv("IRGRID_GEMM", "numpy")
        np.testing.assert_allclose(_output(_run(path, x)), want, rtol=1e-4, atol=1e-4)


def test_results_do_not_depend_on_the_thread_count(tmp_path, ov_run):
    """1-D layers and some with an output dim of 1 round differently at 1 and 2 threads on OpenVINO
    (oneDNN blocks them by the thread count), so they take the im2col path; all agree with OpenVINO."""
    rng = np.random.default_rng(11)
    took_openvino = took_im2col = 0
    for case in range(45):
        x_shape, w, strides, pads_begin, pads_end, dilations = _random_case(rng, 1 + case % 3)
        path = _ov_conv(tmp_path, x_shape, w, strides, pads_begin, pads_end, dilations, name=f"c{case}")
        x = rng.standard_normal(x_shape).astype(np.float32)
        before = dense._compiled_layer.cache_info().misses
        one, two = _output(_run(path, x, threads=1)), _output(_run(path, x, threads=2))
        on_openvino = dense._compiled_layer.cache_info().misses > before
        took_openvino += on_openvino
        took_im2col += not on_openvino
        assert np.array_equal(one, two), (x_shape, w.shape, strides, pads_begin, pads_end, dilations)
        np.testing.assert_allclose(two, ov_run(path, [x])[0], rtol=1e-4, atol=1e-4)
    assert took_openvino >= 10 and took_im2col >= 10


def test_one_dim_and_unit_output_dims_take_the_im2col_path(tmp_path):
    """A case oneDNN computes differently at 1 and 2 threads (measured), and a 1-D layer."""
    for x_shape, w_shape, strides, pads, dilations in [((1, 3, 3, 1), (16, 3, 3, 1), [2, 1], ([1, 0], [0, 1]), [1, 1]),
                                                       ((1, 32, 18), (8, 32, 3), [2], ([2], [2]), [1])]:
        w = np.random.default_rng(0).standard_normal(w_shape).astype(np.float32)
        path = _ov_conv(tmp_path, x_shape, w, strides, *pads, dilations)
        x = np.random.default_rng(1).standard_normal(x_shape).astype(np.float32)
        before = dense._compiled_layer.cache_info().misses
        assert np.array_equal(_output(_run(path, x, threads=1)), _output(_run(path, x, threads=2)))
        assert dense._compiled_layer.cache_info().misses == before


def test_an_output_dim_of_one_against_torch(tmp_path):
    """A shape whose output has a dim of 1 takes im2col, which gives torch's values (rtol 1e-5); OpenVINO's
    CPU plugin (2026.4) wrote 0 at 3 of these 5 outputs."""
    import torch

    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 1, 5, 1)).astype(np.float32)
    w = rng.standard_normal((1, 1, 3, 3)).astype(np.float32)
    path = _ov_conv(tmp_path, x.shape, w, [1, 2], [1, 1], [1, 1], [1, 1])
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=(1, 2), padding=1).numpy()
    got = _output(_run(path, x))
    assert got.shape == want.shape == (1, 1, 5, 1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rank", [2, 3])
def test_f64_keeps_f64_accuracy(rank, tmp_path):
    """OpenVINO's CPU plugin computes f64 in f32, so f64 layers take the im2col path: onnx.reference
    (rtol 1e-12) settles them."""
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 4, *(9, 8, 7)[:rank]))
    w = rng.standard_normal((3, 4, *(3,) * rank))
    path = _ov_conv(tmp_path, x.shape, w, [2] + [1] * (rank - 1), [1] * rank, [0] * rank, [1] * rank,
                    dtype=np.float64)
    node = helper.make_node("Conv", ["X", "W"], ["Y"], strides=[2] + [1] * (rank - 1), pads=[1] * rank + [0] * rank)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
                                            helper.make_tensor_value_info("W", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    (want,) = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])).run(
        None, {"X": x, "W": w})
    np.testing.assert_allclose(_output(_run(path, x)), want, rtol=1e-12, atol=1e-12)


def test_a_preallocated_output_is_written_in_place(tmp_path, ov_run):
    """A compiled model's planned output buffer is OpenVINO's output tensor (no copy), and a later call's
    result does not overwrite an earlier one the caller still holds."""
    rng = np.random.default_rng(4)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    path = _ov_conv(tmp_path, (1, 3, 16, 16), w, [1, 1], [1, 1], [1, 1], [1, 1])
    model = irgrid.compile_model(path, threads=2)
    xs = [rng.standard_normal((1, 3, 16, 16)).astype(np.float32) for _ in range(3)]
    results = [_output(model({"data": x})).copy() for x in xs]
    held = [_output(model({"data": x})) for x in xs]
    for x, result, kept in zip(xs, results, held):
        np.testing.assert_allclose(result, ov_run(path, [x])[0], rtol=1e-5, atol=1e-5)
        assert np.array_equal(kept, result)


# --- GroupConvolution-1 ----------------------------------------------------------------------

def _ov_group_conv(tmp_path, x_shape, w, strides, pads_begin, pads_end, dilations, auto_pad="explicit",
                   dtype=np.float32, name="model"):
    import openvino as ov
    import openvino.opset1 as ops1

    data = ops1.parameter(list(x_shape), dtype, name="data")
    node = ops1.group_convolution(data, ov.op.Constant(w.astype(dtype)), strides, pads_begin, pads_end, dilations,
                                  auto_pad)
    return save_ov(ov.Model([node], [data], "group_conv"), tmp_path, name)


@pytest.mark.parametrize("backend", ["openvino", "numpy"])
@pytest.mark.parametrize("rank, groups, per_group, auto_pad, strides, dilations", [
    (2, 6, (1, 1), "explicit", [1, 1], [1, 1]),  # depthwise
    (2, 3, (2, 2), "same_upper", [2, 1], [1, 2]), (3, 2, (3, 1), "explicit", [2, 1, 1], [1, 1, 2]),
    (1, 3, (2, 2), "explicit", [2], [1])])
def test_group_convolution_against_openvino(rank, groups, per_group, auto_pad, strides, dilations, backend,
                                            tmp_path, ov_run, monkeypatch):
    """Depthwise and grouped, 1-D to 3-D, on OpenVINO's layer and on the im2col path (IRGRID_GEMM=numpy)."""
    monkeypatch.setenv("IRGRID_GEMM", backend)
    out_per_group, in_per_group = per_group
    rng = np.random.default_rng(rank + groups)
    x = rng.standard_normal((2, groups * in_per_group, *(11, 10, 9)[:rank])).astype(np.float32)
    w = rng.standard_normal((groups, out_per_group, in_per_group, *(3,) * rank)).astype(np.float32)
    path = _ov_group_conv(tmp_path, x.shape, w, strides, [1] * rank, [0] * rank, dilations, auto_pad)
    assert irgrid.check_model(path) == []
    (want,) = ov_run(path, [x])
    got = _output(_run(path, x))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert np.array_equal(_output(_run(path, x, threads=1)), got)


def test_group_convolution_f64_against_onnx_reference(tmp_path):
    from onnx.reference import ReferenceEvaluator

    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 6, 9, 8))
    w = rng.standard_normal((3, 2, 2, 3, 3))  # 3 groups of 2 output and 2 input channels
    path = _ov_group_conv(tmp_path, x.shape, w, [1, 2], [1, 0], [1, 1], [1, 1], dtype=np.float64)
    node = helper.make_node("Conv", ["X", "W"], ["Y"], group=3, strides=[1, 2], pads=[1, 0, 1, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
                                            helper.make_tensor_value_info("W", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    (want,) = ReferenceEvaluator(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])).run(
        None, {"X": x, "W": w.reshape(6, 2, 3, 3)})
    np.testing.assert_allclose(_output(_run(path, x)), want, rtol=1e-12, atol=1e-12)


def test_group_convolution_results_do_not_depend_on_the_thread_count(tmp_path, ov_run):
    rng = np.random.default_rng(12)
    for case in range(16):
        rank, groups = 1 + case % 3, int(rng.choice([1, 2, 4]))
        x_shape, w, strides, pads_begin, pads_end, dilations = _random_case(rng, rank)
        x_shape = (x_shape[0], groups * x_shape[1], *x_shape[2:])
        w = np.stack([w] * groups)  # (groups, oC / groups, C / groups, kernel...)
        path = _ov_group_conv(tmp_path, x_shape, w, strides, pads_begin, pads_end, dilations, name=f"g{case}")
        x = rng.standard_normal(x_shape).astype(np.float32)
        one, two = _output(_run(path, x, threads=1)), _output(_run(path, x, threads=2))
        assert np.array_equal(one, two), (x_shape, w.shape, strides, pads_begin, pads_end, dilations)
        np.testing.assert_allclose(two, ov_run(path, [x])[0], rtol=1e-4, atol=1e-4)


def test_group_convolution_shape_errors(tmp_path):
    """Channels that do not split into the groups, and filters of the wrong rank, are ShapeErrors naming
    the layer and port."""
    from irgrid.errors import ShapeError

    path = _ov_group_conv(tmp_path, (1, 6, 5, 5), np.ones((3, 2, 2, 3, 3), np.float32), [1, 1], [0, 0], [0, 0], [1, 1])
    text = path.read_text()
    bad = path.with_name("bad.xml")
    bad.write_text(text.replace('shape="1,6,5,5"', 'shape="1,7,5,5"').replace("<dim>6</dim>", "<dim>7</dim>"))
    path.with_suffix(".bin").replace(bad.with_suffix(".bin"))
    (problem,) = [p for p in irgrid.check_model(bad) if p.layer.type == "GroupConvolution"]
    assert "input channels 7 are not divisible by group 3" in str(problem) and "port 0" in str(problem)
    with pytest.raises(ShapeError, match="GroupConvolution"):
        irgrid.compile_model(bad)

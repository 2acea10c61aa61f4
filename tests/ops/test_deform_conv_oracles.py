"""DeformConv / DeformableConvolution / Convolution against oracles irgrid did not write.

- The 4 ONNX backend DeformConv node cases (the onnx package's own expected outputs), each as an
  IRBuilder IR of DeformConv irgrid1: rtol 1e-5, atol 1e-6 (values are small integers and halves).
- Random 2-D configs against onnxruntime DeformConv-19 (groups, offset groups, mask and bias or
  not, dilations, strides, asymmetric pads, H or W = 1, offsets reaching outside the image):
  f32, atol 2e-5 + rtol 2e-5 (sums of up to ~100 products of O(1) values).
- OpenVINO DeformableConvolution-1 and -8 (bilinear_interpolation_pad true and false) and
  Convolution-1, built with the openvino API, saved with ov.save_model, read by irgrid, and run on
  OpenVINO's CPU plugin at f32: atol 1e-4 + rtol 1e-4 (OpenVINO's JIT sums in another order).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from oracles import deform_conv_ir, first_output, onnx_backend_cases, random_deform_inputs, save_ov

N_ONNX_CASES = 4


CASES = onnx_backend_cases("DeformConv")


def test_all_onnx_cases_collected():
    assert sorted(c.name for c in CASES) == [
        "test_basic_deform_conv_with_padding", "test_basic_deform_conv_without_padding",
        "test_deform_conv_with_mask_bias", "test_deform_conv_with_multiple_offset_groups"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_case(case, tmp_path):
    (node,) = case.model.graph.node
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    names = [i.name for i in case.model.graph.input]
    for inputs, (expected,) in case.data_sets:
        arrays = dict(zip(names, (np.asarray(a) for a in inputs)))
        out = first_output(deform_conv_ir(tmp_path / "m.xml", arrays, attrs), arrays)
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


# --- onnxruntime DeformConv-19 ---------------------------------------------------------------------

# (C, oC, group, offset_group, H, W, kernel, strides, dilations, pads, mask, bias, offset scale)
ORT_CONFIGS = [
    (4, 6, 2, 2, 7, 8, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, True, 2.0),
    (6, 4, 1, 3, 9, 6, (3, 2), (2, 1), (1, 2), (0, 2, 1, 0), False, True, 3.0),
    (4, 4, 4, 1, 5, 5, (2, 2), (1, 2), (2, 1), (2, 0, 0, 1), True, False, 1.5),
    (3, 2, 1, 1, 1, 9, (1, 3), (1, 1), (1, 1), (0, 1, 0, 1), True, True, 2.0),  # H = 1
    (2, 3, 1, 2, 8, 1, (3, 1), (1, 1), (1, 1), (1, 0, 1, 0), False, False, 2.0),  # W = 1
    (8, 8, 2, 4, 6, 7, (3, 3), (2, 2), (1, 1), (1, 1, 2, 2), True, True, 6.0),  # far outside
]


def _ort_deform_conv(arrays: dict[str, np.ndarray], attrs: dict) -> np.ndarray:
    import onnxruntime as ort

    node = helper.make_node("DeformConv", list(arrays), ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                                            for n, a in arrays.items()],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, arrays)[0]


@pytest.mark.parametrize("config", ORT_CONFIGS)
def test_random_2d_vs_onnxruntime(config, tmp_path):
    c, oc, group, dg, h, w, kernel, strides, dilations, pads, mask, bias, scale = config
    rng = np.random.default_rng(abs(hash(config)) % 2**32)
    arrays, attrs = random_deform_inputs(rng, c, oc, group, dg, (h, w), kernel, strides, dilations, pads,
                                         mask, bias, scale)
    want = _ort_deform_conv(arrays, attrs)
    got = first_output(deform_conv_ir(tmp_path / "m.xml", arrays, attrs), arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    # Absent ONNX attributes: irgrid1's 1-element defaults stand for ONNX's (strides, dilations 1).
    if strides == (1, 1) and dilations == (1, 1):
        short = {k: v for k, v in attrs.items() if k not in ("strides", "dilations", "kernel_shape")}
        got_short = first_output(deform_conv_ir(tmp_path / "s.xml", arrays, short), arrays)
        np.testing.assert_array_equal(got_short, got)


# --- OpenVINO DeformableConvolution-1 / -8 and Convolution-1 ------------------------------------

# (C, oC, group, deformable_group, H, W, kernel, strides, dilations, pads_begin, pads_end, auto_pad)
OV_CONFIGS = [
    (16, 16, 1, 1, 9, 10, (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), "explicit"),  # JIT path
    (8, 16, 1, 2, 7, 9, (3, 3), (2, 1), (1, 2), (0, 2), (1, 0), "explicit"),
    (4, 6, 2, 2, 8, 7, (2, 3), (1, 1), (1, 1), (0, 0), (0, 0), "same_upper"),
    (4, 4, 1, 4, 6, 6, (3, 3), (2, 2), (1, 1), (0, 0), (0, 0), "same_lower"),
    (6, 4, 2, 1, 5, 7, (3, 3), (1, 1), (1, 1), (2, 2), (2, 2), "valid"),
]


def _ov_deformable(version: str, config, bilinear_pad: bool, with_mask: bool, tmp_path, scale: float):
    import openvino as ov
    import openvino.opset1 as ops1
    import openvino.opset8 as ops8

    c, oc, group, dg, h, w, kernel, strides, dilations, begin, end, auto_pad = config
    rng = np.random.default_rng(7)
    data = ops1.parameter([1, c, h, w], np.float32, name="data")
    x = rng.standard_normal((1, c, h, w)).astype(np.float32)
    filters = rng.standard_normal((oc, c // group, *kernel)).astype(np.float32)
    probe = ops1.convolution(ops1.parameter([1, c, h, w], np.float32),
                             ops1.constant(np.zeros((1, c, *kernel), np.float32)), list(strides), list(begin),
                             list(end), list(dilations), auto_pad)
    out_dims = list(probe.get_output_shape(0))[2:]
    k = dg * kernel[0] * kernel[1]
    offsets_value = (scale * rng.standard_normal((1, 2 * k, *out_dims))).astype(np.float32)
    offsets = ops1.parameter(list(offsets_value.shape), np.float32, name="offsets")
    feed = {"data": x, "offsets": offsets_value}
    common = dict(strides=list(strides), pads_begin=list(begin), pads_end=list(end), dilations=list(dilations),
                  auto_pad=auto_pad, group=group, deformable_group=dg)
    if version == "opset1":
        node = ops1.deformable_convolution(data, offsets, ops1.constant(filters), **common)
        params = [data, offsets]
    else:
        mask = None
        params = [data, offsets]
        if with_mask:
            mask_value = rng.uniform(-0.5, 1.5, (1, k, *out_dims)).astype(np.float32)
            mask = ops1.parameter(list(mask_value.shape), np.float32, name="mask")
            params.append(mask)
            feed["mask"] = mask_value
        node = ops8.deformable_convolution(data, offsets, ops1.constant(filters), mask=mask,
                                           bilinear_interpolation_pad=bilinear_pad, **common)
    model = ov.Model([node], params, "deformable")
    tmp_path.mkdir(exist_ok=True)
    return save_ov(model, tmp_path), feed


@pytest.mark.parametrize("config", OV_CONFIGS)
@pytest.mark.parametrize("variant", ["opset1", "opset8_pad_false_mask", "opset8_pad_true_mask", "opset8_pad_true"])
def test_openvino_deformable_convolution(config, variant, tmp_path, ov_run):
    version = variant.split("_")[0]
    bilinear_pad = "pad_true" in variant
    path, feed = _ov_deformable(version, config, bilinear_pad, variant.endswith("mask"), tmp_path, scale=2.5)
    (want,) = ov_run(path, list(feed.values()))
    got = first_output(path, feed)
    assert got.shape == want.shape and np.abs(want).max() > 1
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("config", OV_CONFIGS[:2])
def test_openvino_edge_rule_at_the_border(config, tmp_path, ov_run):
    """Offsets of a few pixels put many points in the last row/column band and outside, where the
    bilinear_interpolation_pad=false rule (clamped second tap) differs from zero padding."""
    path, feed = _ov_deformable("opset8", config, False, True, tmp_path, scale=6.0)
    (want,) = ov_run(path, list(feed.values()))
    np.testing.assert_allclose(first_output(path, feed), want, rtol=1e-4, atol=1e-4)
    padded, _ = _ov_deformable("opset8", config, True, True, tmp_path / "padded", scale=6.0)
    (zero_padded,) = ov_run(padded, list(feed.values()))
    assert np.abs(zero_padded - want).max() > 0.1  # the two rules really differ on these inputs


@pytest.mark.parametrize("rank, auto_pad", [(1, "explicit"), (2, "same_upper"), (3, "explicit"), (2, "valid")])
def test_openvino_convolution(rank, auto_pad, tmp_path, ov_run):
    import openvino as ov
    import openvino.opset1 as ops1

    rng = np.random.default_rng(rank)
    spatial = (9, 8, 7)[:rank]
    x = rng.standard_normal((2, 5, *spatial)).astype(np.float32)
    filters = rng.standard_normal((4, 5, *(3,) * rank)).astype(np.float32)
    data = ops1.parameter(list(x.shape), np.float32, name="data")
    node = ops1.convolution(data, ops1.constant(filters), [2] + [1] * (rank - 1), [1] * rank, [0] + [2] * (rank - 1),
                            [1] * (rank - 1) + [2], auto_pad)
    path = save_ov(ov.Model([node], [data], "conv"), tmp_path)
    (want,) = ov_run(path, [x])
    np.testing.assert_allclose(first_output(path, {"data": x}), want, rtol=1e-4, atol=1e-4)

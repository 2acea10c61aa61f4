"""ONNX DeformConv through OpenVINO with irgrid's conversion rules (irgrid.openvino).

Oracles: the 4 ONNX backend DeformConv cases (expected outputs shipped with onnx; rtol 1e-5,
atol 1e-6), onnxruntime DeformConv-19 for a 2-D model with a mask but no bias (atol/rtol 2e-5), and
irgrid's own runtime (whose 1-D/3-D results test_deform_conv_semantics.py checks against direct loops
from the spec) for the irgrid1 path inside OpenVINO (1e-6). OpenVINO runs at the f32 hint.
"""
from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper

import irgrid.openvino as iov
from oracles import deform_conv_ir, first_output, onnx_backend_cases, random_deform_inputs, save_ov

CASES = onnx_backend_cases("DeformConv")

F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def _core() -> ov.Core:
    core = ov.Core()
    core.add_extension(iov.extensions())
    return core


def _converted_types(model) -> set[tuple[str, str]]:
    return {(op.get_type_name(), op.get_type_info().version_id) for op in model.get_ordered_ops()
            if "Conv" in op.get_type_name()}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_cases_through_openvino(case, tmp_path):
    path = tmp_path / f"{case.name}.onnx"
    onnx.save(case.model, str(path))
    converted = ov.convert_model(str(path), extension=iov.conversion_extensions())
    assert _converted_types(converted) == {("DeformableConvolution", "opset8")}  # 2-D: OpenVINO's own
    compiled = _core().compile_model(converted, "CPU", F32)
    names = [value.name for value in case.model.graph.input]
    for inputs, (expected,) in case.data_sets:
        out = compiled(dict(zip(names, (np.asarray(a) for a in inputs))))[0]
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def _onnx_model(path, arrays: dict[str, np.ndarray], attrs: dict, input_names: list[str]):
    node = helper.make_node("DeformConv", input_names, ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                                            for n, a in arrays.items()],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), str(path))


def test_mask_without_bias_2d(tmp_path):
    """B given as an empty name before the mask; absent strides/dilations take ONNX's defaults."""
    import onnxruntime as ort

    rng = np.random.default_rng(2)
    arrays, _ = random_deform_inputs(rng, 4, 6, 2, 2, (7, 6), (3, 3), (1, 1), (1, 1), (1, 0, 1, 2), True, False, 2.0)
    del arrays["B"]
    _onnx_model(tmp_path / "m.onnx", arrays, {"group": 2, "offset_group": 2, "pads": [1, 0, 1, 2]},
                ["X", "W", "offset", "", "mask"])
    want = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, arrays)[0]
    converted = ov.convert_model(str(tmp_path / "m.onnx"), extension=iov.conversion_extensions())
    got = _core().compile_model(converted, "CPU", F32)(arrays)[0]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dims, kernel, with_bias, with_mask", [
    ((10,), (3,), True, True), ((4, 5, 4), (2, 2, 2), False, True), ((5, 4, 6), (3, 1, 2), True, False)])
def test_other_ranks_map_to_irgrid1(dims, kernel, with_bias, with_mask, tmp_path):
    r = len(dims)
    rng = np.random.default_rng(r)
    arrays, attrs = random_deform_inputs(rng, 4, 4, 2, 2, dims, kernel, [1] * r, [1] * r, [1] * r + [0] * r,
                                         with_mask, with_bias, 1.5, n=1)
    names = ["X", "W", "offset", "B" if with_bias else "", "mask"][:5 if with_mask else 4 if with_bias else 3]
    feeds = {k: v for k, v in arrays.items() if k in names}
    onnx_attrs = {"group": 2, "offset_group": 2, "pads": attrs["pads"]}
    _onnx_model(tmp_path / "m.onnx", feeds, onnx_attrs, names)
    converted = ov.convert_model(str(tmp_path / "m.onnx"), extension=iov.conversion_extensions())
    assert _converted_types(converted) == {("DeformConv", "irgrid1")}
    got = _core().compile_model(converted, "CPU", F32)(feeds)[0]
    want = first_output(deform_conv_ir(tmp_path / "m.xml", arrays, attrs), arrays)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dims, kernel", [((6, 7), (3, 3)), ((4, 5, 6), (2, 2, 2))], ids=["2d", "3d"])
@pytest.mark.parametrize("attrs, error", [
    ({"pads": [-1] * 6}, "must be >= 0"), ({"kernel_shape": [4] * 3}, "kernel_shape"),
    ({"strides": [0] * 3}, "must be >= 1"), ({"group": 0}, "must be >= 1")],
    ids=["negative-pads", "kernel-shape", "zero-strides", "group-0"])
def test_both_paths_refuse_what_irgrid1_refuses(dims, kernel, attrs, error, tmp_path):
    """ONNX's spec: pads >= 0, kernel_shape is W's spatial shape. The 2-D path maps to OpenVINO's
    DeformableConvolution-8, which ran negative pads as 0 and ignored kernel_shape; both paths now apply
    irgrid1's checks."""
    r = len(dims)
    attrs = {k: v[:2 * r] if k == "pads" else v[:r] if isinstance(v, list) else v for k, v in attrs.items()}
    arrays = {"X": np.zeros((1, 2, *dims), np.float32), "W": np.zeros((2, 2, *kernel), np.float32),
              "offset": np.zeros((1, r * int(np.prod(kernel)), *(d - k + 1 for d, k in zip(dims, kernel))),
                                 np.float32)}
    _onnx_model(tmp_path / "m.onnx", arrays, attrs, ["X", "W", "offset"])
    with pytest.raises(Exception, match=error):
        ov.convert_model(str(tmp_path / "m.onnx"), extension=iov.conversion_extensions())


def test_input_counts_are_checked(tmp_path):
    arrays = {"X": np.zeros((1, 2, 6, 7), np.float32), "W": np.zeros((2, 2, 3, 3), np.float32)}
    _onnx_model(tmp_path / "m.onnx", arrays, {}, ["X", "W"])
    with pytest.raises(Exception, match="has 2 inputs, DeformConv takes 3 to 5"):
        ov.convert_model(str(tmp_path / "m.onnx"), extension=iov.conversion_extensions())


@pytest.mark.parametrize("version", ["opset1", "opset8"])
def test_openvino_device_stands_in_for_layers_that_crash(version, tmp_path, ov_run):
    """OpenVINO's CPU plugin segfaults on a NaN offset in DeformableConvolution-1 and -8 without
    bilinear_interpolation_pad: irgrid's OpenVINO device runs irgrid's implementation in their place.
    Oracles: OpenVINO's own layer on finite offsets (rtol/atol 1e-5), irgrid's runtime on NaN ones."""
    import openvino.opset1 as o1
    import openvino.opset8 as o8

    from irgrid import compile_model
    from irgrid.openvino.runner import OpenVINOModel

    rng = np.random.default_rng(5)
    x, offsets = o1.parameter([1, 4, 9, 8], np.float32, name="x"), o1.parameter([1, 36, 7, 6], np.float32,
                                                                                 name="offsets")
    w = o1.constant(rng.standard_normal((6, 2, 3, 3)).astype(np.float32))
    layer = (o1 if version == "opset1" else o8).deformable_convolution(
        x, offsets, w, [1, 1], [0, 0], [0, 0], [1, 1], group=2, deformable_group=2)
    layer.set_friendly_name("dcn")
    model = ov.Model([o1.result(layer)], [x, offsets])
    path = save_ov(model, tmp_path)
    feeds = {"x": rng.standard_normal((1, 4, 9, 8)).astype(np.float32),
             "offsets": rng.uniform(-2, 2, (1, 36, 7, 6)).astype(np.float32)}
    runner = OpenVINOModel(path)
    (got,) = runner(feeds).values()
    np.testing.assert_allclose(got, ov_run(model, list(feeds.values()))[0], rtol=1e-5, atol=1e-5)
    feeds["offsets"][0, 5, 2, 3] = np.nan
    (got,) = runner(feeds).values()
    (want,) = compile_model(path)(feeds).values()
    assert np.isnan(got).any()
    np.testing.assert_array_equal(got, want)

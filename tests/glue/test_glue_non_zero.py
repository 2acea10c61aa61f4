"""NonZero-3 (irgrid/ops/glue/non_zero.py) against OpenVINO's CPU plugin (f32 precision hint), exactly:
random inputs of ranks 0-4 with about a third zeros, all zeros, none zero, NaN (non-zero) and -0.0
(zero), boolean, integer and float types, both output types. Its output's dim is data-dependent: the
compiled model returns a new count per call. Boolean-mask assignment as torch's dynamo exporter writes
it (NonZero -> ScatterNDUpdate, `irgrid convert`): against torch, exactly (it only moves values).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset3 as o3
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import named, rng, save_ov

SHAPES = [(), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 5)]
TYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.uint8, np.int8, np.bool_]


def _model(shape, dtype, output_type):
    x = ops.parameter(list(shape), dtype, name="x")
    return ov.Model([ops.result(named(o3.non_zero(x, output_type), "y"))], [x], "non_zero")


def _values(shape, dtype, kind, seed=0) -> np.ndarray:
    r = rng(seed)
    if kind == "zeros":
        return np.zeros(shape, dtype)
    if kind == "ones":
        return np.ones(shape, dtype)
    values = r.integers(-3, 4, size=shape) * (r.random(size=shape) > 0.3)
    return np.asarray(values != 0) if dtype == np.bool_ else np.asarray(values, dtype)


def _compare(path, arrays, ov_run, output_type):
    compiled = irgrid.compile_model(path)
    for x in arrays:
        (expected,) = ov_run(str(path), [x])
        (got,) = compiled({"x": x}).values()
        assert got.dtype == np.dtype(output_type.replace("i", "int")) == expected.dtype
        assert got.shape == expected.shape, (got.shape, expected.shape, x)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("output_type", ["i64", "i32"])
@pytest.mark.parametrize("dtype", TYPES, ids=[np.dtype(t).name for t in TYPES])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_against_openvino(shape, dtype, output_type, tmp_path, ov_run):
    """One compiled model, several calls: random values (three seeds, so counts differ), all zero,
    none zero."""
    path = save_ov(_model(shape, dtype, output_type), tmp_path)
    arrays = [_values(shape, dtype, "random", seed) for seed in range(3)]
    _compare(path, arrays + [_values(shape, dtype, "zeros"), _values(shape, dtype, "ones")], ov_run, output_type)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_nan_is_non_zero_and_negative_zero_is_zero(dtype, tmp_path, ov_run):
    x = np.array([[np.nan, -0.0, 0.0, 1e-30 if dtype != np.float16 else 1e-7],
                  [-np.inf, np.nan, -0.0, 0.0]], dtype)
    path = save_ov(_model(x.shape, dtype, "i64"), tmp_path)
    _compare(path, [x, np.full((2, 4), -0.0, dtype), np.full((2, 4), np.nan, dtype)], ov_run, "i64")
    (got,) = irgrid.compile_model(path)({"x": x}).values()
    np.testing.assert_array_equal(got, [[0, 0, 1, 1], [0, 3, 0, 1]])


def test_scalar_gives_one_row(tmp_path, ov_run):
    path = save_ov(_model((), np.float32, "i64"), tmp_path)
    _compare(path, [np.array(2.5, np.float32), np.array(0.0, np.float32), np.array(np.nan, np.float32)],
             ov_run, "i64")


def test_count_is_dynamic_unless_the_input_is_constant(tmp_path):
    """Inference leaves the count unknown for a Parameter, and folds a constant input's."""
    from irgrid.binding import read_model
    from irgrid.inference import infer_model

    path = save_ov(_model((3, 4), np.float32, "i32"), tmp_path)
    model = read_model(path)
    node = next(layer for layer in model.layers.values() if layer.type == "NonZero")
    assert infer_model(model)[(node.id, 0)].shape == (2, None)
    constant = ops.constant(np.array([[0, 2, 0], [3, 0, 0]], np.float32))
    x = ops.parameter([2, 2], np.float32, name="x")
    y = ops.add(ops.convert(o3.non_zero(constant, "i32"), "f32"), x)
    path = save_ov(ov.Model([ops.result(named(y, "y"))], [x], "folded"), tmp_path, "folded")
    assert 'type="NonZero"' in path.read_text()
    folded = irgrid.compile_model(path)
    assert [step.layer.type for step in folded._steps] == ["Add"]
    (got,) = folded({"x": np.zeros((2, 2), np.float32)}).values()
    np.testing.assert_array_equal(got, [[0, 1], [1, 0]])


MASK = """
import torch

class Threshold(torch.nn.Module):  # the occlusion mask of PWC-Net's backward warp
    def forward(self, mask):
        mask = mask * 1.0
        mask[mask < 0.9999] = 0
        mask[mask > 0] = 1
        return mask
"""


def test_boolean_mask_assignment_from_the_dynamo_exporter(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    namespace: dict = {}
    exec(MASK, namespace)
    module = namespace["Threshold"]().eval()
    mask = torch.rand(2, 3, 9, 11) * 0.2 + 0.85  # about half below the threshold
    torch.onnx.export(module, (mask,), str(tmp_path / "mask.onnx"), input_names=["mask"], output_names=["y"])
    path = tmp_path / "mask.xml"
    proc = subprocess.run([sys.executable, "-m", "irgrid", "convert", str(tmp_path / "mask.onnx"), "-o", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert path.read_text().count('type="NonZero"') == 2
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for m in (mask, torch.zeros(2, 3, 9, 11), torch.ones(2, 3, 9, 11), torch.rand(2, 3, 9, 11)):
        (got,) = compiled([m.numpy()]).values()
        np.testing.assert_array_equal(got, module(m).numpy())


def test_mask_assignment_against_openvino_without_sorting(tmp_path, ov_run, monkeypatch):
    """x[x < 0.5] = 0 as the ONNX frontend builds it (NonZero -> Transpose -> ScatterNDUpdate): NonZero's
    index tuples ascend, so ScatterNDUpdate assigns them without np.unique's sort (the last-update
    rule cannot matter without repeats); the values exactly OpenVINO's."""
    from irgrid.ops.glue import scatter_nd

    x = ops.parameter([2, 3, 4, 5], np.float32, name="x")
    indices = ops.transpose(o3.non_zero(ops.less(x, ops.constant(np.float32(0.5))), "i64"),
                            ops.constant(np.array([1, 0], np.int64)))
    zeros = ops.broadcast(ops.constant(np.float32(0)), ops.gather(ops.shape_of(indices), ops.constant([0]),
                                                                  ops.constant(0)))
    y = ops.scatter_nd_update(x, indices, zeros)
    path = save_ov(ov.Model([ops.result(named(y, "y"))], [x], "mask"), tmp_path)
    compiled = irgrid.compile_model(path)

    def refuse(*args, **kwargs):
        raise AssertionError("sorted")
    for seed in range(3):
        value = rng(seed).random((2, 3, 4, 5)).astype(np.float32)
        with monkeypatch.context() as patch:
            patch.setattr(scatter_nd.np, "unique", refuse)
            (got,) = compiled({"x": value}).values()
        (expected,) = ov_run(str(path), [value])
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got, np.where(value < 0.5, 0, value))

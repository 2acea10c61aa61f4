"""ScatterNDUpdate-3 (IR version opset4) and -15 against OpenVINO on saved IRs, and VoxelMorph's warp,
whose in-place grid normalisation every conversion route turns into ScatterNDUpdate, against torch.

Replacements and min/max are compared exactly; sums and products over repeated indices to 1e-6
relative (f32; OpenVINO may add in another order). Repeated assignments (`none`) are compared with
OpenVINO's reference implementation: its CPU plugin keeps any of them (`oracles.assigned_more_than_once`). Boolean `sub` is XOR in OpenVINO's specification and
reference implementation (the oracle there: `ov_reference`, OpenVINO's constant folding) but not in its
CPU plugin (docs/semantics.md).
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset4 as o4
import openvino.opset15 as o15
import pytest

import irgrid
import irgrid.openvino as iov
from oracles import assert_same, assigned_more_than_once, named, ov_reference, rng, run_both, save_ov

CASES = [  # data shape, indices (as given to OpenVINO), what they exercise
    ((8,), [[4], [3], [1], [7], [-2], [-4]], "elements, negative indices (the spec's example 1)"),
    ((4, 4, 4), [[0], [2]], "slices (the spec's example 2)"),
    ((4,), [[0], [2], [-3], [-3], [0]], "repeated positions"),
    ((3, 5, 6), [[[0, 1], [2, -1]], [[1, 4], [0, 1]]], "pairs of indices, 2-D batch of them"),
    ((2, 3, 4), [[1, 2, 3], [0, 0, 0], [1, 2, 3], [-1, -3, -4]], "full coordinates, repeated"),
    ((3, 4), np.zeros((2, 0), np.int64), "indices of shape (2, 0): no change, as OpenVINO does"),
    ((5, 2), np.zeros((0, 1), np.int64), "no updates"),
]


def _updates(data_shape, indices, dtype, seed=1) -> np.ndarray:
    indices = np.asarray(indices)
    shape = indices.shape[:-1] + tuple(data_shape[indices.shape[-1]:])
    values = rng(seed).normal(size=shape) * 10
    return values > 0 if dtype == np.bool_ else values.astype(dtype)


def _model(data, indices, updates, reduction, index_type=np.int64):
    x = o15.parameter(list(data.shape), data.dtype, name="data")
    u = o15.parameter(list(updates.shape), updates.dtype, name="updates")
    i = o15.constant(np.asarray(indices, index_type))
    node = (o4.scatter_nd_update(x, i, u) if reduction is None
            else o15.scatter_nd_update(x, i, u, reduction=reduction))
    return ov.Model([o15.result(named(node, "y"))], [x, u], "scatter")


@pytest.mark.parametrize("reduction", [None, "none", "sum", "sub", "prod", "min", "max"])
@pytest.mark.parametrize("shape, indices, what", CASES, ids=[c[2] for c in CASES])
def test_against_openvino(shape, indices, what, reduction, tmp_path, ov_run, ov_core):
    data = (rng(0).normal(size=shape) * 10).astype(np.float32)
    updates = _updates(shape, indices, np.float32)
    expected, got = run_both(_model(data, indices, updates, reduction), [data, updates], tmp_path, ov_run)
    if reduction in (None, "none"):
        once = ~assigned_more_than_once(shape, indices)
        assert_same([expected[0][once]], [got[0][once]])
        expected = ov_reference(ov_core, o4.scatter_nd_update, [data, np.asarray(indices), updates])
    assert_same(expected, got, rtol=1e-6 if reduction in ("sum", "sub", "prod") else 0.0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float16])
@pytest.mark.parametrize("reduction", ["none", "sum", "sub", "prod", "max"])
@pytest.mark.parametrize("index_type", [np.int32, np.int64])
def test_types(dtype, reduction, index_type, ov_core, tmp_path):
    """Against OpenVINO's reference implementation (its CPU plugin computes f16 in f32): the same bits,
    integer reductions wrapping, f16 rounded after each update."""
    shape, indices = (4, 3), np.array([[1], [-1], [1], [0]], index_type)
    data = (rng(0).normal(size=shape) * 20).astype(dtype)
    updates = _updates(shape, indices, dtype)
    (expected,) = ov_reference(ov_core, lambda d, i, u: o15.scatter_nd_update(d, i, u, reduction=reduction),
                               [data, indices, updates])
    path = save_ov(_model(data, indices, updates, reduction, index_type), tmp_path)
    got = irgrid.compile_model(path)({"data": data, "updates": updates})["y"]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("reduction, onnx_reduction", [("none", "none"), ("sum", "add"), ("prod", "mul"),
                                                      ("min", "min"), ("max", "max")])
def test_f64_against_onnx_reference(reduction, onnx_reduction, tmp_path):
    """f64 stays f64 (OpenVINO computes it in f32, even when folding): onnx.reference's ScatterND, which
    applies updates in index order as OpenVINO does, to 1e-12 relative."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    shape, indices = (4, 3, 2), np.array([[1, 2], [3, 0], [1, 2], [0, 1], [1, 2]])
    data = rng(0).normal(size=shape) * 20
    updates = _updates(shape, indices, np.float64)
    node = helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=onnx_reduction)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in
                                            (("data", TensorProto.DOUBLE), ("indices", TensorProto.INT64),
                                             ("updates", TensorProto.DOUBLE))],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (expected,) = ReferenceEvaluator(onnx_model).run(None, {"data": data, "indices": indices, "updates": updates})
    path = save_ov(_model(data, indices, updates, reduction), tmp_path)
    got = irgrid.compile_model(path)({"data": data, "updates": updates})["y"]
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("reduction", ["none", "sum", "sub", "prod", "min", "max"])
def test_boolean_reductions_follow_the_specification(reduction, ov_core, tmp_path):
    """OR, XOR and AND for sum, sub and prod, as OpenVINO's reference implementation folds them."""
    data, indices = np.array([True, False, True, False]), np.array([[0], [1], [1], [3], [2]])
    updates = np.array([True, True, True, False, False])
    (expected,) = ov_reference(ov_core, lambda d, i, u: o15.scatter_nd_update(d, i, u, reduction=reduction),
                               [data, indices, updates])
    path = save_ov(_model(data, indices, updates, reduction), tmp_path)
    got = irgrid.compile_model(path)({"data": data, "updates": updates})["y"]
    np.testing.assert_array_equal(got, expected)


def test_dynamic_dims_check_as_openvino_declares(tmp_path):
    """The output takes data's dims, dynamic ones included (run_both's check_model compares them with
    the IR's port dims), and runs at the shapes given."""
    data = rng(0).normal(size=(3, 5, 6)).astype(np.float32)
    indices = np.array([[2, 1], [0, 4]])
    updates = _updates(data.shape, indices, np.float32)
    x = o15.parameter([-1, 5, -1], np.float32, name="data")
    u = o15.parameter([2, -1], np.float32, name="updates")
    node = named(o15.scatter_nd_update(x, o15.constant(indices), u, reduction="max"), "y")
    path = save_ov(ov.Model([o15.result(node)], [x, u], "dyn"), tmp_path)
    assert irgrid.check_model(path) == []
    expected = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([data, updates])[0]
    got = irgrid.compile_model(path)({"data": data, "updates": updates})["y"]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("index", [4, -5, 100])
def test_an_index_outside_the_dim_is_refused(index, tmp_path, ov_run):
    """OpenVINO raises for an index outside [-4, 4); irgrid's InputError names the layer and input 1."""
    data, updates = np.zeros(4, np.float32), np.ones(1, np.float32)
    x = o15.parameter([4], np.float32, name="data")
    i = o15.parameter([1, 1], np.int64, name="indices")
    u = o15.parameter([1], np.float32, name="updates")
    path = save_ov(ov.Model([o15.result(named(o4.scatter_nd_update(x, i, u), "y"))], [x, i, u]), tmp_path)
    with pytest.raises(RuntimeError):
        ov_run(str(path), [data, np.array([[index]]), updates])
    with pytest.raises(irgrid.InputError, match=rf"ScatterNDUpdate.*port 1: index {index} at indices\[0, 0\] "
                                                 r"is out of range for dim 0 of data \[4\]"):
        irgrid.compile_model(path)({"data": data, "indices": np.array([[index]]), "updates": updates})


def test_updates_of_the_wrong_shape_are_a_check_problem(tmp_path):
    from lxml import etree

    data, updates = np.zeros((4, 3), np.float32), np.ones((2, 3), np.float32)
    path = save_ov(_model(data, [[0], [1]], updates, None), tmp_path)
    root = etree.fromstring(path.read_bytes())
    root.find(".//layer[@name='updates']/data").set("shape", "2,4")  # updates (2, 4) for data (4, 3)
    for dim in root.findall(".//layer[@name='updates']/output/port/dim"):
        dim.text = "4" if dim.text == "3" else dim.text
    for dim in root.findall(".//layer[@type='ScatterNDUpdate']/input/port[@id='2']/dim"):
        dim.text = "4" if dim.text == "3" else dim.text
    path.write_bytes(etree.tostring(root))
    problems = irgrid.check_model(path)
    assert len(problems) == 1 and problems[0].layer.type == "ScatterNDUpdate"
    assert "port 2: updates must have shape [2,3]" in str(problems[0]) and "got [2,4]" in str(problems[0])


VOXELMORPH = """
import sys, numpy as np, torch, torch.nn.functional as F

class SpatialTransformer(torch.nn.Module):  # voxelmorph/torch/layers.py's, as published
    def __init__(self, size, mode="bilinear"):
        super().__init__()
        self.mode = mode
        grids = torch.meshgrid([torch.arange(0, s) for s in size], indexing="ij")
        self.register_buffer("grid", torch.stack(grids).unsqueeze(0).float(), persistent=False)

    def forward(self, src, flow):
        new_locs = self.grid + flow
        shape = flow.shape[2:]
        for i in range(len(shape)):
            new_locs[:, i, ...] = 2 * (new_locs[:, i, ...] / (shape[i] - 1) - 0.5)
        new_locs = new_locs.permute(0, 2, 3, 4, 1)[..., [2, 1, 0]]
        return F.grid_sample(src, new_locs, align_corners=True, mode=self.mode)
"""


@pytest.mark.parametrize("route", ["convert_model", "onnx"])
def test_voxelmorph_warp_runs_on_irgrid(route, tmp_path):
    """VoxelMorph's SpatialTransformer through OpenVINO's PyTorch frontend (ScatterNDUpdate-3) and through
    ONNX (ScatterND -> ScatterNDUpdate-15, `irgrid convert`): irgrid's runtime supports every layer and
    matches torch to 1e-5. (torch's dynamo exporter, which needs onnxscript, makes ScatterElementsUpdate-12
    and GatherND-8 of it: tests/glue/test_glue_gather_nd_scatter_elements.py.)"""
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(VOXELMORPH, namespace)
    module = namespace["SpatialTransformer"]((6, 7, 8)).eval()
    src, flow = torch.randn(1, 2, 6, 7, 8), torch.randn(1, 3, 6, 7, 8) * 2
    path = tmp_path / "voxelmorph.xml"
    if route == "convert_model":
        model = ov.convert_model(module, example_input=(src, flow), extension=iov.conversion_extensions())
        ov.save_model(model, str(path), compress_to_fp16=False)
    else:
        torch.onnx.export(module, (src, flow), str(tmp_path / "voxelmorph.onnx"), opset_version=20,
                          dynamo=False, input_names=["src", "flow"], output_names=["warped"])
        proc = subprocess.run([sys.executable, "-m", "irgrid", "convert", str(tmp_path / "voxelmorph.onnx"),
                               "-o", str(path)], capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert "ScatterNDUpdate" in path.read_text()
    assert irgrid.check_model(path) == []
    (got,) = irgrid.compile_model(path)([src.numpy(), flow.numpy()]).values()
    np.testing.assert_allclose(got, module(src, flow).numpy(), rtol=1e-5, atol=1e-5)

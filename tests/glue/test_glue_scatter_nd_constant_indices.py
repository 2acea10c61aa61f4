"""ScatterNDUpdate with constant indices (irgrid/ops/glue/scatter_nd.py, `_prepare`): the indices are
checked, ravelled and deduplicated once at compile time, and indices that address a strided block
without repeats (what slice assignment `x[:, 0] = ...` exports as, in every route) become one numpy
assignment to a strided view.

Oracles: OpenVINO's CPU plugin at f32 (replacements are exact: compared bitwise) where one update
lands, OpenVINO's reference implementation everywhere (the plugin keeps any of repeated assignments,
`oracles.assigned_more_than_once`), and the per-call
path (`_run`, the code before constant indices were prepared): bitwise, reductions included. The real
exports (OpenVINO's PyTorch frontend, torch.onnx.export(dynamo=False) through `irgrid convert`) of a
PWC-Net style slice assignment: the block path fires on each, the output matches torch to 1e-6 and the
prepared plan's output is bitwise the dynamic plan's (which runs `_run`).
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
from irgrid.ops.glue import scatter_nd
from irgrid.registry import RunContext, TensorInfo
from oracles import assigned_more_than_once, named, ov_reference, rng, save_ov


def _grid(*axes) -> np.ndarray:
    """Full index tuples of the Cartesian product of `axes`, in C order: shape (*lengths, len(axes))."""
    return np.stack(np.meshgrid(*axes, indexing="ij"), -1).astype(np.int64)


def _flat(shape, *axes) -> np.ndarray:
    """The same block as positions in data flattened to 1-D, shape (n, 1) (OpenVINO's PyTorch frontend)."""
    return np.ravel_multi_index(tuple(_grid(*axes).reshape(-1, len(axes)).T), shape).reshape(-1, 1)


CASES = [  # data shape, indices, the prepared path expected, what they exercise
    ((2, 3, 5, 6), _grid(range(2), [0], range(5), range(6)), "assign_block", "x[:, 0:1] = ..., full tuples (ONNX)"),
    ((180,), _flat((2, 3, 5, 6), range(2), [1], range(5), range(6)), "assign_block",
     "x[:, 1] = ... on x flattened (OpenVINO's PyTorch frontend)"),
    ((2, 3, 5, 6), _grid(range(2), range(3), range(1, 5, 2)), "assign_block", "x[:, :, 1:5:2] = ..., rows of 6"),
    ((4, 3, 5), np.array([[1], [2]]), "assign_block", "two consecutive rows of 15"),
    ((4, 3, 5), np.array([[-3], [-2]]), "assign_block", "the same rows by negative indices"),
    ((4, 3, 5), np.array([[2], [0]]), "assign", "rows in descending order"),
    ((3, 5, 6), _grid(range(5), range(6), [2])[..., [2, 0, 1]], "assign_block", "x[2] = ... by (w, h) transposed"),
    ((4,), np.array([[0], [2], [-3], [-3], [0]]), "assign", "repeated positions: the last update stays"),
    ((6,), np.array([[0], [1], [2], [1], [2], [3]]), "assign", "overlapping runs"),
    ((3, 4, 5), np.array([[[0, 1], [2, -1]], [[1, 3], [0, 1]]]), "assign", "scattered pairs"),
    ((3, 4), np.array([[1, 2]]), "assign_block", "one element"),
    ((3, 4, 0), np.array([[1, 2], [0, 0]]), "assign", "rows without elements"),
]


def _model(data_shape, indices, dtype):
    x = o15.parameter(list(data_shape), dtype, name="data")
    updates_shape = indices.shape[:-1] + tuple(data_shape[indices.shape[-1]:])
    u = o15.parameter(list(updates_shape), dtype, name="updates")
    node = o4.scatter_nd_update(x, o15.constant(indices), u)
    return ov.Model([o15.result(named(node, "y"))], [x, u], "scatter"), updates_shape


def _prepared(compiled, type_="ScatterNDUpdate") -> list[str]:
    return [getattr(step.prepared, "__name__", None) for step in compiled._steps if step.layer.type == type_]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("shape, indices, path_name, what", CASES, ids=[c[3] for c in CASES])
def test_against_openvino_and_the_per_call_path(shape, indices, path_name, what, dtype, tmp_path, ov_run,
                                                ov_core):
    model, updates_shape = _model(shape, indices, dtype)
    data = (rng(0).normal(size=shape) * 100).astype(dtype)
    updates = (rng(1).normal(size=updates_shape) * 100).astype(dtype)
    path = save_ov(model, tmp_path)
    compiled = irgrid.compile_model(path)
    assert _prepared(compiled) == [path_name]
    (got,) = compiled({"data": data, "updates": updates}).values()
    (plugin,) = ov_run(str(path), [data, updates])
    (reference,) = ov_reference(ov_core, o4.scatter_nd_update, [data, indices, updates])
    (per_call,) = scatter_nd._run({}, [data, indices, updates], RunContext(1))
    assert got.dtype == plugin.dtype == reference.dtype == per_call.dtype and got.flags.c_contiguous
    once = ~assigned_more_than_once(shape, indices)
    np.testing.assert_array_equal(got[once], plugin[once])
    np.testing.assert_array_equal(got, reference)
    np.testing.assert_array_equal(got, per_call)


@pytest.mark.parametrize("reduction", ["sum", "prod", "max"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.bool_])
def test_reductions_bitwise_as_per_call(reduction, dtype):
    """Repeated positions: the prepared reductions apply updates in the same order as `_run`."""
    indices = rng(2).integers(-4, 4, size=(40, 1))
    data = (rng(3).normal(size=(4, 3)) * 3).astype(dtype)
    updates = (rng(4).normal(size=(40, 3)) * 3).astype(dtype)
    infos = [TensorInfo(data.shape, "x"), TensorInfo(indices.shape, "i64", indices), TensorInfo(updates.shape, "x")]
    prepared = scatter_nd._prepare({"reduction": reduction}, infos)
    (got,) = prepared([data, indices, updates], RunContext(1))
    (expected,) = scatter_nd._run({"reduction": reduction}, [data, indices, updates], RunContext(1))
    assert got.tobytes() == expected.tobytes()


def test_constant_indices_are_checked_once(tmp_path, monkeypatch):
    """After compiling, calls neither check nor sort the indices again (before: every call did, 343 ms
    on PWC-Net's 1.78 M index tuples); the values stay OpenVINO's (test above)."""
    shape, indices = (2, 3, 5, 6), _grid(range(2), [0], range(5), range(6))
    for what, indices in (("block", indices), ("scattered", indices[..., ::-1, :])):
        model, updates_shape = _model(shape, indices, np.float32)
        compiled = irgrid.compile_model(save_ov(model, tmp_path / what))

        def refuse(*args, **kwargs):
            raise AssertionError("indices checked again at run time")
        with monkeypatch.context() as patch:
            patch.setattr(scatter_nd, "checked_indices", refuse)
            patch.setattr(scatter_nd.np, "unique", refuse)
            compiled({"data": np.zeros(shape, np.float32), "updates": np.ones(updates_shape, np.float32)})


def test_indices_out_of_range_still_fail_per_call(tmp_path):
    """Constant indices out of range compile as before and are refused on each call (an InputError)."""
    model, updates_shape = _model((4, 3), np.array([[1], [4]]), np.float32)
    compiled = irgrid.compile_model(save_ov(model, tmp_path))
    with pytest.raises(irgrid.errors.InputError, match="index 4 at indices\\[1, 0\\] is out of range"):
        compiled({"data": np.zeros((4, 3), np.float32), "updates": np.ones(updates_shape, np.float32)})


@pytest.mark.parametrize("flat, expected", [
    ([3], (3, (), ())),
    ([0, 1, 2, 3], (0, (4,), (1,))),
    ([5, 7, 9, 20, 22, 24], (5, (2, 3), (15, 2))),
    ([0, 10, 1, 11, 2, 12], (0, (3, 2), (1, 10))),  # a transposed block
    ([0, 1, 2, 1, 2, 3], None),  # overlapping
    ([0, 1, 2, 4], None),  # not a block
    ([2, 1, 0], None),  # descending: left to the general path
    ([0, 0], None),
])
def test_strided_block(flat, expected):
    assert scatter_nd.strided_block(np.array(flat, np.int64)) == expected


PWC_SLICES = """
import torch

class Normalise(torch.nn.Module):  # the slice assignments of PWC-Net's backward warp
    def forward(self, grid, flo):
        vgrid = grid + flo
        W, H = vgrid.shape[3], vgrid.shape[2]
        vgrid[:, 0, :, :] = 2.0 * vgrid[:, 0, :, :].clone() / max(W - 1, 1) - 1.0
        vgrid[:, 1, :, :] = 2.0 * vgrid[:, 1, :, :].clone() / max(H - 1, 1) - 1.0
        return vgrid
"""


@pytest.mark.parametrize("route", ["convert_model", "onnx"])
def test_slice_assignment_exports_run_as_blocks(route, tmp_path):
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(PWC_SLICES, namespace)
    module = namespace["Normalise"]().eval()
    grid, flo = torch.rand(2, 2, 9, 13) * 12, torch.randn(2, 2, 9, 13) * 3
    path = tmp_path / "slices.xml"
    if route == "convert_model":
        ov.save_model(ov.convert_model(module, example_input=(grid, flo)), str(path), compress_to_fp16=False)
    else:
        torch.onnx.export(module, (grid, flo), str(tmp_path / "slices.onnx"), dynamo=False, opset_version=17,
                          input_names=["grid", "flo"], output_names=["vgrid"])
        proc = subprocess.run([sys.executable, "-m", "irgrid", "convert", str(tmp_path / "slices.onnx"), "-o",
                               str(path)], capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    static = irgrid.compile_model(path, shapes={"grid": [2, 2, 9, 13], "flo": [2, 2, 9, 13]})
    assert _prepared(static) == ["assign_block"] * 2
    (got,) = static([grid.numpy(), flo.numpy()]).values()
    np.testing.assert_allclose(got, module(grid, flo).numpy(), rtol=1e-6, atol=1e-6)
    if route == "convert_model":  # dynamic dims: the unspecialised plan runs `_run`, bitwise the same
        generic = irgrid.compile_model(path)
        assert _prepared(generic) == [None, None]
        (unprepared,) = generic([grid.numpy(), flo.numpy()]).values()
        np.testing.assert_array_equal(got, unprepared)

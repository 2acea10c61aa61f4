"""The decomposed affine grid torch's dynamo exporter writes for F.affine_grid (base lattice x theta,
summed: irgrid/runtime/fusion.py, `_plan_decomposed`) runs fused into the GridSamples it feeds.

Oracles: torch (F.affine_grid + F.grid_sample, f32) on real dynamo exports, 2-D and 3-D, within 1e-5
absolute on images in [0, 1] (the unfused graph is itself up to 7e-6 from torch); the unfused run of
the same IR (`fuse=False`) within 1e-5 (not bitwise: the exporter's lattice is torch.linspace's, a few
ulps from the AffineGrid kernel's, see the fusion's docstring); OpenVINO's CPU plugin (f32) on a
hand-built graph of the same layers, within 1e-5. Graphs that only look alike are left unfused.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset9 as o9
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import named, rng, save_ov

STN = """
import torch, torch.nn.functional as F

class SpatialTransformer(torch.nn.Module):
    def __init__(self, align_corners):
        super().__init__()
        self.align_corners = align_corners

    def forward(self, x, theta):
        grid = F.affine_grid(theta, list(x.shape), align_corners=self.align_corners)
        return F.grid_sample(x, grid, align_corners=self.align_corners)
"""


def _fused_steps(compiled) -> list[tuple[str, bool]]:
    return [(step.layer.type, step.fused is not None) for step in compiled._steps]


@pytest.mark.parametrize("shape, align_corners", [((8, 1, 32, 64, 64), False), ((2, 2, 5, 7, 9), True),
                                                  ((4, 3, 48, 64), False), ((3, 2, 9, 5), True)],
                         ids=["3-D 8x1x32x64x64", "3-D align_corners", "2-D 4x3x48x64", "2-D align_corners"])
def test_dynamo_export_runs_fused(shape, align_corners, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    namespace: dict = {}
    exec(STN, namespace)
    module = namespace["SpatialTransformer"](align_corners).eval()
    r = len(shape) - 2
    generator = torch.Generator().manual_seed(len(shape))
    x = torch.rand(shape, generator=generator)
    theta = torch.eye(r, r + 1).expand(shape[0], r, r + 1) + torch.randn(shape[0], r, r + 1, generator=generator) / 5
    torch.onnx.export(module, (x, theta), str(tmp_path / "stn.onnx"), input_names=["x", "theta"], output_names=["y"])
    path = tmp_path / "stn.xml"
    proc = subprocess.run([sys.executable, "-m", "irgrid", "convert", str(tmp_path / "stn.onnx"), "-o", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    assert 'type="ReduceSum"' in text and 'type="AffineGrid"' not in text  # the decomposition
    fused = irgrid.compile_model(path)
    assert _fused_steps(fused) == [("GridSample", True)]
    unfused = irgrid.compile_model(path, fuse=False)
    assert "ReduceSum" in [t for t, _ in _fused_steps(unfused)]
    (got,) = fused([x.numpy(), theta.numpy()]).values()
    (reference,) = unfused([x.numpy(), theta.numpy()]).values()
    expected = module(x, theta).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-5)


def _lattice(dims, align_corners, dtype=np.float32) -> np.ndarray:
    """torch's base grid (torch/_decomp: linspace per axis, x first, then 1), as (1, P, r + 1, 1)."""
    import torch

    axes = []
    for length in dims:
        a = 1.0 if align_corners else (length - 1) / length
        axes.append(torch.linspace(-a, a, length, dtype=torch.float64 if dtype == np.float64 else torch.float32)
                    .numpy() if length > 1 else np.zeros(1, dtype))
    points = np.stack(np.meshgrid(*axes, indexing="ij")[::-1], -1).reshape(-1, len(dims))
    return np.concatenate([points, np.ones((len(points), 1), dtype)], 1)[None, :, :, None].astype(dtype)


def _decomposed_model(base: np.ndarray, batch: int, channels: int, dims, align_corners: bool,
                      grid_output: bool = False):
    x = ops.parameter([batch, channels, *dims], np.float32, name="x")
    theta = ops.parameter([batch, 2, 3], np.float32, name="theta")
    turned = ops.unsqueeze(ops.transpose(theta, ops.constant(np.array([0, 2, 1], np.int64))),
                           ops.constant(np.array([1], np.int64)))
    summed = ops.reduce_sum(ops.multiply(ops.constant(base), turned), ops.constant(np.array([2], np.int64)), False)
    grid = ops.reshape(summed, ops.constant(np.array([batch, *dims, 2], np.int64)), False)
    y = o9.grid_sample(x, grid, {"align_corners": align_corners, "mode": "bilinear", "padding_mode": "zeros"})
    results = [ops.result(named(y, "y"))] + ([ops.result(named(grid, "grid"))] if grid_output else [])
    return ov.Model(results, [x, theta], "decomposed")


def _inputs(batch, channels, dims):
    x = rng(0).random((batch, channels, *dims)).astype(np.float32)
    theta = (np.eye(2, 3) + rng(1).normal(size=(batch, 2, 3)) / 5).astype(np.float32)
    return [x, theta]


@pytest.mark.parametrize("dims, align_corners", [((11, 13), False), ((11, 13), True), ((7, 1), True)])
def test_hand_built_graph_against_openvino(dims, align_corners, tmp_path, ov_run):
    """Also a size-1 dim with align_corners (its coordinate 0), which torch's dynamo exporter refuses."""
    path = save_ov(_decomposed_model(_lattice(dims, align_corners), 2, 3, dims, align_corners), tmp_path)
    compiled = irgrid.compile_model(path)
    assert _fused_steps(compiled) == [("GridSample", True)]
    inputs = _inputs(2, 3, dims)
    (got,) = compiled(inputs).values()
    (expected,) = ov_run(str(path), inputs)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_other_computations_stay_unfused(tmp_path):
    """A base that is not the lattice (one point moved by 1e-5, or a constant column of 2), and a grid
    the caller also receives: no fusion, and results bitwise those of the unfused plan."""
    dims = (11, 13)
    moved, doubled = _lattice(dims, False), _lattice(dims, False)
    moved[0, 5, 0, 0] += 1e-5
    doubled[0, :, 2, 0] = 2
    cases = [(moved, False, False, "not the affine lattice"), (doubled, False, False, "not the affine lattice"),
             (_lattice(dims, False), False, True, None)]
    for index, (base, align_corners, grid_output, reason) in enumerate(cases):
        path = save_ov(_decomposed_model(base, 2, 3, dims, align_corners, grid_output), tmp_path, f"m{index}")
        compiled = irgrid.compile_model(path)
        assert ("GridSample", True) not in _fused_steps(compiled)
        if reason:
            assert reason in compiled.describe()
        inputs = _inputs(2, 3, dims)
        for got, expected in zip(compiled(inputs).values(), irgrid.compile_model(path, fuse=False)(inputs).values()):
            np.testing.assert_array_equal(got, expected)

"""Warps by a displacement field run fused into GridSample (irgrid/runtime/displacement.py).

Oracles and tolerances:
- the kernel's displaced source against onnxruntime (onnx.reference in 1-D) on the grid its formula
  describes, computed in f64: within 2e-6 (f32; onnx.reference's 1-D, itself up to 1e-7 off in f64) /
  1e-12 (f64) on data in [0, 1], linear in every rank and 2-D cubic (onnx.reference's 1-D and 3-D cubic
  differ from irgrid's settled semantics at the border and off dyadic grids: docs/semantics.md); every
  mode also bit for bit against the kernel's own grid path fed that formula's grid (the same
  coordinates, so the same taps);
- the real exports of PWC-Net's warp and VoxelMorph's SpatialTransformer (benchmarks/glue_blocks.py) by
  every route: torch eager within 1e-5, and the unfused plan of the same IR (`fuse=False`) within 1e-5
  (a coordinate may move by a few ulps: the module docstring says why);
- RAFT's correlation lookup (a lattice translated per item), both routes that export it: torch and the
  unfused plan within 2e-5 (its data are N(0, 1));
- hand-built graphs that only look like a warp stay unfused and agree with OpenVINO's CPU plugin (1e-5).
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset9 as o9
import openvino.opset13 as ops
import pytest

import irgrid
from irgrid.ops import grid_sample
from oracles import compile_exported, keyed_rng, run_onnx_reference, run_oracle, save_ov


def _sample_displaced(x, field, displacement, mode, padding, align, threads):
    plan = grid_sample.sample_plan(x.shape, field.shape, x.dtype, mode, padding, align, displacement=displacement)
    return plan(x, field, None, threads)


def _formula_grid(field, displacement, dtype):
    """The grid of grid_sample.h's irgrid_displacement, one rounding per operation in `dtype`."""
    component, gain, scale, shift = displacement
    dims = field.shape[2:]
    r = len(dims)
    index = np.meshgrid(*[np.arange(n, dtype=dtype) for n in dims], indexing="ij")
    return np.stack([(index[r - 1 - k] + dtype(gain[k]) * field[:, component[k]]) * dtype(scale[k]) + dtype(shift[k])
                     for k in range(r)], -1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dims", [(9,), (12, 17), (6, 7, 9)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_displaced_source_samples_at_the_formulas_points(dtype, dims, mode, padding):
    rng = keyed_rng("displaced", dtype, dims, mode, padding)
    r = len(dims)
    x = rng.random((2, 3, *dims)).astype(dtype)
    field = (rng.standard_normal((2, r + 1, *dims)) * 3).astype(dtype)  # one spare channel, unread
    displacement = (tuple(range(r))[::-1], (1.0,) * r, tuple(2 / (dims[r - 1 - k] - 1) for k in range(r)), (-1.0,) * r)
    grid = _formula_grid(field, displacement, dtype)
    for align in (False, True):
        expected = grid_sample.sample_plan(x.shape, grid.shape, x.dtype, mode, padding, align)(x, grid)
        for threads in (1, 2):
            got = _sample_displaced(x, field, displacement, mode, padding, align, threads)
            assert got.tobytes() == expected.tobytes()
        if mode == "linear" or (mode, r) == ("cubic", 2):  # (a nearest tie can round either way in f64)
            tolerance = 2e-6 if dtype == np.float32 or r == 1 else 1e-12  # onnx.reference's 1-D: 1e-7 off
            oracle = (run_onnx_reference if r == 1 else run_oracle)(x.astype(np.float64), grid.astype(np.float64),
                                                                    mode, padding, align)
            np.testing.assert_allclose(got, oracle, rtol=0, atol=tolerance)


def test_displaced_source_refuses_what_it_cannot_read():
    x = np.zeros((1, 1, 4, 5), np.float32)
    field = np.zeros((1, 2, 4, 5), np.float32)
    with pytest.raises(ValueError):  # a component past the field's channels
        _sample_displaced(x, field, ((0, 2), (1.0, 1.0), (1.0, 1.0), (0.0, 0.0)), "linear", "zeros", True, 1)
    with pytest.raises(ValueError):  # as many components as dims
        _sample_displaced(x, field, ((0,), (1.0,), (1.0,), (0.0,)), "linear", "zeros", True, 1)
    with pytest.raises(ValueError):  # the field's batch
        _sample_displaced(x, np.zeros((2, 2, 4, 5), np.float32), ((0, 1), (1.0,) * 2, (1.0,) * 2, (0.0,) * 2),
                          "linear", "zeros", True, 1)


def _warp_rows(compiled) -> tuple[list[dict], list[dict]]:
    """(the GridSample steps, the layers fused into them)."""
    layers = compiled.describe(structured=True)["layers"]
    samples = [row for row in layers if row["type"] == "GridSample"]
    return samples, [row for row in layers if row["status"] == "fused"]


@pytest.mark.parametrize("case", ["pwc/cm", "pwc/ts", "pwc/dyn", "voxelmorph/cm", "voxelmorph/ts", "voxelmorph/dyn"])
def test_exported_warps_run_fused(case, glue_export):
    torch = pytest.importorskip("torch")
    name, route = case.split("/")
    module, inputs, xml = glue_export(name, route)
    fused, unfused = compile_exported(xml, inputs), compile_exported(xml, inputs, fuse=False)
    samples, absorbed = _warp_rows(fused)
    assert samples and all(row.get("fused_type") for row in samples)  # every GridSample reads the field
    assert {"Add", "Gather"} <= {row["type"] for row in absorbed}  # base + flow, the channel flip
    assert not any(row["type"] == "GridSample" and row.get("fused_type") for row in _warp_rows(unfused)[0])
    feeds = [t.numpy() for t in inputs]
    (got,) = fused(feeds).values()
    (plain,) = unfused(feeds).values()
    np.testing.assert_allclose(got, plain, rtol=0, atol=1e-5)
    with torch.no_grad():
        np.testing.assert_allclose(got, module(*inputs).numpy(), rtol=0, atol=1e-5)


def _warp_graph(variant: str) -> ov.Model:
    """grid = 2 (base + flow) / (size - 1) - 1 as in the module docstring, and variants of it."""
    h, w = 6, 8
    image = ops.parameter([1, 2, h, w], np.float32, name="image")
    flow = ops.parameter([1, 2, h, w], np.float32, name="flow")
    ys, xs = np.meshgrid(np.arange(h, dtype=np.float32), np.arange(w, dtype=np.float32), indexing="ij")
    base = ops.constant(np.stack([xs, ys])[None])
    moved = ops.add(base, flow)
    if variant == "flipped":  # each point reads the flow of its mirror image
        moved = ops.add(base, o9.gather(flow, ops.constant(np.arange(w)[::-1].copy()), ops.constant(np.int64(3))))
    if variant == "clamped":  # not affine
        moved = ops.clamp(moved, 0.0, 5.0)
    if variant == "squared":  # the product of two values read from the flow
        moved = ops.multiply(moved, moved)
    scale = ops.constant(np.array([2 / (w - 1), 2 / (h - 1)], np.float32).reshape(1, 2, 1, 1))
    normalised = ops.subtract(ops.multiply(moved, scale), ops.constant(np.float32(1)))
    grid = ops.transpose(normalised, ops.constant(np.array([0, 2, 3, 1])))
    out = o9.grid_sample(image, grid, {"align_corners": True, "mode": "bilinear", "padding_mode": "zeros"})
    results = [ops.result(out)]
    if variant == "grid_returned":  # the grid is needed as it is
        results.append(ops.result(grid))
    return ov.Model(results, [image, flow], variant)


@pytest.mark.parametrize("variant", ["plain", "flipped", "clamped", "squared", "grid_returned"])
def test_only_displacement_warps_are_fused(variant, tmp_path, ov_run):
    path = save_ov(_warp_graph(variant), tmp_path)
    compiled = irgrid.compile_model(path)
    (sample,), _ = _warp_rows(compiled)
    assert bool(sample.get("fused_type")) == (variant == "plain")
    rng = keyed_rng("warp graph", variant)
    feeds = [rng.random((1, 2, 6, 8)).astype(np.float32), (rng.standard_normal((1, 2, 6, 8)) * 3).astype(np.float32)]
    for got, expected in zip(compiled(feeds).values(), ov_run(str(path), feeds)):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


@pytest.mark.parametrize("route", ["cm", "dyn"])
def test_raft_lookup_runs_as_a_translated_lattice(route, glue_export):
    """RAFT's correlation lookup (benchmarks/glue_blocks.py: each item's 9x9 window of pixel offsets moved
    by its own coordinates, normalised) runs as the fused AffineGrid with a theta per item: within 2e-5
    of the unfused plan and of torch (correlations N(0, 1), so up to about 4: a few ulps of a coordinate)."""
    torch = pytest.importorskip("torch")
    module, inputs, xml = glue_export("raft", route)
    fused = compile_exported(xml, inputs)
    (sample,), absorbed = _warp_rows(fused)
    assert sample.get("fused_type") and {"Add", "Concat"} <= {row["type"] for row in absorbed}
    feeds = [t.numpy() for t in inputs]
    (got,) = fused(feeds).values()
    (plain,) = compile_exported(xml, inputs, fuse=False)(feeds).values()
    np.testing.assert_allclose(got, plain, rtol=0, atol=2e-5)
    with torch.no_grad():
        np.testing.assert_allclose(got, module(*inputs).numpy(), rtol=0, atol=2e-5)


"""End to end: a flow warp as PyTorch users write it (torch.arange + meshgrid + flow, normalised by
the input's size, grid_sample, clamp, an out-of-frame occlusion mask), built from the layers OpenVINO's
PyTorch frontend emits for that code, run by irgrid and by OpenVINO's CPU plugin (f32): within 1e-5.

    ys, xs = torch.meshgrid(torch.arange(H), torch.arange(W), indexing="ij")
    coords = torch.stack([xs, ys]).float()[None] + flow
    gx = 2 * coords[:, 0:1] / (W - 1) - 1 ...; grid = torch.cat([gx, gy], 1).permute(0, 2, 3, 1)
    warped = F.grid_sample(image, grid, align_corners=True).clamp(0, 1)
    occluded = (gx.abs() > 1) | (gy.abs() > 1); warped = torch.where(occluded, 0, warped)
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset3 as o3
import openvino.opset8 as o8
import openvino.opset9 as o9
import openvino.opset13 as ops
from openvino.opset4.ops import range as range4

import irgrid
from irgrid.inference import infer_model
from oracles import named, rng, save_ov


def _i64(values) -> ov.Node:
    return ops.constant(np.array(values, np.int64))


def _flow_warp_model(height: int | None, width: int | None) -> ov.Model:
    image = ops.parameter(ov.PartialShape([1, 3, height or -1, width or -1]), np.float32, name="image")
    flow = ops.parameter(ov.PartialShape([1, 2, height or -1, width or -1]), np.float32, name="flow")
    shape = o3.shape_of(image)
    h = o8.gather(shape, _i64(2), _i64(0))
    w = o8.gather(shape, _i64(3), _i64(0))
    xs = range4(_i64(0), w, _i64(1), "i64")
    ys = range4(_i64(0), h, _i64(1), "i64")
    size = ops.concat([ops.unsqueeze(h, _i64([0])), ops.unsqueeze(w, _i64([0]))], 0)
    grid_x = o3.broadcast(ops.unsqueeze(xs, _i64([0])), size)  # meshgrid, indexing="ij"
    grid_y = o3.broadcast(ops.unsqueeze(ys, _i64([1])), size)
    base = ops.convert(ops.unsqueeze(ops.concat([ops.unsqueeze(grid_x, _i64([0])),
                                                 ops.unsqueeze(grid_y, _i64([0]))], 0), _i64([0])), "f32")
    coords = ops.add(base, flow)
    cx, cy = o1.split(coords, _i64(1), 2).outputs()
    one, two = ops.constant(np.float32(1)), ops.constant(np.float32(2))

    def normalise(c, extent):
        last = ops.subtract(ops.convert(extent, "f32"), one)
        return ops.subtract(ops.divide(ops.multiply(c, two), last), one)

    gx, gy = normalise(cx, w), normalise(cy, h)
    grid = ops.transpose(ops.concat([gx, gy], 1), _i64([0, 2, 3, 1]))
    warped = o9.grid_sample(image, grid, {"align_corners": True, "mode": "bilinear", "padding_mode": "zeros"})
    clamped = o1.clamp(warped, 0.0, 1.0)
    occluded = o1.logical_or(o1.greater(ops.abs(gx), one), o1.greater(ops.abs(gy), one))
    out = named(o1.select(occluded, ops.constant(np.float32(0)), clamped), "warped")
    mask = named(ops.convert(occluded, "f32"), "occluded")
    return ov.Model([ops.result(out), ops.result(mask)], [image, flow], "flow_warp")


def _inputs(height: int, width: int, seed: int) -> list[np.ndarray]:
    image = rng(seed).uniform(-0.2, 1.2, size=(1, 3, height, width)).astype(np.float32)
    flow = (rng(seed + 1).normal(size=(1, 2, height, width)) * 3).astype(np.float32)
    return [image, flow]


def _check_against_openvino(path, compiled, inputs, ov_run) -> None:
    expected = ov_run(str(path), inputs)
    got = list(compiled({"image": inputs[0], "flow": inputs[1]}).values())
    assert [g.shape for g in got] == [e.shape for e in expected]
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-5)
    np.testing.assert_array_equal(got[1], expected[1])
    assert 0 < expected[1].mean() < 1  # the flow pushes some points out of frame, not all


def test_static_flow_warp_folds_the_grid_arithmetic(tmp_path, ov_run):
    """With static sizes the whole base grid (ShapeOf -> Gather -> Range -> Broadcast -> Concat) folds
    to constants at compile time; only the flow-dependent part runs."""
    model = _flow_warp_model(12, 16)
    path = save_ov(model, tmp_path)
    ir = irgrid.read_model(path)
    assert irgrid.check_model(ir) == []
    infos = infer_model(ir)
    folded = {layer.type for layer in ir.layers.values() if infos[(layer.id, 0)].value is not None}
    assert {"Range", "Broadcast", "Concat", "Convert"} <= folded
    compiled = irgrid.compile_model(ir)
    _check_against_openvino(path, compiled, _inputs(12, 16, 1), ov_run)


def test_dynamic_flow_warp(tmp_path, ov_run):
    """Height and width dynamic: check_model is clean, and one compiled model runs two sizes."""
    path = save_ov(_flow_warp_model(None, None), tmp_path)
    assert irgrid.check_model(path) == []
    assert irgrid.check_model(path, shapes={"image": (1, 3, 9, 11), "flow": (1, 2, 9, 11)}) == []
    compiled = irgrid.compile_model(path)
    for height, width, seed in [(9, 11, 2), (20, 7, 3)]:
        _check_against_openvino(path, compiled, _inputs(height, width, seed), ov_run)

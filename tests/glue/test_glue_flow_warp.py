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
import pytest
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


def test_dynamic_flow_warp_specialises_per_input_shape(tmp_path, ov_run, monkeypatch):
    """From the second call with one set of input shapes a dynamic model runs a plan compiled for
    them, where the grid arithmetic folds (fewer steps); the results are those of the dynamic plan,
    bit for bit, and agree with OpenVINO. Least recently used plans are dropped, and once as many have
    been dropped as are kept, no more are compiled (more shapes in turn than plans would otherwise
    compile one on nearly every call): the shapes without a plan run the dynamic plan."""
    from irgrid.runtime import compiled as compiled_module

    monkeypatch.setattr(compiled_module, "SPECIALIZED_PLANS", 2)
    path = save_ov(_flow_warp_model(None, None), tmp_path)
    model = irgrid.compile_model(path)

    def shapes_of(height, width):
        return (1, 3, height, width), (1, 2, height, width)

    for height, width in [(9, 11), (20, 7), (5, 6), (9, 11)]:  # the last one's plan was dropped: compiled again
        inputs = _inputs(height, width, height)
        assert shapes_of(height, width) not in model._plans  # new, or dropped: the first call runs the dynamic plan
        first = [a.copy() for a in model(inputs).values()]
        second = model(inputs)  # from here on, a plan for these shapes
        plan = model._plans[shapes_of(height, width)]
        assert len(plan._steps) < len(model._steps)
        for a, b in zip(first, second.values()):
            assert np.array_equal(a, b)
        _check_against_openvino(path, model, inputs, ov_run)
    assert list(model._plans) == [shapes_of(5, 6), shapes_of(9, 11)] and model._dropped == 2
    plans = dict(model._plans)
    for _ in range(3):  # (20, 7) again: no more plans compiled, the dynamic plan runs it
        _check_against_openvino(path, model, _inputs(20, 7, 20), ov_run)
    assert model._plans == plans
    profiled, timings = model.infer_profiled(_inputs(5, 6, 5))
    assert len(timings) == len(model._plans[shapes_of(5, 6)]._steps)


def test_plan_of_a_dynamic_model_is_the_one_its_inputs_run(tmp_path):
    """`--plan` and `describe(inputs=...)` of a model with dynamic input dims show the plan specialised
    to the inputs' shapes, the one that runs them (its dims, buffers and peak memory), not the generic
    plan with `?` dims (issue 41: "Peak memory 0.88 MiB" for 20 MB of inputs)."""
    from oracles import run_cli

    path = save_ov(_flow_warp_model(None, None), tmp_path)
    model = irgrid.compile_model(path)
    generic = model.describe(structured=True)
    inputs = dict(zip(("image", "flow"), _inputs(40, 60, 1)))
    specialised = model.describe(structured=True, inputs=inputs)
    assert specialised == irgrid.compile_model(path, shapes={"image": (1, 3, 40, 60), "flow": (1, 2, 40, 60)}
                                               ).describe(structured=True)
    assert specialised["steps"] < generic["steps"]
    assert specialised["peak_bytes"] >= sum(a.nbytes for a in inputs.values())
    np.savez(tmp_path / "inputs.npz", **inputs)
    proc = run_cli("infer", path, "-d", "irgrid", "-niter", 1, "--plan", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[1,3,40,60]" in proc.stdout and "?" not in proc.stdout.split("Inputs:")[1]


def _torch_modules():
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional

    class FlowWarp(torch.nn.Module):
        """The flow warp of this module's docstring, as PyTorch code."""

        def forward(self, image, flow):
            n, _, h, w = image.shape
            ys, xs = torch.meshgrid(torch.arange(h, dtype=image.dtype), torch.arange(w, dtype=image.dtype),
                                    indexing="ij")
            coords = torch.stack([xs, ys])[None].expand(n, -1, -1, -1) + flow
            gx = 2 * coords[:, 0] / (w - 1) - 1  # w and h trace as ShapeOf values, not constants
            gy = 2 * coords[:, 1] / (h - 1) - 1
            warped = functional.grid_sample(image, torch.stack([gx, gy], dim=-1), align_corners=True).clamp(0, 1)
            occluded = (gx.abs() > 1) | (gy.abs() > 1)
            return torch.where(occluded[:, None], torch.zeros_like(warped), warped), occluded.float().mean(dim=(1, 2))

    class SpatialTransformer(torch.nn.Module):
        """A spatial transformer whose affine grid is built by hand (base grid @ theta^T)."""

        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3 * 8 * 8, 6)

        def forward(self, x):
            n, _, h, w = x.shape
            theta = torch.tanh(self.fc(x.flatten(1))).view(-1, 2, 3)
            ys = (torch.arange(h, dtype=x.dtype) * 2 + 1) / h - 1
            xs = (torch.arange(w, dtype=x.dtype) * 2 + 1) / w - 1
            gy, gx = torch.meshgrid(ys, xs, indexing="ij")
            base = torch.stack([gx, gy, torch.ones_like(gx)], dim=-1).reshape(1, h * w, 3)
            grid = torch.matmul(base, theta.transpose(1, 2)).reshape(n, h, w, 2)
            a, b = functional.grid_sample(x, grid, align_corners=False).split([1, 2], dim=1)
            return torch.sigmoid(a) * b.softmax(dim=1).max(dim=1, keepdim=True).values

    class RaftWarp(torch.nn.Module):
        """RAFT's coords_grid + bilinear_sampler with its in-frame mask (`&` of four comparisons)."""

        def forward(self, img, flow):
            n, _, h, w = img.shape
            ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            coords = torch.stack([xs, ys], dim=0).float()[None].repeat(n, 1, 1, 1)
            xgrid, ygrid = (coords + flow).permute(0, 2, 3, 1).split([1, 1], dim=-1)
            xgrid = 2 * xgrid / (w - 1) - 1
            ygrid = 2 * ygrid / (h - 1) - 1
            out = functional.grid_sample(img, torch.cat([xgrid, ygrid], dim=-1), align_corners=True)
            return out, ((xgrid > -1) & (ygrid > -1) & (xgrid < 1) & (ygrid < 1)).float()

    class WrappedWarp(torch.nn.Module):
        """linspace grid, flow in pixels, wrap-around with %, a confidence weight, an integer max."""

        def forward(self, img, flow):
            n, _, h, w = img.shape
            xs = torch.linspace(-1, 1, w).view(1, 1, w).expand(n, h, w)
            ys = torch.linspace(-1, 1, h).view(1, h, 1).expand(n, h, w)
            grid = torch.stack([xs + flow[:, 0] / w * 2, ys + flow[:, 1] / h * 2], -1)
            grid = torch.remainder(grid + 1, 2) - 1
            out = functional.grid_sample(img, grid, padding_mode="border", align_corners=False)
            weight = torch.exp(-flow.pow(2).sum(1, keepdim=True)).sqrt()
            return out * weight, torch.floor(grid * 4).long().max()

    torch.manual_seed(0)
    warp_shapes = [[(1, 3, 12, 16), (1, 2, 12, 16)], [(2, 3, 7, 9), (2, 2, 7, 9)]]
    warp_dims = [[-1, 3, -1, -1], [-1, 2, -1, -1]]
    # (name, module, input shapes for tracing and then for a second run, dynamic input shapes)
    return torch, [("flow_warp", FlowWarp(), warp_shapes, warp_dims),
                   ("stn", SpatialTransformer(), [[(2, 3, 8, 8)], [(5, 3, 8, 8)]], [[-1, 3, 8, 8]]),
                   ("raft", RaftWarp(), warp_shapes, warp_dims),
                   ("wrapped", WrappedWarp(), warp_shapes, warp_dims)]


@pytest.mark.parametrize("which", [0, 1, 2, 3], ids=["flow_warp", "spatial_transformer", "raft", "wrapped"])
def test_pytorch_modules_converted_by_openvino(which, tmp_path, ov_run):
    """The IRs OpenVINO's PyTorch frontend makes of real warping modules (it emits Range-4, Broadcast-3,
    BitwiseOr/And-13 for `|`/`&`, Tile, FloorMod for %, MatMul, VariadicSplit, SoftMax-8, ...), with dynamic
    dims: irgrid checks them clean and agrees with OpenVINO (1e-5) and with torch itself (1e-5), at the
    traced size and another."""
    torch, modules = _torch_modules()
    name, module, shape_sets, dynamic = modules[which]
    samples = [[torch.rand(*s) * (3 if i else 1) for i, s in enumerate(shapes)] for shapes in shape_sets]
    model = ov.convert_model(module.eval(), example_input=tuple(samples[0]),
                             input=[ov.PartialShape(d) for d in dynamic])
    path = save_ov(model, tmp_path, name)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    for inputs in samples:
        feeds = [t.numpy() for t in inputs]
        got = list(compiled(feeds).values())
        with torch.no_grad():
            reference = module(*inputs)
        reference = reference if isinstance(reference, tuple) else (reference,)
        for g, e, r in zip(got, ov_run(str(path), feeds), reference):
            np.testing.assert_allclose(g, e, rtol=0, atol=1e-5)
            np.testing.assert_allclose(g, r.numpy(), rtol=0, atol=1e-5)

"""Boolean-mask assignment (`x[x < t] = v` as torch's dynamo exporter writes it: NonZero -> Transpose ->
ScatterNDUpdate with a broadcast scalar) run as a masked fill (irgrid/runtime/mask_assignment.py).

Oracles: OpenVINO's CPU plugin on the same IR (bitwise: the layers only compare and move values), the
unrewritten plan (`fuse=False`, bitwise), and torch on the real dynamo export of PWC-Net's warp (1e-5,
as the other GridSample blocks)."""
from __future__ import annotations


import numpy as np
import openvino as ov
import openvino.opset3 as o3
import openvino.opset13 as ops
import pytest

import irgrid
from oracles import named, rng, save_ov


def _assignment(dtype, count_from: str, rows: bool = False, returned_non_zero: bool = False) -> ov.Model:
    """x[x < 0.5] = 7 (x of 2x3x4x5); the updates' length from the count of True (`sum`, as the dynamo
    exporter) or from the indices' shape (`shape`); `rows`: x[x.max((2, 3)) < 0.5] = 7 instead, whose
    indices name (4, 5) slices."""
    x = ops.parameter([2, 3, 4, 5], dtype, name="x")
    compared = ops.reduce_max(x, ops.constant([2, 3]), False) if rows else x
    cond = ops.less(compared, ops.constant(np.array(0.5, dtype)))
    non_zero = o3.non_zero(cond, "i64")
    indices = ops.transpose(non_zero, ops.constant(np.array([1, 0], np.int64)))
    if count_from == "sum":
        count = ops.reduce_sum(ops.convert(ops.reshape(cond, ops.constant([-1]), False), "i64"),
                               ops.constant([0]), True)
    else:
        count = ops.gather(ops.shape_of(indices), ops.constant([0]), ops.constant(0))
    if rows:
        count = ops.concat([count, ops.constant(np.array([4, 5], np.int64))], 0)
    y = ops.scatter_nd_update(x, indices, ops.broadcast(ops.constant(np.array(7, dtype)), count))
    results = [ops.result(named(y, "y"))] + ([ops.result(named(non_zero, "where"))] if returned_non_zero else [])
    return ov.Model(results, [x], "mask")


def _x(dtype) -> np.ndarray:
    x = rng(3).uniform(-1, 2, (2, 3, 4, 5)).astype(dtype)
    if x.dtype.kind == "f":
        x.reshape(-1)[:4] = [np.nan, -0.0, np.inf, -np.inf]
    return x


def _plan_rows(compiled) -> dict[str, dict]:
    return {row["type"]: row for row in compiled.describe(structured=True)["layers"]}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
@pytest.mark.parametrize("count_from", ["sum", "shape"])
def test_mask_assignment_runs_as_a_fill(tmp_path, ov_run, dtype, count_from):
    path = save_ov(_assignment(dtype, count_from), tmp_path)
    compiled, unfused = irgrid.compile_model(path), irgrid.compile_model(path, fuse=False)
    rows = _plan_rows(compiled)
    assert rows["NonZero"]["status"] == "fused" and rows["Transpose"]["status"] == "fused"
    assert rows["NonZero"]["into"] == [rows["ScatterNDUpdate"]["name"]]
    assert _plan_rows(unfused)["NonZero"]["status"] == "step"
    x = _x(dtype)
    got = compiled({"x": x})["y"]
    assert got.tobytes() == unfused({"x": x})["y"].tobytes()
    if dtype != np.float64:  # the CPU plugin computes f64 in f32
        assert got.tobytes() == ov_run(str(path), [x])[0].tobytes()


@pytest.mark.parametrize("case", ["slice", "returned"])
def test_what_is_not_a_mask_assignment_runs_as_written(tmp_path, ov_run, case):
    """Indices of a smaller tensor address slices, not elements: the scatter runs as written. A NonZero
    the caller also receives keeps running, while the scatter is still a fill."""
    model = _assignment(np.float32, "shape", rows=case == "slice", returned_non_zero=case == "returned")
    path = save_ov(model, tmp_path)
    compiled = irgrid.compile_model(path)
    rows = _plan_rows(compiled)
    assert rows["NonZero"]["status"] == "step"
    assert ("fused" in rows["ScatterNDUpdate"]) == (case == "returned")
    x = _x(np.float32)
    for got, want in zip(compiled({"x": x}).values(), ov_run(str(path), [x])):
        assert got.tobytes() == want.tobytes()


def test_the_dynamo_export_of_pwc_nets_warp(glue_export):
    """PWC-Net's backward warp with its occlusion mask (`mask[mask < 0.9999] = 0; mask[mask > 0] = 1`;
    benchmarks/glue_blocks.py), exported by torch's dynamo exporter and `irgrid convert`: both mask
    assignments become fills, and the results are torch's within 1e-5, and the unrewritten plan's (whose
    warp is not fused either: tests/runtime/test_displacement.py) within 1e-5."""
    torch = pytest.importorskip("torch")
    module, (x, flo), xml = glue_export("pwc", "dyn")
    compiled, unfused = irgrid.compile_model(xml), irgrid.compile_model(xml, fuse=False)
    feeds = [x.numpy(), flo.numpy()]
    (got,) = compiled(feeds).values()  # (the second call runs the plan specialised to these shapes)
    (got,) = compiled(feeds).values()
    layers = compiled.describe(structured=True, inputs=feeds)["layers"]
    assert sum(row["type"] == "NonZero" and row["status"] == "fused" for row in layers) == 2
    assert not any(row["type"] == "NonZero" and row["status"] == "step" for row in layers)
    np.testing.assert_allclose(got, next(iter(unfused(feeds).values())), rtol=0, atol=1e-5)
    with torch.no_grad():
        np.testing.assert_allclose(got, module(x, flo).numpy(), rtol=0, atol=1e-5)


def test_openvino_device_runs_mask_assignments_as_select(tmp_path, ov_run):
    """The OpenVINO device puts Select(cond, value, data) in place of each mask assignment irgrid finds
    (irgrid/openvino/runner.py): no NonZero left in what the plugin runs, its own values bit for bit."""
    from irgrid.devices import open_model

    path = save_ov(_assignment(np.float32, "sum"), tmp_path)
    runner, _ = open_model(path, "openvino")
    assert "1 boolean-mask assignment run as Select" in runner.extension
    ran = {op.get_rt_info()["layerType"].astype(str) for op in runner._compiled.get_runtime_model().get_ops()}
    assert "NonZero" not in ran and not any("Scatter" in kind for kind in ran), ran  # Select, maybe in a Subgraph
    x = _x(np.float32)
    assert runner({"x": x})["y"].tobytes() == ov_run(str(path), [x])[0].tobytes()

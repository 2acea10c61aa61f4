"""AffineGrid fused into GridSample (irgrid/runtime/fusion.py) and the plan `describe()` shows.

Numeric oracle: onnxruntime running the same pair as ONNX AffineGrid-20 -> GridSample-20 (2-D every
mode; 3-D linear and nearest, onnxruntime has no 3-D cubic), f64 rtol 1e-9 / atol 1e-12 and f32
rtol 1e-5 / atol 1e-5 (the tolerances of the GridSample oracle tests; data standard normal).
Fused against unfused (`compile_model(..., fuse=False)`): bitwise identical, f32 and f64, because
both compute each coordinate with the same helper (kernels/cython/affine.pxd) and then the same taps.
Output sizes avoid size-1 dims under align_corners=1, where onnxruntime's AffineGrid differs from
irgrid's defined 0 (tests/ops/test_affine_grid.py covers that rule).
"""
from __future__ import annotations

import subprocess
import sys
import zlib

import numpy as np
import pytest

import irgrid
from irgrid.errors import ShapeError
from oracles import SAMPLES, build_pair, random_theta, run_ort_pair

MODES = ("nearest", "linear", "cubic")
PADDINGS = ("zeros", "border", "reflection")
TOL = {"f64": {"rtol": 1e-9, "atol": 1e-12}, "f32": {"rtol": 1e-5, "atol": 1e-5}}
NP = {"f32": np.float32, "f64": np.float64}


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


@pytest.mark.parametrize("element_type", ["f32", "f64"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("rank", [2, 3])
def test_fused_equals_unfused_and_onnxruntime(rank, mode, padding, element_type, tmp_path):
    rng = _rng("fusion", rank, mode, padding, element_type)
    for trial in range(4):
        n = int(rng.integers(1, 4))
        dims = tuple(int(d) for d in rng.integers(1 if trial else 2, 9, rank))
        out_dims = tuple(int(d) for d in rng.integers(2, 8, rank))
        x_shape = (n, int(rng.integers(1, 4)), *dims)
        size = [n, x_shape[1], *out_dims]
        align, grid_align = bool(trial & 1), bool(trial & 2)
        version = "opset9" if rank == 2 and trial % 2 else "irgrid1"
        path = build_pair(tmp_path / f"st{trial}.xml", x_shape, size, element_type, mode, padding, align, grid_align,
                          version, size_input=trial == 3)
        x = rng.standard_normal(x_shape).astype(NP[element_type])
        theta = random_theta(rng, n, rank, NP[element_type])
        feed = {"X": x, "theta": theta, **({"size": np.array(size, np.int64)} if trial == 3 else {})}
        fused = irgrid.compile_model(path, fuse=True)
        unfused = irgrid.compile_model(path, fuse=False)
        assert fused.describe(structured=True)["steps"] == 1 and unfused.describe(structured=True)["steps"] == 2
        out = fused(feed)["warped"]
        assert out.shape == (n, x_shape[1], *out_dims) and out.dtype == NP[element_type]
        assert out.tobytes() == unfused(feed)["warped"].tobytes(), f"trial {trial}"
        if rank == 2 or mode != "cubic":
            expected = run_ort_pair(x, theta, size, mode, padding, align, grid_align)
            np.testing.assert_allclose(out, expected, **TOL[element_type], err_msg=f"trial {trial}")


@pytest.mark.parametrize("element_type", ["f32", "f64"])
@pytest.mark.parametrize("out_dims", [(130, 131), (27, 26, 25)])
def test_fused_equals_unfused_across_row_chunks(out_dims, element_type, tmp_path):
    """Lattices of more than one AffineGrid work chunk (16384 points), split mid-row: the row-wise
    AffineGrid kernel and the fused kernel's per-point coordinates still agree bitwise."""
    rng = _rng("fusion-chunks", len(out_dims), element_type)
    rank = len(out_dims)
    x_shape = (2, 2, *(7,) * rank)
    size = [2, 2, *out_dims]
    for align in (False, True):
        path = build_pair(tmp_path / f"chunks{align}.xml", x_shape, size, element_type, "linear", "border",
                          align, align)
        x = rng.standard_normal(x_shape).astype(NP[element_type])
        theta = random_theta(rng, 2, rank, NP[element_type])
        fused = irgrid.compile_model(path, fuse=True)({"X": x, "theta": theta})["warped"]
        unfused = irgrid.compile_model(path, fuse=False)({"X": x, "theta": theta})["warped"]
        assert fused.tobytes() == unfused.tobytes()
        np.testing.assert_allclose(fused, run_ort_pair(x, theta, size, "linear", "border", align, align),
                                   **TOL[element_type])


@pytest.mark.parametrize("padding", ["zeros", "border"])
def test_fused_small_one_channel_items_run_as_one(padding, tmp_path):
    """A batch of one-channel 2-D bilinear items of under 256 points (RAFT's lookup windows export as a
    fused AffineGrid) runs as one run of points across the items (kernels/core/grid_sample.c,
    IRGRID_GS_ITEMS, coordinates computed item by item): bitwise the unfused pair and each item fused
    alone, at 1 and 2 threads; onnxruntime within the f32 tolerances."""
    rng = _rng("fusion-items", padding)
    n, out_dims = 37, (9, 9)
    for align in (False, True):
        x = rng.standard_normal((n, 1, 11, 13)).astype(np.float32)
        theta = random_theta(rng, n, 2, np.float32)
        path = build_pair(tmp_path / f"items{align}.xml", x.shape, [n, 1, *out_dims], "f32", "linear", padding, align,
                          align)
        one = build_pair(tmp_path / f"item{align}.xml", (1, 1, 11, 13), [1, 1, *out_dims], "f32", "linear", padding,
                         align, align)
        alone = irgrid.compile_model(one)
        each = np.concatenate([alone({"X": x[b:b + 1], "theta": theta[b:b + 1]})["warped"] for b in range(n)])
        unfused = irgrid.compile_model(path, fuse=False)({"X": x, "theta": theta})["warped"]
        for threads in (1, 2):
            fused = irgrid.compile_model(path, threads=threads)({"X": x, "theta": theta})["warped"]
            assert fused.tobytes() == each.tobytes() == unfused.tobytes()
        np.testing.assert_allclose(fused, run_ort_pair(x, theta, [n, 1, *out_dims], "linear", padding, align, align),
                                   **TOL["f32"])


def test_fused_threads_bitwise_identical(tmp_path):
    rng = _rng("fusion-threads")
    x_shape, size = (2, 3, 40, 50), [2, 3, 61, 67]  # many 1024-point blocks per batch item
    path = build_pair(tmp_path / "st.xml", x_shape, size, "f64", mode="cubic", padding="border")
    x = rng.standard_normal(x_shape)
    theta = random_theta(rng, 2, 2, np.float64)
    one = irgrid.compile_model(path, threads=1)({"X": x, "theta": theta})["warped"]
    two = irgrid.compile_model(path, threads=2)({"X": x, "theta": theta})["warped"]
    assert one.tobytes() == two.tobytes()
    np.testing.assert_allclose(two, run_ort_pair(x, theta, size, "cubic", "border", False, False), **TOL["f64"])


def _rows(compiled) -> dict[str, dict]:
    return {row["name"]: row for row in compiled.describe(structured=True)["layers"]}


def test_describe_fused_and_unfused(tmp_path):
    x_shape, size = (2, 3, 16, 20), [2, 3, 12, 10]
    path = build_pair(tmp_path / "st.xml", x_shape, size)
    grid_bytes = 2 * 12 * 10 * 2 * 4
    fused, unfused = irgrid.compile_model(path), irgrid.compile_model(path, fuse=False)

    plan = fused.describe(structured=True)
    assert [r["name"] for r in plan["layers"]][:5] == ["X", "theta", "size", "grid", "warped"]
    rows = _rows(fused)
    assert rows["X"]["status"] == "input" and rows["size"]["status"] == "constant"
    assert rows["grid"]["status"] == "fused" and rows["grid"]["into"] == ["warped"]
    assert rows["warped"] | {"outputs": None} == {
        "id": rows["warped"]["id"], "name": "warped", "type": "GridSample", "version": "irgrid1", "status": "step",
        "step": 1, "kernel": "sampling.SamplePlan", "fused": ["grid"], "fused_type": "AffineGrid", "outputs": None}
    assert rows["warped"]["outputs"] == [{"shape": [2, 3, 12, 10], "element_type": "f32", "dtype": "float32",
                                          "buffer": "fresh", "bytes": 2 * 3 * 12 * 10 * 4}]
    text = fused.describe()
    assert 'grid (AffineGrid irgrid1)' in text and 'fused into "warped"' in text
    assert 'sampling.SamplePlan with AffineGrid "grid" fused in' in text and "fusion on" in text

    rows_u = _rows(unfused)
    assert rows_u["grid"]["status"] == "step" and rows_u["grid"]["kernel"] == "affine_grid_kernel.affine_grid"
    assert rows_u["grid"]["outputs"][0]["buffer"] == "preallocated"
    assert rows_u["warped"]["kernel"] == "sampling.SamplePlan" and "fused" not in rows_u["warped"]
    assert "fusion off" in unfused.describe()
    # Peak: inputs + size + output, plus the grid buffer when unfused (theta is still live at the peak).
    inputs = (2 * 3 * 16 * 20 + 2 * 2 * 3) * 4 + 4 * 8
    assert plan["peak_bytes"] == inputs + 2 * 3 * 12 * 10 * 4 and plan["peak_exact"]
    assert unfused.describe(structured=True)["peak_bytes"] == plan["peak_bytes"] + grid_bytes - 2 * 2 * 3 * 4


def test_not_fused_where_it_would_change_results(tmp_path):
    """A grid that is also a model output, or an f16 theta, keeps the AffineGrid as its own step."""
    x_shape, size = (1, 2, 8, 8), [1, 2, 5, 6]
    rng = _rng("declined")
    x = rng.standard_normal(x_shape).astype(np.float32)
    theta = random_theta(rng, 1, 2, np.float32)

    path = build_pair(tmp_path / "out.xml", x_shape, size, grid_output=True)
    compiled = irgrid.compile_model(path)
    rows = _rows(compiled)
    assert rows["grid"]["status"] == "step" and rows["grid"]["not_fused"] == "its grid is a model output"
    outputs = compiled({"X": x, "theta": theta})
    expected_grid = run_ort_pair(x, theta, size, "linear", "zeros", False, False)
    np.testing.assert_allclose(outputs["warped"], expected_grid, **TOL["f32"])

    path = build_pair(tmp_path / "f16.xml", x_shape, size, theta_type="f16")
    rows = _rows(irgrid.compile_model(path))
    assert rows["grid"]["status"] == "step" and "theta is f16" in rows["grid"]["not_fused"]
    assert "not fused: theta is f16" in irgrid.compile_model(path).describe()


def test_one_grid_fused_into_two_samplers(tmp_path):
    x_shape, size = (2, 2, 9, 7), [2, 2, 6, 5]
    path = build_pair(tmp_path / "two.xml", x_shape, size, consumers=2)
    compiled = irgrid.compile_model(path)
    rows = _rows(compiled)
    assert rows["grid"]["into"] == ["warped", "warped1"]
    rng = _rng("two")
    x, theta = rng.standard_normal(x_shape).astype(np.float32), random_theta(rng, 2, 2, np.float32)
    outputs = compiled({"X": x, "theta": theta})
    expected = run_ort_pair(x, theta, size, "linear", "zeros", False, False)
    for name in ("warped", "warped1"):
        np.testing.assert_allclose(outputs[name], expected, **TOL["f32"])


def test_fused_errors_are_located_at_their_layer(tmp_path):
    """A run-time size the AffineGrid refuses is reported at the AffineGrid, not the GridSample."""
    path = build_pair(tmp_path / "st.xml", (1, 2, 8, 8), [1, 2, 5, 6], size_input=True)
    compiled = irgrid.compile_model(path)
    x, theta = np.zeros((1, 2, 8, 8), np.float32), np.zeros((1, 2, 3), np.float32)
    with pytest.raises(ShapeError, match=r'AffineGrid layer "grid" \(id 3\), port 1: size \[1, 2, -5, 6\] must be'):
        compiled({"X": x, "theta": theta, "size": np.array([1, 2, -5, 6])})
    with pytest.raises(ShapeError, match=r'AffineGrid layer "grid" \(id 3\), port 1: theta\'s batch and size'):
        compiled({"X": x, "theta": theta, "size": np.array([2, 2, 5, 6])})


def test_cli_plan(tmp_path):
    path = build_pair(tmp_path / "st.xml", (1, 2, 8, 8), [1, 2, 5, 6])
    proc = subprocess.run([sys.executable, "-m", "irgrid", "infer", str(path), "--plan", "-niter", "1"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert 'fused into "warped"' in proc.stdout and "Peak memory:" in proc.stdout and "Latency" in proc.stdout


def test_spatial_transformer_sample_inside_openvino():
    """The bundled sample (MatMul localisation net -> AffineGrid irgrid1 -> GridSample opset9) read by
    OpenVINO with irgrid's extension, against irgrid's fused runtime: f32 tolerance."""
    import openvino as ov
    import irgrid.openvino

    sample = SAMPLES / "spatial_transformer"
    with np.load(sample / "inputs.npz") as f:
        inputs = {k: f[k] for k in f.files}
    core = ov.Core()
    core.add_extension(irgrid.openvino.extensions())
    compiled = core.compile_model(core.read_model(str(sample / "model.xml")), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    ours = irgrid.compile_model(sample / "model.xml")
    assert _rows(ours)["grid"]["status"] == "fused"
    np.testing.assert_allclose(ours(inputs)["warped"], compiled(inputs)[0], **TOL["f32"])

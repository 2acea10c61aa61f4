"""GridSample against independent implementations, on seeded random configurations.

Oracles (none of them is irgrid):
- onnxruntime: GridSample-20 ONNX models built with onnx.helper; 2-D for every mode x padding x
  align_corners, 3-D for linear and nearest (onnxruntime has no 3-D cubic);
- OpenVINO: GridSample-9 models built with `openvino.opset9.grid_sample`, saved as IR with `save_ov`
  and read by irgrid; compared with OpenVINO's own run of the same model (f32 inference hint);
- onnx.reference.ReferenceEvaluator: 1-D, 3-D cubic and 4-D (rank-6 data), which nothing else runs.
  Not for cubic + border (onnx.reference clamps the continuous coordinate there, which is wrong:
  docs/semantics.md). It also divides by zero for reflection + align_corners with a size-1 dim, so those
  configurations use dims >= 2 here (onnxruntime covers size-1 dims with reflection in 2-D and 3-D);
- OpenVINO's hard-coded GridSample reference vectors, ported below.

Grids: multiples of 2**-8 (2**-4 for the onnx.reference cubic cases) reaching well outside [-1, 1]
(|g| <= 3), plus points whose pixel coordinate is exactly k + 0.5 (half-pixel points: nearest ties
and pixel-edge cases). With dims <= 8 the denormalised coordinates are then exact in f32 and f64,
so every implementation samples exactly the same positions: onnx.reference denormalises in f32,
onnxruntime computes its reflection in f32, and onnx.reference computes cubic weights in f32 (exact
for coordinates on a 2**-5 grid, hence the coarser 2**-4 grid there).

Tolerances: f64 rtol 1e-9 with atol 1e-12 (the implementations differ only in summation order);
f32 rtol 1e-5 with atol 1e-5 (data are standard normal: values O(1)).
"""
from __future__ import annotations

import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import irgrid
from irgrid.builder import IRBuilder
from oracles import gridsample_onnx_model, run_onnx_reference, save_ov

MODES = ("nearest", "linear", "cubic")
PADDINGS = ("zeros", "border", "reflection")
OPSET9_MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}
TOL = {np.dtype(np.float64): {"rtol": 1e-9, "atol": 1e-12}, np.dtype(np.float32): {"rtol": 1e-5, "atol": 1e-5}}
ELEMENT_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16"}


def _rng(*key) -> np.random.Generator:
    """A generator seeded from the test's parameters, so each configuration is reproducible."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def half_pixel_values(length: int, align_corners: bool, step: int, reach: float = 3.0) -> list[float]:
    """Normalised coordinates, multiples of 1/step within +-reach, whose pixel coordinate is k + 0.5."""
    values = []
    for k in range(-4 * length - 4, 4 * length + 4):
        x = Fraction(2 * k + 1, 2)
        if align_corners:
            if length == 1:
                return []  # every coordinate maps to pixel 0
            g = 2 * x / (length - 1) - 1
        else:
            g = (2 * x + 1) / length - 1
        if abs(g) <= reach and (g * step).denominator == 1:
            values.append(float(g))
    return values


def dyadic_grid(rng, batch: int, out_dims: tuple, dims: tuple, align_corners: bool, dtype,
                step: int = 256, reach: float = 3.0, half_pixel_share: float = 0.3) -> np.ndarray:
    """Grid (batch, *out_dims, r) of multiples of 1/step in [-reach, reach], about `half_pixel_share`
    of each coordinate set to a half-pixel point. The last axis lists the innermost dim first."""
    r = len(dims)
    limit = int(reach * step)
    grid = rng.integers(-limit, limit + 1, size=(batch, *out_dims, r)) / step
    flat = grid.reshape(-1, r)
    for k in range(r):
        candidates = half_pixel_values(int(dims[r - 1 - k]), align_corners, step, reach)
        if candidates:
            chosen = rng.random(flat.shape[0]) < half_pixel_share
            flat[chosen, k] = rng.choice(candidates, int(chosen.sum()))
    flat[0] = -1.0  # the corners of the normalised square, exactly
    flat[-1] = 1.0
    return grid.astype(dtype)


def run_irgrid(tmp_path: Path, x: np.ndarray, grid: np.ndarray, attrs: dict, version: str = "irgrid1",
               threads: int | None = None, x_type: str | None = None, grid_type: str | None = None):
    b = IRBuilder("grid_sample")
    xv = b.parameter("X", x.shape, x_type or ELEMENT_TYPES[x.dtype])
    gv = b.parameter("grid", grid.shape, grid_type or ELEMENT_TYPES[grid.dtype])
    (y,) = b.layer("GridSample", version, [xv, gv], attrs, name="Y")
    b.result(y)
    path = b.save(tmp_path / f"gs_{len(list(tmp_path.iterdir()))}.xml")
    return irgrid.compile_model(path, threads=threads)({"X": x, "grid": grid})["Y"]


def run_ort(x, grid, mode, padding, align_corners):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    model = gridsample_onnx_model(x.dtype, mode, padding, align_corners, opset=20)
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x, "grid": grid})[0]


def assert_matches(out, expected, dtype, what=""):
    assert out.shape == expected.shape, what
    assert out.dtype == np.dtype(dtype), what
    np.testing.assert_allclose(out, expected, **TOL[np.dtype(dtype)], err_msg=what)


# --------------------------------------------------------------------------------------------
# onnxruntime, GridSample-20: 2-D (all modes) and 3-D (linear, nearest)

DIMS_2D = [(1, 1), (1, 4), (5, 1), (2, 3), (4, 8), (3, 5)]
DIMS_3D = [(1, 1, 1), (1, 2, 3), (2, 1, 4), (3, 4, 2), (4, 3, 5)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_2d_vs_onnxruntime(mode, padding, align_corners, dtype, tmp_path):
    rng = _rng("ort2d", mode, padding, align_corners, np.dtype(dtype).name)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": int(align_corners)}
    for dims in DIMS_2D:
        x = rng.standard_normal((2, 3, *dims)).astype(dtype)
        grid = dyadic_grid(rng, 2, (3, 5), dims, align_corners, dtype)
        out = run_irgrid(tmp_path, x, grid, attrs)
        assert_matches(out, run_ort(x, grid, mode, padding, align_corners), dtype, f"dims {dims}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_3d_vs_onnxruntime(mode, padding, align_corners, dtype, tmp_path):
    rng = _rng("ort3d", mode, padding, align_corners, np.dtype(dtype).name)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": int(align_corners)}
    for dims in DIMS_3D:
        x = rng.standard_normal((2, 2, *dims)).astype(dtype)
        grid = dyadic_grid(rng, 2, (2, 3, 2), dims, align_corners, dtype)
        out = run_irgrid(tmp_path, x, grid, attrs)
        assert_matches(out, run_ort(x, grid, mode, padding, align_corners), dtype, f"dims {dims}")


# --------------------------------------------------------------------------------------------
# OpenVINO GridSample-9 (opset9 IR written by OpenVINO itself)

@pytest.mark.parametrize("grid_dtype", [np.float32, np.float16], ids=["grid_f32", "grid_f16"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_opset9_vs_openvino(mode, padding, align_corners, grid_dtype, ov_run, tmp_path):
    import openvino as ov
    import openvino.opset9 as ops

    rng = _rng("ov9", mode, padding, align_corners, np.dtype(grid_dtype).name)
    for i, dims in enumerate(DIMS_2D):
        x = rng.standard_normal((2, 3, *dims)).astype(np.float32)
        grid = dyadic_grid(rng, 2, (4, 5), dims, align_corners, grid_dtype)
        data_p = ops.parameter(x.shape, np.float32, name="X")
        grid_p = ops.parameter(grid.shape, grid_dtype, name="grid")
        node = ops.grid_sample(data_p, grid_p, {"align_corners": align_corners, "mode": OPSET9_MODES[mode],
                                                "padding_mode": padding})
        model = ov.Model([node], [data_p, grid_p], "gs9")
        path = save_ov(model, tmp_path, f"gs9_{i}")
        assert 'version="opset9"' in path.read_text()

        assert irgrid.check_model(path) == []
        out = next(iter(irgrid.compile_model(path)({"X": x, "grid": grid}).values()))
        (expected,) = ov_run(model, [x, grid])
        assert_matches(out, expected, np.float32, f"dims {dims}")


@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("channels", [1, 8])  # the gather path; the interleaved 2-D cubic run
def test_opset9_bicubic_on_a_wide_image_vs_openvino(channels, align_corners, ov_run, tmp_path):
    """At 1500 pixels an f32 coordinate's ulp is 1.2e-4 pixels: every path rounds the exact coordinate
    once, as OpenVINO does, so the result does not depend on the channel count (the cubic runs
    computed it as the formula reads, in f32, 2.4e-4 from OpenVINO's). Random, not dyadic, coordinates."""
    import openvino as ov
    import openvino.opset9 as ops

    rng = _rng("ov9wide", channels, align_corners)
    x = rng.standard_normal((1, channels, 4, 1500)).astype(np.float32)
    grid = np.stack([rng.uniform(-1, 1, 256), rng.uniform(-0.5, 0.5, 256)], -1).reshape(1, 1, 256, 2)
    grid = grid.astype(np.float32)
    data_p = ops.parameter(x.shape, np.float32, name="X")
    grid_p = ops.parameter(grid.shape, np.float32, name="grid")
    node = ops.grid_sample(data_p, grid_p, {"align_corners": align_corners, "mode": "bicubic", "padding_mode": "zeros"})
    model = ov.Model([node], [data_p, grid_p], "gs9")
    out = next(iter(irgrid.compile_model(save_ov(model, tmp_path))({"X": x, "grid": grid}).values()))
    (expected,) = ov_run(model, [x, grid])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=4e-6)


# --------------------------------------------------------------------------------------------
# onnx.reference: 1-D, 3-D cubic, 4-D (rank-6 data)

def _reference_configs():
    configs = []
    for mode in MODES:
        for padding in PADDINGS:
            if mode == "cubic" and padding == "border":
                continue  # onnx.reference is wrong there (docs/semantics.md)
            for align_corners in (False, True):
                configs.append((1, mode, padding, align_corners))
                configs.append((4, mode, padding, align_corners))
                if mode == "cubic":
                    configs.append((3, mode, padding, align_corners))
    return configs


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("rank,mode,padding,align_corners", _reference_configs(),
                         ids=lambda v: str(v) if not isinstance(v, bool) else f"ac{int(v)}")
def test_vs_onnx_reference(rank, mode, padding, align_corners, dtype, tmp_path):
    rng = _rng("ref", rank, mode, padding, align_corners, np.dtype(dtype).name)
    smallest = 2 if (padding == "reflection" and align_corners) else 1  # onnx.reference: 0/0 on size 1
    if rank == 1:
        dim_sets = [(d,) for d in (1, 2, 3, 4, 5, 8) if d >= smallest]
        out_dims = (7,)
    elif rank == 3:
        dim_sets = [(1, 2, 3), (2, 1, 4), (3, 4, 2)] if smallest == 1 else [(2, 2, 3), (3, 4, 2)]
        out_dims = (2, 2, 2)
    else:
        dim_sets = [(1, 2, 3, 2), (2, 3, 1, 2)] if smallest == 1 else [(2, 3, 2, 2)]
        out_dims = (2, 1, 2, 2)
    step = 16 if mode == "cubic" else 256
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": int(align_corners)}
    for dims in dim_sets:
        x = rng.standard_normal((2, 2, *dims)).astype(dtype)
        grid = dyadic_grid(rng, 2, out_dims, dims, align_corners, dtype, step=step)
        out = run_irgrid(tmp_path, x, grid, attrs)
        expected = run_onnx_reference(x, grid, mode, padding, align_corners)
        assert_matches(out, expected, dtype, f"dims {dims}")


# --------------------------------------------------------------------------------------------
# 1 and 2 threads give bitwise-identical outputs (and agree with onnxruntime)

@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("mode", MODES)
def test_threads_bitwise_identical(mode, rank, tmp_path):
    rng = _rng("threads", mode, rank)
    if rank == 2:
        dims, out_dims = (37, 41), (48, 50)  # 2 x 2400 points: many 256-point chunks
    else:
        dims, out_dims = (6, 9, 11), (12, 14, 15)
    x = rng.standard_normal((2, 4, *dims)).astype(np.float32)
    grid = dyadic_grid(rng, 2, out_dims, dims, False, np.float32, reach=1.5)
    attrs = {"mode": mode, "padding_mode": "reflection", "align_corners": 0}
    one = run_irgrid(tmp_path, x, grid, attrs, threads=1)
    two = run_irgrid(tmp_path, x, grid, attrs, threads=2)
    assert one.shape == two.shape == (2, 4, *out_dims)
    assert one.tobytes() == two.tobytes()
    if rank == 2 or mode != "cubic":
        assert_matches(two, run_ort(x, grid, mode, "reflection", False), np.float32)
    else:
        # onnx.reference is too slow here: check a slice against it
        expected = run_onnx_reference(x[:1, :1], grid[:1, :2, :2, :3], mode, "reflection", False)
        np.testing.assert_allclose(two[:1, :1, :2, :2, :3], expected, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------------------------
# OpenVINO's own reference vectors, ported from
# openvinotoolkit/openvino: src/plugins/template/tests/functional/op_reference/grid_sample.cpp
# (commit 0d1b53608ca63220e5a18d54f9c0518a01869a3e). Every vector used by that file's
# `generateGridSampleParams` is here (the unused `generateNearestParamsOddDimensionsOuterGrids` is
# not). Type combinations are those of the C++ file: (data, grid) in f32/f32, f32/f16, f16/f32;
# bicubic data in f32, f64, f16 with an f32 grid; the 1x1 corner cases with f32, bf16 and f16 grids.

_DATA_3x5 = np.arange(1, 16, dtype=np.float64).reshape(1, 1, 3, 5)
_DATA_4x6 = np.arange(1, 25, dtype=np.float64).reshape(1, 1, 4, 6)
_GRID_INNER_3x4 = np.array([-0.1, -0.1, -0.1, 0.1, 0.1, -0.1, 0.1, 0.1, -0.5, -0.5, -0.5, 0.5,
                            0.5, -0.5, 0.5, 0.5, -1., -1., -1., 1., 1., -1., 1., 1.]).reshape(1, 3, 4, 2)
_GRID_OUTER_7 = np.array([-10.1, -9.7, -7.55, 0.37, -77., 11.56, 0.5, 2.55, 1.7, 1.1, 3., -0.17,
                          1.301, -1.001]).reshape(1, 1, 7, 2)
_GRID_EVEN_8 = np.array([-0.5, -0.5, -0.5, 0.5, 0.5, -0.5, 0.5, 0.5, -1, 1, 1, -1, -0.1, -0.1, 0.1,
                         0.1]).reshape(1, 1, 8, 2)
_DATA_BICUBIC = np.array([1, 1, 1, 1, 1, 1, 1,
                          1, 2, 2, 2, 2, 2, 1,
                          1, 2, 3, 5, 3, 2, 1,
                          1, 2, 5, 9, 5, 2, 1], dtype=np.float64).reshape(1, 1, 4, 7)
_GRID_BICUBIC = np.array([-0.1, -0.1, -0.1, 0.1, 0.1, -0.1, 0.1, 0.1,
                          -0.5, -0.5, -0.5, 0.5, 0.5, -0.5, 0.5, 0.5,
                          -0.9, -0.9, -0.9, 0.9, 0.9, -0.9, 0.9, 0.9,
                          -1.75, 0.7, 1.33, -1.11, 0.965, 1.007, 21, 37])
_DATA_BATCHES = np.arange(1, 49, dtype=np.float64).reshape(2, 2, 4, 3)
_DATA_1x1 = np.array([7.0]).reshape(1, 1, 1, 1)
_GRID_1x1 = np.array([1, -1, 0, 0, -1, 0, 0.5, 0.5, 2, -4], dtype=np.float64).reshape(1, 1, 5, 2)
_SEVENS = [7, 7, 7, 7, 7]

_BILINEAR_INNER_ALIGN = [7.3, 8.3, 7.7, 8.7, 4.5, 9.5, 6.5, 11.5, 1, 11, 5, 15]
_BILINEAR_INNER_NOALIGN = [7, 8.5, 7.5, 9, 3, 10.5, 5.5, 13, 1, 11, 5, 15]
_BILINEAR_EVEN_ALIGN = [6.75, 15.75, 9.25, 18.25, 19, 6, 11.35, 13.65]
_BICUBIC_ALIGN_ROW0 = [2.7887204, 3.4506166, 2.7887204, 3.4506166]
_BICUBIC_NOALIGN_ROW0 = [2.6663566, 3.527928, 2.6663566, 3.527928]

# (group, data, grid, output shape, {(mode, padding, align_corners): expected values})
_OV_GROUPS = [
    ("nearest_odd_dims_inner", _DATA_3x5, _GRID_INNER_3x4, (1, 1, 3, 4),
     {("nearest", p, a): [8, 8, 8, 8, 2, 12, 4, 14, 1, 11, 5, 15] for p in PADDINGS for a in (False, True)}),
    ("nearest_even_dims_inner", _DATA_4x6, _GRID_EVEN_8, (1, 1, 1, 8),
     {**{("nearest", p, True): [8, 14, 11, 17, 19, 6, 9, 16] for p in PADDINGS},
      ("nearest", "zeros", False): [2, 14, 5, 17, 0, 0, 9, 16],
      ("nearest", "border", False): [2, 14, 5, 17, 19, 6, 9, 16],
      ("nearest", "reflection", False): [2, 14, 5, 17, 19, 6, 9, 16]}),
    ("bilinear_odd_dims_inner", _DATA_3x5, _GRID_INNER_3x4, (1, 1, 3, 4),
     {("bilinear", "zeros", False): [7, 8.5, 7.5, 9, 3, 10.5, 5.5, 13, 0.25, 2.75, 1.25, 3.75],
      ("bilinear", "zeros", True): _BILINEAR_INNER_ALIGN,
      ("bilinear", "border", False): _BILINEAR_INNER_NOALIGN,
      ("bilinear", "border", True): _BILINEAR_INNER_ALIGN,
      ("bilinear", "reflection", False): _BILINEAR_INNER_NOALIGN,
      ("bilinear", "reflection", True): _BILINEAR_INNER_ALIGN}),
    ("bilinear_odd_dims_outer", _DATA_3x5, _GRID_OUTER_7, (1, 1, 1, 7),
     {("bilinear", "zeros", False): [0, 0, 0, 0, 0, 0, 0],
      ("bilinear", "zeros", True): [0, 0, 0, 0, 0, 0, 1.9880099],
      ("bilinear", "border", False): [1, 8.775, 11, 14.25, 15, 8.725, 5],
      ("bilinear", "border", True): [1, 7.85, 11, 14, 15, 9.15, 5],
      ("bilinear", "reflection", False): [5.9999995, 11.9, 2.7000031, 5.1250005, 13.75, 4.725, 4.7475],
      ("bilinear", "reflection", True): [6.7, 10.75, 3.800002, 6.25, 13.099999, 5.15, 4.4030004]}),
    ("bilinear_even_dims_inner", _DATA_4x6, _GRID_EVEN_8, (1, 1, 1, 8),
     {("bilinear", "zeros", False): [5, 17, 8, 20, 4.75, 1.5, 11, 14],
      ("bilinear", "zeros", True): _BILINEAR_EVEN_ALIGN,
      ("bilinear", "border", False): [5, 17, 8, 20, 19, 6, 11, 14],
      ("bilinear", "border", True): _BILINEAR_EVEN_ALIGN,
      ("bilinear", "reflection", False): [5, 17, 8, 20, 19, 6, 11, 14],
      ("bilinear", "reflection", True): _BILINEAR_EVEN_ALIGN}),
    ("bicubic", _DATA_BICUBIC, _GRID_BICUBIC.reshape(1, 4, 4, 2), (1, 1, 4, 4),
     {("bicubic", "zeros", False): _BICUBIC_NOALIGN_ROW0 + [1.6318359, 2.7156982, 1.6318359, 2.7156982,
                                                           0.6378987, 0.57033366, 0.6378987, 0.57033366,
                                                           0, -0.01507522, 0.25528803, 0],
      ("bicubic", "zeros", True): _BICUBIC_ALIGN_ROW0 + [1.8481445, 2.7364502, 1.8481445, 2.7364502,
                                                         1.2367951, 1.3602872, 1.2367951, 1.3602872,
                                                         0, 0.00650583, 1.1182348, 0],
      ("bicubic", "border", False): _BICUBIC_NOALIGN_ROW0 + [1.5380859, 2.4677734, 1.5380859, 2.4677734,
                                                            1.0089612, 0.91871876, 1.0089612, 0.91871876,
                                                            1, 1, 0.8902873, 1],
      ("bicubic", "border", True): _BICUBIC_ALIGN_ROW0 + [1.8129883, 2.623291, 1.8129883, 2.623291,
                                                          1.0363026, 1.1486388, 1.0363026, 1.1486388,
                                                          1, 1.0000064, 1.0641243, 1],
      ("bicubic", "reflection", False): _BICUBIC_NOALIGN_ROW0 + [1.5380859, 2.4677734, 1.5380859, 2.4677734,
                                                                1.0150609, 0.904375, 1.0150609, 0.904375,
                                                                5.48851, 0.898316, 0.8237547, 0.8125],
      ("bicubic", "reflection", True): _BICUBIC_ALIGN_ROW0 + [1.7745361, 2.6518555, 1.7745361, 2.6518555,
                                                              1.0085088, 1.0307077, 1.0085088, 1.0307077,
                                                              5.5649586, 1.0553409, 1.0011607, 1]}),
    ("bicubic_batches", _DATA_BATCHES, _GRID_BICUBIC.reshape(2, 2, 4, 2), (2, 2, 2, 4),
     {("bicubic", "border", True): [6.0096254, 6.7048755, 6.2951245, 6.9903746, 3.4101562, 8.402344,
                                    4.5976562, 9.589844, 18.009624, 18.704876, 18.295124, 18.990376,
                                    15.410156, 20.402344, 16.597656, 21.589844, 25.415281, 33.735218,
                                    27.26478, 35.58472, 32.884, 26.852259, 35.996872, 36., 37.41528,
                                    45.735218, 39.264782, 47.58472, 44.884, 38.852257, 47.996872, 48.],
      ("bicubic", "reflection", False): [5.8170314, 6.7650313, 6.2349687, 7.182969, 2.4101562, 8.972656,
                                         4.0273438, 10.589844, 17.81703, 18.765032, 18.234968, 19.18297,
                                         14.410156, 20.972656, 16.027344, 22.589844, 24.356874, 34.301876,
                                         26.698126, 36.643124, 34.304035, 26.55013, 36.74749, 36.75,
                                         36.356876, 46.301876, 38.698124, 48.643124, 46.304035, 38.55013,
                                         48.74749, 48.75]}),
    ("data1x1", _DATA_1x1, _GRID_1x1, (1, 1, 1, 5),
     {("bilinear", "zeros", False): [1.75, 7, 3.5, 3.9375, 0],
      ("nearest", "zeros", False): [7, 7, 7, 7, 0],
      ("bicubic", "zeros", False): [2.4677734, 7, 4.15625, 5.4073334, 0],
      ("bicubic", "zeros", True): _SEVENS,
      ("bilinear", "reflection", False): _SEVENS,
      ("nearest", "border", True): _SEVENS}),
]

_STANDARD_TYPES = [("f32", "f32"), ("f32", "f16"), ("f16", "f32")]
_OV_TYPES = {"bicubic": [("f32", "f32"), ("f64", "f32"), ("f16", "f32")],
             "data1x1": [("f32", "f32"), ("f32", "bf16"), ("f32", "f16")]}


def _ov_reference_cases():
    cases = []
    for group, data, grid, shape, table in _OV_GROUPS:
        for (mode, padding, align), values in table.items():
            for data_type, grid_type in _OV_TYPES.get(group, _STANDARD_TYPES):
                name = f"{group}-{mode}-{padding}-{'align' if align else 'noalign'}-{data_type}-{grid_type}"
                cases.append(pytest.param(data, grid, shape, mode, padding, align, values, data_type,
                                          grid_type, id=name))
    return cases


_NP_TYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def _as_type(values: np.ndarray, element_type: str) -> np.ndarray:
    if element_type == "bf16":
        import ml_dtypes

        return values.astype(np.float32).astype(ml_dtypes.bfloat16)
    return values.astype(_NP_TYPES[element_type])


def _ov_tolerance(data_type: str, grid_type: str) -> dict:
    """The vectors are printed with f32 precision (8 digits). f16 data: the output is f16 (1 ulp
    = 2**-10 relative). A f16 / bf16 grid moves the sample points by up to 2**-11 / 2**-8 of their
    value, e.g. -10.1 -> -10.1015625; the C++ file checks those against the same f32 vectors with its
    default 1e-2 threshold, so they get rtol 1e-2 here too (values are O(1..50))."""
    if grid_type in ("f16", "bf16"):
        return {"rtol": 1e-2, "atol": 1e-2}
    if data_type == "f16":
        return {"rtol": 2e-3, "atol": 2e-3}
    return {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("version", ["opset9", "irgrid1"])
@pytest.mark.parametrize("data,grid,shape,mode,padding,align,values,data_type,grid_type", _ov_reference_cases())
def test_openvino_reference_vectors(data, grid, shape, mode, padding, align, values, data_type, grid_type,
                                    version, tmp_path):
    x = _as_type(data, data_type)
    g = _as_type(grid, grid_type)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    out = run_irgrid(tmp_path, x, g, attrs, version=version, x_type=data_type, grid_type=grid_type)
    expected = np.asarray(values, dtype=np.float64).reshape(shape)
    assert out.shape == shape
    assert out.dtype == np.dtype(_NP_TYPES[data_type])
    np.testing.assert_allclose(out.astype(np.float64), expected, **_ov_tolerance(data_type, grid_type))


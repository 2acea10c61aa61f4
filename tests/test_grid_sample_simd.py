"""GridSample's vector path (kernels/cython/simd_gather.h: 2-D nearest/linear/cubic, 3-D nearest/linear,
8 f32 or 4 f64 points at a time) at its boundaries, against onnxruntime GridSample-20 in f64; every test
also runs the scalar path (`sampling.use_simd(False)`, what IRGRID_SIMD=0 selects).

- point counts that are not a multiple of 8, dims of 1 pixel, f32 and f64;
- lanes mixing in-range, out-of-range, NaN, Inf and huge coordinates (the vector path hands the
  special ones to the scalar path; those are compared with the scalar path, whose rule
  test_grid_sample_edge_cases.py checks against oracles);
- zeros padding next to Inf/NaN: every element of X that no kept tap reads is poisoned, so reading
  a dropped tap (even with weight 0) would show.
Coordinates are multiples of 2**-8, so every implementation samples exactly the same positions.
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import zlib

import numpy as np
import pytest

from irgrid._kernels import sampling
from irgrid.ops.grid_sample import sample
from test_grid_sample_edge_cases import run_ort
from test_grid_sample_oracles import run_onnx_reference

VECTOR_CASES = [(2, "nearest"), (2, "linear"), (2, "cubic"), (3, "nearest"), (3, "linear")]
PADDINGS = ("zeros", "border", "reflection")
TOLERANCES = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float64: {"rtol": 1e-12, "atol": 1e-12}}


@pytest.fixture(params=[True, False], ids=["simd", "scalar"])
def simd(request):
    was = sampling.use_simd(request.param)
    yield request.param
    sampling.use_simd(was)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _dyadic(rng, shape, reach: float, step: int = 256) -> np.ndarray:
    return np.round(rng.uniform(-reach, reach, shape) * step) / step


def oracle_step(rank: int, mode: str) -> int:
    """Grid steps (1/step) the oracle computes exactly: onnx.reference's 3-D cubic weights lose about
    1e-7 on finer ones (test_grid_sample_oracles.py uses 1/16 for cubic too)."""
    return 16 if rank == 3 and mode == "cubic" else 256


def _shapes(rank: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(X spatial dims, grid spatial dims): odd point counts (35, 21, 13, 1), 1-pixel dims."""
    if rank == 2:
        return [((6, 9), (5, 7)), ((1, 7), (3, 7)), ((5, 1), (13, 1)), ((1, 1), (1, 1)), ((17, 40), (9, 13))]
    return [((3, 4, 5), (3, 1, 7)), ((1, 6, 1), (2, 3, 5)), ((4, 5, 6), (1, 1, 13))]


def run_oracle(x64: np.ndarray, grid64: np.ndarray, mode: str, padding: str, align: bool) -> np.ndarray:
    """onnxruntime GridSample-20 in f64; onnx.reference's GridSample-22 for 3-D cubic, which onnxruntime
    does not run (and which is right for cubic + border only where no coordinate needs clamping:
    docs/semantics.md)."""
    if grid64.shape[-1] == 3 and mode == "cubic":
        return run_onnx_reference(np.asarray(x64, np.float64), np.asarray(grid64, np.float64), mode, padding, align)
    return run_ort(x64, grid64, mode, padding, align)


def _cpu_has_avx2_fma() -> bool:
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return False
    return "avx2" in flags and "fma" in flags


def test_vector_path_is_used_where_the_cpu_has_it():
    was = sampling.use_simd(True)
    try:
        assert sampling.use_simd(True) == _cpu_has_avx2_fma()
    finally:
        sampling.use_simd(was)


def test_environment_turns_the_vector_path_off(tmp_path):
    code = "from irgrid._kernels import sampling; print(sampling.use_simd(False))"
    # Run outside the checkout: `python -c` puts the cwd first on sys.path, and a source checkout's
    # irgrid/ folder holds no built kernels when the package was installed non-editable (as in CI).
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "IRGRID_SIMD": "0"}, cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_finite_coordinates_match_onnxruntime(rank, mode, padding, align, dtype, simd):
    for dims, out_dims in _shapes(rank):
        rng = _rng(rank, mode, padding, align, dims, out_dims)
        x = rng.uniform(-1, 1, (2, 3, *dims))
        grid = _dyadic(rng, (2, *out_dims, rank), 1.6)
        edges = min(grid.size, 12)
        grid.reshape(-1)[:edges] = np.resize([-1.0, 1.0, 0.0], edges)  # the edges and the centre exactly
        expected = run_ort(x, grid, mode, padding, align)
        got = sample(x.astype(dtype), grid.astype(dtype), mode, padding, align, threads=2)
        np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


# Non-finite, beyond the vector path's range, and far outside the volume yet within that range (more
# than one reflection fold, which the vector path leaves to the scalar one: its taps must read nothing).
SPECIALS = (np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.0**23, -(2.0**23), 1e5, -1e5, 7.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_lanes_with_special_coordinates(rank, mode, padding, dtype):
    """Special coordinates scattered among ordinary ones: ordinary points match onnxruntime, special
    ones the scalar path (the same NaNs, the same values)."""
    check_special_coordinates(rank, mode, padding, dtype, batch=1, channels=2)


def check_special_coordinates(rank: int, mode: str, padding: str, dtype, batch: int, channels: int) -> None:
    """The vector path (whichever of its kernels the current policy picks) on a grid with 30% special
    points: ordinary ones match the oracle (run_oracle) on a grid with those zeroed, special ones the
    scalar path."""
    rng = _rng("special", rank, mode, padding)
    dims, out_dims = ((7, 9), (5, 11)) if rank == 2 else ((3, 4, 5), (3, 2, 9))
    x = rng.uniform(-1, 1, (batch, channels, *dims))
    grid = _dyadic(rng, (batch, *out_dims, rank), 1.3, oracle_step(rank, mode))
    flat = grid.reshape(-1, rank)
    special = rng.random(flat.shape[0]) < 0.3
    for i in np.nonzero(special)[0]:
        flat[i, rng.integers(rank)] = SPECIALS[rng.integers(len(SPECIALS))]
    clean = flat.copy()
    clean[special] = 0
    expected = run_oracle(x, clean.reshape(grid.shape), mode, padding, False).reshape(batch, channels, -1)
    was = sampling.use_simd(True)
    try:
        vector = sample(x.astype(dtype), grid.astype(dtype), mode, padding, False, threads=2)
        sampling.use_simd(False)
        scalar = sample(x.astype(dtype), grid.astype(dtype), mode, padding, False, threads=2)
    finally:
        sampling.use_simd(was)
    vector, scalar = vector.reshape(batch, channels, -1), scalar.reshape(batch, channels, -1)
    special = special.reshape(batch, -1)
    for b in range(batch):
        np.testing.assert_allclose(vector[b][:, ~special[b]], expected[b][:, ~special[b]], **TOLERANCES[dtype])
        np.testing.assert_allclose(vector[b][:, special[b]], scalar[b][:, special[b]], **TOLERANCES[dtype])


def _kept_taps(grid: np.ndarray, dims: tuple[int, ...], mode: str, align: bool) -> set[tuple[int, ...]]:
    """Every in-range tap (zeros padding) some point of `grid` (..., rank; innermost first) reads."""
    per_dim = {"nearest": [0], "linear": [0, 1], "cubic": [-1, 0, 1, 2]}[mode]
    kept = set()
    for point in grid.reshape(-1, grid.shape[-1]):
        taps = []
        for k, length in enumerate(dims):
            g = float(point[len(dims) - 1 - k])
            pixel = (g + 1) / 2 * (length - 1) if align else ((g + 1) * length - 1) / 2
            base = int(np.rint(pixel)) if mode == "nearest" else int(np.floor(pixel))
            taps.append([i for i in (base + j for j in per_dim) if 0 <= i < length])
        kept.update(itertools.product(*taps))
    return kept


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_dropped_taps_are_never_read(rank, mode, align, dtype, simd):
    """Points around the edges with zeros padding; X holds Inf/NaN wherever no kept tap reads, in
    memory right next to the dropped taps (the previous row's end, the next row's start, the
    neighbouring channels)."""
    dims = (6, 8) if rank == 2 else (3, 4, 5)
    check_dropped_taps(rank, mode, align, dtype, dims, channels=3)


def check_dropped_taps(rank: int, mode: str, align: bool, dtype, dims: tuple[int, ...], channels: int) -> None:
    """Sample X poisoned with Inf/NaN everywhere no kept tap of a zeros-padded grid reads: finite, and
    the oracle's (run_oracle) result on X with the poison zeroed."""
    rng = _rng("poison", rank, mode, align)
    out_dims = (9, 5) if rank == 2 else (3, 3, 5)
    grid = rng.choice([-1.25, -1.125, -1.0, -0.875, 0.875, 1.0, 1.125, 1.25, 0.0], (1, *out_dims, rank))
    x_clean = rng.uniform(-1, 1, (1, channels, *dims))
    kept = _kept_taps(grid, dims, mode, align)
    x = np.where(rng.random(x_clean.shape) < 0.5, np.inf, np.nan)
    for index in kept:
        x[(slice(None), slice(None), *index)] = x_clean[(slice(None), slice(None), *index)]
    expected = run_oracle(np.where(np.isfinite(x), x, 0), grid, mode, "zeros", align)
    got = sample(x.astype(dtype), grid.astype(dtype), mode, "zeros", align, threads=2)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_threads_bitwise_identical(rank, mode):
    rng = _rng("threads", rank, mode)
    dims, out_dims = ((40, 50), (37, 41)) if rank == 2 else ((9, 10, 11), (7, 9, 13))
    x = rng.uniform(-1, 1, (2, 5, *dims)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (2, *out_dims, rank)).astype(np.float32)
    one = sample(x, grid, mode, "zeros", False, threads=1)
    two = sample(x, grid, mode, "zeros", False, threads=2)
    assert one.tobytes() == two.tobytes()

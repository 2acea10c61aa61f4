"""GridSample's vector path (kernels/core/simd_gather_path.h: 2-D nearest/linear/cubic, 3-D nearest/linear,
8 f32 or 4 f64 points at a time) at its boundaries, against onnxruntime GridSample-20 in f64; every test
runs it reading with AVX2 gathers and with scalar loads (`sampling.use_gathers`), and also runs the
scalar path (`sampling.use_simd(False)`, what IRGRID_SIMD=0 selects).

- point counts that are not a multiple of 8, dims of 1 pixel, f32 and f64;
- lanes mixing in-range, out-of-range, NaN, Inf and huge coordinates (the vector path hands the
  special ones to the scalar path; those are compared with the scalar path, whose rule
  test_grid_sample_edge_cases.py checks against oracles);
- zeros padding next to Inf/NaN: every element of X that no kept tap reads is poisoned, so reading
  a dropped tap (even with weight 0) would show.
Coordinates are multiples of 2**-8, so every implementation samples exactly the same positions.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from irgrid._kernels import sampling
from irgrid.ops.grid_sample import sample
from oracles import (PADDINGS, SPECIALS, TOLERANCES, check_dropped_taps, check_special_coordinates, dyadic,
                     keyed_rng, run_ort_grid_sample)

VECTOR_CASES = [(2, "nearest"), (2, "linear"), (2, "cubic"), (3, "nearest"), (3, "linear")]


@pytest.fixture(params=["gathers", "loads", "wide", "scalar"])
def simd(request):
    """The vector path reading with AVX2 gathers, with scalar loads (whichever this CPU runs faster is
    the default: sampling.gathers_pay()), with its f32 taps 16 lanes at a time (AVX-512, where the CPU
    has it: `sampling.use_avx512`; elsewhere the same as "loads"), and the scalar path."""
    was = sampling.use_simd(request.param != "scalar")
    was_gathers = sampling.use_gathers("always" if request.param == "gathers" else "never")
    was_avx512 = sampling.use_avx512("always" if request.param == "wide" else "never")
    yield request.param != "scalar"
    sampling.use_avx512(was_avx512)
    sampling.use_gathers(was_gathers)
    sampling.use_simd(was)


def _shapes(rank: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(X spatial dims, grid spatial dims): odd point counts (35, 21, 13, 1), 1-pixel dims."""
    if rank == 2:
        return [((6, 9), (5, 7)), ((1, 7), (3, 7)), ((5, 1), (13, 1)), ((1, 1), (1, 1)), ((17, 40), (9, 13))]
    return [((3, 4, 5), (3, 1, 7)), ((1, 6, 1), (2, 3, 5)), ((4, 5, 6), (1, 1, 13))]


def _cpu_flags() -> set[str]:
    """The CPU's flags as the kernel reports them (not capped by the environment, as the kernels' probes are)."""
    try:
        return set(next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split())
    except (OSError, StopIteration):
        return set()


def _cpu_has_avx2_fma() -> bool:
    return {"avx2", "fma"} <= _cpu_flags()


def test_vector_path_is_used_where_the_cpu_has_it():
    was = sampling.use_simd(True)
    try:
        assert sampling.use_simd(True) == _cpu_has_avx2_fma()
    finally:
        sampling.use_simd(was)


_CAPPED = """
import sys
import numpy as np
from irgrid._kernels import deform_columns, sampling
from irgrid.ops.grid_sample import sample_plan
x, grid = np.load(sys.argv[1]), np.load(sys.argv[2])
plan = sample_plan(x.shape, grid.shape, np.float32, "linear", "zeros", False)
print(plan.route(2), sampling.use_simd(True), sampling.avx512_available(), deform_columns.select_simd(True), sep=";")
np.save(sys.argv[3], plan(x, grid, None, 2))
"""


@pytest.mark.parametrize("env,isa", [
    ({"IRGRID_SIMD": "0"}, "scalar"),
    ({"IRGRID_SIMD": "0", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}, "scalar"),
    ({"ONEDNN_MAX_CPU_ISA": "SSE41"}, "scalar"),
    ({"ONEDNN_MAX_CPU_ISA": "avx"}, "scalar"),
    ({"ONEDNN_MAX_CPU_ISA": "AVX2"}, "avx2"),
    ({"DNNL_MAX_CPU_ISA": "avx2_vnni"}, "avx2"),
    ({"ONEDNN_MAX_CPU_ISA": "", "DNNL_MAX_CPU_ISA": "AVX2"}, "avx2"),
    ({"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX", "DNNL_MAX_CPU_ISA": "SSE41"}, "all"),
    ({"ONEDNN_MAX_CPU_ISA": "DEFAULT"}, "all"),
    ({"ONEDNN_MAX_CPU_ISA": "no such isa"}, "all"),
], ids=lambda v: "+".join(f"{k}={w}" for k, w in v.items()) if isinstance(v, dict) else v)
def test_environment_caps_the_instruction_sets(tmp_path, env, isa):
    """IRGRID_SIMD=0 and OpenVINO's (oneDNN's) ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA cap the kernels in a
    fresh process (kernels/core/cpu.h, read once): below AVX2 the scalar paths, at AVX2 the 8-channel
    interleaved path without AVX-512, else what the CPU has. Each process's result against onnxruntime."""
    rng = keyed_rng("isa cap")
    x = rng.uniform(-1, 1, (1, 16, 24, 20))
    grid = dyadic(rng, (1, 24, 24, 2), 1.2)  # 576 points: 16-channel pixels from 512 on
    np.save(tmp_path / "x.npy", x.astype(np.float32))
    np.save(tmp_path / "grid.npy", grid.astype(np.float32))
    clean = {k: v for k, v in os.environ.items() if k not in ("IRGRID_SIMD", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")}
    # Run outside the checkout: `python -c` puts the cwd first on sys.path, and a source checkout's
    # irgrid/ folder holds no built kernels when the package was installed non-editable (as in CI).
    out = subprocess.run([sys.executable, "-c", _CAPPED, "x.npy", "grid.npy", "y.npy"], env={**clean, **env},
                         cwd=tmp_path, capture_output=True, text=True, check=True).stdout.strip().split(";")
    avx2, avx512 = _cpu_has_avx2_fma(), {"avx512f", "avx512vl", "avx512bw", "avx512dq"} <= _cpu_flags()
    vector = avx2 and isa != "scalar"
    wide = avx512 and isa == "all"
    assert out == [("interleaved 16" if wide else "interleaved 8") if vector else "blocks", str(vector), str(wide),
                   "avx2+fma" if vector else "baseline"]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), run_ort_grid_sample(x, grid, "linear", "zeros", False),
                               **TOLERANCES[np.float32])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_finite_coordinates_match_onnxruntime(rank, mode, padding, align, dtype, simd):
    for dims, out_dims in _shapes(rank):
        rng = keyed_rng(rank, mode, padding, align, dims, out_dims)
        x = rng.uniform(-1, 1, (2, 3, *dims))
        grid = dyadic(rng, (2, *out_dims, rank), 1.6)
        edges = min(grid.size, 12)
        grid.reshape(-1)[:edges] = np.resize([-1.0, 1.0, 0.0], edges)  # the edges and the centre exactly
        expected = run_ort_grid_sample(x, grid, mode, padding, align)
        got = sample(x.astype(dtype), grid.astype(dtype), mode, padding, align, threads=2)
        np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


# Non-finite, beyond the vector path's range, and far outside the volume yet within that range (more
# than one reflection fold, which the vector path leaves to the scalar one: its taps must read nothing).


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_lanes_with_special_coordinates(rank, mode, padding, dtype):
    """Special coordinates scattered among ordinary ones: ordinary points match onnxruntime, special
    ones the scalar path (the same NaNs, the same values)."""
    check_special_coordinates(rank, mode, padding, dtype, batch=1, channels=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_dropped_taps_are_never_read(rank, mode, align, dtype, simd):
    """Points around the edges with zeros padding; X holds Inf/NaN wherever no kept tap reads, in
    memory right next to the dropped taps (the previous row's end, the next row's start, the
    neighbouring channels)."""
    dims = (6, 8) if rank == 2 else (3, 4, 5)
    check_dropped_taps(rank, mode, align, dtype, dims, channels=3)


@pytest.mark.parametrize("batch,channels", [(2, 5), (1, 1), (1, 2)], ids=["interleaved", "one_channel", "two_channels"])
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_threads_bitwise_identical(rank, mode, batch, channels):
    """Any thread count gives the same bits; a single item with few channels is split into spans of
    points (one unit per thread at least), which must not change them either."""
    rng = keyed_rng("threads", rank, mode, batch, channels)
    dims, out_dims = ((40, 50), (37, 41)) if rank == 2 else ((9, 10, 11), (7, 9, 13))
    x = rng.uniform(-1, 1, (batch, channels, *dims)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (batch, *out_dims, rank)).astype(np.float32)
    one = sample(x, grid, mode, "zeros", False, threads=1)
    for threads in (2, 3):
        assert sample(x, grid, mode, "zeros", False, threads=threads).tobytes() == one.tobytes()


@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gathers_and_loads_bitwise_identical(rank, mode, dtype):
    """The gather path reads the same values with gathers as with scalar loads (the choice is by speed
    alone), zeros padding and NaN/Inf coordinates included, on one and two channels (the path's
    default below four) and at one-pixel widths; and the default (measured) matches onnxruntime."""
    rng = keyed_rng("gathers-loads", rank, mode, dtype)
    for dims in (((23, 31), (1, 9), (5, 1)) if rank == 2 else ((5, 6, 7), (3, 1, 4))):
        x = rng.uniform(-1, 1, (2, 2, *dims))
        grid = dyadic(rng, (2, 6, *(5,) * (rank - 1), rank), 1.3)
        grid.reshape(-1)[:len(SPECIALS)] = SPECIALS
        outputs = []
        for policy in ("always", "never"):
            was = sampling.use_gathers(policy)
            try:
                outputs.append(sample(x.astype(dtype), grid.astype(dtype), mode, "zeros", False, threads=2))
            finally:
                sampling.use_gathers(was)
        assert outputs[0].tobytes() == outputs[1].tobytes()
        ordinary = (np.abs(grid) < 4).all(-1)  # the specials' rules: check_special_coordinates
        default = sample(x.astype(dtype), grid.astype(dtype), mode, "zeros", False, threads=2)
        expected = run_ort_grid_sample(x, np.where(ordinary[..., None], grid, 0), mode, "zeros", False)
        np.testing.assert_allclose(np.where(ordinary[:, None], default, 0), np.where(ordinary[:, None], expected, 0),
                                   **TOLERANCES[dtype])


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("dtype", [np.float32], ids=["f32"])
def test_fused_and_blocks_bitwise_identical(mode, padding, dtype):
    """A 2-D f32 item of one or two channels and at least a block of points runs fused (its taps then its
    reads, group by group: irgrid_fused); split among three threads, its spans are too short for that
    and run by blocks. Both give the same bits, with special coordinates among the points."""
    rng = keyed_rng("fused-blocks", mode, padding, dtype)
    for channels in (1, 2):
        x = rng.uniform(-1, 1, (1, channels, 19, 23)).astype(dtype)
        grid = rng.uniform(-1.3, 1.3, (1, 15, 20, 2)).astype(dtype)
        grid.reshape(-1)[:len(SPECIALS)] = SPECIALS
        fused = sample(x, grid, mode, padding, False, threads=1)
        assert sample(x, grid, mode, padding, False, threads=3).tobytes() == fused.tobytes()


@pytest.mark.skipif(not sampling.avx512_available(), reason="the CPU has no AVX-512 F/VL/BW/DQ")
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", VECTOR_CASES)
def test_wide_taps_bitwise_identical(rank, mode, padding, align):
    """The gather path's f32 taps 16 lanes at a time (AVX-512) give the bits of 8 lanes at a time (AVX2;
    with one to four channels, 2-D bilinear reads pairs in either, irgrid_pairs_wide_f32 and
    irgrid_pairs8_f32 (every padding: reflection's folds at both edges), on one thread, and 3-D trilinear
    by pairs at 16 lanes on
    items of 256 points or more (the last four shapes); two threads' spans are below a block and take the
    gather path),
    read with gathers or loads, fused or by blocks, on one to four channels, for point counts that are
    not multiples of 16 and coordinates that are not dyadic (every rounding of the pixel coordinate
    shows), exact halves (nearest's ties), tiny ones (0 < |g| < 2**-29, where f32 arithmetic would round
    differently), values past the edges (the paddings' folds) and special ones (NaN, Inf, huge: the
    scalar path's); the others also match onnxruntime."""
    rng = keyed_rng("wide-taps", rank, mode, padding, align)
    for dims, out_dims in (((23, 31), (7, 45)), ((1, 9), (3, 5)), ((5, 1), (1, 17))) if rank == 2 else (
            ((5, 6, 7), (3, 5, 9)), ((3, 1, 4), (1, 1, 21)), ((5, 6, 7), (4, 8, 9)), ((4, 3, 2), (4, 8, 9)),
            ((1, 3, 5), (4, 8, 9)), ((3, 1, 5), (4, 8, 9))):
        for channels in (1, 2, 3, 4):
            x = rng.uniform(-1, 1, (2, channels, *dims)).astype(np.float32)
            grid = rng.uniform(-2.5, 2.5, (2, *out_dims, rank)).astype(np.float32)
            flat = grid.reshape(-1)
            n = flat.size
            tiny = rng.random(n) < 0.1
            flat[tiny] = rng.choice([-5.0, -1.0, 1.0, 3.0], int(tiny.sum())) * 2.0**-31
            halves = rng.random(n) < 0.2
            flat[halves] = (rng.integers(-80, 80, int(halves.sum())) + 0.5) / 32
            flat[:len(SPECIALS)] = SPECIALS
            outputs = []
            # one thread: a 2-D item of 256 points or more runs fused (irgrid_fused), two split it into blocks
            for avx512, gathers, threads in (("never", "never", 1), ("always", "never", 1), ("always", "always", 1),
                                             ("never", "always", 1), ("always", "always", 2), ("never", "never", 2)):
                was = sampling.use_avx512(avx512), sampling.use_gathers(gathers)
                try:
                    outputs.append(sample(x, grid, mode, padding, align, threads=threads))
                finally:
                    sampling.use_avx512(was[0])
                    sampling.use_gathers(was[1])
            for out in outputs[1:]:
                assert out.tobytes() == outputs[0].tobytes()
            # against the oracle: neither special nor tiny (in f64 the oracle breaks nearest's ties there)
            ordinary = ((np.abs(grid) < 4) & ((grid == 0) | (np.abs(grid) > 2.0**-20))).all(-1)
            grid64 = np.where(ordinary[..., None], grid, 0).astype(np.float64)
            expected = run_ort_grid_sample(x.astype(np.float64), grid64, mode, padding, align)
            np.testing.assert_allclose(np.where(ordinary[:, None], outputs[1], 0),
                                       np.where(ordinary[:, None], expected, 0), **TOLERANCES[np.float32])


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank,mode", [c for c in VECTOR_CASES if c[1] != "cubic"])
def test_one_pixel_dims_sample_alike_near_their_centre(rank, mode, padding, align, simd):
    """Along a dim of one pixel the exact pixel coordinate is g / 2 (align_corners: 0): for |g| < 2**-26
    every path's weights round to 1 and 0, so the output is the one at g = 0, bit for bit. The f32 vector
    paths compute the coordinate as one FMA (g / 2 exactly) where the scalar path's double arithmetic
    gives 0 for |g| < 2**-53 and a rounded g / 2 below 2**-29, and -0 for g < -1 with align_corners:
    these coordinates must not move an output (kernels/core/simd.h)."""
    rng = keyed_rng("one-pixel", rank, mode, padding, align)
    dims = (1, 7) if rank == 2 else (4, 1, 1)
    x = rng.uniform(-1, 1, (2, 3, *dims)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 9, 11, rank) if rank == 2 else (2, 3, 5, 7, rank)).astype(np.float32)
    one_pixel = [k for k in range(rank) if dims[rank - 1 - k] == 1]  # grid order: innermost dim first
    centred = grid.copy()
    centred[..., one_pixel] = 0
    moved = grid.copy()
    near = rng.choice([-1.0, 1.0], moved[..., one_pixel].shape) * 2.0 ** rng.uniform(-80, -26, moved[..., one_pixel].shape)
    moved[..., one_pixel] = near.astype(np.float32)
    expected = sample(x, centred, mode, padding, align, threads=2)
    assert sample(x, moved, mode, padding, align, threads=2).tobytes() == expected.tobytes()
    if align:  # every coordinate is the pixel's centre
        moved[..., one_pixel] = rng.uniform(-1.5, 1.5, moved[..., one_pixel].shape).astype(np.float32)
        assert sample(x, moved, mode, padding, align, threads=2).tobytes() == expected.tobytes()


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("points", [(1, 1), (1, 7), (9, 9), (15, 17)], ids=["1", "7", "81", "255"])
def test_small_one_channel_items_run_as_one(points, padding, align, simd):
    """A batch of one-channel 2-D bilinear items of fewer than 256 points each (RAFT's lookups: 81)
    runs as one run of points across the items (kernels/core/grid_sample.c, IRGRID_GS_ITEMS): the bits
    of each item sampled alone, at 1 and 2 threads, with special coordinates, item boundaries inside
    blocks of lanes and planes of 2-pixel rows; ordinary points match onnxruntime."""
    rng = keyed_rng("items", points, padding, align)
    for dims in ((46, 62), (3, 2)):
        x = rng.uniform(-1, 1, (37, 1, *dims)).astype(np.float32)
        x[5, 0, 1, 1] = np.inf  # a neighbour item's value must not leak into another's taps
        grid = rng.uniform(-1.15, 1.15, (37, *points, 2)).astype(np.float32)
        grid.reshape(-1)[3:3 + len(SPECIALS)] = SPECIALS
        alone = np.concatenate([sample(x[b:b + 1], grid[b:b + 1], "linear", padding, align, threads=1)
                                for b in range(len(x))])
        for threads in (1, 2):
            assert sample(x, grid, "linear", padding, align, threads=threads).tobytes() == alone.tobytes()
        ordinary = (np.abs(grid) < 4).all(-1)
        ordinary[5] = False  # item 5 holds an Inf: where a tap of weight 0 reads it, the peers give Inf or NaN
        expected = run_ort_grid_sample(x.astype(np.float64), np.where(ordinary[..., None], grid, 0).astype(np.float64),
                                       "linear", padding, align)
        np.testing.assert_allclose(np.where(ordinary[:, None], alone, 0), np.where(ordinary[:, None], expected, 0),
                                   **TOLERANCES[np.float32])


def test_gathers_pay_is_measured_once():
    assert sampling.gathers_pay() in (True, False)
    assert sampling.gathers_pay() == sampling.gathers_pay()
    assert sampling.use_gathers("auto") == "auto"

"""GridSample's channel-interleaved vector path (2-D and 3-D nearest, linear and cubic: groups of 8
f32 / 4 f64 channels copied into a scratch of pixels, or 16 f32 channels on CPUs with AVX-512, a zero
pixel for dropped taps), forced with `sampling.use_interleave("always")`, against onnxruntime GridSample-20 in f64 (which runs all but 3-D
cubic) and, for 3-D cubic, onnx.reference's GridSample-22:

- every channel count 1..17 (partial groups), odd point counts, all paddings, align_corners, f32, f64;
- NaN, Inf and huge coordinates among ordinary ones (the scalar path's values for those);
- zeros padding next to Inf/NaN in X (the zero pixel stands in for dropped taps);
- pixels of 8 and of 16 f32 channels (`sampling.use_avx512`), and the runs' non-temporal stores of
  a large output; cubic's pixels of one channel (one to three channels, zeros or border padding,
  16 or 8 points a vector);
  2-D nearest of one to four channels by points (its own run, taken with the policy "auto");
- 1 vs 2 threads and blockings (points split into spans) bitwise, and bitwise equal to the gather
  path (same FMA chain per output), so AffineGrid fused or not gives the same bits whichever is chosen;
  cubic excepted: its separable runs over a zero-padded row scratch (2-D and 3-D; 3-D cubic has no
  gather path, the scalar path runs where the interleaved one is not chosen) sum in another order,
  so only the oracles bound their difference from the gather path (and fused AffineGrid takes the same
  run as the unfused pair, tests/runtime/test_fusion.py).
Coordinates are multiples of 2**-8, so every implementation samples exactly the same positions.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import irgrid
from irgrid._kernels import sampling
from irgrid.ops.grid_sample import sample, sample_plan
from oracles import (PADDINGS, SPECIALS, TOLERANCES, build_pair, check_dropped_taps, check_special_coordinates,
                     dyadic, keyed_rng, kept_taps, oracle_step, random_theta, run_onnx_reference,
                     run_ort_grid_sample, run_ort_pair, same_bits, unaligned_out)

CASES = pytest.mark.parametrize("rank,mode", [(2, "nearest"), (2, "linear"), (2, "cubic"), (3, "nearest"),
                                              (3, "linear")])
DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
CUBIC_AXES = pytest.mark.parametrize("rank,axis", [(2, 0), (2, 1), (3, 0), (3, 1), (3, 2)])
CUBIC_DIMS = {2: (8, 4), 3: (4, 8, 4)}  # powers of two: the sweeps' normalised coordinates are dyadic
# onnxruntime for 2-D (onnx.reference's 2-D cubic is off by up to 2e-7 in f64 on some of these
# points, where irgrid's three paths agree with onnxruntime), onnx.reference for 3-D (onnxruntime has
# no 3-D cubic)
CUBIC_ORACLE = {2: run_ort_grid_sample, 3: run_onnx_reference}


@pytest.fixture(autouse=True)
def interleaved():
    """The vector path on, interleaving wherever it fits; restored afterwards."""
    simd, policy = sampling.use_simd(True), sampling.use_interleave("always")
    yield
    sampling.use_simd(simd)
    sampling.use_interleave(policy)


@pytest.fixture(params=["never", "always"], ids=["8-channel pixels", "16-channel pixels"])
def pixels(request):
    """The interleaved runs' f32 pixels: 8 channels, or (with the avx512 policy "always", on a CPU with
    AVX-512) 16, cubic's row scratches included (cubic of one to three channels: one channel a pixel).
    Without AVX-512, "always" would run the 8-channel pixels again: skipped there."""
    if request.param == "always" and not sampling.avx512_available():
        pytest.skip("16-channel pixels need AVX-512 (without it, the 8-channel run already tested)")
    was = sampling.use_avx512(request.param)
    yield request.param
    sampling.use_avx512(was)


def _paths(x, grid, mode, padding, align, threads=2) -> tuple[np.ndarray, np.ndarray]:
    """(interleaved, gather path) outputs."""
    got = sample(x, grid, mode, padding, align, threads)
    sampling.use_interleave("never")
    try:
        gathered = sample(x, grid, mode, padding, align, threads)
    finally:
        sampling.use_interleave("always")
    return got, gathered


def _dims(rank: int, i: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """X's spatial dims (1-pixel ones among them) and the grid's (35, 21, 117 or 1 points) for case i."""
    if rank == 2:
        return ((6, 9), (1, 7), (17, 40))[i % 3], ((5, 7), (3, 7), (9, 13), (1, 1))[i % 4]
    return ((3, 4, 5), (1, 6, 1), (4, 5, 6))[i % 3], ((1, 5, 7), (3, 1, 7), (3, 3, 13), (1, 1, 1))[i % 4]


@DTYPES
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@CASES
def test_every_channel_count_matches_onnxruntime(rank, mode, padding, align, dtype, pixels):
    for channels in range(1, 18):
        rng = keyed_rng("channels", rank, mode, padding, align, channels)
        dims, out_dims = _dims(rank, channels)
        x = rng.uniform(-1, 1, (2, channels, *dims))
        grid = dyadic(rng, (2, *out_dims, rank), 1.6)
        edges = min(grid.size, 12)
        grid.reshape(-1)[:edges] = np.resize([-1.0, 1.0, 0.0], edges)  # the edges and the centre exactly
        expected = run_ort_grid_sample(x, grid, mode, padding, align)
        got, gathered = _paths(x.astype(dtype), grid.astype(dtype), mode, padding, align)
        np.testing.assert_allclose(got, expected, **TOLERANCES[dtype], err_msg=f"C={channels}")
        np.testing.assert_allclose(gathered, expected, **TOLERANCES[dtype], err_msg=f"C={channels}")
        if mode != "cubic":  # cubic's row run sums in its own order (module docstring)
            assert got.tobytes() == gathered.tobytes(), f"C={channels}"


@DTYPES
@pytest.mark.parametrize("padding", PADDINGS)
@CASES
def test_special_coordinates(rank, mode, padding, dtype, pixels):
    """Ordinary points match onnxruntime; NaN, Inf and huge ones the scalar path."""
    check_special_coordinates(rank, mode, padding, dtype, batch=2, channels=11)


@DTYPES
@pytest.mark.parametrize("align", [False, True])
@CASES
def test_dropped_taps_read_the_zero_pixel(rank, mode, align, dtype, pixels):
    """Zeros padding around the edges; X holds Inf/NaN wherever no kept tap reads (the rows' ends,
    the neighbouring pixels and channels of the same group, the partial group's last channel)."""
    check_dropped_taps(rank, mode, align, dtype, (6, 8) if rank == 2 else (4, 6, 5), channels=9)


@DTYPES
@CASES
@pytest.mark.parametrize("batch,channels", [(1, 8), (1, 13), (3, 17)])
def test_threads_and_spans_bitwise_identical(batch, channels, rank, mode, dtype, pixels):
    """3001 points: one channel group is split into spans of points (more with 2 threads than with 1)."""
    rng = keyed_rng("threads", batch, channels, rank, mode)
    dims = (40, 50) if rank == 2 else (9, 10, 11)
    x = rng.uniform(-1, 1, (batch, channels, *dims)).astype(dtype)
    grid = rng.uniform(-1.1, 1.1, (batch, 3001, *(1,) * (rank - 1), rank)).astype(dtype)
    grid.reshape(-1)[::97] = np.nan
    one = sample(x, grid, mode, "reflection", False, threads=1)
    two, gathered = _paths(x, grid, mode, "reflection", False, threads=2)
    assert one.tobytes() == two.tobytes()
    if mode != "cubic":  # cubic's row run sums in its own order (module docstring)
        assert two.tobytes() == gathered.tobytes()


@functools.cache
def _cubic3d_case(padding: str, align: bool, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, grid, onnx.reference's output) of 17 channels: the oracle (seconds on a slow host) runs once for
    the dtypes and pixel widths that share it. Border keeps every coordinate within the pixel range,
    where onnx.reference's clamping changes nothing."""
    rng = keyed_rng("cubic3d", padding, align, i)
    dims, out_dims = _dims(3, i)
    if padding == "reflection" and align:  # onnx.reference divides 0 by 0 on 1-pixel dims there
        dims = tuple(max(d, 2) for d in dims)
    x = rng.uniform(-1, 1, (2, 17, *dims))
    grid = dyadic(rng, (2, *out_dims, 3), 1.6, oracle_step(3, "cubic"))
    if padding == "border":
        edge = 1.0 if align else 1 - 1 / np.array(dims[::-1], float)  # pixel coordinate 0 and L - 1
        grid = np.clip(grid, -edge, edge)
    return x, grid, run_onnx_reference(x, grid, "cubic", padding, align)


@DTYPES
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
def test_3d_cubic_every_channel_count_matches_onnx_reference(padding, align, dtype, pixels):
    """Channel counts 1..17 (channels are independent: the reference runs once on 17)."""
    for i in range(3):
        x, grid, expected = _cubic3d_case(padding, align, i)
        for channels in range(1, 18):
            got = sample(x[:, :channels].astype(dtype), grid.astype(dtype), "cubic", padding, align, 2)
            np.testing.assert_allclose(got, expected[:, :channels], **TOLERANCES[dtype], err_msg=f"C={channels}")


@DTYPES
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("rank", [2, 3])
def test_cubic_generic_run_where_the_row_scratch_does_not_fit(rank, padding, dtype):
    """Cubic's own runs read a scratch padded with zeros (3 pixels before each row, 3 rows before
    each plane, in 3-D 3 planes before the volume and 4 after it, in 2-D 4 rows after the plane). An
    image whose row scratch exceeds 8 MiB while its plane and one zero pixel fit (3-D: 71 * 67 * 66
    against 64 * 64 * 63 + 1 pixels of 32 bytes; 2-D: 517 * 513 against 510 * 510 + 1), one channel,
    so that two workers' row scratches would exceed 4x X's bytes (grid_sample.c's scratch_fits), takes
    the generic interleaved run instead (f32 one-channel pixels, 8 points a vector: a call of 30 points
    runs no 512-bit code): the oracle agrees."""
    dims = (64, 64, 63) if rank == 3 else (510, 510)
    rows = (71 * 67 * 66) if rank == 3 else (517 * 513)
    assert rows * 32 > 8 << 20 >= (np.prod(dims) + 1) * 32  # grid_sample.c's INTERLEAVE_MAX_BYTES
    rng = keyed_rng("cubic-generic", rank, padding, dtype)
    x = rng.uniform(-1, 1, (1, 1, *dims))
    grid = dyadic(rng, (1, *(2, 3, 5)[3 - rank:], rank), 1.6, oracle_step(rank, "cubic"))
    if padding == "border":  # within the pixel range, as in the test above
        edge = 1 - 1 / np.array(dims[::-1], float)
        grid = np.clip(grid, -edge, edge)
    expected = CUBIC_ORACLE[rank](x, grid, "cubic", padding, False)
    plan = sample_plan(x.shape, grid.shape, dtype, "cubic", padding, False)
    points = dtype == np.float32  # grid_sample.c's cubic_points
    assert plan.route(2) == ("interleaved 1 rows" if points else f"interleaved {32 // np.dtype(dtype).itemsize}")
    got = plan(x.astype(dtype), grid.astype(dtype), None, 2)
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


# Planes just past the 8 MiB of 8-channel pixels (256K pixels and one zero pixel).
LARGE_DIMS = {2: (512, 513), 3: (64, 64, 65)}


@DTYPES
@pytest.mark.parametrize("channels", [16, 8])
@pytest.mark.parametrize("rank,mode", [(2, "nearest"), (2, "linear"), (2, "cubic"), (3, "linear")])
def test_large_planes_interleave_past_8_mib(rank, mode, channels, dtype):
    """A plane of 256K pixels or more (512 x 512 and up) takes the interleaved path with a scratch past
    8 MiB (its gather path measured 1.3-8x slower, benchmarks/README.md, "Large planes"), pixels of 8
    f32 / 4 f64 channels: one scratch the workers share, a channel group at a time, copied in pieces
    first; cubic a row scratch per worker. Against onnxruntime at f64, bitwise
    the same at 1, 2 and 3 threads, and (but cubic, whose row run sums in its own order) bitwise the
    gather path's."""
    rng = keyed_rng("large-plane", rank, mode, channels, dtype)
    x = rng.uniform(-1, 1, (1, channels, *LARGE_DIMS[rank]))
    grid = dyadic(rng, (1, *(3, 7, 9)[3 - rank:], rank), 1.2)
    grid.reshape(-1)[:12] = np.resize([-1.0, 1.0, 0.0], 12)  # the edges and the centre exactly
    expected = run_ort_grid_sample(x, grid, mode, "zeros", False)
    x, grid = x.astype(dtype), grid.astype(dtype)
    plan = sample_plan(x.shape, grid.shape, dtype, mode, "zeros", False)
    lanes = 32 // np.dtype(dtype).itemsize
    path = f"interleaved {lanes} rows" if mode == "cubic" else f"shared {lanes}"
    assert plan.route(2) == path
    two = plan(x, grid, None, 2)
    for threads in (1, 3):
        assert plan(x, grid, None, threads).tobytes() == two.tobytes(), threads
    np.testing.assert_allclose(two, expected, **TOLERANCES[dtype])
    if mode != "cubic":
        _, gathered = _paths(x, grid, mode, "zeros", False)
        assert two.tobytes() == gathered.tobytes()


def test_large_planes_bounded_scratch():
    """Past 8 MiB: one scratch shared by the workers, from 5 channels on (with 4 or fewer, half of each
    8-channel pixel or more is zeros: the gather path); cubic's row scratch wherever it fits 4x X's
    bytes, at every thread count (its bits depend on it), its workers then as many as fit."""
    large = (*LARGE_DIMS[2],)
    route = {(c, m): sample_plan((1, c, *large), (1, 4, 4, 2), np.float32, m, "zeros", False)
             for c in (4, 8, 32) for m in ("linear", "cubic")}
    assert [route[32, "linear"].route(t) for t in (0, 1, 2, 32)] == ["shared 8"] * 4  # 0 threads: as 1
    assert [route[8, "linear"].route(t) for t in (1, 2, 32)] == ["shared 8"] * 3
    assert [route[4, "linear"].route(t) for t in (1, 2, 32)] == ["gather"] * 3
    assert [route[8, "cubic"].route(t) for t in (1, 2, 32)] == ["interleaved 8 rows"] * 3


@DTYPES
@pytest.mark.parametrize("padding", ["zeros", "reflection"])
def test_3d_cubic_special_coordinates(padding, dtype):
    """As test_special_coordinates (no border: its out-of-range points have no oracle, see above)."""
    check_special_coordinates(3, "cubic", padding, dtype, batch=2, channels=11)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
def test_2d_cubic_16_channel_pixels_bitwise_as_8(padding, align):
    """On a CPU with AVX-512, 2-D cubic of more than 8 f32 channels runs over a row scratch of 16-channel
    pixels by default (simd.h's irgrid_cubic2d_run_f32x16): every channel's sums are those of 8-channel
    pixels, so bitwise the same outputs, at 1 and 2 threads, with 9 to 17 channels (a partial group of
    16, a group of 1), special coordinates among the points; the ordinary points against onnxruntime."""
    if not sampling.avx512_available():
        pytest.skip("16-channel pixels need AVX-512")
    rng = keyed_rng("cubic2d-wide", padding, align)
    x = rng.uniform(-1, 1, (2, 17, 23, 37))
    grid = dyadic(rng, (2, 29, 31, 2), 1.3)  # 899 points an item: past the 512 of a 512-bit call
    expected = run_ort_grid_sample(x, grid, "cubic", padding, align)
    ordinary = np.ones(grid.shape[:-1], bool)
    ordinary.reshape(-1)[100::97] = False
    grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    was = sampling.use_avx512("never")
    try:
        for channels in (9, 16, 17):
            sampling.use_avx512("never")
            narrow = sample(x[:, :channels], grid, "cubic", padding, align, 2)
            sampling.use_avx512("auto")
            for threads in (1, 2):
                wide = sample(x[:, :channels], grid, "cubic", padding, align, threads)
                assert wide.tobytes() == narrow.tobytes(), (channels, threads)
            np.testing.assert_allclose(wide.transpose(0, 2, 3, 1)[ordinary],
                                       expected[:, :channels].transpose(0, 2, 3, 1)[ordinary], **TOLERANCES[np.float32],
                                       err_msg=f"C={channels}")
    finally:
        sampling.use_avx512(was)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims", [(23, 37), (1, 1), (2, 3), (5, 1), (1, 6), (9, 10, 11), (1, 1, 1), (2, 1, 3),
                                  (5, 7, 1), (4, 5), (6, 5, 4), (12, 5, 6)], ids=str)
def test_cubic_one_channel_pixels_bitwise_as_8(dims, align, padding):
    """2-D and 3-D cubic of one to three f32 channels runs over a scratch of one-channel pixels, 16 points a
    vector on a call that may run 512-bit code (kernels/core/simd_cubic_points.h), else 8
    (simd_cubic_points8.h; border and reflection over a copy with the 3 pixels past every edge that the
    padding maps them to, reflection's taps wholly past an edge read backwards inside the dim, on dims of 4
    and 5 pixels too, the least that have such taps, and along the depth, where 1.3 reaches such taps from 10
    planes): the same sums lane for lane, so bitwise the outputs of 8-channel pixels (the
    same channels of a four-channel call, which takes them; 3-D: binned or not, either way), by 8 and by 16 points, at
    1, 2 and 3 threads (spans of points split among workers that each copy the planes), on planes down to
    one pixel, with coordinates to 1.3 (taps past the edges, all four of them for some) and special ones
    among the points (the scalar path's), and Inf and NaN in the fourth channel, which only the
    four-channel call reads; the ordinary points against onnxruntime (2-D) and onnx.reference (3-D: the
    first two planes' points, where it is right for border: no coordinate outside the volume,
    docs/semantics.md; and where it runs for reflection: not about a one-pixel dim's centre)."""
    rank = len(dims)
    rng = keyed_rng("cubic-points", dims, align, padding)
    x = rng.uniform(-1, 1, (2, 4, *dims))
    out_dims = (29, 31) if rank == 2 else (7, 9, 11)  # 899 and 693 points an item: past a 512-bit call's 512
    grid = dyadic(rng, (2, *out_dims, rank), 1.3)
    # onnx.reference divides by zero reflecting about a one-pixel dim's centre (align_corners)
    oracle = not (rank == 3 and padding == "reflection" and align and 1 in dims)
    # onnx.reference takes 15-40 ms a 3-D point (Zen 4 - Zen 1): its oracle sees the first 2 planes (198 points)
    checked = grid[:, :2] if rank == 3 else grid
    expected = CUBIC_ORACLE[rank](x[:, :3], checked, "cubic", padding, align) if oracle else None
    ordinary = np.ones(grid.shape[:-1], bool)
    if rank == 3 and padding == "border":
        sizes = np.array(dims[::-1], float)  # the grid lists the innermost dim first
        pixel = (grid + 1) / 2 * (sizes - 1) if align else ((grid + 1) * sizes - 1) / 2
        ordinary = ((pixel >= 0) & (pixel <= sizes - 1)).all(-1)
    ordinary.reshape(-1)[100::97] = False
    grid.reshape(-1, rank)[100::97, rng.integers(0, rank)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    x[:, 3] = np.where(rng.random(dims) < 0.5, np.inf, np.nan)
    assert " 8 rows" in sample_plan(x.shape, grid.shape, np.float32, "cubic", padding, align).route(2)
    rows8 = sample(x, grid, "cubic", padding, align, 2)
    was = sampling.use_avx512("auto"), sampling.use_binning("auto")
    try:
        if rank == 3:  # the 8-channel run on a grid bins scattered points; unbinned, the same bits
            sampling.use_binning("never")
            assert same_bits(sample(x, grid, "cubic", padding, align, 2), rows8)
            sampling.use_binning("auto")
        for channels in (1, 2, 3):
            for lanes in ("never", "auto"):  # 8 points a vector; 16 where the CPU has AVX-512
                sampling.use_avx512(lanes)
                assert sample_plan((2, channels, *dims), grid.shape, np.float32, "cubic", padding,
                                   align).route(2) == f"interleaved {channels} rows"
                for threads in (1, 2, 3):
                    for binning in ("never", "always") if rank == 3 else ("auto",):
                        sampling.use_binning(binning)
                        points = sample(x[:, :channels], grid, "cubic", padding, align, threads)
                        assert same_bits(points, rows8[:, :channels]), (channels, lanes, threads, binning)
                    sampling.use_binning("auto")
            if oracle:
                seen = (slice(None), slice(None, checked.shape[1]))
                np.testing.assert_allclose(np.moveaxis(points, 1, -1)[seen][ordinary[seen]],
                                           np.moveaxis(expected[:, :channels], 1, -1)[ordinary[seen]],
                                           **TOLERANCES[np.float32], err_msg=f"C={channels}")
    finally:
        sampling.use_avx512(was[0])
        sampling.use_binning(was[1])


def _by_8_and_16_points(x, grid, padding: str, threads: tuple) -> list:
    """Cubic of f32 x over one-channel pixels (its route checked) by 8 points a vector, then by 16 where the
    CPU has AVX-512 (sampling.use_avx512), at each thread count: the outputs."""
    outs = []
    was = sampling.use_avx512("never")
    try:
        for lanes in ("never", "auto"):
            sampling.use_avx512(lanes)
            assert sample_plan(x.shape, grid.shape, np.float32, "cubic", padding, False).route(2) == \
                f"interleaved {x.shape[1]} rows"
            outs += [sample(x, grid, "cubic", padding, False, count) for count in threads]
    finally:
        sampling.use_avx512(was)
    return outs


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("channels", [1, 2])
def test_3d_cubic_one_channel_pixels_past_the_row_scratch(channels, padding):
    """A volume whose 8-channel row scratch exceeds what irgrid allows a call (grid_sample.c's x_share: 4
    times X's bytes) at one or two channels runs over one-channel pixels past their usual 1 MiB (it went
    to the scalar path, 6-12x slower; without 512-bit code 10-20x): against onnx.reference (ordinary
    points, where its border is right: docs/semantics.md), and bitwise at 1, 2 and 3 threads, by 8 and by
    16 points a vector."""
    rng = keyed_rng("large-cubic-points", channels, padding)
    dims = (48, 72, 72)  # 1.2 MiB of one-channel pixels a channel
    x = rng.uniform(-1, 1, (1, channels, *dims)).astype(np.float32)
    grid = dyadic(rng, (1, 5, 9, 13, 3), 1.1, oracle_step(3, "cubic"))  # 585 points
    sampling.use_interleave("auto")
    outs = _by_8_and_16_points(x, grid, padding, (1, 2, 3))
    assert len({out.tobytes() for out in outs}) == 1
    every = 27  # 22 points against onnx.reference (0.1-0.3 s a point on this volume)
    some = grid.reshape(1, 1, 1, -1, 3)[:, :, :, ::every].astype(np.float64)
    expected = run_onnx_reference(x.astype(np.float64), some, "cubic", padding, False)
    pixel = ((some + 1) * np.array(dims[::-1]) - 1) / 2
    ordinary = padding == "zeros" or ((pixel >= 0) & (pixel <= np.array(dims[::-1]) - 1)).all(-1)
    got = outs[1].reshape(1, channels, 1, 1, -1)[..., ::every]
    np.testing.assert_allclose(np.moveaxis(got, 1, -1)[ordinary], np.moveaxis(expected, 1, -1)[ordinary],
                               **TOLERANCES[np.float32])


def test_3d_cubic_one_channel_pixels_of_a_volume_past_2_to_the_26():
    """One-channel pixels of a volume of more than 2^26 pixels (a 300 x 512 x 512 CT-sized volume): the
    run took its taps' byte offsets of 64-byte pixels in int32 and shifted them back, so a point past
    pixel 2^26 read the wrong pixel (off by 2-4 here); they are pixel indices now. Bitwise at 1 and 2
    threads, by 8 and by 16 points a vector, and against onnx.reference (f32 tolerances) on a crop of the
    volume around the points (the oracle takes 10 s on the whole volume), the points' coordinates carried
    over in f64. About 0.7 GB."""
    rng = keyed_rng("cubic-points-past-2^26")
    dims = np.array([300, 512, 512])
    x = rng.random((1, 1, *dims), dtype=np.float32)
    grid = dyadic(rng, (1, 8, 8, 8, 3), 0.1, oracle_step(3, "cubic"))  # rows and columns 230-281
    grid[..., 2] = 0.7 + np.abs(grid[..., 2]) * 2.9  # depth 254-298: first taps past pixel 2^26
    sampling.use_interleave("auto")
    outs = _by_8_and_16_points(x, grid.astype(np.float32), "zeros", (1, 2))
    assert len({out.tobytes() for out in outs}) == 1
    start, stop = np.array([240, 220, 220]), np.array([300, 292, 292])  # every point's 4 x 4 x 4 taps inside
    crop = x[:, :, start[0]:stop[0], start[1]:stop[1], start[2]:stop[2]].astype(np.float64)
    pixel = ((grid + 1) * dims[::-1] - 1) / 2  # align_corners=False, innermost first
    cropped = ((2 * (pixel - start[::-1]) + 1) / (stop - start)[::-1] - 1).reshape(1, 1, 1, -1, 3)[..., ::16, :]
    expected = run_onnx_reference(crop, cropped, "cubic", "zeros", False)  # 32 points (15 ms each)
    np.testing.assert_allclose(outs[1].reshape(1, 1, 1, 1, -1)[..., ::16], expected, **TOLERANCES[np.float32])


def _nearest_by_reads(x, grid, padding: str, align: bool) -> dict:
    """2-D nearest under the current policies, read by gathers and by scalar loads, at 1, 2 and 3 threads:
    {(threads, gather policy): output}."""
    points = {}
    for reads in ("always", "never"):  # gathers, scalar loads
        was = sampling.use_gathers(reads)
        try:
            for threads in (1, 2, 3):
                points[threads, reads] = sample(x, grid, "nearest", padding, align, threads)
        finally:
            sampling.use_gathers(was)
    return points


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims", [(23, 37), (1, 1), (2, 3), (5, 1), (1, 6)], ids=str)
def test_nearest_by_8_points_bitwise_as_the_other_paths(dims, align, padding):
    """Where 512-bit code is not taken (here: the avx512 policy "never", as on a CPU without AVX-512), 2-D
    nearest of one to four f32 channels runs 8 points a vector over X's planes (simd_gather_path.h's
    irgrid_nearest8_f32; two to four channels only where an item has a gather path's block of 256
    points or more, grid_sample.c's points_pixel), read by gathers or by scalar loads: bitwise the gather
    path's and 8-channel pixels', at 1, 2 and 3 threads, with special coordinates among the points,
    coordinates past the edges and Inf and NaN in X's fifth channel, which no call reads; the ordinary
    points against onnxruntime. Items of fewer points take the gather path from two channels on."""
    rng = keyed_rng("nearest-8", dims, align, padding)
    x = rng.uniform(-1, 1, (2, 5, *dims)).astype(np.float32)
    x[:, 4] = np.where(rng.random(dims) < 0.5, np.inf, np.nan)
    grid = dyadic(rng, (2, 29, 31, 2), 1.3)  # 899 points an item
    expected = run_ort_grid_sample(x[:, :4].astype(np.float64), grid, "nearest", padding, align)
    ordinary = np.ones(grid.shape[:-1], bool)
    ordinary.reshape(-1)[100::97] = False
    grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    grid = grid.astype(np.float32)
    was = sampling.use_avx512("never"), sampling.use_interleave("auto")
    try:
        for channels in (1, 2, 3, 4):
            sampling.use_interleave("auto")
            assert sample_plan(x[:, :channels].shape, grid.shape, np.float32, "nearest", padding,
                               align).route(2) == "gather points"
            assert sample_plan(x[:, :channels].shape, (2, 15, 17, 2), np.float32, "nearest", padding,
                               align).route(2) == ("gather points" if channels == 1 else "gather"), channels
            points = _nearest_by_reads(x[:, :channels], grid, padding, align)
            got, gathered = _paths(x[:, :channels], grid, "nearest", padding, align)
            for key, out in points.items():
                assert out.tobytes() == gathered.tobytes() == got.tobytes(), (channels, key)
            np.testing.assert_array_equal(np.moveaxis(points[2, "never"], 1, -1)[ordinary],
                                          np.moveaxis(expected[:, :channels], 1, -1)[ordinary],
                                          err_msg=f"C={channels}")
    finally:
        sampling.use_avx512(was[0])
        sampling.use_interleave(was[1])


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims", [(23, 37), (1, 1), (2, 3), (5, 1), (1, 6), (40, 17)], ids=str)
def test_nearest_by_points_bitwise_as_the_other_paths(dims, align, padding):
    """On a CPU with AVX-512, 2-D nearest of one to four f32 channels with any padding runs by
    points (kernels/core/simd_nearest_points.h: one channel gathered 16 points at a time from X, two and
    four from a scratch of 2- and 4-channel pixels and a zero pixel; one and two read by gathers or by
    scalar loads): nearest's output is the tap's value itself, so bitwise the gather path's and 8-channel
    pixels', at 1, 2 and 3 threads (spans of points split among workers that each copy the plane), on
    planes down to one pixel, with coordinates to 1.3
    (taps past the edges) and special ones among the points (the scalar path's; with reflection 7.5
    folds more than once, which the vector runs leave to it), and Inf and NaN in X's
    fifth channel, which no call reads; the ordinary points against onnxruntime."""
    if not sampling.avx512_available():
        pytest.skip("nearest by points runs 16 points a vector: AVX-512")
    rng = keyed_rng("nearest-points", dims, align, padding)
    x = rng.uniform(-1, 1, (2, 5, *dims)).astype(np.float32)
    grid = dyadic(rng, (2, 29, 31, 2), 1.3)  # 899 points an item: past a 512-bit call's 512
    expected = run_ort_grid_sample(x[:, :4].astype(np.float64), grid, "nearest", padding, align)  # X's values
    ordinary = np.ones(grid.shape[:-1], bool)
    ordinary.reshape(-1)[100::97] = False
    grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    grid = grid.astype(np.float32)
    x[:, 4] = np.where(rng.random(dims) < 0.5, np.inf, np.nan)
    routes = {1: "gather points", 2: "interleaved 2 points", 3: "interleaved 4 points", 4: "interleaved 4 points"}
    for channels in (1, 2, 3, 4):
        sampling.use_interleave("auto")
        assert sample_plan(x[:, :channels].shape, grid.shape, np.float32, "nearest", padding,
                           align).route(2) == routes[channels]
        points = _nearest_by_reads(x[:, :channels], grid, padding, align)
        got, gathered = _paths(x[:, :channels], grid, "nearest", padding, align)  # ("always": 8-channel pixels)
        for (threads, reads), out in points.items():
            assert out.tobytes() == gathered.tobytes() == got.tobytes(), (channels, threads, reads)
        np.testing.assert_array_equal(np.moveaxis(points[2, "never"], 1, -1)[ordinary],
                                      np.moveaxis(expected[:, :channels], 1, -1)[ordinary], err_msg=f"C={channels}")


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims", [(23, 37), (2, 3), (1, 6), (40, 17), (7, 2), (5, 1)], ids=str)
def test_bilinear_by_pixels_bitwise_as_the_other_paths(dims, align, padding):
    """On a CPU with AVX-512, 2-D bilinear of two to four f32 channels with any padding, rows of 2 pixels
    or more and as many points an item as pixels a plane runs over a scratch of 2- and 4-channel pixels
    (kernels/core/simd_pairs_pixels.h: the pair run's taps, a row's two taps of every channel in one or
    two 16-byte loads): bitwise the pair run's (interleave "never") and 8-channel pixels' ("always"), at
    1, 2 and 3 threads, on planes down to one row, with coordinates to 1.3 (taps past the edges) and
    special ones among the points (the scalar path's), Inf and NaN in X's fifth channel, which no call
    reads; rows of one pixel keep the gather path. One channel with zeros or border padding runs over
    stacked rows (below); with reflection padding it keeps the pair run. The ordinary points against onnxruntime in
    f64."""
    if not sampling.avx512_available():
        pytest.skip("bilinear by pixels runs 16 points a vector: AVX-512")
    rng = keyed_rng("bilinear-pixels", dims, align, padding)
    x = rng.uniform(-1, 1, (2, 5, *dims)).astype(np.float32)
    grid = dyadic(rng, (2, 29, 31, 2), 1.3)  # 899 points an item: no fewer than a plane's pixels
    ordinary = np.ones(grid.shape[:-1], bool)
    expected = run_ort_grid_sample(x[:, :4].astype(np.float64), grid, "linear", padding, align)
    ordinary.reshape(-1)[100::97] = False
    grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    grid = grid.astype(np.float32)
    x[:, 4] = np.where(rng.random(dims) < 0.5, np.inf, np.nan)
    routes = {1: "gather", 2: "interleaved 2 points", 3: "interleaved 4 points", 4: "interleaved 4 points"}
    was = sampling.use_interleave("auto")
    try:
        for channels in (1, 2, 3, 4):
            sampling.use_interleave("auto")
            route = sample_plan(x[:, :channels].shape, grid.shape, np.float32, "linear", padding, align).route(2)
            want = "interleaved 2 points stacked" if channels == 1 and padding != "reflection" else routes[channels]
            assert route == (want if dims[1] >= 2 else "gather"), channels
            outs = [sample(x[:, :channels], grid, "linear", padding, align, threads) for threads in (1, 2, 3)]
            got, paired = _paths(x[:, :channels], grid, "linear", padding, align)  # ("always": 8-channel pixels)
            for threads, out in zip((1, 2, 3), outs):
                assert out.tobytes() == paired.tobytes() == got.tobytes(), (channels, threads)
            np.testing.assert_allclose(np.moveaxis(outs[1], 1, -1)[ordinary],
                                       np.moveaxis(expected[:, :channels], 1, -1)[ordinary],
                                       err_msg=f"C={channels}", **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


@pytest.mark.parametrize("padding", ["zeros", "border"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dims", [(1, 2), (2, 2), (23, 37), (40, 17), (7, 2), (64, 64)], ids=str)
def test_one_channel_bilinear_over_stacked_rows(dims, align, padding):
    """On a CPU with AVX-512, 2-D bilinear of one f32 channel with zeros or border padding and as many
    points an item as pixels a plane runs over stacked rows (kernels/core/simd_pairs_pixels.h: a pixel
    holds a row's value and the one below it, so that a point's four taps are one 16-byte load;
    grid_sample.c's irgrid_stack_rows). With zeros padding a zero row lies above and below the plane and
    a zero column left of each row, and the taps outside the plane read those zeros where the pair run's
    masks give +0; with border padding the last row and pixel stand in for the taps past them, as the
    pair run reads them. Bitwise the pair run's
    (interleave "never"), at 1, 2 and 3 threads, with a scratch a worker on a random grid and on a smooth
    warp of 16,384 points (where two to four channels share one), over two items, on planes down to one
    row of two pixels, with coordinates to 1.3 (taps past every edge, points far outside), special ones among
    the points, and Inf, NaN and -0 in X (read wherever a kept tap reads them, whatever its weight). On
    finite X the ordinary points against onnxruntime in f64; with zeros padding, X poisoned with Inf and
    NaN wherever no kept tap reads gives finite outputs, onnxruntime's on X with the poison zeroed."""
    if not sampling.avx512_available():
        pytest.skip("stacked rows run 16 points a vector: AVX-512")
    rng = keyed_rng("stacked-rows", dims, align, padding)
    height, width = dims
    side = max(128, height, width)  # 16,384 points and more: where two to four channels share a scratch
    rows, cols = np.meshgrid(np.linspace(-1.3, 1.3, side), np.linspace(-1.3, 1.3, side), indexing="ij")
    local = np.round(np.stack([cols, rows], -1) * 256) / 256
    grids = {"random": dyadic(rng, (2, max(29, height), max(31, width), 2), 1.3),  # points >= pixels an item
             "local": np.stack([local, local[::-1]])}
    x_clean = rng.uniform(-1, 1, (2, 1, *dims))
    x = x_clean.copy()
    x.reshape(-1)[rng.choice(x.size, max(1, x.size // 7), replace=False)] = rng.choice([np.inf, -np.inf, np.nan, -0.0],
                                                                                        max(1, x.size // 7))
    was = sampling.use_interleave("auto")
    try:
        for kind, grid64 in grids.items():
            ordinary = np.ones(grid64.shape[:-1], bool)
            ordinary.reshape(-1)[100::97] = False
            grid = grid64.copy()
            grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
            grid = grid.astype(np.float32)
            sampling.use_interleave("auto")
            plan = sample_plan(x.shape, grid.shape, np.float32, "linear", padding, align)
            assert plan.route(1, grid) == "interleaved 2 points stacked", kind
            assert plan.route(2, grid) == "interleaved 2 points stacked", kind  # a scratch a worker, even local
            outs = {t: sample(x.astype(np.float32), grid, "linear", padding, align, t) for t in (1, 2, 3)}
            clean = sample(x_clean.astype(np.float32), grid, "linear", padding, align, 2)
            sampling.use_interleave("never")
            assert plan.route(2, grid) == "gather"
            paired = sample(x.astype(np.float32), grid, "linear", padding, align, 2)
            for t, out in outs.items():
                assert same_bits(out, paired), (kind, t)
            expected = run_ort_grid_sample(x_clean, grid64, "linear", padding, align)
            np.testing.assert_allclose(np.moveaxis(clean, 1, -1)[ordinary], np.moveaxis(expected, 1, -1)[ordinary],
                                       err_msg=kind, **TOLERANCES[np.float32])
            sampling.use_interleave("auto")
            if padding == "zeros":  # (border reads the edge pixels for the taps past them)
                kept = kept_taps(grid64[0:1], dims, "linear", align)
                poisoned = np.where(rng.random((1, 1, *dims)) < 0.5, np.inf, np.nan)
                for index in kept:
                    poisoned[(0, 0, *index)] = x_clean[(0, 0, *index)]
                got = sample(poisoned.astype(np.float32), grid64[0:1].astype(np.float32), "linear", "zeros", align, 2)
                expected = run_ort_grid_sample(np.where(np.isfinite(poisoned), poisoned, 0), grid64[0:1], "linear",
                                               "zeros", align)
                assert np.isfinite(got).all(), kind
                np.testing.assert_allclose(got, expected, err_msg=kind, **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


def test_stacked_rows_only_where_their_scratch_fits():
    """Stacked rows hold (height + 1) x (width + 1) + 2 pixels of 8 bytes with zeros padding, more than the
    plane: points_pixel's 8 MiB cap (grid_sample.c's INTERLEAVE_MAX_BYTES) is on that scratch, so X
    1x1x1022x1023 takes them (1,047,554 pixels) and 1x1x1023x1023 (1,048,578; its plane alone 1,046,529)
    reads the plane by pairs. Both against onnxruntime."""
    if not sampling.avx512_available():
        pytest.skip("stacked rows run 16 points a vector: AVX-512")
    rng = keyed_rng("stacked-cap")
    was = sampling.use_interleave("auto")
    try:
        for height, want in ((1022, "interleaved 2 points stacked"), (1023, "gather")):
            x = rng.uniform(-1, 1, (1, 1, height, 1023)).astype(np.float32)
            grid = dyadic(rng, (1, height, 1023, 2), 1.05)
            plan = sample_plan(x.shape, grid.shape, np.float32, "linear", "zeros", False)
            assert plan.route(1) == want, height
            out = sample(x, grid.astype(np.float32), "linear", "zeros", False, 1)
            expected = run_ort_grid_sample(x.astype(np.float64), grid, "linear", "zeros", False)
            np.testing.assert_allclose(out, expected, **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


def test_stacked_rows_need_half_a_plane_of_points_a_thread():
    """Each worker copies the whole plane into its stacked rows (about 8 us of a 256 x 256 plane on Zen 4)
    and saves about 0.5 ns a point (grid_sample.c's points_pixel), so one channel takes them only where a
    call has half a plane's points a thread or more: more threads on a grid of the plane's size read X's
    plane by pairs (the gather path), a grid of twice the points or a batch of items keeps the stacked
    rows. The bits are the same either way, and the ordinary points onnxruntime's."""
    if not sampling.avx512_available():
        pytest.skip("stacked rows run 16 points a vector: AVX-512")
    rng = keyed_rng("stacked-threads")
    x = rng.uniform(-1, 1, (1, 1, 64, 64)).astype(np.float32)
    was = sampling.use_interleave("auto")
    try:
        for out_dims, batch, stacked_up_to in (((64, 64), 1, 2), ((128, 64), 1, 4), ((64, 64), 4, 8)):
            xb = np.repeat(x, batch, axis=0)
            grid = dyadic(rng, (batch, *out_dims, 2), 1.1)
            plan = sample_plan(xb.shape, grid.shape, np.float32, "linear", "zeros", False)
            for threads in (1, 2, 3, 4, 8):
                want = "interleaved 2 points stacked" if threads <= stacked_up_to else "gather"
                assert plan.route(threads) == want, (out_dims, batch, threads)
            outs = [sample(xb, grid.astype(np.float32), "linear", "zeros", False, t) for t in (1, 2, 3, 4, 8)]
            assert all(out.tobytes() == outs[0].tobytes() for out in outs), out_dims
            expected = run_ort_grid_sample(xb.astype(np.float64), grid, "linear", "zeros", False)
            np.testing.assert_allclose(outs[0], expected, **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


@pytest.mark.parametrize("x_shape, dtype", [((1, 8, 64, 64), np.float32), ((1, 4, 64, 64), np.float64),
                                            ((1, 8, 16, 16, 16), np.float32), ((1, 16, 64, 64), np.float32)],
                         ids=["2d-f32", "2d-f64", "3d-f32", "2d-f32-16"])
def test_more_threads_than_groups_share_one_scratch(x_shape, dtype):
    """Where four workers or more would each copy the same channel group's plane into a scratch of their
    own (an item's points split into spans among more threads than it has groups), they share one scratch
    of it instead, copied once in pieces (grid_sample.c's shared_many); a grid of too few points for four
    spans keeps a scratch a worker, and so does a batch of items with a worker or more each. Every route
    gives the same bits, and onnxruntime's values. 16 f32 channels are one group of 16-lane pixels with
    AVX-512 (whose shared copy once took the 8-lane copy: wrong values from 4 workers on), two of 8 without."""
    rng = keyed_rng("shared-many", x_shape, np.dtype(dtype).name)
    channels = x_shape[1]
    lanes = 4 if dtype == np.float64 else 16 if channels > 8 and sampling.avx512_available() else 8
    groups = channels // lanes
    rank = len(x_shape) - 2
    out_dims = (64, 64) if rank == 2 else (16, 16, 16)  # 4096 points: four spans of 1024
    was = sampling.use_interleave("auto")
    try:
        for batch, dims, shared_from in ((1, out_dims, 4 * groups), (1, out_dims[:-1] + (8,), None),
                                         (4, out_dims, 16 * groups)):
            x = rng.uniform(-1, 1, (batch, *x_shape[1:])).astype(dtype)
            grid = dyadic(rng, (batch, *dims, rank), 1.1).astype(dtype)
            plan = sample_plan(x.shape, grid.shape, dtype, "linear", "zeros", False)
            for threads in (1, 2, 3, 4, 8, 16):
                shared = shared_from is not None and threads >= shared_from
                assert plan.route(threads, grid) == f"{'shared' if shared else 'interleaved'} {lanes}", (batch, dims, threads)
            outs = [plan(x, grid, None, t) for t in (1, 2, 3, 4, 8, 16)]
            assert all(out.tobytes() == outs[0].tobytes() for out in outs), (batch, dims)
            expected = run_ort_grid_sample(x.astype(np.float64), grid.astype(np.float64), "linear", "zeros", False)
            np.testing.assert_allclose(outs[0], expected, **TOLERANCES[np.dtype(dtype).type])
    finally:
        sampling.use_interleave(was)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("channels", [2, 3, 4])
def test_few_channel_pixels_need_points_a_thread(mode, channels):
    """Each worker's scratch of few-channel pixels is a copy of the plane, so more threads on a grid of the
    plane's size read X's planes (the gather path) past where the copies outweigh what the points save
    (grid_sample.c's points_pixel): half a plane's points a thread, a quarter at four channels. A batch
    of items keeps the pixels; a local grid (an identity warp) keeps them in one shared scratch whose copy
    the workers split. Every route gives the same bits, and the ordinary points onnxruntime's."""
    if not sampling.avx512_available():
        pytest.skip("the runs by points of two to four channels run 16 points a vector: AVX-512")
    rng = keyed_rng("pixel-threads", mode, channels)
    pixel = 2 if channels == 2 else 4
    pixels_up_to = 4 if channels == 4 else 2
    centres = (2 * np.arange(128) + 1) / 128 - 1
    identity = np.stack(np.meshgrid(centres, centres), axis=-1)[None]  # (x, y) of each pixel's centre
    was = sampling.use_interleave("auto")
    try:
        for side, batch, grid, want in (
                (64, 1, dyadic(rng, (1, 64, 64, 2), 1.1), lambda t: f"interleaved {pixel} points"
                 if t <= pixels_up_to else "gather"),
                (64, 8, dyadic(rng, (8, 64, 64, 2), 1.1), lambda t: f"interleaved {pixel} points"),
                (128, 1, identity, lambda t: f"interleaved {pixel} points" if t == 1 else f"shared {pixel} points")):
            x = rng.uniform(-1, 1, (batch, channels, side, side)).astype(np.float32)
            grid = grid.astype(np.float32)
            plan = sample_plan(x.shape, grid.shape, np.float32, mode, "zeros", False)
            for threads in (1, 2, 3, 4, 5, 8):
                assert plan.route(threads, grid) == want(threads), (side, batch, threads)
            outs = [plan(x, grid, None, t) for t in (1, 2, 3, 4, 5, 8)]
            assert all(out.tobytes() == outs[0].tobytes() for out in outs), (side, batch)
            expected = run_ort_grid_sample(x.astype(np.float64), grid.astype(np.float64), mode, "zeros", False)
            np.testing.assert_allclose(outs[0], expected, **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_few_points_an_item_read_the_planes(mode):
    """2-D nearest and bilinear of two to four channels take a scratch of few-channel pixels only where an
    item has as many points as its plane has pixels: copying the plane costs more than it saves with
    fewer (RAFT's lookups of 81 points an item of 2,852 pixels took 3.1x the time for nearest,
    grid_sample.c's points_pixel). Fewer read X's planes (the gather path), at 1 and 2 threads, and match
    onnxruntime; a grid of as many points takes the scratch."""
    if not sampling.avx512_available():
        pytest.skip("the runs by points of two to four channels run 16 points a vector: AVX-512")
    rng = keyed_rng("few-points", mode)
    x = rng.uniform(-1, 1, (3, 4, 46, 62)).astype(np.float32)
    was = sampling.use_interleave("auto")
    try:
        for out_dims, route in (((9, 9), "gather"), ((45, 63), "gather"), ((46, 62), "interleaved")):
            grid = dyadic(rng, (3, *out_dims, 2), 1.1)
            for channels in (2, 3, 4):
                plan = sample_plan((3, channels, 46, 62), grid.shape, np.float32, mode, "zeros", False)
                pixel = 2 if channels == 2 else 4
                want = route if route == "gather" else f"{route} {pixel} points"
                assert plan.route(1) == plan.route(2) == want, (out_dims, channels)
                expected = run_ort_grid_sample(x[:, :channels].astype(np.float64), grid, mode, "zeros", False)
                for threads in (1, 2):
                    got = sample(x[:, :channels], grid.astype(np.float32), mode, "zeros", False, threads)
                    np.testing.assert_allclose(got, expected, **TOLERANCES[np.float32])
    finally:
        sampling.use_interleave(was)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_nearest_by_points_shares_a_scratch_on_local_grids(align, padding):
    """2-D nearest of two to four f32 channels at two or more threads shares one scratch among the workers
    where the grid is local (grid_sample.c's shared_pixels: each worker's points read mostly the part of
    the plane it copies; judged per call from the grid's values) and keeps a scratch a worker on a random
    grid: bitwise the gather path's and one thread's either way, at 2 and 3 threads, two items, special
    coordinates and coordinates past the edges among the points; the ordinary points against
    onnxruntime."""
    if not sampling.avx512_available():
        pytest.skip("nearest by points of two to four channels runs 16 points a vector: AVX-512")
    rng = keyed_rng("nearest-shared", align, padding)
    x = rng.uniform(-1, 1, (2, 4, 70, 90)).astype(np.float32)
    rows, cols = np.meshgrid(np.linspace(-1.05, 1.05, 130), np.linspace(-1.05, 1.05, 150), indexing="ij")
    turn = 0.15
    local = np.stack([np.cos(turn) * cols - np.sin(turn) * rows, np.sin(turn) * cols + np.cos(turn) * rows], -1)
    local = np.broadcast_to(local, (2, *local.shape)).copy()  # 19,500 points an item: past SHARED_MIN_POINTS
    scattered = rng.uniform(-1.1, 1.1, local.shape)
    for grid, route in ((local, "shared"), (scattered, "interleaved")):
        size = np.array(x.shape[:1:-1], float)  # the grid lists the innermost dim first
        pixel = (grid + 1) / 2 * (size - 1) if align else ((grid + 1) * size - 1) / 2
        ordinary = (np.abs(pixel - np.floor(pixel) - 0.5) > 1e-3).all(-1)  # no rounding ties
        expected = run_ort_grid_sample(x.astype(np.float64), grid, "nearest", padding, align)
        ordinary.reshape(-1)[100::97] = False
        grid = grid.copy()
        grid.reshape(-1, 2)[100::97, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
        grid = grid.astype(np.float32)
        was = sampling.use_interleave("auto")
        try:
            for channels in (2, 3, 4):
                plan = sample_plan((2, channels, 70, 90), grid.shape, np.float32, "nearest", padding, align)
                pixel_floats = 2 if channels == 2 else 4
                assert plan.route(2, grid) == f"{route} {pixel_floats} points", channels
                assert plan.route(1, grid) == plan.route(2) == f"interleaved {pixel_floats} points"
                outs = [sample(x[:, :channels], grid, "nearest", padding, align, threads) for threads in (1, 2, 3)]
                sampling.use_interleave("never")
                gathered = sample(x[:, :channels], grid, "nearest", padding, align, 2)
                sampling.use_interleave("auto")
                for threads, out in zip((1, 2, 3), outs):
                    assert out.tobytes() == gathered.tobytes(), (route, channels, threads)
                np.testing.assert_array_equal(np.moveaxis(outs[1], 1, -1)[ordinary],
                                              np.moveaxis(expected[:, :channels], 1, -1)[ordinary])
        finally:
            sampling.use_interleave(was)


@DTYPES
@pytest.mark.parametrize("padding", PADDINGS)
def test_3d_cubic_streams_a_large_output(padding, dtype, pixels):
    """A channel group's output of 1 MiB or more whose planes start on 64-byte lines (a fresh
    output's) goes out a pair of blocks at a time with non-temporal stores, binned or not
    (simd_gather_body.h, IRGRID_STREAM_MIN_BYTES): bitwise the values regular stores write into an
    `out` 16 bytes past a line, at 1 and 2 threads, special coordinates among the points (the scalar
    path writes theirs after the stream); the first row of points against onnx.reference. 9
    channels: a streamed group and a group of 1 (regular stores)."""
    rng = keyed_rng("cubic3d-stream", padding)
    grid = dyadic(rng, (1, 2, 128, 129, 3), 1.3, oracle_step(3, "cubic"))  # 33024 points
    x = rng.uniform(-1, 1, (1, 9, 4, 5, 6))
    if padding == "border":  # within the pixel range, as onnx.reference's clamping needs (above)
        edge = 1 - 1 / np.array(x.shape[:1:-1], float)
        grid = np.clip(grid, -edge, edge)
    expected = run_onnx_reference(x, grid[:, :1, :1], "cubic", padding, False)
    grid.reshape(-1, 3)[1000::997, rng.integers(0, 3)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(dtype), grid.astype(dtype)
    plan = sample_plan(x.shape, grid.shape, dtype, "cubic", padding, False)
    unaligned = unaligned_out(plan.out_shape, dtype)
    was = sampling.use_binning("never")
    try:
        plan(x, grid, unaligned, 2)
        for policy in ("never", "always"):  # the run's stores; binned, irgrid_unbin's
            sampling.use_binning(policy)
            for threads in (1, 2):
                streamed = plan(x, grid, None, threads)
                assert streamed.ctypes.data % 64 == 0
                assert streamed.tobytes() == unaligned.tobytes()
    finally:
        sampling.use_binning(was)
    np.testing.assert_allclose(unaligned[:, :, :1, :1], expected, **TOLERANCES[dtype])


def _streams_alike(plan, x, grid, reference=None) -> np.ndarray:
    """Checks that the f32 plan's output is bitwise `reference` (default: its first fresh output) at 1 and 2
    threads, into a fresh output (on a 64-byte line, where a large one is streamed) and into outputs 16 and
    32 bytes past a line; returns the reference."""
    for threads in (1, 2):
        streamed = plan(x, grid, None, threads)
        assert streamed.ctypes.data % 64 == 0
        reference = streamed if reference is None else reference
        assert streamed.tobytes() == reference.tobytes()
        for offset in (16, 32):
            unaligned = unaligned_out(plan.out_shape, np.float32, offset)
            plan(x, grid, unaligned, threads)
            assert unaligned.tobytes() == reference.tobytes(), offset
    return reference


@pytest.mark.parametrize("rank,mode", [(2, "nearest"), (2, "linear"), (3, "linear")])
def test_16_channel_pixels_stream_a_large_output(rank, mode):
    """On a CPU with AVX-512 a call of more than 8 f32 channels takes 16-channel pixels by default, and a
    group's output of 1 MiB or more whose planes are 64-byte multiples goes out a block (16 points, a
    line per channel) at a time with non-temporal stores (simd_interleave.h), after a first block up to
    the next line where the output starts off one: bitwise the same into a fresh output (on a line) and
    into outputs 16 and 32 bytes past a line, and the gather path's (regular stores), at 1 and 2
    threads, special coordinates among the points (the scalar path writes theirs after the stream); the
    first points against onnxruntime. 17 channels: a streamed group and a group of 1 (regular stores)."""
    rng = keyed_rng("wide-stream", rank, mode)
    out_dims = (128, 129) if rank == 2 else (2, 64, 129)  # 16512 points: 16 channels' output 1 MiB
    grid = dyadic(rng, (1, *out_dims, rank), 1.3, oracle_step(rank, mode))
    x = rng.uniform(-1, 1, (1, 17, *((9, 10) if rank == 2 else (5, 6, 7))))
    first = grid.reshape(1, *(1,) * (rank - 1), -1, rank)[..., :64, :]
    expected = run_ort_grid_sample(x, first, mode, "zeros", False)
    grid.reshape(-1, rank)[1000::997, rng.integers(0, rank)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    plan = sample_plan(x.shape, grid.shape, np.float32, mode, "zeros", False)
    _, gathered = _paths(x, grid, mode, "zeros", False)
    _streams_alike(plan, x, grid, gathered)
    np.testing.assert_allclose(gathered.reshape(1, 17, -1)[:, :, :64], expected.reshape(1, 17, -1),
                               **TOLERANCES[np.float32])


@pytest.mark.parametrize("rank,out_dims", [(2, (256, 513)), (3, (4, 128, 257)), (2, (512, 513))],
                         ids=["2-D", "3-D", "2-D shared scratch"])
def test_8_channel_pixels_stream_a_large_output(rank, out_dims):
    """With 8-channel pixels (the avx512 policy "never"), linear's interleaved run streams a group's
    output of 4 MiB or more on a scattered grid two blocks (a line a channel) at a time with
    non-temporal stores (simd_interleave.h, IRGRID_STREAM_SCATTERED_MIN_BYTES; grid_sample.c's
    stream_output), the first block held; from the first whole line where the output starts 32 bytes
    past one, as OpenVINO hands it: bitwise the same into a fresh output (on a line) and into outputs 16
    bytes (regular stores) and 32 bytes past a line, and the gather path's, at 1 and 2 threads, special
    coordinates among the points (the scalar path writes theirs after the stream); the first points
    against onnxruntime. 9 channels: a streamed group and a group of 1 (regular stores). A 512 x 513
    grid over a 512 x 512 plane takes the shared scratch. A smooth grid of the same size is not streamed,
    nor a smaller output, whatever the binning policy."""
    rng = keyed_rng("pairs-stream", rank, *out_dims)
    grid = dyadic(rng, (1, *out_dims, rank), 1.3, oracle_step(rank, "linear"))  # 131328 points or more
    spatial = ((512, 512) if out_dims[0] == 512 else (9, 10)) if rank == 2 else (5, 6, 7)
    x = rng.uniform(-1, 1, (1, 9, *spatial))
    first = grid.reshape(1, *(1,) * (rank - 1), -1, rank)[..., :64, :]
    expected = run_ort_grid_sample(x, first, "linear", "zeros", False)
    grid.reshape(-1, rank)[1000::997, rng.integers(0, rank)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    was = sampling.use_avx512("never")
    try:
        sampling.use_interleave("auto")
        plan = sample_plan(x.shape, grid.shape, np.float32, "linear", "zeros", False)
        route = "shared 8" if out_dims[0] == 512 else "interleaved 8"
        assert plan.route(2, grid) == route + " streamed"
        smooth = np.broadcast_to(np.stack(np.meshgrid(*[np.linspace(-1, 1, n, dtype=np.float32)
                                                         for n in out_dims], indexing="ij")[::-1], -1), grid.shape)
        fewer = np.ascontiguousarray(grid[..., :out_dims[-2] // 4, :, :])  # 1-2 MiB a group
        for policy in ("never", "always", "auto"):
            sampling.use_binning(policy)
            assert plan.route(2, grid) == route + " streamed"
            assert plan.route(2, smooth) == route
            assert sample_plan(x.shape, fewer.shape, np.float32, "linear", "zeros", False).route(2, fewer) == route
        _, gathered = _paths(x, grid, "linear", "zeros", False)
        _streams_alike(plan, x, grid, gathered)
    finally:
        sampling.use_avx512(was)
        sampling.use_binning("auto")
    np.testing.assert_allclose(gathered.reshape(1, 9, -1)[:, :, :64], expected.reshape(1, 9, -1),
                               **TOLERANCES[np.float32])


def test_2d_cubic_rows_stream_a_large_output_on_a_scattered_grid(pixels):
    """2-D cubic's row runs, of 8- and 16-channel pixels, stream a group's output of 4 MiB or more on a
    grid the plan judges scattered (grid_sample.c's stream_output, simd_cubic.h): bitwise the values
    regular stores write into outputs 16 and 32 bytes past a line, at 1 and 2 threads, special
    coordinates among the points; the first points against onnxruntime. 17 channels: streamed groups and
    a group of 1 (regular stores). A smooth grid of the same size is not streamed."""
    rng = keyed_rng("cubic2d-stream", pixels)
    grid = dyadic(rng, (1, 256, 513, 2), 1.3, oracle_step(2, "cubic"))  # 131328 points: 8 channels 4.2 MiB
    x = rng.uniform(-1, 1, (1, 17, 9, 10))
    expected = run_ort_grid_sample(x, grid.reshape(1, 1, -1, 2)[..., :64, :], "cubic", "zeros", False)
    grid.reshape(-1, 2)[1000::997, rng.integers(0, 2)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    plan = sample_plan(x.shape, grid.shape, np.float32, "cubic", "zeros", False)
    lanes = 16 if pixels == "always" and sampling.avx512_available() else 8
    assert plan.route(2, grid) == f"interleaved {lanes} rows streamed"
    smooth = np.broadcast_to(np.stack(np.meshgrid(np.linspace(-1, 1, 513, dtype=np.float32),
                                                  np.linspace(-1, 1, 256, dtype=np.float32)), -1), grid.shape)
    assert plan.route(2, smooth) == f"interleaved {lanes} rows"
    streamed = _streams_alike(plan, x, grid)
    np.testing.assert_allclose(streamed.reshape(1, 17, -1)[:, :, :64], expected.reshape(1, 17, -1),
                               **TOLERANCES[np.float32])


@DTYPES
@pytest.mark.parametrize("align", [False, True])
def test_3d_cubic_dropped_taps_read_the_zero_pixel(align, dtype):
    check_dropped_taps(3, "cubic", align, dtype, (4, 6, 5), channels=9)


@DTYPES
@CUBIC_AXES
def test_cubic_zeros_padding_across_each_edge(rank, axis, dtype):
    """With zeros padding a point's first tap (floor - 1) lies within 3 pixels before a dim's first
    pixel and its last pixel, or the point reads the zero window (simd_gather_body.h's
    irgrid_cubic_window, 2-D and 3-D): pixel coordinates from -5 to L + 4 in quarter steps along one
    axis (first taps -7 .. L + 2), the other axes within the image, against CUBIC_ORACLE."""
    rng = keyed_rng("cubic-edges", rank, axis)
    dims = CUBIC_DIMS[rank]
    length = dims[::-1][axis]  # the grid lists x first
    sweep = np.arange(-5, length + 4, 0.25)
    grid = rng.integers(0, 16, (1, *(1,) * (rank - 2), len(sweep), 2, rank)) / 16 * 1.5 - 0.75
    grid[..., axis] = ((2 * sweep + 1) / length - 1)[:, None]
    x = rng.uniform(-1, 1, (1, 9, *dims))
    expected = CUBIC_ORACLE[rank](x, grid, "cubic", "zeros", False)
    got = sample(x.astype(dtype), grid.astype(dtype), "cubic", "zeros", False, threads=2)
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


@DTYPES
@pytest.mark.parametrize("align", [False, True])
@CUBIC_AXES
def test_cubic_border_far_outside_reads_the_edge(rank, axis, align, dtype):
    """Border padding clamps each tap, so a point whose four taps along one axis all lie past an edge
    reads that edge's pixels with weights summing to 1: the value at the edge pixel's centre, where
    the oracles (which clamp the coordinate instead, docs/semantics.md) agree, their weights there
    being (0, 1, 0, 0). 2-D and 3-D (the row runs' per-dim offsets, irgrid_cubic_taps)."""
    rng = keyed_rng("cubic-border-far", rank, axis, align)
    dims = CUBIC_DIMS[rank]
    length = dims[::-1][axis]
    x = rng.uniform(-1, 1, (1, 9, *dims))
    grid = rng.integers(0, 16, (1, *(2,) * (rank - 2), 3, 16, rank)) / 16 * 1.5 - 0.75
    pixels = np.concatenate([np.arange(-40.0, -4.0, 2.25), np.arange(length + 3.0, length + 40, 2.25)])[:16]
    edge = np.where(pixels < 0, 0, length - 1)
    normalise = (lambda p: 2 * p / (length - 1) - 1) if align else (lambda p: (2 * p + 1) / length - 1)
    far, at_edge = grid.copy(), grid.copy()
    far[..., axis] = normalise(pixels)
    at_edge[..., axis] = normalise(edge)
    expected = CUBIC_ORACLE[rank](x, at_edge, "cubic", "border", align)
    got = sample(x.astype(dtype), far.astype(dtype), "cubic", "border", align, threads=2)
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


@DTYPES
@pytest.mark.parametrize("coordinate", [1e5, -1e5, 7.5])
@CUBIC_AXES
def test_cubic_reflection_far_outside_reads_nothing(rank, axis, coordinate, dtype):
    """Points more than one reflection fold outside the image, yet within the vector path's range,
    go to the scalar path; the vector path's taps for them must read nothing. 3-D cubic's x taps once
    did (at offsets up to 32 * 2.5e5 bytes from the scratch here: a segfault on this machine for 1e5)."""
    rng = keyed_rng("cubic-far", rank, axis, coordinate)
    x = rng.uniform(-1, 1, (1, 8, *(4, 6, 5)[3 - rank:])).astype(dtype)
    grid = dyadic(rng, (1, *(2,) * (rank - 1), 8, rank), 1.3, oracle_step(rank, "cubic"))
    grid[..., axis].reshape(-1)[::3] = coordinate
    got = sample(x, grid.astype(dtype), "cubic", "reflection", False, threads=1)
    expected = CUBIC_ORACLE[rank](x.astype(float), grid, "cubic", "reflection", False)
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])


@DTYPES
@pytest.mark.parametrize("batch,channels", [(1, 8), (3, 17)])
def test_3d_cubic_threads_and_spans_bitwise_identical(batch, channels, dtype, pixels):
    rng = keyed_rng("threads-cubic3d", batch, channels)
    x = rng.uniform(-1, 1, (batch, channels, 9, 10, 11)).astype(dtype)
    grid = rng.uniform(-1.1, 1.1, (batch, 3001, 1, 1, 3)).astype(dtype)
    grid.reshape(-1)[::97] = np.nan
    one = sample(x, grid, "cubic", "reflection", False, threads=1)
    two = sample(x, grid, "cubic", "reflection", False, threads=2)
    assert one.tobytes() == two.tobytes()


@DTYPES
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_3d_cubic_binned_points_bitwise_identical(padding, align, dtype, pixels):
    """3-D cubic's binned run (a scattered grid's points in tile order, then put back: binning.pxd)
    gives every point the same bits as the unbinned run: random and special coordinates (the scalar
    path's points written by point), two items, a partial channel group, more points than one binning
    chunk holds (sampling.pyx's BIN_CAPACITY, 32768) and 1 or 2 threads."""
    rng = keyed_rng("binned-cubic3d", padding, align, dtype)
    x = rng.uniform(-1, 1, (2, 11, 7, 9, 20)).astype(dtype)
    grid = rng.uniform(-1.2, 1.2, (2, 32768 + 4099, 1, 1, 3))
    flat = grid.reshape(-1, 3)
    special = rng.random(flat.shape[0]) < 0.02
    flat[special, rng.integers(3, size=special.sum())] = rng.choice(SPECIALS, special.sum())
    grid = grid.astype(dtype)
    was = sampling.use_binning("always")
    try:
        binned = [sample(x, grid, "cubic", padding, align, threads) for threads in (1, 2)]
        sampling.use_binning("never")
        plain = sample(x, grid, "cubic", padding, align, 2)
    finally:
        sampling.use_binning(was)
    assert binned[0].tobytes() == plain.tobytes()
    assert binned[1].tobytes() == plain.tobytes()


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("channels", [1, 3])
def test_3d_cubic_points_binned_bitwise_identical(channels, padding):
    """3-D cubic over one-channel pixels on a scattered grid bins its points by default where the volume
    is large enough (grid_sample.c's points_bins_pay; tiles of 2 planes x 8 rows x a whole row), each
    chunk's outputs a plane a channel, put back by point: the same bits as unbinned, with two items, more
    points than a chunk holds (32768), special coordinates (the scalar path's points) and 1 to 3 threads;
    ordinary points against onnx.reference."""
    rng = keyed_rng("binned-points", channels, padding)
    x = rng.uniform(-1, 1, (2, channels, 30, 40, 41)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (2, 32768 + 4099, 1, 1, 3)).astype(np.float32)
    if padding == "border":  # within the pixel range, as onnx.reference's clamping needs (above)
        edge = 1 - 1 / np.array(x.shape[:1:-1], np.float32)
        grid = np.clip(grid, -edge, edge)
    checked = 64  # points an item against onnx.reference (15-40 ms a point); the bitwise checks see every one
    expected = run_onnx_reference(x.astype(float), grid[:, :checked].astype(float), "cubic", padding, False)
    grid[:, 400::97, 0, 0, rng.integers(0, 3)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    assert sample_plan(x.shape, grid.shape, np.float32, "cubic", padding, False).route(2) == \
        f"binned {channels} rows"
    binned = [sample(x, grid, "cubic", padding, False, threads) for threads in (1, 2, 3)]
    was = sampling.use_binning("never")
    try:
        plain = sample(x, grid, "cubic", padding, False, 2)
    finally:
        sampling.use_binning(was)
    for out in binned:
        assert out.tobytes() == plain.tobytes()
    np.testing.assert_allclose(plain[:, :, :checked], expected, **TOLERANCES[np.float32])


@DTYPES
def test_3d_cubic_binned_in_taller_tiles_bitwise_identical(dtype):
    """A volume of more rows than a span has points (binning.pxd's `tiling` then bins by 2 rows, not 1):
    binned, the same bits as unbinned."""
    rng = keyed_rng("binned-cubic3d-rows", dtype)
    x = rng.uniform(-1, 1, (1, 8, 178, 178, 7)).astype(dtype)
    grid = rng.uniform(-1.1, 1.1, (1, 40000, 1, 1, 3)).astype(dtype)
    was = sampling.use_binning("always")
    try:
        binned = sample(x, grid, "cubic", "zeros", False, 2)
        sampling.use_binning("never")
        plain = sample(x, grid, "cubic", "zeros", False, 2)
    finally:
        sampling.use_binning(was)
    assert binned.tobytes() == plain.tobytes()


@pytest.mark.parametrize("channels, threads", [(19, 2), (19, 3), (24, 2)])
def test_3d_cubic_binned_groups_share_sorted_chunks_bitwise_identical(channels, threads, pixels):
    """A scattered grid with several channel groups, batch items and threads, judged scattered by the
    default policy: each chunk of an item's points is sorted once (sampling.pyx's sort_chunk) and
    sampled by every group's units, on any thread. The same bits as unbinned, with a partial last
    group."""
    rng = keyed_rng("binned-shared", channels, threads)
    x = rng.uniform(-1, 1, (2, channels, 9, 12, 21)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (2, 3, 100, 41, 3)).astype(np.float32)
    binned = sample(x, grid, "cubic", "border", False, threads)
    was = sampling.use_binning("never")
    try:
        plain = sample(x, grid, "cubic", "border", False, 1)
    finally:
        sampling.use_binning(was)
    assert binned.tobytes() == plain.tobytes()


def test_3d_cubic_binned_segments_bitwise_identical(pixels):
    """More points than one binning segment holds (sampling.pyx's BIN_SEGMENT, 2**20: each item's points
    are sorted and sampled a segment at a time, so that the sort's buffers stay bounded): binned, the
    same bits as unbinned, at 1 and 2 threads (in 16-channel pixels one group for two workers, its row
    scratch shared: rounds per segment and group)."""
    rng = keyed_rng("binned-segments")
    x = rng.uniform(-1, 1, (1, 9, 5, 6, 7)).astype(np.float32)
    grid = rng.uniform(-1.1, 1.1, (1, (1 << 20) + 40000, 1, 1, 3)).astype(np.float32)
    was = sampling.use_binning("always")
    try:
        binned = [sample(x, grid, "cubic", "zeros", False, threads) for threads in (1, 2)]
        sampling.use_binning("never")
        plain = sample(x, grid, "cubic", "zeros", False, 2)
    finally:
        sampling.use_binning(was)
    assert binned[0].tobytes() == plain.tobytes()
    assert binned[1].tobytes() == plain.tobytes()


@DTYPES
@pytest.mark.parametrize("padding", PADDINGS)
def test_3d_cubic_shared_row_scratch_bitwise_as_a_scratch_a_worker(padding, dtype):
    """A scattered grid's binned run over one channel group (f64: 4 channels a pixel; f32: 5 to 8 channels)
    at 2 and 3 threads shares one row scratch among the workers (per round the group's planes copied in
    pieces, then its spans): the same bits as 1 thread (a scratch of its own) and as unbinned, two items,
    special coordinates among the points; ordinary ones against onnx.reference."""
    rng = keyed_rng("rows-shared", padding, dtype)
    channels = 4 if dtype == np.float64 else 6
    x = rng.uniform(-1, 1, (2, channels, 7, 9, 10))
    grid = dyadic(rng, (2, 5000, 1, 1, 3), 1.2, oracle_step(3, "cubic"))
    if padding == "border":  # within the pixel range, as onnx.reference's clamping needs (above)
        edge = 1 - 1 / np.array(x.shape[:1:-1], float)
        grid = np.clip(grid, -edge, edge)
    checked = 64  # points an item against onnx.reference (15-40 ms a point); the bitwise checks see every one
    expected = run_onnx_reference(x, grid[:, :checked], "cubic", padding, False)
    grid[:, 300::97, 0, 0, rng.integers(0, 3)] = SPECIALS[rng.integers(0, len(SPECIALS))]
    x, grid = x.astype(dtype), grid.astype(dtype)
    plan = sample_plan(x.shape, grid.shape, dtype, "cubic", padding, False)
    lanes = 4 if dtype == np.float64 else 8
    assert plan.route(2, grid) == f"binned {lanes} rows shared" and plan.route(1, grid) == f"binned {lanes} rows"
    one = plan(x, grid, None, 1)
    for threads in (2, 3):
        assert same_bits(plan(x, grid, None, threads), one), threads
    was = sampling.use_binning("never")
    try:
        assert same_bits(sample(x, grid, "cubic", padding, False, 2), one)
    finally:
        sampling.use_binning(was)
    np.testing.assert_allclose(one[:, :, :checked], expected, **TOLERANCES[dtype])


def _smooth_3d_grid(rng, shape: tuple) -> np.ndarray:
    """A smooth warp of normalised coordinates (batch, D, H, W, 3) over [-1.05, 1.05], on multiples of 1/16."""
    axes = [np.linspace(-1, 1, n) for n in shape[1:4]]
    z, y, x = np.meshgrid(*axes, indexing="ij")
    base = np.stack([x, y, z], -1)
    warp = base + 0.05 * np.sin(3 * base[..., ::-1]) + 0.01 * rng.standard_normal(base.shape)
    return np.broadcast_to(np.round(warp * 16) / 16, shape).copy()


@pytest.mark.parametrize("dims", [(9, 10, 11), (3, 12, 11)], ids=str)
@pytest.mark.parametrize("padding", PADDINGS)
def test_3d_cubic_16_channel_pixels_bitwise_as_8(padding, dims):
    """On a CPU with AVX-512, 3-D cubic of more than 8 f32 channels runs over a row scratch of 16-channel
    pixels by default where it is within 8 MiB (grid_sample.c's wide_pixels): every channel's sums are
    those of 8-channel pixels, so bitwise the same outputs, binned or not (by planes outermost, or with
    fewer planes than rows by rows), at 1 to 3 threads (with fewer groups than threads the binned run's
    row scratch is shared), on a smooth and a random grid, with 17 channels (a group of 1) and 12 (one
    partial group), special coordinates among the points; the ordinary ones against onnx.reference. On
    Zen 4 (AMD family 0x19) a random grid keeps 8-channel pixels where 16-channel ones would leave fewer
    groups than workers and 8-channel ones would not (cpu.h's irgrid_cpu_groups_apart)."""
    if not sampling.avx512_available():
        pytest.skip("16-channel pixels need AVX-512")
    rng = keyed_rng("cubic3d-wide", padding, dims)
    x = rng.uniform(-1, 1, (2, 17, *dims))
    grids = {"random": dyadic(rng, (2, 7, 9, 13, 3), 1.3, oracle_step(3, "cubic")),
             "smooth": _smooth_3d_grid(rng, (2, 7, 9, 13, 3))}
    was = sampling.use_avx512("auto"), sampling.use_binning("auto")
    try:
        for kind, grid in grids.items():
            if padding == "border":  # within the pixel range, as onnx.reference's clamping needs (above)
                edge = 1 - 1 / np.array(x.shape[:1:-1], float)
                grid = np.clip(grid, -edge, edge)
            expected = np.moveaxis(run_onnx_reference(x, grid[:, :2], "cubic", padding, False), 1, -1)
            ordinary = np.ones(grid.shape[:-1], bool)
            ordinary.reshape(-1)[100::97] = False
            grid = grid.astype(np.float32)
            grid.reshape(-1, 3)[100::97, rng.integers(0, 3)] = SPECIALS[rng.integers(0, len(SPECIALS))]
            for channels in (17, 12):
                xc = x[:, :channels].astype(np.float32)
                sampling.use_avx512("never")
                narrow = sample(xc, grid, "cubic", padding, False, 2)
                sampling.use_avx512("auto")
                plan = sample_plan(xc.shape, grid.shape, np.float32, "cubic", padding, False)
                assert plan.route(1, grid) == "binned 16 rows"
                if kind == "random":  # fewer 16-channel groups than workers: shared, or on Zen 4 a group a worker
                    for threads in (2, 3):
                        fewer = -(-channels // 16) < threads
                        apart = fewer and sampling.amd_family() == 0x19 and -(-channels // 8) >= threads
                        assert plan.route(threads, grid) == ("binned 8 rows" if apart else
                                                             "binned 16 rows shared" if fewer else
                                                             "binned 16 rows"), (channels, threads)
                for binning in ("never", "auto", "always"):
                    sampling.use_binning(binning)
                    for threads in (1, 2, 3):
                        wide = sample(xc, grid, "cubic", padding, False, threads)
                        assert same_bits(wide, narrow), (kind, channels, binning, threads)
                sampling.use_binning("auto")
                np.testing.assert_allclose(np.moveaxis(wide[:, :, :2], 1, -1)[ordinary[:, :2]],
                                           expected[..., :channels][ordinary[:, :2]], **TOLERANCES[np.float32],
                                           err_msg=f"{kind} C={channels}")
    finally:
        sampling.use_avx512(was[0])
        sampling.use_binning(was[1])


def test_3d_cubic_large_row_scratch_by_grid():
    """Past 8 MiB of 16-channel pixels (X 1x17x30x64x64: 10.6 MiB a group) 3-D cubic takes them by default
    only on a smooth grid, and a scattered grid's binned run shares its row scratch among the workers where
    each would hold a group past 8 MiB (or where the groups are fewer than the workers): the plan judges the
    grid on every call, so one plan called on either in turn gives each call's bits as a fresh plan of
    8-channel pixels does, at 2 and 4 threads; 16-channel pixels forced on the random grid too."""
    if not sampling.avx512_available():
        pytest.skip("16-channel pixels need AVX-512")
    rng = keyed_rng("cubic3d-large-wide")
    x = rng.uniform(-1, 1, (1, 17, 30, 64, 64)).astype(np.float32)
    grids = {"smooth": _smooth_3d_grid(rng, (1, 8, 32, 32, 3)).astype(np.float32),
             "random": rng.uniform(-1.1, 1.1, (1, 8, 32, 32, 3)).astype(np.float32)}
    routes = {("smooth", 2): "binned 16 rows", ("random", 2): "binned 8 rows",  # (three groups of 8)
              ("smooth", 4): "binned 16 rows", ("random", 4): "binned 8 rows shared"}
    was = sampling.use_avx512("never")
    try:
        narrow = {kind: sample(x, grid, "cubic", "zeros", False, 2) for kind, grid in grids.items()}
        sampling.use_avx512("auto")
        plan = sample_plan(x.shape, grids["smooth"].shape, np.float32, "cubic", "zeros", False)
        for threads in (2, 4):
            for kind in ("smooth", "random", "smooth"):
                assert plan.route(threads, grids[kind]) == routes[kind, threads]
                assert same_bits(plan(x, grids[kind], None, threads), narrow[kind]), (kind, threads)
        sampling.use_avx512("always")
        assert plan.route(2, grids["random"]) == "binned 16 rows shared"
        assert same_bits(plan(x, grids["random"], None, 2), narrow["random"])
    finally:
        sampling.use_avx512(was)


# Bands of pixel coordinates along the outermost spatial dim (16 pixels: rows in 2-D, planes in 3-D) of
# consecutive blocks of 1024 points (sampling.pyx's SIMD_BLOCK): down, up, back inside, outside below
# and above, NaN, and special values among ordinary ones.
SLICE_BANDS = ((9, 11), (1, 3), (13, 15.9), (5, 8), (-3.5, -1), (16.5, 18), (np.nan, np.nan), (6, 7))


@pytest.mark.parametrize("rank,mode,binning", [(2, "nearest", "never"), (2, "linear", "never"),
                                               (2, "cubic", "never"), (3, "nearest", "never"),
                                               (3, "linear", "never"), (3, "cubic", "never"),
                                               (3, "cubic", "always")])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_scratch_holds_what_each_block_reads(rank, mode, binning, padding, align):
    """3-D cubic's row scratch takes the planes each block of points reads just before it (sampling.pyx's
    hold_planes; the other layouts copy the whole plane in first), so every block must find its slices
    of the outermost spatial dim whichever way its coordinates move: a scratch first filled from
    other data (the same plan's previous call), then blocks in the bands above, the last with special
    coordinates among its points; 1 and 2 threads (two channel groups, one per thread, in spans); 3-D
    cubic also binned (in tile order, depth ascending). Against onnxruntime (onnx.reference for 3-D
    cubic) on 12 points of each block (on their own: a point's output depends only on its
    coordinates; cubic with border only where the oracle's clamping of the coordinate agrees with
    irgrid's clamping of each tap, inside the plane) and against the scalar path on every point."""
    rng = keyed_rng("slices", rank, mode, binning, padding, align)
    dims = (16, 5, 6) if rank == 3 else (16, 6)
    step = oracle_step(rank, mode)
    x = rng.uniform(-1, 1, (1, 9, *dims))
    grid = rng.uniform(-1.1, 1.1, (len(SLICE_BANDS), 1024, rank))
    for band, (low, high) in zip(grid, SLICE_BANDS):
        z = rng.uniform(low, high, len(band)) if low == low else np.full(len(band), np.nan)
        band[:, -1] = 2 * z / (dims[0] - 1) - 1 if align else (2 * z + 1) / dims[0] - 1
    grid = np.round(grid * step) / step
    last = grid[-1].reshape(-1)
    last[rng.choice(last.size, 60, replace=False)] = rng.choice(SPECIALS, 60)
    sizes = np.array(dims[::-1], float)  # the grid lists the innermost dim first
    pixel = (grid + 1) / 2 * (sizes - 1) if align else ((grid + 1) * sizes - 1) / 2
    fine = np.isfinite(grid).all(-1) & (np.abs(grid) < 4).all(-1)
    if padding == "border" and mode == "cubic":
        fine &= ((pixel >= 0) & (pixel <= sizes - 1)).all(-1)
    chosen = np.concatenate([b * 1024 + rng.choice(np.flatnonzero(f), min(12, f.sum()), replace=False)
                             for b, f in enumerate(fine)])
    grid = grid.reshape(1, len(SLICE_BANDS), 1024, *(1,) * (rank - 2), rank)
    subset = grid.reshape(-1, rank)[chosen].reshape(1, -1, *(1,) * (rank - 1), rank)
    oracle = run_onnx_reference if (rank, mode) == (3, "cubic") else run_ort_grid_sample
    expected = oracle(x, subset, mode, padding, align).reshape(1, 9, -1)
    for dtype in (np.float32, np.float64):
        plan = sample_plan(x.shape, grid.shape, dtype, mode, padding, align)
        outputs = []
        was = sampling.use_binning(binning)
        try:
            for threads in (1, 2):
                plan(rng.uniform(-9, 9, x.shape).astype(dtype), grid.astype(dtype), None, threads)
                outputs.append(plan(x.astype(dtype), grid.astype(dtype), None, threads))
        finally:
            sampling.use_binning(was)
        assert outputs[0].tobytes() == outputs[1].tobytes()
        np.testing.assert_allclose(outputs[0].reshape(1, 9, -1)[..., chosen], expected, **TOLERANCES[dtype])
        sampling.use_simd(False)
        try:
            scalar = sample(x.astype(dtype), grid.astype(dtype), mode, padding, align, 1)
        finally:
            sampling.use_simd(True)
        np.testing.assert_allclose(outputs[0], scalar, **TOLERANCES[dtype])


@DTYPES
@pytest.mark.parametrize("threads", [1, 2])
def test_3d_cubic_partial_block_finds_its_planes(threads, dtype):
    """A block's depths are scanned 8 (f32) or 4 (f64) points at a time, then the rest one by one
    (simd_gather_body.h's irgrid_depth_range): a last block of 5 points, at 1 thread the only ones that
    read the volume's top planes (a 24-plane volume; the 1024 points before them lie in planes 0-5,
    their x and y near the far end of their dims, so that a scan of the wrong coordinate would miss
    planes), after the same plan sampled other data, against onnx.reference."""
    rng = keyed_rng("cubic3d-partial-block", threads, dtype)
    x = rng.uniform(-1, 1, (1, 9, 24, 5, 6))
    grid = np.round(rng.uniform(0.5, 0.7, (1, 1029, 1, 1, 3)) * 16) / 16
    grid[0, :1024, 0, 0, 2] = np.round(rng.uniform(-1, -0.6, 1024) * 16) / 16  # pixel coordinates -0.5 .. 4.3
    grid[0, 1024:, 0, 0, 2] = np.array([0.75, 0.8125, 0.875, 0.9375, 0.875])  # 20.5 .. 22.75
    chosen = np.r_[rng.choice(1024, 20, replace=False), 1024:1029]  # on their own, as in the test above
    expected = run_onnx_reference(x, grid[:, chosen], "cubic", "zeros", False)
    plan = sample_plan(x.shape, grid.shape, dtype, "cubic", "zeros", False)
    plan(rng.uniform(-9, 9, x.shape).astype(dtype), grid.astype(dtype), None, threads)
    got = plan(x.astype(dtype), grid.astype(dtype), None, threads)
    np.testing.assert_allclose(got[:, :, chosen], expected, **TOLERANCES[dtype])


def test_binning_policy_round_trip():
    assert sampling.use_binning("never") == "auto"
    assert sampling.use_binning("auto") == "never"


def test_policy_round_trip():
    assert sampling.use_interleave("auto") == "always"
    assert sampling.use_interleave("never") == "auto"
    with pytest.raises(KeyError):
        sampling.use_interleave("sometimes")


@pytest.mark.parametrize("x_shape,size", [((2, 11, 23, 29), [2, 11, 37, 41]), ((1, 8, *LARGE_DIMS[2]), [1, 8, 37, 41])],
                         ids=["scratch per worker", "large plane, shared scratch"])
@pytest.mark.parametrize("element_type", ["f32", "f64"])
def test_fused_affine_grid_matches_unfused(element_type, x_shape, size, tmp_path):
    """AffineGrid fused into GridSample over the interleaved path (a scratch per worker; a large
    plane's shared one): bitwise the unfused pair (whichever path each takes); f64 within tolerance of
    onnxruntime (f32 coordinates round differently in onnxruntime's AffineGrid, which this data's
    slopes amplify beyond 1e-5; the other tests cover the f32 sums)."""
    rng = keyed_rng("fused", element_type, x_shape)
    dtype = np.float32 if element_type == "f32" else np.float64
    path = build_pair(tmp_path / "st.xml", x_shape, size, element_type, "linear", "zeros")
    x = rng.standard_normal(x_shape).astype(dtype)
    theta = random_theta(rng, x_shape[0], 2, dtype)
    fused = irgrid.compile_model(path, fuse=True)({"X": x, "theta": theta})["warped"]
    sampling.use_interleave("never")
    unfused = irgrid.compile_model(path, fuse=False)({"X": x, "theta": theta})["warped"]
    assert fused.tobytes() == unfused.tobytes()
    if dtype == np.float64:
        np.testing.assert_allclose(fused, run_ort_pair(x, theta, size, "linear", "zeros", False, False),
                                   **TOLERANCES[dtype])


@pytest.mark.parametrize("element_type", ["f32", "f64"])
def test_fused_affine_grid_3d_cubic_matches_unfused(element_type, tmp_path):
    """3-D cubic's own run fed by a fused AffineGrid's coordinates: bitwise the unfused pair, whose
    AffineGrid writes the same coordinates into a grid that the same run then reads."""
    rng = keyed_rng("fused-cubic3d", element_type)
    dtype = np.float32 if element_type == "f32" else np.float64
    x_shape, size = (2, 9, 5, 6, 7), [2, 9, 4, 5, 6]
    path = build_pair(tmp_path / "st.xml", x_shape, size, element_type, "cubic", "border")
    x = rng.standard_normal(x_shape).astype(dtype)
    theta = random_theta(rng, 2, 3, dtype)
    fused = irgrid.compile_model(path, fuse=True)({"X": x, "theta": theta})["warped"]
    unfused = irgrid.compile_model(path, fuse=False)({"X": x, "theta": theta})["warped"]
    assert fused.shape == (2, 9, 4, 5, 6)
    assert fused.tobytes() == unfused.tobytes()


@pytest.mark.parametrize("rank,mode,binning", [(3, "linear", "auto"), (3, "cubic", "always")])
def test_concurrent_calls_share_the_plans_scratch(rank, mode, binning):
    """A plan keeps its scratch between calls (kernels/core/scratch.h); calls from several threads at
    once (each releases the GIL in the kernel) must each get a block of their own, and a call with more
    threads a larger one: every output bitwise equal to a lone call's, which matches the oracle."""
    import concurrent.futures

    rng = keyed_rng("concurrent-scratch", rank, mode)
    x = rng.uniform(-1, 1, (1, 16, 6, 7, 8)).astype(np.float32)
    grid = dyadic(rng, (1, 5, 9, 11, rank), 1.1).astype(np.float32)
    plan = sample_plan(x.shape, grid.shape, np.float32, mode, "zeros", False)
    was = sampling.use_binning(binning)
    try:
        alone = plan(x, grid, None, 1)
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            outputs = list(pool.map(lambda k: plan(x, grid, None, 1 + k % 3), range(48)))
    finally:
        sampling.use_binning(was)
    assert all(out.tobytes() == alone.tobytes() for out in outputs)
    oracle = run_onnx_reference if mode == "cubic" else run_ort_grid_sample
    np.testing.assert_allclose(alone, oracle(x.astype(np.float64), grid.astype(np.float64), mode, "zeros", False),
                               **TOLERANCES[np.float32])

"""DeformConv beyond what the peers run: 1-D and 3-D, f64, consistency, threads, non-finite offsets,
errors.

Oracles: a float64 direct-loop reference written here straight from the ONNX DeformConv formula
(zero-padded N-linear sampling at o * stride - pad_begin + k * dilation + offset, times the mask,
summed against W per group), a numpy einsum convolution over kernel shifts, and irgrid's own 2-D
result only where the spec makes two computations equal (kernel depth 1). Tolerances: f32 1e-5
relative + 1e-5 absolute; f64 1e-12 relative (+1e-12 absolute).
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import irgrid
from irgrid.ops import im2col
from irgrid.ops.im2col import Geometry, convolve
from oracles import deform_conv_ir, first_output, random_deform_inputs


def reference(x, w, offset, mask=None, bias=None, strides=None, dilations=None, pads=None, group=1,
              offset_group=1) -> np.ndarray:
    """ONNX DeformConv by direct loops in float64."""
    x, w, offset = (np.asarray(a, np.float64) for a in (x, w, offset))
    n, c = x.shape[:2]
    oc, kernel = w.shape[0], w.shape[2:]
    r = len(kernel)
    strides = strides or [1] * r
    dilations = dilations or [1] * r
    pads = pads or [0] * (2 * r)
    out_dims = offset.shape[2:]
    k_count = math.prod(kernel)
    cg, ocg, cdg = c // group, oc // group, c // offset_group
    y = np.zeros((n, oc, *out_dims))
    for b, o in itertools.product(range(n), np.ndindex(*out_dims)):
        samples = np.zeros((c, k_count))
        for ki, kk in enumerate(np.ndindex(*kernel)):
            for ch in range(c):
                g = ch // cdg
                pos = [o[d] * strides[d] - pads[d] + kk[d] * dilations[d] + offset[(b, (g * k_count + ki) * r + d, *o)]
                       for d in range(r)]
                value = 0.0
                for corner in itertools.product((0, 1), repeat=r):
                    idx = [math.floor(p) + e for p, e in zip(pos, corner)]
                    fracs = [p - math.floor(p) for p in pos]
                    weight = math.prod(f if e else 1 - f for f, e in zip(fracs, corner))
                    if all(0 <= i < s for i, s in zip(idx, x.shape[2:])):
                        value += weight * x[(b, ch, *idx)]
                samples[ch, ki] = value * (1.0 if mask is None else float(mask[(b, g * k_count + ki, *o)]))
        for out_ch in range(oc):
            g = out_ch // ocg
            y[(b, out_ch, *o)] = np.sum(w[out_ch].reshape(cg, k_count) * samples[g * cg:(g + 1) * cg])
    if bias is not None:
        y += np.asarray(bias, np.float64).reshape((1, oc) + (1,) * r)
    return y


# (C, oC, group, offset_group, input dims, kernel, strides, dilations, pads, mask, bias)
ND_CONFIGS = [
    (4, 6, 2, 2, (11,), (3,), (1,), (1,), (1, 2), True, True),
    (3, 2, 1, 3, (9,), (2,), (2,), (3,), (0, 1), False, True),
    (4, 4, 2, 2, (4, 5, 4), (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 0, 1, 0, 1, 1), True, True),
    (2, 3, 1, 1, (5, 3, 4), (3, 1, 2), (2, 1, 1), (1, 1, 2), (1, 0, 0, 1, 1, 0), False, False),
]


@pytest.mark.parametrize("config", ND_CONFIGS, ids=lambda c: f"{len(c[4])}d")
def test_nd_vs_direct_loops(config, tmp_path):
    c, oc, group, dg, dims, kernel, strides, dilations, pads, mask, bias = config
    rng = np.random.default_rng(len(dims) * 10 + c)
    arrays, attrs = random_deform_inputs(rng, c, oc, group, dg, dims, kernel, strides, dilations, pads, mask,
                                         bias, scale=1.5, n=1)
    want = reference(arrays["X"], arrays["W"], arrays["offset"], arrays.get("mask"), arrays.get("B"),
                     strides=list(strides), dilations=list(dilations), pads=list(pads),
                     group=group, offset_group=dg)
    got = first_output(deform_conv_ir(tmp_path / "m.xml", arrays, attrs), arrays)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    wide = {k: v.astype(np.float64) for k, v in arrays.items()}
    got64 = first_output(deform_conv_ir(tmp_path / "d.xml", wide, attrs, "f64"), wide)
    assert got64.dtype == np.float64
    np.testing.assert_allclose(got64, want, rtol=1e-12, atol=1e-12)


def test_depth_one_kernel_equals_2d_slices(tmp_path):
    """A 3-D layer with kernel depth 1, depth stride 1, no depth padding and zero depth offsets is the
    2-D layer applied to every depth slice."""
    rng = np.random.default_rng(3)
    d, c, oc, dg = 3, 4, 6, 2
    arrays2, attrs2 = random_deform_inputs(rng, c, oc, 2, dg, (6, 7), (3, 3), (1, 2), (2, 1), (1, 0, 2, 1),
                                           True, True, scale=2.0, n=d)  # batch = depth slices
    x3 = np.moveaxis(arrays2["X"], 0, 1)[None]  # (1, C, D, H, W)
    w3 = arrays2["W"][:, :, None]
    off2 = arrays2["offset"].reshape(d, dg * 9, 2, *arrays2["offset"].shape[2:])
    off3 = np.concatenate([np.zeros_like(off2[:, :, :1]), off2], axis=2)  # (dz = 0, dy, dx)
    off3 = np.moveaxis(off3.reshape(d, dg * 9 * 3, *off2.shape[3:]), 0, 1)[None]
    mask3 = np.moveaxis(arrays2["mask"], 0, 1)[None]
    arrays3 = {"X": x3, "W": w3, "offset": np.ascontiguousarray(off3), "B": arrays2["B"],
               "mask": np.ascontiguousarray(mask3)}
    attrs3 = dict(attrs2, kernel_shape=[1, 3, 3], strides=[1, 1, 2], dilations=[1, 2, 1], pads=[0, 1, 0, 0, 2, 1])
    got3 = first_output(deform_conv_ir(tmp_path / "m3.xml", arrays3, attrs3), arrays3)
    got2 = first_output(deform_conv_ir(tmp_path / "m2.xml", arrays2, attrs2), arrays2)
    np.testing.assert_allclose(got3[0], np.moveaxis(got2, 0, 1), rtol=1e-6, atol=1e-6)


def _einsum_convolution(x, w, strides, dilations, pads):
    """Plain cross-correlation by summing one einsum per kernel shift, in float64."""
    r = x.ndim - 2
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(pads[a], pads[a + r]) for a in range(r)])
    out_dims = [(padded.shape[2 + a] - dilations[a] * (w.shape[2 + a] - 1) - 1) // strides[a] + 1 for a in range(r)]
    y = np.zeros((x.shape[0], w.shape[0], *out_dims))
    for kk in np.ndindex(*w.shape[2:]):
        window = tuple(slice(kk[a] * dilations[a], kk[a] * dilations[a] + (out_dims[a] - 1) * strides[a] + 1,
                             strides[a]) for a in range(r))
        taps = padded[(slice(None), slice(None), *window)]
        y += np.einsum("nc...,oc->no...", taps, w[(slice(None), slice(None), *kk)])
    return y


@pytest.mark.parametrize("dims, kernel", [((13,), (3,)), ((7, 9), (3, 2)), ((5, 6, 4), (2, 3, 2))])
def test_zero_offsets_and_unit_mask_are_a_plain_convolution(dims, kernel, tmp_path):
    r = len(dims)
    rng = np.random.default_rng(r)
    strides, dilations, pads = [1 + (a % 2) for a in range(r)], [1 + (a == 0) for a in range(r)], [1] * r + [0] * r
    arrays, attrs = random_deform_inputs(rng, 4, 5, 1, 2, dims, kernel, strides, dilations, pads, True, False,
                                         scale=0.0, n=2)
    arrays["mask"][...] = 1
    want = _einsum_convolution(arrays["X"], arrays["W"], strides, dilations, pads)
    np.testing.assert_allclose(first_output(deform_conv_ir(tmp_path / "m.xml", arrays, attrs), arrays), want,
                               rtol=1e-5, atol=1e-5)


@pytest.fixture(params=["columns_first", "filters_first"])
def orientation(request, monkeypatch):
    """Each test runs with both GEMM orientations (the small cases here would all take columns
    times filters transposed)."""
    monkeypatch.setattr(im2col, "FILTERS_FIRST", 1 if request.param == "filters_first" else 1 << 30)
    return request.param


def _threads_case():
    rng = np.random.default_rng(11)
    arrays, attrs = random_deform_inputs(rng, 16, 8, 2, 4, (24, 40), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1),
                                         True, True, scale=3.0, n=2)
    return arrays, attrs


def test_one_and_two_threads_bitwise_identical(tmp_path, orientation):
    arrays, attrs = _threads_case()
    path = deform_conv_ir(tmp_path / "m.xml", arrays, attrs)
    one, two = first_output(path, arrays, threads=1), first_output(path, arrays, threads=2)
    assert np.array_equal(one, two)


@pytest.mark.parametrize("backend", ["openvino", "numpy"])
def test_tiling_gives_the_same_result(monkeypatch, orientation, backend):
    """A column budget of a few output points (many tiles) gives the same result: to rounding on
    OpenVINO's MatMul (its blocking, hence its summation order, depends on the tile width), bitwise on
    the convolution engine's own GEMM (each output summed in order, kernels/core/gemm.h)."""
    monkeypatch.setenv("IRGRID_GEMM", backend)
    arrays, attrs = _threads_case()
    geometry = Geometry((3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    kwargs = dict(offsets=arrays["offset"], mask=arrays["mask"], bias=arrays["B"], group=2, offset_groups=4)
    whole = convolve(arrays["X"], arrays["W"], geometry, **kwargs)
    # 37 points per tile: per point 16 * 9 column values and the GEMM block's 8 / 2
    monkeypatch.setattr(im2col, "TILE_BYTES", (16 * 9 + 4) * 4 * 37)
    tiled = convolve(arrays["X"], arrays["W"], geometry, **kwargs)
    if backend == "numpy":
        np.testing.assert_array_equal(tiled, whole)
    else:
        np.testing.assert_allclose(tiled, whole, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dims, kernel, group", [((9, 13), (3, 3), 1), ((5, 6, 7), (2, 2, 2), 2)])
def test_streaming_column_stores_change_nothing(dims, kernel, group, monkeypatch):
    """Column tiles written with non-temporal stores (every tile here, the AVX2 loop for 1, 2, 4 and 8
    taps over 8-channel runs) give the bitwise result of ordinary stores, and match the direct loops."""
    r = len(dims)
    rng = np.random.default_rng(5)
    arrays, _ = random_deform_inputs(rng, 16, 8, group, 2, dims, kernel, (1,) * r, (1,) * r, (1,) * (2 * r),
                                     True, True, scale=2.0, n=1)
    geometry = Geometry(kernel, (1,) * r, (1,) * r, (1,) * r, (1,) * r)
    kwargs = dict(offsets=arrays["offset"], mask=arrays["mask"], bias=arrays["B"], group=group, offset_groups=2,
                  threads=2)
    plain = convolve(arrays["X"], arrays["W"], geometry, **kwargs)
    monkeypatch.setattr(im2col, "STREAM_BYTES", 0)
    monkeypatch.setattr(im2col, "STREAM_MIN_CHANNELS", 1)
    assert np.array_equal(convolve(arrays["X"], arrays["W"], geometry, **kwargs), plain)
    want = reference(arrays["X"], arrays["W"], arrays["offset"], arrays["mask"], arrays["B"], pads=[1] * (2 * r),
                     group=group, offset_group=2)
    np.testing.assert_allclose(plain, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["openvino", "numpy"])
def test_gemm_backends_agree_at_every_thread_count(backend, monkeypatch, orientation):
    """Each GEMM backend gives the same result at 1 and 2 threads, and both agree to rounding."""
    arrays, attrs = _threads_case()
    geometry = Geometry((3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    kwargs = dict(offsets=arrays["offset"], mask=arrays["mask"], bias=arrays["B"], group=2, offset_groups=4)
    monkeypatch.setenv("IRGRID_GEMM", "numpy" if backend == "openvino" else "openvino")
    other = convolve(arrays["X"], arrays["W"], geometry, threads=2, **kwargs)
    monkeypatch.setenv("IRGRID_GEMM", backend)
    two = convolve(arrays["X"], arrays["W"], geometry, threads=2, **kwargs)
    np.testing.assert_allclose(two, other, rtol=1e-5, atol=1e-5)
    assert np.array_equal(convolve(arrays["X"], arrays["W"], geometry, threads=1, **kwargs), two)


@pytest.mark.parametrize("boundary", ["zeros", "edge"])
def test_non_finite_and_huge_offsets(boundary):
    """NaN: the output points using that sample are NaN; +-Inf and huge offsets: the sample is 0
    (as if its mask were 0); a NaN mask at a point outside the image changes nothing."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 6, 7)).astype(np.float32)
    w = rng.standard_normal((3, 2, 3, 3)).astype(np.float32)
    offsets = rng.uniform(-1, 1, (1, 18, 4, 5)).astype(np.float32)
    mask = rng.uniform(0.5, 1, (1, 9, 4, 5)).astype(np.float32)
    geometry = Geometry((3, 3), (1, 1), (1, 1), (0, 0), (0, 0))

    def run(off, msk, threads=2):
        return convolve(x, w, geometry, offsets=off, mask=msk, boundary=boundary, threads=threads)

    for value in (np.inf, -np.inf, 1e30, -3e38, 2.0**60):
        off = offsets.copy()
        off[0, 2 * 4, 1, 2] = value  # kernel tap 4, dy of output point (1, 2)
        zero_mask = mask.copy()
        zero_mask[0, 4, 1, 2] = 0
        np.testing.assert_allclose(run(off, mask), run(offsets, zero_mask), rtol=1e-6, atol=1e-6)
        zero_mask[0, 4, 1, 2] = np.nan  # outside: the mask is not applied
        assert np.all(np.isfinite(run(off, zero_mask)))
    off = offsets.copy()
    off[0, 2 * 7 + 1, 3, 0] = np.nan
    out = run(off, mask)
    assert np.all(np.isnan(out[0, :, 3, 0]))
    finite = np.ones(out.shape, bool)
    finite[0, :, 3, 0] = False
    np.testing.assert_array_equal(out[finite], run(offsets, mask)[finite])
    np.testing.assert_array_equal(run(off, mask, threads=1), out)


def test_half_precision_types_compute_in_f32(tmp_path):
    rng = np.random.default_rng(9)
    arrays, attrs = random_deform_inputs(rng, 4, 4, 1, 1, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1),
                                         True, True, scale=1.0, n=1)
    half = {k: v.astype(np.float16) for k, v in arrays.items()}
    got = first_output(deform_conv_ir(tmp_path / "h.xml", half, attrs, "f16"), half)
    assert got.dtype == np.float16
    want = reference(*(half[k].astype(np.float64) for k in ("X", "W", "offset", "mask", "B")), pads=[1, 1, 1, 1])
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-2)


SHAPE_ERRORS = [
    # (what changes, input index at fault, message fragment)
    (dict(W=(6, 3, 3, 3)), 1, "filters dim 1"),  # C / group mismatch
    (dict(X=(1, 5, 7, 8), W=(6, 5, 3, 3)), 0, "not divisible by group"),
    (dict(W=(5, 2, 3, 3), B=(5,)), 1, "not divisible by group"),
    (dict(offset=(1, 72, 7, 8)), 2, "offsets channels"),
    (dict(offset=(1, 18, 7, 8)), 2, "offsets channels"),
    (dict(offset=(1, 36, 6, 8)), 2, "spatial dim 0"),
    (dict(mask=(1, 9, 7, 8)), 4, "mask channels"),
    (dict(mask=(1, 18, 7, 9)), 4, "spatial dim 1"),
    (dict(B=(4,)), 3, "B must be 1-D"),
    (dict(X=(1, 4, 1, 8), offset=(1, 36, 1, 8), mask=(1, 18, 1, 8), pads=[0, 0, 0, 0]), 0, "not be positive"),
]


@pytest.mark.parametrize("change, index, fragment", SHAPE_ERRORS)
def test_shape_errors_name_the_input(change, index, fragment):
    # offset_group 2: offsets 2 groups * 9 taps * 2 dims = 36 channels, mask 2 * 9 = 18
    shapes = {"X": (1, 4, 7, 8), "W": (6, 2, 3, 3), "offset": (1, 36, 7, 8), "B": (6,), "mask": (1, 18, 7, 8)}
    attrs = {"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1]}
    attrs.update({k: v for k, v in change.items() if k == "pads"})
    shapes.update({k: v for k, v in change.items() if k != "pads"})
    spec = irgrid.registry.find("DeformConv", "irgrid1")
    infos = [irgrid.registry.TensorInfo(s, "f32") for s in shapes.values()]
    with pytest.raises(irgrid.ShapeError, match=fragment) as info:
        spec.infer(spec.parse_attrs(attrs), infos)
    assert info.value.input == index


def test_offset_groups_must_divide_channels_and_kernel_shape_must_match():
    spec = irgrid.registry.find("DeformConv", "irgrid1")
    infos = [irgrid.registry.TensorInfo(s, "f32") for s in ((1, 6, 5, 5), (2, 6, 3, 3), (1, 72, 3, 3))]
    with pytest.raises(irgrid.ShapeError, match="offset groups") as info:
        spec.infer(spec.parse_attrs({"offset_group": 4}), infos)
    assert info.value.input == 0
    one_group = infos[:2] + [irgrid.registry.TensorInfo((1, 18, 3, 3), "f32")]
    with pytest.raises(irgrid.ShapeError, match="kernel_shape") as info:
        spec.infer(spec.parse_attrs({"kernel_shape": [3, 2]}), one_group)
    assert info.value.input == 1
    with pytest.raises(irgrid.LayerAttributeError, match="strides needs 2"):
        spec.infer(spec.parse_attrs({"strides": [1, 1, 1]}), one_group)


def test_concurrent_calls_from_python_threads():
    """Two Python threads convolving at once (the cached OpenVINO MatMul is shared) get the serial
    results."""
    import threading

    arrays, _ = _threads_case()
    geometry = Geometry((3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    kwargs = dict(offsets=arrays["offset"], mask=arrays["mask"], bias=arrays["B"], group=2, offset_groups=4,
                  threads=1)
    want = convolve(arrays["X"], arrays["W"], geometry, **kwargs)
    results = [None] * 4

    def work(index):
        results[index] = convolve(arrays["X"], arrays["W"], geometry, **kwargs)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for got in results:
        assert np.array_equal(got, want)


# C = 6 in 2 convolution groups of 3 and 3 offset groups of 2: offset group 1 (channels 2, 3)
# straddles the two convolution groups; 21 channels exercise vector bodies and their remainders.
STRADDLE_CONFIGS = [
    (6, 4, 2, 3, (5, 6), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, True),
    (21, 6, 3, 7, (4, 5), (2, 3), (1, 2), (2, 1), (1, 0, 2, 1), True, False),
]


@pytest.fixture(params=["simd", "baseline"])
def tap_loop(request):
    """Each test runs with the AVX2+FMA tap loop (where the CPU has it) and the baseline build."""
    from irgrid._kernels.deform_columns import select_simd

    select_simd(request.param == "simd")
    yield request.param
    select_simd(True)


@pytest.mark.parametrize("config", STRADDLE_CONFIGS + ND_CONFIGS, ids=lambda c: f"C{c[0]}g{c[2]}og{c[3]}r{len(c[4])}")
def test_tap_loops_match_direct_loops(config, tap_loop, orientation):
    c, oc, group, dg, dims, kernel, strides, dilations, pads, mask, bias = config
    r = len(dims)
    rng = np.random.default_rng(c + 100 * r)
    arrays, _ = random_deform_inputs(rng, c, oc, group, dg, dims, kernel, strides, dilations, pads, mask, bias,
                                     scale=1.5, n=2)
    want = reference(arrays["X"], arrays["W"], arrays["offset"], arrays.get("mask"), arrays.get("B"),
                     strides=list(strides), dilations=list(dilations), pads=list(pads), group=group, offset_group=dg)
    geometry = Geometry(kernel, strides, dilations, pads[:r], pads[r:])
    for dtype, tol in ((np.float32, 1e-5), (np.float64, 1e-12)):
        args = {k: v.astype(dtype) for k, v in arrays.items()}
        got = convolve(args["X"], args["W"], geometry, offsets=args["offset"], mask=args.get("mask"),
                       bias=args.get("B"), group=group, offset_groups=dg, threads=2)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_work_buffer_reused_across_shapes_and_types():
    """The per-thread work buffer carries nothing from one call into the next: a large f64 call, a
    small f32 one and the large one again all match the direct loops."""
    rng = np.random.default_rng(21)
    big, _ = random_deform_inputs(rng, 6, 4, 2, 3, (7, 8), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), True, True,
                                  scale=2.0, n=1)
    small, _ = random_deform_inputs(rng, 2, 3, 1, 1, (3, 4), (2, 2), (1, 1), (1, 1), (0, 0, 0, 0), False, False,
                                    scale=2.0, n=1)
    big64 = {k: v.astype(np.float64) for k, v in big.items()}
    runs = [(big64, 2, 3, (3, 3), (1, 1)), (small, 1, 1, (2, 2), (0, 0)), (big64, 2, 3, (3, 3), (1, 1))]
    for arrays, group, dg, kernel, pad in runs:
        geometry = Geometry(kernel, (1, 1), (1, 1), pad, pad)
        got = convolve(arrays["X"], arrays["W"], geometry, offsets=arrays["offset"], mask=arrays.get("mask"),
                       bias=arrays.get("B"), group=group, offset_groups=dg)
        want = reference(arrays["X"], arrays["W"], arrays["offset"], arrays.get("mask"), arrays.get("B"),
                         pads=[*pad, *pad], group=group, offset_group=dg)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, row", [((1, 1), 8), ((5, 3), 12), ((70, 33), 77), ((130, 17), 137), ((9, 150), 16),
                                        ((200, 20), 256), ((24, 300), 31)])
def test_transpose_kernel_with_bias(dtype, shape, row, tap_loop):
    """deform_columns.transpose (the data channels-last, the GEMM block into the output; its AVX2
    and plain builds) against numpy's transpose, into a strided destination of `row` elements a row
    (256 f32: 1 KiB, the AVX2 build's destination strips; 300 columns: more than one span of them),
    with and without the bias."""
    from irgrid._kernels.deform_columns import transpose

    rng = np.random.default_rng(shape[0])
    src = rng.standard_normal(shape).astype(dtype)
    bias = rng.standard_normal(shape[1]).astype(dtype)
    wide = np.full((shape[1], row), np.nan, dtype)
    for b, threads in ((None, 1), (bias, 2)):
        transpose(src, wide[:, 3:3 + shape[0]], b, threads)
        want = src.T if b is None else src.T + b[:, None]
        np.testing.assert_array_equal(wide[:, 3:3 + shape[0]], want)
        assert np.isnan(wide[:, :3]).all() and np.isnan(wide[:, 3 + shape[0]:]).all()


@pytest.mark.parametrize("boundary", ["zeros", "edge"])
def test_eight_point_path_reads_nothing_past_a_dim_beyond_2_24(boundary):
    """Past 2**24 a dim's last index does not convert to f32 exactly (2**24 + 3 rounds up to 2**24 + 4).
    Eight points at x = 2**24 + 4 lie outside a row of 2**24 + 4 pixels: their columns are 0 (the
    scalar path's rule, docs/semantics.md), not the value past the data's end (NaN here), with either
    build."""
    from irgrid._kernels.deform_columns import deformable_columns, select_simd

    length = (1 << 24) + 4
    buffer = np.full(length + 16, np.nan, np.float32)
    data = buffer[:length]
    data[:] = 1.0
    o = np.arange(8)
    offsets = np.stack([np.zeros(8), float(length) - o * 2.0 ** 21]).astype(np.float32).reshape(-1)
    spatial = [np.array(v, np.intp) for v in ((1, length), (1, 8), (1, 1), (1, 1 << 21), (1, 1), (0, 0))]
    for simd in (True, False):
        select_simd(simd)
        try:
            col = np.full(8, -7, np.float32)
            deformable_columns(data, offsets, np.zeros(1, np.float32), col, 1, *spatial, 1, 1, True, False,
                               boundary == "edge", 0, 8, 1)
        finally:
            select_simd(True)
        np.testing.assert_array_equal(col, np.zeros(8, np.float32))


@pytest.mark.parametrize("channels, groups, offset_groups", [(64, 1, 1), (12, 1, 1), (21, 3, 1), (6, 2, 3), (16, 2, 4)])
@pytest.mark.parametrize("boundary", ["zeros", "edge"])
@pytest.mark.parametrize("dims", [(11, 21), (5, 7, 9)], ids=["2d", "3d"])
def test_eight_point_path_gives_the_scalar_columns(channels, groups, offset_groups, boundary, dims):
    """2-D and 3-D f32 columns from the AVX2 build (whose 8-point path takes the points with all taps
    inside, and under the zeros rule every point without a NaN coordinate) equal the baseline build's
    bit for bit: offsets putting points inside, on the edges, outside, at integer coordinates, NaN,
    +-Inf and huge; a mask with NaN; with and without offsets and mask."""
    from irgrid._kernels.deform_columns import deformable_columns, select_simd

    rng = np.random.default_rng(channels + offset_groups)
    r, points, k = len(dims), math.prod(dims), 3 ** len(dims)
    data = rng.standard_normal(points * channels).astype(np.float32)
    offsets = rng.uniform(-2.5, 2.5, offset_groups * k * r * points).astype(np.float32)
    offsets[::7] = np.round(offsets[::7])
    offsets[3::97], offsets[5::89], offsets[7::83], offsets[11::79] = np.nan, np.inf, -np.inf, 3e9
    mask = rng.uniform(0, 1, offset_groups * k * points).astype(np.float32)
    mask[::101] = np.nan
    spatial = [np.array(v, np.intp) for v in (dims, dims, (3,) * r, (1,) * r, (1,) * r, (1,) * r)]
    for has_offsets, has_mask in ((True, True), (True, False), (False, True)):
        results = []
        for simd in (True, False):
            select_simd(simd)
            try:
                col = np.full(points * k * channels, -7, np.float32)
                deformable_columns(data, offsets, mask, col, channels, *spatial, groups, offset_groups, has_offsets,
                                   has_mask, boundary == "edge", 0, points, 2)
            finally:
                select_simd(True)
            results.append(col)
        assert np.array_equal(results[0].view(np.uint32), results[1].view(np.uint32))

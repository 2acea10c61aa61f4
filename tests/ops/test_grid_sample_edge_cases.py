"""GridSample edge cases: non-finite and huge grid coordinates, element types, shape errors.

The documented rule for special coordinates (README / issue; also the kernel's docstring):
- a NaN coordinate gives NaN (0 for integer data);
- +-Inf and |g| >= 1e30 are a point at that infinity: zeros padding -> 0; border -> the edge value;
  reflection -> NaN (0 for integer data);
- any other coordinate is finite and follows ONNX GridSample-22, however large (3e9 here);
- never an out-of-range read or a crash, for any mode, padding and element type.

Expected values are derived from that rule in this file and evaluated by onnxruntime (GridSample-20,
f64) on a grid where each special coordinate is replaced by what the rule says it means:
- border: the edge of that dim (pixel coordinate exactly 0 or L-1, where even cubic gives exactly the
  edge value: its weights at a whole pixel are 0, 1, 0, 0);
- reflection of a finite far coordinate: reflection is periodic with period 4 in normalised
  coordinates (2L or 2(L-1) pixels), so 3e9 samples like 3e9 mod 4 = 0. That holds where the kernel
  computes in f64 (f64 data or grid, or 32/64-bit integer data), whose arithmetic is exact at 3e9.
  In f32 (spacing 256 at 3e9) the position within the period is lost, so there the test only
  requires a sane value: finite and within the data's range (cubic: within 1.375**2 * max|data|,
  1.375 being the largest sum of |Keys weights| per dim);
- zeros of a finite far coordinate: 0, except in a size-1 dim with align_corners, where every
  finite coordinate maps to the single pixel.
Other coordinates are placed on whole pixels (dyadic grid values), so integer data results are
exact in every implementation and can be compared exactly after the documented conversion (round
half to even, saturate, NaN -> 0), applied here with Python integers.
"""
from __future__ import annotations

import zlib
from pathlib import Path

import ml_dtypes  # installed with onnx
import numpy as np
import pytest

import irgrid
from irgrid.builder import IRBuilder
from oracles import run_ort_grid_sample

BF16 = np.dtype(ml_dtypes.bfloat16)

MODES = ("nearest", "linear", "cubic")
PADDINGS = ("zeros", "border", "reflection")
NAN, INF = float("nan"), float("inf")
SPECIALS = (NAN, INF, -INF, 1e30, -1e30, 3e9, -3e9)
INT_TYPES = ("i8", "u8", "i16", "u16", "i32", "i64", "u32", "u64")
FLOAT_TYPES = ("f32", "f64", "f16", "bf16")
NP = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "f16": np.dtype(np.float16), "bf16": BF16,
      "i8": np.dtype(np.int8), "u8": np.dtype(np.uint8), "i16": np.dtype(np.int16), "u16": np.dtype(np.uint16),
      "i32": np.dtype(np.int32), "i64": np.dtype(np.int64), "u32": np.dtype(np.uint32),
      "u64": np.dtype(np.uint64)}
# Data ranges used for integer types (64-bit types: values exact in f64).
INT_RANGES = {"i8": (-100, 100), "u8": (0, 250), "i16": (-30000, 30000), "u16": (0, 60000),
              "i32": (-2_000_000_000, 2_000_000_000), "u32": (0, 4_000_000_000),
              "i64": (-2**40, 2**40), "u64": (0, 2**40)}
# Output tolerance by type (against an f64 oracle): f32/f64 = summation-order noise; f16/bf16 = one
# unit in the last place of the output type (the kernel rounds its f32 result once).
TOLERANCES = {"f64": {"rtol": 1e-9, "atol": 1e-12}, "f32": {"rtol": 1e-5, "atol": 1e-5},
              "f16": {"rtol": 2**-10, "atol": 2**-14}, "bf16": {"rtol": 2**-7, "atol": 2**-14}}


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


# ---------------------------------------------------------------------------- helpers

def build_ir(tmp_path: Path, x_shape, grid_shape, x_type: str, grid_type: str, attrs: dict,
             version: str = "irgrid1", name: str = "m") -> Path:
    b = IRBuilder("grid_sample")
    xv = b.parameter("X", x_shape, x_type)
    gv = b.parameter("grid", grid_shape, grid_type)
    (y,) = b.layer("GridSample", version, [xv, gv], attrs, name="Y")
    b.result(y)
    return b.save(tmp_path / f"{name}.xml")


def run_irgrid(tmp_path, x, grid, x_type, grid_type, attrs, threads=None, name="m"):
    path = build_ir(tmp_path, x.shape, grid.shape, x_type, grid_type, attrs, name=name)
    return irgrid.compile_model(path, threads=threads)({"X": x, "grid": grid})["Y"]


def saturating_int(values: np.ndarray, dtype) -> np.ndarray:
    """The documented float -> integer conversion: NaN -> 0, round half to even, saturate to the
    type's [min, max] (computed with exact Python integers, so 64-bit bounds are the true ones)."""
    info = np.iinfo(dtype)
    out = []
    for v in np.asarray(values, np.float64).ravel():
        v = float(v)
        if v != v:
            out.append(0)
        elif v >= info.max:
            out.append(int(info.max))
        elif v <= info.min:
            out.append(int(info.min))
        else:
            out.append(int(np.rint(v)))
    return np.array(out, dtype=dtype).reshape(np.shape(values))


def make_data(rng, shape, type_name: str) -> np.ndarray:
    if type_name in INT_RANGES:
        lo, hi = INT_RANGES[type_name]
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(NP[type_name])
    return (rng.standard_normal(shape) * 4).astype(NP[type_name])


def computes_in_f64(x_type: str, grid_type: str) -> bool:
    """Documented precision (irgrid/ops/grid_sample.py `sample`): f64 when either input is f64 or the
    data is a 32/64-bit integer type, else f32."""
    return "f64" in (x_type, grid_type) or x_type in ("i32", "u32", "i64", "u64")


def pixel_points(length: int, align_corners: bool) -> list[float]:
    """Normalised coordinates of whole pixels k in {-2, 0, L-1, L+1} (two outside the image)."""
    if align_corners and length == 1:
        return [-2.0, -0.5, 0.25, 1.5]  # every coordinate maps to pixel 0
    out = []
    for k in (-2, 0, length - 1, length + 1):
        out.append(2 * k / (length - 1) - 1 if align_corners else (2 * k + 1) / length - 1)
    return out


def edge_coordinate(length: int, align_corners: bool, positive: bool) -> float:
    """The normalised coordinate of pixel L-1 (positive) or pixel 0."""
    if align_corners:
        return 1.0 if positive else -1.0
    return (2 * (length - 1) + 1) / length - 1 if positive else 1 / length - 1


def special_grid(dims: tuple[int, int], align_corners: bool, specials=SPECIALS) -> np.ndarray:
    """Points (s, o), (o, s) for every special s and whole-pixel o, and every pair (s1, s2) of
    specials except NaN with a non-NaN value (that is test_nan_wins_over_everything)."""
    h, w = dims
    points = []
    for s in specials:
        # NaN beside an outside coordinate is test_nan_wins_over_everything's business
        pick = slice(1, 3) if s != s else slice(None)
        points += [(s, o) for o in pixel_points(h, align_corners)[pick]]
        points += [(o, s) for o in pixel_points(w, align_corners)[pick]]
    for s1 in specials:
        for s2 in specials:
            if (s1 != s1) == (s2 != s2):
                points.append((s1, s2))
    return np.array(points, dtype=np.float64).reshape(1, len(points), 1, 2)


def expected_by_rule(x64: np.ndarray, grid_typed: np.ndarray, dims: tuple, mode: str, padding: str,
                     align_corners: bool, f64_compute: bool):
    """(expected f64 values, mask of points only checked for sanity), per the rule in the docstring.

    grid_typed: the grid as the layer receives it (after rounding to its element type), as f64.
    """
    g = np.array(grid_typed, dtype=np.float64)
    r = g.shape[-1]
    nan = np.isnan(g)
    at_inf = ~nan & (np.abs(g) >= 1e30)
    far = np.isfinite(g) & (np.abs(g) >= 1e8) & ~at_inf
    sub = np.where(nan | at_inf | far, 0.0, g)
    sanity = np.zeros(g.shape[:-1], dtype=bool)
    zero_point = np.zeros(g.shape[:-1], dtype=bool)
    for k in range(r):  # k: grid coordinate (innermost dim first)
        length = dims[r - 1 - k]
        special = at_inf[..., k] | far[..., k]
        if padding == "border":
            hi = edge_coordinate(length, align_corners, True)
            lo = edge_coordinate(length, align_corners, False)
            sub[..., k] = np.where(special, np.where(g[..., k] > 0, hi, lo), sub[..., k])
        elif padding == "reflection":
            exact = far[..., k] & f64_compute & (np.abs(g[..., k]) * max(length, 2) < 2.0**50)
            sub[..., k] = np.where(exact, np.fmod(np.where(exact, g[..., k], 0.0), 4.0), sub[..., k])
            sanity |= far[..., k] & ~exact
        else:
            if align_corners and length == 1:
                zero_point |= at_inf[..., k]  # a far finite coordinate is pixel 0 (sub = 0)
            else:
                zero_point |= special
    expected = run_ort_grid_sample(x64, sub, mode, padding, align_corners)

    def per_output(mask):  # (N, *out) -> (N, C, *out)
        return np.broadcast_to(mask[:, None], expected.shape)

    point_nan = nan.any(-1)
    point_inf = at_inf.any(-1)
    if padding == "zeros":
        expected = np.where(per_output(zero_point), 0.0, expected)
    if padding == "reflection":
        expected = np.where(per_output(point_inf), np.nan, expected)
    expected = np.where(per_output(point_nan), np.nan, expected)
    return expected, per_output(sanity & ~point_nan & ~point_inf)


def check_sanity(out, x64, sanity, mode, type_name):
    """Values at sanity-only points: finite and within the data's range (cubic: 1.375**2 * max|x|),
    per (batch, channel) plane."""
    if not sanity.any():
        return
    planes = x64.reshape(x64.shape[0], x64.shape[1], -1)
    if mode == "cubic":
        bound = 1.375**2 * np.abs(planes).max(-1)
        lo, hi = -bound, bound
    else:
        lo, hi = planes.min(-1), planes.max(-1)
    if type_name in INT_RANGES:
        lo = saturating_int(lo, NP[type_name]).astype(np.float64) - 1
        hi = saturating_int(hi, NP[type_name]).astype(np.float64) + 1
    else:
        lo, hi = lo - 1e-3 * np.abs(lo) - 1e-6, hi + 1e-3 * np.abs(hi) + 1e-6
    extra = (1,) * (out.ndim - 2)
    lo = np.broadcast_to(lo.reshape(lo.shape + extra), out.shape)[sanity]
    hi = np.broadcast_to(hi.reshape(hi.shape + extra), out.shape)[sanity]
    values = np.asarray(out, np.float64)[sanity]
    assert np.isfinite(values).all(), values
    inside = (values >= lo) & (values <= hi)
    assert inside.all(), (values[~inside], lo[~inside], hi[~inside])


def compare(out, expected, sanity, x64, mode, type_name):
    """out (irgrid, in type_name) against the f64 expected values converted to type_name; points in
    `sanity` only get check_sanity."""
    keep = ~sanity
    if type_name in INT_RANGES:
        assert out.dtype == NP[type_name]
        np.testing.assert_array_equal(out[keep], saturating_int(expected[keep], NP[type_name]))
    else:
        want = expected.astype(NP[type_name]).astype(np.float64)  # the oracle rounded to the output type
        got = np.asarray(out, np.float64)
        np.testing.assert_allclose(got[keep], want[keep], **TOLERANCES[type_name])
    check_sanity(out, x64, sanity, mode, type_name)


def grid_type_for(type_name: str) -> str:
    return "f64" if type_name == "f64" else "f32"


def dims_for(align_corners: bool) -> list[tuple[int, int]]:
    # whole-pixel grid values are dyadic for these lengths (exact in every float type)
    return [(5, 3), (1, 3), (1, 1)] if align_corners else [(4, 8), (1, 8), (1, 1)]


# ---------------------------------------------------------------------------- special coordinates

@pytest.mark.parametrize("type_name", FLOAT_TYPES + INT_TYPES)
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_special_coordinates(mode, padding, align_corners, type_name, tmp_path):
    """NaN, +-Inf, +-1e30 and +-3e9 in either coordinate, alone or paired."""
    rng = _rng("special", mode, padding, align_corners, type_name)
    grid_type = grid_type_for(type_name)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
    for i, dims in enumerate(dims_for(align_corners)):
        x = make_data(rng, (1, 2, *dims), type_name)
        grid = special_grid(dims, align_corners).astype(NP[grid_type])
        with np.errstate(all="ignore"):
            out = run_irgrid(tmp_path, x, grid, type_name, grid_type, attrs, name=f"m{i}")
        x64 = x.astype(np.float64)
        expected, sanity = expected_by_rule(x64, grid.astype(np.float64), dims, mode, padding, align_corners,
                                            computes_in_f64(type_name, grid_type))
        assert out.shape == expected.shape
        compare(out, expected, sanity, x64, mode, type_name)


@pytest.mark.parametrize("type_name", ["f32", "f64"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_nan_wins_over_everything(mode, padding, align_corners, type_name, tmp_path):
    """A NaN coordinate gives NaN whatever the other coordinate is (in range, outside, +-Inf, huge),
    and whichever of x and y holds the NaN."""
    dims = dims_for(align_corners)[0]
    others = [0.0, -0.25, 2.5, -7.0, INF, -INF, 1e30, -1e30, 3e9, -3e9, NAN]
    points = [(NAN, o) for o in others] + [(o, NAN) for o in others]
    grid = np.array(points, dtype=NP[type_name]).reshape(1, 1, len(points), 2)
    x = _rng("nan", mode, padding).standard_normal((1, 3, *dims)).astype(NP[type_name])
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
    out = run_irgrid(tmp_path, x, grid, type_name, type_name, attrs)
    assert out.shape == (1, 3, 1, len(points))
    bad = [points[i] for i in range(len(points)) if not np.isnan(out[:, :, 0, i]).all()]
    assert not bad, f"points not NaN: {bad}"


@pytest.mark.parametrize("type_name", ["f32", "f64"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_huge_finite_coordinates(mode, padding, align_corners, type_name, tmp_path):
    """|g| in [1e15, 1e30): pixel coordinates beyond 2**52. Finite, so zeros -> 0, border -> the
    edge value; reflection -> a sane value (neither f32 nor f64 can say where in the period it is)."""
    specials = (1e15, -1e16, 1e20, -1e20, 9.9e29, -9.9e29)
    rng = _rng("huge", mode, padding, align_corners, type_name)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
    for i, dims in enumerate(dims_for(align_corners)[:2]):
        x = make_data(rng, (1, 2, *dims), type_name)
        grid = special_grid(dims, align_corners, specials).astype(NP[type_name])
        with np.errstate(all="ignore"):
            out = run_irgrid(tmp_path, x, grid, type_name, type_name, attrs, name=f"m{i}")
        x64 = x.astype(np.float64)
        # f64_compute=False: the reflected position of such a coordinate is not exact in any type
        expected, sanity = expected_by_rule(x64, grid.astype(np.float64), dims, mode, padding, align_corners,
                                            f64_compute=False)
        compare(out, expected, sanity, x64, mode, type_name)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_special_coordinates_two_threads(mode, padding, tmp_path):
    """A grid of 12,288 points (48 chunks) mixing special and ordinary coordinates: threads=2 gives
    the rule's values and exactly what threads=1 gives."""
    rng = _rng("threads2", mode, padding)
    dims = (4, 8)
    x = rng.standard_normal((2, 3, *dims)).astype(np.float32)
    grid = rng.integers(-3 * 64, 3 * 64 + 1, size=(2, 48, 128, 2)) / 64.0
    mask = rng.random(grid.shape) < 0.15
    grid[mask] = rng.choice(np.array(SPECIALS), int(mask.sum()))
    nan_pair = np.isnan(grid).any(-1, keepdims=True)
    grid = np.where(nan_pair, NAN, grid).astype(np.float32)  # NaN points: both coordinates NaN
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": False}
    two = run_irgrid(tmp_path, x, grid, "f32", "f32", attrs, threads=2, name="two")
    one = run_irgrid(tmp_path, x, grid, "f32", "f32", attrs, threads=1, name="one")
    assert one.tobytes() == two.tobytes()
    x64 = x.astype(np.float64)
    expected, sanity = expected_by_rule(x64, grid.astype(np.float64), dims, mode, padding, False, False)
    compare(two, expected, sanity, x64, mode, "f32")


# ---------------------------------------------------------------------------- element types

def _lattice_grid(rng, n_points, step=16):
    """Random grid values on a 1/step lattice within +-2.5 (exact in f16 and bf16)."""
    return rng.integers(-int(2.5 * step), int(2.5 * step) + 1, size=(1, n_points, 1, 2)) / step


MIXED = [("f32", "f16"), ("f16", "f32"), ("f32", "bf16"), ("bf16", "f32"), ("f16", "bf16"), ("bf16", "f16"),
         ("f64", "f32"), ("f32", "f64"), ("f64", "f16"), ("f16", "f64"), ("bf16", "f64"), ("f16", "f16"),
         ("bf16", "bf16")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x_type,grid_type", MIXED, ids=[f"{a}-{b}" for a, b in MIXED])
def test_mixed_float_types(x_type, grid_type, mode, tmp_path):
    """Data and grid of different float types: output in the data's type, values as the f64 oracle
    rounded to it. Includes NaN and +-Inf points (an f16 grid turns 3e9 and 1e30 into Inf)."""
    rng = _rng("mixed", x_type, grid_type, mode)
    dims = (4, 8)
    for padding in PADDINGS:
        for align_corners in (False, True):
            x = make_data(rng, (1, 2, *dims), x_type)
            g64 = _lattice_grid(rng, 40)
            g64[0, :4, 0] = [[NAN, NAN], [INF, 0.25], [-0.5, -INF], [3e9, 0.5]]
            with np.errstate(over="ignore"):
                grid = g64.astype(NP[grid_type])
            attrs = {"mode": mode, "padding_mode": padding, "align_corners": align_corners}
            with np.errstate(all="ignore"):
                out = run_irgrid(tmp_path, x, grid, x_type, grid_type, attrs,
                                 name=f"{padding}{int(align_corners)}")
            x64 = x.astype(np.float64)
            expected, sanity = expected_by_rule(x64, grid.astype(np.float64), dims, mode, padding,
                                                align_corners, computes_in_f64(x_type, grid_type))
            assert out.shape == (1, 2, 40, 1)
            # bf16 may come back as its f32 carrier or as an ml_dtypes bfloat16 array
            assert np.asarray(out).dtype in ((np.dtype(np.float32), BF16) if x_type == "bf16" else (NP[x_type],))
            compare(out, expected, sanity, x64, mode, x_type)


@pytest.mark.parametrize("grid_type", ["f32", "bf16"])
@pytest.mark.parametrize("mode", MODES)
def test_bf16_output_is_bf16(mode, grid_type, tmp_path):
    """bf16 data gives a bf16 output: irgrid carries bf16 as f32, so every value must be exactly
    representable in bf16, and equal to the f32 oracle rounded to bf16 (round to nearest even)."""
    rng = _rng("bf16out", mode, grid_type)
    dims = (5, 7)
    x = make_data(rng, (1, 3, *dims), "bf16")
    grid = (rng.integers(-96, 97, size=(1, 6, 9, 2)) / 64.0).astype(NP[grid_type])
    attrs = {"mode": mode, "padding_mode": "border", "align_corners": False}
    out = np.asarray(run_irgrid(tmp_path, x, grid, "bf16", grid_type, attrs), np.float32)
    as_bf16 = out.astype(BF16).astype(np.float32)
    not_bf16 = np.flatnonzero(out != as_bf16)
    assert not_bf16.size == 0, f"{not_bf16.size} of {out.size} values are not bf16, e.g. {out.ravel()[not_bf16[:3]]}"
    expected = run_ort_grid_sample(x.astype(np.float64), grid.astype(np.float64), mode, "border", False)
    want = expected.astype(np.float32).astype(BF16).astype(np.float32)
    # one bf16 ulp: the kernel's f32 result and the f64 oracle may straddle a rounding boundary
    np.testing.assert_allclose(out, want, rtol=2**-7, atol=0)


def _int_rows(type_name: str) -> np.ndarray:
    """Two rows of 8: extremes that cubic overshoots past the type's range, and odd steps whose
    midpoints are exact .5 values (round half to even). Values are exact in f64; narrow types'
    results are exact in f32 too."""
    info = np.iinfo(NP[type_name])
    if info.bits == 64:
        hi = info.max - (2**20 - 1) if info.min < 0 else info.max - (2**21 - 1)  # 2**63 - 2**20 / 2**64 - 2**21
    else:
        hi = int(info.max)
    lo = int(info.min)
    m = 2**40 + 1 if info.bits == 64 else (3 if info.bits == 8 else 1001)
    if info.min < 0:
        row1 = [hi, lo, lo, hi, -m, -m - 1, -m - 2, -m - 3]
    else:
        row1 = [hi, lo, lo, hi, m + 4, m + 3, m + 2, m + 1]
    row0 = [lo, hi, hi, lo, m, m + 1, m + 2, m + 3]
    return np.array([row0, row1], dtype=object)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("type_name", INT_TYPES)
def test_integer_rounding_and_saturation(type_name, mode, tmp_path):
    """Integer data: computed in float, rounded half to even and saturated to the type's true range
    (e.g. INT64_MAX, not the largest double below it). Expected: onnxruntime on the same values in f64,
    converted with saturating_int. Samples sit on half-pixel and whole-pixel x positions."""
    x = np.array(_int_rows(type_name).tolist(), dtype=NP[type_name]).reshape(1, 1, 2, 8)
    xs = (np.arange(0, 15) / 2.0)  # pixel x 0, 0.5, ..., 7
    gx = (2 * xs + 1) / 8 - 1
    gy = np.array([-0.5, 0.5])  # rows 0 and 1 exactly
    grid = np.stack(np.meshgrid(gx, gy), axis=-1).reshape(1, 2, 15, 2)
    attrs = {"mode": mode, "padding_mode": "border", "align_corners": False}
    out = run_irgrid(tmp_path, x, grid.astype(np.float32), type_name, "f32", attrs)
    x64 = np.array([[float(v) for v in row] for row in _int_rows(type_name)]).reshape(1, 1, 2, 8)
    expected = saturating_int(run_ort_grid_sample(x64, grid, mode, "border", False), NP[type_name])
    assert out.dtype == NP[type_name]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("type_name", ["i32", "u8", "i64"])
def test_integer_data_two_threads(type_name, tmp_path):
    """Integer data under threads=2 (many chunks): same as threads=1 and as the rule."""
    rng = _rng("int2", type_name)
    dims = (4, 8)
    x = make_data(rng, (2, 2, *dims), type_name)
    grid = rng.integers(-2 * 32, 2 * 32 + 1, size=(2, 40, 40, 2)) / 32.0
    grid[0, 0, :4] = [[NAN, NAN], [INF, 0.25], [-0.5, -INF], [3e9, 0.5]]
    grid = grid.astype(np.float32)
    attrs = {"mode": "linear", "padding_mode": "reflection", "align_corners": True}
    two = run_irgrid(tmp_path, x, grid, type_name, "f32", attrs, threads=2, name="two")
    one = run_irgrid(tmp_path, x, grid, type_name, "f32", attrs, threads=1, name="one")
    assert one.tobytes() == two.tobytes()
    x64 = x.astype(np.float64)
    expected, sanity = expected_by_rule(x64, grid.astype(np.float64), dims, "linear", "reflection", True,
                                        computes_in_f64(type_name, "f32"))
    # random grid values are not whole pixels: allow the float result to sit on a .5 boundary
    keep = ~sanity
    want = expected[keep]
    got = two[keep].astype(np.float64)
    exact = saturating_int(want, NP[type_name]).astype(np.float64)
    tie = np.abs(np.abs(want - np.floor(want)) - 0.5) < 1e-6 * np.maximum(1, np.abs(want))
    assert (np.where(tie, np.abs(got - exact) <= 1, got == exact)).all()
    check_sanity(two, x64, sanity, "linear", type_name)


# ---------------------------------------------------------------------------- shapes

def _error_ir(tmp_path, x_shape, x_type, grid_shape, grid_type, version="irgrid1"):
    """An IR whose GridSample layer "gs" (id 2) is inconsistent; output port declared by hand."""
    b = IRBuilder("bad")
    xv = b.parameter("X", x_shape, x_type)
    gv = b.parameter("grid", grid_shape, grid_type)
    (y,) = b.layer("GridSample", version, [xv, gv], {"mode": "bilinear"}, name="gs",
                   outputs=[((x_shape[0], x_shape[1], *grid_shape[1:-1]), x_type)])
    b.result(y)
    return b.save(tmp_path / "bad.xml")


SHAPE_ERRORS = [
    ("rank_mismatch", (1, 2, 4, 4), "f32", (1, 3, 3, 3, 2), "f32", "irgrid1", 1, "rank"),
    ("grid_last_dim", (1, 2, 4, 4), "f32", (1, 3, 3, 3), "f32", "irgrid1", 1, "last dim"),
    ("grid_last_dim_3d", (1, 2, 4, 4, 4), "f32", (1, 3, 3, 3, 2), "f32", "irgrid1", 1, "last dim"),
    ("batch_mismatch", (2, 2, 4, 4), "f32", (3, 3, 3, 2), "f32", "irgrid1", 1, "batch"),
    ("integer_grid", (1, 2, 4, 4), "f32", (1, 3, 3, 2), "i32", "irgrid1", 1, "floating-point"),
    ("integer_grid_opset9", (1, 2, 4, 4), "f32", (1, 3, 3, 2), "i64", "opset9", 1, "floating-point"),
    ("rank5_opset9", (1, 2, 3, 4, 4), "f32", (1, 2, 2, 2, 3), "f32", "opset9", 0, "rank 4"),
    ("rank3_opset9", (1, 2, 4), "f32", (1, 3, 1), "f32", "opset9", 0, "rank 4"),
    ("rank2_irgrid1", (2, 4), "f32", (2, 1), "f32", "irgrid1", 0, "rank"),
]


@pytest.mark.parametrize("x_shape,x_type,grid_shape,grid_type,version,port,words",
                         [c[1:] for c in SHAPE_ERRORS], ids=[c[0] for c in SHAPE_ERRORS])
def test_shape_errors(x_shape, x_type, grid_shape, grid_type, version, port, words, tmp_path):
    path = _error_ir(tmp_path, x_shape, x_type, grid_shape, grid_type, version)
    problems = irgrid.check_model(path)
    assert len(problems) == 1, [str(p) for p in problems]
    (problem,) = problems
    assert problem.layer.name == "gs" and problem.layer.type == "GridSample"
    assert problem.port == port
    assert f'GridSample layer "gs" (id 2), port {port}' in str(problem)
    assert words in problem.message

    with pytest.raises(irgrid.ShapeError) as info:
        irgrid.compile_model(path)
    assert info.value.layer.name == "gs"
    assert info.value.port == port
    assert f'GridSample layer "gs" (id 2), port {port}' in str(info.value)


def test_unknown_dims_check_clean_and_run(tmp_path):
    """An IR with -1 dims everywhere but the channels and the grid's last dim: checks clean, runs
    for several input shapes (matching onnxruntime), and a batch mismatch at run time is a
    ShapeError naming the layer and the grid port."""
    b = IRBuilder("dynamic")
    xv = b.parameter("X", (None, 2, None, None), "f32")
    gv = b.parameter("grid", (None, None, None, 2), "f32")
    (y,) = b.layer("GridSample", "irgrid1", [xv, gv], {"mode": "cubic", "padding_mode": "border",
                                                       "align_corners": 1}, name="gs")
    b.result(y)
    path = b.save(tmp_path / "dyn.xml")
    assert "<dim>-1</dim>" in path.read_text()
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    rng = _rng("dyn")
    for n, h, w, ho, wo in [(1, 3, 5, 2, 4), (2, 1, 7, 3, 1), (3, 6, 2, 5, 5)]:
        x = rng.standard_normal((n, 2, h, w)).astype(np.float32)
        grid = (rng.integers(-512, 513, size=(n, ho, wo, 2)) / 256.0).astype(np.float32)
        out = compiled({"X": x, "grid": grid})["gs"]
        expected = run_ort_grid_sample(x.astype(np.float64), grid.astype(np.float64), "cubic", "border", True)
        assert out.shape == (n, 2, ho, wo)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(irgrid.ShapeError) as info:
        compiled({"X": np.zeros((2, 2, 3, 3), np.float32), "grid": np.zeros((3, 2, 2, 2), np.float32)})
    assert info.value.layer.name == "gs"
    assert info.value.port == 1


def test_unknown_dims_volumetric(tmp_path):
    """3-D data with unknown spatial dims (and an unknown rank-5 grid batch) checks clean and runs."""
    b = IRBuilder("dynamic3d")
    xv = b.parameter("X", (None, 1, None, None, None), "f64")
    gv = b.parameter("grid", (None, None, None, None, 3), "f64")
    (y,) = b.layer("GridSample", "irgrid1", [xv, gv], {"mode": "linear", "padding_mode": "reflection",
                                                       "align_corners": 0}, name="gs")
    b.result(y)
    path = b.save(tmp_path / "dyn3d.xml")
    assert irgrid.check_model(path) == []
    rng = _rng("dyn3d")
    x = rng.standard_normal((2, 1, 3, 4, 5))
    grid = rng.integers(-640, 641, size=(2, 2, 3, 4, 3)) / 256.0
    out = irgrid.compile_model(path)({"X": x, "grid": grid})["gs"]
    np.testing.assert_allclose(out, run_ort_grid_sample(x, grid, "linear", "reflection", False), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_inf_in_the_data(mode, padding, align_corners):
    """An Inf pixel beside points that give it weight 0 (docs/semantics.md, "Inf in the data"): irgrid
    reads every tap its padding yields inside the image, with its weight, so 0 x Inf makes NaN there.
    Oracle: torch, which samples alike, except linear + reflection, where torch clips the reflected
    coordinate into [0, L - 1] and so reads a neighbour at weight 0 that irgrid (reflecting each tap) does
    not: there onnx.reference, which reflects as irgrid does. Every path agrees: the scalar path, and on
    1,200 points of 1, 2 and 8 channels the vector paths (gather, pair reads, 16 lanes, interleaved).
    Tolerance: NaN where the oracle has NaN, the same infinities, finite values within 1e-5."""
    torch = pytest.importorskip("torch")
    from irgrid._kernels import sampling
    from irgrid.ops.grid_sample import sample_plan
    from oracles import run_onnx_reference

    points = [(-1.5, 2), (-0.5, 2), (-0.25, 2), (0, 2), (-3, 2.5), (8, 2), (2, 2), (1, 4)]  # (x, y) pixels
    for channels in (1, 2, 8):
        x = np.arange(channels * 36, dtype=np.float32).reshape(1, channels, 6, 6) / 10 + 1
        x[:, :, 2, 1] = np.inf
        x[:, :, 4, 0] = -np.inf
        normalised = [[(2 * p + 1) / 6 - 1 if not align_corners else 2 * p / 5 - 1 for p in point] for point in points]
        grid = np.tile(np.array(normalised, np.float32).reshape(1, 1, -1, 2), (1, 150, 1, 1))  # 1,200 points
        if mode == "linear" and padding == "reflection":
            expected = run_onnx_reference(x, grid, mode, padding, align_corners)
        else:
            expected = torch.nn.functional.grid_sample(
                torch.from_numpy(x), torch.from_numpy(grid), mode={"linear": "bilinear", "cubic": "bicubic"}[mode],
                padding_mode=padding, align_corners=align_corners).numpy()
        plan = sample_plan(x.shape, grid.shape, x.dtype, mode, padding, align_corners)
        vector = plan(x, grid, None, 2)
        was = sampling.use_simd(False)
        try:
            scalar = plan(x, grid, None, 1)
        finally:
            sampling.use_simd(was)
        for got in (vector, scalar):
            np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)

"""Per-axis source positions and weights of Interpolate-4/-11, and their separable application.

Every mode irgrid runs is a product of 1-D filters (nearest, linear_onnx and cubic by definition; `linear`
because OpenVINO normalises by the sum of the product weights, which is the product of the per-axis
sums), so each axis is resampled on its own: `taps` gives, per output index along it, the source
indices and weights, computed once as small 2-D arrays, and `resample` gathers and sums them along that
axis. Coordinates are computed in the type the layer computes in (f32, or f64 for f64 data), with
OpenVINO's operation order, so f32 nearest indices are the ones its CPU plugin picks.
"""
from __future__ import annotations

import numpy as np

from ..common import along


def source_coordinates(mode: str, out_len: int, in_len: int, scale: float, dtype: np.dtype) -> np.ndarray:
    """The input coordinate of each output index along one axis (coordinate_transformation_mode)."""
    t = np.dtype(dtype).type
    o = np.arange(out_len, dtype=dtype)
    if scale == 1 or out_len == in_len:  # OpenVINO's shortcut: the identity, whatever the mode
        return o
    s, half = t(scale), t(0.5)
    if mode == "half_pixel":
        return (o + half) / s - half
    if mode == "pytorch_half_pixel":
        return (o + half) / s - half if out_len > 1 else np.zeros(out_len, dtype)
    if mode == "asymmetric":
        return o / s
    if mode == "tf_half_pixel_for_nn":
        return (o + half) / s
    if mode == "align_corners":
        return o * t(in_len - 1) / t(out_len - 1) if out_len > 1 else np.zeros(out_len, dtype)
    raise ValueError(f"coordinate_transformation_mode {mode!r}")  # attribute parsing admits only those above


def _round_half_away(c: np.ndarray) -> np.ndarray:
    """std::round, exactly (|c| + 0.5 can round up in floating point, c - trunc(c) cannot)."""
    whole = np.trunc(c)
    return np.where(np.abs(c - whole) >= 0.5, whole + np.sign(c), whole)


def nearest_indices(nearest_mode: str, coords: np.ndarray, in_len: int, downsample: bool) -> np.ndarray:
    """nearest_mode's pick of an input index per coordinate, clamped into the axis."""
    if nearest_mode == "round_prefer_floor":
        picked = np.where(coords == np.trunc(coords) + 0.5, np.floor(coords), _round_half_away(coords))
    elif nearest_mode == "round_prefer_ceil":
        picked = _round_half_away(coords)
    elif nearest_mode == "floor":
        picked = np.floor(coords)
    elif nearest_mode == "ceil":
        picked = np.ceil(coords)
    else:  # simple: ceil when downsampling, else truncation
        picked = np.ceil(coords) if downsample else np.trunc(coords)
    return np.clip(picked, 0, in_len - 1).astype(np.int64)


def linear_onnx_taps(coords: np.ndarray, in_len: int) -> tuple[np.ndarray, np.ndarray]:
    """Two taps per coordinate, clamped into [0, in_len - 1]; weights |c - other tap| (0.5 each when the
    taps coincide, at the last index)."""
    c = np.clip(coords, 0, in_len - 1)
    lo = np.minimum(c.astype(np.int64), in_len - 1)
    hi = np.minimum(lo + 1, in_len - 1)
    w_lo, w_hi = np.abs(c - hi.astype(c.dtype)), np.abs(c - lo.astype(c.dtype))
    same = lo == hi
    w_lo[same] = w_hi[same] = 0.5
    return np.stack([lo, hi], 1), np.stack([w_lo, w_hi], 1)


def cubic_taps(coords: np.ndarray, in_len: int, a: float) -> tuple[np.ndarray, np.ndarray]:
    """Keys' cubic with coefficient a on the 4 taps floor(c) - 1 .. floor(c) + 2, which are clamped into
    the axis (edge values repeat), OpenVINO's get_cubic_coeff term for term."""
    t = coords.dtype.type
    a = t(a)
    base = np.floor(coords)
    s = np.abs(coords - base)
    one, two = t(1), t(2)
    weights = np.stack([((a * (s + one) - 5 * a) * (s + one) + 8 * a) * (s + one) - 4 * a,
                        ((a + 2) * s - (a + 3)) * s * s + one,
                        ((a + 2) * (one - s) - (a + 3)) * (one - s) * (one - s) + one,
                        ((a * (two - s) - 5 * a) * (two - s) + 8 * a) * (two - s) - 4 * a], 1)
    indices = np.clip(base.astype(np.int64)[:, None] + np.arange(-1, 3), 0, in_len - 1)
    return indices, weights


def linear_taps(coords: np.ndarray, in_len: int) -> tuple[np.ndarray, np.ndarray]:
    """The `linear` mode without antialias: a unit triangle over round(c) - 2 .. round(c) + 2; taps outside
    the axis are dropped and the rest normalised to sum 1 (all zero when none is left, OpenVINO's 0)."""
    t = coords.dtype.type
    indices = _round_half_away(coords).astype(np.int64)[:, None] + np.arange(-2, 3)
    weights = np.maximum(t(0), t(1) - np.abs(coords[:, None] - indices.astype(coords.dtype)))
    weights[(indices < 0) | (indices >= in_len)] = 0
    total = weights.sum(1, keepdims=True)
    np.divide(weights, total, out=weights, where=total != 0)
    return np.clip(indices, 0, in_len - 1), weights


def resample(x: np.ndarray, axis: int, indices: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """x resampled along `axis`: out[..., o, ...] = sum_k weights[o, k] * x[..., indices[o, k], ...];
    with weights None, indices is 1-D and the result a gather. One gather and multiply-add per tap."""
    if weights is None:
        return np.take(x, indices, axis=axis)
    shape = along(axis, x.ndim)
    out = np.take(x, indices[:, 0], axis=axis)
    out *= weights[:, 0].reshape(shape)
    for k in range(1, indices.shape[1]):
        out += np.take(x, indices[:, k], axis=axis) * weights[:, k].reshape(shape)
    return out

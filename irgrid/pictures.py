"""PNG pictures of image-like tensors (`irgrid infer --save-images DIR`), to see what a model did.

- N,C,H,W with C in 1, 3, 4: grey, RGB, RGBA, scaled to 0..255 by the tensor's own min and max (model
  tensors are rarely in 0..255; one scale per tensor keeps channels and batch items comparable).
- N,H,W,2 (a sampling grid) or N,2,H,W (a flow), x then y: optical-flow colours, hue = direction
  (0 degrees = +x, right; 90 = +y, down), value = magnitude / the largest, with the colour wheel
  beside it as `<name>_legend.png`.
- N,C,D,H,W: its middle depth slice (normalised over the whole volume), pictured as above.

Batch items are tiled side by side, left to right. NaN is drawn black. A 4-D tensor that fits two of
these (N,1,H,2) is pictured as the first; a 5-D one whose last dim is 3 is taken for a 3-D sampling grid
(N,D,H,W,3), which is not pictured, even where D is 1, 3 or 4. Pillow is an optional extra.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Mapping

import numpy as np

from .errors import ConfigError, InputError

_MODES = {1: "L", 3: "RGB", 4: "RGBA"}
_MAX_STEM = 120


def load_pillow():
    """PIL.Image, or a ConfigError saying how to get it (checked before a model runs, not after)."""
    try:
        from PIL import Image
    except ImportError:
        raise ConfigError("pictures need Pillow: pip install 'irgrid[images]'") from None
    return Image


def normalise(array: np.ndarray) -> np.ndarray:
    """uint8 of `array` scaled so its finite min is 0 and its finite max 255; NaN is 0, +-Inf clip."""
    values = array.astype(np.float64)
    finite = values[np.isfinite(values)]
    out = np.zeros(values.shape, np.uint8)
    if finite.size and finite.max() > finite.min():
        low, high = finite.min(), finite.max()
        known = ~np.isnan(values)
        # in halves: high - low overflows when the values span more than the largest double
        out[known] = np.rint((np.clip(values[known], low, high) / 2 - low / 2) * (255 / (high / 2 - low / 2)))
    return out


def flow_colours(flow: np.ndarray) -> np.ndarray:
    """N,H,W,2 (x, y) -> N,H,W,3 uint8 HSV (Pillow's hue scale: 256 = 360 degrees); non-finite is black."""
    x, y = flow[..., 0].astype(np.float64), flow[..., 1].astype(np.float64)
    magnitude = np.hypot(x, y)
    finite = np.isfinite(magnitude)
    peak = magnitude[finite].max(initial=0.0)
    hsv = np.zeros(flow.shape[:-1] + (3,), np.uint8)
    turns = np.mod(np.arctan2(y, x), 2 * np.pi) / (2 * np.pi)
    hsv[..., 0] = np.rint(np.where(finite, turns, 0) * 256) % 256
    hsv[..., 1] = 255
    if peak > 0:
        hsv[..., 2] = np.rint(np.where(finite, magnitude, 0) / peak * 255)
    return hsv


def flow_legend(size: int = 65) -> np.ndarray:
    """The colour wheel of `flow_colours` as H,W,3 HSV: each pixel is the flow from the centre to it
    (full magnitude at the rim), black outside the rim."""
    radius = (size - 1) / 2
    y, x = np.mgrid[0:size, 0:size] - radius
    inside = np.hypot(x, y) <= radius
    return flow_colours(np.stack([x * inside, y * inside], axis=-1)[None])[0]


def _tile(items: np.ndarray) -> np.ndarray:
    """N,H,W[,C] -> H,N*W[,C]: batch items side by side."""
    return np.concatenate(list(items), axis=1)


def picture(array: np.ndarray) -> tuple[np.ndarray, str] | None:
    """(pixels, Pillow mode "L"/"RGB"/"RGBA"/"HSV") for an image-like tensor, None for any other."""
    if array.size == 0 or array.ndim not in (4, 5) or (array.ndim == 5 and array.shape[-1] == 3):
        return None  # nothing to picture, or a 3-D sampling grid
    channels = array.shape[1]
    if channels in _MODES:
        pixels = normalise(array)
        if array.ndim == 5:
            pixels = pixels[:, :, array.shape[2] // 2]
        tiled = _tile(pixels.transpose(0, 2, 3, 1))
        return (tiled[..., 0] if channels == 1 else tiled), _MODES[channels]
    if array.ndim == 4 and array.shape[-1] == 2:
        return _tile(flow_colours(array)), "HSV"
    if array.ndim == 4 and channels == 2:
        return _tile(flow_colours(array.transpose(0, 2, 3, 1))), "HSV"
    return None


def _save(pixels: np.ndarray, mode: str, path: Path) -> None:
    Image = load_pillow()
    if mode == "HSV":
        image = Image.frombytes("HSV", (pixels.shape[1], pixels.shape[0]), pixels.tobytes()).convert("RGB")
    else:
        image = Image.fromarray(np.ascontiguousarray(pixels))  # L, RGB or RGBA from the shape
    image.save(path)


def save_pictures(arrays: Mapping[str, np.ndarray], directory: str | Path) -> list[Path]:
    """Write each image-like array as `<name>.png` in `directory` (and `<name>_legend.png` beside a
    flow); other arrays are skipped. Returns the files written."""
    directory = Path(directory)
    written = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, array in arrays.items():
            found = picture(np.asarray(array))
            if found is None:
                continue
            stem = re.sub(r"[^\w.-]", "_", name)
            if len(stem) > _MAX_STEM:  # file names are limited (255 bytes on most file systems)
                stem = f"{stem[:_MAX_STEM - 17]}_{hashlib.sha1(name.encode()).hexdigest()[:16]}"
            written.append(directory / f"{stem}.png")
            _save(*found, written[-1])
            if found[1] == "HSV":
                written.append(directory / f"{stem}_legend.png")
                _save(flow_legend(), "HSV", written[-1])
    except OSError as exc:
        raise InputError(f"cannot write pictures to {str(directory)!r}: {exc.strerror or exc}") from None
    return written

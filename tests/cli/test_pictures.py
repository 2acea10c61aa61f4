"""PNG pictures of image-like tensors: exact pixels for tiny known tensors, and the CLI's --save-images."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from irgrid import pictures
from oracles import ROOT, assert_one_line_error, run_cli

Image = pytest.importorskip("PIL.Image")
SAMPLES, DOCS = ROOT / "samples", ROOT / "docs" / "images"
RED, DOWN = (255, 0, 0), (126, 255, 0)  # hue 0 and 90 degrees at full value, through Pillow's HSV


def pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image)


def test_grey_is_scaled_by_min_and_max(tmp_path):
    written = pictures.save_pictures({"x": np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)}, tmp_path)
    assert written == [tmp_path / "x.png"]
    np.testing.assert_array_equal(pixels(written[0]), [[0, 85], [170, 255]])


def test_nan_is_black_and_infinities_clip(tmp_path):
    x = np.array([np.nan, 10.0, 20.0, np.inf, -np.inf, 15.0], np.float32).reshape(1, 1, 2, 3)
    pictures.save_pictures({"x": x}, tmp_path)
    np.testing.assert_array_equal(pixels(tmp_path / "x.png"), [[0, 0, 255], [255, 0, 128]])


def test_a_range_beyond_the_largest_double_scales(tmp_path):
    x = np.array([-1.5e308, 0.0, 1.5e308], np.float64).reshape(1, 1, 1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # high - low overflowed: a black picture and 4 RuntimeWarnings
        pictures.save_pictures({"x": x}, tmp_path)
    np.testing.assert_array_equal(pixels(tmp_path / "x.png"), [[0, 128, 255]])


def test_a_3d_grid_is_not_a_volume(tmp_path):
    """(N,D,H,W,3) with D = 3 fits a 3-channel volume too; its last dim says it is a 3-D grid."""
    assert pictures.save_pictures({"g3": np.ones((1, 3, 4, 5, 3), np.float32)}, tmp_path) == []


def test_a_name_too_long_for_a_file_name(tmp_path):
    name = "features/" + "x" * 300
    (path,) = pictures.save_pictures({name: np.ones((1, 1, 2, 2), np.float32)}, tmp_path)
    assert path.exists() and len(path.name) <= 124 and path.name.startswith("features_xxx")


def test_batch_items_tile_side_by_side(tmp_path):
    x = np.zeros((2, 3, 4, 5), np.float32)
    x[1, 0] = 1.0  # the second item red
    pictures.save_pictures({"rgb": x, "rgba": np.ones((1, 4, 2, 3), np.uint8)}, tmp_path)
    rgb = pixels(tmp_path / "rgb.png")
    assert rgb.shape == (4, 10, 3)
    assert (rgb[:, :5] == 0).all() and (rgb[:, 5:] == RED).all()
    assert pixels(tmp_path / "rgba.png").shape == (2, 3, 4)


def test_volume_shows_its_middle_slice(tmp_path):
    volume = np.zeros((1, 1, 3, 2, 2), np.float32)
    volume[0, 0, 1] = [[0, 1], [2, 3]]
    volume[0, 0, 2] = 3  # outside the picture, but in the tensor's min/max
    pictures.save_pictures({"v": volume}, tmp_path)
    np.testing.assert_array_equal(pixels(tmp_path / "v.png"), [[0, 85], [170, 255]])


def test_flow_colours_direction_and_magnitude(tmp_path):
    grid = np.zeros((1, 2, 3, 2), np.float32)
    grid[0, :] = [[1, 0], [0, 1], [0.5, 0]]  # right, down, right at half the largest magnitude
    flow = np.ascontiguousarray(grid.transpose(0, 3, 1, 2))  # the same as N,2,H,W
    written = pictures.save_pictures({"grid": grid, "flow": flow}, tmp_path)
    assert [p.name for p in written] == ["grid.png", "grid_legend.png", "flow.png", "flow_legend.png"]
    for name in ("grid", "flow"):
        rgb = pixels(tmp_path / f"{name}.png")
        assert rgb.shape == (2, 3, 3) and (rgb[0] == rgb[1]).all()
        assert tuple(rgb[0, 0]) == RED and tuple(rgb[0, 1]) == DOWN and tuple(rgb[0, 2]) == (128, 0, 0)


def test_flow_legend_is_the_colour_wheel(tmp_path):
    pictures.save_pictures({"g": np.ones((1, 2, 2, 2), np.float32)}, tmp_path)
    wheel = pixels(tmp_path / "g_legend.png")
    assert wheel.shape == (65, 65, 3)
    assert tuple(wheel[32, 32]) == (0, 0, 0) and tuple(wheel[0, 0]) == (0, 0, 0)  # centre, outside the rim
    assert tuple(wheel[32, 64]) == RED and tuple(wheel[64, 32]) == DOWN


@pytest.mark.parametrize("shape", [(4, 4), (1, 5, 4, 4), (1, 3, 0, 4), (1, 2, 3, 4, 5, 6)])
def test_other_tensors_are_skipped(tmp_path, shape):
    assert pictures.save_pictures({"t": np.ones(shape, np.float32)}, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sample, sizes", [
    ("flow_warp", {"input_image.png": (128, 96), "input_flow.png": (128, 96),
                   "input_flow_legend.png": (65, 65), "output_warped.png": (128, 96)}),
    ("volume_warp", {"input_volume.png": (32, 32), "input_displacement.png": (32, 32),
                     "output_warped.png": (32, 32)}),
])
def test_cli_saves_the_samples_pictures(tmp_path, sample, sizes):
    proc = run_cli("infer", SAMPLES / sample / "model.xml", "-niter", 1, "--save-images", tmp_path / "pics",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"Pictures saved to {tmp_path / 'pics'}: " + ", ".join(sizes) in proc.stdout
    for name, size in sizes.items():
        with Image.open(tmp_path / "pics" / name) as image:
            assert image.size == size and image.mode in ("L", "RGB")
        # the README's pictures are what the CLI draws today
        np.testing.assert_array_equal(pixels(tmp_path / "pics" / name), pixels(DOCS / sample / name))
    with np.load(SAMPLES / sample / "inputs.npz") as inputs:
        first = inputs.files[0]  # an image or a volume: its pixels are the normalised tensor's
        np.testing.assert_array_equal(pixels(tmp_path / "pics" / f"input_{first}.png"),
                                      pictures.picture(inputs[first])[0])


def test_readme_shows_every_picture_in_docs():
    readme = (ROOT / "README.md").read_text()
    shown = {ROOT / p for p in re.findall(r"(docs/images/[\w/.-]+\.png)", readme)}
    assert shown == set(DOCS.rglob("*.png")) and all(p.is_file() for p in shown)


def test_cli_without_pillow_says_what_to_install(tmp_path):
    fake = tmp_path / "no_pillow" / "PIL"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('Pillow is not installed')\n")
    proc = run_cli("infer", SAMPLES / "flow_warp" / "model.xml", "--save-images", tmp_path / "pics",
                   cwd=tmp_path, env={"PYTHONPATH": str(fake.parent)})
    assert_one_line_error(proc, 2, "ConfigError", "pip install 'irgrid[images]'")
    assert proc.stdout == "" and not (tmp_path / "pics").exists()  # refused before running


def test_cli_unwritable_directory(tmp_path):
    (tmp_path / "file").write_text("")
    proc = run_cli("infer", SAMPLES / "flow_warp" / "model.xml", "-niter", 1,
                   "--save-images", tmp_path / "file" / "d", cwd=tmp_path)
    assert_one_line_error(proc, 2, "cannot write pictures", "file")

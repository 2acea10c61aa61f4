"""ExperimentalDetectronPriorGridGenerator-6: irgrid vs OpenVINO's CPU plugin, the spec formula, and
OpenVINO's own hard-coded reference vectors.

OpenVINO has no Python builder for this op: irgrid's IRBuilder writes the layer and BOTH OpenVINO
(`core.read_model` + compile at f32) and irgrid read that same file.

Tolerances:
- f32: OpenVINO and irgrid both compute step = f32(image_W) / layer_w, centre = step * (w + 0.5) and
  prior + centre in f32, so the written rows must agree within 1 ulp (in practice bit-exact).
- f64: OpenVINO's CPU plugin runs the op in f32 while irgrid computes in f64: rtol 1e-6 (plus an
  absolute 1e-6 x the largest magnitude, for rows where prior + centre cancels to near zero).
- Only the first h*w*priors rows are written (OpenVINO leaves the rest undefined): only those are
  compared with OpenVINO; irgrid's tail rows must be exactly 0.
"""
from __future__ import annotations

import numpy as np
import pytest

import irgrid
from irgrid import LayerAttributeError
from irgrid.builder import IRBuilder

OP = "ExperimentalDetectronPriorGridGenerator"
F32_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


def build(path, *, priors, featmap_shape, image_shape, flatten=True, h=0, w=0, stride_x=0.0, stride_y=0.0,
          priors_const=True, element_type="f32", version="opset6"):
    b = IRBuilder("prior_grid")
    if priors_const:
        p = b.const(priors, "priors", element_type=element_type)
    else:
        p = b.parameter("priors", priors.shape, element_type)
    feat = b.parameter("feat", featmap_shape, element_type)
    image = b.parameter("image", image_shape, element_type)
    (y,) = b.layer(OP, version, [p, feat, image],
                   {"flatten": flatten, "h": h, "w": w, "stride_x": stride_x, "stride_y": stride_y}, name="pg")
    b.result(y, "rois")
    return b.save(path)


def spec_grid(priors, featmap_shape, image_shape, h, w, stride_x, stride_y) -> np.ndarray:
    """The spec formula in float64, written here independently of irgrid: [layer_h*layer_w*P, 4]."""
    fh, fw = featmap_shape[2], featmap_shape[3]
    ih, iw = image_shape[2], image_shape[3]
    layer_h, layer_w = (h or fh), (w or fw)
    step_w = stride_x or iw / layer_w
    step_h = stride_y or ih / layer_h
    pr = np.asarray(priors, np.float64)
    rows = []
    for y in range(layer_h):
        for x in range(layer_w):
            cx, cy = step_w * (x + 0.5), step_h * (y + 0.5)
            rows.append(pr + np.array([cx, cy, cx, cy]))
    return np.concatenate(rows) if rows else np.zeros((0, 4))


def run_ov(ov_core, path, inputs):
    compiled = ov_core.compile_model(ov_core.read_model(str(path)), "CPU", F32_CONFIG)
    return np.asarray(compiled(inputs)[compiled.outputs[0]])


def _random_config(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    fh, fw = int(rng.integers(1, 13)), int(rng.integers(1, 13))
    n = int(rng.integers(1, 6))
    dtype = (np.float32, np.float64)[seed % 2]
    return dict(
        seed=seed,
        dtype=dtype,
        priors=(rng.normal(scale=60.0, size=(n, 4))).astype(dtype),
        featmap_shape=(1, int(rng.integers(1, 5)), fh, fw),
        image_shape=(1, int(rng.integers(1, 4)), int(rng.integers(1, 900)), int(rng.integers(1, 900))),
        flatten=bool(rng.integers(0, 2)),
        h=int(rng.integers(1, fh + 1)) if rng.random() < 0.5 else 0,
        w=int(rng.integers(1, fw + 1)) if rng.random() < 0.5 else 0,
        stride_x=float(np.round(rng.uniform(0.5, 64.0), 3)) if rng.random() < 0.5 else 0.0,
        stride_y=float(np.round(rng.uniform(0.5, 64.0), 3)) if rng.random() < 0.5 else 0.0,
        priors_const=bool((seed // 2) % 2),
    )


@pytest.mark.parametrize("seed", range(40))
def test_random_config_vs_openvino(seed, tmp_path, ov_core):
    cfg = _random_config(seed)
    dtype = cfg["dtype"]
    et = "f32" if dtype == np.float32 else "f64"
    path = build(tmp_path / "pg.xml", priors=cfg["priors"], featmap_shape=cfg["featmap_shape"],
                 image_shape=cfg["image_shape"], flatten=cfg["flatten"], h=cfg["h"], w=cfg["w"],
                 stride_x=cfg["stride_x"], stride_y=cfg["stride_y"], priors_const=cfg["priors_const"],
                 element_type=et)
    rng = np.random.default_rng(1000 + seed)
    feat = rng.normal(size=cfg["featmap_shape"]).astype(dtype)
    image = rng.normal(size=cfg["image_shape"]).astype(dtype)
    ov_inputs = ([] if cfg["priors_const"] else [cfg["priors"]]) + [feat, image]
    ir_inputs = {"feat": feat, "image": image}
    if not cfg["priors_const"]:
        ir_inputs["priors"] = cfg["priors"]

    assert irgrid.check_model(path) == []
    out = irgrid.compile_model(path)(ir_inputs)["pg"]
    expected_ov = run_ov(ov_core, path, ov_inputs)

    _, _, fh, fw = cfg["featmap_shape"]
    n = cfg["priors"].shape[0]
    full_shape = (fh * fw * n, 4) if cfg["flatten"] else (fh, fw, n, 4)
    assert out.shape == expected_ov.shape == full_shape
    assert out.dtype == dtype

    written = (cfg["h"] or fh) * (cfg["w"] or fw) * n
    got = out.reshape(-1, 4)
    ref = expected_ov.reshape(-1, 4)[:written]
    if dtype == np.float32:
        np.testing.assert_array_max_ulp(got[:written], ref, maxulp=1)
    else:
        scale = float(np.abs(ref).max())
        np.testing.assert_allclose(got[:written], ref, rtol=1e-6, atol=1e-6 * scale)
    # Tail rows: irgrid defines them as zero.
    assert np.all(got[written:] == 0)
    # And the spec formula computed here in float64 (f32 results within f32 rounding of the steps).
    spec = spec_grid(cfg["priors"], cfg["featmap_shape"], cfg["image_shape"], cfg["h"], cfg["w"],
                     cfg["stride_x"], cfg["stride_y"])
    scale = float(np.abs(spec).max())
    if dtype == np.float32:
        np.testing.assert_allclose(got[:written], spec, rtol=1e-5, atol=1e-5 * scale)
    else:
        np.testing.assert_allclose(got[:written], spec, rtol=1e-12, atol=1e-12 * scale)


def test_random_configs_cover_the_space():
    """The seeded configs above hit every branch at least once (so the test is not vacuous)."""
    cfgs = [_random_config(s) for s in range(40)]
    assert {c["flatten"] for c in cfgs} == {True, False}
    assert {c["priors_const"] for c in cfgs} == {True, False}
    assert {c["dtype"] for c in cfgs} == {np.float32, np.float64}
    assert any(c["h"] == 0 for c in cfgs) and any(0 < c["h"] < c["featmap_shape"][2] for c in cfgs)
    assert any(c["w"] == 0 for c in cfgs) and any(0 < c["w"] < c["featmap_shape"][3] for c in cfgs)
    assert any(c["stride_x"] == 0 for c in cfgs) and any(c["stride_x"] > 0 for c in cfgs)
    assert any(c["stride_y"] == 0 for c in cfgs) and any(c["stride_y"] > 0 for c in cfgs)
    assert {c["priors"].shape[0] for c in cfgs} == {1, 2, 3, 4, 5}


@pytest.mark.parametrize("version", ["experimental", "extension"])
def test_version_aliases(version, tmp_path, ov_core):
    priors = np.array([[-8, -4, 8, 4], [-2, -2, 2, 2]], np.float32)
    path = build(tmp_path / "pg.xml", priors=priors, featmap_shape=(1, 2, 3, 4), image_shape=(1, 3, 30, 40),
                 version=version)
    out = irgrid.compile_model(path)({"feat": np.zeros((1, 2, 3, 4), np.float32),
                                      "image": np.zeros((1, 3, 30, 40), np.float32)})["pg"]
    np.testing.assert_array_equal(out, spec_grid(priors, (1, 2, 3, 4), (1, 3, 30, 40), 0, 0, 0, 0))


# ---------------------------------------------------------------------------------------------
# h / w larger than the feature map: OpenVINO writes out of bounds; irgrid refuses.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h,w", [(5, 0), (0, 7), (6, 9), (4, 7)])
def test_grid_larger_than_feature_map(h, w, tmp_path):
    priors = np.zeros((2, 4), np.float32)
    path = build(tmp_path / "pg.xml", priors=priors, featmap_shape=(1, 2, 4, 6), image_shape=(1, 3, 40, 60),
                 h=0, w=0)
    text = path.read_text().replace('h="0" w="0"', f'h="{h}" w="{w}"')
    assert f'h="{h}"' in text
    path.write_text(text)
    model = irgrid.read_model(path)
    problems = irgrid.check_model(model)
    assert len(problems) == 1
    (problem,) = problems
    assert problem.layer.type == OP and problem.layer.name == "pg"
    assert problem.kind == "layerattribute"
    assert ("h=" in problem.message) if h > 4 else ("w=" in problem.message)
    with pytest.raises(LayerAttributeError) as info:
        irgrid.compile_model(model)
    assert OP in str(info.value) and '"pg"' in str(info.value)


def test_grid_larger_than_feature_map_given_by_shapes(tmp_path):
    """A dynamic feature map: fine as declared, refused once `shapes` makes it smaller than h."""
    b = IRBuilder("dyn")
    p = b.const(np.zeros((1, 4), np.float32), "priors")
    feat = b.parameter("feat", (1, 2, None, None))
    image = b.parameter("image", (1, 3, 64, 64))
    (y,) = b.layer(OP, "opset6", [p, feat, image], {"flatten": True, "h": 5, "w": 0, "stride_x": 0.0,
                                                     "stride_y": 0.0}, name="pg")
    b.result(y, "rois")
    path = b.save(tmp_path / "dyn.xml")
    assert irgrid.check_model(path) == []
    assert irgrid.check_model(path, shapes={"feat": (1, 2, 5, 3)}) == []
    problems = irgrid.check_model(path, shapes={"feat": (1, 2, 4, 3)})
    assert len(problems) == 1 and problems[0].layer.name == "pg" and "h=5" in problems[0].message
    with pytest.raises(LayerAttributeError):
        irgrid.compile_model(path, shapes={"feat": (1, 2, 4, 3)})


# ---------------------------------------------------------------------------------------------
# OpenVINO's hard-coded reference vectors, ported from
# openvinotoolkit/openvino: src/plugins/template/tests/functional/op_reference/
#     experimental_detectron_detection_prior_grid.cpp   (generateExperimentalPGGFloatParams)
# Attrs{flatten, h, w, stride_x, stride_y}; the priors, feature map and image are Parameters; the
# feature map and image hold iota values (unused by the op); only len(ref) values are compared
# (`actual_comparision_size`). All values are multiples of 0.5 below 1024: exact in f16, f32, f64.
# ---------------------------------------------------------------------------------------------

OV_REFERENCE_CASES = [
    dict(
        attrs=(True, 0, 0, 4.0, 4.0), priors_shape=(3, 4), feat=(1, 16, 4, 5), image=(1, 3, 100, 200), out=(60, 4),
        priors=[-24.5, -12.5, 24.5, 12.5, -16.5, -16.5, 16.5, 16.5, -12.5, -24.5, 12.5, 24.5],
        ref=[-22.5, -10.5, 26.5, 14.5, -14.5, -14.5, 18.5, 18.5, -10.5, -22.5, 14.5, 26.5, -18.5,
             -10.5, 30.5, 14.5, -10.5, -14.5, 22.5, 18.5, -6.5, -22.5, 18.5, 26.5, -14.5, -10.5,
             34.5, 14.5, -6.5, -14.5, 26.5, 18.5, -2.5, -22.5, 22.5, 26.5, -10.5, -10.5, 38.5,
             14.5, -2.5, -14.5, 30.5, 18.5, 1.5, -22.5, 26.5, 26.5, -6.5, -10.5, 42.5, 14.5,
             1.5, -14.5, 34.5, 18.5, 5.5, -22.5, 30.5, 26.5, -22.5, -6.5, 26.5, 18.5, -14.5,
             -10.5, 18.5, 22.5, -10.5, -18.5, 14.5, 30.5, -18.5, -6.5, 30.5, 18.5, -10.5, -10.5,
             22.5, 22.5, -6.5, -18.5, 18.5, 30.5, -14.5, -6.5, 34.5, 18.5, -6.5, -10.5, 26.5,
             22.5, -2.5, -18.5, 22.5, 30.5, -10.5, -6.5, 38.5, 18.5, -2.5, -10.5, 30.5, 22.5,
             1.5, -18.5, 26.5, 30.5, -6.5, -6.5, 42.5, 18.5, 1.5, -10.5, 34.5, 22.5, 5.5,
             -18.5, 30.5, 30.5, -22.5, -2.5, 26.5, 22.5, -14.5, -6.5, 18.5, 26.5, -10.5, -14.5,
             14.5, 34.5, -18.5, -2.5, 30.5, 22.5, -10.5, -6.5, 22.5, 26.5, -6.5, -14.5, 18.5,
             34.5, -14.5, -2.5, 34.5, 22.5, -6.5, -6.5, 26.5, 26.5, -2.5, -14.5, 22.5, 34.5,
             -10.5, -2.5, 38.5, 22.5, -2.5, -6.5, 30.5, 26.5, 1.5, -14.5, 26.5, 34.5, -6.5,
             -2.5, 42.5, 22.5, 1.5, -6.5, 34.5, 26.5, 5.5, -14.5, 30.5, 34.5, -22.5, 1.5,
             26.5, 26.5, -14.5, -2.5, 18.5, 30.5, -10.5, -10.5, 14.5, 38.5, -18.5, 1.5, 30.5,
             26.5, -10.5, -2.5, 22.5, 30.5, -6.5, -10.5, 18.5, 38.5, -14.5, 1.5, 34.5, 26.5,
             -6.5, -2.5, 26.5, 30.5, -2.5, -10.5, 22.5, 38.5, -10.5, 1.5, 38.5, 26.5, -2.5,
             -2.5, 30.5, 30.5, 1.5, -10.5, 26.5, 38.5, -6.5, 1.5, 42.5, 26.5, 1.5, -2.5,
             34.5, 30.5, 5.5, -10.5, 30.5, 38.5]),
    dict(
        attrs=(False, 0, 0, 8.0, 8.0), priors_shape=(3, 4), feat=(1, 16, 3, 7), image=(1, 3, 100, 200),
        out=(3, 7, 3, 4),
        priors=[-44.5, -24.5, 44.5, 24.5, -32.5, -32.5, 32.5, 32.5, -24.5, -44.5, 24.5, 44.5],
        ref=[-40.5, -20.5, 48.5, 28.5, -28.5, -28.5, 36.5, 36.5, -20.5, -40.5, 28.5, 48.5, -32.5, -20.5, 56.5, 28.5,
             -20.5, -28.5, 44.5, 36.5, -12.5, -40.5, 36.5, 48.5, -24.5, -20.5, 64.5, 28.5, -12.5, -28.5, 52.5, 36.5,
             -4.5, -40.5, 44.5, 48.5, -16.5, -20.5, 72.5, 28.5, -4.5, -28.5, 60.5, 36.5, 3.5, -40.5, 52.5, 48.5,
             -8.5, -20.5, 80.5, 28.5, 3.5, -28.5, 68.5, 36.5, 11.5, -40.5, 60.5, 48.5, -0.5, -20.5, 88.5, 28.5,
             11.5, -28.5, 76.5, 36.5, 19.5, -40.5, 68.5, 48.5, 7.5, -20.5, 96.5, 28.5, 19.5, -28.5, 84.5, 36.5,
             27.5, -40.5, 76.5, 48.5, -40.5, -12.5, 48.5, 36.5, -28.5, -20.5, 36.5, 44.5, -20.5, -32.5, 28.5, 56.5,
             -32.5, -12.5, 56.5, 36.5, -20.5, -20.5, 44.5, 44.5, -12.5, -32.5, 36.5, 56.5, -24.5, -12.5, 64.5, 36.5,
             -12.5, -20.5, 52.5, 44.5, -4.5, -32.5, 44.5, 56.5, -16.5, -12.5, 72.5, 36.5, -4.5, -20.5, 60.5, 44.5,
             3.5, -32.5, 52.5, 56.5, -8.5, -12.5, 80.5, 36.5, 3.5, -20.5, 68.5, 44.5, 11.5, -32.5, 60.5, 56.5,
             -0.5, -12.5, 88.5, 36.5, 11.5, -20.5, 76.5, 44.5, 19.5, -32.5, 68.5, 56.5, 7.5, -12.5, 96.5, 36.5,
             19.5, -20.5, 84.5, 44.5, 27.5, -32.5, 76.5, 56.5, -40.5, -4.5, 48.5, 44.5, -28.5, -12.5, 36.5, 52.5,
             -20.5, -24.5, 28.5, 64.5, -32.5, -4.5, 56.5, 44.5, -20.5, -12.5, 44.5, 52.5, -12.5, -24.5, 36.5, 64.5,
             -24.5, -4.5, 64.5, 44.5, -12.5, -12.5, 52.5, 52.5, -4.5, -24.5, 44.5, 64.5, -16.5, -4.5, 72.5, 44.5,
             -4.5, -12.5, 60.5, 52.5, 3.5, -24.5, 52.5, 64.5, -8.5, -4.5, 80.5, 44.5, 3.5, -12.5, 68.5, 52.5,
             11.5, -24.5, 60.5, 64.5, -0.5, -4.5, 88.5, 44.5, 11.5, -12.5, 76.5, 52.5, 19.5, -24.5, 68.5, 64.5,
             7.5, -4.5, 96.5, 44.5, 19.5, -12.5, 84.5, 52.5, 27.5, -24.5, 76.5, 64.5]),
    dict(
        attrs=(True, 3, 6, 64.0, 64.0), priors_shape=(3, 4), feat=(1, 16, 100, 100), image=(1, 3, 100, 200),
        out=(30000, 4),
        priors=[-364.5, -184.5, 364.5, 184.5, -256.5, -256.5, 256.5, 256.5, -180.5, -360.5, 180.5, 360.5],
        ref=[-332.5, -152.5, 396.5, 216.5, -224.5, -224.5, 288.5, 288.5, -148.5, -328.5, 212.5, 392.5,
             -268.5, -152.5, 460.5, 216.5, -160.5, -224.5, 352.5, 288.5, -84.5, -328.5, 276.5, 392.5,
             -204.5, -152.5, 524.5, 216.5, -96.5, -224.5, 416.5, 288.5, -20.5, -328.5, 340.5, 392.5,
             -140.5, -152.5, 588.5, 216.5, -32.5, -224.5, 480.5, 288.5, 43.5, -328.5, 404.5, 392.5,
             -76.5, -152.5, 652.5, 216.5, 31.5, -224.5, 544.5, 288.5, 107.5, -328.5, 468.5, 392.5,
             -12.5, -152.5, 716.5, 216.5, 95.5, -224.5, 608.5, 288.5, 171.5, -328.5, 532.5, 392.5,
             -332.5, -88.5, 396.5, 280.5, -224.5, -160.5, 288.5, 352.5, -148.5, -264.5, 212.5, 456.5,
             -268.5, -88.5, 460.5, 280.5, -160.5, -160.5, 352.5, 352.5, -84.5, -264.5, 276.5, 456.5,
             -204.5, -88.5, 524.5, 280.5, -96.5, -160.5, 416.5, 352.5, -20.5, -264.5, 340.5, 456.5,
             -140.5, -88.5, 588.5, 280.5, -32.5, -160.5, 480.5, 352.5, 43.5, -264.5, 404.5, 456.5,
             -76.5, -88.5, 652.5, 280.5, 31.5, -160.5, 544.5, 352.5, 107.5, -264.5, 468.5, 456.5,
             -12.5, -88.5, 716.5, 280.5, 95.5, -160.5, 608.5, 352.5, 171.5, -264.5, 532.5, 456.5,
             -332.5, -24.5, 396.5, 344.5, -224.5, -96.5, 288.5, 416.5, -148.5, -200.5, 212.5, 520.5,
             -268.5, -24.5, 460.5, 344.5, -160.5, -96.5, 352.5, 416.5, -84.5, -200.5, 276.5, 520.5,
             -204.5, -24.5, 524.5, 344.5, -96.5, -96.5, 416.5, 416.5, -20.5, -200.5, 340.5, 520.5,
             -140.5, -24.5, 588.5, 344.5, -32.5, -96.5, 480.5, 416.5, 43.5, -200.5, 404.5, 520.5,
             -76.5, -24.5, 652.5, 344.5, 31.5, -96.5, 544.5, 416.5, 107.5, -200.5, 468.5, 520.5,
             -12.5, -24.5, 716.5, 344.5, 95.5, -96.5, 608.5, 416.5, 171.5, -200.5, 532.5, 520.5]),
    dict(
        attrs=(False, 5, 3, 32.0, 32.0), priors_shape=(3, 4), feat=(1, 16, 100, 100), image=(1, 3, 100, 200),
        out=(100, 100, 3, 4),
        priors=[-180.5, -88.5, 180.5, 88.5, -128.5, -128.5, 128.5, 128.5, -92.5, -184.5, 92.5, 184.5],
        ref=[-164.5, -72.5, 196.5, 104.5, -112.5, -112.5, 144.5, 144.5, -76.5, -168.5, 108.5, 200.5,
             -132.5, -72.5, 228.5, 104.5, -80.5, -112.5, 176.5, 144.5, -44.5, -168.5, 140.5, 200.5,
             -100.5, -72.5, 260.5, 104.5, -48.5, -112.5, 208.5, 144.5, -12.5, -168.5, 172.5, 200.5,
             -164.5, -40.5, 196.5, 136.5, -112.5, -80.5, 144.5, 176.5, -76.5, -136.5, 108.5, 232.5,
             -132.5, -40.5, 228.5, 136.5, -80.5, -80.5, 176.5, 176.5, -44.5, -136.5, 140.5, 232.5,
             -100.5, -40.5, 260.5, 136.5, -48.5, -80.5, 208.5, 176.5, -12.5, -136.5, 172.5, 232.5,
             -164.5, -8.5, 196.5, 168.5, -112.5, -48.5, 144.5, 208.5, -76.5, -104.5, 108.5, 264.5,
             -132.5, -8.5, 228.5, 168.5, -80.5, -48.5, 176.5, 208.5, -44.5, -104.5, 140.5, 264.5,
             -100.5, -8.5, 260.5, 168.5, -48.5, -48.5, 208.5, 208.5, -12.5, -104.5, 172.5, 264.5,
             -164.5, 23.5, 196.5, 200.5, -112.5, -16.5, 144.5, 240.5, -76.5, -72.5, 108.5, 296.5,
             -132.5, 23.5, 228.5, 200.5, -80.5, -16.5, 176.5, 240.5, -44.5, -72.5, 140.5, 296.5,
             -100.5, 23.5, 260.5, 200.5, -48.5, -16.5, 208.5, 240.5, -12.5, -72.5, 172.5, 296.5,
             -164.5, 55.5, 196.5, 232.5, -112.5, 15.5, 144.5, 272.5, -76.5, -40.5, 108.5, 328.5,
             -132.5, 55.5, 228.5, 232.5, -80.5, 15.5, 176.5, 272.5, -44.5, -40.5, 140.5, 328.5,
             -100.5, 55.5, 260.5, 232.5, -48.5, 15.5, 208.5, 272.5, -12.5, -40.5, 172.5, 328.5]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=["f32", "f64", "f16"])
@pytest.mark.parametrize("case", range(len(OV_REFERENCE_CASES)))
def test_openvino_reference_vectors(case, dtype, tmp_path):
    c = OV_REFERENCE_CASES[case]
    flatten, h, w, stride_x, stride_y = c["attrs"]
    et = {np.float32: "f32", np.float64: "f64", np.float16: "f16"}[dtype]
    priors = np.array(c["priors"], dtype).reshape(c["priors_shape"])
    path = build(tmp_path / "ref.xml", priors=priors, featmap_shape=c["feat"], image_shape=c["image"],
                 flatten=flatten, h=h, w=w, stride_x=stride_x, stride_y=stride_y, priors_const=False,
                 element_type=et)
    # iota as in the OpenVINO test (mod 2048 so f16 stays finite; the op reads only the shapes)
    feat = (np.arange(np.prod(c["feat"])) % 2048).astype(dtype).reshape(c["feat"])
    image = (np.arange(np.prod(c["image"])) % 2048).astype(dtype).reshape(c["image"])
    out = irgrid.compile_model(path)({"priors": priors, "feat": feat, "image": image})["pg"]
    assert out.shape == c["out"] and out.dtype == dtype
    ref = np.array(c["ref"], np.float64)
    flat = out.reshape(-1)
    np.testing.assert_array_equal(flat[:ref.size].astype(np.float64), ref)
    assert np.all(flat[ref.size:] == 0)


def test_reference_vectors_also_match_openvino_run(tmp_path, ov_core):
    """The same ported case read and run by OpenVINO: OpenVINO agrees with its own reference data
    (checks the port of the vectors and the IR that both read)."""
    for c in OV_REFERENCE_CASES:
        flatten, h, w, stride_x, stride_y = c["attrs"]
        priors = np.array(c["priors"], np.float32).reshape(c["priors_shape"])
        path = build(tmp_path / "ref.xml", priors=priors, featmap_shape=c["feat"], image_shape=c["image"],
                     flatten=flatten, h=h, w=w, stride_x=stride_x, stride_y=stride_y, priors_const=False)
        feat = np.zeros(c["feat"], np.float32)
        image = np.zeros(c["image"], np.float32)
        got = run_ov(ov_core, path, [priors, feat, image]).reshape(-1)
        ref = np.array(c["ref"], np.float32)
        np.testing.assert_array_equal(got[:ref.size], ref)


# ---------------------------------------------------------------------------------------------
# Threads: 1 and 2 threads give bitwise-identical outputs on a large case.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h,w", [(0, 0), (150, 301)])
def test_threads_bitwise_identical_large(h, w, tmp_path):
    rng = np.random.default_rng(7)
    priors = rng.normal(scale=100.0, size=(5, 4)).astype(np.float32)
    feat_shape, image_shape = (1, 256, 200, 336), (1, 3, 800, 1344)
    path = build(tmp_path / "big.xml", priors=priors, featmap_shape=feat_shape, image_shape=image_shape,
                 h=h, w=w)
    # Only the shapes of the feature map and image are used: zero-stride views cost no memory.
    inputs = {"feat": np.broadcast_to(np.float32(0), feat_shape),
              "image": np.broadcast_to(np.float32(0), image_shape)}
    one = irgrid.compile_model(path, threads=1)(inputs)["pg"]
    two = irgrid.compile_model(path, threads=2)(inputs)["pg"]
    assert one.shape == (200 * 336 * 5, 4)
    np.testing.assert_array_equal(one.view(np.uint32), two.view(np.uint32))
    written = (h or 200) * (w or 336) * 5
    spec = spec_grid(priors, feat_shape, image_shape, h, w, 0.0, 0.0)
    np.testing.assert_allclose(one[:written], spec, rtol=1e-5, atol=1e-5 * float(np.abs(spec).max()))
    assert np.all(one[written:] == 0)


def test_large_case_matches_openvino(tmp_path, ov_core):
    rng = np.random.default_rng(8)
    priors = rng.normal(scale=100.0, size=(3, 4)).astype(np.float32)
    feat_shape, image_shape = (1, 256, 200, 336), (1, 3, 800, 1344)
    path = build(tmp_path / "big.xml", priors=priors, featmap_shape=feat_shape, image_shape=image_shape)
    feat = np.zeros(feat_shape, np.float32)
    image = np.zeros(image_shape, np.float32)
    expected = run_ov(ov_core, path, [feat, image])
    for threads in (1, 2):
        got = irgrid.compile_model(path, threads=threads)({"feat": feat, "image": image})["pg"]
        np.testing.assert_array_max_ulp(got, expected, maxulp=1)


@pytest.mark.parametrize("seed", range(100, 106))
def test_random_config_f16_vs_openvino(seed, tmp_path, ov_core):
    """f16: both compute in f32 and round once to f16 (OpenVINO's CPU plugin, irgrid's compute type):
    the written rows must agree within 1 f16 ulp."""
    cfg = _random_config(seed)
    priors = cfg["priors"].astype(np.float16)
    path = build(tmp_path / "pg16.xml", priors=priors, featmap_shape=cfg["featmap_shape"],
                 image_shape=cfg["image_shape"], flatten=cfg["flatten"], h=cfg["h"], w=cfg["w"],
                 stride_x=cfg["stride_x"], stride_y=cfg["stride_y"], priors_const=False, element_type="f16")
    feat = np.zeros(cfg["featmap_shape"], np.float16)
    image = np.zeros(cfg["image_shape"], np.float16)
    out = irgrid.compile_model(path)({"priors": priors, "feat": feat, "image": image})["pg"]
    expected = run_ov(ov_core, path, [priors, feat, image])
    assert out.dtype == np.float16 and out.shape == expected.shape
    _, _, fh, fw = cfg["featmap_shape"]
    written = (cfg["h"] or fh) * (cfg["w"] or fw) * priors.shape[0]
    np.testing.assert_array_max_ulp(out.reshape(-1, 4)[:written], expected.reshape(-1, 4)[:written], maxulp=1)
    assert np.all(out.reshape(-1, 4)[written:] == 0)

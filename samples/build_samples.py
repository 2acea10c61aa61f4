#!/usr/bin/env python
"""(Re)build irgrid's bundled samples, deterministically, and verify them.

    python samples/build_samples.py            # build all of them, then verify
    python samples/build_samples.py --no-verify
    python samples/build_samples.py flow_warp  # only some

Each sample is `samples/<name>/{model.xml, model.bin, inputs.npz}`; `irgrid infer
samples/<name>/model.xml` picks up the inputs.npz beside the model.

- prior_grid: ExperimentalDetectronPriorGridGenerator-6, the spec's example (priors 3x4 as a
  Const, feature map 1x256x25x42, image 1x3x800x1344, flatten=true, stride 32). OpenVINO's Python
  API has no builder for this layer, so it is written with irgrid's IRBuilder. The op only reads
  the shapes of the feature map and image, so inputs.npz holds zeros (compressed to a few KB).
  Verified: OpenVINO reads and runs the IR and agrees with irgrid and with the spec's formula.
- flow_warp: backward warping of an image by an optical-flow field (pixels), built with the
  OpenVINO Python API (opset1 glue + opset9 GridSample, bilinear, border, align_corners=false):
      grid = (transpose(flow) + base_xy) * (2/W, 2/H) - (1 - 1/W, 1 - 1/H)
      warped[c, y, x] = image[c, y + flow_y, x + flow_x]   (bilinear, border)
  Verified: irgrid equals OpenVINO (f32 hint) on the same IR within 1e-5 and a float64 numpy
  reference.
- volume_warp: 3-D registration warp of a volume by a displacement field in voxels, channels
  ordered (dz, dy, dx) like the tensor axes (VoxelMorph's convention). Rank-5 GridSample is irgrid1
  (OpenVINO cannot run it), so the IR is written with IRBuilder; the glue reverses the channels to
  the grid's (x, y, z) order with a Gather:
      grid = (gather(transpose(disp), [2, 1, 0], axis 4) + base_xyz) * (2/W, 2/H, 2/D)
             - (1 - 1/W, 1 - 1/H, 1 - 1/D)
      GridSample irgrid1, mode linear (trilinear), padding zeros, align_corners=false
  Verified: irgrid equals a float64 numpy trilinear reference and onnxruntime's GridSample-20
  (3-D linear) fed the same normalised grid.
- dcn_block: a DCNv2 block (modulated deformable convolution), built with the OpenVINO Python API:
      conv = Convolution(features, 27x32x3x3, pads 1) + bias
      offsets, logits = VariadicSplit(conv, axis 1, [18, 9]);  mask = Sigmoid(logits)
      out = Relu(DeformableConvolution-8(features, offsets, 32x32x3x3, mask, pads 1,
                                         bilinear_interpolation_pad=true))
  with zero-padded bilinear sampling, as the DCNv2 implementations (and ONNX DeformConv) sample.
  Verified: irgrid equals OpenVINO (f32 hint) on the same IR and onnxruntime running the same block
  as ONNX (Conv, Split, Sigmoid, DeformConv-19, Relu), within 1e-4.
- spatial_transformer: a spatial transformer as PyTorch users write it (Jaderberg et al.; the
  PyTorch tutorial's `stn`), exported the way OpenVINO's converter lowers it:
      flat  = Reshape(image, [N, -1])                       # xs.view(N, -1)
      theta = Reshape(MatMul(flat, W) + b, [N, 2, 3])       # fc_loc(xs).view(-1, 2, 3)
      grid  = AffineGrid irgrid1(theta, size)               # F.affine_grid(theta, x.size())
      out   = GridSample opset9(image, grid), bilinear, zeros, align_corners=false  # F.grid_sample
  W is small and b is a 10-degree rotation with a zoom, so theta depends (a little) on the image.
  size is the Const [2, 3, 48, 64], as OpenVINO's converter folds x.size() of a static input, so
  every port in the IR has static dims.
  compile_model fuses the AffineGrid into the GridSample (`irgrid infer ... --plan` shows it).
  Verified: irgrid equals onnxruntime running the same graph as ONNX (MatMul, Add, Reshape,
  AffineGrid-20, GridSample-20), and torch when installed; fused equals unfused bitwise; OpenVINO
  runs the IR with irgrid's extension (`irgrid.openvino.extensions()`) and agrees.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 20240611

# prior_grid: the spec's example
PRIOR_FEATMAP = (1, 256, 25, 42)
PRIOR_IMAGE = (1, 3, 800, 1344)
PRIOR_STRIDE = 32.0
# flow_warp: H != W so that an x/y mix-up shows
FLOW_H, FLOW_W = 96, 128
# volume_warp
VOL_D, VOL_H, VOL_W = 24, 32, 32
# dcn_block: a DCNv2 block, 2-D
DCN_SHAPE = (1, 32, 48, 64)  # (N, C, H, W); H != W so that a y/x mix-up shows
DCN_TAPS = 9  # 3x3 kernels
# spatial_transformer: a batch of two images, H != W
STN_N, STN_H, STN_W = 2, 48, 64


# ---------------------------------------------------------------------------------------------
# synthetic data (seeded, smooth)

def _smooth_field(rng: np.random.Generator, channels: int, shape: tuple[int, ...], coarse: int) -> np.ndarray:
    """A smooth random field: coarse Gaussian noise upsampled (separable linear interpolation)."""
    field = rng.standard_normal((channels,) + (coarse,) * len(shape))
    for axis, size in enumerate(shape, start=1):
        src = np.linspace(0.0, 1.0, coarse)
        dst = np.linspace(0.0, 1.0, size)
        field = np.apply_along_axis(lambda v: np.interp(dst, src, v), axis, field)
    return field


def _image(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """A smooth 3-channel image in [0, 1]: gradients, sinusoids and Gaussian blobs."""
    y, x = np.meshgrid(np.linspace(0, 1, h), np.linspace(0, 1, w), indexing="ij")
    blobs = np.zeros((h, w))
    for cy, cx, s, a in rng.uniform([0.1, 0.1, 0.05, 0.4], [0.9, 0.9, 0.15, 1.0], size=(6, 4)):
        blobs += a * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * s * s))
    r = 0.5 + 0.5 * np.sin(2 * np.pi * (2 * x + y))
    g = 0.5 + 0.5 * np.cos(2 * np.pi * 3 * y) * np.cos(2 * np.pi * 2 * x)
    b = np.clip(blobs, 0, 1)
    return np.stack([0.6 * r + 0.4 * x, 0.5 * g + 0.5 * y, b])[None].astype(np.float32)


def _flow(h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """(1, 2, H, W) flow in pixels, (dx, dy): a rotation about the centre plus a smooth random part.

    Up to ~9 px, so some samples near the edges fall outside the image (border padding shows).
    """
    y, x = np.meshgrid(np.arange(h, dtype=np.float64), np.arange(w, dtype=np.float64), indexing="ij")
    cy, cx, angle = (h - 1) / 2, (w - 1) / 2, np.deg2rad(6.0)
    dx = (np.cos(angle) - 1) * (x - cx) - np.sin(angle) * (y - cy)
    dy = np.sin(angle) * (x - cx) + (np.cos(angle) - 1) * (y - cy)
    noise = 2.5 * _smooth_field(rng, 2, (h, w), 6)
    return np.stack([dx + noise[0], dy + noise[1]])[None].astype(np.float32)


def _volume(d: int, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """(1, 1, D, H, W) phantom: an ellipsoid shell and Gaussian blobs, values in [0, 1]."""
    z, y, x = np.meshgrid(*(np.linspace(-1, 1, n) for n in (d, h, w)), indexing="ij")
    r = np.sqrt((x / 0.8) ** 2 + (y / 0.7) ** 2 + (z / 0.85) ** 2)
    vol = 0.6 * np.exp(-((r - 0.75) / 0.08) ** 2)
    for cz, cy, cx, s, a in rng.uniform([-0.5, -0.5, -0.5, 0.1, 0.3], [0.5, 0.5, 0.5, 0.25, 0.8], size=(5, 5)):
        vol += a * np.exp(-((z - cz) ** 2 + (y - cy) ** 2 + (x - cx) ** 2) / (2 * s * s))
    return np.clip(vol, 0, 1)[None, None].astype(np.float32)


def _displacement(d: int, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    """(1, 3, D, H, W) displacement in voxels, channels (dz, dy, dx); smooth, up to ~3 voxels."""
    field = 1.2 * _smooth_field(rng, 3, (d, h, w), 5)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.float64) for n in (d, h, w)), indexing="ij")
    angle = np.deg2rad(4.0)  # plus a small rotation about the z axis
    cy, cx = (h - 1) / 2, (w - 1) / 2
    field[2] += (np.cos(angle) - 1) * (x - cx) - np.sin(angle) * (y - cy)
    field[1] += np.sin(angle) * (x - cx) + (np.cos(angle) - 1) * (y - cy)
    return field[None].astype(np.float32)


def _normaliser(sizes_xyz: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """scale, shift with grid = pixel * scale - shift (align_corners=false), in grid (x, y, z) order."""
    sizes = np.array(sizes_xyz, dtype=np.float64)
    return (2.0 / sizes).astype(np.float32), (1.0 - 1.0 / sizes).astype(np.float32)


def _base_grid(shape_zyx: tuple[int, ...]) -> np.ndarray:
    """(1, *shape, r) pixel coordinates in (x, y[, z]) order."""
    axes = np.meshgrid(*(np.arange(n, dtype=np.float32) for n in shape_zyx), indexing="ij")
    return np.stack(axes[::-1], axis=-1)[None]


# ---------------------------------------------------------------------------------------------
# builders

def build_prior_grid(out: Path) -> None:
    from irgrid.builder import IRBuilder

    # Detectron-style anchors for stride 32: area 128^2 at aspect ratios 0.5, 1, 2, centred on 0
    # (the op adds each cell's centre to them).
    priors = np.array([[-90.5, -45.25, 90.5, 45.25],
                       [-64.0, -64.0, 64.0, 64.0],
                       [-45.25, -90.5, 45.25, 90.5]], dtype=np.float32)
    b = IRBuilder("prior_grid")
    p = b.const(priors, name="priors")
    featmap = b.parameter("feature_map", PRIOR_FEATMAP)
    image = b.parameter("image", PRIOR_IMAGE)
    (grid,) = b.layer("ExperimentalDetectronPriorGridGenerator", "opset6", [p, featmap, image],
                      {"flatten": True, "h": 0, "w": 0, "stride_x": PRIOR_STRIDE, "stride_y": PRIOR_STRIDE},
                      name="prior_grid")
    b.result(grid, "prior_grid/sink")
    out.mkdir(parents=True, exist_ok=True)
    b.save(out / "model.xml")
    # The op reads only the shapes: zeros compress to a few KB.
    np.savez_compressed(out / "inputs.npz", feature_map=np.zeros(PRIOR_FEATMAP, np.float32),
                        image=np.zeros(PRIOR_IMAGE, np.float32))


def build_flow_warp(out: Path) -> None:
    import openvino as ov
    from openvino import opset1, opset9

    h, w = FLOW_H, FLOW_W
    rng = np.random.default_rng(SEED + 1)
    image_np = _image(h, w, rng)
    flow_np = _flow(h, w, rng)

    def const(value, name):
        node = opset1.constant(value, name=name)
        node.output(0).get_tensor().set_names({name})
        return node

    def named(node, name):
        node.set_friendly_name(name)
        node.output(0).get_tensor().set_names({name})
        return node

    image = opset1.parameter([1, 3, h, w], np.float32, name="image")
    flow = opset1.parameter([1, 2, h, w], np.float32, name="flow")
    image.output(0).get_tensor().set_names({"image"})
    flow.output(0).get_tensor().set_names({"flow"})
    scale, shift = _normaliser((w, h))
    flow_hw2 = named(opset1.transpose(flow, const(np.array([0, 2, 3, 1], np.int64), "nhwc_order")), "flow_nhwc")
    pixels = named(opset1.add(flow_hw2, const(_base_grid((h, w)), "base_xy")), "sample_xy")
    scaled = named(opset1.multiply(pixels, const(scale.reshape(1, 1, 1, 2), "xy_scale")), "sample_scaled")
    grid = named(opset1.subtract(scaled, const(shift.reshape(1, 1, 1, 2), "xy_shift")), "grid")
    warped = named(opset9.grid_sample(image, grid, {"align_corners": False, "mode": "bilinear",
                                                     "padding_mode": "border"}), "warped")
    result = opset1.result(warped, name="warped/sink")
    model = ov.Model([result], [image, flow], "flow_warp")
    out.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(out / "model.xml"), compress_to_fp16=False)
    np.savez_compressed(out / "inputs.npz", image=image_np, flow=flow_np)


def build_volume_warp(out: Path) -> None:
    from irgrid.builder import IRBuilder

    d, h, w = VOL_D, VOL_H, VOL_W
    rng = np.random.default_rng(SEED + 2)
    volume_np = _volume(d, h, w, rng)
    disp_np = _displacement(d, h, w, rng)
    scale, shift = _normaliser((w, h, d))

    b = IRBuilder("volume_warp")
    volume = b.parameter("volume", (1, 1, d, h, w))
    disp = b.parameter("displacement", (1, 3, d, h, w))
    (disp_last,) = b.layer("Transpose", "opset1", [disp, b.const(np.array([0, 2, 3, 4, 1], np.int64), "ndhwc_order")],
                           name="displacement_ndhwc")
    (disp_xyz,) = b.layer("Gather", "opset8", [disp_last, b.const(np.array([2, 1, 0], np.int64), "zyx_to_xyz"),
                                               b.const(np.array(4, np.int64), "channel_axis")],
                          {"batch_dims": 0}, name="displacement_xyz")
    (voxels,) = b.layer("Add", "opset1", [disp_xyz, b.const(_base_grid((d, h, w)), "base_xyz")],
                        {"auto_broadcast": "numpy"}, name="sample_xyz")
    (scaled,) = b.layer("Multiply", "opset1", [voxels, b.const(scale.reshape(1, 1, 1, 1, 3), "xyz_scale")],
                        {"auto_broadcast": "numpy"}, name="sample_scaled")
    (grid,) = b.layer("Subtract", "opset1", [scaled, b.const(shift.reshape(1, 1, 1, 1, 3), "xyz_shift")],
                      {"auto_broadcast": "numpy"}, name="grid")
    (warped,) = b.layer("GridSample", "irgrid1", [volume, grid],
                        {"align_corners": False, "mode": "linear", "padding_mode": "zeros"}, name="warped")
    b.result(warped, "warped/sink")
    out.mkdir(parents=True, exist_ok=True)
    b.save(out / "model.xml")
    np.savez_compressed(out / "inputs.npz", volume=volume_np, displacement=disp_np)


def _dcn_weights() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded (offset-and-mask conv weights, its bias, deformable conv weights)."""
    rng = np.random.default_rng(SEED + 3)
    c = DCN_SHAPE[1]
    # Offsets of about 1-2 pixels from unit-variance features: std 0.1 over 9 * C inputs.
    conv_w = rng.normal(0, 0.1, (3 * DCN_TAPS, c, 3, 3)).astype(np.float32)
    conv_b = rng.normal(0, 0.5, 3 * DCN_TAPS).astype(np.float32)
    deform_w = rng.normal(0, (2.0 / (c * DCN_TAPS)) ** 0.5, (c, c, 3, 3)).astype(np.float32)
    return conv_w, conv_b, deform_w


def build_dcn_block(out: Path) -> None:
    import openvino as ov
    import openvino.opset1 as ops1
    import openvino.opset8 as ops8

    conv_w, conv_b, deform_w = _dcn_weights()
    features = ops1.parameter(list(DCN_SHAPE), np.float32, name="features")
    conv = ops1.add(ops1.convolution(features, ops1.constant(conv_w), [1, 1], [1, 1], [1, 1], [1, 1]),
                    ops1.constant(conv_b.reshape(1, -1, 1, 1)))
    offsets, logits = ops1.variadic_split(conv, ops1.constant(np.int64(1)),
                                          ops1.constant(np.array([2 * DCN_TAPS, DCN_TAPS], np.int64))).outputs()
    deformed = ops8.deformable_convolution(features, offsets, ops1.constant(deform_w), [1, 1], [1, 1], [1, 1],
                                           [1, 1], mask=ops1.sigmoid(logits), bilinear_interpolation_pad=True)
    relu = ops1.relu(deformed)
    relu.output(0).get_tensor().set_names({"dcn_out"})
    out.mkdir(parents=True, exist_ok=True)
    ov.save_model(ov.Model([relu], [features], "dcn_block"), str(out / "model.xml"), compress_to_fp16=False)
    rng = np.random.default_rng(SEED + 4)
    np.savez_compressed(out / "inputs.npz", features=rng.standard_normal(DCN_SHAPE).astype(np.float32))


def _stn_weights(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """fc_loc's weights (features, 6) and bias (6,): a 10-degree rotation zoomed by 1.15, moved
    slightly by the image (weights small against 3 * 48 * 64 features in [0, 1])."""
    angle = np.deg2rad(10.0)
    bias = np.array([np.cos(angle), -np.sin(angle), 0.05, np.sin(angle), np.cos(angle), -0.03]) / 1.15
    weights = rng.standard_normal((3 * STN_H * STN_W, 6)) * 2e-4
    return weights.astype(np.float32), bias.astype(np.float32)


def build_spatial_transformer(out: Path) -> None:
    from irgrid.builder import IRBuilder

    rng = np.random.default_rng(SEED + 3)
    images = np.concatenate([_image(STN_H, STN_W, rng) for _ in range(STN_N)])
    weights, bias = _stn_weights(rng)
    b = IRBuilder("spatial_transformer")
    image = b.parameter("image", (STN_N, 3, STN_H, STN_W))
    (flat,) = b.layer("Reshape", "opset1", [image, b.const(np.array([0, -1], np.int64), "flat_shape")],
                      {"special_zero": True}, name="features")
    (fc,) = b.layer("MatMul", "opset1", [flat, b.const(weights, "fc_loc.weight")],
                    {"transpose_a": False, "transpose_b": False}, name="fc_loc/matmul")
    (fc,) = b.layer("Add", "opset1", [fc, b.const(bias.reshape(1, 6), "fc_loc.bias")],
                    {"auto_broadcast": "numpy"}, name="fc_loc")
    (theta,) = b.layer("Reshape", "opset1", [fc, b.const(np.array([-1, 2, 3], np.int64), "theta_shape")],
                       {"special_zero": False}, name="theta")
    size = b.const(np.array([STN_N, 3, STN_H, STN_W], np.int64), "size")
    (grid,) = b.layer("AffineGrid", "irgrid1", [theta, size], {"align_corners": False}, name="grid")
    (warped,) = b.layer("GridSample", "opset9", [image, grid],
                        {"align_corners": False, "mode": "bilinear", "padding_mode": "zeros"}, name="warped")
    b.result(warped, "warped/sink")
    out.mkdir(parents=True, exist_ok=True)
    b.save(out / "model.xml")
    np.savez_compressed(out / "inputs.npz", image=images)


BUILDERS = {"prior_grid": build_prior_grid, "flow_warp": build_flow_warp, "volume_warp": build_volume_warp,
            "dcn_block": build_dcn_block, "spatial_transformer": build_spatial_transformer}


# ---------------------------------------------------------------------------------------------
# references and verification

def _ref_prior_grid(priors: np.ndarray, fh: int, fw: int, step_w: float, step_h: float) -> np.ndarray:
    hh, ww = np.meshgrid(np.arange(fh), np.arange(fw), indexing="ij")
    cx = (step_w * (ww + 0.5))[:, :, None]
    cy = (step_h * (hh + 0.5))[:, :, None]
    out = priors[None, None].astype(np.float64) + np.stack([cx, cy, cx, cy], axis=-1)
    return out.reshape(-1, 4)


def _linear_sample(data: np.ndarray, pix: np.ndarray, padding: str) -> np.ndarray:
    """float64 N-linear sampling of data (C, *spatial) at pixel coords pix (..., r) in (x, y, z) order."""
    spatial = data.shape[1:]
    r = len(spatial)
    coords = [pix[..., r - 1 - a] for a in range(r)]  # per tensor axis
    if padding == "border":
        coords = [np.clip(c, 0, n - 1) for c, n in zip(coords, spatial)]
    lo = [np.floor(c).astype(np.int64) for c in coords]
    frac = [c - l for c, l in zip(coords, lo)]
    out = np.zeros((data.shape[0],) + pix.shape[:-1])
    for corner in range(1 << r):
        idx, weight, valid = [], 1.0, np.ones(pix.shape[:-1], bool)
        for a in range(r):
            bit = (corner >> a) & 1
            i = lo[a] + bit
            weight = weight * (frac[a] if bit else 1 - frac[a])
            valid &= (i >= 0) & (i < spatial[a])
            idx.append(np.clip(i, 0, spatial[a] - 1))
        out += np.where(valid, weight, 0.0) * data[(slice(None), *idx)]
    return out


def _run_openvino(xml: Path, inputs: dict[str, np.ndarray], extension: bool = False) -> np.ndarray:
    """OpenVINO's CPU plugin at f32; `extension`: with irgrid's op extension (irgrid1 layers)."""
    import openvino as ov

    core = ov.Core()
    if extension:
        import irgrid.openvino

        core.add_extension(irgrid.openvino.extensions())
    compiled = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled(inputs)
    return np.asarray(result[compiled.outputs[0]])


def _check_cli(xml: Path) -> list[str]:
    failures = []
    for command in (["check"], ["infer", "-niter", "3"]):
        # Run beside the model, so a source checkout's irgrid/ folder cannot shadow the installed package.
        proc = subprocess.run([sys.executable, "-m", "irgrid", *command, str(xml.resolve())],
                              capture_output=True, text=True, cwd=xml.parent)
        status = "ok" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"
        print(f"  irgrid {command[0]} {xml.relative_to(HERE.parent)}: {status}")
        if proc.returncode != 0:
            failures.append(f"irgrid {' '.join(command)} {xml}: exit {proc.returncode}: "
                            f"{(proc.stderr or proc.stdout).strip()[-500:]}")
    return failures


def _compare(what: str, got: np.ndarray, want: np.ndarray, tol: float) -> list[str]:
    if got.shape != want.shape:
        print(f"  {what}: shape {got.shape} != {want.shape}")
        return [f"{what}: shape {got.shape} != {want.shape}"]
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    ok = err <= tol
    print(f"  {what}: max |diff| {err:.3g} (tolerance {tol:g}) {'ok' if ok else 'FAILED'}")
    return [] if ok else [f"{what}: max |diff| {err:.3g} > {tol:g}"]


def verify(name: str, out: Path) -> list[str]:
    import irgrid

    xml = out / "model.xml"
    print(f"[{name}] verifying")
    failures = []
    problems = irgrid.check_model(str(xml))
    if problems:
        failures += [f"check_model: {p}" for p in problems]
    with np.load(out / "inputs.npz") as f:
        inputs = {k: f[k] for k in f.files}
    ours = next(iter(irgrid.compile_model(str(xml))(inputs).values()))
    sizes = {p.name: p.stat().st_size for p in out.iterdir()}
    print("  files: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sorted(sizes.items())))
    failures += [f"{k} is {v / 2**20:.1f} MiB" for k, v in sizes.items() if v > 2 * 2**20]

    if name == "prior_grid":
        priors = irgrid.read_model(str(xml)).layers["0"].const
        want = _ref_prior_grid(priors, PRIOR_FEATMAP[2], PRIOR_FEATMAP[3], PRIOR_STRIDE, PRIOR_STRIDE)
        failures += _compare("irgrid vs spec formula", ours, want, 1e-4)
        failures += _compare("irgrid vs OpenVINO (f32)", ours, _run_openvino(xml, inputs), 0.0)
    elif name == "flow_warp":
        pix = np.transpose(inputs["flow"][0].astype(np.float64), (1, 2, 0)) + _base_grid((FLOW_H, FLOW_W))[0]
        want = _linear_sample(inputs["image"][0].astype(np.float64), pix, "border")[None]
        failures += _compare("irgrid vs numpy float64 reference", ours, want, 1e-5)
        failures += _compare("irgrid vs OpenVINO GridSample-9 (f32)", ours, _run_openvino(xml, inputs), 1e-5)
    elif name == "volume_warp":
        disp = np.transpose(inputs["displacement"][0].astype(np.float64), (1, 2, 3, 0))[..., ::-1]
        pix = disp + _base_grid((VOL_D, VOL_H, VOL_W))[0]
        want = _linear_sample(inputs["volume"][0].astype(np.float64), pix, "zeros")[None]
        failures += _compare("irgrid vs numpy float64 reference", ours, want, 1e-5)
        ort = _run_onnxruntime_grid_sample(inputs["volume"], pix)
        if ort is not None:
            failures += _compare("irgrid vs onnxruntime GridSample-20 (3-D linear)", ours, ort, 1e-5)
    elif name == "dcn_block":
        failures += _compare("irgrid vs OpenVINO DeformableConvolution-8 (f32)", ours, _run_openvino(xml, inputs),
                             1e-4)
        ort = _run_onnxruntime_dcn_block(inputs["features"])
        if ort is not None:
            failures += _compare("irgrid vs onnxruntime DeformConv-19 block", ours, ort, 1e-4)
    elif name == "spatial_transformer":
        failures += _verify_spatial_transformer(xml, inputs, ours)
    failures += _check_cli(xml)
    return failures


def _run_onnxruntime_grid_sample(volume: np.ndarray, pix: np.ndarray) -> np.ndarray | None:
    try:
        import onnx  # noqa: F401  (helper below)
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        print("  onnxruntime not importable: skipped")
        return None
    scale, shift = _normaliser((VOL_W, VOL_H, VOL_D))
    grid = (pix * scale.astype(np.float64) - shift.astype(np.float64)).astype(np.float32)[None]
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode="linear", padding_mode="zeros", align_corners=0)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, volume.shape),
                                            helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid.shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": volume, "grid": grid})[0]


def _run_onnxruntime_dcn_block(features: np.ndarray) -> np.ndarray | None:
    """The same block as ONNX (Conv, Split, Sigmoid, DeformConv-19, Relu) on onnxruntime."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("  onnxruntime not importable: skipped")
        return None
    conv_w, conv_b, deform_w = _dcn_weights()
    nodes = [helper.make_node("Conv", ["features", "conv_w", "conv_b"], ["conv"], pads=[1, 1, 1, 1]),
             helper.make_node("Split", ["conv", "split"], ["offsets", "logits"], axis=1),
             helper.make_node("Sigmoid", ["logits"], ["mask"]),
             helper.make_node("DeformConv", ["features", "deform_w", "offsets", "", "mask"], ["deformed"],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["deformed"], ["dcn_out"])]
    initializers = [numpy_helper.from_array(a, n) for a, n in
                    ((conv_w, "conv_w"), (conv_b, "conv_b"), (deform_w, "deform_w"),
                     (np.array([2 * DCN_TAPS, DCN_TAPS], np.int64), "split"))]
    graph = helper.make_graph(nodes, "dcn_block",
                              [helper.make_tensor_value_info("features", TensorProto.FLOAT, DCN_SHAPE)],
                              [helper.make_tensor_value_info("dcn_out", TensorProto.FLOAT, None)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"features": features})[0]


def _verify_spatial_transformer(xml: Path, inputs: dict[str, np.ndarray], ours: np.ndarray) -> list[str]:
    import irgrid

    failures = []
    plan = irgrid.compile_model(str(xml)).describe(structured=True)
    fused = [row["name"] for row in plan["layers"] if row["status"] == "fused"]
    print(f"  fused: {', '.join(fused) or 'nothing'}")
    if fused != ["grid"]:
        failures.append(f"expected the AffineGrid 'grid' fused into the GridSample, got {fused}")
    unfused = next(iter(irgrid.compile_model(str(xml), fuse=False)(inputs).values()))
    failures += _compare("irgrid fused vs unfused (bitwise)", ours, unfused.astype(np.float64), 0.0)
    consts = {layer.name: layer.const for layer in irgrid.read_model(str(xml)).layers.values()}
    weights, bias = consts["fc_loc.weight"], consts["fc_loc.bias"].reshape(6)
    ort = _run_onnxruntime_stn(inputs["image"], weights, bias)
    if ort is not None:
        failures += _compare("irgrid vs onnxruntime (MatMul, AffineGrid-20, GridSample-20)", ours, ort, 1e-5)
    theta = (inputs["image"].reshape(STN_N, -1) @ weights + bias).reshape(STN_N, 2, 3)
    try:
        import torch
    except ImportError:
        print("  torch not importable: skipped")
    else:
        grid = torch.nn.functional.affine_grid(torch.from_numpy(theta), list(inputs["image"].shape), align_corners=False)
        want = torch.nn.functional.grid_sample(torch.from_numpy(inputs["image"]), grid, align_corners=False).numpy()
        failures += _compare("irgrid vs torch affine_grid + grid_sample", ours, want, 1e-5)
    failures += _compare("irgrid vs OpenVINO with irgrid's extension (f32)", ours,
                         _run_openvino(xml, inputs, extension=True), 1e-5)
    return failures


def _run_onnxruntime_stn(images: np.ndarray, weights: np.ndarray, bias: np.ndarray) -> np.ndarray | None:
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        print("  onnxruntime not importable: skipped")
        return None
    consts = {"W": weights, "b": bias.reshape(1, 6), "flat_shape": np.array([0, -1], np.int64),
              "theta_shape": np.array([-1, 2, 3], np.int64)}
    nodes = [helper.make_node("Reshape", ["image", "flat_shape"], ["flat"]),
             helper.make_node("MatMul", ["flat", "W"], ["fc"]),
             helper.make_node("Add", ["fc", "b"], ["fc_b"]),
             helper.make_node("Reshape", ["fc_b", "theta_shape"], ["theta"]),
             helper.make_node("Shape", ["image"], ["size"]),
             helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0),
             helper.make_node("GridSample", ["image", "grid"], ["warped"], mode="linear", padding_mode="zeros",
                              align_corners=0)]
    graph = helper.make_graph(nodes, "stn", [helper.make_tensor_value_info("image", TensorProto.FLOAT, images.shape)],
                              [helper.make_tensor_value_info("warped", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"image": images})[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", metavar="NAME",
                        help=f"which samples: {', '.join(BUILDERS)} (default: all)")
    parser.add_argument("--no-verify", action="store_true", help="build only")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    args = parser.parse_args(argv)
    names = args.samples or list(BUILDERS)
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        parser.error(f"unknown sample {', '.join(unknown)} (choose from {', '.join(BUILDERS)})")
    failures = []
    for name in names:
        print(f"[{name}] building {args.out / name}")
        BUILDERS[name](args.out / name)
        if not args.no_verify:
            failures += [f"{name}: {f}" for f in verify(name, args.out / name)]
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nall samples built" + ("" if args.no_verify else " and verified"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

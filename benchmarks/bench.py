#!/usr/bin/env python
"""Time irgrid against its peers on ExperimentalDetectronPriorGridGenerator and GridSample.

    python benchmarks/bench.py                    # full run (~8 min on 2 idle cores)
    python benchmarks/bench.py --quick            # smoke run: small sizes, few repeats
    python benchmarks/bench.py --threads 1 --cases grid_sample/2d --json out.json
    python benchmarks/bench.py --threads 2 --rounds 5 --wait-calm 2.55 --json out.json   # as the README's runs

Method
- Every (case, peer) runs in its own subprocess, so irgrid's OpenMP threads, OpenVINO's TBB pool,
  onnxruntime's pool and torch's OpenMP pool never share a process (no wait-policy contention).
- All peers get the same thread count (--threads, default: the cores this process may use):
  irgrid.compile_model(..., threads=N); OpenVINO INFERENCE_NUM_THREADS=N, NUM_STREAMS=1, f32 hint,
  its input tensors set once on the arrays' memory and each call `infer(share_outputs=True)`, as
  benchmark_app runs (zero-copy: its output is not copied per call, where irgrid, onnxruntime and
  torch return a fresh array);
  onnxruntime intra_op_num_threads=N, inter_op_num_threads=1; torch.set_num_threads(N).
- irgrid is timed through irgrid.compile_model on an IR written with irgrid's IRBuilder (so the
  numbers include the executor: input checks, output copy); OpenVINO reads the same IR file with
  ov.Core().read_model. onnxruntime runs a one-node ONNX GridSample-20 model; torch (when importable)
  calls torch.nn.functional.grid_sample directly.
- Each timing: warm-up (at least 3 calls and ~0.1 s), then --repeat samples, each the mean of enough
  back-to-back calls to last --min-sample-ms. Peers are measured in --rounds interleaved rounds
  (irgrid, OpenVINO, onnxruntime, irgrid, ...), a fresh subprocess each time, and the samples of all
  rounds pooled: the table shows their median (ms per call); the JSON also has each round's median.
  ratio = peer / irgrid (above 1: irgrid is faster).
- OMP_WAIT_POLICY: irgrid subprocesses run with irgrid's default (PASSIVE after a spin of
  GOMP_SPINCOUNT=1000, set by `import irgrid`) unless stated; the other peers run with the
  variables unset (their own defaults). A separate section times irgrid's default against ACTIVE
  and plain PASSIVE (no spin) on a tiny and a large case (set in the subprocess environment, before
  import), with a 1-thread run beside them (one thread never wakes a sleeping OpenMP thread).
- GridSample memory bandwidth: bytes of data + grid read and output written, over irgrid's median
  time, against a copy bandwidth measured in the same run (numpy copy of a 256 MiB array, counted
  as read + write; the better of one thread and --threads Python threads). Roofline: the time those
  bytes take at the copy bandwidth of --threads threads (what a kernel that only streamed its inputs
  and output would take), measured just before and just after the case's rounds (their mean), since
  a shared VM's bandwidth drifts over a run; "x roof" is irgrid's median time over it. "x lines"
  is the same against the bytes any implementation must move: the 64-byte lines of X the taps read
  (`_bytes_touched`), the grid and the output. It differs from "x roof" where the grid reads part of
  X (RAFT's lookups: 81 points a 46 x 62 plane), so a peer near it cannot be beaten by much.
- Inputs are seeded: data uniform in [-1, 1); every GridSample case (but the tiny one) runs on two
  grids, named by the case's last part: /smooth, warps (identity rotated, scaled by 1.08 and gently
  perturbed; a few points fall outside [-1, 1]) as in warping and registration networks, and /random,
  uniform in [-1.1, 1.1] as in the peers' own benchmarks (no locality: every point's taps miss the
  cache); padding zeros, align_corners=0.
- Per-call overhead (tiny case): irgrid's compiled call and, alone, the kernel's entry (a
  `SamplePlan`, what a compiled model's static GridSample step calls), against the peers' calls.
- DeformConv cases (deform_conv/*): DCN layers with seeded offsets (N(0, 2) pixels) and masks
  (uniform [0, 1)); irgrid and OpenVINO read the same IR (DeformableConvolution-8,
  bilinear_interpolation_pad=true, in 2-D; DeformConv irgrid1 in 3-D, which OpenVINO runs only through
  irgrid's extension);
  onnxruntime runs a one-node DeformConv-19 model, torch (when torchvision is importable)
  torchvision.ops.deform_conv2d. Reported: GFLOP/s (2 * oC * C/group * K multiply-adds per output
  point, over irgrid's median time), that as a fraction of the SGEMM rate measured in the same run
  (numpy and OpenVINO MatMul on 256x2304 . 2304x3400 f32, best of a few calls), and irgrid's peak
  extra memory besides inputs and output (one item's data channels-last, the reordered filters, the
  im2col tile of at most 64 MiB and its GEMM block; irgrid.ops.im2col.workspace_bytes).
- The extension's own cost (cases in EXT_PAIRED_CASES): irgrid's runtime and OpenVINO running the
  same layer through irgrid's extension, in one process, in alternating batches (each >= --min-sample-ms
  of back-to-back calls; the order flips every pair), --rounds fresh processes of EXT_PAIRS pairs each.
  Reported: the median and quartiles of the per-pair ratios (extension / runtime). Both sides then see
  the same moments of a host whose speed drifts within seconds; the main table's ratio compares
  separate processes, whose round-by-round ratios spread from 0.75x to 2x on this VM.
- Each peer's output is compared with irgrid's (max |diff| column).
- Other processes on the machine skew timings, and so does a VM's host taking its vCPUs: each
  measurement records the CPU share other processes used meanwhile (/proc/stat busy time minus this
  process's CPU time) and the share stolen (steal time); where either is above 10% it is rerun
  (--retries, each after waiting up to 30 s for the machine to go quiet) and the least disturbed run
  kept; a cell still disturbed is marked '*'.
- Other tenants of a shared VM's host take CPU time that /proc/stat does not show as busy, so that
  whole minutes run slow. --wait-calm MS starts the run only once a probe, irgrid's tricubic kernel
  on a constant grid (compute-bound, every read in L1), takes less than MS ms per call; the probes'
  times go into the JSON header (calm_probe_ms).
"""
from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SEED = 1234
PEERS = ("irgrid", "irgrid_unfused", "openvino_ext", "openvino", "onnxruntime", "torch")
PEER_LABELS = {"irgrid": "irgrid", "irgrid_unfused": "irgrid unfused", "openvino_ext": "OV+irgrid ext",
               "openvino": "OpenVINO",
               "onnxruntime": "onnxruntime", "torch": "torch"}


# ---------------------------------------------------------------------------------------------
# cases

def _cases(quick: bool) -> list[dict]:
    """Every case: name, kind and sizes; `peers` lists who can run it."""
    if quick:
        c2, s2, nb, cb, sb, c3, d3, s3, nb3, d3b = 8, 128, 2, 16, 32, 4, 16, 32, 2, 16
        prior_large = (1, 256, 50, 84)
    else:
        c2, s2, nb, cb, sb, c3, d3, s3, nb3, d3b = 32, 256, 8, 64, 64, 16, 32, 64, 4, 32
        prior_large = (1, 256, 200, 336)
    gs2 = ("irgrid", "openvino", "onnxruntime", "torch")
    ext = ("openvino_ext",)  # irgrid's op inside OpenVINO: its per-call cost, and 3-D inside OpenVINO
    cases = [
        dict(name="prior_grid/spec", kind="prior_grid", priors=3, featmap=(1, 256, 25, 42),
             image=(1, 3, 800, 1344), peers=("irgrid", "openvino")),
        dict(name="prior_grid/large", kind="prior_grid", priors=3, featmap=prior_large,
             image=(1, 3, 800, 1344), peers=("irgrid", "openvino")),
    ]
    # Each GridSample case on both grid kinds (GRID_KINDS).
    sample_cases = [dict(name=f"grid_sample/2d_{mode}", mode=mode, x=(1, c2, s2, s2), grid=(1, s2, s2, 2),
                         peers=gs2 + (ext if mode == "bilinear" else ()))
                    for mode in ("bilinear", "nearest", "bicubic")]
    sample_cases.append(dict(name="grid_sample/2d_bilinear_batched", mode="bilinear",
                             x=(nb, cb, sb, sb), grid=(nb, sb, sb, 2), peers=gs2))
    # A large image: 512 x 512 planes, whose group of 8 channels' scratch passes 8 MiB.
    sample_cases.append(dict(name="grid_sample/2d_bilinear_large", mode="bilinear", x=(1, 16, 512, 512),
                             grid=(1, 512, 512, 2), peers=gs2))
    # OpenVINO's GridSample-9 is 4-D only (the rank-5 IR is irgrid1, which it cannot read): not run.
    # onnxruntime and torch have no 3-D cubic: they are tried anyway and their refusal is reported.
    sample_cases += [dict(name=f"grid_sample/3d_{mode}", mode=mode, x=(1, c3, d3, s3, s3), grid=(1, d3, s3, s3, 3),
                          peers=("irgrid", "onnxruntime", "torch") + ext)
                     for mode in ("trilinear", "tricubic")]
    # A batch of small volumes, as registration networks warp them (the same bytes as the single case).
    sample_cases.append(dict(name="grid_sample/3d_trilinear_batched", mode="trilinear", x=(nb3, c3, d3b, d3b, d3b),
                             grid=(nb3, d3b, d3b, d3b, 3), peers=("irgrid", "onnxruntime", "torch")))
    # Few channels: one to three (RAFT's correlation lookups, masks, single-channel volumes, RGB images
    # warped by a flow), where a kernel that computes each point's taps for many channels at once has
    # nothing to share them with.
    sample_cases += [dict(name=f"grid_sample/2d_bilinear_c{c}", mode="bilinear", x=(1, c, s2, s2),
                          grid=(1, s2, s2, 2), peers=gs2) for c in (1, 2, 3)]
    # ... and in the other 2-D modes: masks warped by nearest, grey and RGB images by bicubic.
    sample_cases += [dict(name=f"grid_sample/2d_{mode}_c{c}", mode=mode, x=(1, c, s2, s2), grid=(1, s2, s2, 2),
                          peers=gs2) for mode, counts in (("nearest", (1, 2)), ("bicubic", (1, 2, 3))) for c in counts]
    sample_cases += [dict(name=f"grid_sample/3d_trilinear_c{c}", mode="trilinear", x=(1, c, d3, s3, s3),
                          grid=(1, d3, s3, s3, 3), peers=("irgrid", "onnxruntime", "torch")) for c in (1, 2)]
    sample_cases.append(dict(name="grid_sample/3d_tricubic_c1", mode="tricubic", x=(1, 1, d3, s3, s3),
                             grid=(1, d3, s3, s3, 3), peers=("irgrid", "onnxruntime", "torch")))
    # RAFT's lookup: every pixel's 9x9 window of one correlation level, one channel each.
    raft_n = 176 if quick else 2852
    sample_cases.append(dict(name="grid_sample/raft_lookup", mode="bilinear", x=(raft_n, 1, 46, 62),
                             grid=(raft_n, 9, 9, 2), peers=gs2))
    for case in sample_cases:
        for grid_kind in GRID_KINDS:
            cases.append(dict(case, name=f"{case['name']}/{grid_kind}", kind="grid_sample", grid_kind=grid_kind))
    cases.append(dict(name="grid_sample/tiny", kind="grid_sample", mode="bilinear", grid_kind="smooth",
                      x=(1, 1, 4, 4), grid=(1, 2, 2, 2), peers=gs2 + ext + ("irgrid_kernel",)))
    return cases + _deform_cases(quick) + _affine_cases(quick) + _network_cases(quick)


def _network_cases(quick: bool) -> list[dict]:
    """A whole registration network (`_registration_unet`): irgrid's runtime against OpenVINO running
    the same IR with irgrid's extension (OpenVINO alone has no 3-D GridSample)."""
    side, batch = (16, 2) if quick else (64, 8)
    return [dict(name="network/registration_unet", kind="network", x=(1, 1, side, side, side),
                 peers=("irgrid", "openvino_ext")),
            dict(name="network/spatial_transformer", kind="network", x=(batch, 1, 28, 28),
                 peers=("irgrid", "openvino_ext"))]


def _network(case: dict):
    return (_registration_unet if case["name"].endswith("registration_unet") else _spatial_transformer)(case)


def _spatial_transformer(case: dict):
    """The PyTorch spatial-transformer tutorial's network as OpenVINO converts it: a localisation net
    (Conv2d 1->8 7x7, MaxPool2d, ReLU, Conv2d 8->10 5x5, MaxPool2d, ReLU, Linear 90->32, ReLU, Linear
    32->6) predicting theta, then AffineGrid irgrid1 (the image's size) and a bilinear GridSample-9."""
    import openvino as ov
    import openvino.opset14 as ops

    import irgrid.openvino as iov

    rng = np.random.default_rng(SEED + 3)
    batch = case["x"][0]
    image = ops.parameter(list(case["x"]), np.float32, name="image")

    def conv_pool(x, c_in, c_out, k):
        w = rng.normal(0, np.sqrt(2 / (k * k * c_in)), (c_out, c_in, k, k)).astype(np.float32)
        b = rng.normal(0, 0.01, (1, c_out, 1, 1)).astype(np.float32)
        y = ops.add(ops.convolution(x, ops.constant(w), [1, 1], [0, 0], [0, 0], [1, 1]), ops.constant(b))
        return ops.relu(ops.max_pool(y, [2, 2], [1, 1], [0, 0], [0, 0], [2, 2]).output(0))

    def linear(x, n_in, n_out, scale=1.0):
        w = (rng.normal(0, np.sqrt(2 / n_in), (n_out, n_in)) * scale).astype(np.float32)
        return ops.add(ops.matmul(x, ops.constant(w), False, True), ops.constant(np.zeros(n_out, np.float32)))

    features = conv_pool(conv_pool(image, 1, 8, 7), 8, 10, 5)
    flat = ops.reshape(features, ops.constant(np.array([batch, 90], np.int64)), False)
    theta = ops.add(linear(ops.relu(linear(flat, 90, 32)), 32, 6, 0.01),
                    ops.constant(np.array([1, 0, 0, 0, 1, 0], np.float32)))
    theta = ops.reshape(theta, ops.constant(np.array([batch, 2, 3], np.int64)), False)
    size = ops.constant(np.array(case["x"], np.int64))
    grid = iov.op_class("AffineGrid", "irgrid1")([theta.output(0), size.output(0)], align_corners=False)
    warped = ops.grid_sample(image, grid.output(0), {"align_corners": False, "mode": "bilinear",
                                                     "padding_mode": "zeros"})
    warped.output(0).get_tensor().set_names({"Y"})
    return ov.Model([ops.result(warped.output(0))], [image], "spatial_transformer")


def _registration_unet(case: dict):
    """A VoxelMorph-style U-Net as OpenVINO converts it from PyTorch: 3x3x3 Convolutions with bias Adds
    and PReLU (LeakyReLU 0.2), MaxPool-14 (indices unused), nearest Interpolate-11 (x2) and skip
    Concats, a 3-channel flow head, then a trilinear GridSample irgrid1 (align_corners) of `moving`
    at an identity grid plus the flow: the layers of real registration networks, at (16, 32, 32, 32,
    32, 16) channels."""
    import openvino as ov
    import openvino.opset11 as ops11
    import openvino.opset14 as ops

    import irgrid.openvino as iov

    rng = np.random.default_rng(SEED + 2)
    side = case["x"][2]
    moving, fixed = (ops.parameter(list(case["x"]), np.float32, name=name) for name in ("moving", "fixed"))
    slope = ops.constant(np.array([0.2], np.float32))
    axes = ops.constant(np.array([2, 3, 4], np.int64))

    def conv(x, c_in, c_out, act=True, gain=1.0):
        w = rng.normal(0, gain * np.sqrt(2 / (27 * c_in)), (c_out, c_in, 3, 3, 3)).astype(np.float32)
        b = rng.normal(0, 0.01, (1, c_out, 1, 1, 1)).astype(np.float32)
        y = ops.add(ops.convolution(x, ops.constant(w), [1] * 3, [1] * 3, [1] * 3, [1] * 3), ops.constant(b))
        return ops.prelu(y, slope) if act else y

    def pool(x):
        return ops.max_pool(x, [2] * 3, [1] * 3, [0] * 3, [0] * 3, [2] * 3).output(0)

    def up(x):
        return ops11.interpolate(x, ops.constant(np.array([2, 2, 2], np.float32)), "nearest", "scales", axes=axes,
                                 coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    a = conv(ops.concat([moving, fixed], 1), 2, 16)
    b = conv(pool(a), 16, 32)
    c = conv(pool(b), 32, 32)
    u = conv(ops.concat([up(c), b], 1), 64, 32)
    u = conv(ops.concat([up(u), a], 1), 48, 16)
    flow = conv(u, 16, 3, act=False, gain=0.1)  # voxels, (z, y, x)
    identity = np.stack(np.meshgrid(*[np.linspace(-1, 1, side, dtype=np.float32)] * 3, indexing="ij")[::-1], -1)
    offsets = ops.gather(ops.transpose(flow, ops.constant(np.array([0, 2, 3, 4, 1], np.int64))),
                         ops.constant(np.array([2, 1, 0], np.int64)), ops.constant(np.int64(4)))
    grid = ops.add(ops.constant(identity[None]), ops.multiply(offsets, ops.constant(np.float32(2 / (side - 1)))))
    warped = iov.op_class("GridSample", "irgrid1")([moving.output(0), grid.output(0)], mode="linear",
                                                   padding_mode="zeros", align_corners=True)
    warped.output(0).get_tensor().set_names({"Y"})
    return ov.Model([ops.result(warped.output(0))], [moving, fixed], "registration_unet")


# AffineGrid alone, and AffineGrid -> GridSample (a spatial transformer). irgrid runs an IR with
# AffineGrid irgrid1 (fused into the GridSample, and with fuse=False); OpenVINO, which has no
# AffineGrid, runs the ONNX AffineGrid-20 (+ GridSample-20) model through ov.convert_model, i.e. its
# ONNX frontend's decomposition; onnxruntime runs that ONNX model; torch calls affine_grid (+ grid_sample).
AFFINE_KINDS = ("affine_grid", "affine_sample")


def _affine_cases(quick: bool) -> list[dict]:
    s2, n2, s3, c = (64, 2, 16, 8) if quick else (256, 8, 64, 32)
    peers = ("irgrid", "openvino", "onnxruntime", "torch")
    return [
        dict(name="affine_grid/2d", kind="affine_grid", theta=(n2, 2, 3), size=(n2, 3, s2, s2), peers=peers),
        dict(name="affine_grid/3d", kind="affine_grid", theta=(2, 3, 4), size=(2, 1, s3, s3, s3), peers=peers),
        dict(name="affine_sample/2d_bilinear", kind="affine_sample", theta=(1, 2, 3), size=(1, c, s2, s2),
             x=(1, c, s2, s2), mode="bilinear", peers=("irgrid", "irgrid_unfused") + peers[1:]),
    ]


def _affine_theta(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Rotations by 0.2 rad (about z in 3-D), scaled by 1.08, with a small random shift."""
    n, r, _ = shape
    theta = np.zeros(shape, np.float32)
    c, s = np.cos(0.2), np.sin(0.2)
    theta[:, :2, :2] = 1.08 * np.array([[c, -s], [s, c]])
    if r == 3:
        theta[:, 2, 2] = 1.08
    theta[:, :, r] = rng.uniform(-0.05, 0.05, (n, r))
    return theta


def _affine_onnx(case: dict, path: Path) -> Path:
    """The case as an ONNX opset-20 model: theta [, X] -> AffineGrid [-> GridSample] -> Y."""
    import onnx
    from onnx import TensorProto, helper

    size = helper.make_tensor("size", TensorProto.INT64, [len(case["size"])], list(case["size"]))
    inputs = [helper.make_tensor_value_info("theta", TensorProto.FLOAT, list(case["theta"]))]
    grid_name = "Y" if case["kind"] == "affine_grid" else "grid"
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], [grid_name], align_corners=0)]
    if case["kind"] == "affine_sample":
        inputs.append(helper.make_tensor_value_info("X", TensorProto.FLOAT, list(case["x"])))
        nodes.append(helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=_MODES[case["mode"]][1],
                                      padding_mode="zeros", align_corners=0))
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, case["kind"], inputs, [output], initializer=[size])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), str(path))
    return path


def _openvino_fn(core, model, inputs: dict[str, np.ndarray], threads: int):
    """(infer callable, version) for an ov.Model on the CPU plugin, at f32 with `threads` threads, one stream."""
    import openvino as ov

    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1,
        "PERFORMANCE_HINT": "LATENCY"})
    request = compiled.create_infer_request()
    output = compiled.outputs[0]
    # As benchmark_app: the input tensors are set once, sharing the arrays' memory, and each call runs the
    # request, the output returned as a view of its tensor rather than copied into a fresh array. Passing
    # the inputs on every call (`infer(inputs, share_inputs=True)`) cost about 0.15 ms more per call
    # on 3-D GridSample's 5.5 MiB of inputs (Zen 4), work benchmark_app does not do.
    for name, array in inputs.items():
        request.set_tensor(name, ov.Tensor(array, shared_memory=True))
    return (lambda: request.infer(share_outputs=True)[output]), ov.__version__


def _ort_session(model, threads: int):
    """(session, version): onnxruntime on the CPU with `threads` intra-op threads, sequential."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]), ort.__version__


def _affine_peer_fn(peer: str, case: dict, inputs: dict[str, np.ndarray], xml: str, threads: int):
    """(callable returning the output array, version string) for the AffineGrid cases."""
    if peer in ("irgrid", "irgrid_unfused"):
        import irgrid

        compiled = irgrid.compile_model(xml, threads=threads, fuse=peer == "irgrid")
        return (lambda: compiled(inputs)["Y"]), irgrid.__version__
    if peer == "openvino":
        import openvino as ov

        model = ov.convert_model(str(_affine_onnx(case, Path(xml).with_suffix(".onnx"))))
        return _openvino_fn(ov.Core(), model, inputs, threads)
    if peer == "onnxruntime":
        session, version = _ort_session(str(_affine_onnx(case, Path(xml).with_suffix(".onnx"))), threads)
        return (lambda: session.run(None, inputs)[0]), version
    if peer == "torch":
        import torch

        torch.set_num_threads(threads)
        theta = torch.from_numpy(inputs["theta"])
        x = torch.from_numpy(inputs["X"]) if "X" in inputs else None

        def run():
            with torch.inference_mode():
                grid = torch.nn.functional.affine_grid(theta, list(case["size"]), align_corners=False)
                if x is None:
                    return grid.numpy()
                return torch.nn.functional.grid_sample(x, grid, mode=_MODES[case["mode"]][2], padding_mode="zeros",
                                                       align_corners=False).numpy()
        return run, torch.__version__
    raise ValueError(f"peer {peer} does not run AffineGrid cases")


def _deform_cases(quick: bool) -> list[dict]:
    """DCN layers: (X, W, with mask); pads 1, stride 1, one group and offset group."""
    if quick:
        sizes = [((1, 16, 32, 32), (16, 16, 3, 3), True), ((1, 32, 25, 34), (32, 32, 3, 3), False),
                 ((1, 8, 8, 16, 16), (8, 8, 3, 3, 3), False)]
    else:
        sizes = [((1, 64, 64, 64), (64, 64, 3, 3), True), ((1, 256, 50, 68), (256, 256, 3, 3), False),
                 ((1, 16, 16, 32, 32), (16, 16, 3, 3, 3), False)]
    names = ["deform_conv/dcn_64", "deform_conv/dcn_256", "deform_conv/3d"]
    return [dict(name=name, kind="deform_conv", x=x, w=w, mask=mask,
                 peers=("irgrid", "openvino", "onnxruntime", "torch") if len(x) == 4 else
                 ("irgrid", "openvino_ext", "onnxruntime"))
            for name, (x, w, mask) in zip(names, sizes)]


def _deform_shapes(case: dict) -> dict[str, tuple[int, ...]]:
    """Offset and mask shapes of a deform_conv case (stride 1, pads 1: output dims = input dims)."""
    out = case["x"][2:]
    taps = math.prod(case["w"][2:])
    shapes = {"offset": (case["x"][0], taps * len(out), *out)}
    if case["mask"]:
        shapes["mask"] = (case["x"][0], taps, *out)
    return shapes


def _deform_flops(case: dict) -> int:
    points = case["x"][0] * math.prod(case["x"][2:])
    return 2 * points * case["w"][0] * math.prod(case["w"][1:])


POLICY_CASES = ("grid_sample/tiny", "grid_sample/2d_bilinear/smooth")
# irgrid's OpenMP wait settings timed against each other: its default (none set: `import irgrid` sets
# PASSIVE and GOMP_SPINCOUNT=1000), plain PASSIVE (no spin) and ACTIVE
POLICY_RUNS = ("default", "PASSIVE", "ACTIVE")
EXT_PAIRED_CASES = ("grid_sample/2d_bilinear/smooth", "grid_sample/3d_trilinear/smooth",
                    "grid_sample/3d_trilinear/random")
EXT_PAIRS = 12  # alternating batch pairs per process (quick: 3)
# smooth: warps as in registration and flow networks (`_smooth_grid`); random: uniform in
# [-1.1, 1.1], the inputs of the peers' own GridSample benchmarks (no locality between points).
GRID_KINDS = ("smooth", "random")

# Mode names per API: irgrid opset9 / irgrid1 IR, ONNX GridSample-20, torch.
_MODES = {
    "bilinear": ("bilinear", "linear", "bilinear"), "nearest": ("nearest", "nearest", "nearest"),
    "bicubic": ("bicubic", "cubic", "bicubic"), "trilinear": ("linear", "linear", "bilinear"),
    "tricubic": ("cubic", "cubic", "bicubic"),
}


def _inputs(case: dict) -> dict[str, np.ndarray]:
    """Seeded inputs by Parameter name."""
    rng = np.random.default_rng(SEED)
    if case["kind"] in AFFINE_KINDS:
        theta = {"theta": _affine_theta(case["theta"], rng)}
        if case["kind"] == "affine_grid":
            return theta
        return {**theta, "X": rng.uniform(-1, 1, case["x"]).astype(np.float32)}
    if case["kind"] == "prior_grid":
        # The op reads only the shapes of these two.
        return {"feature_map": np.zeros(case["featmap"], np.float32), "image": np.zeros(case["image"], np.float32)}
    x = rng.uniform(-1, 1, case["x"]).astype(np.float32)
    if case["kind"] == "network":
        if case["name"].endswith("spatial_transformer"):
            return {"image": rng.uniform(0, 1, case["x"]).astype(np.float32)}
        return {"moving": x, "fixed": rng.uniform(-1, 1, case["x"]).astype(np.float32)}
    if case["kind"] == "deform_conv":
        shapes = _deform_shapes(case)
        inputs = {"X": x, "offset": rng.normal(0, 2, shapes["offset"]).astype(np.float32)}
        if "mask" in shapes:
            inputs["mask"] = rng.uniform(0, 1, shapes["mask"]).astype(np.float32)
        return inputs
    if case["grid_kind"] == "random":
        return {"X": x, "grid": rng.uniform(-1.1, 1.1, case["grid"]).astype(np.float32)}
    if case["name"].startswith("grid_sample/raft_lookup"):
        return {"X": x, "grid": _lookup_windows(case["x"], case["grid"], rng)}
    return {"X": x, "grid": _smooth_grid(case["grid"], rng)}


def _lookup_windows(x_shape: tuple[int, ...], shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """RAFT's smooth grid: each item a window of pixel offsets -r..r around its own flow target (a
    random point of the image); normalised for align_corners=0 like every case here (RAFT's sampler
    aligns corners, which moves every point by under a pixel and costs the same)."""
    n, wy, wx, _ = shape
    height, width = x_shape[2:]
    centre = rng.uniform(0, 1, (n, 1, 1, 2)) * (np.array([width, height]) - 1)
    dy, dx = np.meshgrid(np.arange(wy) - wy // 2, np.arange(wx) - wx // 2, indexing="ij")
    pixels = centre + np.stack([dx, dy], axis=-1)
    return ((2 * pixels + 1) / np.array([width, height]) - 1).astype(np.float32)


def _deform_weights(case: dict) -> np.ndarray:
    """The filters (a Const in the IR), seeded apart from the inputs."""
    return np.random.default_rng(SEED + 1).uniform(-0.1, 0.1, case["w"]).astype(np.float32)


def _smooth_grid(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Identity grid (align_corners=0) rotated about the last two axes, scaled, gently perturbed."""
    n, *spatial, r = shape
    axes = [(2 * np.arange(s, dtype=np.float64) + 1) / s - 1 for s in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    xyz = np.stack(mesh[::-1], axis=-1)  # (..., r) in (x, y, z) order
    out = np.empty(shape, np.float32)
    for b in range(n):
        angle = 0.2 + 0.05 * b
        x, y = xyz[..., 0], xyz[..., 1]
        rot = xyz.copy()
        rot[..., 0] = np.cos(angle) * x - np.sin(angle) * y
        rot[..., 1] = np.sin(angle) * x + np.cos(angle) * y
        phase = rng.uniform(0, 2 * np.pi, r)
        wobble = 0.02 * np.stack([np.sin(3 * np.pi * xyz[..., (k + 1) % r] + phase[k]) for k in range(r)], axis=-1)
        out[b] = 1.08 * rot + wobble
    return out


def _write_ir(case: dict, path: Path, owned: bool = False) -> None:
    """The IR both irgrid and OpenVINO read (written with irgrid's IRBuilder); `owned`: GridSample as
    irgrid1 in every rank (what OpenVINO runs through irgrid's extension)."""
    from irgrid.builder import IRBuilder

    if case["kind"] == "network":
        import openvino as ov

        ov.save_model(_network(case), str(path), compress_to_fp16=False)
        return
    b = IRBuilder(case["name"].replace("/", "_"))
    if case["kind"] in AFFINE_KINDS:
        theta = b.parameter("theta", case["theta"])
        (y,) = b.layer("AffineGrid", "irgrid1", [theta, b.const(np.array(case["size"], np.int64), "size")],
                       {"align_corners": False}, name="Y" if case["kind"] == "affine_grid" else "grid")
        if case["kind"] == "affine_sample":
            (y,) = b.layer("GridSample", "opset9", [b.parameter("X", case["x"]), y],
                           {"align_corners": False, "mode": case["mode"], "padding_mode": "zeros"}, name="Y")
    elif case["kind"] == "prior_grid":
        anchors = np.array([[-90.5, -45.25, 90.5, 45.25], [-64, -64, 64, 64], [-45.25, -90.5, 45.25, 90.5]])
        priors = b.const(np.resize(anchors, (case["priors"], 4)).astype(np.float32), name="priors")
        featmap = b.parameter("feature_map", case["featmap"])
        image = b.parameter("image", case["image"])
        (y,) = b.layer("ExperimentalDetectronPriorGridGenerator", "opset6", [priors, featmap, image],
                       {"flatten": True, "h": 0, "w": 0, "stride_x": 32.0, "stride_y": 32.0}, name="Y")
    elif case["kind"] == "deform_conv":
        params = {name: b.parameter(name, shape) for name, shape in
                  {"X": case["x"], **_deform_shapes(case)}.items()}
        w = b.const(_deform_weights(case), name="W")
        r = len(case["x"]) - 2
        if r == 2:
            inputs = [params["X"], params["offset"], w] + ([params["mask"]] if "mask" in params else [])
            (y,) = b.layer("DeformableConvolution", "opset8", inputs,
                           {"strides": [1, 1], "pads_begin": [1, 1], "pads_end": [1, 1], "dilations": [1, 1],
                            "bilinear_interpolation_pad": True}, name="Y")
        else:
            inputs = [params["X"], w, params["offset"]]
            if "mask" in params:
                inputs += [b.const(np.zeros(0, np.float32), name="B"), params["mask"]]
            (y,) = b.layer("DeformConv", "irgrid1", inputs, {"pads": [1]}, name="Y")
    else:
        x = b.parameter("X", case["x"])
        grid = b.parameter("grid", case["grid"])
        rank4 = len(case["x"]) == 4
        native = rank4 and not owned
        version, mode = ("opset9", _MODES[case["mode"]][0]) if native else ("irgrid1", _MODES[case["mode"]][1])
        (y,) = b.layer("GridSample", version, [x, grid],
                       {"align_corners": False, "mode": mode, "padding_mode": case.get("padding", "zeros")}, name="Y")
    b.result(y, "Y/sink")
    b.save(path)


# ---------------------------------------------------------------------------------------------
# worker: one (case, peer) in its own process

def _cpu_busy_s() -> tuple[float, float, int] | None:
    """Seconds of busy CPU time of the whole machine since boot (user, nice, system, irq, softirq),
    seconds of steal (a VM's vCPUs waiting for the host), and the CPU count, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
            cpus = sum(1 for line in f if line.startswith("cpu"))
    except OSError:
        return None
    ticks = [int(v) for v in fields[:8]]
    hz = os.sysconf("SC_CLK_TCK")
    busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]
    return busy / hz, ticks[7] / hz, cpus


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _calls_per_sample(fn, min_sample_s: float) -> int:
    """Warm up (at least 3 calls and ~0.1 s), then how many back-to-back calls last `min_sample_s`."""
    calls, start = 0, time.perf_counter()
    while calls < 3 or (time.perf_counter() - start < 0.1 and calls < 1000):
        fn()
        calls += 1
    per_call = (time.perf_counter() - start) / calls
    return max(1, min(100000, math.ceil(min_sample_s / max(per_call, 1e-9))))


def _sample_ms(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e3


def _time(fn, repeat: int, min_sample_s: float) -> dict:
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    inner = _calls_per_sample(fn, min_sample_s)
    samples = []
    machine0, own0, wall0 = _cpu_busy_s(), _own_cpu_s(), time.perf_counter()
    for _ in range(repeat):
        samples.append(_sample_ms(fn, inner))
    machine1, own1, wall1 = _cpu_busy_s(), _own_cpu_s(), time.perf_counter()
    background = steal = None
    if machine0 and machine1:  # CPU that other processes used while we timed, in % of the machine
        capacity = (wall1 - wall0) * machine1[2]
        others = (machine1[0] - machine0[0]) - (own1 - own0)
        background = max(0.0, 100 * others / capacity)
        steal = 100 * (machine1[1] - machine0[1]) / capacity
    return {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
            "samples_ms": samples, "calls_per_sample": inner, "samples": len(samples), "first_call_ms": first * 1e3,
            "background_cpu_pct": background, "steal_cpu_pct": steal}


def _peer_fn(peer: str, case: dict, inputs: dict[str, np.ndarray], xml: str, threads: int):
    """(callable returning the output array, version string)."""
    if case["kind"] in AFFINE_KINDS:
        return _affine_peer_fn(peer, case, inputs, xml, threads)
    if peer == "irgrid":
        import irgrid

        compiled = irgrid.compile_model(xml, threads=threads)
        return (lambda: compiled(inputs)["Y"]), irgrid.__version__
    if peer == "irgrid_kernel":  # the kernel's entry alone, no executor (per-call overhead split)
        import irgrid
        from irgrid.ops.grid_sample import sample_plan

        x, grid = inputs["X"], inputs["grid"]
        plan = sample_plan(x.shape, grid.shape, x.dtype, _MODES[case["mode"]][1], "zeros", False)
        return (lambda: plan(x, grid, None, threads)), irgrid.__version__
    if peer in ("openvino", "openvino_ext"):
        import openvino as ov

        core = ov.Core()
        if peer == "openvino_ext":  # the same case with GridSample irgrid1, run by irgrid's extension
            import irgrid
            from irgrid.openvino.runner import add_irgrid_extension

            irgrid.set_num_threads(threads)  # (the Python ops' kernels)
            which = add_irgrid_extension(core)  # the native library where it loads, as `-d openvino` does
            xml = xml.replace(".xml", ".irgrid1.xml")
            _write_ir(case, Path(xml), owned=True)
            fn, version = _openvino_fn(core, core.read_model(xml), inputs, threads)
            # The core stays alive with the callable: a model read through a native library must not
            # outlive the core that loaded it.
            return (lambda: (core, fn())[1]), f"{version}, {which}"
        return _openvino_fn(core, core.read_model(xml), inputs, threads)
    if peer == "onnxruntime" and case["kind"] == "deform_conv":
        return _onnxruntime_deform_conv(case, inputs, threads)
    if peer == "torch" and case["kind"] == "deform_conv":
        import torch
        from torchvision.ops import deform_conv2d

        torch.set_num_threads(threads)
        tensors = {k: torch.from_numpy(v) for k, v in inputs.items()}
        weight = torch.from_numpy(_deform_weights(case))

        def run_deform():
            with torch.inference_mode():
                return deform_conv2d(tensors["X"], tensors["offset"], weight, padding=(1, 1),
                                     mask=tensors.get("mask")).numpy()
        return run_deform, torch.__version__
    if peer == "onnxruntime":
        from onnx import TensorProto, helper

        x, grid = inputs["X"], inputs["grid"]
        node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=_MODES[case["mode"]][1],
                                padding_mode="zeros", align_corners=0)
        graph = helper.make_graph(
            [node], "gs", [helper.make_tensor_value_info("X", TensorProto.FLOAT, x.shape),
                           helper.make_tensor_value_info("grid", TensorProto.FLOAT, grid.shape)],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        session, version = _ort_session(model.SerializeToString(), threads)
        feed = {"X": x, "grid": grid}
        return (lambda: session.run(None, feed)[0]), version
    if peer == "torch":
        import torch

        torch.set_num_threads(threads)
        x, grid = torch.from_numpy(inputs["X"]), torch.from_numpy(inputs["grid"])
        mode = _MODES[case["mode"]][2]

        def run():
            with torch.inference_mode():
                return torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode="zeros",
                                                       align_corners=False).numpy()
        return run, torch.__version__
    raise ValueError(f"unknown peer {peer}")


def _onnxruntime_deform_conv(case: dict, inputs: dict[str, np.ndarray], threads: int):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    r = len(case["x"]) - 2
    names = ["X", "W", "offset"] + (["", "mask"] if "mask" in inputs else [])
    node = helper.make_node("DeformConv", names, ["Y"], pads=[1] * (2 * r))
    graph = helper.make_graph(
        [node], "dc", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(_deform_weights(case), "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return (lambda: session.run(None, inputs)[0]), ort.__version__


SGEMM_SHAPE = (256, 2304, 3400)  # (M, K, N): the GEMM of deform_conv/dcn_256


def _sgemm_rates(threads: int, repeat: int) -> dict:
    """GFLOP/s of an f32 (M, K) . (K, N) product: numpy, and a MatMul compiled with OpenVINO."""
    import openvino as ov
    import openvino.opset13 as ops

    m, k, n = SGEMM_SHAPE
    rng = np.random.default_rng(SEED)
    a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    left, right = ops.parameter([m, k], ov.Type.f32), ops.parameter([k, n], ov.Type.f32)
    compiled = ov.Core().compile_model(ov.Model([ops.matmul(left, right, False, False)], [left, right]), "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1})
    request = compiled.create_infer_request()
    result = {"ok": True, "shape": SGEMM_SHAPE}
    for name, fn in (("numpy", lambda: a @ b), ("openvino", lambda: request.infer([a, b], share_inputs=True))):
        fn()
        times = []
        for _ in range(max(3, repeat)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        result[f"{name}_GFLOPs"] = 2 * m * k * n / min(times) / 1e9
    result["GFLOPs"] = max(result["numpy_GFLOPs"], result["openvino_GFLOPs"])
    return result


def _worker(spec: dict) -> dict:
    if spec["peer"] == "copy":
        return _copy_bandwidth(spec["threads"], spec["copy_mib"], spec["repeat"])
    if spec["peer"] == "sgemm":
        return _sgemm_rates(spec["threads"], spec["repeat"])
    if spec["peer"] == "ext_paired":
        return _ext_paired(spec)
    if spec["peer"] == "calm_probe":
        return _calm_probe(spec["threads"])
    case = spec["case"]
    inputs = _inputs(case)
    fn, version = _peer_fn(spec["peer"], case, inputs, spec["xml"], spec["threads"])
    output = np.asarray(fn())
    timing = _time(fn, spec["repeat"], spec["min_sample_ms"] / 1e3)
    np.save(spec["output"], output)
    return {"ok": True, "version": version, "timing": timing,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}


def _ext_paired(spec: dict) -> dict:
    """irgrid's runtime and OpenVINO with irgrid's extension on one case, in one process, alternating
    batches of back-to-back calls: each pair's ratio (extension / runtime) saw the same host speed."""
    case = spec["case"]
    inputs = _inputs(case)
    fns = {peer: _peer_fn(peer, case, inputs, spec["xml"], spec["threads"])[0] for peer in ("irgrid", "openvino_ext")}
    calls = {peer: _calls_per_sample(fn, spec["min_sample_ms"] / 1e3) for peer, fn in fns.items()}
    ms: dict[str, list[float]] = {peer: [] for peer in fns}
    for pair in range(spec["pairs"]):
        for peer in (fns if pair % 2 == 0 else reversed(list(fns))):
            ms[peer].append(_sample_ms(fns[peer], calls[peer]))
    return {"ok": True, "irgrid_ms": ms["irgrid"], "openvino_ext_ms": ms["openvino_ext"],
            "ratios": [e / o for o, e in zip(ms["irgrid"], ms["openvino_ext"])]}


def _copy_bandwidth(threads: int, mib: int, repeat: int) -> dict:
    """numpy copy of `mib` MiB, counted as read + write, on 1 and on `threads` Python threads."""
    import threading

    n = mib * 2 ** 20 // 4
    src = np.ones(n, np.float32)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    bounds = np.linspace(0, n, threads + 1).astype(np.int64)

    def one():
        np.copyto(dst, src)

    def parallel():
        workers = [threading.Thread(target=np.copyto, args=(dst[lo:hi], src[lo:hi]))
                   for lo, hi in zip(bounds[:-1], bounds[1:])]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    result = {"ok": True, "bytes": 2 * src.nbytes}
    for name, fn in (("single_thread", one), ("threads", parallel)):
        times = []
        for _ in range(max(3, repeat)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        result[f"{name}_GBps"] = 2 * src.nbytes / statistics.median(times) / 1e9
    result["GBps"] = max(result["single_thread_GBps"], result["threads_GBps"])
    return result


CALM_PROBE_CASE = "grid_sample/3d_tricubic/random"  # its X and plan, on a constant grid
CALM_PROBE_CALLS = 150
CALM_PROBE_EVERY_S = 45.0


def _calm_probe(threads: int) -> dict:
    """Median time of irgrid's tricubic kernel on a constant grid: every tap read from L1 and no
    binning, so the time follows the host's speed (CPU time other tenants take), not where the data
    lie. On this project's VM it took 2.3-2.4 ms (2 threads) in calm minutes and up to 5 ms in busy
    ones (benchmarks/README.md, "Comparing builds on this VM")."""
    from irgrid.ops.grid_sample import sample_plan

    case = kernel_cases([CALM_PROBE_CASE])[0]
    x = _inputs(case)["X"]
    grid = np.full(case["grid"], 0.1, x.dtype)
    plan = sample_plan(x.shape, grid.shape, x.dtype, "cubic", "zeros", False)
    out = plan(x, grid, None, threads)
    times = []
    for _ in range(CALM_PROBE_CALLS):
        start = time.perf_counter()
        plan(x, grid, out, threads)
        times.append(time.perf_counter() - start)
    return {"ok": True, "median_ms": statistics.median(times) * 1e3}


def _wait_calm(below_ms: float, max_s: float, threads: int, timeout: float) -> list[float]:
    """Probe (_calm_probe) every CALM_PROBE_EVERY_S until a probe's median is below `below_ms` or
    `max_s` has passed; returns the probes' medians (ms)."""
    probes: list[float] = []
    deadline = time.monotonic() + max_s
    while True:
        res = _run_worker({"peer": "calm_probe", "threads": threads}, None, timeout)
        if not res.get("ok"):
            print(f"calm probe failed ({res.get('error')}); starting", file=sys.stderr, flush=True)
            return probes
        probes.append(res["median_ms"])
        calm = probes[-1] < below_ms
        print(f"calm probe: {probes[-1]:.2f} ms ({'calm: starting' if calm else f'waiting for < {below_ms:g}'})",
              file=sys.stderr, flush=True)
        if calm:
            return probes
        if time.monotonic() + CALM_PROBE_EVERY_S > deadline:
            print("calm probe: the host stayed busy; starting", file=sys.stderr, flush=True)
            return probes
        time.sleep(CALM_PROBE_EVERY_S)


# ---------------------------------------------------------------------------------------------
# driver

def _available(peer: str) -> bool:
    module = {"irgrid": "irgrid", "irgrid_kernel": "irgrid", "irgrid_unfused": "irgrid", "openvino": "openvino",
              "openvino_ext": "openvino", "onnxruntime": "onnxruntime", "torch": "torch"}[peer]
    if importlib.util.find_spec(module) is None:
        return False
    return peer != "onnxruntime" or importlib.util.find_spec("onnx") is not None


# A measurement during which other processes used, or the VM's host stole, more of the machine than this
# is retried. Waking an idle vCPU (a PASSIVE OpenMP thread) shows as a little steal by itself: 0-3% in 85%
# of run 150's measurements (Zen 1 VM), while a host taking a vCPU showed as 20-54% and slowed calls up
# to 2.8x (run 151: 2-D bilinear of two channels random 2.06 ms at 44% steal, 0.74-0.78 ms at 0%).
BUSY_PCT = 10.0


def _measure(spec: dict, policy: str | None, timeout: float, retries: int) -> dict:
    """Run a worker; rerun it (up to `retries` times) while other processes loaded the machine or its
    host stole from it, and keep the least disturbed run (_disturbance)."""
    best = None
    for attempt in range(retries + 1):
        if attempt:
            _wait_quiet(QUIET_WAIT_S)
        res = _run_worker(spec, policy, timeout)
        if not res.get("ok"):
            return res
        res["attempts"] = attempt + 1
        if best is None or _disturbance(res) < _disturbance(best):
            best = res
        if _disturbance(best) <= BUSY_PCT:
            break
    best["attempts"] = attempt + 1
    return best


def _rounds(specs: dict[str, dict], policies: dict[str, str | None], rounds: int, timeout: float,
            retries: int, title: str) -> dict[str, dict]:
    """Measure every key of `specs` in `rounds` interleaved rounds (a, b, c, a, b, c, ...), each in a
    fresh subprocess; pool the samples of all rounds (median, min, max) per key."""
    runs: dict[str, list[dict]] = {key: [] for key in specs}
    for round_index in range(rounds):
        for key, spec in specs.items():
            if runs[key] and not runs[key][-1].get("ok"):
                continue  # it failed: do not retry it every round
            res = _measure(spec, policies[key], timeout, retries)
            runs[key].append(res)
            status = (f"{_fmt_ms(res['timing']['median_ms'])} ms (min {_fmt_ms(res['timing']['min_ms'])}, "
                      f"background {_background(res):.0f}%, steal {res['timing']['steal_cpu_pct'] or 0:.0f}%, "
                      f"attempts {res['attempts']})" if res.get("ok") else "n/a: " + res["error"])
            print(f"  {title:<34} {PEER_LABELS.get(key, key):<14} round {round_index + 1}: {status}",
                  file=sys.stderr, flush=True)
    combined = {}
    for key, results in runs.items():
        if not results[-1].get("ok"):
            combined[key] = results[-1]
            continue
        samples = [v for r in results for v in r["timing"].pop("samples_ms")]
        timings = [r["timing"] for r in results]
        combined[key] = {
            "ok": True, "version": results[0]["version"], "omp_wait_policy": results[0]["omp_wait_policy"],
            "attempts": sum(r["attempts"] for r in results),
            "timing": {"median_ms": statistics.median(samples), "min_ms": min(samples), "max_ms": max(samples),
                       "samples": len(samples), "rounds": len(results),
                       "round_medians_ms": [t["median_ms"] for t in timings],
                       "calls_per_sample": [t["calls_per_sample"] for t in timings],
                       "first_call_ms": timings[0]["first_call_ms"],
                       "background_cpu_pct": max((t["background_cpu_pct"] or 0) for t in timings),
                       "steal_cpu_pct": max((t["steal_cpu_pct"] or 0) for t in timings)}}
    return combined


QUIET_WAIT_S = 30.0  # before a retry, wait up to this long for the machine to go quiet


def _wait_quiet(max_s: float, window_s: float = 1.0) -> None:
    """Return once a `window_s` window had other processes, and steal, under BUSY_PCT of the machine, or
    after `max_s`."""
    deadline = time.monotonic() + max_s
    while time.monotonic() < deadline:
        before = _cpu_busy_s()
        if before is None:
            return
        time.sleep(window_s)
        after = _cpu_busy_s()
        if 100 * max(after[0] - before[0], after[1] - before[1]) / (window_s * after[2]) < BUSY_PCT:
            return


def _background(res: dict) -> float:
    value = res.get("timing", {}).get("background_cpu_pct")
    return 0.0 if value is None else value


def _disturbance(res: dict) -> float:
    """The larger of the machine's shares other processes used and the VM's host stole, in %."""
    return max(_background(res), res.get("timing", {}).get("steal_cpu_pct") or 0.0)


def _run_worker(spec: dict, policy: str | None, timeout: float) -> dict:
    env = dict(os.environ)
    env.pop("IRGRID_NUM_THREADS", None)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    try:
        proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:.0f} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("@@RESULT "):
            return json.loads(line[len("@@RESULT "):])
    lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
    return {"ok": False, "error": (lines[-1] if lines else f"exit {proc.returncode}")[:300]}


def _selected(name: str, patterns: list[str]) -> bool:
    return not patterns or any(fnmatch.fnmatch(name, f"*{p}*") for p in patterns)


def kernel_cases(patterns: list[str]) -> list[dict]:
    """The GridSample cases whose kernel alone ab.py and stack_offsets.py time (every one but the tiny
    case, whose time is the call's overhead), those `patterns` select."""
    return [case for case in _cases(False) if case["kind"] == "grid_sample" and case["name"] != "grid_sample/tiny"
            and _selected(case["name"], patterns)]


def _named_cases(names, quick: bool, patterns: list[str], tmp_path: Path, tag: str):
    """(case, its IR written to tmp_path) for each of `names` that exists and `--cases` selects."""
    for name in names:
        case = next((c for c in _cases(quick) if c["name"] == name), None)
        if case is not None and _selected(name, patterns):
            xml = tmp_path / (name.replace("/", "_") + f".{tag}.xml")
            _write_ir(case, xml)
            yield case, xml


def _bytes_moved(case: dict) -> int:
    n_x = math.prod(case["x"])
    n_grid = math.prod(case["grid"])
    n_y = case["x"][0] * case["x"][1] * math.prod(case["grid"][1:-1])
    return 4 * (n_x + n_grid + n_y)


# The span of taps a point reads along each dim, from its floor (nearest: its rounded index).
_TAP_SPAN = {"nearest": (0, 1), "bilinear": (0, 2), "trilinear": (0, 2), "bicubic": (-1, 3), "tricubic": (-1, 3)}


def _bytes_touched(case: dict, grid: np.ndarray) -> int:
    """Bytes of the 64-byte lines of X that the taps of `grid` read (zeros padding, align_corners=0, f32),
    plus the grid and output: what any implementation must move. Below _bytes_moved where the grid
    reads part of X, as RAFT's lookups do (81 points in a 46 x 62 plane); about the same on the warps.
    Planes whose bytes are a multiple of 64 touch the same lines in every channel, so one is counted."""
    n, channels, *spatial = case["x"]
    plane = math.prod(spatial)
    lo, hi = _TAP_SPAN[case["mode"]]
    pixels = [((grid[..., len(spatial) - 1 - k].astype(np.float64) + 1) * size - 1) / 2
              for k, size in enumerate(spatial)]
    starts = [np.rint(p) if case["mode"] == "nearest" else np.floor(p) for p in pixels]
    counted = 1 if plane * 4 % 64 == 0 else channels
    lines = 0
    for item in range(n):
        index = np.zeros((starts[0][item].size, 1), np.int64)  # (points, taps so far)
        inside = np.ones(index.shape, bool)
        for start, size in zip(starts, spatial):
            taps = start[item].reshape(-1, 1).astype(np.int64) + np.arange(lo, hi)  # (points, span)
            index = (index[:, :, None] * size + taps[:, None, :]).reshape(len(taps), -1)
            inside = (inside[:, :, None] & ((taps >= 0) & (taps < size))[:, None, :]).reshape(len(taps), -1)
        index = index[inside]
        for channel in range(counted):
            lines += np.unique((index + (item * channels + channel) * plane) * 4 // 64).size
    lines *= channels // counted
    n_y = n * channels * math.prod(case["grid"][1:-1])
    return 64 * lines + 4 * (grid.size + n_y)


def _fmt_ms(ms: float) -> str:
    return f"{ms:.4f}" if ms < 0.1 else f"{ms:.3f}" if ms < 10 else f"{ms:.2f}" if ms < 1000 else f"{ms:.0f}"


def _shape(shape) -> str:
    return "x".join(map(str, shape))


def _describe(case: dict) -> str:
    if case["kind"] == "network" and case["name"].endswith("spatial_transformer"):
        return (f"image {_shape(case['x'])}: 2 Conv2d + MaxPool + ReLU, 2 Linear, AffineGrid, "
                f"bilinear GridSample (PyTorch's STN tutorial)")
    if case["kind"] == "network":
        return (f"moving, fixed {_shape(case['x'])}: 6 Conv3d (16-32 channels) + PReLU, MaxPool, Interpolate, "
                f"Concat, trilinear GridSample")
    if case["kind"] == "deform_conv":
        return (f"X {_shape(case['x'])}, W {_shape(case['w'])}, pads 1, "
                f"{'with' if case['mask'] else 'no'} mask")
    if case["kind"] in AFFINE_KINDS:
        text = f"theta {_shape(case['theta'])}, size {_shape(case['size'])}"
        if case["kind"] == "affine_grid":
            return text
        return f"AffineGrid ({text}) -> GridSample X {_shape(case['x'])}, {case['mode']}"
    if case["kind"] == "prior_grid":
        return f"priors {case['priors']}x4, featmap {_shape(case['featmap'])}, image {_shape(case['image'])}"
    return f"X {_shape(case['x'])}, grid {_shape(case['grid'])} ({case['grid_kind']}), {case['mode']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark irgrid against OpenVINO, onnxruntime and torch.")
    parser.add_argument("--threads", type=int, default=None, help="threads for every peer (default: all cores)")
    parser.add_argument("--repeat", type=int, default=None, help="timed samples per measurement (default 15, quick 5)")
    parser.add_argument("--min-sample-ms", type=float, default=None,
                        help="each sample loops calls for at least this long (default 25, quick 5)")
    parser.add_argument("--quick", action="store_true", help="smoke run: smaller sizes, fewer repeats")
    parser.add_argument("--cases", default="", help="comma-separated name filters (substring or glob), "
                                                    "e.g. prior_grid,3d_*")
    parser.add_argument("--json", dest="json_path", help="also write the JSON results to this file")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved rounds per case, each peer in a fresh subprocess per round; samples "
                             "of all rounds are pooled (default 3, quick 1)")
    parser.add_argument("--retries", type=int, default=2,
                        help=f"rerun a measurement up to this many times while other processes use, or the VM's "
                             f"host steals, more than {BUSY_PCT:g}%% of the machine (default 2)")
    parser.add_argument("--wait-calm", type=float, default=None, metavar="MS",
                        help="before the run, wait until irgrid's tricubic kernel on a constant grid takes less "
                             "than MS ms per call (median; a probe every 45 s), e.g. 2.55 on 2 threads of this "
                             "project's VM")
    parser.add_argument("--wait-calm-minutes", type=float, default=40.0,
                        help="give up waiting after this long and run anyway (default 40)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        try:
            result = _worker(json.loads(args.worker))
        except Exception as exc:  # reported by the driver as this peer's cell
            result = {"ok": False, "error": _clean_error(exc)}
        print("@@RESULT " + json.dumps(result))
        return 0

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    threads = args.threads or cores
    if threads < 1:
        parser.error("--threads must be at least 1")
    repeat = args.repeat or (5 if args.quick else 15)
    rounds = args.rounds or (1 if args.quick else 3)
    min_sample_ms = args.min_sample_ms or (5.0 if args.quick else 25.0)
    patterns = [p.strip() for p in args.cases.split(",") if p.strip()]
    cases = [c for c in _cases(args.quick) if _selected(c["name"], patterns)]
    if args.list:
        for c in _cases(args.quick):
            print(f"{c['name']:<38} {_describe(c)}")
        return 0
    if not cases:
        parser.error(f"--cases {args.cases!r} matches no case (see --list)")
    available = {p: _available(p) for p in PEERS + ("irgrid_kernel",)}
    if not available["irgrid"]:
        print("irgrid is not importable", file=sys.stderr)
        return 2
    timeout = 600.0
    started = time.perf_counter()

    header = {
        "python": platform.python_version(), "machine": _cpu_name(), "cores_available": cores,
        "threads": threads, "repeat": repeat, "rounds": rounds, "min_sample_ms": min_sample_ms,
        "quick": args.quick,
        "peers_available": {p: available[p] for p in PEERS},
        "method": "each (case, peer) in its own subprocess, fresh per round; same thread count for all; "
                  "median of the pooled samples of `rounds` interleaved rounds x `repeat` samples after "
                  "warm-up; ratio = peer / irgrid",
        "omp_wait_policy": "irgrid: its default (PASSIVE, GOMP_SPINCOUNT=1000) unless stated; other peers: "
                           "unset (their defaults)",
    }
    print(f"irgrid benchmark: {header['machine']}, {threads} thread(s) for every peer "
          f"({cores} core(s) available), {'quick' if args.quick else 'full'} run")
    print("Each (case, peer) runs in its own subprocess, so OpenMP and OpenVINO/TBB/onnxruntime thread pools "
          "never contend.\nirgrid runs with its default OMP_WAIT_POLICY=PASSIVE, GOMP_SPINCOUNT=1000; other peers with "
          "them unset. "
          f"Median of {rounds} interleaved round(s) x {repeat} samples (each >= {min_sample_ms:g} ms of "
          "back-to-back calls, after warm-up); each round starts fresh subprocesses.\n"
          "(Progress on stderr.)")
    missing = [PEER_LABELS[p] for p in PEERS if not available[p]]
    if missing:
        print(f"Not importable, skipped: {', '.join(missing)}")
    print(flush=True)

    if args.wait_calm:
        header["calm_probe_ms"] = _wait_calm(args.wait_calm, args.wait_calm_minutes * 60, threads, timeout)
        started = time.perf_counter()
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="irgrid-bench-") as tmp:
        tmp_path = Path(tmp)
        copy_spec = {"peer": "copy", "threads": threads, "copy_mib": 64 if args.quick else 256, "repeat": repeat}
        copy = _run_worker(copy_spec, None, timeout)
        copy_gbps = copy.get("GBps") if copy.get("ok") else None
        if copy_gbps:
            print(f"copy bandwidth: {copy_gbps:.1f} GB/s (numpy copy of {64 if args.quick else 256} MiB, "
                  f"read + write; 1 thread {copy['single_thread_GBps']:.1f}, {threads} threads "
                  f"{copy['threads_GBps']:.1f})", flush=True)
        else:
            print(f"copy bandwidth: failed ({copy.get('error')})", flush=True)

        sgemm = None
        if any(c["kind"] == "deform_conv" for c in cases):
            sgemm = _run_worker({"peer": "sgemm", "threads": threads, "repeat": repeat}, None, timeout)
            if sgemm.get("ok"):
                print(f"SGEMM {'x'.join(map(str, SGEMM_SHAPE))}: numpy {sgemm['numpy_GFLOPs']:.0f} GFLOP/s, "
                      f"OpenVINO MatMul {sgemm['openvino_GFLOPs']:.0f} GFLOP/s", flush=True)

        for case in cases:
            xml = tmp_path / (case["name"].replace("/", "_") + ".xml")
            _write_ir(case, xml)
            row = {"case": case["name"], "description": _describe(case), "peers": {}}
            peers = [p for p in case["peers"] if available.get(p, False)]
            specs = {p: {"peer": p, "case": case, "xml": str(xml), "threads": threads, "repeat": repeat,
                         "min_sample_ms": min_sample_ms, "output": str(tmp_path / f"{xml.stem}.{p}.npy")}
                     for p in peers}
            around = [_run_worker(copy_spec, None, timeout)] if case["kind"] == "grid_sample" else []
            runs = _rounds(specs, {p: None for p in peers}, rounds, timeout, args.retries, case["name"])
            around += [_run_worker(copy_spec, None, timeout)] if around else []
            for peer in peers:
                res = runs[peer]
                if res.get("ok") and peer != "irgrid" and runs.get("irgrid", {}).get("ok"):
                    ours = np.load(specs["irgrid"]["output"])
                    theirs = np.load(specs[peer]["output"])
                    res["max_abs_diff_vs_irgrid"] = (float(np.max(np.abs(ours.astype(np.float64) - theirs)))
                                                     if ours.shape == theirs.shape else f"shape {theirs.shape}")
                row["peers"][peer] = res
            ours = row["peers"].get("irgrid", {})
            if ours.get("ok"):
                base = ours["timing"]["median_ms"]
                row["ratio_peer_over_irgrid"] = {p: r["timing"]["median_ms"] / base for p, r in row["peers"].items()
                                                 if p != "irgrid" and r.get("ok")}
                if case["kind"] == "deform_conv":
                    from irgrid.ops.im2col import workspace_bytes

                    row["irgrid_GFLOPs"] = _deform_flops(case) / (base / 1e3) / 1e9
                    row["extra_memory_MiB"] = workspace_bytes(case["x"], case["w"], case["x"][2:], 4) / 2**20
                    if sgemm and sgemm.get("ok"):
                        row["fraction_of_sgemm"] = row["irgrid_GFLOPs"] / sgemm["GFLOPs"]
                if case["kind"] == "grid_sample":
                    moved = _bytes_moved(case)
                    row["bytes_moved"] = moved
                    row["irgrid_GBps"] = moved / (base / 1e3) / 1e9
                    if copy_gbps:
                        row["fraction_of_copy_bandwidth"] = row["irgrid_GBps"] / copy_gbps
                    if all(c.get("ok") for c in around):  # the bytes at the case's copy bandwidth
                        row["copy_GBps_around_case"] = statistics.mean(c["threads_GBps"] for c in around)
                        row["roofline_ms"] = moved / (row["copy_GBps_around_case"] * 1e9) * 1e3
                        row["over_roofline"] = base / row["roofline_ms"]
                        row["touched_bytes"] = _bytes_touched(case, _inputs(case)["grid"])
                        row["lines_floor_ms"] = row["touched_bytes"] / (row["copy_GBps_around_case"] * 1e9) * 1e3
                        row["over_lines_floor"] = base / row["lines_floor_ms"]
            results.append(row)

        policy_rows = []
        for case, xml in _named_cases(POLICY_CASES, args.quick, patterns, tmp_path, "policy"):
            name = case["name"]
            prow = {"case": name, "description": _describe(case)}
            specs = {policy: {"peer": "irgrid", "case": case, "xml": str(xml), "threads": threads, "repeat": repeat,
                              "min_sample_ms": min_sample_ms, "output": str(tmp_path / f"{xml.stem}.{policy}.npy")}
                     for policy in POLICY_RUNS}
            policies = {policy: None if policy == "default" else policy for policy in POLICY_RUNS}
            if threads > 1:  # for reference: one thread never wakes a sleeping OpenMP thread
                specs["default_1_thread"] = dict(specs["default"], threads=1,
                                                 output=str(tmp_path / f"{xml.stem}.1t.npy"))
                policies["default_1_thread"] = None
            prow.update(_rounds(specs, policies, rounds, timeout, args.retries, f"{name} (OMP_WAIT_POLICY)"))
            policy_rows.append(prow)
            for policy in ("default", "PASSIVE"):
                if prow[policy].get("ok") and prow["ACTIVE"].get("ok"):
                    prow[f"{policy}_over_active"] = (prow[policy]["timing"]["median_ms"]
                                                     / prow["ACTIVE"]["timing"]["median_ms"])

        paired_rows = []
        for case, xml in _named_cases(EXT_PAIRED_CASES if available["openvino_ext"] else (), args.quick, patterns,
                                      tmp_path, "paired"):
            name = case["name"]
            spec = {"peer": "ext_paired", "case": case, "xml": str(xml), "threads": threads,
                    "min_sample_ms": min_sample_ms, "pairs": 3 if args.quick else EXT_PAIRS}
            runs = [_run_worker(spec, None, timeout) for _ in range(rounds)]
            failed = next((r for r in runs if not r.get("ok")), None)
            prow = {"case": name, "description": _describe(case)}
            if failed:
                prow.update(ok=False, error=failed["error"])
            else:
                ratios = sorted(v for r in runs for v in r["ratios"])
                quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
                prow.update(ok=True, pairs=len(ratios), ratio_median=statistics.median(ratios),
                            ratio_quartiles=[quartiles[0], quartiles[2]],
                            irgrid_median_ms=statistics.median(v for r in runs for v in r["irgrid_ms"]),
                            openvino_ext_median_ms=statistics.median(v for r in runs for v in r["openvino_ext_ms"]),
                            ratios=ratios)
            print(f"  {name:<34} extension / runtime, paired: "
                  + (f"{prow['ratio_median']:.2f}" if prow["ok"] else prow["error"]), file=sys.stderr, flush=True)
            paired_rows.append(prow)

    elapsed = time.perf_counter() - started
    report = {"header": header, "copy_bandwidth": copy, "sgemm": sgemm, "results": results,
              "omp_wait_policy": policy_rows, "extension_paired": paired_rows, "elapsed_s": elapsed}
    _print_tables(report, available)
    text = json.dumps(report, indent=2)
    print("\nJSON:")
    print(text)
    if args.json_path:
        Path(args.json_path).write_text(text + "\n")
        print(f"\nwrote {args.json_path}")
    return 0


def _busy_mark(res: dict) -> str:
    return "*" if _disturbance(res) > BUSY_PCT else ""


def _print_tables(report: dict, available: dict) -> None:
    peers = [p for p in PEERS if available[p]]
    others = [p for p in peers if p != "irgrid"]
    print(f"\nResults: median ms per call ({report['header']['threads']} threads); (x) = peer / irgrid, "
          "above 1 means irgrid is faster")
    cols = (["case", "irgrid ms"] + [f"{PEER_LABELS[p]} ms (x)" for p in others]
            + ["GB/s", "%copy", "roof ms", "x roof", "x lines", "max|diff|"])
    widths = [38, 10] + [22] * len(others) + [6, 6, 8, 7, 7, 9]
    print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, widths))))
    print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    notes = []
    for row in report["results"]:
        cells = [row["case"]]
        ours = row["peers"].get("irgrid", {})
        cells.append(_fmt_ms(ours["timing"]["median_ms"]) + _busy_mark(ours) if ours.get("ok") else "failed")
        diffs = []
        for p in others:
            res = row["peers"].get(p)
            if res is None:
                cells.append("-")
                if p == "openvino" and row["case"].startswith("grid_sample/3d"):
                    notes.append(f"{row['case']} / OpenVINO: not run: GridSample-9 is 4-D only "
                                 "(a rank-5 GridSample is irgrid1, which OpenVINO cannot read)")
            elif not res.get("ok"):
                cells.append("unsupported")
                notes.append(f"{row['case']} / {PEER_LABELS[p]}: {res['error']}")
            else:
                ratio = row.get("ratio_peer_over_irgrid", {}).get(p)
                cells.append(_fmt_ms(res["timing"]["median_ms"]) + _busy_mark(res)
                             + (f" ({ratio:.2f}x)" if ratio else ""))
                diff = res.get("max_abs_diff_vs_irgrid")
                if isinstance(diff, float):
                    diffs.append(diff)
        cells.append(f"{row['irgrid_GBps']:.1f}" if "irgrid_GBps" in row else "-")
        frac = row.get("fraction_of_copy_bandwidth")
        cells.append(f"{100 * frac:.0f}%" if frac is not None else "-")
        cells.append(_fmt_ms(row["roofline_ms"]) if "roofline_ms" in row else "-")
        cells.append(f"{row['over_roofline']:.1f}" if "over_roofline" in row else "-")
        cells.append(f"{row['over_lines_floor']:.1f}" if "over_lines_floor" in row else "-")
        cells.append(f"{max(diffs):.1e}" if diffs else "-")
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))))
    print("\nCases:")
    for row in report["results"]:
        print(f"  {row['case']:<38} {row['description']}")
    if notes:
        print("Peers that could not run a case:")
        for note in notes:
            print(f"  {note}")
    print("GB/s: (data + grid + output bytes) / irgrid's time; %copy: that over the copy bandwidth above. "
          f"roof ms: those bytes at the copy bandwidth of {report['header']['threads']} thread(s) measured just "
          "before and after the case (copy_GBps_around_case in the JSON); x roof: irgrid ms / roof ms. "
          "x lines: irgrid ms over the time of the bytes it must move at that bandwidth: the 64-byte lines of "
          "X its taps read, the grid and the output (touched_bytes, lines_floor_ms in the JSON). "
          "max|diff|: largest |peer - irgrid| over the peers.")
    print(f"*: other processes used, or the VM's host stole, more than {BUSY_PCT:g}% of the machine during that "
          "measurement, even after retries (see background_cpu_pct and steal_cpu_pct in the JSON).")
    deform = [r for r in report["results"] if "irgrid_GFLOPs" in r]
    if deform:
        sgemm = report.get("sgemm") or {}
        print(f"\nDeformConv: irgrid GFLOP/s and its fraction of the best SGEMM rate of this run "
              f"({sgemm.get('GFLOPs', float('nan')):.0f} GFLOP/s); peak extra memory (data channels-last, "
              "reordered filters, im2col tile, GEMM block):")
        for r in deform:
            frac = r.get("fraction_of_sgemm")
            print(f"  {r['case']:<32} {r['irgrid_GFLOPs']:7.1f} GFLOP/s  {(f'{100 * frac:.0f}%' if frac else '-'):>5} "
                  f"of SGEMM  extra memory {r['extra_memory_MiB']:.1f} MiB")
    tiny = next((r for r in report["results"] if r["case"] == "grid_sample/tiny"), None)
    if tiny:
        print("\nPer-call overhead (GridSample on X 1x1x4x4, grid 1x2x2x2):")
        labels = {"irgrid": "irgrid.compile_model(...)(inputs)", "irgrid_kernel": "irgrid kernel entry only "
                  "(SamplePlan: grid_sample.sample_plan)",
                  "openvino": "OpenVINO infer request (native GridSample-9)",
                  "openvino_ext": "OpenVINO infer request, irgrid1 op via irgrid's extension (the native library "
                                  "where it loads, else the Python ops: the version says which)",
                  "onnxruntime": "onnxruntime session.run", "torch": "torch grid_sample"}
        for peer, res in tiny["peers"].items():
            if res.get("ok"):
                print(f"  {labels[peer]:<64} {res['timing']['median_ms'] * 1e3:8.1f} us")
    if report["omp_wait_policy"]:
        print("\nirgrid's OpenMP wait (OMP_WAIT_POLICY and GOMP_SPINCOUNT in the subprocess environment before import;"
              " default: PASSIVE after 1000 spins):")
        threads = report["header"]["threads"]
        print(f"  {'case':<32} {'default ms':>11} {'PASSIVE ms':>11} {'ACTIVE ms':>11} {'default/ACTIVE':>15} "
              f"{'PASSIVE/ACTIVE':>15} {'1 thread ms':>12}")
        for prow in report["omp_wait_policy"]:
            cells = [_fmt_ms(prow[p]["timing"]["median_ms"]) + _busy_mark(prow[p]) if prow.get(p, {}).get("ok")
                     else "failed" if p in prow else "-" for p in (*POLICY_RUNS, "default_1_thread")]
            ratios = [prow.get(f"{p}_over_active") for p in ("default", "PASSIVE")]
            print(f"  {prow['case']:<32} {cells[0]:>11} {cells[1]:>11} {cells[2]:>11} "
                  + " ".join(f"{(f'{r:.2f}' if r else '-'):>15}" for r in ratios) + f" {cells[3]:>12}")
        print(f"  ({threads} threads; a ratio above 1 is what sleeping between calls costs)")
    if report["extension_paired"]:
        print("\nOpenVINO with irgrid's extension vs irgrid's runtime, paired batches in one process "
              "(ratio: extension / runtime):")
        print(f"  {'case':<34} {'irgrid ms':>10} {'OV+ext ms':>10} {'median ratio':>13} {'quartiles':>13} {'pairs':>6}")
        for prow in report["extension_paired"]:
            if not prow["ok"]:
                print(f"  {prow['case']:<34} failed: {prow['error']}")
                continue
            q1, q3 = prow["ratio_quartiles"]
            print(f"  {prow['case']:<34} {_fmt_ms(prow['irgrid_median_ms']):>10} "
                  f"{_fmt_ms(prow['openvino_ext_median_ms']):>10} {prow['ratio_median']:>13.2f} "
                  f"{f'{q1:.2f}-{q3:.2f}':>13} {prow['pairs']:>6}")
    print(f"\n(total {report['elapsed_s']:.0f} s)")


def _clean_error(exc: BaseException) -> str:
    """The sentence that says why, without OpenVINO's 'Exception from file:line' or ORT's prefixes."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    lines = [ln for ln in lines if not re.fullmatch(r"Exception from \S+:\d+:?", ln)] or [type(exc).__name__]
    message = lines[-1]
    for marker in ("was false.", "Status Message:"):
        if marker in message:
            message = message.split(marker, 1)[1].strip()
            break
    return f"{type(exc).__name__}: {message}"[:300]


# The environment's caps on the instruction sets every peer's process inherits: OpenVINO's plugin and
# irgrid (kernels/core/cpu.h) follow oneDNN's, torch's own kernels ATen's; e.g. ONEDNN_MAX_CPU_ISA=AVX2
# ATEN_CPU_CAPABILITY=avx2 times each library's AVX2 code on an AVX-512 host (benchmarks/README.md,
# "AVX2 on an AVX-512 host").
ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY", "IRGRID_SIMD")


def _microarchitecture(vendor: str, family: int, model: int, stepping: int) -> str:
    """The core design from CPUID's family and model (x86 server parts these hosts have had), or ''."""
    if vendor == "GenuineIntel" and family == 6:
        return {85: "Cascade Lake" if stepping >= 5 else "Skylake-SP", 106: "Ice Lake-SP", 143: "Sapphire Rapids",
                207: "Emerald Rapids", 173: "Granite Rapids"}.get(model, "")
    if vendor == "AuthenticAMD":
        if family == 0x17:  # Zen and Zen+ (one core design: 128-bit vector units, AVX2, no AVX-512) below model 0x30
            return "Zen / Zen+" if model < 0x30 else "Zen 2"
        if family == 0x19:
            return "Zen 3" if model < 0x10 or 0x20 <= model < 0x60 else "Zen 4"
        return {0x1A: "Zen 5"}.get(family, "")
    return ""


def _cpu_name() -> str:
    """The CPU's model name with its microarchitecture and CPUID family/model/stepping (paths are chosen,
    and numbers differ, by core design: benchmarks/README.md), e.g. 'Intel(R) Xeon(R) Processor @
    2.50GHz (Cascade Lake, family 6 model 85 stepping 7)'."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first CPU's block
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    name = fields.get("model name") or platform.processor() or platform.machine()
    try:
        family, model, stepping = (int(fields[k]) for k in ("cpu family", "model", "stepping"))
    except (KeyError, ValueError):
        return name
    design = _microarchitecture(fields.get("vendor_id", ""), family, model, stepping)
    caps = [f"{var}={os.environ[var]}" for var in ISA_CAPS if os.environ.get(var)]
    return (f"{name} ({design + ', ' if design else ''}family {family} model {model} stepping {stepping}"
            + (f"; instruction sets capped by {', '.join(caps)}" if caps else "") + ")")



if __name__ == "__main__":
    sys.exit(main())

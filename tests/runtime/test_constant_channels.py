"""A GridSample of constant data with identical channels samples one channel and broadcasts it
(irgrid/runtime/constant_channels.py).

Oracles: the plan without the rewrite (`fuse=False`), bit for bit, at 1 and 2 threads; OpenVINO's CPU plugin
on the same IR (1e-5: its GridSample-9 rounds its coordinates differently, docs/semantics.md); torch on
PWC-Net's warp from every export route (1e-5, as the other GridSample blocks)."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import openvino.opset9 as o9
import pytest

import irgrid
from oracles import compile_exported, named, rng, save_ov


def _one_channel_steps(compiled) -> list:
    return [step for step in compiled._steps if "identical channels" in step.layer.op.summary]


def _model(data: np.ndarray, returned: bool, mode: str = "bilinear") -> ov.Model:
    """GridSample-9 of the constant `data` at a grid input, times an image (or returned as it is)."""
    grid = ops.parameter([data.shape[0], 6, 7, 2], np.float32, name="grid")
    sampled = o9.grid_sample(ops.constant(data), grid, {"align_corners": False, "mode": mode,
                                                         "padding_mode": "zeros"})
    if returned:
        return ov.Model([ops.result(named(sampled, "y"))], [grid], "sampled")
    image = ops.parameter([data.shape[0], data.shape[1], 6, 7], np.float32, name="image")
    return ov.Model([ops.result(named(ops.multiply(sampled, image), "y"))], [grid, image], "masked")


def _channels(kind: str) -> np.ndarray:
    one = rng(1).uniform(-2, 2, (2, 1, 5, 9)).astype(np.float32)
    one.reshape(-1)[:2] = [np.nan, -0.0]  # (an infinite value: OpenVINO gives inf * 0 = NaN at a zero weight)
    data = np.ones((2, 3, 5, 9), np.float32) if kind == "ones" else np.repeat(one, 3, axis=1)
    if kind == "one differs":
        data[1, 2, 4, 8] = np.nextafter(data[1, 2, 4, 8], np.float32(9))
    return data


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("kind", ["ones", "random", "one differs"])
def test_identical_channels_sample_one(tmp_path, ov_run, kind, mode):
    data = _channels(kind)
    path = save_ov(_model(data, returned=False, mode=mode), tmp_path)
    grid = rng(2).uniform(-1.2, 1.2, (2, 6, 7, 2)).astype(np.float32)
    image = rng(3).uniform(0, 1, (2, 3, 6, 7)).astype(np.float32)
    unfused = irgrid.compile_model(path, fuse=False)
    want = unfused([grid, image])["y"]
    for threads in (1, 2):
        compiled = irgrid.compile_model(path, threads=threads)
        assert len(_one_channel_steps(compiled)) == (kind != "one differs")
        assert compiled([grid, image])["y"].tobytes() == want.tobytes()
    np.testing.assert_allclose(want, ov_run(str(path), [grid, image])[0], rtol=0, atol=1e-5)


def test_a_returned_sample_keeps_its_channels(tmp_path):
    """A model output gets arrays of its own each call: not rewritten (the one-channel buffer is reused)."""
    data = _channels("ones")
    path = save_ov(_model(data, returned=True), tmp_path)
    compiled = irgrid.compile_model(path)
    assert not _one_channel_steps(compiled)
    grid = rng(4).uniform(-1.2, 1.2, (2, 6, 7, 2)).astype(np.float32)
    first = compiled([grid])["y"]
    assert first.flags.writeable and first.tobytes() == irgrid.compile_model(path, fuse=False)([grid])["y"].tobytes()


@pytest.mark.parametrize("route", ["cm", "ts", "dyn"])
def test_pwc_nets_mask_samples_one_channel(route, glue_export):
    """PWC-Net's `grid_sample(torch.ones(x.size()), vgrid)` (benchmarks/glue_blocks.py), fused with its
    displacement field, samples one channel on every export route; the block is torch's within 1e-5."""
    torch = pytest.importorskip("torch")
    module, inputs, xml = glue_export("pwc", route)
    compiled = compile_exported(xml, inputs)
    (step,) = _one_channel_steps(compiled)
    assert step.layer.attrs.get("fitted") is not None  # still reading the displacement field
    (got,) = compiled([t.numpy() for t in inputs]).values()
    with torch.no_grad():
        np.testing.assert_allclose(got, module(*inputs).numpy(), rtol=0, atol=1e-5)

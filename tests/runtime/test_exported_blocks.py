"""The glue-heavy blocks of benchmarks/glue_blocks.py (issue 41), exported by each of the three routes
users take (ov.convert_model with irgrid's conversion extensions; torch.onnx.export with dynamo=False;
the dynamo exporter), run on irgrid's runtime and on the OpenVINO device (the CPU plugin with irgrid's
extension) and match torch eager, the oracle, at the blocks' small shapes.

Here: VecInt, the 3-D affine transformer, DCNv2 and Deformable-DETR's MSDeformAttn on every route, RAFT's lookup by dynamo=False. The
other blocks and routes are compared with torch where their rewrites are tested, on irgrid's runtime:
PWC-Net's warp and VoxelMorph's SpatialTransformer (test_displacement.py, every route), RAFT's lookup
(test_displacement.py, convert_model and dynamo). Each dynamo export takes 7-12 s, so they are not
repeated here.

Tolerance: 1e-4 absolute on outputs of magnitude up to 3. The arithmetic is f32 on every side, but the
order of the sums differs (FMA taps, fused warps, OpenVINO's own layers): seen at most 2.1e-5, on
VecInt's seven compounded squaring steps; the others within 6.2e-6 (every block and route, 2026-11-29).
"""
from __future__ import annotations

import numpy as np
import pytest

from oracles import compile_exported

CASES = [f"{name}/{route}" for name in ("vecint", "stn3d", "dcnv2", "msda") for route in ("cm", "ts", "dyn")] + ["raft/ts"]


@pytest.mark.parametrize("case", CASES)
def test_exported_block_matches_torch_on_both_devices(case, glue_export):
    torch = pytest.importorskip("torch")
    name, route = case.split("/")
    from irgrid.devices import open_model

    module, inputs, xml = glue_export(name, route)
    with torch.no_grad():
        expected = module(*inputs).numpy()
    feeds = [t.numpy() for t in inputs]
    (on_irgrid,) = compile_exported(xml, inputs)(feeds).values()
    on_openvino_device, _ = open_model(xml, "openvino")
    (on_openvino,) = on_openvino_device(feeds).values()
    for got in (on_irgrid, on_openvino):
        assert got.shape == expected.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4)

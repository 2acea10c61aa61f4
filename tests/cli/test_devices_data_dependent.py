"""`auto` by its rules (IRGRID_AUTO=rules, irgrid/devices.py) sends a model with layers of data-dependent
output shape (NonZero) to OpenVINO with irgrid's extension, which ran such index flows several times
faster than numpy (benchmarks/README.md); f64 models, which OpenVINO would compute in f32, stay on
irgrid's runtime. A NonZero that only serves a boolean-mask assignment (`x[x < 0.5] = 0` as torch's
dynamo exporter writes it) does not count: irgrid's runtime runs that as a masked fill
(irgrid/runtime/mask_assignment.py). Both runtimes give the same values (exactly: the blocks only
compare and move values), OpenVINO's CPU plugin being the oracle.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset3 as o3
import openvino.opset13 as ops

from irgrid.devices import open_model
from oracles import named, rng, save_ov


def _mask_assignment(tmp_path, dtype, name):
    """x[x < 0.5] = 0 as the ONNX frontend builds it: NonZero -> Transpose -> ScatterNDUpdate."""
    x = ops.parameter([2, 3, 4, 5], dtype, name="x")
    indices = ops.transpose(o3.non_zero(ops.less(x, ops.constant(np.array(0.5, dtype))), "i64"),
                            ops.constant(np.array([1, 0], np.int64)))
    zeros = ops.broadcast(ops.constant(np.array(0, dtype)), ops.gather(ops.shape_of(indices), ops.constant([0]),
                                                                       ops.constant(0)))
    y = ops.scatter_nd_update(x, indices, zeros)
    return save_ov(ov.Model([ops.result(named(y, "y"))], [x], name), tmp_path, name)


def _non_zero_indices(tmp_path, dtype, name):
    """The indices of x's elements under 0.5, returned: NonZero's data-dependent shape reaches the output."""
    x = ops.parameter([2, 3, 4, 5], dtype, name="x")
    indices = o3.non_zero(ops.less(x, ops.constant(np.array(0.5, dtype))), "i64")
    return save_ov(ov.Model([ops.result(named(indices, "y"))], [x], name), tmp_path, name)


def test_auto_sends_data_dependent_shapes_to_openvino_unless_f64(tmp_path):
    f32 = _non_zero_indices(tmp_path, np.float32, "f32")
    runner, why = open_model(f32)
    assert why == ("openvino (CPU plugin, irgrid extension): data-dependent shapes (NonZero), which OpenVINO "
                   "runs faster")
    ours, _ = open_model(f32, "irgrid")
    x = rng(0).random((2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(runner({"x": x})["y"], ours({"x": x})["y"])
    f64 = _non_zero_indices(tmp_path, np.float64, "f64")
    assert open_model(f64)[1] == ("irgrid (supports every layer; data-dependent shapes kept from OpenVINO: "
                                  "f64 values, which OpenVINO computes in f32)")


def test_auto_keeps_a_mask_assignment_on_irgrid(tmp_path):
    f32 = _mask_assignment(tmp_path, np.float32, "f32")
    ours, why = open_model(f32)
    assert why == "irgrid (supports every layer)"
    runner, _ = open_model(f32, "openvino")
    x = rng(0).random((2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(ours({"x": x})["y"], runner({"x": x})["y"])

"""GridSample's tap limit: 4096 taps per point (cubic in 6-D) runs and matches onnx.reference; one
dim more is refused with a ShapeError naming the layer."""
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import irgrid
from irgrid.builder import IRBuilder


def _ir(tmp_path, x_shape, g_shape, dtype="f64"):
    b = IRBuilder()
    x = b.parameter("X", x_shape, dtype)
    g = b.parameter("grid", g_shape, dtype)
    (y,) = b.layer("GridSample", "irgrid1", [x, g], {"mode": "cubic", "padding_mode": "border"},
                   outputs=[((x_shape[0], x_shape[1], *g_shape[1:-1]), dtype)])
    b.result(y)
    return b.save(tmp_path / "m.xml")


def test_cubic_6d_matches_onnx_reference(tmp_path):
    rng = np.random.default_rng(0)
    x_shape, g_shape = (1, 2, 2, 3, 2, 3, 2, 2), (1, 2, 1, 1, 1, 1, 1, 6)
    x = rng.standard_normal(x_shape)
    # Multiples of 1/16: denormalised coordinates and cubic weights are exact even in the f32 that
    # onnx.reference computes them in. Zeros padding (its cubic + border handling differs, docs/semantics.md).
    grid = rng.integers(-20, 21, g_shape) / 16.0
    b = IRBuilder()
    xp, gp = b.parameter("X", x_shape, "f64"), b.parameter("grid", g_shape, "f64")
    (y,) = b.layer("GridSample", "irgrid1", [xp, gp], {"mode": "cubic", "align_corners": 1})
    b.result(y)
    ours = irgrid.compile_model(b.save(tmp_path / "m.xml"))({"X": x, "grid": grid})
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode="cubic", align_corners=1)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, x_shape),
                                            helper.make_tensor_value_info("grid", TensorProto.DOUBLE, g_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    (want,) = ReferenceEvaluator(model).run(None, {"X": x, "grid": grid})
    np.testing.assert_allclose(next(iter(ours.values())), want, rtol=1e-9, atol=1e-12)


def test_cubic_7d_is_refused(tmp_path):
    path = _ir(tmp_path, (1, 1) + (2,) * 7, (1, 1, 1, 1, 1, 1, 1, 1, 7))
    problems = irgrid.check_model(path)
    assert len(problems) == 1 and "16384 taps" in problems[0].message and problems[0].layer.type == "GridSample"
    with pytest.raises(irgrid.ShapeError, match=r'GridSample layer .* 16384 taps per point'):
        irgrid.compile_model(path)

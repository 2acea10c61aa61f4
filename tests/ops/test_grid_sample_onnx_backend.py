"""GridSample against the ONNX backend node test vectors (all 18 cases, 4 of them volumetric).

Each case's node (GridSample-22) becomes one irgrid1 GridSample layer in an IR written with
IRBuilder, is run by `irgrid.compile_model` and compared with the case's expected output, which the
onnx package ships (`onnx/backend/test/case/node/gridsample.py`), not irgrid.

Three spellings of the same layer are run for every case, all against the same expected output:
- "onnx22": the node's attributes as they are (absent ones omitted, so irgrid1's defaults must be
  ONNX-22's: mode linear, padding zeros, align_corners 0);
- "explicit": every attribute written, align_corners as true/false;
- "opset16_names": mode written with the GridSample-16 / com.microsoft names (bilinear, bicubic),
  which irgrid1 accepts as aliases.

Tolerances: `test_gridsample_bicubic`'s expected values are printed to 4 decimals (e.g. -0.1406 for
-0.140625), so that case gets rtol 1e-4 plus half a unit of the 4th decimal (atol 5e-5). The other
cases are exact or printed with f32 precision: rtol 1e-5, atol 1e-6 (stricter than the cases' own
rtol 1e-3).
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest

import irgrid
from irgrid.builder import IRBuilder
from oracles import gridsample_backend_tolerance, onnx_backend_cases

N_CASES = 18
N_VOLUMETRIC = 4
OPSET16_NAMES = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}
ONNX22_NAMES = {"bilinear": "linear", "bicubic": "cubic"}  # map opset-16 names, should a case use them
SPELLINGS = ("onnx22", "explicit", "opset16_names")


CASES = onnx_backend_cases("GridSample")


def _attrs(case) -> dict:
    (node,) = case.model.graph.node
    attrs = {}
    for attribute in node.attribute:
        value = onnx.helper.get_attribute_value(attribute)
        attrs[attribute.name] = value.decode() if isinstance(value, bytes) else value
    return attrs


def _layer_attrs(attrs: dict, spelling: str) -> dict:
    mode = ONNX22_NAMES.get(attrs.get("mode", "linear"), attrs.get("mode", "linear"))
    if spelling == "onnx22":
        out = dict(attrs)
        if "mode" in out:
            out["mode"] = mode
        return out
    if spelling == "explicit":
        return {"mode": mode, "padding_mode": attrs.get("padding_mode", "zeros"),
                "align_corners": bool(attrs.get("align_corners", 0))}
    return {"mode": OPSET16_NAMES[mode], "padding_mode": attrs.get("padding_mode", "zeros"),
            "align_corners": int(attrs.get("align_corners", 0))}


def test_all_gridsample_cases_collected():
    names = [c.name for c in CASES]
    assert len(CASES) == N_CASES, names
    assert len(set(names)) == N_CASES
    volumetric = [c for c in CASES if c.data_sets[0][0][0].ndim == 5]
    assert len(volumetric) == N_VOLUMETRIC, names
    modes = {ONNX22_NAMES.get(_attrs(c).get("mode", "linear"), _attrs(c).get("mode", "linear")) for c in CASES}
    assert modes == {"linear", "nearest", "cubic"}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_case(case, spelling, tmp_path):
    (node,) = case.model.graph.node
    assert node.op_type == "GridSample"
    assert len(case.data_sets) >= 1
    attrs = _attrs(case)
    for inputs, expected_outputs in case.data_sets:
        x, grid = (np.asarray(a) for a in inputs)
        (expected,) = (np.asarray(a) for a in expected_outputs)
        b = IRBuilder(case.name)
        xv = b.parameter("X", x.shape, "f32")
        gv = b.parameter("grid", grid.shape, "f32")
        (y,) = b.layer("GridSample", "irgrid1", [xv, gv], _layer_attrs(attrs, spelling), name="Y")
        b.result(y)
        path = b.save(tmp_path / "m.xml")

        assert irgrid.check_model(path) == []
        compiled = irgrid.compile_model(path)
        out = compiled({"X": x, "grid": grid})["Y"]
        assert out.shape == expected.shape
        assert out.dtype == np.float32
        np.testing.assert_allclose(out, expected, **gridsample_backend_tolerance(case), err_msg=f"{case.name} ({spelling})")

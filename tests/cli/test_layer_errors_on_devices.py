"""A layer neither runtime runs is named on every device (issue 43, "Errors that name the layer on every
device"): an IR with a misspelt type, a type missing from the opset its version names, an unknown version
or none goes to OpenVINO under `auto`, whose reader names neither the layer's name nor its id ("Opset opset9
doesn't contain the operation with type: GridSampler"). The CLI's one line names the layer (type, version,
name, id), says why irgrid cannot run it, as `irgrid check` does, and then what OpenVINO said."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from lxml import etree

import irgrid
from irgrid.cli import main
from oracles import save_ov

# (type, version) given to the layer "add2" (id 4) of a valid Add model; None: no version attribute.
CASES = {
    "misspelt type": ("Ad", "opset1"),
    "misspelt type (issue)": ("GridSampler", "opset9"),
    "irgrid's opset, without this type": ("Add", "irgrid1"),
    "type missing from its opset": ("GridSample", "opset1"),
    "unknown opset": ("Add", "opset99"),
    "no version": ("Add", None),
    "empty version": ("Add", ""),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    data = ops.parameter([1, 3, 4, 4], np.float32, name="data")
    add = ops.add(data, ops.constant(np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1), name="w"), name="add")
    add2 = ops.add(add, ops.constant(np.float32(0.5), name="b"), name="add2")
    return save_ov(ov.Model([ops.result(add2, name="res")], [data], "base"), tmp_path_factory.mktemp("base"))


def _edited(base, tmp_path, type_, version):
    root = etree.fromstring(base.read_bytes())
    layer = root.find(".//layers/layer[@name='add2']")
    assert layer.get("id") == "4"
    layer.set("type", type_)
    if version is None:
        del layer.attrib["version"]
    else:
        layer.set("version", version)
    path = tmp_path / "edited.xml"
    path.write_bytes(etree.tostring(root))
    path.with_suffix(".bin").write_bytes(base.with_suffix(".bin").read_bytes())
    return path


def _cli(*argv) -> tuple[int, list[str]]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, err.getvalue().strip().splitlines()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("device", ["auto", "openvino", "irgrid"])
def test_unknown_layer_named_on_every_device(base, tmp_path, case, device):
    type_, version = CASES[case]
    path = _edited(base, tmp_path, type_, version)
    (problem,) = irgrid.check_model(path)  # what `irgrid check` says of it
    assert (problem.layer.name, problem.layer.id, problem.kind) == ("add2", "4", "unsupportedlayer")
    code, lines = _cli("infer", path, "-d", device, "-niter", 1)
    assert code == 2 and len(lines) == 1, lines
    (line,) = lines
    assert f'{type_} layer "add2" (id 4): ' in line and problem.message in line, line
    if device == "irgrid":
        assert line.startswith("irgrid: UnsupportedLayerError: "), line
    else:  # the layer's type and version, irgrid's reason, then OpenVINO's
        assert line.startswith("irgrid: OpenVINOError: "), line
        assert f"neither irgrid nor OpenVINO runs {type_}-{version or '(no version)'}: " in line, line
        assert "; OpenVINO says: " in line, line
        assert line.index(problem.message) < line.index("; OpenVINO says: ")


def test_of_several_layers_the_one_openvino_names(base, tmp_path):
    """When the IR has several layers neither runtime runs, the line names the one OpenVINO's message
    names (by its type)."""
    root = etree.fromstring(base.read_bytes())
    root.find(".//layers/layer[@name='add']").set("version", "opset99")
    root.find(".//layers/layer[@name='add2']").set("type", "GridSampler")
    root.find(".//layers/layer[@name='add2']").set("version", "opset9")
    path = tmp_path / "two.xml"
    path.write_bytes(etree.tostring(root))
    path.with_suffix(".bin").write_bytes(base.with_suffix(".bin").read_bytes())
    assert len(irgrid.check_model(path)) >= 2
    code, (line,) = _cli("infer", path, "-niter", 1)
    assert code == 2
    named = "GridSampler" if "GridSampler" in line.split("OpenVINO says: ")[1] else "Add"
    assert line.startswith(f"irgrid: OpenVINOError: {named} layer "), line


def test_a_model_openvino_runs_still_runs_there(tmp_path):
    """A layer irgrid lacks and OpenVINO has (Erf) still runs on OpenVINO under auto."""
    data = ops.parameter([2, 3], np.float32, name="x")
    path = save_ov(ov.Model([ops.result(ops.erf(data))], [data], "erf"), tmp_path)
    code, lines = _cli("infer", path, "-niter", 1)
    assert code == 0, lines

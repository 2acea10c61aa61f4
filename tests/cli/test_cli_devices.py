"""`irgrid infer -d auto|irgrid|openvino` and `irgrid convert`: the same output block on either runtime,
the choice and its reason printed, and one-line errors."""
from __future__ import annotations

import re

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

import irgrid
import irgrid.openvino as iov

from oracles import (SAMPLES, assert_one_line_error, gridsample_onnx, mixed_model, mixed_reference, run_cli,
                     save_ov)


def _outputs(proc) -> dict[str, list[str]]:
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("output "))
    rows = {}
    for line in lines[start + 1:]:
        if line.startswith("Threads:"):
            return rows
        rows[line.split()[0]] = line.split()[1:]
    return rows


@pytest.mark.parametrize("device", ["irgrid", "openvino", "auto"])
def test_sample_on_each_device(device, tmp_path):
    path = SAMPLES / "volume_warp" / "model.xml"
    proc = run_cli("infer", path, "-d", device, "-niter", 2, "-o", tmp_path / "out.npz", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first.startswith("Device: " + ("irgrid" if device != "openvino" else "openvino"))
    with np.load(tmp_path / "out.npz") as saved:
        ours = dict(saved)
    import irgrid

    expected = irgrid.compile_model(path)(dict(np.load(path.with_name("inputs.npz"))))
    for name, value in expected.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-5, atol=1e-6)


def _lacking(path) -> list[str]:
    """The model's layer types (type-version) that irgrid's registry lacks, as `auto` must name them."""
    from irgrid.ir.reader import read_ir
    from irgrid.registry import all_specs

    known = {(spec.type, version) for spec in all_specs() for version in spec.versions}
    return sorted({f"{layer.type}-{layer.version}" for layer in read_ir(path).layers.values()
                   if (layer.type, layer.version) not in known})


def _conv_warp(tmp_path, dtype, name):
    """A Convolution predicting a 2-D flow-like grid that an irgrid1 GridSample samples the image at."""
    image = ops.parameter([1, 2, 9, 11], dtype, name="image")
    weights = ov.op.Constant(np.random.default_rng(3).uniform(-0.3, 0.3, (2, 2, 3, 3)).astype(dtype))
    grid = ops.transpose(ops.convolution(image, weights, [1, 1], [1, 1], [1, 1], [1, 1]),
                         ops.constant(np.array([0, 2, 3, 1], np.int64)))
    warped = iov.op_class("GridSample", "irgrid1")([image.output(0), grid.output(0)], mode="linear",
                                                   padding_mode="zeros", align_corners=False)
    warped.output(0).get_tensor().set_names({"warped"})
    return save_ov(ov.Model([ops.result(warped.output(0))], [image], name), tmp_path, name)


def test_auto_sends_convolutional_networks_to_openvino_unless_f64_or_a_fork_child(tmp_path, monkeypatch):
    """irgrid/devices.py: a model with Convolution runs on OpenVINO with the extension under `auto`, and
    the same in f64 (which OpenVINO computes in f32), or in a process forked after OpenVINO ran, on
    irgrid's runtime; both runtimes agree with each other."""
    from irgrid.devices import open_model
    from irgrid.forks import marks

    image = np.random.default_rng(4).standard_normal((1, 2, 9, 11))
    f32, f64 = _conv_warp(tmp_path, np.float32, "f32"), _conv_warp(tmp_path, np.float64, "f64")
    runner, why = open_model(f32)
    assert why == ("openvino (CPU plugin, irgrid extension): a convolutional network (Convolution), "
                   "which OpenVINO runs faster")
    ours, _ = open_model(f32, "irgrid")
    np.testing.assert_allclose(runner({"image": image.astype(np.float32)})["warped"],
                               ours({"image": image.astype(np.float32)})["warped"], rtol=1e-5, atol=1e-5)
    assert open_model(f64)[1] == ("irgrid (supports every layer; a convolutional network kept from OpenVINO: "
                                  "f64 values, which OpenVINO computes in f32)")
    # f32 inputs computed in f64 inside, the IR's declared precisions stripped: irgrid's inferred types count
    image = ops.parameter([1, 2, 9, 11], np.float32, name="image")
    conv = ops.convolution(ops.convert(image, "f64"), ov.op.Constant(np.ones((2, 2, 1, 1))), [1, 1], [0, 0], [0, 0],
                           [1, 1])
    inside = save_ov(ov.Model([ops.result(ops.convert(conv, "f32"))], [image], "inside"), tmp_path, "inside")
    inside.write_text(re.sub(r' precision="[^"]*"', "", inside.read_text()))
    assert open_model(inside)[1].endswith("kept from OpenVINO: f64 values, which OpenVINO computes in f32)")
    monkeypatch.setattr(marks, "child_of_openvino", True)
    assert open_model(f32)[1] == ("irgrid (supports every layer; a convolutional network kept from OpenVINO: "
                                  "a process forked after OpenVINO ran)")


def test_auto_chooses_openvino_for_layers_irgrid_lacks(tmp_path):
    model, feeds, _ = mixed_model()
    path = save_ov(model, tmp_path)
    np.savez(tmp_path / "inputs.npz", **feeds)
    proc = run_cli("infer", path, "-o", tmp_path / "out.npz", "-niter", 1, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    device = proc.stdout.splitlines()[0]
    assert device == f"Device: openvino (CPU plugin, irgrid extension): irgrid lacks {', '.join(_lacking(path))}"
    assert "MVN-opset6" in device  # OpenVINO runs the layers irgrid lacks
    assert set(_outputs(proc)) == {"normalised"}
    with np.load(tmp_path / "out.npz") as saved:
        np.testing.assert_allclose(saved["normalised"], mixed_reference(feeds), rtol=1e-5, atol=1e-5)
    err = assert_one_line_error(run_cli("infer", path, "-d", "irgrid", cwd=tmp_path), 2, "UnsupportedLayerError")
    assert _lacking(path)[0].split("-")[0] in err


def test_onnx_model_runs_through_openvino(tmp_path):
    feeds = gridsample_onnx(tmp_path / "gs3.onnx", 3, "cubic", padding_mode="reflection")
    np.savez(tmp_path / "inputs.npz", **feeds)
    proc = run_cli("infer", tmp_path / "gs3.onnx", "-niter", 1, "-o", tmp_path / "y.npy", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not an IR" in proc.stdout.splitlines()[0]
    from irgrid.ops.grid_sample import sample

    expected = sample(feeds["X"].astype(np.float64), feeds["grid"].astype(np.float64), "cubic", "reflection",
                      False, 1)
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-5)
    assert_one_line_error(run_cli("infer", tmp_path / "gs3.onnx", "-d", "irgrid", cwd=tmp_path), 2, "irgrid convert")


def test_convert_then_irgrid_runtime(tmp_path):
    feeds = gridsample_onnx(tmp_path / "gs1.onnx", 1, "linear", align_corners=1)
    proc = run_cli("convert", tmp_path / "gs1.onnx", "-o", tmp_path / "gs1.xml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert 'version="irgrid1"' in (tmp_path / "gs1.xml").read_text()
    np.savez(tmp_path / "inputs.npz", **feeds)
    proc = run_cli("infer", tmp_path / "gs1.xml", "-niter", 1, "-o", tmp_path / "y.npy", cwd=tmp_path)
    assert proc.stdout.splitlines()[0] == "Device: irgrid (supports every layer)", proc.stderr
    from onnx.reference import ReferenceEvaluator  # onnxruntime runs only 4-D and 5-D GridSample

    expected = ReferenceEvaluator(str(tmp_path / "gs1.onnx")).run(None, feeds)[0]
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-6)
    assert_one_line_error(run_cli("convert", tmp_path / "absent.onnx", "-o", tmp_path / "x.xml", cwd=tmp_path),
                          2, "OpenVINOError", "cannot convert")
    assert_one_line_error(run_cli("convert", tmp_path / "gs1.onnx", "-o", tmp_path / "x.bin", cwd=tmp_path),
                          2, "must end in .xml")


def test_an_irgrid_version_this_irgrid_lacks(tmp_path):
    """OpenVINO's refusal becomes one line that says how to fix it."""
    model, feeds, _ = mixed_model()
    path = save_ov(model, tmp_path)
    path.write_text(path.read_text().replace('version="irgrid1"', 'version="irgrid7"'))
    np.savez(tmp_path / "inputs.npz", **feeds)
    assert_one_line_error(run_cli("infer", path, cwd=tmp_path), 2, "OpenVINOError", "unsupported opset: irgrid7",
                          "irgrid.openvino.extensions()")


def _counters(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("Performance counts (median of ")))
    rows = {}
    for line in lines[start + 2:]:
        fields = line.split()
        if fields[0] == "total":
            return rows
        rows[fields[0]] = fields[1:]
    raise AssertionError("no total row")


def _adds_up(shares: list[float]) -> bool:
    """Whether -pc's shares, each printed to 0.1%, add up to 100% within their rounding (0.05% each: a
    dynamic model's 25 rows once summed to 100.5)."""
    return abs(sum(shares) - 100) <= 0.05 * len(shares) + 1e-9


@pytest.mark.parametrize("device", ["irgrid", "openvino"])
def test_per_layer_counters(device, tmp_path):
    """-pc: each layer that ran, its type, kernel, median ms and share, as benchmark_app prints them. On
    OpenVINO the sample's GridSample-9 (3 channels, bilinear) is the plugin's, or, where this CPU's
    thresholds put irgrid's op in its place, a Reference node (irgrid/openvino/runner.py)."""
    from irgrid.openvino.gridsample9 import sampling_from_channels

    path = SAMPLES / "flow_warp" / "model.xml"
    proc = run_cli("infer", path, "-d", device, "-niter", 3, "-pc", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Performance counts (median of 3 runs):" in proc.stdout
    rows = _counters(proc.stdout)
    replaced = device == "openvino" and sampling_from_channels("bilinear", "border") <= 3
    assert rows["warped"][0] == ("Reference" if replaced else "GridSample")
    shares = [float(row[-1].rstrip("%")) for row in rows.values()]
    assert _adds_up(shares) and all(float(row[-2]) >= 0 for row in rows.values())
    if device == "irgrid":  # the steps of irgrid's plan, with the kernel each runs: the warp by the flow, fused
        assert list(rows) == ["warped"] and rows["warped"][1] == "sampling.SamplePlan"


def test_per_layer_counters_of_a_dynamic_model_on_openvino(tmp_path):
    """OpenVINO's list of executed layers changes from run to run of a dynamic-shape model (here 25, then
    23, 21, 17, 16): -pc matches layers by name (it indexed by position and died with an IndexError)."""
    torch = pytest.importorskip("torch")

    class FlowWarp(torch.nn.Module):
        def forward(self, x, flow):
            h, w = x.shape[2:]
            ys, xs = torch.meshgrid(torch.arange(h, dtype=x.dtype), torch.arange(w, dtype=x.dtype), indexing="ij")
            coords = torch.stack((xs, ys), 0).unsqueeze(0) + flow
            grid = torch.stack((2 * coords[:, 0] / (w - 1) - 1, 2 * coords[:, 1] / (h - 1) - 1), dim=3)
            return torch.nn.functional.grid_sample(x, grid, align_corners=True)

    x, flow = torch.randn(1, 3, 12, 16), torch.randn(1, 2, 12, 16)
    model = ov.convert_model(FlowWarp(), example_input=(x, flow), input=[(-1, 3, -1, -1), (-1, 2, -1, -1)])
    path = save_ov(model, tmp_path)
    np.savez(tmp_path / "inputs.npz", x=x.numpy(), flow=flow.numpy())
    proc = run_cli("infer", path, "-d", "openvino", "-niter", 8, "-pc", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shares = [float(row[-1].rstrip("%")) for row in _counters(proc.stdout).values()]
    assert "GridSample" in proc.stdout and _adds_up(shares)


@pytest.mark.parametrize("dtype", [">f4", "c8", "f8"])
def test_openvino_device_checks_input_arrays(tmp_path, dtype):
    """OpenVINO's device refuses what irgrid's refuses, by the same check: a big-endian f32 was read as
    garbage (exit 0) and a complex array was OpenVINO's traceback."""
    path = SAMPLES / "flow_warp" / "model.xml"
    with np.load(path.with_name("inputs.npz")) as saved:
        inputs = dict(saved)
    inputs["image"] = inputs["image"].astype(dtype)
    np.savez(tmp_path / "bad.npz", **inputs)
    for device in ("openvino", "irgrid"):
        proc = run_cli("infer", path, "-d", device, "-niter", 1, "-i", tmp_path / "bad.npz", cwd=tmp_path)
        assert_one_line_error(proc, 2, "InputError", "'image' must be f32")


@pytest.mark.parametrize("command", ["infer", "convert"])
def test_corrupt_onnx_is_one_line(tmp_path, command):
    """Refused before OpenVINO tries its other frontends (the TensorFlow one logged lines of its own)."""
    (tmp_path / "bad.onnx").write_text("<net")
    extra = ["-o", tmp_path / "out.xml"] if command == "convert" else []
    proc = run_cli(command, tmp_path / "bad.onnx", *extra, cwd=tmp_path)
    assert_one_line_error(proc, 2, "OpenVINOError", "not an ONNX model")


def test_check_of_an_onnx_file_says_to_convert_it(tmp_path):
    """`check` (and -d irgrid) read IR: an ONNX file is named as one, not as XML that is not well-formed."""
    path = tmp_path / "model.onnx"
    gridsample_onnx(path, 2, "linear")
    assert_one_line_error(run_cli("check", path, cwd=tmp_path), 2, "ParseError", "is an ONNX model",
                          "irgrid convert")


def test_input_file_given_as_the_model_is_one_line(tmp_path):
    """A common slip (`irgrid infer inputs.npz`): refused by irgrid, not left to OpenVINO's frontends."""
    path = SAMPLES / "flow_warp" / "inputs.npz"
    assert_one_line_error(run_cli("infer", path, cwd=tmp_path), 2, "InputError", "not a model")


@pytest.mark.parametrize("command", ["infer", "convert"])
def test_a_conversion_rule_refusal_is_its_reason(tmp_path, command):
    """OpenVINO wraps a rule's error in a traceback and a summary; the one line is irgrid's reason."""
    gridsample_onnx(tmp_path / "gs.onnx", 3, "sharp")
    extra = ["-o", tmp_path / "out.xml"] if command == "convert" else []
    proc = run_cli(command, tmp_path / "gs.onnx", *extra, cwd=tmp_path)
    assert_one_line_error(proc, 2, "OpenVINOError", "ValueError: GridSample: unknown mode 'sharp'")


def test_an_irgrid_op_refusal_at_run_time_names_the_layer(tmp_path):
    """A Python op's error inside the CPU plugin: the plugin's node line and the error, not the traceback."""
    x = ops.parameter([1, 2, -1, -1, -1], np.float32, name="x")
    g = ops.parameter([1, -1, -1, -1, -1], np.float32, name="g")
    node = iov.op_class("GridSample", "irgrid1")([x.output(0), g.output(0)])
    node.set_friendly_name("warp")
    path = save_ov(ov.Model([ops.result(node)], [x, g]), tmp_path)
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 2, 3, 4, 5), np.float32), g=np.zeros((1, 2, 2, 2, 2), np.float32))
    proc = run_cli("infer", path, "-d", "openvino", "-i", tmp_path / "in.npz", "-niter", 1, cwd=tmp_path)
    assert_one_line_error(proc, 2, "OpenVINOError", "Node warp of type Reference: ShapeError", "grid")


def test_openvino_device_refuses_i64_values_it_would_wrap(tmp_path):
    """OpenVINO's CPU plugin computes an i64 Add in i32 (5000000001 + 1 gave 705032706, exit 0); irgrid's
    runtime computes it in 64 bits, as numpy does."""
    x = ops.parameter([2], np.int64, name="x")
    path = save_ov(ov.Model([ops.result(ops.add(x, ops.constant(np.array([1], np.int64))))], [x]), tmp_path)
    np.save(tmp_path / "big.npy", np.array([5000000001, 3], np.int64))
    proc = run_cli("infer", path, "-d", "openvino", "-i", tmp_path / "big.npy", "-niter", 1, cwd=tmp_path)
    assert_one_line_error(proc, 2, "InputError", "'x' has i64 values outside the int32 range")
    proc = run_cli("infer", path, "-d", "irgrid", "-i", tmp_path / "big.npy", "-niter", 1, "-o", tmp_path / "y.npy",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.load(tmp_path / "big.npy") + 1)  # as numpy adds


def test_shapes_and_declared_bounds_alike_on_both_devices(tmp_path):
    """A -shape outside the IR's bounds (1..10) is refused by both devices (OpenVINO's reshape took it);
    one that changes a static dim reshapes the model on both; a dim OpenVINO would read as dynamic is
    refused by both."""
    import openvino.opset9 as o9

    d = ops.parameter(ov.PartialShape([ov.Dimension(1, 10), 2, ov.Dimension(1, 8), 5]), np.float32, name="d")
    g = ops.parameter(ov.PartialShape([ov.Dimension(1, 10), 3, 4, 2]), np.float32, name="g")
    path = save_ov(ov.Model([ops.result(o9.grid_sample(d, g, {}))], [d, g]), tmp_path)
    outputs = []
    for device in ("irgrid", "openvino"):
        proc = run_cli("infer", path, "-d", device, "-shape", "d[20,2,4,5],g[20,3,4,2]", cwd=tmp_path)
        assert_one_line_error(proc, 2, "ShapeError", "[1..10,2,1..8,5] (dim 0)")
        out = tmp_path / f"{device}.npz"
        proc = run_cli("infer", path, "-d", device, "-shape", "d[3,2,4,7],g[3,3,4,2]", "-niter", 1, "-o", out,
                       cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        with np.load(out) as saved:
            outputs.append(next(iter(saved.values())))
        proc = run_cli("infer", path, "-d", device, "-shape", f"d[{2**63 - 1},2,4,5],g[1,3,4,2]", cwd=tmp_path)
        assert_one_line_error(proc, 2, "InputError", "has a dim of 2**63 - 1 or more")
    assert outputs[0].shape == (3, 2, 3, 4)
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-6, atol=1e-6)


def test_an_irgrid_op_refusal_when_openvino_reads_names_the_ir_layer(tmp_path):
    """OpenVINO's reader validates an op before naming it; the one line names the IR's layer and id."""
    x, g = ops.parameter([1, 1, 4, 4], np.float32, name="x"), ops.parameter([1, 2, 2, 2], np.float32, name="g")
    node = iov.op_class("GridSample", "irgrid1")([x.output(0), g.output(0)])
    node.set_friendly_name("warp")
    path = save_ov(ov.Model([ops.result(node)], [x, g]), tmp_path)
    path.write_text(path.read_text().replace('mode="linear"', 'mode="sharp"'))
    proc = run_cli("infer", path, "-d", "openvino", "-niter", 1, cwd=tmp_path)
    assert_one_line_error(proc, 2, 'LayerAttributeError: GridSample layer "warp" (id ', "mode='sharp' must be one of")


def test_unnamed_tensors_on_both_devices(tmp_path):
    """`ov.convert_model` of a PyTorch module leaves its Results' tensors unnamed: both devices then name
    an output by its Result and answer to a Parameter's layer name (the OpenVINO device died on
    `get_any_name` before). OpenVINO's own GridSample-9 gives the values."""
    from lxml import etree

    x = ops.parameter([1, 2, 5, 6], np.float32, name="x")
    g = ops.parameter([1, 3, 4, 2], np.float32, name="grid")
    gs = ops.grid_sample(x, g, {"align_corners": False, "mode": "bilinear", "padding_mode": "border"})
    path = save_ov(ov.Model([gs], [x, g]), tmp_path)
    tree = etree.parse(str(path))
    for port in tree.iter("port"):
        port.attrib.pop("names", None)
    tree.write(str(path))
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((1, 2, 5, 6), np.float32),
             "grid": rng.uniform(-1.1, 1.1, (1, 3, 4, 2)).astype(np.float32)}
    np.savez(tmp_path / "inputs.npz", **feeds)
    result_name = tree.find(".//layer[@type='Result']").get("name")
    got = {}
    for device in ("irgrid", "openvino"):
        proc = run_cli("infer", path, "-d", device, "-niter", 1, "-o", tmp_path / f"{device}.npz", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        with np.load(tmp_path / f"{device}.npz") as saved:
            got[device] = dict(saved)
    assert list(got["irgrid"]) == list(got["openvino"]) == [result_name]
    expected = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(
        [feeds["x"], feeds["grid"]])[0]
    for outputs in got.values():
        np.testing.assert_allclose(outputs[result_name], expected, rtol=1e-6, atol=1e-6)


def test_ctrl_c_inside_an_irgrid_op_on_openvino_is_a_keyboard_interrupt(tmp_path, monkeypatch):
    """OpenVINO wraps a KeyboardInterrupt raised in a Python op's evaluate (the fallback extension) in a
    RuntimeError; the device gives it back as KeyboardInterrupt (it was an OpenVINOError, which `except IRGridError` swallowed and
    the CLI reported instead of exiting 130). Ctrl-C is simulated where it lands: in the op's run."""
    import irgrid.openvino.ops as ov_ops
    import irgrid.openvino.runner as runner
    from irgrid.devices import open_model
    from irgrid.openvino.native import NativeLibraryError

    def no_library():  # the Python ops, the fallback where the native library cannot be used
        raise NativeLibraryError("not used in this test")

    monkeypatch.setattr(runner, "library_path", no_library)
    path = SAMPLES / "volume_warp" / "model.xml"
    model, why = open_model(path, "openvino")
    assert model.extension.startswith("irgrid's Python ops")
    assert "GridSample" in path.read_text() and why.startswith("openvino")
    inputs = dict(np.load(path.with_name("inputs.npz")))
    model(inputs)

    def interrupted(spec, node, fn, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(ov_ops, "_call", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model(inputs)


@pytest.mark.parametrize("device", ["irgrid", "openvino"])
def test_inputs_as_a_sequence_or_else_an_input_error_on_both_devices(device):
    """A list or tuple in input order runs on either device (the OpenVINO device raised dict()'s
    ValueError); a bare array, None, or a masked array with masked elements (numpy would pass the
    values under the mask) is an InputError. OpenVINO's own run of the sample gives the values."""
    from irgrid.devices import open_model

    path = SAMPLES / "flow_warp" / "model.xml"
    feeds = dict(np.load(path.with_name("inputs.npz")))
    model, _ = open_model(path, device)
    expected = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(feeds)[0]
    for given in (list(feeds.values()), tuple(feeds.values())):
        (got,) = model(given).values()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    name = next(iter(feeds))
    masked = np.ma.masked_greater(feeds[name], 0.5)
    for bad, reason in ((feeds[name], "got ndarray"), (None, "got NoneType"), ([feeds[name]], "expected 2 inputs"),
                        ({**feeds, name: masked}, "masked array with masked elements")):
        with pytest.raises(irgrid.InputError, match=reason):
            model(bad)
    (unmasked,) = model({**feeds, name: np.ma.masked_array(feeds[name])}).values()  # nothing masked: runs
    np.testing.assert_allclose(unmasked, expected, rtol=1e-5, atol=1e-5)

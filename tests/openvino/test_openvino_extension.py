"""irgrid's operators inside OpenVINO: the generated op extension and the ONNX / PyTorch conversion rules.

Oracles: the ONNX backend GridSample vectors (shipped with onnx), onnx.reference, OpenVINO's own
native layers, and torch when installed. Tolerances as in test_grid_sample_onnx_backend.py (the
bicubic case's expected values are printed to 4 decimals); OpenVINO paths run at the f32 hint.
"""
from __future__ import annotations

import re
import threading

import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
import pytest

import irgrid
import irgrid.openvino as iov
from irgrid.ops.grid_sample import sample
from oracles import (F32, gridsample_backend_tolerance, gridsample_onnx, mixed_model, mixed_reference, onnx_backend_cases,
                     save_ov)

CASES = onnx_backend_cases("GridSample")


def _onnx_case_file(case, tmp_path):
    path = tmp_path / f"{case.name}.onnx"
    onnx.save(case.model, str(path))
    return path


def _ov_core() -> ov.Core:
    core = ov.Core()
    core.add_extension(iov.extensions())
    return core


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_onnx_backend_cases_three_ways(case, tmp_path):
    """ONNX -> OpenVINO with irgrid's rules; -> IR -> irgrid's runtime; -> IR -> a fresh ov.Core."""
    path = _onnx_case_file(case, tmp_path)
    converted = ov.convert_model(str(path), extension=iov.conversion_extensions())
    ir = tmp_path / "converted.xml"
    ov.save_model(converted, str(ir), compress_to_fp16=False)
    rank = case.data_sets[0][0][0].ndim
    native = {op.get_type_info().version_id for op in converted.get_ordered_ops() if op.get_type_name() == "GridSample"}
    assert native == ({"opset9"} if rank == 4 else {"irgrid1"})  # 4-D runs on OpenVINO's own kernel
    names = [value.name for value in case.model.graph.input]
    (output,) = [value.name for value in case.model.graph.output]
    for inputs, (expected,) in case.data_sets:
        feeds = dict(zip(names, (np.asarray(a) for a in inputs)))
        ways = {
            "openvino": ov.Core().compile_model(converted, "CPU", F32)(feeds)[0],
            "irgrid": irgrid.compile_model(ir)(feeds)[output],
            "ir in openvino": _ov_core().compile_model(str(ir), "CPU", F32)(feeds)[0],
        }
        for way, out in ways.items():
            np.testing.assert_allclose(out, expected, **gridsample_backend_tolerance(case), err_msg=f"{case.name}: {way}")


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_com_microsoft_and_opset16_names(rank, tmp_path):
    """com.microsoft GridSample (OpenVINO has no rule for it) and opset-16 names, via core.read_model."""
    feeds = gridsample_onnx(tmp_path / "ms.onnx", rank, "bicubic" if rank < 3 else "bilinear",
                            domain="com.microsoft", padding_mode="border", align_corners=1)
    core = ov.Core()
    core.add_extension(iov.conversion_extensions())
    out = core.compile_model(core.read_model(str(tmp_path / "ms.onnx")), "CPU", F32)(feeds)[0]
    expected = sample(feeds["X"].astype(np.float64), feeds["grid"].astype(np.float64),
                      "cubic" if rank < 3 else "linear", "border", True, 1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    if rank == 2:  # irgrid's float64 reference agrees with onnxruntime's own com.microsoft kernel
        import onnxruntime as ort

        session = ort.InferenceSession(str(tmp_path / "ms.onnx"), providers=["CPUExecutionProvider"])
        np.testing.assert_allclose(session.run(None, feeds)[0], expected, rtol=1e-5, atol=1e-5)


def test_without_conversion_rules_openvino_refuses(tmp_path):
    gridsample_onnx(tmp_path / "gs3.onnx", 3, "linear")
    with pytest.raises(Exception, match="only supported for 4D"):
        ov.convert_model(str(tmp_path / "gs3.onnx"))


def test_mixed_native_and_irgrid_layers(tmp_path):
    """Runs in OpenVINO (read back from IR with the extension) and through `irgrid infer -d auto`,
    which must choose OpenVINO because irgrid lacks MVN."""
    from irgrid.devices import open_model

    model, feeds, _ = mixed_model()
    path = save_ov(model, tmp_path)
    expected = mixed_reference(feeds)
    out = _ov_core().compile_model(str(path), "CPU", F32)(feeds)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    runner, why = open_model(path, "auto")
    assert why.startswith("openvino") and "MVN-opset6" in why
    np.testing.assert_allclose(runner(feeds)["normalised"], expected, rtol=1e-5, atol=1e-5)
    np.save(tmp_path / "volume.npy", feeds["volume"])
    np.save(tmp_path / "coords.npy", feeds["coords"])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_element_types_and_dynamic_shapes(dtype):
    """The CPU plugin runs Python ops in f32 for f16 and f64 models (it converts around them and
    declares f32 on the op it runs): the result is irgrid's f32 computation on the f32-rounded
    inputs, returned in the model's type."""
    gs = iov.op_class("GridSample", "irgrid1")
    x = ops.parameter([-1, 2, -1, -1, -1], dtype, name="x")
    g = ops.parameter([-1, -1, -1, -1, 3], dtype, name="g")
    node = gs([x.output(0), g.output(0)], mode="linear", padding_mode="reflection", align_corners=True)
    assert str(node.get_output_partial_shape(0)) == "[?,2,?,?,?]"
    compiled = ov.Core().compile_model(ov.Model([ops.result(node)], [x, g]), "CPU", F32)
    rng = np.random.default_rng(3)
    for shape, points in [((1, 2, 3, 4, 5), (1, 2, 2, 2, 3)), ((2, 2, 5, 4, 3), (2, 3, 1, 4, 3))]:
        xv, gv = rng.standard_normal(shape).astype(dtype), rng.uniform(-1.5, 1.5, points).astype(dtype)
        out = compiled([xv, gv])[0]
        expected = sample(xv.astype(np.float32), gv.astype(np.float32), "linear", "reflection", True,
                          1).astype(dtype)
        assert out.dtype == dtype and out.shape == expected.shape
        np.testing.assert_array_equal(out, expected)


def test_attributes_round_trip_through_ir(tmp_path):
    gs = iov.op_class("GridSample", "irgrid1")
    x, g = ops.parameter([1, 1, 4, 4, 4], np.float32, name="x"), ops.parameter([1, 2, 2, 2, 3], np.float32, name="g")
    node = gs([x.output(0), g.output(0)], mode="bicubic", padding_mode="border", align_corners=1)
    assert node.get_attributes() == {"align_corners": "true", "mode": "cubic", "padding_mode": "border"}
    path = save_ov(ov.Model([ops.result(node)], [x, g]), tmp_path)
    text = path.read_text()
    assert 'type="GridSample" version="irgrid1"' in text and 'mode="cubic"' in text
    read = next(op for op in _ov_core().read_model(str(path)).get_ordered_ops() if op.get_type_name() == "GridSample")
    assert read.get_attributes() == node.get_attributes()
    assert irgrid.read_model(path).layers["2"].attrs == {"align_corners": True, "mode": "cubic",
                                                           "padding_mode": "border"}
    with pytest.raises(irgrid.LayerAttributeError, match="mode='sharp' must be one of"):
        gs([x.output(0), g.output(0)], mode="sharp")
    with pytest.raises(irgrid.ShapeError, match="GridSample node, input 1: grid must have rank 5"):
        gs([x.output(0), ops.parameter([1, 2, 2, 3], np.float32).output(0)])  # named only once built


@pytest.mark.parametrize("attr,text,error", [
    ("align_corners", "yes", "is not a boolean"), ("align_corners", "2", "is not a boolean"),
    ("align_corners", "", "is not a boolean"), ("mode", "sharp", "must be one of")])
def test_reading_refuses_what_irgrid_check_refuses(attr, text, error, tmp_path):
    """OpenVINO's visitor reads a typed attribute leniently ("yes" as false); the extension parses the
    IR text as irgrid's reader does, and the CLI's one line carries irgrid's reason."""
    from irgrid.openvino.runner import openvino_reason

    gs = iov.op_class("GridSample", "irgrid1")
    x, g = ops.parameter([1, 1, 4, 4], np.float32, name="x"), ops.parameter([1, 2, 2, 2], np.float32, name="g")
    path = save_ov(ov.Model([ops.result(gs([x.output(0), g.output(0)]))], [x, g]), tmp_path)
    text_before = path.read_text()
    path.write_text(re.sub(f'{attr}="[^"]*"', f'{attr}="{text}"', text_before, count=1))
    with pytest.raises(irgrid.LayerAttributeError, match=error):
        irgrid.read_model(path)
    with pytest.raises(RuntimeError) as caught:
        _ov_core().read_model(str(path))
    reason = openvino_reason(caught.value)
    assert reason.startswith(f"LayerAttributeError: GridSample node: attribute {attr}={text!r} {error}"), reason


def test_input_counts_are_checked():
    gs, dc = iov.op_class("GridSample", "irgrid1"), iov.op_class("DeformConv", "irgrid1")
    x = ops.parameter([1, 1, 4, 4], np.float32, name="x")
    with pytest.raises(irgrid.ParseError, match="has 3 inputs, GridSample takes 2"):
        gs([x.output(0)] * 3)
    with pytest.raises(irgrid.ParseError, match="has 6 inputs, DeformConv takes 3 to 5"):
        dc([x.output(0)] * 6)


def test_only_irgrid_owned_operators_are_registered():
    classes = [iov.op_class(s.type, v) for s in irgrid.registry.all_specs() if not s.native for v in s.versions]
    assert len(iov.extensions()) == len(classes) >= 1
    assert {(c().get_type_info().name, c().get_type_info().version_id) for c in classes} == {
        ("GridSample", "irgrid1"), ("DeformConv", "irgrid1"), ("AffineGrid", "irgrid1")}
    with pytest.raises(KeyError):
        iov.op_class("GridSample", "opset9")  # OpenVINO's own: never registered again


def test_reading_without_the_extension(tmp_path):
    model, _, _ = mixed_model()
    path = save_ov(model, tmp_path)
    with pytest.raises(RuntimeError, match="from unsupported opset: irgrid1"):
        ov.Core().read_model(str(path))
    from irgrid.openvino.runner import openvino_reason

    try:
        ov.Core().read_model(str(path))
    except RuntimeError as exc:
        reason = openvino_reason(exc)
    assert "\n" not in reason and "core.add_extension(irgrid.openvino.extensions())" in reason


def _concurrency_model(tmp_path):
    rng = np.random.default_rng(11)
    x = ops.parameter([1, 4, 6, 8, 8], np.float32, name="x")
    g = ops.parameter([1, 5, 6, 7, 3], np.float32, name="g")
    node = iov.op_class("GridSample", "irgrid1")([x.output(0), g.output(0)], mode="cubic")
    compiled = _ov_core().compile_model(str(save_ov(ov.Model([ops.result(node)], [x, g]), tmp_path)), "CPU", F32)
    feeds = [[rng.standard_normal((1, 4, 6, 8, 8)).astype(np.float32),
              rng.uniform(-1.1, 1.1, (1, 5, 6, 7, 3)).astype(np.float32)] for _ in range(4)]
    expected = [compiled.create_infer_request().infer(f)[0].copy() for f in feeds]
    return compiled, feeds, expected


def test_async_infer_queue_is_bitwise_identical(tmp_path):
    compiled, feeds, expected = _concurrency_model(tmp_path)
    queue = ov.AsyncInferQueue(compiled, 4)
    mismatches = []

    def check(request, index):
        if not np.array_equal(request.get_output_tensor(0).data, expected[index]):
            mismatches.append(index)

    queue.set_callback(check)
    for i in range(4 * 200):
        queue.start_async(feeds[i % 4], i % 4)
    queue.wait_all()
    assert mismatches == []


def test_threads_with_synchronous_requests_are_bitwise_identical(tmp_path):
    compiled, feeds, expected = _concurrency_model(tmp_path)
    failures = []

    def worker(k):
        request = compiled.create_infer_request()
        for i in range(50):
            out = request.infer(feeds[(k + i) % 4])[0]
            if not np.array_equal(out, expected[(k + i) % 4]):
                failures.append((k, i))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.parametrize("route", ["trace", "export"])
def test_torch_5d_grid_sample_converts(route, tmp_path):
    """torch is an optional oracle: a module calling F.grid_sample on 5-D tensors, which OpenVINO alone
    cannot convert, converts with irgrid's rules (TorchScript and torch.export graphs name the op
    differently) and matches torch."""
    torch = pytest.importorskip("torch")

    class Warp(torch.nn.Module):
        def forward(self, x, grid):
            return torch.nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                                                   align_corners=False)

    x, grid = torch.randn(1, 3, 4, 5, 6), torch.rand(1, 2, 3, 4, 3) * 2.4 - 1.2
    source = Warp() if route == "trace" else torch.export.export(Warp(), (x, grid))
    model = ov.convert_model(source, example_input=(x, grid) if route == "trace" else None,
                             extension=iov.conversion_extensions())
    assert any(op.get_type_info().version_id == "irgrid1" for op in model.get_ordered_ops())
    out = ov.Core().compile_model(model, "CPU", F32)([x.numpy(), grid.numpy()])[0]
    np.testing.assert_allclose(out, Warp()(x, grid).numpy(), rtol=1e-5, atol=1e-6)


AFFINE_CASES = onnx_backend_cases("AffineGrid")


@pytest.mark.parametrize("case", AFFINE_CASES, ids=[c.name for c in AFFINE_CASES])
def test_onnx_affine_grid_converts(case, tmp_path):
    """ONNX AffineGrid-20 -> AffineGrid irgrid1 (OpenVINO alone decomposes it); run inside OpenVINO and,
    after save_model, by irgrid's runtime; against the case's expected output."""
    path = _onnx_case_file(case, tmp_path)
    converted = ov.convert_model(str(path), extension=iov.conversion_extensions())
    assert {op.get_type_info().version_id for op in converted.get_ordered_ops()
            if op.get_type_name() == "AffineGrid"} == {"irgrid1"}
    ir = tmp_path / "converted.xml"
    ov.save_model(converted, str(ir), compress_to_fp16=False)
    names = [value.name for value in case.model.graph.input]
    (output,) = [value.name for value in case.model.graph.output]
    for inputs, (expected,) in case.data_sets:
        feeds = dict(zip(names, (np.asarray(a) for a in inputs)))
        in_openvino = ov.Core().compile_model(converted, "CPU", F32)(feeds)[0]
        np.testing.assert_allclose(in_openvino, expected, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(irgrid.compile_model(ir)(feeds)[output], expected, rtol=1e-6, atol=1e-6)


def test_torch_affine_grid_converts():
    """F.affine_grid, which OpenVINO cannot convert (`aten::affine_grid_generator`), with a size-1 dim
    and align_corners=True, where irgrid follows torch (coordinate 0). TorchScript only: converting the
    torch.export program of this module fails inside torch's own decomposition (aot_autograd)."""
    torch = pytest.importorskip("torch")

    class Transformer(torch.nn.Module):
        def forward(self, x, theta):
            grid = torch.nn.functional.affine_grid(theta, [2, 3, 1, 5, 6], align_corners=True)
            return torch.nn.functional.grid_sample(x, grid, align_corners=True)

    x, theta = torch.randn(2, 3, 1, 5, 6), torch.randn(2, 3, 4) * 0.5
    model = ov.convert_model(Transformer(), example_input=(x, theta), extension=iov.conversion_extensions())
    assert any(op.get_type_name() == "AffineGrid" for op in model.get_ordered_ops())
    out = ov.Core().compile_model(model, "CPU", F32)([x.numpy(), theta.numpy()])[0]
    np.testing.assert_allclose(out, Transformer()(x, theta).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dynamic", [False, True])
def test_torch_affine_grid_of_the_input_size_converts(dynamic, tmp_path):
    """The PyTorch tutorial's spelling, `F.affine_grid(theta, x.size())`: the size arrives as the tensor
    the frontend built from aten::size, not as constants (the rule refused it before). Run inside
    OpenVINO and, saved, by irgrid's runtime, against torch; with dynamic dims too."""
    torch = pytest.importorskip("torch")

    class Transformer(torch.nn.Module):
        def forward(self, x, theta):
            grid = torch.nn.functional.affine_grid(theta, x.size(), align_corners=False)
            return torch.nn.functional.grid_sample(x, grid, align_corners=False)

    x, theta = torch.randn(2, 3, 7, 9), torch.randn(2, 2, 3) * 0.5
    shapes = {"input": [(-1, 3, -1, -1), (-1, 2, 3)]} if dynamic else {}
    model = ov.convert_model(Transformer(), example_input=(x, theta), extension=iov.conversion_extensions(),
                             **shapes)
    expected = Transformer()(x, theta).numpy()
    out = ov.Core().compile_model(model, "CPU", F32)([x.numpy(), theta.numpy()])[0]
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    path = tmp_path / "stn.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    compiled = irgrid.compile_model(path)
    (ours,) = compiled([x.numpy(), theta.numpy()]).values()
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)

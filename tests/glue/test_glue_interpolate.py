"""Interpolate-4/-11 against OpenVINO's CPU plugin (f32 IRs: nearest exact, the others atol 1e-5 on data of
spread ~1: the plugin sums the 2**n corner products, irgrid one axis at a time), onnx.reference's Resize
(f64, rtol 1e-12) and torch's F.interpolate end to end (atol 1e-5); error paths through `irgrid check`."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import openvino as ov
import openvino.opset11 as o11
import pytest
from openvino.utils.node_factory import NodeFactory

import irgrid
import irgrid.openvino
from irgrid.devices import open_model
from irgrid.errors import ShapeError, UnsupportedLayerError
from irgrid.inference import infer_model
from irgrid.registry import TensorInfo, find
from oracles import ov_reference, rng, save_ov

ALL_COORDINATE_MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "tf_half_pixel_for_nn", "align_corners"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"]


def _interpolate(version: int, x, target, axes, attrs: dict):
    """An opset11 or opset4 Interpolate node; -4 gets the unused one of sizes / scales as ones."""
    calc = attrs["shape_calculation_mode"]
    given = o11.constant(np.array(target, np.float32 if calc == "scales" else np.int64))
    axes_node = None if axes is None else o11.constant(np.array(axes, np.int64))
    if version == 11:
        return o11.interpolate(x, given, axes=axes_node, **attrs)
    n = len(target)
    sizes = given if calc == "sizes" else o11.constant(np.ones(n, np.int64))
    scales = given if calc == "scales" else o11.constant(np.ones(n, np.float32))
    node = NodeFactory("opset4").create("Interpolate", [x, sizes, scales, *([] if axes is None else [axes_node])],
                                        attrs)  # openvino.opset4.interpolate is Interpolate-1
    assert node.get_type_info().version_id == "opset4"
    return node


def _attrs(mode, calc, ctm="half_pixel", nearest="round_prefer_floor", pads=None, cube=-0.75, antialias=False):
    rank_pads = pads or ([0], [0])
    return dict(mode=mode, shape_calculation_mode=calc, coordinate_transformation_mode=ctm, nearest_mode=nearest,
                antialias=antialias, cube_coeff=cube, pads_begin=rank_pads[0], pads_end=rank_pads[1])


def _against_cpu(tmp_path, ov_run, shape, target, axes, attrs, version=11, dtype=np.float32, ov_core=None):
    """irgrid against the CPU plugin; against OpenVINO's reference (constant folding) when given ov_core."""
    x = o11.parameter(shape, dtype, name="x")
    path = save_ov(ov.Model([_interpolate(version, x, target, axes, attrs)], [x]), tmp_path)
    data = (rng(1).normal(size=shape) * 2).astype(dtype)
    if ov_core is None:
        (expected,) = ov_run(str(path), [data])
    else:
        (expected,) = ov_reference(ov_core, lambda c: _interpolate(version, c, target, axes, attrs), [data])
    assert irgrid.check_model(path) == []  # the output dims irgrid infers are the ones OpenVINO declares
    (got,) = irgrid.compile_model(path)({"x": data}).values()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if attrs["mode"] == "nearest":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


# (shape, sizes or scales, axes): 3-D/4-D/5-D, up and down, axes subsets (None: every axis), N/C included
CASES = [
    ((2, 5, 7), "sizes", [11], [2]),
    ((1, 3, 6, 7), "scales", [1.5, 0.75], [3, 2]),
    ((2, 3, 6, 7), "sizes", [2, 4, 12, 5], None),
    ((1, 2, 4, 5, 6), "scales", [2.0, 2.0, 2.0], [2, 3, 4]),
    ((1, 2, 4, 5, 6), "sizes", [3, 9, 4], [4, 2, 3]),
]


@pytest.mark.parametrize("shape, calc, target, axes", CASES)
@pytest.mark.parametrize("ctm", ALL_COORDINATE_MODES)
@pytest.mark.parametrize("mode", ["nearest", "linear", "linear_onnx", "cubic"])
def test_modes_and_coordinate_modes_against_cpu_plugin(mode, ctm, shape, calc, target, axes, tmp_path, ov_run,
                                                       ov_core):
    """The CPU plugin's cubic resize of the channel axis gives values of 1e8 (wrong reads), so that case is
    compared with OpenVINO's reference implementation, which irgrid follows (docs/semantics.md)."""
    channel_cubic = mode == "cubic" and axes is None
    _against_cpu(tmp_path, ov_run, shape, target, axes, _attrs(mode, calc, ctm), ov_core=ov_core if channel_cubic
                 else None)


@pytest.mark.parametrize("nearest", NEAREST_MODES)
@pytest.mark.parametrize("ctm", ALL_COORDINATE_MODES)
@pytest.mark.parametrize("calc, target", [("sizes", [3, 17]), ("scales", [2.5, 0.6])])
def test_nearest_modes_against_cpu_plugin(nearest, ctm, calc, target, tmp_path, ov_run):
    """Ties (x.5 source coordinates) and downsampling (simple's ceil) both occur in these sizes."""
    _against_cpu(tmp_path, ov_run, (1, 2, 6, 7), target, [2, 3], _attrs("nearest", calc, ctm, nearest))


@pytest.mark.parametrize("version", [4, 11])
@pytest.mark.parametrize("mode", ["nearest", "linear_onnx", "cubic", "linear"])
@pytest.mark.parametrize("calc, target", [("sizes", [4, 9]), ("scales", [1.7, 0.8])])
def test_pads_and_opset4_against_cpu_plugin(version, mode, calc, target, tmp_path, ov_run):
    """Pads on interpolated and other axes (the output keeps a padded dim), scales that do not give whole
    dims (trunc(f32(dim) * (scale + 1e-6)))."""
    pads = ([0, 1, 2, 0], [0, 0, 1, 3])
    _against_cpu(tmp_path, ov_run, (1, 2, 5, 6), target, [2, 3], _attrs(mode, calc, "pytorch_half_pixel", pads=pads),
                 version=version)


@pytest.mark.parametrize("cube", [-0.5, -0.75])
def test_cube_coeff_and_default_axes_against_cpu_plugin(cube, tmp_path, ov_run):
    _against_cpu(tmp_path, ov_run, (1, 2, 5, 6), [1, 2, 9, 4], None, _attrs("cubic", "sizes", "asymmetric", cube=cube))


def test_integer_data_nearest_against_cpu_plugin(tmp_path, ov_run):
    _against_cpu(tmp_path, ov_run, (1, 2, 5, 6), [2.0, 1.5], [2, 3], _attrs("nearest", "scales"), dtype=np.int32)


# ---------------------------------------------------------------------------------------------
# f64 against onnx.reference's Resize
# ---------------------------------------------------------------------------------------------

ONNX_COORDINATE_MODES = ALL_COORDINATE_MODES[:3] + ALL_COORDINATE_MODES[4:]  # onnx.reference lacks tf_half_pixel_for_nn
ONNX_CASES = [  # mode, ONNX mode, coordinate mode, nearest mode (ONNX has no `simple`)
    *[("nearest", "nearest", ctm, nm) for ctm in ONNX_COORDINATE_MODES for nm in NEAREST_MODES[:4]],
    *[(m, om, ctm, "round_prefer_floor") for m, om in (("linear_onnx", "linear"), ("linear", "linear"),
                                                         ("cubic", "cubic")) for ctm in ONNX_COORDINATE_MODES],
]


@pytest.mark.parametrize("mode, onnx_mode, ctm, nearest", ONNX_CASES)
@pytest.mark.parametrize("shape, calc, target, axes", [((2, 5, 8), "scales", [2.0, 0.5], [1, 2]),
                                                      ((1, 2, 4, 5, 6), "sizes", [7, 3, 11], [2, 3, 4])])
def test_f64_against_onnx_reference(mode, onnx_mode, ctm, nearest, shape, calc, target, axes, tmp_path):
    """irgrid keeps f64 data in f64 (coordinates too); ONNX Resize of the same modes (exclude_outside 0,
    cubic_coeff_a -0.625: an f32 attribute in ONNX, f64 in the IR, so one both hold exactly) to 1e-12 relative."""
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    if mode == "cubic":  # onnx.reference computes cubic weights in f32 (its cubic_coeff_a is an np.float32):
        # upsample by 2 (align_corners: to 2n - 1), where every weight is exact in f32
        calc, target = "sizes", [2 * shape[a] - (ctm == "align_corners") for a in axes]
    elif ctm == "align_corners" and calc == "scales":  # it computes that mode in f32 for f32 scales
        calc, target = "sizes", [int(s * shape[a]) for s, a in zip(target, axes)]
    data = rng(2).normal(size=shape)
    target_array = np.array(target, np.float32 if calc == "scales" else np.int64)
    x = o11.parameter(shape, np.float64, name="x")
    model = ov.Model([_interpolate(11, x, target, axes, _attrs(mode, calc, ctm, nearest, cube=-0.625))], [x])
    (got,) = irgrid.compile_model(save_ov(model, tmp_path))({"x": data}).values()

    inputs = ["x", "", "t"] if calc == "scales" else ["x", "", "", "t"]
    node = helper.make_node("Resize", inputs, ["y"], mode=onnx_mode, coordinate_transformation_mode=ctm,
                            nearest_mode=nearest, cubic_coeff_a=-0.625, axes=axes)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)],
                              [helper.make_tensor("t", TensorProto.FLOAT if calc == "scales" else TensorProto.INT64,
                                                  [len(target)], target_array)])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    (expected,) = ReferenceEvaluator(onnx_model).run(None, {"x": data})
    assert got.dtype == np.float64 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


# ---------------------------------------------------------------------------------------------
# torch end to end
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, kwargs", [
    ((1, 2, 5, 6), dict(scale_factor=2, mode="nearest")),
    ((1, 2, 3, 4, 5), dict(size=(6, 7, 3), mode="nearest")),
    ((1, 2, 5, 6), dict(scale_factor=2, mode="bilinear", align_corners=False)),
    ((1, 2, 5, 6), dict(size=(9, 4), mode="bilinear", align_corners=True)),
    ((1, 2, 3, 4, 5), dict(scale_factor=2, mode="trilinear", align_corners=False)),
    ((1, 2, 3, 4, 5), dict(size=(5, 3, 8), mode="trilinear", align_corners=True)),
    ((1, 2, 5, 6), dict(size=(8, 11), mode="bicubic", align_corners=False)),
    ((1, 2, 5, 6), dict(scale_factor=0.5, mode="bicubic", align_corners=True)),
])
def test_torch_interpolate_converted_by_openvino(shape, kwargs, tmp_path):
    torch = pytest.importorskip("torch")

    class Resize(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.interpolate(x, **kwargs)

    x = torch.rand(*shape)
    path = save_ov(ov.convert_model(Resize().eval(), example_input=x), tmp_path)
    assert irgrid.check_model(path) == []
    (got,) = irgrid.compile_model(path)({"x": x.numpy()}).values()
    with torch.no_grad():
        expected = Resize()(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_voxelmorph_like_unet_runs_on_irgrid(tmp_path):
    """Conv3d encoder (stride-2 down), nn.Upsample nearest, a skip concat, a flow head and a spatial
    transformer (identity grid + flow scaled to [-1, 1], grid_sample align_corners=True): irgrid's runtime
    agrees with torch to 1e-5, and the `auto` device now keeps the model on irgrid."""
    torch = pytest.importorskip("torch")
    from torch import nn
    from torch.nn import functional

    class VoxelMorphish(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1 = nn.Conv3d(2, 4, 3, padding=1)
            self.enc2 = nn.Conv3d(4, 8, 3, stride=2, padding=1)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.dec = nn.Conv3d(12, 4, 3, padding=1)
            self.flow = nn.Conv3d(4, 3, 3, padding=1)

        def forward(self, moving, fixed):
            e1 = torch.relu(self.enc1(torch.cat([moving, fixed], 1)))
            e2 = torch.relu(self.enc2(e1))
            d = torch.relu(self.dec(torch.cat([self.up(e2), e1], 1)))
            flow = self.flow(d)
            size = moving.shape[2:]
            axes = [torch.linspace(-1, 1, n) for n in size]
            grid = torch.stack(torch.meshgrid(*axes, indexing="ij")[::-1], -1).unsqueeze(0)  # x, y, z order
            scale = torch.tensor([2.0 / (n - 1) for n in size[::-1]])
            moved_grid = grid + flow.permute(0, 2, 3, 4, 1).flip(-1) * scale
            return functional.grid_sample(moving, moved_grid, align_corners=True)

    torch.manual_seed(0)
    module = VoxelMorphish().eval()
    moving, fixed = torch.rand(1, 1, 6, 8, 10), torch.rand(1, 1, 6, 8, 10)
    model = ov.convert_model(module, example_input=(moving, fixed),
                             extension=irgrid.openvino.conversion_extensions())
    path = save_ov(model, tmp_path)
    xml = path.read_text()
    assert 'type="Interpolate"' in xml
    assert irgrid.check_model(path) == []
    (got,) = irgrid.compile_model(path)([moving.numpy(), fixed.numpy()]).values()
    with torch.no_grad():
        expected = module(moving, fixed).numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    runner, why = open_model(path)
    assert why.startswith("openvino") and "convolutional network" in why, why  # irgrid/devices.py
    (got,) = runner([moving.numpy(), fixed.numpy()]).values()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# shapes, refusals and errors
# ---------------------------------------------------------------------------------------------

def test_dims_unknown_until_run_time_when_sizes_are_not_constant(tmp_path, ov_run):
    """sizes from a Parameter: the interpolated dims are unknown (OpenVINO declares them so too) and the
    run uses the values given."""
    x = o11.parameter([1, 2, 5, 6], np.float32, name="x")
    sizes = o11.parameter([2], np.int64, name="s")
    y = o11.interpolate(x, sizes, axes=o11.constant(np.array([2, 3])), **_attrs("linear_onnx", "sizes"))
    path = save_ov(ov.Model([y], [x, sizes]), tmp_path)
    model = irgrid.read_model(path)
    (layer,) = [layer for layer in model.layers.values() if layer.type == "Interpolate"]
    assert infer_model(model)[(layer.id, 0)].shape == (1, 2, None, None)
    data, target = rng(0).normal(size=(1, 2, 5, 6)).astype(np.float32), np.array([7, 3])
    (got,) = irgrid.compile_model(path)({"x": data, "s": target}).values()
    np.testing.assert_allclose(got, ov_run(str(path), [data, target])[0], rtol=0, atol=1e-5)


def test_unknown_axes_leave_every_dim_unknown():
    spec = find("Interpolate", "opset11")
    attrs = spec.parse_attrs({"mode": "nearest", "shape_calculation_mode": "sizes"})
    (out,) = spec.infer(attrs, [TensorInfo((1, 2, 5, 6), "f32"), TensorInfo((2,), "i64", np.array([3, 4])),
                                TensorInfo((2,), "i64")])
    assert out.shape == (None, None, None, None)


@pytest.mark.parametrize("version, inputs, attrs, port, message", [
    (11, [((1, 2, 5), "f32"), ((2,), "f32", [2, 2]), ((2,), "i64", [1, 3])], {}, 2, "axis 3 is out of range"),
    (11, [((1, 2, 5), "f32"), ((2,), "f32", [2, 2]), ((2,), "i64", [2, 2])], {}, 2, "repeat an axis"),
    (11, [((1, 2, 5), "f32"), ((2,), "f32", [2, 2]), ((2,), "i64", [1, -1])], {}, 2, "must not be negative"),
    (11, [((1, 2, 5), "f32"), ((3,), "f32", [2, 2, 2]), ((2,), "i64", [1, 2])], {}, 1,
     "scales has 3 values for 2 axes"),
    (11, [((1, 2, 5), "f32"), ((2,), "f32")], {"shape_calculation_mode": "sizes"}, 1,
     "sizes must be an integer tensor"),
    (11, [((1, 2, 5), "f32"), ((2,), "i64")], {}, 1, "scales must be a floating-point tensor"),
    (11, [((1, 2, 5), "f32"), ((1, 2), "f32"), ((2,), "i64")], {}, 1, "scales must be 1-D"),
    (11, [((1, 2, 5), "f32"), ((1,), "f32", [-2.0]), ((1,), "i64", [2])], {}, 1, "finite and positive"),
    (11, [((1, 2, 5), "f32"), ((1,), "f32"), ((1,), "f32")], {}, 2, "axes must be an integer tensor"),
    (11, [((1, 2, 5), "boolean"), ((1,), "f32")], {}, 0, "data must be a numeric tensor"),
    (4, [((1, 2, 5), "f32"), ((1,), "i64", [3]), ((1,), "i32"), ((1,), "i64", [2])],
     {"shape_calculation_mode": "sizes"}, 2, "scales must be a floating-point tensor"),
    (4, [((1, 2, 5), "f32"), ((1,), "i64", [-3]), ((1,), "f32"), ((1,), "i64", [2])],
     {"shape_calculation_mode": "sizes"}, 1, r"sizes \[-3\] must not be negative"),
])
def test_shape_errors_name_the_input(version, inputs, attrs, port, message):
    spec = find("Interpolate", f"opset{version}")
    attrs = spec.parse_attrs({"mode": "linear_onnx", "shape_calculation_mode": "scales", **attrs})
    infos = [TensorInfo(shape, et, None if not rest else np.array(rest[0], {"f32": "f4", "i64": "i8"}[et]))
             for shape, et, *rest in inputs]
    with pytest.raises(ShapeError, match=message) as info:
        spec.infer(attrs, infos)
    assert info.value.input == port


@pytest.mark.parametrize("attrs, element_type, reason", [
    ({"mode": "linear", "antialias": "true"}, "f32", "antialias=true is not supported"),
    ({"mode": "bicubic_pillow"}, "f32", "mode=bicubic_pillow is not supported"),
    ({"mode": "bilinear_pillow"}, "f32", "mode=bilinear_pillow is not supported"),
    ({"mode": "cubic"}, "i32", "mode=cubic on i32 data is not supported"),
])
def test_refused_variants_are_unsupported(attrs, element_type, reason):
    spec = find("Interpolate", "opset11")
    parsed = spec.parse_attrs({"shape_calculation_mode": "scales", **attrs})
    with pytest.raises(UnsupportedLayerError, match=reason):
        spec.infer(parsed, [TensorInfo((1, 2, 5), element_type), TensorInfo((1,), "f32", np.float32([2]))])


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irgrid", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_check_reports_errors_and_auto_sends_refused_variants_to_openvino(tmp_path):
    """`irgrid check` names the layer and port in one line; an antialiased resize is listed as
    unsupported, and `auto` runs that model on OpenVINO while `-d irgrid` refuses it."""
    x = o11.parameter([1, 2, 5, 6], np.float32, name="x")
    bad = o11.interpolate(x, o11.constant(np.float32([2, 2, 2])), axes=o11.constant(np.array([2, 3])),
                          **_attrs("nearest", "scales"))  # OpenVINO ignores the extra scale
    bad.set_friendly_name("up")
    path = save_ov(ov.Model([bad], [x]), tmp_path, "bad")
    proc = _cli("check", path)
    assert proc.returncode == 1, proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if "Interpolate" in line]
    assert 'Interpolate layer "up"' in line and "port 1" in line and "scales has 3 values for 2 axes" in line

    y = o11.interpolate(x, o11.constant(np.float32([0.5, 0.5])), axes=o11.constant(np.array([2, 3])),
                        **_attrs("linear", "scales", antialias=True))
    y.set_friendly_name("aa")
    path = save_ov(ov.Model([y], [x]), tmp_path, "aa")
    proc = _cli("check", path)
    assert proc.returncode == 1 and 'Interpolate layer "aa"' in proc.stdout
    assert "antialias=true is not supported by irgrid" in proc.stdout
    _, why = open_model(path)
    assert why.startswith("openvino") and "antialias=true" in why, why
    with pytest.raises(UnsupportedLayerError, match='Interpolate layer "aa".*antialias'):
        open_model(path, "irgrid")

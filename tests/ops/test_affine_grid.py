"""AffineGrid (irgrid1) against independent implementations.

Oracles (none of them is irgrid):
- the 4 ONNX backend node test cases for AffineGrid (expected outputs shipped in the onnx package);
- onnxruntime's AffineGrid-20 kernel, on seeded random configurations: 2-D and 3-D, both
  align_corners, N = 1..4, odd dims and size-1 dims, f32 and f64. onnxruntime puts a size-1 dim with
  align_corners=1 at +1 (irgrid: 0, see below), so in those configurations theta's column for that
  axis is zeroed: the axis's base coordinate then does not reach the output, and everything else is
  still compared;
- the size-1 rule (align_corners=1 puts a single point at 0, its centre) against the spec's formula
  written out in numpy below, and against torch's `affine_grid` when torch is installed (optional;
  skipped cleanly otherwise, and not counted as coverage);
- f16 and bf16 thetas against onnxruntime at f32 on the same (exactly representable) values, within
  the output type's rounding.
- OpenVINO reading the IR with irgrid's extension, against onnxruntime (f32; OpenVINO hands the op
  f32 theta and an i32 size).

Tolerances: f64 rtol 1e-12 (atol 1e-12: coordinates are O(1), sums of three products); f32 rtol 1e-6
with atol 1e-6 (a few ulp of values up to ~4); f16 and bf16 half an ulp of the output type relative
(2**-11, 2**-8) plus the f32 tolerance.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from onnx import TensorProto, helper

import irgrid
from irgrid.builder import IRBuilder
from irgrid.errors import ShapeError
from irgrid.registry import TensorInfo, find
from oracles import onnx_backend_cases

TOL = {"f64": {"rtol": 1e-12, "atol": 1e-12}, "f32": {"rtol": 1e-6, "atol": 1e-6}}
ONNX_TYPES = {"f32": TensorProto.FLOAT, "f64": TensorProto.DOUBLE}
NP_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
SPEC = find("AffineGrid", "irgrid1")


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def run_irgrid(tmp_path, theta: np.ndarray, size, align_corners: bool, theta_type: str | None = None,
               size_as_input: bool = False, threads: int | None = None) -> np.ndarray:
    """AffineGrid in an IR written with IRBuilder; size a Const, or a Parameter fed at run time."""
    size = np.asarray(size, np.int64)
    b = IRBuilder("affine_grid")
    tv = b.parameter("theta", theta.shape, theta_type or {np.dtype(t): n for n, t in NP_TYPES.items()}[theta.dtype])
    sv = b.parameter("size", size.shape, "i64") if size_as_input else b.const(size, "size")
    (grid,) = b.layer("AffineGrid", "irgrid1", [tv, sv], {"align_corners": align_corners}, name="grid")
    b.result(grid)
    path = b.save(tmp_path / f"ag_{len(list(tmp_path.iterdir()))}.xml")
    assert irgrid.check_model(path) == []
    feed = {"theta": theta, "size": size} if size_as_input else {"theta": theta}
    return irgrid.compile_model(path, threads=threads)(feed)["grid"]


def run_ort(theta: np.ndarray, size, align_corners: bool) -> np.ndarray:
    import onnxruntime as ort

    et = ONNX_TYPES["f64" if theta.dtype == np.float64 else "f32"]
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=int(align_corners))
    graph = helper.make_graph([node], "ag", [helper.make_tensor_value_info("theta", et, None),
                                             helper.make_tensor_value_info("size", TensorProto.INT64, None)],
                              [helper.make_tensor_value_info("grid", et, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"theta": theta, "size": np.asarray(size, np.int64)})[0]


def spec_grid(theta: np.ndarray, size, align_corners: bool) -> np.ndarray:
    """The ONNX AffineGrid-20 function body in float64 numpy, with a size-1 axis under
    align_corners=1 at 0 (where the body divides by zero)."""
    spatial = list(size[2:])

    def axis(length: int) -> np.ndarray:
        i = np.arange(length, dtype=np.float64)
        if not align_corners:
            return -1 + (2 * i + 1) / length
        return np.zeros(1) if length == 1 else -1 + i * 2 / (length - 1)

    mesh = np.meshgrid(*(axis(n) for n in spatial), indexing="ij")  # outermost first
    base = np.stack([*mesh[::-1], np.ones_like(mesh[0])], axis=-1)  # x, y, (z,) 1
    return np.einsum("nkj,...j->n...k", theta.astype(np.float64), base)


def random_config(rng, rank: int, with_size_one: bool, n: int | None = None):
    n = n or int(rng.integers(1, 5))
    dims = [int(d) for d in rng.choice([1, 2, 3, 5, 7, 8], rank)] if with_size_one else \
        [int(d) for d in rng.choice([2, 3, 5, 7, 8, 9], rank)]
    if with_size_one and 1 not in dims:
        dims[int(rng.integers(rank))] = 1
    theta = rng.standard_normal((n, rank, rank + 1))
    return theta, [n, int(rng.integers(1, 4)), *dims]


# --------------------------------------------------------------------------------------------
# ONNX backend node tests

BACKEND_CASES = onnx_backend_cases("AffineGrid")


def test_all_backend_cases_collected():
    assert sorted(c.name for c in BACKEND_CASES) == [
        "test_affine_grid_2d", "test_affine_grid_2d_align_corners", "test_affine_grid_3d",
        "test_affine_grid_3d_align_corners"]


@pytest.mark.parametrize("size_as_input", [False, True], ids=["size_const", "size_input"])
@pytest.mark.parametrize("case", BACKEND_CASES, ids=[c.name for c in BACKEND_CASES])
def test_onnx_backend_case(case, size_as_input, tmp_path):
    (node,) = case.model.graph.node
    align = any(a.name == "align_corners" and a.i for a in node.attribute)
    for (theta, size), (expected,) in case.data_sets:
        out = run_irgrid(tmp_path, np.asarray(theta), np.asarray(size), align, size_as_input=size_as_input)
        assert out.shape == expected.shape and out.dtype == np.float32
        np.testing.assert_allclose(out, expected, **TOL["f32"])


# --------------------------------------------------------------------------------------------
# onnxruntime, random configurations

@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("rank", [2, 3])
def test_vs_onnxruntime(rank, align_corners, dtype, tmp_path):
    rng = _rng("ort", rank, align_corners, dtype)
    for trial in range(8):
        theta, size = random_config(rng, rank, with_size_one=trial % 2 == 1, n=1 if trial < 2 else None)
        if align_corners:  # onnxruntime puts a size-1 axis at +1: keep that axis out of the output
            for j, length in enumerate(size[2:][::-1]):
                if length == 1:
                    theta[:, :, j] = 0
        theta = theta.astype(NP_TYPES[dtype])
        out = run_irgrid(tmp_path, theta, size, align_corners, size_as_input=trial % 3 == 0)
        expected = run_ort(theta, size, align_corners)
        assert out.shape == expected.shape == (size[0], *size[2:], rank)
        assert out.dtype == NP_TYPES[dtype]
        np.testing.assert_allclose(out, expected, **TOL[dtype], err_msg=f"size {size}")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("rank", [2, 3])
def test_size_one_align_corners_is_the_pixel_centre(rank, dtype, tmp_path):
    """A size-1 axis with align_corners=1: base coordinate 0 (the spec divides by zero there)."""
    rng = _rng("size1", rank, dtype)
    for dims in ([1] * rank, [1, 4, 5][:rank], [3, 1, 2][:rank], [5, 6, 1][-rank:]):
        theta = rng.standard_normal((2, rank, rank + 1)).astype(NP_TYPES[dtype])
        size = [2, 1, *dims]
        out = run_irgrid(tmp_path, theta, size, True)
        np.testing.assert_allclose(out, spec_grid(theta, size, True), **TOL[dtype], err_msg=f"dims {dims}")
        if dims == [1] * rank:  # every base coordinate 0: the grid is theta's translation column
            translation = theta[:, :, rank].reshape(2, *[1] * rank, rank)
            np.testing.assert_array_equal(out, np.broadcast_to(translation, out.shape))


@pytest.mark.parametrize("align_corners", [False, True], ids=["ac0", "ac1"])
@pytest.mark.parametrize("rank", [2, 3])
def test_vs_torch(rank, align_corners, tmp_path):
    torch = pytest.importorskip("torch")
    rng = _rng("torch", rank, align_corners)
    for trial in range(6):
        theta, size = random_config(rng, rank, with_size_one=trial % 2 == 1)
        out = run_irgrid(tmp_path, theta, size, align_corners)
        expected = torch.nn.functional.affine_grid(torch.from_numpy(theta), size, align_corners=align_corners).numpy()
        np.testing.assert_allclose(out, expected, **TOL["f64"], err_msg=f"size {size}")


@pytest.mark.parametrize("element_type", ["f16", "bf16"])
@pytest.mark.parametrize("rank", [2, 3])
def test_half_types_vs_f32(rank, element_type, tmp_path):
    """f16 / bf16 theta: computed in f32, returned in theta's type, within half an ulp of it."""
    import ml_dtypes

    rng = _rng("half", rank, element_type)
    for align_corners in (False, True):
        theta, size = random_config(rng, rank, with_size_one=False)
        if element_type == "f16":
            theta = theta.astype(np.float16)
            given, ulp = theta, 2.0 ** -11
        else:
            theta = theta.astype(ml_dtypes.bfloat16).astype(np.float32)  # exactly bf16 values
            given, ulp = theta.astype(ml_dtypes.bfloat16), 2.0 ** -8
        out = run_irgrid(tmp_path, given, size, align_corners, theta_type=element_type)
        expected = run_ort(theta.astype(np.float32), size, align_corners)
        assert out.dtype == (np.float16 if element_type == "f16" else np.float32)
        if element_type == "bf16":  # carried as f32, rounded to bf16
            assert not (out.view(np.uint32) & 0xFFFF).any()
        np.testing.assert_allclose(out.astype(np.float32), expected, rtol=ulp + 1e-6, atol=1e-6)


def test_threads_bitwise_identical(tmp_path):
    """Several 16384-point chunks per batch item; 1 and 2 threads give the same bytes."""
    rng = _rng("threads")
    for rank, size in ((2, [3, 1, 150, 211]), (3, [2, 1, 20, 33, 41])):
        theta = rng.standard_normal((size[0], rank, rank + 1)).astype(np.float32)
        one = run_irgrid(tmp_path, theta, size, False, threads=1)
        two = run_irgrid(tmp_path, theta, size, False, threads=2)
        assert one.tobytes() == two.tobytes()
        np.testing.assert_allclose(two, run_ort(theta, size, False), **TOL["f32"])


# --------------------------------------------------------------------------------------------
# shape inference and errors

def _infer(theta_shape, size_value=None, size_shape=None, theta_type="f32", size_type="i64"):
    value = None if size_value is None else np.array(size_value, np.int64)
    shape = size_shape if size_shape is not None else (len(size_value),)
    return SPEC.infer(SPEC.parse_attrs({}), [TensorInfo(theta_shape, theta_type), TensorInfo(shape, size_type, value)])


def test_infer_static_and_dynamic():
    assert _infer((2, 2, 3), [2, 3, 5, 7])[0].shape == (2, 5, 7, 2)
    assert _infer((None, 3, 4), [4, 1, 2, 3, 5])[0].shape == (4, 2, 3, 5, 3)
    assert _infer((2, 2, 3), size_shape=(4,))[0].shape == (2, None, None, 2)
    assert _infer((2, 3, 4), size_shape=(None,))[0].shape == (2, None, None, None, 3)
    assert _infer((2, None, None), size_shape=(None,))[0].shape is None
    assert _infer((2, 2, 3), [2, 3, 5, 7], theta_type="bf16")[0].element_type == "bf16"


@pytest.mark.parametrize("theta_shape,size_value,size_shape,size_type,index,message", [
    ((2, 3, 4), [2, 3, 5, 7], None, "i64", 0, r"theta must have shape \(N, 2, 3\) for a 4-element size"),
    ((2, 2, 3), [2, 3, 4, 5, 7], None, "i64", 0, r"theta must have shape \(N, 3, 4\) for a 5-element size"),
    ((2, 2, 4), None, (None,), "i64", 0, r"theta must have shape \(N, 2, 3\) or \(N, 3, 4\)"),
    ((3, 2, 3), [2, 3, 5, 7], None, "i64", 1, r"theta's batch and size\[0\] differ: 3 != 2"),
    ((2, 2, 3), [2, 3, 0, 7], None, "i64", 1, r"must be positive"),
    ((2, 2, 3), [2, -3, 5, 7], None, "i64", 1, r"must be positive"),
    ((2, 2, 3), [2, 3, 5], None, "i64", 1, r"size must have 4 elements .* or 5 .*, got 3"),
    ((2, 2, 3), None, (6,), "i64", 1, r"size must have 4 elements .* got 6"),
    ((2, 2, 3), [2, 3, 5, 7], None, "u8", 1, r"size must be an i64 tensor"),
])
def test_infer_errors_name_the_input(theta_shape, size_value, size_shape, size_type, index, message):
    with pytest.raises(ShapeError, match=message) as info:
        _infer(theta_shape, size_value, size_shape, size_type=size_type)
    assert info.value.input == index


def test_bad_theta_type_and_rank():
    with pytest.raises(ShapeError, match="theta must be a floating-point tensor") as info:
        _infer((2, 2, 3), [2, 3, 5, 7], theta_type="i32")
    assert info.value.input == 0
    with pytest.raises(ShapeError, match="theta must have rank 3") as info:
        _infer((2, 6), [2, 3, 5, 7])
    assert info.value.input == 0


def test_size_from_shapeof_is_static_and_runtime_size_is_checked(tmp_path):
    """size folded from ShapeOf gives a static output; a run-time size is checked at run time,
    the error located at the layer's size port."""
    b = IRBuilder("shapeof_size")
    x = b.parameter("x", (2, 3, 6, 9))
    theta = b.parameter("theta", (2, 2, 3))
    (size,) = b.layer("ShapeOf", "opset3", [x], {"output_type": "i64"})
    (grid,) = b.layer("AffineGrid", "irgrid1", [theta, size], {"align_corners": True}, name="grid")
    b.result(grid)
    path = b.save(tmp_path / "shapeof.xml")
    compiled = irgrid.compile_model(path)
    (row,) = [r for r in compiled.describe(structured=True)["layers"] if r["name"] == "grid"]
    assert row["outputs"][0]["shape"] == [2, 6, 9, 2]
    rng = _rng("shapeof")
    t = rng.standard_normal((2, 2, 3)).astype(np.float32)
    out = compiled({"x": np.zeros((2, 3, 6, 9), np.float32), "theta": t})["grid"]
    np.testing.assert_allclose(out, run_ort(t, [2, 3, 6, 9], True), **TOL["f32"])

    b = IRBuilder("runtime_size")
    theta = b.parameter("theta", (2, 2, 3))
    size = b.parameter("size", (4,), "i64")
    (grid,) = b.layer("AffineGrid", "irgrid1", [theta, size], {}, name="grid")
    b.result(grid)
    compiled = irgrid.compile_model(b.save(tmp_path / "runtime.xml"))
    with pytest.raises(ShapeError, match=r'AffineGrid layer "grid" \(id 2\), port 1: size \[2, 3, 0, 4\] must be positive'):
        compiled({"theta": t, "size": np.array([2, 3, 0, 4])})
    with pytest.raises(ShapeError, match="port 1: theta's batch and size"):
        compiled({"theta": t, "size": np.array([3, 3, 4, 4])})


# --------------------------------------------------------------------------------------------
# inside OpenVINO, through irgrid's op extension

@pytest.mark.parametrize("size_as_input", [False, True], ids=["size_const", "size_input"])
@pytest.mark.parametrize("rank", [2, 3])
def test_inside_openvino(rank, size_as_input, tmp_path):
    """OpenVINO reads the IR with `irgrid.openvino.extensions()` and runs the op (its CPU plugin hands
    it f32 and i32); compared with onnxruntime, f32 tolerance."""
    import openvino as ov
    import irgrid.openvino

    rng = _rng("openvino", rank, size_as_input)
    theta, size = random_config(rng, rank, with_size_one=False)
    theta = theta.astype(np.float32)
    b = IRBuilder("affine_grid")
    tv = b.parameter("theta", theta.shape)
    sv = b.parameter("size", (len(size),), "i64") if size_as_input else b.const(np.array(size, np.int64), "size")
    (grid,) = b.layer("AffineGrid", "irgrid1", [tv, sv], {"align_corners": True}, name="grid")
    b.result(grid)
    path = b.save(tmp_path / "ag.xml")
    core = ov.Core()
    core.add_extension(irgrid.openvino.extensions())
    compiled = core.compile_model(core.read_model(str(path)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    feed = {"theta": theta, **({"size": np.array(size, np.int64)} if size_as_input else {})}
    out = compiled(feed)[0]
    np.testing.assert_allclose(out, run_ort(theta, size, True), **TOL["f32"])

"""Prepared steps (OpSpec.prepare, irgrid/runtime/compiled.py): a layer whose input shapes are all
static runs a plan validated at compile time; otherwise the op's `run` validates every call.

The two paths must give bitwise the same outputs: each static model here is compared with the same
model whose inputs have dynamic dims (run through `run`), at 1 and 2 threads. Values against
oracles: the GridSample and fusion oracle tests (onnxruntime, onnx.reference, OpenVINO) compile
static models, so they run the prepared path; the case here adds onnxruntime for f32 and f64 directly.
Also: the plan's per-call checks (dtype, shape, layout), fresh outputs per call, reused intermediate
buffers, inputs given under tensor names or as lists, and profiling.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from onnx import TensorProto, helper

import irgrid
from irgrid.builder import IRBuilder
from irgrid.errors import InputError
from irgrid.ops.grid_sample import sample_plan
from oracles import build_pair, unaligned_out

OPSET9 = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}


@pytest.fixture(autouse=True)
def _dynamic_models_stay_generic(monkeypatch):
    """Dynamic models here must keep running the op's `run` on every call, not a plan specialised to
    the inputs' shapes (compiled.SPECIALIZE_AFTER), which would be the prepared path again."""
    from irgrid.runtime import compiled

    monkeypatch.setattr(compiled, "SPECIALIZE_AFTER", 2**62)


def _rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _gridsample_ir(path, x_shape, grid_shape, mode="linear", padding="zeros", align_corners=False,
                   element_type="f32", after=None, grid_layout="nhwc"):
    """X, grid -> GridSample [-> Multiply by 2 when `after`] as an IR; grid given channels-first and
    transposed (a non-contiguous view into the GridSample) when grid_layout == "nchw"."""
    rank = len(x_shape) - 2
    b = IRBuilder("gs")
    x = b.parameter("X", x_shape, element_type)
    if grid_layout == "nchw":
        g_shape = None if grid_shape is None else (grid_shape[0], grid_shape[-1], *grid_shape[1:-1])
        g = b.parameter("grid", g_shape, element_type)
        order = b.const(np.array([0, *range(2, rank + 2), 1], np.int64), "order")
        (g,) = b.layer("Transpose", "opset1", [g, order], name="to_nhwc")
    else:
        g = b.parameter("grid", grid_shape, element_type)
    version, mode_name = ("opset9", OPSET9[mode]) if rank == 2 else ("irgrid1", mode)
    (y,) = b.layer("GridSample", version, [x, g], {"mode": mode_name, "padding_mode": padding,
                                                  "align_corners": align_corners}, name="Y")
    if after:
        two = b.const(np.array(2, np.float32 if element_type == "f32" else np.float64), "two")
        (y,) = b.layer("Multiply", "opset1", [y, two], name="Y2")
    b.result(y)
    return b.save(path)


def _dynamic(shape):
    return None if shape is None else (None,) * len(shape)


def _inputs(x_shape, grid_shape, dtype, grid_layout="nhwc", key=()):
    rng = _rng(x_shape, grid_shape, *key)
    grid = rng.uniform(-1.1, 1.1, grid_shape)
    grid.reshape(-1)[::7] = np.nan  # NaN points too
    if grid_layout == "nchw":
        grid = np.moveaxis(grid, -1, 1)
    return {"X": rng.standard_normal(x_shape).astype(dtype), "grid": np.ascontiguousarray(grid, dtype)}


def _steps_prepared(compiled) -> list[bool]:
    return [step.prepared is not None for step in compiled._steps]


CASES = [  # x shape, grid shape, mode, padding, align_corners
    ((1, 3, 7, 9), (1, 5, 6, 2), "linear", "zeros", False),
    ((2, 2, 6, 5), (2, 4, 4, 2), "nearest", "border", True),
    ((1, 2, 5, 8), (1, 3, 7, 2), "cubic", "reflection", False),
    ((2, 2, 4, 5, 6), (2, 3, 2, 4, 3), "linear", "border", False),
    ((1, 1, 4, 5, 3), (1, 2, 3, 2, 3), "cubic", "zeros", True),
    ((1, 3, 11), (1, 6, 1), "cubic", "border", False),
    ((3, 1, 4, 4), (3, 2, 2, 2), "linear", "zeros", False),  # the tiny case
]


@pytest.mark.parametrize("element_type", ["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[2]}-{c[3]}")
def test_prepared_equals_generic_bitwise(tmp_path, case, element_type):
    x_shape, grid_shape, mode, padding, align_corners = case
    static = irgrid.compile_model(_gridsample_ir(tmp_path / "s.xml", x_shape, grid_shape, mode, padding, align_corners,
                                                 element_type))
    dynamic = irgrid.compile_model(_gridsample_ir(tmp_path / "d.xml", _dynamic(x_shape), _dynamic(grid_shape), mode,
                                                  padding, align_corners, element_type))
    assert _steps_prepared(static) == [True] and _steps_prepared(dynamic) == [False]
    inputs = _inputs(x_shape, grid_shape, {"f32": np.float32, "f64": np.float64}[element_type])
    for threads in (1, 2):
        irgrid.set_num_threads(threads)
        try:
            ours, theirs = static(inputs)["Y"], dynamic(inputs)["Y"]
        finally:
            irgrid.set_num_threads(None)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        assert ours.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("element_type", ["f32", "f64"])
def test_prepared_matches_onnxruntime(tmp_path, element_type):
    import onnxruntime as ort

    x_shape, grid_shape = (2, 3, 9, 7), (2, 5, 6, 2)
    dtype = {"f32": np.float32, "f64": np.float64}[element_type]
    compiled = irgrid.compile_model(_gridsample_ir(tmp_path / "m.xml", x_shape, grid_shape, "cubic", "border",
                                                   False, element_type))
    assert _steps_prepared(compiled) == [True]
    inputs = _inputs(x_shape, grid_shape, dtype)
    inputs["grid"] = np.nan_to_num(inputs["grid"])  # onnxruntime's NaN handling is not the spec's
    et = TensorProto.DOUBLE if element_type == "f64" else TensorProto.FLOAT
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode="cubic", padding_mode="border", align_corners=0)
    graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("X", et, x_shape),
                                             helper.make_tensor_value_info("grid", et, grid_shape)],
                              [helper.make_tensor_value_info("Y", et, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tol = {"f64": dict(rtol=1e-9, atol=1e-12), "f32": dict(rtol=1e-5, atol=1e-5)}[element_type]
    np.testing.assert_allclose(compiled(inputs)["Y"], session.run(None, inputs)[0], **tol)


def test_non_contiguous_input_and_reused_buffer(tmp_path):
    """A Transpose view feeds the prepared GridSample (the plan copies it), and the GridSample's output
    is an intermediate in a preallocated buffer (passed to the plan as `out`)."""
    x_shape, grid_shape = (2, 3, 6, 7), (2, 4, 5, 2)
    static = irgrid.compile_model(_gridsample_ir(tmp_path / "s.xml", x_shape, grid_shape, after=True,
                                                 grid_layout="nchw"))
    dynamic = irgrid.compile_model(_gridsample_ir(tmp_path / "d.xml", _dynamic(x_shape), _dynamic(grid_shape),
                                                  after=True, grid_layout="nchw"))
    gs_step = next(step for step in static._steps if step.layer.type == "GridSample")
    assert gs_step.prepared is not None and gs_step.out[0] is not None
    first = _inputs(x_shape, grid_shape, np.float32, "nchw", key=(1,))
    second = _inputs(x_shape, grid_shape, np.float32, "nchw", key=(2,))
    a, b = static(first)["Y2"], static(second)["Y2"]
    assert a.tobytes() == dynamic(first)["Y2"].tobytes() and b.tobytes() == dynamic(second)["Y2"].tobytes()
    assert not np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("element_type", ["f32", "f64"])
def test_fused_prepared_equals_generic_bitwise(tmp_path, mode, element_type):
    """AffineGrid -> GridSample with a constant size is prepared; with the size an input it runs
    `run` every call; unfused it is two layers. All three agree bitwise."""
    x_shape, size = (2, 3, 7, 6), [2, 3, 5, 8]
    models = {kind: irgrid.compile_model(build_pair(tmp_path / f"{kind}.xml", x_shape, size, element_type, mode,
                                                    "border", size_input=kind == "dynamic"), fuse=kind != "unfused")
              for kind in ("static", "dynamic", "unfused")}
    assert _steps_prepared(models["static"]) == [True] and _steps_prepared(models["dynamic"]) == [False]
    rng = _rng(mode, element_type)
    dtype = {"f32": np.float32, "f64": np.float64}[element_type]
    theta = (np.tile(np.array([[1.1, -0.3, 0.05], [0.25, 0.9, -0.1]]), (2, 1, 1))
             + rng.uniform(-0.1, 0.1, (2, 2, 3))).astype(dtype)
    inputs = {"X": rng.standard_normal(x_shape).astype(dtype), "theta": theta}
    outputs = {kind: m({**inputs, "size": np.array(size, np.int64)} if kind == "dynamic" else inputs)["warped"]
               for kind, m in models.items()}
    assert outputs["static"].tobytes() == outputs["dynamic"].tobytes() == outputs["unfused"].tobytes()


def test_each_call_returns_fresh_outputs(tmp_path):
    x_shape, grid_shape = (1, 1, 4, 4), (1, 2, 2, 2)
    compiled = irgrid.compile_model(_gridsample_ir(tmp_path / "m.xml", x_shape, grid_shape))
    inputs = _inputs(x_shape, grid_shape, np.float32)
    a, b = compiled(inputs)["Y"], compiled(inputs)["Y"]
    assert a is not b and not np.shares_memory(a, b) and a.flags.writeable
    assert a.tobytes() == b.tobytes()
    outputs, timings = compiled.infer_profiled(inputs)
    assert outputs["Y"].tobytes() == a.tobytes() and [t.type for t in timings] == ["GridSample"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_fresh_outputs_start_on_a_cache_line(tmp_path, dtype):
    """From 64 KiB on, a plan's fresh output (so a compiled model's GridSample output) starts on a
    64-byte line (sampling.pyx, ALIGNED_OUTPUT_BYTES): C-contiguous and writeable, with the values the
    kernel writes into an `out` 16 bytes past a line (where numpy's large arrays often start). Smaller
    outputs are plain arrays."""
    x_shape, grid_shape = (1, 8, 40, 48), (1, 36, 40, 2)  # f32 output 46080 bytes: 0.7 * 64 KiB
    inputs = _inputs(x_shape, grid_shape, dtype, key=("aligned",))
    x, grid = inputs["X"], inputs["grid"]
    bigger = np.concatenate([x] * 2, axis=1)  # 16 channels: 1.4 * 64 KiB in f32
    compiled = irgrid.compile_model(_gridsample_ir(tmp_path / "m.xml", bigger.shape, grid_shape,
                                                   element_type="f32" if dtype == np.float32 else "f64"))
    for data, aligned in ((x, dtype == np.float64), (bigger, True)):
        plan = sample_plan(data.shape, grid.shape, dtype, "linear", "zeros", False)
        unaligned = unaligned_out(plan.out_shape, dtype)
        plan(data, grid, unaligned, 2)
        for fresh in (plan(data, grid), plan(data, grid, None, 2)):
            assert fresh.flags.c_contiguous and fresh.flags.writeable and fresh.dtype == dtype
            assert (fresh.ctypes.data % 64 == 0) if aligned else fresh.base is None
            assert fresh.tobytes() == unaligned.tobytes()
    y = compiled({"X": bigger, "grid": grid})["Y"]
    assert y.ctypes.data % 64 == 0 and y.tobytes() == unaligned.tobytes()


def test_inputs_as_list_fortran_and_wrong_types(tmp_path):
    """The fast input path takes a dict of exact arrays by Parameter name; anything else goes through
    the full checks, with their errors."""
    x_shape, grid_shape = (1, 2, 5, 5), (1, 3, 3, 2)
    compiled = irgrid.compile_model(_gridsample_ir(tmp_path / "m.xml", x_shape, grid_shape))
    inputs = _inputs(x_shape, grid_shape, np.float32)
    expected = compiled(inputs)["Y"].tobytes()
    assert compiled([inputs["X"], inputs["grid"]])["Y"].tobytes() == expected
    assert compiled({"X": np.asfortranarray(inputs["X"]), "grid": inputs["grid"]})["Y"].tobytes() == expected
    with pytest.raises(InputError, match="must be f32"):
        compiled({"X": inputs["X"].astype(np.float64), "grid": inputs["grid"]})
    with pytest.raises(InputError, match="must have shape"):
        compiled({"X": inputs["X"][..., :4], "grid": inputs["grid"]})
    with pytest.raises(InputError, match="is missing"):
        compiled({"X": inputs["X"], "gird": inputs["grid"]})


def test_types_the_plan_does_not_take_run_generic(tmp_path):
    """f16 data is converted by `run` (not prepared) and still works."""
    x_shape, grid_shape = (1, 2, 5, 6), (1, 3, 4, 2)
    compiled = irgrid.compile_model(_gridsample_ir(tmp_path / "m.xml", x_shape, grid_shape, element_type="f16"))
    assert _steps_prepared(compiled) == [False]
    inputs = _inputs(x_shape, grid_shape, np.float16)
    y = compiled(inputs)["Y"]
    assert y.dtype == np.float16 and y.shape == (1, 2, 3, 4)


def test_plan_checks_every_call():
    """The plan refuses arrays of another dtype or shape and a bad `out`; it copies an array that is
    not C-contiguous, aligned and native-endian (same result as the contiguous one)."""
    rng = _rng("plan")
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    grid = rng.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
    plan = sample_plan(x.shape, grid.shape, np.float32, "linear", "zeros", False)
    assert plan.out_shape == (1, 2, 3, 4)
    expected = plan(x, grid).tobytes()
    with pytest.raises(ValueError, match="float32 array"):
        plan(x.astype(np.float64), grid)
    with pytest.raises(ValueError, match="float32 array"):
        plan(x.tolist(), grid)
    with pytest.raises(ValueError, match="shape"):
        plan(x[:, :1], grid)
    with pytest.raises(ValueError, match="out must be"):
        plan(x, grid, np.empty((1, 2, 3, 5), np.float32))
    with pytest.raises(ValueError, match="out must be"):
        plan(x, grid, np.empty((1, 2, 3, 4), np.float32)[..., ::-1])
    strided = np.empty((1, 2, 5, 12), np.float32)[..., ::2]
    strided[...] = x
    swapped = grid.astype(">f4")
    assert plan(strided, swapped).tobytes() == expected
    out = np.full((1, 2, 3, 4), np.nan, np.float32)
    assert plan(x, grid, out, 2) is out and out.tobytes() == expected


@pytest.mark.parametrize("args, message", [
    (((1, 2, 5), (1, 3, 3, 1), np.float32), "coords"),  # grid rank != data rank
    (((2, 2, 5, 5), (1, 3, 3, 2), np.float32), "grid must be"),  # batch
    (((1, 2, 5, 5), (1, 3, 3, 3), np.float32), "grid must be"),  # last dim != r
    (((1, 2, 0, 5), (1, 3, 3, 2), np.float32), "positive"),
    (((1, 2, 5, 5), (1, 3, 3, 2), np.float16), "f32 or f64"),
])
def test_plan_refuses_bad_shapes(args, message):
    with pytest.raises(ValueError, match=message):
        sample_plan(*args, "linear", "zeros", False)

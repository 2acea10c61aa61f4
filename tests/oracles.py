"""The tests' shared helpers, in one module: oracle models saved as IR for irgrid to read, the
oracles themselves (OpenVINO, onnxruntime, onnx.reference), networks several tests build, and the CLI
runner. Test files import these from here, never from one another (tests/conftest.py puts this folder
on sys.path)."""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]  # the repository
SAMPLES = ROOT / "samples"


def save_ov(model, directory: Path, name: str = "model") -> Path:
    """ov.save_model without f16 compression, so f32 weights stay f32; returns the .xml path."""
    import openvino as ov

    path = Path(directory) / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def compile_exported(xml, inputs, **kwargs):
    """irgrid.compile_model of an exported block (tests/conftest.py's glue_export) at its example inputs'
    shapes: static, the plan that runs them."""
    import irgrid

    model = irgrid.read_model(xml)
    shapes = {p.name: tuple(t.shape) for p, t in zip(model.parameters, inputs)}
    return irgrid.compile_model(model, shapes=shapes, **kwargs)


def run_both(model, inputs: list[np.ndarray], tmp_path, ov_run, edit=None):
    """Save `model`, optionally edit its XML, run it in OpenVINO and irgrid; returns (ov, irgrid) lists."""
    import irgrid
    from lxml import etree

    path = save_ov(model, tmp_path)
    if edit is not None:
        root = etree.fromstring(path.read_bytes())
        edit(root)
        path.write_bytes(etree.tostring(root))
    expected = ov_run(str(path), inputs)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    got = compiled(dict(zip(names, inputs)))
    assert list(got) == [out.get_any_name() for out in model.outputs]
    return expected, list(got.values())


def assert_same(expected: list[np.ndarray], got: list[np.ndarray], rtol: float = 0.0) -> None:
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        assert g.shape == e.shape, (g.shape, e.shape)
        if rtol:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0)
        else:
            np.testing.assert_array_equal(g, e)


def named(node, name: str):
    node.output(0).get_tensor().set_names({name})
    return node


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ov_reference(ov_core, build, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """OpenVINO's reference implementation of `build(*constants)`: a graph of constants only, which
    OpenVINO folds with its ops' `evaluate` while compiling. Where the CPU plugin's SIMD kernels deviate
    from the op specs (exp(NaN) = inf, round half away from zero of 0.49999997 = 1), this is the oracle."""
    import openvino as ov
    import openvino.opset13 as ops

    node = build(*[ops.constant(a) for a in arrays])
    nodes = node if isinstance(node, list) else [node]
    compiled = ov_core.compile_model(ov.Model([ops.result(n) for n in nodes], [], "folded"), "CPU",
                                     {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled([])
    return [np.asarray(result[out]) for out in compiled.outputs]


def assigned_more_than_once(data_shape: tuple[int, ...], indices) -> np.ndarray:
    """Boolean mask over a ScatterNDUpdate's data: the elements that several of its index tuples assign.

    With reduction `none` OpenVINO's CPU plugin assigns from several threads, so there it keeps whichever
    write lands last: on [[0], [2], [-3], [-3], [0]] (2026.4, 2 threads, 6000 calls) the first update
    stayed in 44% of the calls, the last in 53%, a mix in 4% (its reductions and ScatterElementsUpdate
    apply in order). Tests compare the plugin only outside this mask, and the whole output with
    OpenVINO's reference implementation (`ov_reference`), which applies updates in index order."""
    indices = np.asarray(indices)
    depth = indices.shape[-1]
    counts = np.zeros(data_shape[:depth], np.int64)
    if depth and indices.size:
        tuples = indices.reshape(-1, depth) % np.array(data_shape[:depth])
        np.add.at(counts, tuple(tuples.T), 1)
    return np.broadcast_to((counts > 1).reshape(counts.shape + (1,) * (len(data_shape) - depth)), data_shape)


def onnx_backend_cases(op_type: str) -> list:
    """The ONNX backend node test cases of one operator, exactly as `collect_testcases` builds them.

    `collect_testcases(None)` runs the generators of every ONNX operator (6-10 s), and returns nothing
    for an operator if an earlier `collect_testcases("OtherOp")` in this process already imported the
    generator modules with a filter. So the operator's generators (the `export*` functions of
    `onnx.backend.test.case.node.<op_type lowercased>.<op_type>`) are re-run into an empty case list,
    with the module's global lists restored afterwards (np.random seeded as the generators' metaclass
    does). Should those onnx internals change, fall back to the public `collect_testcases(None)`.
    """
    import importlib

    import onnx.backend.test.case.node as node_cases

    def of_type(cases):
        return [c for c in cases if any(n.op_type == op_type for n in c.model.graph.node)]

    try:
        generators = getattr(importlib.import_module(f"onnx.backend.test.case.node.{op_type.lower()}"), op_type)
        saved = (node_cases._TargetOpType, list(node_cases._NodeTestCases), dict(node_cases._existing_names))
        node_cases._TargetOpType = op_type
        node_cases._NodeTestCases.clear()
        node_cases._existing_names.clear()
        try:
            for name in sorted(dir(generators)):
                if name.startswith("export"):
                    np.random.seed(0)
                    getattr(generators, name)()
            cases = of_type(node_cases._NodeTestCases)
        finally:
            node_cases._TargetOpType = saved[0]
            node_cases._NodeTestCases[:] = saved[1]
            node_cases._existing_names.clear()
            node_cases._existing_names.update(saved[2])
        if cases:
            return cases
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    import warnings

    with warnings.catch_warnings():  # other operators' generators warn about their own overflows
        warnings.simplefilter("ignore")
        return of_type(node_cases.collect_testcases(None))


# --- Paths, the README and the CLI ----------------------------------------------------------------


def readme_snippet(containing: str) -> str:
    readme = (ROOT / "README.md").read_text()
    (snippet,) = [s.split("```", 1)[0] for s in readme.split("```python\n")[1:] if containing in s.split("```", 1)[0]]
    return snippet


def run_cli(*args, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("IRGRID_NUM_THREADS", None)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "irgrid", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=full_env)


def assert_one_line_error(proc: subprocess.CompletedProcess, code: int = 2, *fragments: str) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    err = proc.stderr.strip()
    assert err, "an error must be reported on stderr"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in err, err
    return err


# --- Networks several tests build -----------------------------------------------------------------


# The defaults of ExperimentalDetectronPriorGridGenerator-6's attributes, as the tests write them.
PRIOR_GRID_ATTRS = {"flatten": True, "h": 0, "w": 0, "stride_x": 0.0, "stride_y": 0.0}


def prior_grid_network(name: str, priors, feat_shape, image_shape, **attrs):
    """IRBuilder `name` with "priors" (a Parameter of that shape when `priors` is a tuple, else a Const of
    that array), Parameters "feat" and "image", and an ExperimentalDetectronPriorGridGenerator-6 "pg" on
    them (`attrs` over PRIOR_GRID_ATTRS) as result "rois"; returns (builder, priors, feat, image) for the
    caller to add to and save."""
    from irgrid.builder import IRBuilder

    b = IRBuilder(name)
    priors = b.parameter("priors", priors) if isinstance(priors, tuple) else b.const(priors, "priors")
    feat = b.parameter("feat", feat_shape)
    image = b.parameter("image", image_shape)
    (grid,) = b.layer("ExperimentalDetectronPriorGridGenerator", "opset6", [priors, feat, image],
                      {**PRIOR_GRID_ATTRS, **attrs}, name="pg")
    b.result(grid, "rois")
    return b, priors, feat, image


def deform_conv_ir(path, arrays: dict[str, np.ndarray], attrs: dict, element_type: str = "f32"):
    """One DeformConv irgrid1 layer whose inputs are Parameters named as `arrays` (in ONNX order)."""
    from irgrid.builder import IRBuilder

    b = IRBuilder("deform_conv")
    params = [b.parameter(name, a.shape, element_type) for name, a in arrays.items()]
    (y,) = b.layer("DeformConv", "irgrid1", params, attrs, name="Y")
    b.result(y)
    return b.save(path)


def random_deform_inputs(rng, c, oc, group, dg, in_dims, kernel, strides, dilations, pads, mask, bias,
                         scale, n=2) -> tuple[dict[str, np.ndarray], dict]:
    r = len(in_dims)
    out_dims = [(l + pads[a] + pads[a + r] - dilations[a] * (k - 1) - 1) // strides[a] + 1
                for a, (l, k) in enumerate(zip(in_dims, kernel))]
    taps = dg * int(np.prod(kernel))
    arrays = {"X": rng.standard_normal((n, c, *in_dims)).astype(np.float32),
              "W": rng.standard_normal((oc, c // group, *kernel)).astype(np.float32),
              "offset": (scale * rng.standard_normal((n, taps * r, *out_dims))).astype(np.float32)}
    if bias:
        arrays["B"] = rng.standard_normal(oc).astype(np.float32)
    if mask:
        if not bias:
            arrays["B"] = np.zeros(oc, np.float32)  # ONNX's inputs are positional: B precedes mask
        arrays["mask"] = rng.uniform(-0.5, 1.5, (n, taps, *out_dims)).astype(np.float32)
    attrs = {"group": group, "offset_group": dg, "kernel_shape": list(kernel), "strides": list(strides),
             "dilations": list(dilations), "pads": list(pads)}
    return arrays, attrs


OPSET9_MODES = {"nearest": "nearest", "linear": "bilinear", "cubic": "bicubic"}


def build_pair(path, x_shape, size, element_type="f32", mode="linear", padding="zeros", align_corners=False,
               grid_align_corners=False, version="irgrid1", size_input=False, grid_output=False,
               theta_type=None, consumers=1):
    """X, theta -> AffineGrid(theta, size) -> GridSample(X, grid) [x consumers] as an IR."""
    from irgrid.builder import IRBuilder

    rank = len(x_shape) - 2
    b = IRBuilder("spatial_transformer")
    x = b.parameter("X", x_shape, element_type)
    theta = b.parameter("theta", (x_shape[0], rank, rank + 1), theta_type or element_type)
    sv = b.parameter("size", (len(size),), "i64") if size_input else b.const(np.array(size, np.int64), "size")
    (grid,) = b.layer("AffineGrid", "irgrid1", [theta, sv], {"align_corners": grid_align_corners}, name="grid")
    mode_name = OPSET9_MODES[mode] if version == "opset9" else mode
    for k in range(consumers):
        (y,) = b.layer("GridSample", version, [x, grid], {"mode": mode_name, "padding_mode": padding,
                                                          "align_corners": align_corners}, name=f"warped{k or ''}")
        b.result(y)
    if grid_output:
        b.result(grid)
    return b.save(path)


def random_theta(rng, n, rank, dtype):
    """Near-identity affine maps (rotation, scale, shear, shift) with points in and outside [-1, 1]."""
    theta = np.concatenate([np.eye(rank)[None].repeat(n, 0), np.zeros((n, rank, 1))], axis=2)
    return (theta + 0.4 * rng.standard_normal((n, rank, rank + 1))).astype(dtype)


F32 = {"INFERENCE_PRECISION_HINT": "f32"}


def mixed_model():
    """Convolution, Relu and MVN (native; irgrid lacks MVN) around an irgrid1 3-D cubic GridSample whose grid comes
    from a MatMul: the layers OpenVINO runs and the one only irgrid has, in one graph."""
    import openvino as ov
    import openvino.opset13 as ops

    import irgrid.openvino as iov

    rng = np.random.default_rng(7)
    vol = ops.parameter([1, 2, 5, 6, 7], np.float32, name="volume")
    coords = ops.parameter([1, 4, 4, 6, 3], np.float32, name="coords")
    weights = ops.constant(rng.uniform(-0.5, 0.5, (3, 2, 1, 1, 1)).astype(np.float32))
    features = ops.relu(ops.convolution(vol, weights, [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1]))
    mixing = ops.constant(np.array([[0.9, 0.1, 0.0], [-0.1, 0.9, 0.1], [0.0, 0.05, 1.0]], np.float32))
    grid = ops.matmul(coords, mixing, False, False)
    sampled = iov.op_class("GridSample", "irgrid1")([features.output(0), grid.output(0)], mode="cubic",
                                                    padding_mode="zeros", align_corners=False)
    normalised = ops.mvn(sampled.output(0), ops.constant(np.array([2, 3, 4], np.int64)), True, 1e-5, "inside_sqrt")
    normalised.output(0).get_tensor().set_names({"normalised"})
    feeds = {"volume": rng.standard_normal((1, 2, 5, 6, 7)).astype(np.float32),
             "coords": rng.uniform(-1.1, 1.1, (1, 4, 4, 6, 3)).astype(np.float32)}
    return ov.Model([ops.result(normalised.output(0))], [vol, coords], "mixed"), feeds, (vol, coords, features,
                                                                                         grid, weights, mixing)


def gridsample_onnx(path, rank: int, mode: str, domain: str = "", **attrs):
    """A one-node ONNX GridSample model of `rank` spatial dims saved at `path`; returns inputs for it."""
    import onnx
    from onnx import TensorProto, helper

    spatial = (3, 4, 5)[:rank]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2, *spatial])
    g = helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, *(2, 3, 2)[:rank], rank])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], domain=domain, mode=mode, **attrs)
    imports = [helper.make_opsetid("", 20)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(helper.make_graph([node], "gs", [x, g], [y]), opset_imports=imports)
    onnx.save(model, str(path))
    rng = np.random.default_rng(rank)
    return {"X": rng.standard_normal([1, 2, *spatial]).astype(np.float32),
            "grid": rng.uniform(-1.2, 1.2, [1, *(2, 3, 2)[:rank], rank]).astype(np.float32)}


# --- Oracles: onnxruntime, onnx.reference, OpenVINO -----------------------------------------------


def run_ort_grid_sample(x64: np.ndarray, grid64: np.ndarray, mode: str, padding: str, align_corners: bool) -> np.ndarray:
    """onnxruntime GridSample-20 in f64 (2-D and 3-D)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=padding,
                            align_corners=int(align_corners))
    graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
                                             helper.make_tensor_value_info("grid", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"X": np.ascontiguousarray(x64, np.float64),
                              "grid": np.ascontiguousarray(grid64, np.float64)})[0]


def gridsample_onnx_model(dtype, mode: str, padding: str, align_corners: bool, opset: int = 20):
    """A one-node ONNX GridSample model in `dtype` (f32 or f64)."""
    from onnx import TensorProto, helper

    et = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE}[np.dtype(dtype)]
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=padding,
                            align_corners=int(align_corners))
    graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("X", et, None),
                                             helper.make_tensor_value_info("grid", et, None)],
                              [helper.make_tensor_value_info("Y", et, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_onnx_reference(x, grid, mode, padding, align_corners):
    from onnx.reference import ReferenceEvaluator

    model = gridsample_onnx_model(x.dtype, mode, padding, align_corners, opset=22)
    return ReferenceEvaluator(model).run(None, {"X": x, "grid": grid})[0]


def run_ort_pair(x, theta, size, mode, padding, align_corners, grid_align_corners):
    """onnxruntime's AffineGrid-20 -> GridSample-20 (build_pair's network)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    et = TensorProto.DOUBLE if x.dtype == np.float64 else TensorProto.FLOAT
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=int(grid_align_corners)),
             helper.make_node("GridSample", ["X", "grid"], ["Y"], mode=mode, padding_mode=padding,
                              align_corners=int(align_corners))]
    graph = helper.make_graph(nodes, "st", [helper.make_tensor_value_info("X", et, None),
                                            helper.make_tensor_value_info("theta", et, None),
                                            helper.make_tensor_value_info("size", TensorProto.INT64, None)],
                              [helper.make_tensor_value_info("Y", et, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x, "theta": theta, "size": np.array(size, np.int64)})[0]


def mixed_reference(feeds):
    """OpenVINO runs the native parts, onnx.reference the 3-D cubic GridSample in between."""
    import openvino as ov
    import openvino.opset13 as ops
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    _, _, parts = mixed_model()
    vol, coords, features, grid, _, _ = parts
    core = ov.Core()
    feats, grid_values = core.compile_model(ov.Model([ops.result(features), ops.result(grid)], [vol, coords]),
                                            "CPU", F32)(feeds).values()
    node = helper.make_node("GridSample", ["X", "grid"], ["Y"], mode="cubic", padding_mode="zeros", align_corners=0)
    graph = helper.make_graph([node], "gs", [helper.make_tensor_value_info("X", TensorProto.DOUBLE, None),
                                             helper.make_tensor_value_info("grid", TensorProto.DOUBLE, None)],
                              [helper.make_tensor_value_info("Y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    sampled = ReferenceEvaluator(model).run(None, {"X": feats.astype(np.float64), "grid": grid_values.astype(np.float64)})[0]
    x = ops.parameter(list(sampled.shape), np.float32, name="x")
    mvn = ops.mvn(x, ops.constant(np.array([2, 3, 4], np.int64)), True, 1e-5, "inside_sqrt")
    return core.compile_model(ov.Model([ops.result(mvn.output(0))], [x]), "CPU", F32)([sampled.astype(np.float32)])[0]


def gridsample_backend_tolerance(case) -> dict:
    if case.name == "test_gridsample_bicubic":
        return {"rtol": 1e-4, "atol": 5e-5}
    return {"rtol": 1e-5, "atol": 1e-6}


# --- Running irgrid -------------------------------------------------------------------------------


def first_output(path, feed: dict[str, np.ndarray], threads: int = 2) -> np.ndarray:
    """Check the IR clean, compile it and return its first output on `feed`."""
    import irgrid

    assert irgrid.check_model(path) == []
    return next(iter(irgrid.compile_model(path, threads=threads)(feed).values()))


def unaligned_out(shape, dtype, offset: int = 16) -> np.ndarray:
    """An empty C-contiguous array of `shape` that starts `offset` bytes past a 64-byte line (16: where
    numpy's large arrays often start; 32: where OpenVINO hands an op its output)."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.empty(size + 128, np.uint8)
    start = -raw.ctypes.data % 64 + offset
    return raw[start:start + size].view(dtype).reshape(shape)


# --- GridSample's vector path against the oracles (tests/ops/test_grid_sample_simd.py, _interleave.py) ---


PADDINGS = ("zeros", "border", "reflection")


TOLERANCES = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float64: {"rtol": 1e-12, "atol": 1e-12}}


SPECIALS = (np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.0**23, -(2.0**23), 1e5, -1e5, 7.5)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two outputs hold the same bits, a NaN matching any NaN: where two NaN operands meet in a
    fused multiply-add the CPU passes on the one the compiler made the first, so a NaN's sign and payload
    may change with a rebuild (docs/semantics.md, "Rounding")."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    nan = np.isnan(a)
    return bool(np.array_equal(nan, np.isnan(b)) and a[~nan].tobytes() == b[~nan].tobytes())


def keyed_rng(*key) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dyadic(rng, shape, reach: float, step: int = 256) -> np.ndarray:
    return np.round(rng.uniform(-reach, reach, shape) * step) / step


def oracle_step(rank: int, mode: str) -> int:
    """Grid steps (1/step) the oracle computes exactly: onnx.reference's 3-D cubic weights lose about
    1e-7 on finer ones (test_grid_sample_oracles.py uses 1/16 for cubic too)."""
    return 16 if rank == 3 and mode == "cubic" else 256


def run_oracle(x64: np.ndarray, grid64: np.ndarray, mode: str, padding: str, align: bool) -> np.ndarray:
    """onnxruntime GridSample-20 in f64; onnx.reference's GridSample-22 for 3-D cubic, which onnxruntime
    does not run (and which is right for cubic + border only where no coordinate needs clamping:
    docs/semantics.md)."""
    if grid64.shape[-1] == 3 and mode == "cubic":
        return run_onnx_reference(np.asarray(x64, np.float64), np.asarray(grid64, np.float64), mode, padding, align)
    return run_ort_grid_sample(x64, grid64, mode, padding, align)


def check_special_coordinates(rank: int, mode: str, padding: str, dtype, batch: int, channels: int) -> None:
    """The vector path (whichever of its kernels the current policy picks) on a grid with 30% special
    points: ordinary ones match the oracle (run_oracle) on a grid with those zeroed, special ones the
    scalar path."""
    from irgrid._kernels import sampling
    from irgrid.ops.grid_sample import sample

    rng = keyed_rng("special", rank, mode, padding)
    dims, out_dims = ((7, 9), (5, 11)) if rank == 2 else ((3, 4, 5), (3, 2, 9))
    x = rng.uniform(-1, 1, (batch, channels, *dims))
    grid = dyadic(rng, (batch, *out_dims, rank), 1.3, oracle_step(rank, mode))
    flat = grid.reshape(-1, rank)
    special = rng.random(flat.shape[0]) < 0.3
    for i in np.nonzero(special)[0]:
        flat[i, rng.integers(rank)] = SPECIALS[rng.integers(len(SPECIALS))]
    clean = flat.copy()
    clean[special] = 0
    expected = run_oracle(x, clean.reshape(grid.shape), mode, padding, False).reshape(batch, channels, -1)
    was = sampling.use_simd(True)
    try:
        vector = sample(x.astype(dtype), grid.astype(dtype), mode, padding, False, threads=2)
        sampling.use_simd(False)
        scalar = sample(x.astype(dtype), grid.astype(dtype), mode, padding, False, threads=2)
    finally:
        sampling.use_simd(was)
    vector, scalar = vector.reshape(batch, channels, -1), scalar.reshape(batch, channels, -1)
    special = special.reshape(batch, -1)
    for b in range(batch):
        np.testing.assert_allclose(vector[b][:, ~special[b]], expected[b][:, ~special[b]], **TOLERANCES[dtype])
        np.testing.assert_allclose(vector[b][:, special[b]], scalar[b][:, special[b]], **TOLERANCES[dtype])


def kept_taps(grid: np.ndarray, dims: tuple[int, ...], mode: str, align: bool) -> set[tuple[int, ...]]:
    """Every in-range tap (zeros padding) some point of `grid` (..., rank; innermost first) reads."""
    per_dim = {"nearest": [0], "linear": [0, 1], "cubic": [-1, 0, 1, 2]}[mode]
    kept = set()
    for point in grid.reshape(-1, grid.shape[-1]):
        taps = []
        for k, length in enumerate(dims):
            g = float(point[len(dims) - 1 - k])
            pixel = (g + 1) / 2 * (length - 1) if align else ((g + 1) * length - 1) / 2
            base = int(np.rint(pixel)) if mode == "nearest" else int(np.floor(pixel))
            taps.append([i for i in (base + j for j in per_dim) if 0 <= i < length])
        kept.update(itertools.product(*taps))
    return kept


def check_dropped_taps(rank: int, mode: str, align: bool, dtype, dims: tuple[int, ...], channels: int) -> None:
    """Sample X poisoned with Inf/NaN everywhere no kept tap of a zeros-padded grid reads: finite, and
    the oracle's (run_oracle) result on X with the poison zeroed."""
    from irgrid.ops.grid_sample import sample

    rng = keyed_rng("poison", rank, mode, align)
    out_dims = (9, 5) if rank == 2 else (3, 3, 5)
    grid = rng.choice([-1.25, -1.125, -1.0, -0.875, 0.875, 1.0, 1.125, 1.25, 0.0], (1, *out_dims, rank))
    x_clean = rng.uniform(-1, 1, (1, channels, *dims))
    kept = kept_taps(grid, dims, mode, align)
    x = np.where(rng.random(x_clean.shape) < 0.5, np.inf, np.nan)
    for index in kept:
        x[(slice(None), slice(None), *index)] = x_clean[(slice(None), slice(None), *index)]
    expected = run_oracle(np.where(np.isfinite(x), x, 0), grid, mode, "zeros", align)
    got = sample(x.astype(dtype), grid.astype(dtype), mode, "zeros", align, threads=2)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, expected, **TOLERANCES[dtype])

"""irgrid's native OpenVINO extension library (kernels/openvino, built by `pip install .`).

What it must be: a library OpenVINO loads without Python (one exported symbol, no Python or OpenMP
symbol, no libpython), carrying the irgrid-owned operators with irgrid's attribute parsing, shape
inference and error wording (compared with irgrid's Python ops, which run irgrid's registry code), and
the same bits as irgrid's runtime, whose kernels it shares. Numeric oracles: irgrid's runtime bitwise
(the same C core; f32), the Python ops inside OpenVINO bitwise (every dtype: the CPU plugin converts
around both alike), and the ONNX backend node cases (onnx's own expected outputs, the tolerances of
test_grid_sample_onnx_backend.py). A missing library fails these tests: it is never skipped.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

import irgrid
import irgrid.openvino as iov
from irgrid.builder import IRBuilder
from irgrid.openvino import native
from oracles import ROOT, gridsample_backend_tolerance, onnx_backend_cases

F32 = {"INFERENCE_PRECISION_HINT": "f32"}
# The line of an irgrid error inside OpenVINO's message: its class, where, why.
ERROR_LINE = re.compile(r"^[A-Z]\w*Error: .*$", re.M)


@cache
def native_core() -> ov.Core:
    """One Core for the session: it holds the library, and freeing it before the ops read through it
    would unload their code under them (as with any OpenVINO extension library)."""
    core = ov.Core()
    core.add_extension(str(iov.library_path()))
    return core


@cache
def python_core() -> ov.Core:
    core = ov.Core()
    core.add_extension(iov.extensions())
    return core


# --- what the library is ------------------------------------------------------------------------

def test_library_is_built_for_this_openvino():
    path = iov.library_path()
    assert path.is_file() and path.name == native.LIBRARY_NAME
    assert native.built_for().split("-")[0] == ov.__version__.split("-")[0]


def test_exports_only_create_extensions_and_needs_no_python():
    path = str(iov.library_path())
    defined = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    assert [line.split()[-1] for line in defined.splitlines()] == ["create_extensions"]
    undefined = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True, text=True,
                               check=True).stdout.split()
    assert not [s for s in undefined if s.startswith(("Py", "_Py", "GOMP_", "omp_"))]
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]", subprocess.run(["readelf", "-d", path], capture_output=True,
                                                                text=True, check=True).stdout)
    assert needed and not [lib for lib in needed if "python" in lib or "gomp" in lib]


@pytest.mark.parametrize("name", sorted(native.GENERATED))
def test_generated_files_are_current(name):
    assert (ROOT / "kernels/openvino" / name).read_text() == native.GENERATED[name](), \
        f"run `python -m irgrid.openvino.native` to regenerate kernels/openvino/{name}"


# A minimal valid layer of each irgrid-owned operator: (inputs as (shape, element type)).
MINIMAL = {
    ("GridSample", "irgrid1"): [("1,1,4,4", "f32"), ("1,2,2,2", "f32")],
    ("AffineGrid", "irgrid1"): [("1,2,3", "f32"), ("4", "i64")],
    ("DeformConv", "irgrid1"): [("1,1,4,4", "f32"), ("1,1,3,3", "f32"), ("1,18,2,2", "f32")],
}
_PRECISIONS = {"f32": "FP32", "f64": "FP64", "f16": "FP16", "bf16": "BF16", "i64": "I64", "i32": "I32", "u8": "U8"}


def single_layer(tmp_path: Path, type_: str, attrs: dict[str, str], inputs: list[tuple[str, str]],
                 version: str = "irgrid1") -> Path:
    """An IR of Parameters (shape text, element type) feeding one layer; its output port's dims are left
    to OpenVINO's shape inference (the op's own)."""
    layers, edges, n = [], [], len(inputs)
    for i, (shape, et) in enumerate(inputs):
        layers.append(f'<layer id="{i}" name="in{i}" type="Parameter" version="opset1"><data shape="{shape}" '
                      f'element_type="{et}"/><output><port id="0" precision="{_PRECISIONS[et]}"/></output></layer>')
        edges.append(f'<edge from-layer="{i}" from-port="0" to-layer="{n}" to-port="{i}"/>')
    data = " ".join(f'{key}="{value}"' for key, value in attrs.items())
    ports = "".join(f'<port id="{i}"/>' for i in range(n))
    layers.append(f'<layer id="{n}" name="op" type="{type_}" version="{version}"><data {data}/><input>{ports}</input>'
                  f'<output><port id="{n}" precision="FP32"/></output></layer>')
    layers.append(f'<layer id="{n + 1}" name="out" type="Result" version="opset1"><input><port id="0"/></input></layer>')
    edges.append(f'<edge from-layer="{n}" from-port="{n}" to-layer="{n + 1}" to-port="0"/>')
    path = tmp_path / f"{type_}.xml"
    path.write_text(f'<?xml version="1.0"?><net name="single" version="11"><layers>{"".join(layers)}</layers>'
                    f'<edges>{"".join(edges)}</edges></net>')
    path.with_suffix(".bin").write_bytes(b"")
    return path


def test_every_irgrid_owned_operator_is_in_the_library(tmp_path):
    owned = {(s.type, v) for s in irgrid.registry.all_specs() if not s.native for v in s.versions}
    assert owned == set(MINIMAL) == set(re.findall(r'\{"(\w+)", "(\w+)", \d', native.descriptions()))
    core = native_core()
    for (type_, version), inputs in MINIMAL.items():
        (op,) = [op for op in core.read_model(single_layer(tmp_path, type_, {}, inputs, version)).get_ordered_ops()
                 if op.get_type_name() == type_]
        assert op.get_type_info().version_id == version


def test_missing_or_mismatched_library_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "_HERE", tmp_path)
    with pytest.raises(native.NativeLibraryError, match="was not built .*pip install"):
        native.library_path()
    (tmp_path / native.LIBRARY_NAME).write_bytes(b"")
    (tmp_path / "libirgrid_openvino.json").write_text('{"openvino": "2020.1.0-1-abc"}')
    with pytest.raises(native.NativeLibraryError, match="built for OpenVINO 2020.1.0-1-abc, this process imports"):
        native.library_path()


def test_config_names_the_library():
    assert str(iov.library_path()) in irgrid.config.config()["openvino_library"]


# --- attributes and shapes, as irgrid's registry code gives them (through the Python ops) ---------

def _read(core: ov.Core, path: Path, type_: str, what):
    """What `what` says of the model's `type_` layer once `core` read the IR, or the irgrid error line."""
    try:
        model = core.read_model(str(path))
    except RuntimeError as exc:
        lines = ERROR_LINE.findall(str(exc))
        assert lines, str(exc)
        return lines[0]
    (op,) = [op for op in model.get_ordered_ops() if op.get_type_name() == type_]
    return tuple(map(str, what(op)))


BAD_ATTRIBUTES = [
    ("GridSample", {"mode": "cubicx"}), ("GridSample", {"mode": " Bicubic "}), ("GridSample", {"align_corners": "yes"}),
    ("GridSample", {"align_corners": "2"}), ("GridSample", {"padding_mode": "it's"}), ("GridSample", {"mode": ""}),
    ("AffineGrid", {"align_corners": "truee"}), ("AffineGrid", {"align_corners": " TRUE "}),
    ("DeformConv", {"group": "1.5"}), ("DeformConv", {"group": "0"}), ("DeformConv", {"group": "99999999999999999999"}),
    ("DeformConv", {"group": "9223372036854775808"}), ("DeformConv", {"group": "-9223372036854775808"}),
    ("DeformConv", {"strides": "1, 0"}), ("DeformConv", {"strides": "[2,2]"}), ("DeformConv", {"pads": "1,a"}),
    ("DeformConv", {"dilations": ""}), ("DeformConv", {"pads": "1,2,3"}), ("DeformConv", {"kernel_shape": "2,2"}),
    ("DeformConv", {"offset_group": "3"}), ("DeformConv", {"strides": "1,1,1"}), ("DeformConv", {"group": "+1"}),
]


@pytest.mark.parametrize("type_, attrs", BAD_ATTRIBUTES, ids=[f"{t}-{a}" for t, a in BAD_ATTRIBUTES])
def test_attributes_parse_as_irgrid_parses_them(tmp_path, type_, attrs):
    """Each case reads the same through the library and through irgrid's Python ops: the same error line,
    or, where irgrid accepts the text, the same canonical attributes and output."""
    path = single_layer(tmp_path, type_, attrs, MINIMAL[(type_, "irgrid1")])
    python, library = (_read(core, path, type_, lambda op: (op.get_attributes(), op.get_output_partial_shape(0)))
                       for core in (python_core(), native_core()))
    assert python == library


SHAPES = [
    ("GridSample", {"mode": "bicubic"}, [("1,2,?,5", "f32"), ("?,3,4,2", "f32")]),
    ("GridSample", {}, [("1,2,5", "f32"), ("1,3,4,2", "f32")]),
    ("GridSample", {}, [("2,3,5,6,7", "f32"), ("2,4,5,6,3", "f32")]),
    ("GridSample", {}, [("2,3,5,6", "f32"), ("3,4,5,2", "f32")]),
    ("GridSample", {}, [("2,3,5", "f32"), ("2,4,2", "f32")]),
    ("GridSample", {}, [("2,3", "f32"), ("2,3", "f32")]),
    ("GridSample", {}, [("2,3,0,4", "f32"), ("2,1,1,2", "f32")]),
    ("GridSample", {}, [("2,3,4,4", "f32"), ("2,1,1,2", "i32")]),
    ("GridSample", {}, [("2,3,4,4", "u8"), ("2,1,1,2", "f16")]),
    ("GridSample", {"mode": "cubic"}, [("1,1,2,2,2,2,2,2,2", "f32"), ("1,1,1,1,1,1,1,1,7", "f32")]),
    ("GridSample", {}, [("...", "f32"), ("1,1,1,2", "f32")]),
    ("AffineGrid", {}, [("2,2,3", "f32"), ("4", "i64")]),
    ("AffineGrid", {}, [("2,3,4", "f32"), ("?", "i64")]),
    ("AffineGrid", {}, [("2,?,?", "f32"), ("?", "i64")]),
    ("AffineGrid", {}, [("2,3,3", "f32"), ("?", "i64")]),
    ("AffineGrid", {}, [("2,2,3", "f32"), ("5", "i64")]),
    ("AffineGrid", {}, [("2,2,3", "f32"), ("6", "i32")]),
    ("AffineGrid", {}, [("2,2,3", "i32"), ("4", "i64")]),
    ("AffineGrid", {}, [("2,2,3", "f32"), ("4", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32"), ("1,18,6,6", "f32")]),
    ("DeformConv", {"pads": "1", "strides": "2"}, [("1,4,8,?", "f32"), ("2,4,3,3", "f32"), ("1,18,4,?", "f32")]),
    ("DeformConv", {"group": "2", "offset_group": "2"},
     [("2,4,9,8,7", "f32"), ("6,2,2,2,2", "f32"), ("2,48,8,7,6", "f32"), ("6", "f32"), ("2,16,8,7,6", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32"), ("1,18,6,5", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,3,3,3", "f32"), ("1,18,6,6", "f32")]),
    ("DeformConv", {}, [("1,4,2,2", "f32"), ("2,4,3,3", "f32"), ("1,18,6,6", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f64"), ("1,18,6,6", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32"), ("1,18,6,6", "f32"), ("3", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32"), ("1,18,6,6", "f32"), ("0", "f32"), ("1,9,6,6", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,0,3", "f32"), ("1,18,6,6", "f32")]),
    ("DeformConv", {}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32")]),
    # Counts past int64 (found by tests/fuzz/native/fuzz_openvino_ops: the library's int64 products
    # overflowed, undefined behaviour): 2^62 offset groups x a 3x3 kernel, then a dilated kernel of 2^63 + 1.
    ("DeformConv", {"offset_group": "4611686018427387904"},
     [("1,4611686018427387904,8,8", "f32"), ("2,4611686018427387904,3,3", "f32"), ("1,18,6,6", "f32")]),
    ("DeformConv", {"offset_group": "4611686018427387904"},
     [("1,4611686018427387904,8,8", "f32"), ("2,4611686018427387904,3,3", "f32"), ("1,?,6,6", "f32"),
      ("2", "f32"), ("1,9,6,6", "f32")]),
    ("DeformConv", {"dilations": "4611686018427387904"}, [("1,4,8,8", "f32"), ("2,4,3,3", "f32"), ("1,18,6,6", "f32")]),
]


@pytest.mark.parametrize("type_, attrs, inputs", SHAPES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(SHAPES)])
def test_shape_inference_as_irgrid_infers(tmp_path, type_, attrs, inputs):
    """Static, dynamic and wrong shapes and types: the same output shape and type, or the same error line."""
    path = single_layer(tmp_path, type_, attrs, inputs)
    python, library = (_read(core, path, type_,
                             lambda op: (op.get_output_partial_shape(0), op.get_output_element_type(0)))
                       for core in (python_core(), native_core()))
    assert python == library


# --- where users meet it ------------------------------------------------------------------------

SAMPLE = ROOT / "samples" / "volume_warp"


@pytest.fixture(scope="module")
def cpp_program(tmp_path_factory) -> Path:
    """samples/cpp built against the openvino package's CMake files, as its CMakeLists.txt says."""
    import openvino.utils

    build = tmp_path_factory.mktemp("cpp")
    cmake_dir = openvino.utils.get_cmake_path()
    subprocess.run(["cmake", "-S", str(ROOT / "samples" / "cpp"), "-B", str(build), f"-DOpenVINO_DIR={cmake_dir}",
                    f"-DTBB_DIR={cmake_dir}"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    return build / "run_model"


def test_cpp_program_runs_a_sample_without_python(cpp_program, tmp_path):
    """A C++ program in an empty environment (no PYTHONPATH, no LD_LIBRARY_PATH) loads the library and runs
    the bundled 3-D cubic warp: the bits of the same model in OpenVINO with irgrid's Python ops (the glue
    layers run in OpenVINO both ways), and irgrid's runtime within f32 rounding of the glue (1e-5)."""
    inputs = dict(np.load(SAMPLE / "inputs.npz"))
    reference = python_core().compile_model(str(SAMPLE / "model.xml"), "CPU", F32)
    files = []
    for port in reference.inputs:
        files.append(tmp_path / f"{port.get_any_name()}.raw")
        np.ascontiguousarray(inputs[port.get_any_name()]).tofile(files[-1])
    proc = subprocess.run(["env", "-i", str(cpp_program), str(iov.library_path()), str(SAMPLE / "model.xml"),
                           *map(str, files), "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    expected = reference(inputs)
    runtime = irgrid.compile_model(SAMPLE / "model.xml")(inputs)
    for k, (port, (name, ours)) in enumerate(zip(reference.outputs, runtime.items())):
        want = np.asarray(expected[port])
        got = np.fromfile(tmp_path / f"out{k}.raw", dtype=want.dtype).reshape(want.shape)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, ours, rtol=1e-5, atol=1e-5, err_msg=name)


def test_benchmark_app_runs_the_library():
    """The benchmark_app the openvino package installs, with -extensions (library paths only)."""
    benchmark_app = Path(sys.executable).with_name("benchmark_app")  # the openvino package's script
    proc = subprocess.run([str(benchmark_app), "-m", str(SAMPLE / "model.xml"),
                           "-extensions", str(iov.library_path()), "-d", "CPU", "-niter", "5", "-hint", "latency",
                           "-infer_precision", "f32"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert re.search(r"Throughput:\s+[\d.]+ FPS", proc.stdout), proc.stdout[-2000:]


# --- the same numbers -----------------------------------------------------------------------------

def _compile(core: ov.Core, path: Path, threads: int = 0, streams: int = 1) -> ov.CompiledModel:
    config = dict(F32, NUM_STREAMS=streams)
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    return core.compile_model(str(path), "CPU", config)


def _random_grid(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform over a little more than [-1, 1], with NaN, +-Inf and huge coordinates sprinkled in."""
    g = rng.uniform(-1.3, 1.3, shape).astype(np.float32)
    flat = g.reshape(-1)
    for start, value in ((3, np.nan), (5, np.inf), (7, -np.inf), (11, 1e31), (13, -3e30), (17, 0.5)):
        flat[start::41] = value
    return g


def _grid_sample_ir(tmp_path: Path, x_shape, g_shape, mode: str, padding: str, align: bool,
                    x_type: str = "f32", g_type: str = "f32") -> Path:
    b = IRBuilder("grid_sample")
    x = b.parameter("x", x_shape, x_type)
    g = b.parameter("g", g_shape, g_type)
    (y,) = b.layer("GridSample", "irgrid1", [x, g], {"mode": mode, "padding_mode": padding, "align_corners": align})
    b.result(y)
    path = tmp_path / "grid_sample.xml"
    b.save(path)
    return path


GRID_SAMPLE_CONFIGS = [  # (x shape, grid's output dims): every path of the kernel (scalar, gather,
    # small one-channel items as one run, interleaved, 2-D and 3-D cubic runs, binned 3-D cubic, cubic's
    # one-channel pixels in 2-D and 3-D, binned in 3-D on a large enough volume, and 2-D nearest by points
    # of one to three channels on AVX-512 CPUs: 512 points and more), ranks 1 to 4
    ((2, 3, 9), (7,)), ((1, 1, 6, 7), (5, 4)), ((40, 1, 11, 13), (9, 9)), ((2, 5, 8, 9), (6, 7)),
    ((1, 16, 12, 10), (9, 11)), ((1, 1, 19, 23), (24, 25)), ((1, 2, 20, 30), (24, 25)), ((2, 3, 15, 17), (16, 20)),
    ((1, 2, 5, 6, 7), (4, 5, 3)), ((1, 9, 6, 7, 8), (5, 6, 7)), ((1, 8, 10, 12, 14), (40, 30, 24)),
    ((1, 1, 6, 7, 8), (8, 9, 10)), ((1, 1, 30, 40, 41), (16, 28, 28)),
    ((1, 2, 3, 4, 3, 4), (2, 3, 2, 3)),
]


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_gives_irgrid_runtime_bits(tmp_path, mode, padding):
    """Random data and grids (NaN, Inf, huge, exact .5 coordinates too) on every path, both alignments,
    at 1 and 2 threads: the bits of irgrid's runtime (the same C core)."""
    rng = np.random.default_rng(abs(hash((mode, padding))) % 2**32)
    for index, (x_shape, out_dims) in enumerate(GRID_SAMPLE_CONFIGS):
        if mode == "cubic" and len(x_shape) > 5:
            continue  # 4**4 taps: the scalar path, covered at rank <= 3 at a tenth of the time
        align = bool(index % 2)
        x = rng.standard_normal(x_shape).astype(np.float32)
        g = _random_grid(rng, (x_shape[0], *out_dims, len(x_shape) - 2))
        path = _grid_sample_ir(tmp_path, x.shape, g.shape, mode, padding, align)
        expected = irgrid.compile_model(path, threads=2)([x, g])
        (want,) = expected.values()
        for threads in (1, 2):
            got = _compile(native_core(), path, threads)([x, g])[0]
            np.testing.assert_array_equal(got, want, err_msg=f"{x_shape} -> {out_dims}, {threads} threads")


@pytest.mark.parametrize("channels", [2, 4])
def test_nearest_on_a_local_grid_gives_irgrid_runtime_bits(tmp_path, channels):
    """2-D nearest of a few channels on a local grid (a turned identity, NaN and Inf sprinkled in), where
    the core plans one scratch shared by the workers from the grid's values (grid_sample.c's
    shared_pixels, planned per call here as in irgrid's runtime): the runtime's bits at 1 and 2
    threads, a scattered grid's too."""
    rng = np.random.default_rng(channels)
    x = rng.standard_normal((1, channels, 70, 90)).astype(np.float32)
    rows, cols = np.meshgrid(np.linspace(-1.05, 1.05, 130), np.linspace(-1.05, 1.05, 150), indexing="ij")
    local = np.stack([np.cos(0.15) * cols - np.sin(0.15) * rows, np.sin(0.15) * cols + np.cos(0.15) * rows], -1)
    local = local[None].astype(np.float32)
    local.reshape(-1)[3::41] = np.nan
    local.reshape(-1)[5::41] = np.inf
    for g in (local, _random_grid(rng, local.shape)):
        path = _grid_sample_ir(tmp_path, x.shape, g.shape, "nearest", "zeros", False)
        (want,) = irgrid.compile_model(path, threads=2)([x, g]).values()
        for threads in (1, 2):
            got = _compile(native_core(), path, threads)([x, g])[0]
            np.testing.assert_array_equal(got, want, err_msg=f"{threads} threads")


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_grid_sample_tuned_on_its_first_inference_gives_irgrid_runtime_bits(tmp_path, monkeypatch, mode):
    """Under IRGRID_AUTO=measure the library's op chooses the kernel's path policies by timing them on a
    shape's first inference (kernels/core/grid_sample_tune.c; 32 channels: interleaved, gather and 8- or
    16-channel candidates): that inference and the next give the bits of irgrid's runtime (which tunes
    too), at 1 and 2 threads."""
    monkeypatch.setenv("IRGRID_AUTO", "measure")
    rng = np.random.default_rng(len(mode))
    x = rng.standard_normal((1, 32, 40, 48)).astype(np.float32)
    g = _random_grid(rng, (1, 64, 64, 2))
    path = _grid_sample_ir(tmp_path, x.shape, g.shape, mode, "zeros", False)
    (want,) = irgrid.compile_model(path, threads=2)([x, g]).values()
    for threads in (1, 2):
        compiled = _compile(native_core(), path, threads)
        for call in ("first", "second"):
            np.testing.assert_array_equal(compiled([x, g])[0], want, err_msg=f"{call} inference, {threads} threads")


_CAPPED_LIBRARY = """
import sys
import numpy as np
import openvino as ov
import irgrid.openvino as iov
core = ov.Core()
core.add_extension(str(iov.library_path()))
compiled = core.compile_model(sys.argv[1], "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 2})
np.save(sys.argv[4], compiled([np.load(sys.argv[2]), np.load(sys.argv[3])])[0])
"""


def test_instruction_set_cap_reaches_the_library(tmp_path):
    """OpenVINO's ONEDNN_MAX_CPU_ISA below AVX2 leaves the library on the scalar path (kernels/core/cpu.h,
    the probes irgrid's runtime reads too): its bits are the runtime's scalar path's, which differ from
    the vector path's FMA sums on these inputs, and it matches onnxruntime."""
    from irgrid._kernels import sampling
    from oracles import TOLERANCES, run_ort_grid_sample

    rng = np.random.default_rng(57)
    x = rng.standard_normal((1, 2, 8, 9)).astype(np.float32)
    g = rng.uniform(-1.1, 1.1, (1, 16, 17, 2)).astype(np.float32)
    path = _grid_sample_ir(tmp_path, x.shape, g.shape, "linear", "zeros", False)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "g.npy", g)
    env = {k: v for k, v in os.environ.items() if k not in ("IRGRID_SIMD", "DNNL_MAX_CPU_ISA")}
    subprocess.run([sys.executable, "-c", _CAPPED_LIBRARY, str(path), "x.npy", "g.npy", "y.npy"], cwd=tmp_path,
                   env={**env, "ONEDNN_MAX_CPU_ISA": "SSE41"}, check=True, capture_output=True)
    got = np.load(tmp_path / "y.npy")
    was = sampling.use_simd(False)
    try:
        (scalar,) = irgrid.compile_model(path, threads=2)([x, g]).values()
    finally:
        sampling.use_simd(was)
    np.testing.assert_array_equal(got, scalar)
    if was:  # the vector path runs in this process (AVX2 and FMA): the cap is what kept the library off it
        (vector,) = irgrid.compile_model(path, threads=2)([x, g]).values()
        assert not np.array_equal(vector, scalar)
    np.testing.assert_allclose(got, run_ort_grid_sample(x.astype(np.float64), g.astype(np.float64), "linear",
                                                        "zeros", False), **TOLERANCES[np.float32])


def test_affine_grid_gives_irgrid_runtime_bits(tmp_path):
    rng = np.random.default_rng(5)
    for rank, dims in ((2, (1, 1)), (2, (7, 300)), (3, (5, 6, 7)), (3, (9, 40, 70))):
        for align in (False, True):
            theta = rng.standard_normal((3, rank, rank + 1)).astype(np.float32)
            b = IRBuilder("affine_grid")
            t = b.parameter("theta", theta.shape)
            size = b.const(np.array([3, 2, *dims], np.int64), "size")
            (grid,) = b.layer("AffineGrid", "irgrid1", [t, size], {"align_corners": align})
            b.result(grid)
            path = tmp_path / "affine_grid.xml"
            b.save(path)
            (want,) = irgrid.compile_model(path)([theta]).values()
            for threads in (1, 2):
                np.testing.assert_array_equal(_compile(native_core(), path, threads)([theta])[0], want)


TYPES = {"f16": np.float16, "f64": np.float64, "u8": np.uint8, "i32": np.int32, "f32": np.float32}


@pytest.mark.parametrize("x_type, g_type", [("f16", "f16"), ("f64", "f64"), ("u8", "f32"), ("i32", "f32"),
                                            ("f32", "f64")])
def test_other_types_as_the_python_ops_compute_them(tmp_path, x_type, g_type):
    """Inside OpenVINO both extensions see the types the CPU plugin hands custom ops, and convert alike:
    the Python ops' bits."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 5, 6, 7)) * 50
    if x_type in ("u8", "i32"):
        x = np.clip(x + 100, 0, 255)
    x = x.astype(TYPES[x_type])
    g = _random_grid(rng, (1, 4, 5, 2)).astype(TYPES[g_type])
    path = _grid_sample_ir(tmp_path, x.shape, g.shape, "cubic", "border", False, x_type, g_type)
    want = _compile(python_core(), path)([x, g])[0]
    got = _compile(native_core(), path)([x, g])[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


ONNX_CASES = [case for op in ("GridSample", "AffineGrid", "DeformConv") for case in onnx_backend_cases(op)]


@pytest.mark.parametrize("case", ONNX_CASES, ids=[c.name for c in ONNX_CASES])
def test_onnx_backend_cases_through_the_library(case, tmp_path):
    """ONNX's own node cases, converted with irgrid's rules and saved as IR (irgrid1 layers where OpenVINO
    lacks the layer), then read and run through the library: onnx's expected outputs (GridSample's
    tolerances of oracles.gridsample_backend_tolerance; AffineGrid and DeformConv rtol 1e-5, atol 1e-5)."""
    import onnx

    path = tmp_path / f"{case.name}.onnx"
    onnx.save(case.model, str(path))
    ir = tmp_path / "converted.xml"
    ov.save_model(ov.convert_model(str(path), extension=iov.conversion_extensions()), str(ir), compress_to_fp16=False)
    compiled = _compile(native_core(), ir)
    names = [value.name for value in case.model.graph.input]
    tolerance = gridsample_backend_tolerance(case) if "gridsample" in case.name else {"rtol": 1e-5, "atol": 1e-5}
    for inputs, expected in case.data_sets:
        feeds = {name: np.asarray(a) for name, a in zip(names, inputs) if name in
                 {n for port in compiled.inputs for n in port.get_names()}}
        result = compiled(feeds)
        for port, want in zip(compiled.outputs, expected):
            np.testing.assert_allclose(result[port], want, **tolerance, err_msg=case.name)


def _deform_conv_case(tmp_path: Path, rng: np.random.Generator, x_shape, w_shape, attrs: dict,
                      dtype=np.float32) -> tuple[Path, list[np.ndarray]]:
    """A DeformConv irgrid1 IR with bias and mask, and random inputs for it (some NaN offsets)."""
    r = len(x_shape) - 2
    pads, strides = attrs.get("pads", [0] * 2 * r), attrs.get("strides", [1] * r)
    out_dims = [(x_shape[2 + d] + pads[d] + pads[r + d] - w_shape[2 + d]) // strides[d] + 1 for d in range(r)]
    k = int(np.prod(w_shape[2:])) * attrs.get("offset_group", 1)
    offset = rng.standard_normal((x_shape[0], k * r, *out_dims)) * 2
    offset.flat[::97] = np.nan
    arrays = [a.astype(dtype) for a in (rng.standard_normal(x_shape), rng.standard_normal(w_shape), offset,
                                        rng.standard_normal(w_shape[0]), rng.uniform(0, 1, (x_shape[0], k, *out_dims)))]
    b = IRBuilder("deform_conv")
    params = [b.parameter(name, a.shape, "f64" if dtype == np.float64 else "f32")
              for name, a in zip(["X", "W", "offset", "B", "mask"], arrays)]
    (y,) = b.layer("DeformConv", "irgrid1", params, attrs)
    b.result(y)
    path = tmp_path / "deform_conv.xml"
    b.save(path)
    return path, arrays


DEFORM_CONV_CONFIGS = [  # (x shape, filters shape, attributes): groups and offset groups, 3-D, the filters
    # first in OpenVINO's MatMul (256 output channels per group), tiles of each layout, and 3-D in the
    # narrow tiles of few output channels (im2col.NARROW_TILE_BYTES: 3 here)
    ((2, 4, 9, 8), (6, 2, 3, 3), {"group": 2, "offset_group": 2, "pads": [1, 1, 1, 1]}),
    ((1, 3, 6, 7, 5), (4, 3, 2, 3, 2), {"strides": [1, 2, 1]}),
    ((1, 16, 12, 24, 24), (16, 16, 3, 3, 3), {"pads": [1, 1, 1, 1, 1, 1]}),
    ((1, 4, 6, 5), (256, 4, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((1, 64, 172, 172), (8, 64, 3, 3), {}),
    ((1, 64, 173, 173), (256, 64, 3, 3), {}),
]


@pytest.mark.parametrize("gemm", ["openvino", "numpy"])
def test_deform_conv_gives_irgrid_runtime_bits(tmp_path, monkeypatch, gemm):
    """DeformConv with groups, offset groups, bias, mask and NaN offsets, on either GEMM irgrid's runtime
    runs (OpenVINO's MatMul; IRGRID_GEMM=numpy: the C core's own), at 1 and 2 threads and on 2 streams:
    the bits of irgrid's runtime, which cuts the same tiles and runs the same GEMMs."""
    monkeypatch.setenv("IRGRID_GEMM", gemm)
    rng = np.random.default_rng(11)
    for x_shape, w_shape, attrs in DEFORM_CONV_CONFIGS:
        if gemm == "numpy" and x_shape[1] == 64:
            continue  # the own GEMM's two tiles: test_deform_conv_semantics.py's tiling test, bitwise
        path, arrays = _deform_conv_case(tmp_path, rng, x_shape, w_shape, attrs)
        (want,) = irgrid.compile_model(path, threads=2)(arrays).values()
        # the NaN offsets reach many outputs (in 3-D 81 offset rows a point), yet thousands stay finite
        assert np.isnan(want).any() and np.isfinite(want).mean() > 0.1
        for threads, streams in ((1, 1), (2, 1), (0, 2)):
            got = _compile(native_core(), path, threads, streams)(arrays)[0]
            np.testing.assert_array_equal(got, want, err_msg=f"{x_shape} {w_shape}, {threads} threads, {streams} streams")


def test_deform_conv_f64_as_the_python_ops_compute_it(tmp_path):
    """An f64 DeformConv reaches both extensions in the type the CPU plugin hands custom ops: the Python
    ops' bits (irgrid's runtime code, its own GEMM for f64)."""
    path, arrays = _deform_conv_case(tmp_path, np.random.default_rng(4), (1, 4, 9, 8), (6, 2, 3, 3),
                                     {"group": 2, "pads": [1, 1, 1, 1]}, np.float64)
    want = _compile(python_core(), path)(arrays)[0]
    got = _compile(native_core(), path)(arrays)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_deform_conv_as_onnxruntime(tmp_path):
    """2-D DeformConv with groups, offset groups, bias and mask: onnxruntime's DeformConv-19 within f32
    rounding (rtol 1e-4, atol 1e-4; the GEMMs sum in other orders) where the offsets are finite."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    x_shape, w_shape, attrs = DEFORM_CONV_CONFIGS[0]
    path, arrays = _deform_conv_case(tmp_path, np.random.default_rng(12), x_shape, w_shape, attrs)
    got = _compile(native_core(), path)(arrays)[0]
    names = ["X", "W", "offset", "B", "mask"]
    node = helper.make_node("DeformConv", names, ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
                                            for n, a in zip(names, arrays)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (ort_y,) = session.run(None, dict(zip(names, arrays)))
    finite = ~np.isnan(got)  # onnxruntime samples a NaN offset as 0; irgrid gives NaN (docs/semantics.md)
    assert finite.mean() > 0.5
    np.testing.assert_allclose(got[finite], ort_y[finite], rtol=1e-4, atol=1e-4)


def test_streams_and_async_requests_give_identical_bits(tmp_path):
    """4 infer requests x 200 runs through AsyncInferQueue, on 1 and 2 streams: every output the same."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 6, 7, 8)).astype(np.float32)
    g = _random_grid(rng, (1, 5, 6, 7, 3))
    path = _grid_sample_ir(tmp_path, x.shape, g.shape, "cubic", "reflection", True)
    (want,) = irgrid.compile_model(path)([x, g]).values()
    for streams in (1, 2):
        queue = ov.AsyncInferQueue(_compile(native_core(), path, streams=streams), 4)
        mismatches = []
        queue.set_callback(lambda request, _: mismatches.append(
            not np.array_equal(request.get_output_tensor(0).data, want, equal_nan=True)))
        for _ in range(200):
            queue.start_async([x, g])
        queue.wait_all()
        assert len(mismatches) == 200 and not any(mismatches)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_as_openvino_grid_sample_9(tmp_path, mode, padding):
    """4-D data on finite random grids: OpenVINO's own GridSample-9 (its CPU plugin at f32) as the oracle,
    rtol 1e-5, atol 2e-5 (both compute in f32, in different orders)."""
    rng = np.random.default_rng(abs(hash(("gs9", mode, padding))) % 2**32)
    for align in (False, True):
        x = rng.standard_normal((2, 5, 9, 11)).astype(np.float32)
        g = rng.uniform(-1.2, 1.2, (2, 7, 6, 2)).astype(np.float32)
        path = _grid_sample_ir(tmp_path, x.shape, g.shape, mode, padding, align)
        got = _compile(native_core(), path)([x, g])[0]
        b = IRBuilder("gs9")
        xp, gp = b.parameter("x", x.shape), b.parameter("g", g.shape)
        spelling = {"linear": "bilinear", "cubic": "bicubic", "nearest": "nearest"}[mode]
        (y,) = b.layer("GridSample", "opset9", [xp, gp], {"mode": spelling, "padding_mode": padding,
                                                        "align_corners": align})
        b.result(y)
        b.save(tmp_path / "gs9.xml")
        want = ov.Core().compile_model(str(tmp_path / "gs9.xml"), "CPU", F32)([x, g])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5, err_msg=f"align_corners={align}")

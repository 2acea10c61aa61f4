"""What the fuzz campaign found (docs/fuzzing.md, "Findings"), each with its reproducer under findings/:
fixed in irgrid's source, and kept here so it stays fixed."""
from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import numpy as np

import pytest

import irgrid
from irgrid.builder import IRBuilder
from irgrid.cli import main
from irgrid.npz import read_arrays

FINDINGS = Path(__file__).resolve().parent / "findings"
RELU = FINDINGS.parent / "seeds" / "layers" / "Relu-opset1.xml"


def _cli_error(*argv) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main([str(a) for a in argv]) == 2
    (line,) = err.getvalue().strip().splitlines()
    return line


@pytest.mark.parametrize("name, message", [
    # An unclosed bracket in a .npy header: numpy's header parser let tokenize.TokenError out.
    ("npy_tokenerror", "cannot load input file"),
    # descr '4f8' (a shape inside the dtype) made a (0, 4) array of a header declaring (0,): np.load gives (0,).
    ("npy_subarray", "(structured or sub-array) are not model inputs"),
    # An .npz member flagged encrypted: zipfile raised a RuntimeError asking for a password.
    ("npz_encrypted", "is encrypted"),
])
def test_array_file_refused_with_an_input_error(name, message, tmp_path):
    path = FINDINGS / "fuzz_arrays" / name
    with pytest.raises(irgrid.InputError) as info:
        read_arrays(path)
    assert message in str(info.value)
    line = _cli_error("infer", RELU, "-d", "irgrid", "-i", path, "-niter", 1)
    assert line.startswith("irgrid: InputError: ") and message in line, line


def test_python2_header_read_without_a_warning(tmp_path):
    """A header numpy re-parses as Python 2's (a long '2L') made numpy warn on stderr beside the CLI's
    one line; the file reads as np.load reads it, silently."""
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }"
    header += b" " * (64 - 10 - len(header) - 1) + b"\n"
    path = tmp_path / "py2.npy"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header
                     + np.array([1.5, -2], "<f4").tobytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(read_arrays(path), np.array([1.5, -2], np.float32))
    line = _cli_error("infer", RELU, "-d", "irgrid", "-i", path, "-niter", 1)  # Relu wants another shape
    assert line.startswith("irgrid: InputError: input 'x' must have"), line


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_transpose_order_of_non_finite_floats(value, tmp_path):
    """fuzz_check: the Transpose seed (its order an f32 Const, which OpenVINO truncates to integers) with
    NaN written into its .bin: inference let int()'s ValueError out of check_model and compile_model (an
    infinity would have been an OverflowError, which run time did not locate either)."""
    b = IRBuilder("t")
    x = b.parameter("x", (2, 3))
    (y,) = b.layer("Transpose", "opset1", [x, b.const(np.array([1, 0], np.float32), "order")], name="tr")
    b.result(y)
    path = b.save(tmp_path / "t.xml")
    blob = bytearray(path.with_suffix(".bin").read_bytes())
    blob[:4] = np.float32(value).tobytes()
    path.with_suffix(".bin").write_bytes(bytes(blob))
    (problem,) = irgrid.check_model(path)
    assert problem.layer.name == "tr" and "integers expected" in problem.message
    with pytest.raises(irgrid.ShapeError, match="integers expected"):
        irgrid.compile_model(path)
    # The same order fed at run time (a Parameter): the layer's failure is a ShapeError naming it.
    b = IRBuilder("t")
    x, order = b.parameter("x", (2, 3)), b.parameter("order", (2,))
    (y,) = b.layer("Transpose", "opset1", [x, order], name="tr", outputs=[((None, None), "f32")])
    b.result(y)
    compiled = irgrid.compile_model(b.save(tmp_path / "r.xml"))
    with pytest.raises(irgrid.ShapeError, match='Transpose layer "tr"'):
        compiled({"x": np.zeros((2, 3), np.float32), "order": np.array([value, 0], np.float32)})


def test_result_with_an_output_port():
    """fuzz_run: the Abs seed mutated so that a Result declares an output port feeding another Result.
    It compiled, and each call raised a KeyError (the step list had no value for the Result's output)."""
    path = FINDINGS / "ir" / "result_with_an_output.xml"
    (problem,) = irgrid.check_model(path)
    assert (problem.layer.type, problem.layer.name) == ("Result", "op")
    assert problem.message == "a Result has no outputs, and the IR declares 1"
    with pytest.raises(irgrid.ShapeError, match='Result layer "op" \\(id 1\\): a Result has no outputs'):
        irgrid.compile_model(path)


@pytest.mark.parametrize("constant", [True, False])
def test_matmul_of_two_vectors_is_a_0d_array(constant, tmp_path, ov_run):
    """fuzz_run (2026-11-29): a seed mutated into MatMul of two 1-D constants folded to a numpy scalar (numpy
    gives two vectors' product as one), and compile_model failed setting that value read-only (a
    ValueError). The product is a 0-d array, folded or run, as OpenVINO's CPU plugin gives it (f32)."""
    a, c = np.array([1, 2, 3], np.float32), np.array([4, -5, 6.5], np.float32)
    b = IRBuilder("mm")
    inputs = [b.const(a, "a"), b.const(c, "c")] if constant else [b.parameter("a", (3,)), b.parameter("c", (3,))]
    (y,) = b.layer("MatMul", "opset1", inputs, name="mm")
    b.result(y)
    path = b.save(tmp_path / "mm.xml")
    feeds = [] if constant else [a, c]
    (got,) = irgrid.compile_model(path)(feeds).values()
    (expected,) = ov_run(str(path), feeds)
    assert isinstance(got, np.ndarray) and got.shape == expected.shape == ()
    np.testing.assert_array_equal(got, expected)

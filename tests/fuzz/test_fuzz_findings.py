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

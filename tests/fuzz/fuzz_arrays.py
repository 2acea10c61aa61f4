"""Fuzz target: the .npy/.npz input reader (`irgrid.npz.read_arrays`, behind `irgrid infer -i`), then the
input check every compiled model applies (`irgrid.input_arrays.input_array`) and a compiled model's call.

The input is the file's bytes (libFuzzer mutates the committed .npy/.npz seeds). Oracle: read_arrays returns
an array or a dict of arrays, or raises an InputError, and issues no warning (the CLI's error is one line);
what it returns equals what `np.load` returns for the same file, bit for bit; input_array accepts an array
of its own type and shape unchanged and refuses another with an InputError; the model refuses a mismatched
array with an InputError (never a numpy error). Anything else, a hang past -timeout or memory past
harness.limit_memory (the file may declare any shape) is a finding.
"""
import sys
import warnings

import atheris

from harness import SEEDS, limit_memory, run, scratch_dir, unexpected

with atheris.instrument_imports(include=["irgrid"]):
    import numpy as np

    import irgrid
    from irgrid.input_arrays import input_array
    from irgrid.ir import element_types
    from irgrid.npz import read_arrays
    from irgrid.registry import TensorInfo

WORK = scratch_dir()
MODEL = irgrid.compile_model(SEEDS / "layers" / "Relu-opset1.xml", threads=1)
TYPES = sorted(element_types.SUPPORTED)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _use(name: str, array: np.ndarray, data: bytes) -> None:
    try:
        own = element_types.from_dtype(array.dtype)
    except ValueError:  # a dtype no element type has (big-endian, complex): the model must refuse it below
        own = None
    if own in element_types.SUPPORTED and element_types.numpy_dtype(own) == array.dtype:
        assert _same(input_array(name, TensorInfo(array.shape, own), array), array)
    other = TensorInfo(tuple(reversed(array.shape)), TYPES[len(data) % len(TYPES)])
    for info in (other, TensorInfo(None, other.element_type)):
        try:
            input_array(name, info, array)
        except Exception as exc:
            if unexpected(exc):
                raise
    try:
        MODEL({"x": array})
    except Exception as exc:
        if unexpected(exc):
            raise


def test_one_input(data: bytes) -> None:
    path = WORK / "input.npy"
    path.write_bytes(data)
    try:
        with warnings.catch_warnings():  # what the CLI would print beside its one line: none
            warnings.simplefilter("error")
            loaded = read_arrays(path)
    except Exception as exc:
        if unexpected(exc):
            raise
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            reference = np.load(path, allow_pickle=False)
            reference = dict(reference) if isinstance(reference, np.lib.npyio.NpzFile) else reference
        except Exception:  # numpy's own refusals are not irgrid's concern; what irgrid read is checked below
            reference = None
    arrays = loaded if isinstance(loaded, dict) else {"x": loaded}
    if reference is not None:
        expected = reference if isinstance(reference, dict) else {"x": reference}
        assert sorted(expected) == sorted(arrays), (sorted(expected), sorted(arrays))
        for name, array in arrays.items():
            assert _same(np.ascontiguousarray(array), np.ascontiguousarray(expected[name])), name
    for name, array in arrays.items():
        _use(name, array, data)


if __name__ == "__main__":
    limit_memory()
    run(test_one_input, {f"seed-{p.name}": p.read_bytes() for p in sorted((SEEDS / "arrays").iterdir())})

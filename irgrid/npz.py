"""Reading inputs from and writing outputs to .npy / .npz files, shared by `irgrid infer` (-i, -o)
and `irgrid batch`."""
from __future__ import annotations

import math
import os
import tokenize
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .errors import InputError, error_line
from .memory import check_fits


def read_arrays(path: str | os.PathLike) -> np.ndarray | dict[str, np.ndarray]:
    """The array in a .npy file, or the arrays by name in an .npz (told apart by their first bytes, as
    np.load tells them). Each array's header is checked against the bytes stored before anything is
    allocated, and object arrays are refused, so a broken or hostile file (empty, truncated, not a
    zip, a corrupt member, a huge declared shape) is an InputError naming it."""
    path = Path(path)
    try:
        with open(path, "rb") as stream:
            is_zip = stream.read(4) == b"PK\x03\x04"
            if not is_zip:
                stream.seek(0)
                return _read_array(stream, os.fstat(stream.fileno()).st_size, path.name)
        arrays = {}
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                if member.filename.endswith(".npy"):
                    if member.flag_bits & 0x1:  # zipfile would raise a RuntimeError asking for a password
                        raise InputError(f"{path.name}:{member.filename} is encrypted")
                    with archive.open(member) as stream:
                        arrays[member.filename[:-4]] = _read_array(stream, member.file_size,
                                                                   f"{path.name}:{member.filename}")
        return arrays
    except InputError:
        raise
    # numpy's .npy header parser tokenizes the header first: an unclosed bracket is a TokenError.
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, NotImplementedError, zlib.error,
            tokenize.TokenError, SyntaxError) as exc:
        raise InputError(f"cannot load input file {path.name!r}: {error_line(exc)}") from None


def _read_array(stream, size: int, what: str) -> np.ndarray:
    """One .npy from `stream` of `size` bytes: header, checks, then exactly the bytes it declares."""
    fmt = np.lib.format
    readers = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
    version = fmt.read_magic(stream)
    if version not in readers:
        raise InputError(f"{what}: unsupported .npy format version {version}")
    with warnings.catch_warnings():  # a header numpy re-parses as Python 2's warns: not the user's concern
        warnings.simplefilter("ignore")
        shape, fortran, dtype = readers[version](stream)
    if dtype.hasobject:
        raise InputError(f"{what}: object arrays are not model inputs")
    if dtype.fields is not None or dtype.subdtype is not None:  # records, or '4f8' (a shape inside the dtype)
        raise InputError(f"{what}: arrays of dtype {dtype} (structured or sub-array) are not model inputs")
    check_fits(shape, dtype, what=f"input {what}")
    nbytes = math.prod(shape) * dtype.itemsize  # Python ints: a hostile shape cannot overflow
    if nbytes > size:
        raise InputError(f"{what}: the header declares {nbytes} bytes of data and the file has fewer")
    array = np.empty(shape[::-1] if fortran else shape, dtype)  # C-contiguous; transposed back below
    view = memoryview(array.reshape(-1).view(np.uint8)) if array.size else memoryview(b"")
    filled = 0
    while filled < nbytes:
        count = stream.readinto(view[filled:])
        if not count:
            raise InputError(f"{what}: truncated ({filled} of {nbytes} bytes of data)")
        filled += count
    return array.T if fortran else array


def save_outputs(path: str, arrays: dict[str, np.ndarray]) -> None:
    """A .npy holds the single output (np.save); a .npz every output, like np.savez but under any name
    (np.savez's own keyword `file` would clash with an output called `file`). Written under a temporary
    name, then renamed: the file at `path` is the previous one or the complete new one, also when the
    run is interrupted while writing."""
    partial = f"{path}.part"
    try:
        if path.lower().endswith(".npy"):
            with open(partial, "wb") as file:
                np.save(file, next(iter(arrays.values())), allow_pickle=False)
        else:
            with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name, value in arrays.items():
                    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                        np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
        os.replace(partial, path)
    except OSError as exc:
        raise InputError(f"cannot write outputs to {path!r}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(partial):
            os.remove(partial)

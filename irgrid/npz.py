"""Writing outputs to .npy / .npz files, shared by `irgrid infer -o` and `irgrid batch`."""
from __future__ import annotations

import zipfile

import numpy as np

from .errors import InputError


def save_outputs(path: str, arrays: dict[str, np.ndarray]) -> None:
    """A .npy holds the single output (np.save); a .npz every output, like np.savez but under any name
    (np.savez's own keyword `file` would clash with an output called `file`)."""
    try:
        if path.lower().endswith(".npy"):
            np.save(path, next(iter(arrays.values())), allow_pickle=False)
            return
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, value in arrays.items():
                with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    except OSError as exc:
        raise InputError(f"cannot write outputs to {path!r}: {exc.strerror or exc}") from None

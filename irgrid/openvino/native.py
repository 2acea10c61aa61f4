"""irgrid's native OpenVINO extension library (kernels/openvino/): where it is, which OpenVINO it was
built for, and the operator descriptions and convolution plan it is compiled from.

The library (`libirgrid_openvino.so`) carries the same irgrid-owned operators as the Python ops
(`irgrid.openvino.extensions()`), computed by the same C core (kernels/core/) that irgrid's runtime
runs, so C++ applications, `benchmark_app -extensions` and OpenVINO Model Server (`--cpu_extension`)
get them without Python. It links `libopenvino.so.<release>`, so it loads only beside the OpenVINO
release it was built against: `library_path()` checks that before anyone hands the path to OpenVINO.

Its attribute tables (names, kinds, defaults, spellings, bounds, input counts) are generated from
irgrid's operator registry into kernels/openvino/descriptions.inc (`python -m irgrid.openvino.native`
rewrites it; a test checks it is current), so the library parses an IR's attributes as irgrid's
reader does, with the same error wording, and nobody keeps a second copy by hand. The constants of
the convolution engine's plan (irgrid/ops/im2col.py's tile budgets, streaming thresholds and
FILTERS_FIRST) reach its DeformConv the same way (kernels/openvino/convolution_plan.inc), so it cuts
the same tiles and runs the same GEMMs as irgrid's runtime: the same bits.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..errors import IRGridError
from ..registry import OpSpec, all_specs

LIBRARY_NAME = "libirgrid_openvino.so"
_HERE = Path(__file__).resolve().parent
# Written by the build beside the library: {"openvino": "<version the library was built against>"}.
_BUILD_INFO = "libirgrid_openvino.json"
_REBUILD = "rebuild it with `pip install --force-reinstall --no-deps .` (or `pip install -e .` in a clone) " \
           "against the installed openvino"


class NativeLibraryError(IRGridError):
    """The native extension library is missing, or was built for another OpenVINO release."""


def built_for() -> str | None:
    """The OpenVINO version the library was built against, None when there is no library."""
    info = _HERE / _BUILD_INFO
    if not (_HERE / LIBRARY_NAME).is_file() or not info.is_file():
        return None
    return json.loads(info.read_text())["openvino"]


def _release(version: str) -> str:
    """'2026.4.1' of '2026.4.1-22982-...': the part the library's SONAME link ties it to."""
    return version.split("-")[0]


def library_path() -> Path:
    """The library's path, for `core.add_extension(str(path))`; NativeLibraryError (one line, saying how
    to rebuild) when it was not built or was built for another OpenVINO release than the one imported."""
    import openvino

    path = _HERE / LIBRARY_NAME
    version = built_for()
    if version is None:
        raise NativeLibraryError(f"the native OpenVINO extension library was not built ({path} is missing); "
                                 f"{_REBUILD}")
    if _release(version) != _release(openvino.__version__):
        raise NativeLibraryError(f"the native OpenVINO extension library was built for OpenVINO {version}, "
                                 f"this process imports {openvino.__version__}; {_REBUILD}")
    return path


# --- the descriptions the library is compiled from ------------------------------------------------

_KINDS = {"bool": "Bool", "int": "Int", "str": "Str", "ints": "Ints"}


def _c_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII text is a valid C++ string literal


def _description(spec: OpSpec, version: str) -> str:
    rows = []
    for attr in spec.attrs:
        if attr.kind not in _KINDS:
            raise ValueError(f"{spec.type} {version}: attribute kind {attr.kind!r} has no parser in the native "
                             f"library (kernels/openvino/attributes.cpp); add one there and here")
        choices = ", ".join(f"{{{_c_string(s)}, {_c_string(str(v))}}}" for s, v in (attr.choices or {}).items())
        minimum = "false, 0, \"\"" if attr.minimum is None else \
            f"true, {int(attr.minimum)}, {_c_string(f'{attr.minimum:g}')}"
        rows.append(f"        {{{_c_string(attr.name)}, AttrKind::{_KINDS[attr.kind]}, "
                    f"{_c_string(attr.write(attr.default))}, {'true' if attr.required else 'false'}, "
                    f"{{{choices}}}, {minimum}}},")
    fewest, most = spec.inputs
    return "\n".join([f"    {{{_c_string(spec.type)}, {_c_string(version)}, {fewest}, {most}, {{", *rows, "    }},"])


def descriptions() -> str:
    """kernels/openvino/descriptions.inc: every irgrid-owned (type, version)'s description."""
    body = [_description(spec, version) for spec in all_specs() if not spec.native for version in spec.versions]
    return "\n".join([
        "// Generated from irgrid's operator registry by `python -m irgrid.openvino.native`: do not edit.",
        "// Each row: type, version, fewest and most inputs, then per attribute its name, kind, default (IR",
        "// text), whether required, spellings -> canonical values, and minimum (whether, value, as printed).",
        *body, ""])


def convolution_plan() -> str:
    """kernels/openvino/convolution_plan.inc: the convolution engine's plan constants."""
    from ..ops import im2col

    return "\n".join([
        "// Generated from irgrid/ops/im2col.py by `python -m irgrid.openvino.native`: do not edit.",
        "// The convolution engine's plan: bytes of columns (and GEMM block) per tile, below how many output",
        "// channels per group at most the narrow budget, past how many column bytes and from how many",
        "// output channels per group the columns are streamed, and from how many the filters come first in",
        "// OpenVINO's MatMul (im2col.py says why).",
        f"static const size_t TILE_BYTES = {int(im2col.TILE_BYTES)};",
        f"static const size_t NARROW_TILE_BYTES = {int(im2col.NARROW_TILE_BYTES)};",
        f"static const size_t STREAM_BYTES = {int(im2col.STREAM_BYTES)};",
        f"static const irgrid_index STREAM_MIN_CHANNELS = {int(im2col.STREAM_MIN_CHANNELS)};",
        f"static const irgrid_index FILTERS_FIRST = {int(im2col.FILTERS_FIRST)};", ""])


GENERATED = {"descriptions.inc": descriptions, "convolution_plan.inc": convolution_plan}


def main() -> None:
    """Rewrite the generated files in kernels/openvino/ (or the folder given) from irgrid's code (a
    clone's root is the working folder)."""
    from .. import ops  # noqa: F401  (registers every operator)

    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("kernels/openvino")
    for name, text in GENERATED.items():
        (folder / name).write_text(text())
        print(f"wrote {folder / name}")


if __name__ == "__main__":
    main()

"""irgrid's operators inside OpenVINO: the native extension library and, as its fallback, op extensions
generated from the registry; conversion rules for OpenVINO's ONNX and PyTorch frontends.

    import openvino as ov, irgrid.openvino
    core = ov.Core()
    core.add_extension(str(irgrid.openvino.library_path()))  # read IRs with irgrid1 layers (native)
    core.add_extension(irgrid.openvino.extensions())          # or: the same operators as Python ops
    compiled = core.compile_model("model.xml", "CPU")

    model = ov.convert_model("m.onnx", extension=irgrid.openvino.conversion_extensions())

Only irgrid-owned (type, version)s (`irgrid1`) get an op class; OpenVINO's own (GridSample-9,
ExperimentalDetectronPriorGridGenerator-6) are never registered again. Facts these modules rely on
are in docs/openvino.md.
"""
from __future__ import annotations

from .conversion import conversion_extensions
from .native import NativeLibraryError, library_path
from .ops import extensions, op_class

__all__ = ["extensions", "conversion_extensions", "library_path", "NativeLibraryError", "op_class"]

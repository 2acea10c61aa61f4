"""irgrid's operators inside OpenVINO: op extensions generated from the registry, and conversion rules
for OpenVINO's ONNX and PyTorch frontends.

    import openvino as ov, irgrid.openvino
    core = ov.Core()
    core.add_extension(irgrid.openvino.extensions())          # read IRs with irgrid1 layers
    compiled = core.compile_model("model.xml", "CPU")

    model = ov.convert_model("m.onnx", extension=irgrid.openvino.conversion_extensions())

Only irgrid-owned (type, version)s (`irgrid1`) get an op class; OpenVINO's own (GridSample-9,
ExperimentalDetectronPriorGridGenerator-6) are never registered again. Facts these modules rely on
are in docs/openvino.md.
"""
from __future__ import annotations

from .conversion import conversion_extensions
from .ops import extensions, op_class

__all__ = ["extensions", "conversion_extensions", "op_class"]

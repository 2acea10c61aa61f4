"""`irgrid convert`: a model OpenVINO's frontends read (ONNX, ...) to OpenVINO IR, with irgrid's rules."""
from __future__ import annotations

import os
from pathlib import Path

import openvino as ov

from ..errors import OpenVINOError
from .conversion import conversion_extensions
from .runner import check_onnx, openvino_reason


def convert(source: str | os.PathLike, output: str | os.PathLike, compress_to_fp16: bool = False) -> Path:
    """Convert `source` and save it as IR at `output` (.xml, its .bin beside it).

    f16 compression is off by default, so the IR is as exact as the source (`ov.save_model` compresses
    by default)."""
    output = Path(output)
    if output.suffix.lower() != ".xml":
        raise OpenVINOError(f"{output}: the IR file must end in .xml")
    check_onnx(source)
    try:
        model = ov.convert_model(str(source), extension=conversion_extensions())
        ov.save_model(model, str(output), compress_to_fp16=compress_to_fp16)
    except Exception as exc:  # noqa: BLE001 (the frontends raise many types: all mean "cannot convert")
        raise OpenVINOError(f"cannot convert {source}: {openvino_reason(exc)}") from None
    return output

"""Helpers to build oracle models and save them as IR for irgrid to read."""
from __future__ import annotations

from pathlib import Path


def save_ov(model, directory: Path, name: str = "model") -> Path:
    """ov.save_model without f16 compression, so f32 weights stay f32; returns the .xml path."""
    import openvino as ov

    path = Path(directory) / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path

"""Helpers to build oracle models and save them as IR for irgrid to read."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def save_ov(model, directory: Path, name: str = "model") -> Path:
    """ov.save_model without f16 compression, so f32 weights stay f32; returns the .xml path."""
    import openvino as ov

    path = Path(directory) / f"{name}.xml"
    ov.save_model(model, str(path), compress_to_fp16=False)
    return path


def run_both(model, inputs: list[np.ndarray], tmp_path, ov_run, edit=None):
    """Save `model`, optionally edit its XML, run it in OpenVINO and irgrid; returns (ov, irgrid) lists."""
    import irgrid
    from lxml import etree

    path = save_ov(model, tmp_path)
    if edit is not None:
        root = etree.fromstring(path.read_bytes())
        edit(root)
        path.write_bytes(etree.tostring(root))
    expected = ov_run(str(path), inputs)
    assert irgrid.check_model(path) == []
    compiled = irgrid.compile_model(path)
    names = [p.get_friendly_name() for p in model.get_parameters()]
    got = compiled(dict(zip(names, inputs)))
    assert list(got) == [out.get_any_name() for out in model.outputs]
    return expected, list(got.values())


def assert_same(expected: list[np.ndarray], got: list[np.ndarray], rtol: float = 0.0) -> None:
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        assert g.shape == e.shape, (g.shape, e.shape)
        if rtol:
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0)
        else:
            np.testing.assert_array_equal(g, e)


def named(node, name: str):
    node.output(0).get_tensor().set_names({name})
    return node


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def ov_reference(ov_core, build, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """OpenVINO's reference implementation of `build(*constants)`: a graph of constants only, which
    OpenVINO folds with its ops' `evaluate` while compiling. Where the CPU plugin's SIMD kernels deviate
    from the op specs (exp(NaN) = inf, round half away from zero of 0.49999997 = 1), this is the oracle."""
    import openvino as ov
    import openvino.opset13 as ops

    node = build(*[ops.constant(a) for a in arrays])
    nodes = node if isinstance(node, list) else [node]
    compiled = ov_core.compile_model(ov.Model([ops.result(n) for n in nodes], [], "folded"), "CPU",
                                     {"INFERENCE_PRECISION_HINT": "f32"})
    result = compiled([])
    return [np.asarray(result[out]) for out in compiled.outputs]

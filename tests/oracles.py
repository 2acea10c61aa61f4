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


def onnx_backend_cases(op_type: str) -> list:
    """The ONNX backend node test cases of one operator, exactly as `collect_testcases` builds them.

    `collect_testcases(None)` runs the generators of every ONNX operator (6-10 s), and returns nothing
    for an operator if an earlier `collect_testcases("OtherOp")` in this process already imported the
    generator modules with a filter. So the operator's generators (the `export*` functions of
    `onnx.backend.test.case.node.<op_type lowercased>.<op_type>`) are re-run into an empty case list,
    with the module's global lists restored afterwards (np.random seeded as the generators' metaclass
    does). Should those onnx internals change, fall back to the public `collect_testcases(None)`.
    """
    import importlib

    import onnx.backend.test.case.node as node_cases

    def of_type(cases):
        return [c for c in cases if any(n.op_type == op_type for n in c.model.graph.node)]

    try:
        generators = getattr(importlib.import_module(f"onnx.backend.test.case.node.{op_type.lower()}"), op_type)
        saved = (node_cases._TargetOpType, list(node_cases._NodeTestCases), dict(node_cases._existing_names))
        node_cases._TargetOpType = op_type
        node_cases._NodeTestCases.clear()
        node_cases._existing_names.clear()
        try:
            for name in sorted(dir(generators)):
                if name.startswith("export"):
                    np.random.seed(0)
                    getattr(generators, name)()
            cases = of_type(node_cases._NodeTestCases)
        finally:
            node_cases._TargetOpType = saved[0]
            node_cases._NodeTestCases[:] = saved[1]
            node_cases._existing_names.clear()
            node_cases._existing_names.update(saved[2])
        if cases:
            return cases
    except (ImportError, AttributeError, TypeError, ValueError):
        pass
    import warnings

    with warnings.catch_warnings():  # other operators' generators warn about their own overflows
        warnings.simplefilter("ignore")
        return of_type(node_cases.collect_testcases(None))

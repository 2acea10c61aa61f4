"""Shared fixtures: OpenVINO as an oracle (always at f32: this CPU defaults to bf16)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
# `auto` decides by the model's layers in these tests, the same on every machine and run; it measures
# the runtimes only where a test asks (tests/cli/test_auto_measured.py).
os.environ["IRGRID_AUTO"] = "rules"


@pytest.fixture(scope="session")
def ov_core():
    import openvino as ov

    return ov.Core()


@pytest.fixture
def ov_run(ov_core):
    """Run an IR (path or ov.Model) on OpenVINO's CPU plugin at f32; returns the list of outputs."""

    def run(model, inputs):
        compiled = ov_core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        result = compiled(list(inputs))
        return [np.asarray(result[out]) for out in compiled.outputs]

    return run


@pytest.fixture(scope="session")
def glue_export(tmp_path_factory):
    """`glue_export(block, route)`: (module, inputs, IR path) of benchmarks/glue_blocks.py's block at its
    small shapes, exported by that route once per session (exports take seconds; several tests read them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import glue_blocks

    exported = {}

    def export(name: str, route: str):
        if (name, route) not in exported:
            module, inputs = glue_blocks.block(name, small=True)
            directory = tmp_path_factory.mktemp(f"{name}_{route}")
            exported[(name, route)] = module.eval(), inputs, glue_blocks.export(module, inputs, route, directory)
        return exported[(name, route)]

    return export

"""Shared fixtures: OpenVINO as an oracle (always at f32: this CPU defaults to bf16)."""
from __future__ import annotations

import os
import subprocess
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


_EXPORT = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import glue_blocks
module, inputs = glue_blocks.block(sys.argv[2], small=True)
glue_blocks.export(module.eval(), inputs, sys.argv[3], Path(sys.argv[4]))
"""


@pytest.fixture(scope="session")
def glue_export(tmp_path_factory):
    """`glue_export(block, route)`: (module, inputs, IR path) of benchmarks/glue_blocks.py's block at its
    small shapes, exported by that route once per session (exports take seconds; several tests read them);
    the test is skipped where torch, or for the dynamo route onnxscript, is not installed.

    The export runs in a process of its own, as a user's export does. In the test process, a later numpy
    MatMul hung after the exporters had run (DCNv2 and MSDeformAttn under pytest-xdist, 3 runs in 9):
    OpenBLAS's fork handler waited for its own thread server after some thread called os.fork (which
    library forks was not found). The block is built again here, the same weights and inputs
    (glue_blocks.block seeds torch)."""
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(benchmarks))
    import glue_blocks

    exported = {}

    def export(name: str, route: str):
        pytest.importorskip("torch")
        if route == "dyn":  # the dynamo exporter needs onnxscript
            pytest.importorskip("onnxscript")
        if (name, route) not in exported:
            directory = tmp_path_factory.mktemp(f"{name}_{route}")
            # cwd: `python -c` puts the working directory first on sys.path, where a checkout's unbuilt
            # source folder would shadow the installed irgrid
            subprocess.run([sys.executable, "-c", _EXPORT, str(benchmarks), name, route, str(directory)],
                           check=True, capture_output=True, cwd=directory)
            module, inputs = glue_blocks.block(name, small=True)
            exported[(name, route)] = module.eval(), inputs, directory / f"{route}.xml"
        return exported[(name, route)]

    return export

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


# The exporter: one process for the session (a worker's), importing torch once (4-6 s a process on a slow
# host) and exporting block after block as its stdin asks; it answers on what was its stdout, the exporters'
# own prints going to stderr (a log file).
_EXPORTER = """
import os, sys, traceback
from pathlib import Path
reply = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.path.insert(0, sys.argv[1])
import glue_blocks
for request in sys.stdin:
    name, route, directory = request.rstrip("\\n").split("\\t")
    try:
        module, inputs = glue_blocks.block(name, small=True)
        glue_blocks.export(module.eval(), inputs, route, Path(directory))
        reply.write("ok\\n")
    except Exception:
        reply.write(repr(traceback.format_exc()) + "\\n")
    reply.flush()
"""


@pytest.fixture(scope="session")
def glue_export(tmp_path_factory):
    """`glue_export(block, route)`: (module, inputs, IR path) of benchmarks/glue_blocks.py's block at its
    small shapes, exported by that route once per session (exports take seconds; several tests read them);
    the test is skipped where torch, or for the dynamo route onnxscript, is not installed.

    The exports run in a process of their own (_EXPORTER), as a user's export does. In the test process, a
    later numpy MatMul hung after the exporters had run (DCNv2 and MSDeformAttn under pytest-xdist, 3 runs
    in 9): OpenBLAS's fork handler waited for its own thread server after some thread called os.fork (which
    library forks was not found). The block is built again here, the same weights and inputs
    (glue_blocks.block seeds torch)."""
    benchmarks = Path(__file__).resolve().parents[1] / "benchmarks"
    sys.path.insert(0, str(benchmarks))
    import glue_blocks

    exported = {}
    exporter = []  # the process, started by the first export
    home = tmp_path_factory.mktemp("exporter")
    log = home / "log.txt"

    def export(name: str, route: str):
        pytest.importorskip("torch")
        if route == "dyn":  # the dynamo exporter needs onnxscript
            pytest.importorskip("onnxscript")
        if (name, route) not in exported:
            if not exporter:
                # cwd: `python -c` puts the working directory first on sys.path, where a checkout's unbuilt
                # source folder would shadow the installed irgrid
                with open(log, "w") as stderr:
                    exporter.append(subprocess.Popen([sys.executable, "-c", _EXPORTER, str(benchmarks)], cwd=home,
                                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                                     text=True))
            directory = tmp_path_factory.mktemp(f"{name}_{route}")
            exporter[0].stdin.write(f"{name}\t{route}\t{directory}\n")
            exporter[0].stdin.flush()
            answer = exporter[0].stdout.readline().rstrip("\n")
            assert answer == "ok", f"exporting {name} by {route}: {answer or log.read_text()[-3000:]}"
            module, inputs = glue_blocks.block(name, small=True)
            exported[(name, route)] = module.eval(), inputs, directory / f"{route}.xml"
        return exported[(name, route)]

    yield export
    for process in exporter:
        process.stdin.close()
        process.wait(timeout=60)

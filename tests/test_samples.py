"""The bundled samples check clean, run from the CLI, and agree with OpenVINO, onnxruntime and a
float64 numpy reference written from the specs (samples/build_samples.py `verify`)."""
import importlib.util

import pytest

from oracles import SAMPLES


def _builder():
    spec = importlib.util.spec_from_file_location("build_samples", SAMPLES / "build_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["prior_grid", "flow_warp", "volume_warp", "dcn_block", "spatial_transformer"])
def test_sample_verifies(name):
    assert _builder().verify(name, SAMPLES / name) == []

"""`auto` by measurement (irgrid/devices.py, IRGRID_AUTO=measure, the default outside this test suite):
where both runtimes run a model it times both, on the inputs the CLI will run (else random inputs of
the model's shapes), and keeps the faster (irgrid's runtime unless OpenVINO takes less than 1/PREFER_IRGRID of its time), saying so; f64
models stay on irgrid's runtime unmeasured, and dynamic shapes fall back to the rules. The choice
itself is timing, so the tests fix the timings (`race`) where they check it, and check outputs against
OpenVINO's CPU plugin (f32, 1e-5) where the measurement really runs."""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

from irgrid import devices
from irgrid.openvino.runner import OpenVINOModel
from irgrid.runtime.compiled import CompiledModel
from oracles import SAMPLES, assert_one_line_error, run_cli, save_ov


@pytest.fixture
def measure(monkeypatch):
    monkeypatch.setenv("IRGRID_AUTO", "measure")


def _timed(monkeypatch, ours: float, theirs: float) -> list:
    """Makes `race` report these times (seconds) and records the runtimes it was given."""
    given = []

    def race(runtimes, inputs, *limits):
        given.append(runtimes)
        return [ours, theirs]

    monkeypatch.setattr(devices, "race", race)
    return given


@pytest.mark.parametrize("ours,theirs,picked", [(0.002, 0.001, OpenVINOModel), (0.00104, 0.001, CompiledModel),
                                                (0.001, 0.002, CompiledModel)])
def test_auto_keeps_the_faster_runtime(monkeypatch, measure, ours, theirs, picked):
    path = SAMPLES / "flow_warp" / "model.xml"
    given = _timed(monkeypatch, ours, theirs)
    compiled, why = devices.open_model(path)
    assert isinstance(compiled, picked)
    assert [type(r) for r in given[0]] == [CompiledModel, OpenVINOModel]
    slow, fast = sorted((ours, theirs), reverse=True)
    if picked is OpenVINOModel:
        assert why == "openvino (CPU plugin, irgrid extension): faster here, measured 1 ms a call against irgrid's 2"
    else:
        assert why == f"irgrid (supports every layer; measured {ours * 1e3:.3g} ms a call against OpenVINO's " \
                      f"{theirs * 1e3:.3g})"


def test_auto_keeps_f64_on_irgrid_unmeasured(monkeypatch, measure, tmp_path):
    """OpenVINO computes f64 in f32: not a speed question, so nothing is measured."""
    x = ops.parameter([1, 2, 5, 6], np.float64, name="x")
    path = save_ov(ov.Model([ops.result(ops.multiply(x, ops.constant(np.float64(3))))], [x]), tmp_path)
    given = _timed(monkeypatch, 1.0, 0.001)
    compiled, why = devices.open_model(path)
    assert isinstance(compiled, CompiledModel) and not given
    assert why == "irgrid (supports every layer; kept from OpenVINO: f64 values, which OpenVINO computes in f32)"


def test_auto_without_input_shapes_decides_by_the_rules(monkeypatch, measure, tmp_path):
    x = ops.parameter([-1, 2, -1, -1], np.float32, name="x")
    path = save_ov(ov.Model([ops.result(ops.multiply(x, ops.constant(np.float32(3))))], [x]), tmp_path)
    given = _timed(monkeypatch, 1.0, 0.001)
    compiled, why = devices.open_model(path)
    assert isinstance(compiled, CompiledModel) and not given
    assert why == "irgrid (supports every layer; not measured: dynamic input shapes)"
    compiled, why = devices.open_model(path, shapes={"x": [1, 2, 3, 4]})  # -shape makes them known
    assert isinstance(compiled, OpenVINOModel) and given


def test_auto_measures_for_real_and_runs_what_it_picked(tmp_path, ov_run):
    """No timings fixed: whichever runtime wins, the device line says what was measured, and the outputs
    are the model's (OpenVINO's CPU plugin at f32 as the oracle, 1e-5)."""
    path = SAMPLES / "flow_warp" / "model.xml"
    proc = run_cli("infer", path, "-niter", 2, "-o", tmp_path / "out.npz", cwd=tmp_path,
                   env={"IRGRID_AUTO": "measure"})
    assert proc.returncode == 0, proc.stderr
    device = proc.stdout.splitlines()[0]
    assert "measured" in device and " ms a call against " in device, device
    with np.load(path.with_name("inputs.npz")) as saved:
        inputs = [saved[p] for p in ("image", "flow")]
    expected = ov_run(str(path), inputs)
    with np.load(tmp_path / "out.npz") as got:
        for name, want in zip(got.files, expected):
            np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5)


def test_an_unknown_auto_mode_is_one_line(tmp_path):
    proc = run_cli("infer", SAMPLES / "flow_warp" / "model.xml", "-niter", 1, cwd=tmp_path,
                   env={"IRGRID_AUTO": "fastest"})
    assert_one_line_error(proc, 2, "ConfigError", "IRGRID_AUTO='fastest'", "measure, rules")


def test_the_cli_measures_on_its_inputs_even_with_dynamic_dims(tmp_path):
    """`irgrid infer` hands auto the inputs it will run (here inputs.npz beside a model with dynamic
    dims, which random inputs could not be made for); the outputs are OpenVINO's CPU plugin's (exact:
    a multiplication by 3)."""
    x = ops.parameter([-1, 2, -1], np.float32, name="x")
    path = save_ov(ov.Model([ops.result(ops.multiply(x, ops.constant(np.float32(3))))], [x]), tmp_path)
    inputs = np.random.default_rng(5).standard_normal((3, 2, 7)).astype(np.float32)
    np.savez(tmp_path / "inputs.npz", x=inputs)
    proc = run_cli("infer", path, "-niter", 2, "-o", tmp_path / "out.npy", cwd=tmp_path,
                   env={"IRGRID_AUTO": "measure"})
    assert proc.returncode == 0, proc.stderr
    assert " ms a call against " in proc.stdout.splitlines()[0], proc.stdout
    expected = ov.Core().compile_model(str(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([inputs])[0]
    assert np.load(tmp_path / "out.npy").tobytes() == expected.tobytes()


def test_race_takes_turns_back_to_back():
    """irgrid/timing.py's race: an untimed call each, then turns of `warm` untimed and `calls` timed calls
    each, the fastest timed call per runtime; rounds stop at `rounds`."""
    from irgrid.timing import race

    order = []
    runtimes = [lambda inputs, k=k: order.append((k, inputs)) for k in "ab"]
    best = race(runtimes, "in", rounds=2, seconds=60.0, calls=3, warm=1)
    assert [k for k, _ in order] == ["a", "b"] + (["a"] * 4 + ["b"] * 4) * 2
    assert {inputs for _, inputs in order} == {"in"} and len(best) == 2 and all(0 <= t < 1 for t in best)

"""GridSample-9 layers that irgrid's OpenVINO device runs on irgrid's GridSample instead
(irgrid/openvino/gridsample9.py): timed both ways on this machine (IRGRID_AUTO=measure, the default
outside this test suite), else by a table per CPU kind (IRGRID_AUTO=rules, this suite's setting, or
dynamic shapes). Which is faster is timing, so the tests fix the timings (`race`) where they check the
choice; every output is compared with torch's grid_sample (atol 1e-5, the CPU plugin's GridSample-9 and
irgrid's kernel both within it), and a replaced layer with irgrid's runtime bit for bit."""
from __future__ import annotations

import numpy as np
import openvino as ov
import pytest
from openvino import opset9 as o9

from irgrid.devices import open_model
from irgrid.openvino import gridsample9
from irgrid.openvino.gridsample9 import sampling_from_channels

REPLACED = "its GridSample runs 1 GridSample-9 layer"


def _gs9(tmp_path, mode: str, channels: int, grid=(2, 6, 5, 2), padding: str = "reflection"):
    """An IR of one f32 GridSample-9 (X 2xCx13x17), its inputs, and torch's output for them."""
    torch = pytest.importorskip("torch")
    x = o9.parameter([2, channels, 13, 17], np.float32, name="x")
    g = o9.parameter(list(grid), np.float32, name="g")
    sampled = o9.grid_sample(x, g, {"align_corners": False, "mode": mode, "padding_mode": padding})
    path = tmp_path / f"gs9_{channels}.xml"
    ov.save_model(ov.Model([sampled], [x, g]), str(path), compress_to_fp16=False)
    rng = np.random.default_rng(7)
    inputs = {"x": rng.standard_normal((2, channels, 13, 17)).astype(np.float32),
              "g": rng.uniform(-1.3, 1.3, (2, 6, 5, 2)).astype(np.float32)}
    expected = torch.nn.functional.grid_sample(torch.from_numpy(inputs["x"]), torch.from_numpy(inputs["g"]),
                                               mode=mode, padding_mode=padding, align_corners=False)
    return path, inputs, expected.numpy()


def _run_both(path, inputs, expected) -> bool:
    """Runs the IR on the OpenVINO device and irgrid's runtime; checks the device against torch (and
    irgrid's bits where it replaced the layer); returns whether it did."""
    on_openvino, _ = open_model(path, "openvino")
    (got,) = on_openvino(inputs).values()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    replaced = REPLACED in on_openvino.extension
    if replaced:
        (runtime,) = open_model(path, "irgrid")[0](inputs).values()
        assert np.array_equal(got, runtime)
    return replaced


@pytest.fixture
def measure(monkeypatch):
    monkeypatch.setenv("IRGRID_AUTO", "measure")
    gridsample9._irgrid_faster.cache_clear()
    yield
    gridsample9._irgrid_faster.cache_clear()


def _timed(monkeypatch, ours: float, theirs: float) -> list:
    """Makes gridsample9's `race` report these times (irgrid's op, the plugin's) and records its calls."""
    given = []

    def race(runtimes, inputs, *limits):
        given.append((runtimes, inputs, limits))
        return [ours, theirs]

    monkeypatch.setattr(gridsample9, "race", race)
    return given


@pytest.mark.parametrize("ours,theirs", [(0.001, 0.002), (0.002, 0.001), (0.001, 0.001)])
def test_a_timed_layer_runs_on_the_faster_kernel(tmp_path, monkeypatch, measure, ours, theirs):
    """One channel (below every table's threshold but Zen 5's): the timing alone decides, ties to the
    plugin; the timed inputs have the layer's shapes, in turns of one untimed and three timed calls."""
    path, inputs, expected = _gs9(tmp_path, "bilinear", 1)
    given = _timed(monkeypatch, ours, theirs)
    assert _run_both(path, inputs, expected) == (ours < theirs)
    ((runtimes, timed, limits),) = given
    assert len(runtimes) == 2 and [a.shape for a in timed] == [(2, 1, 13, 17), (2, 6, 5, 2)]
    assert limits == (gridsample9.ROUNDS, gridsample9.SECONDS, 3, 1)


def test_a_layer_is_timed_once_per_shape_and_attributes(tmp_path, monkeypatch, measure):
    path, inputs, expected = _gs9(tmp_path, "nearest", 2)
    given = _timed(monkeypatch, 0.001, 0.002)
    assert _run_both(path, inputs, expected) and _run_both(path, inputs, expected)
    assert len(given) == 1


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_the_timing_runs_both_kernels(tmp_path, measure, mode):
    """Unpatched: both one-layer models compile and run; whichever won, the device's output is right."""
    path, inputs, expected = _gs9(tmp_path, mode, 2)
    calls = []
    real = gridsample9.race

    def spy(runtimes, timed, *limits):
        times = real(runtimes, timed, *limits)
        calls.append(len(times))
        return times

    gridsample9.race = spy
    try:
        _run_both(path, inputs, expected)
    finally:
        gridsample9.race = real
    assert calls == [2]


def test_dynamic_shapes_go_by_the_table(tmp_path, monkeypatch, measure):
    """A grid of dynamic shape cannot be timed: the CPU's table decides, by the static channels."""
    channels = sampling_from_channels("bilinear", "reflection")
    path, inputs, expected = _gs9(tmp_path, "bilinear", channels, grid=(-1, -1, -1, 2))
    given = _timed(monkeypatch, 1.0, 0.001)
    assert _run_both(path, inputs, expected) and not given


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_by_rules_the_table_decides(tmp_path, mode):
    """IRGRID_AUTO=rules (this suite's setting): from the table's channels on, irgrid's op; below, the
    plugin's. Also shows the model's last nodes outlive the library's Core."""
    from_ = sampling_from_channels(mode, "reflection")
    for channels in (from_ - 1, from_) if from_ > 1 else (from_,):
        path, inputs, expected = _gs9(tmp_path, mode, channels)
        assert _run_both(path, inputs, expected) == (channels == from_)


@pytest.mark.parametrize("family,avx512,table", [(0x1A, True, "zen5"), (0x1B, True, "zen5"), (0x1A, False, "xeon"),
                                                 (0x19, True, "zen4"), (0x19, False, "xeon"),
                                                 (0x17, True, "xeon"), (0, True, "xeon")])
def test_sampling_thresholds_follow_the_cpu(monkeypatch, family, avx512, table):
    """The channel thresholds of GridSample-9's replacement are the table measured on this CPU's kind:
    Zen 5 (AMD family 0x1A on) and Zen 4 (family 0x19) where AVX-512 is allowed, else the Xeon's (benchmarks/README.md, "irgrid's
    GridSample in place of GridSample-9"); a (mode, padding) entry before the mode's."""
    from irgrid._kernels import sampling

    monkeypatch.setattr(sampling, "amd_family", lambda: family)
    monkeypatch.setattr(sampling, "avx512_available", lambda: avx512)
    gridsample9._sampling_table.cache_clear()
    try:
        chosen = gridsample9._SAMPLING_FROM_CHANNELS[table]
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                assert sampling_from_channels(mode, padding) == chosen.get((mode, padding), chosen[mode])
        bilinear = [sampling_from_channels("bilinear", padding) for padding in ("reflection", "zeros")]
        assert bilinear == ([8, 8] if table == "xeon" else [1, 1])
    finally:
        gridsample9._sampling_table.cache_clear()

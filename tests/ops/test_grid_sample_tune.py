"""GridSample's path policies chosen by timing (kernels/core/grid_sample_tune.c, `SamplePlan.tune`, a
compiled model's first call under IRGRID_AUTO=measure): a tuned call and every call after it give the
bits of the plan's own path, which onnxruntime's GridSample-20 in f64 (onnx.reference's GridSample-22 for
3-D cubic) bounds at TOLERANCES; under IRGRID_AUTO=rules a compiled model does not tune.

Coordinates are multiples of 2**-8 (2**-4 for 3-D cubic), so every implementation samples the same
positions; each case has at least the tuner's 16384 output values, so its candidates run."""
from __future__ import annotations

import numpy as np
import pytest

import irgrid
from irgrid._kernels import sampling
from irgrid.builder import IRBuilder
from irgrid.ops.grid_sample import sample_plan
from oracles import TOLERANCES, dyadic, keyed_rng, oracle_step, run_oracle

CASES = [  # (x shape, grid's output dims, mode): the gather, interleaved, binned and by-points paths
    ((1, 32, 40, 48), (64, 64), "nearest"), ((1, 32, 40, 48), (64, 64), "linear"),
    ((1, 3, 64, 64), (96, 96), "cubic"), ((1, 1, 64, 64), (128, 128), "nearest"),
    ((1, 2, 64, 64), (128, 128), "linear"), ((2, 8, 12, 16, 16), (16, 16, 16), "linear"),
    ((1, 1, 16, 32, 32), (16, 32, 32), "cubic"),
]


def _inputs(x_shape, out_dims, mode, padding):
    rng = keyed_rng(x_shape, mode, padding)
    x = rng.standard_normal(x_shape).astype(np.float32)
    grid = dyadic(rng, (x_shape[0], *out_dims, len(x_shape) - 2), 1.1, oracle_step(len(x_shape) - 2, mode))
    return x, grid.astype(np.float32)


# 3-D cubic with border padding is left out: onnx.reference clamps its coordinates otherwise (docs/semantics.md)
PARAMS = [(*case, padding) for case in CASES for padding in ("zeros", "border", "reflection")
          if not (case[2] == "cubic" and len(case[0]) == 5 and padding == "border")]


@pytest.mark.parametrize("x_shape, out_dims, mode, padding", PARAMS, ids=[f"{m}-{s}-{p}" for s, _, m, p in PARAMS])
def test_tuned_calls_give_the_plans_bits(x_shape, out_dims, mode, padding):
    """At 1 and 2 threads, the tuned call and the next: the untuned plan's bits; the oracle's values on
    the grid's first row of its outermost output dim (the oracle samples point by point: a pure-Python
    reference takes a minute for a whole 3-D cubic grid)."""
    x, grid = _inputs(x_shape, out_dims, mode, padding)
    expected = run_oracle(x.astype(np.float64), grid[:, :1].astype(np.float64), mode, padding, False)
    for threads in (1, 2):
        plain = sample_plan(x.shape, grid.shape, np.float32, mode, padding, False)
        want = plain(x, grid, None, threads)
        tuned = sample_plan(x.shape, grid.shape, np.float32, mode, padding, False)
        got = tuned.tune(x, grid, None, threads)
        assert isinstance(tuned.tuned_choice, str)
        np.testing.assert_array_equal(got, want, err_msg=f"tuned ({tuned.tuned_choice!r}), {threads} threads")
        np.testing.assert_array_equal(tuned(x, grid, None, threads), want, err_msg=f"after tuning ({tuned.tuned_choice!r})")
        np.testing.assert_allclose(got[:, :, :1], expected, **TOLERANCES[np.float32])


def test_tuned_policies_hold_only_for_their_thread_count_and_global_policies():
    """A plan tuned at 2 threads takes its policies there, not at 1 thread, nor once a global policy
    changes (tests and comparisons pin paths that way): the route says which plan a call takes."""
    x, grid = _inputs((1, 32, 40, 48), (64, 64), "nearest", "zeros")
    plan = sample_plan(x.shape, grid.shape, np.float32, "nearest", "zeros", False)
    plan.tune(x, grid, None, 2)
    was = sampling.use_interleave("never")
    try:
        assert plan.route(2, grid) == "gather"
    finally:
        sampling.use_interleave(was)
    untuned = sample_plan(x.shape, grid.shape, np.float32, "nearest", "zeros", False)
    assert plan.route(1, grid) == untuned.route(1, grid)


def _ir(path, x_shape, g_shape, mode):
    b = IRBuilder("grid_sample")
    x = b.parameter("x", x_shape, "f32")
    g = b.parameter("g", g_shape, "f32")
    (y,) = b.layer("GridSample", "irgrid1", [x, g], {"mode": mode, "padding_mode": "zeros", "align_corners": False})
    b.result(y)
    b.save(path)
    return path


@pytest.mark.parametrize("auto, tunes", [("measure", True), ("rules", False)])
def test_compiled_model_tunes_its_first_call_under_measure(tmp_path, monkeypatch, auto, tunes):
    monkeypatch.setenv("IRGRID_AUTO", auto)
    x, grid = _inputs((1, 32, 40, 48), (64, 64), "linear", "zeros")
    path = _ir(tmp_path / "gs.xml", x.shape, grid.shape, "linear")
    compiled = irgrid.compile_model(path, threads=2)
    expected = run_oracle(x.astype(np.float64), grid.astype(np.float64), "linear", "zeros", False)
    first = next(iter(compiled([x, grid]).values()))
    second = next(iter(compiled([x, grid]).values()))
    (step,) = [row for row in compiled.describe(structured=True)["layers"] if row["status"] == "step"]
    assert ("tuned" in step) == tunes
    assert ("paths timed" in compiled.describe()) == tunes
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, expected, **TOLERANCES[np.float32])

"""The C core's path tuner (kernels/core/grid_sample_tune.c) driven by a scripted runner: which candidate
it takes for given times and results, without timing anything. The runner writes a result of its own
(one value where a chosen policy is set, another elsewhere) and returns the script's seconds, so each
rule shows alone: the fastest candidate taken past the margin, not within it, never one whose result has
other bits; no candidates for small calls or slow ones. The candidates are real plans of X 1x32x64x64,
nearest (interleaved) against interleave=never (the gather path), which differ on any CPU with AVX2,
and 2-D cubic, whose row run and gather path sum in different orders."""
from __future__ import annotations

import subprocess

import pytest

from oracles import ROOT
from test_core_c import INCLUDES, _compiler

CORE = ROOT / "kernels" / "core"

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "grid_sample.h"

typedef struct {
    int calls, differs;     /* calls made; whether the interleave=never candidate's result has other bits */
    double base, never;     /* seconds of a call with interleave AUTO, and with NEVER */
    size_t line;            /* how far past a 64-byte line the call's output starts */
    int misaligned;         /* calls whose output starts elsewhere on its line */
    int gathers;            /* calls of a candidate with the gathers policy set */
} Script;

static double scripted(irgrid_grid_sample* p, void* context) {
    Script* s = (Script*)context;
    float* y = (float*)p->output;
    const int never = p->interleave == IRGRID_POLICY_NEVER;
    irgrid_index i, n = p->batch * p->channels * p->points;
    for (i = 0; i < n; i++)
        y[i] = never && s->differs ? 1.0f : 0.5f;
    s->calls++;
    s->misaligned += (size_t)p->output % 64 != s->line;
    s->gathers += p->gathers != IRGRID_POLICY_AUTO;
    return never ? s->never : s->base;
}

int main(int argc, char** argv) {
    static float x[32 * 64 * 64], g[64 * 64 * 2];
    /* the output 16 bytes past a line, the spare 4 bytes past one (and its 64 bytes more) */
    static float y_line[32 * 64 * 64 + 4] __attribute__((aligned(64)));
    static float spare_line[32 * 64 * 64 + 17] __attribute__((aligned(64)));
    float *y = y_line + 4, *spare = spare_line + 1;
    Script s = {0, atoi(argv[1]), atof(argv[2]), atof(argv[3]), 16, 0, 0};
    irgrid_grid_sample p = {0};
    int chosen;
    if (!irgrid_grid_sample_simd_available()) {
        printf("no AVX2\n");
        return 0;
    }
    p.dtype = IRGRID_F32;
    p.batch = 1;
    p.channels = atoi(argv[4]);
    p.rank = 2;
    p.dims[0] = p.dims[1] = 64;
    p.out_dims[0] = p.out_dims[1] = 64;
    p.mode = atoi(argv[5]);
    p.padding = IRGRID_PAD_ZEROS;
    p.data = x;
    p.coords = g;
    p.output = y;
    p.simd = 1;
    p.interleave = p.binning = p.gathers = p.avx512 = IRGRID_POLICY_AUTO;
    p.threads = 2;
    chosen = irgrid_grid_sample_tune(&p, spare, scripted, &s);
    printf("%d %d %d %g %d %d %d\n", chosen, p.interleave, s.calls, (double)y[0], s.misaligned, s.gathers,
           p.pixel);
    return 0;
}
"""


@pytest.fixture(scope="module")
def tuner(tmp_path_factory):
    """The program, built once: grid_sample.c at -O0 (its per-case copies take minutes to optimise; the
    tuner's logic, not the kernels' speed, is under test)."""
    tmp = tmp_path_factory.mktemp("tune")
    cc = _compiler("cc", "gcc", "clang")
    (tmp / "main.c").write_text(PROGRAM)
    program = tmp / "tune"
    subprocess.run([cc, "-O0", "-ffp-contract=off", *INCLUDES, str(tmp / "main.c"), str(CORE / "grid_sample.c"),
                    str(CORE / "grid_sample_tune.c"), "-lm", "-o", str(program)], check=True, capture_output=True)
    return program


NEAREST, LINEAR, CUBIC = 0, 1, 2  # guards.h's IRGRID_MODE_*


def _tune(program, differs: int, base: float, never: float, channels: int = 32,
          mode: int = NEAREST) -> tuple[int, int, int, float, int, int, int]:
    """(candidate chosen, the interleave policy it leaves, calls made, the output's first value, calls whose
    output started elsewhere on a 64-byte line than the call's own, calls of a candidate with the gathers
    policy set, the chosen plan's `pixel`)."""
    out = subprocess.run([str(program), str(differs), str(base), str(never), str(channels), str(mode)], check=True,
                         capture_output=True, text=True).stdout
    if out.startswith("no AVX2"):
        pytest.skip("this CPU has no AVX2: every policy plans the scalar blocks")
    chosen, interleave, calls, first, misaligned, gathers, pixel = out.split()
    return int(chosen), int(interleave), int(calls), float(first), int(misaligned), int(gathers), int(pixel)


NEVER, AUTO = 0, 1


def test_takes_a_candidate_faster_by_more_than_the_margin(tuner):
    chosen, interleave, calls, value, *_ = _tune(tuner, 0, 0.010, 0.008)
    assert chosen > 0 and interleave == NEVER and calls > 3 and value == 0.5


def test_keeps_the_plans_own_within_the_margin(tuner):
    chosen, interleave, *_ = _tune(tuner, 0, 0.010, 0.0097)
    assert (chosen, interleave) == (0, AUTO)


def test_never_takes_a_candidate_with_other_bits(tuner):
    """However fast, and the output holds the plan's own result (0.5), not the candidate's (1.0)."""
    chosen, interleave, _, value, *_ = _tune(tuner, 1, 0.010, 0.001)
    assert (chosen, interleave, value) == (0, AUTO, 0.5)


def test_cubic_never_times_a_plan_that_sums_otherwise(tuner):
    """2-D cubic's row run against the gather path (interleave never), which sums in another order: not
    a candidate at all, however fast the script makes it (the bit check would drop it, but only after a
    call)."""
    chosen, interleave, *_ = _tune(tuner, 0, 0.010, 0.001, mode=CUBIC)
    assert (chosen, interleave) == (0, AUTO)


def test_drops_a_slow_candidate_after_one_round(tuner):
    """A candidate over 1.5x the fastest is not timed again: its bit check, one round, then no more."""
    _, _, slow_calls, *_ = _tune(tuner, 0, 0.010, 0.030)
    _, _, close_calls, *_ = _tune(tuner, 0, 0.010, 0.0105)
    assert slow_calls < close_calls


def test_small_or_slow_calls_run_once_untuned(tuner):
    """Under 16384 output values (three channels of 64 x 64 points), or a first call over 50 ms."""
    assert _tune(tuner, 0, 0.010, 0.001, channels=3)[:3] == (0, AUTO, 1)
    assert _tune(tuner, 0, 0.060, 0.001)[:3] == (0, AUTO, 1)


def test_candidates_write_as_far_past_a_line_as_the_output(tuner):
    """The other candidates' results go into the spare buffer as far past a 64-byte line as the call's own
    output (here 16 bytes, the spare's start 4): the runs stream a large output only where its planes start
    on lines and split stores across lines elsewhere, so a spare aligned otherwise timed candidates under
    other stores (3-D cubic's 16-channel pixels 0.98x the rules' plan where they took 0.75x)."""
    chosen, _, calls, _, misaligned, *_ = _tune(tuner, 0, 0.010, 0.008)
    assert chosen > 0 and calls > 3 and misaligned == 0


def test_times_the_gathers_policy_only_where_a_run_reads_by_it(tuner):
    """Four channels' pixels (a plan's `pixel` 4, where the CPU runs them: AVX-512): nearest reads them by
    gathers or scalar loads as the gathers policy says, so a candidate sets it; bilinear reads 16-byte
    pixels either way, so setting it plans the same run, which the tuner does not time twice."""
    *_, nearest_gathers, nearest_pixel = _tune(tuner, 0, 0.010, 0.010, channels=4, mode=NEAREST)
    *_, bilinear_gathers, bilinear_pixel = _tune(tuner, 0, 0.010, 0.010, channels=4, mode=LINEAR)
    if not (nearest_pixel == 4 and bilinear_pixel == 4):
        pytest.skip("this CPU runs four channels on the pair and gather paths (no 16-lane pixels)")
    assert nearest_gathers > 0 and bilinear_gathers == 0

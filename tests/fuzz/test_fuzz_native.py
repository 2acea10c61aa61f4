"""CI for the native fuzz targets (native/, docs/fuzzing.md "Native targets"): build them with clang's
libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer, run each for a fixed number of inputs from its
committed seeds with -seed=1 (seconds; fuzz_grid_sample's 8,763 seeds about a minute, RUN_TIMEOUT), and
replay every committed reproducer in native/findings/.
A target that rots (a kernel's contract, a harness, a seed) or a regression any of them finds fails the
build. Skipped only where no clang is installed; .ci/run installs one, so CI always runs them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

NATIVE = Path(__file__).resolve().parent / "native"
sys.path.insert(0, str(NATIVE))
from build_targets import TARGETS, build, find_clang  # noqa: E402
from seed_corpus import unpack  # noqa: E402

# target: inputs to run after its seeds (each target's speed differs a hundredfold: a few seconds each)
RUNS = {"fuzz_grid_sample": 500, "fuzz_affine_grid": 4000, "fuzz_deform": 1500, "fuzz_prior_grid": 1500,
        "fuzz_openvino_ops": 15000, "fuzz_elementwise": 1500}
LIBFUZZER = ["-seed=1", "-timeout=60", "-rss_limit_mb=3072", "-print_final_stats=1"]
# A target's whole run: a hang's bound, not a slow host's (docs/fuzzing.md, "Native CI": under a minute)
RUN_TIMEOUT = 900


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> dict[str, Path]:
    if find_clang() is None:
        pytest.skip("no clang (apt-get install clang-14 libclang-rt-14-dev; .ci/run does)")
    return build(tmp_path_factory.mktemp("native"))


def test_every_target_has_a_run_count():
    assert set(RUNS) == set(TARGETS)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_native_target_runs_on_its_seeds(name, targets, tmp_path):
    seeds = tmp_path / "seeds"
    runs = unpack(name, seeds) + RUNS[name]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    argv = [str(targets[name]), f"-runs={runs}", *LIBFUZZER, f"-artifact_prefix={tmp_path}/", str(corpus), str(seeds)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=tmp_path)
    tail = proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert f"Done {runs} runs" in proc.stderr, tail
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-", "leak-"))], tail


FINDINGS = sorted(p for p in (NATIVE / "findings").glob("*/*") if p.is_file())


@pytest.mark.parametrize("finding", FINDINGS, ids=[f"{p.parent.name}/{p.name}" for p in FINDINGS])
def test_native_findings_replay_clean(finding, targets, tmp_path):
    """Each reproducer (findings/<target>/<what it found>, the raw input libFuzzer saved) runs through its
    target without a sanitizer report or a broken oracle: the regression test of its fix."""
    proc = subprocess.run([str(targets[finding.parent.name]), str(finding)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]

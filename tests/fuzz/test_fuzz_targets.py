"""CI for the fuzz targets: each runs for a bounded number of inputs from its seeds (a few seconds), so a
target that rots (an import, a seed, the harness) or a regression any of them finds fails the build. The long
campaign is a documented command (docs/fuzzing.md), not part of CI.

Each target runs in its own process, as libFuzzer runs it (one core, its -timeout per input, its address
space bounded by harness.limit_memory), with a fixed -seed so CI replays the same inputs."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FINDINGS = HERE / "findings"

# target: (inputs to run, per-input timeout in seconds, extra environment)
TARGETS = {
    "fuzz_reader.py": (1200, 5, {}),
    "fuzz_check.py": (300, 5, {}),
    "fuzz_arrays.py": (4000, 5, {}),
    "fuzz_run.py": (400, 10, {}),
    "fuzz_run.py openvino": (150, 20, {"FUZZ_OPENVINO": "1"}),
}
LIBFUZZER = ["-seed=1", "-rss_limit_mb=3072", "-print_final_stats=1"]


def _env(extra: dict) -> dict:
    """This process' environment (so the targets import the irgrid these tests import: the installed one,
    not the clone's un-built source folder), without thread-count settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("IRGRID_NUM_THREADS", "OMP_NUM_THREADS")}
    return {**env, **extra}


@pytest.mark.parametrize("target", TARGETS)
def test_target_runs_on_its_seeds(target, tmp_path):
    runs, timeout, extra = TARGETS[target]
    script = target.split()[0]
    sizes = [] if script == "fuzz_arrays.py" else ["-max_len=256", "-len_control=0"]  # choices, not files
    argv = [sys.executable, str(HERE / script), f"-atheris_runs={runs}", f"-timeout={timeout}", *sizes, *LIBFUZZER,
            f"-artifact_prefix={tmp_path}/", str(tmp_path / "corpus")]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env(extra))
    tail = "\n".join(line for line in proc.stderr.splitlines() if "Instrumenting" not in line)[-3000:]
    # libFuzzer's -timeout is a SIGALRM interval timer that stays armed while the process exits; a
    # teardown slower than half the timeout (OpenVINO's and TBB's, on a loaded machine) then ends with
    # SIGALRM after "Done": seen once in a full suite. A real timeout prints "ALARM" and writes timeout-*.
    assert proc.returncode == 0 or (proc.returncode == -signal.SIGALRM and "ALARM" not in proc.stderr), tail
    assert f"Done {runs} " in proc.stderr, tail
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*")), tail


@pytest.mark.parametrize("folder", sorted(p.name for p in FINDINGS.iterdir() if p.is_dir() and p.name.startswith("fuzz_")))
def test_findings_replay_clean(folder, tmp_path):
    """Every committed reproducer in findings/<target>/ (the raw fuzzer input; the IR targets' findings are
    kept as IRs instead, their inputs naming seeds by index) runs through its target without a finding."""
    inputs = sorted((FINDINGS / folder).iterdir())
    proc = subprocess.run([sys.executable, str(HERE / f"{folder}.py"), f"-artifact_prefix={tmp_path}/", *map(str, inputs)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env({}))
    assert proc.returncode == 0, proc.stderr[-3000:]

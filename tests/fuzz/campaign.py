"""The long campaign (docs/fuzzing.md): run one target for a wall-clock budget on one core, restarting it
after each finding (libFuzzer stops at the first), and report its executions, coverage and findings.

    python tests/fuzz/campaign.py fuzz_reader.py 600 /var/tmp/irgrid-fuzz [--openvino]
    python tests/fuzz/campaign.py fuzz_grid_sample 600 /var/tmp/irgrid-fuzz   # a native target (native/)

The corpus grows in <work>/<target>/corpus, findings land in <work>/<target>/ (crash-*, timeout-*), and
the logs of each run in <work>/<target>/log-N.txt; a native target (a name without .py) is built first
into <work>/native-build (native/build_targets.py). The process is pinned to one CPU (taskset) and OpenMP
told not to spin, so that the 2-thread runs of fuzz_run.py share that CPU instead of taking a second.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBFUZZER = ["-rss_limit_mb=3072", "-print_final_stats=1", "-print_pcs=0"]
# The IR targets' inputs are choices (a few dozen bytes suffice); fuzz_arrays' are whole files (to 4 KiB);
# the native targets' are choices too, with room for their pokes of special values: libFuzzer's 4 KiB.
SIZES = {"fuzz_arrays.py": []}
TIMEOUTS = {"fuzz_run.py": 10}


def main() -> None:
    script, seconds, work = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3])
    openvino = "--openvino" in sys.argv[4:]
    name = Path(script).stem + ("_openvino" if openvino else "")
    if script.endswith(".py"):
        command = [sys.executable, str(HERE / script)]
    else:
        sys.path.insert(0, str(HERE / "native"))
        from build_targets import build

        command = [str(build(work / "native-build")[script])]
        SIZES[script] = []
        TIMEOUTS[script] = 30  # milliseconds an input, but run at nice 19 beside benchmarks: wall time stretches
    folder = work / name
    (folder / "corpus").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("IRGRID_NUM_THREADS", "OMP_NUM_THREADS")}
    env.update(PYTHONPATH=str(HERE.parents[1]), OMP_WAIT_POLICY="passive", FUZZ_OPENVINO="1" if openvino else "0")
    pin = ["taskset", "-c", str(min(os.sched_getaffinity(0)))] if shutil.which("taskset") else []
    started, deadline, runs, executions, cov, ft = time.time(), time.monotonic() + seconds, 0, 0, 0, 0
    while (left := int(deadline - time.monotonic())) > 5:
        runs += 1
        log = folder / f"log-{runs}.txt"
        argv = [*pin, *command, f"-max_total_time={left}",
                f"-timeout={TIMEOUTS.get(script, 5)}", *SIZES.get(script, ["-max_len=256", "-len_control=0"]),
                *LIBFUZZER, f"-artifact_prefix={folder}/",
                str(folder / "corpus")]
        with open(log, "w") as out:
            subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=folder)
        text = log.read_text(errors="replace")
        done = re.findall(r"stat::number_of_executed_units: (\d+)", text) or re.findall(r"^#(\d+)\s", text, re.M)
        executions += int(done[-1]) if done else 0
        for line in re.findall(r"cov: (\d+) ft: (\d+)", text)[-1:]:
            cov, ft = max(cov, int(line[0])), max(ft, int(line[1]))
    # this campaign's findings: an earlier campaign's reproducers may still lie in the folder
    findings = sorted(p.name for p in folder.iterdir()
                      if p.name.startswith(("crash-", "timeout-", "oom-")) and p.stat().st_mtime >= started)
    print(f"{name}: {executions} executions in {seconds:.0f} s over {runs} run(s), cov {cov} ft {ft}, "
          f"corpus {len(list((folder / 'corpus').iterdir()))}, findings {len(findings)}: {' '.join(findings)}")


if __name__ == "__main__":
    main()

"""The threads knob: explicit count, IRGRID_NUM_THREADS, OMP_NUM_THREADS, then the CPUs available
(affinity capped by a cgroup quota); bad values are ConfigErrors naming the variable."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irgrid
from irgrid import threads
from oracles import SAMPLES, assert_one_line_error, run_cli


@pytest.fixture(autouse=True)
def clean_knob(monkeypatch):
    monkeypatch.delenv("IRGRID_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    yield
    irgrid.set_num_threads(None)


def test_resolution_order(monkeypatch):
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: 1)
    assert irgrid.get_num_threads() == 1  # the CPUs available, capped by the quota
    monkeypatch.setenv("OMP_NUM_THREADS", "5,2")
    assert irgrid.get_num_threads() == 5  # the outer level of a nested OMP_NUM_THREADS
    monkeypatch.setenv("IRGRID_NUM_THREADS", "4")
    assert irgrid.get_num_threads() == 4
    irgrid.set_num_threads(3)
    assert irgrid.get_num_threads() == 3
    irgrid.set_num_threads(None)
    assert irgrid.get_num_threads() == 4


@pytest.mark.parametrize("name", ["IRGRID_NUM_THREADS", "OMP_NUM_THREADS"])
@pytest.mark.parametrize("value", ["abc", "0", "-3", "2.5", "abc,2", "4294967297", "1025"])
def test_bad_environment_value_is_a_config_error(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(irgrid.ConfigError) as info:
        irgrid.get_num_threads()
    assert name in str(info.value) and repr(value) in str(info.value)


def test_empty_environment_value_is_unset(monkeypatch):
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: None)
    monkeypatch.setenv("IRGRID_NUM_THREADS", " ")
    assert irgrid.get_num_threads() == threads.available_cores()


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2", threads.MAX_THREADS + 1, 2 ** 31])
def test_set_num_threads_rejects_non_positive_integers(bad):
    """... and counts beyond MAX_THREADS (OpenMP takes a C int: 2**31 overflowed in the kernels)."""
    with pytest.raises(irgrid.ConfigError, match="positive integer"):
        irgrid.set_num_threads(bad)
    with pytest.raises(irgrid.ConfigError, match="positive integer"):
        irgrid.compile_model(SAMPLE, threads=bad)


def test_validate_threads_accepts_numpy_integers():
    assert threads.validate_threads(np.int64(3)) == 3
    assert type(threads.validate_threads(np.int64(3))) is int
    with pytest.raises(irgrid.ConfigError, match="threads="):
        threads.validate_threads(0, "threads=")


@pytest.mark.parametrize("files, expected", [
    ({"cpu.max": "150000 100000\n"}, 2),
    ({"cpu.max": "50000 100000\n"}, 1),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
    ({"cpu,cpuacct/cpu.cfs_quota_us": "250000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 3),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None),
])
def test_cgroup_cpu_limit(tmp_path: Path, files, expected):
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    assert threads.cgroup_cpu_limit(tmp_path) == expected


def test_available_cores_is_capped_by_the_quota(monkeypatch):
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: 1)
    assert threads.available_cores() == 1
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: 10_000)
    assert threads.available_cores() == len(os.sched_getaffinity(0))


SAMPLE = SAMPLES / "flow_warp" / "model.xml"


def test_cli_more_threads_than_cpus_warns_and_runs(tmp_path):
    proc = run_cli("infer", SAMPLE, "-niter", 1, "-nthreads", 64, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    warning = proc.stderr.strip()
    assert len(warning.splitlines()) == 1 and "warning" in warning and "64" in warning
    assert "Threads:    64" in proc.stdout.splitlines()


@pytest.mark.parametrize("name, value", [("IRGRID_NUM_THREADS", "abc"), ("OMP_NUM_THREADS", "0")])
def test_cli_bad_environment_value(tmp_path, name, value):
    proc = run_cli("infer", SAMPLE, "-niter", 1, cwd=tmp_path, env={name: value})
    assert_one_line_error(proc, 2, "ConfigError", name, repr(value))


def test_cli_nthreads_zero_is_a_config_error(tmp_path):
    assert_one_line_error(run_cli("infer", SAMPLE, "-nthreads", 0, cwd=tmp_path), 2, "ConfigError", "0")


@pytest.mark.parametrize("given, expected", [
    ({}, ("PASSIVE", "1000")),  # irgrid's default: sleep after a short spin
    ({"OMP_WAIT_POLICY": "ACTIVE"}, ("ACTIVE", None)),  # a user's policy is kept, no spin count added
    ({"OMP_WAIT_POLICY": "PASSIVE"}, ("PASSIVE", None)),
    ({"GOMP_SPINCOUNT": "0"}, ("PASSIVE", "0")),
])
def test_openmp_wait_defaults_before_libgomp_loads(given, expected, tmp_path):
    """`import irgrid` sets OpenMP's wait policy and spin count (irgrid/__init__.py) unless the user
    chose a policy, and before any kernel module loads libgomp, which reads them once."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    code = ("import os, irgrid; maps = open('/proc/self/maps').read(); "
            "from irgrid._kernels import sampling; "
            "print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'), "
            "'libgomp' in maps, 'libgomp' in open('/proc/self/maps').read())")
    # run outside the checkout: `python -c` puts the working directory first on sys.path, and a
    # checkout's own irgrid has no built kernels when the package is installed (not editable)
    proc = subprocess.run([sys.executable, "-c", code], env={**env, **given}, capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    policy, spin, gomp_after_import, gomp_after_kernel = proc.stdout.split()
    assert (policy, None if spin == "None" else spin) == expected
    # libgomp loads with the first kernel module, after `import irgrid` has set the variables
    assert (gomp_after_import, gomp_after_kernel) == ("False", "True")

"""Running from an un-built source folder (a clone's root) says what to run, in one line."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oracles import ROOT, assert_one_line_error, run_cli

ADVICE = ("NotBuiltError", "pip install -e .", "pip install .")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The irgrid/ source folder without its compiled kernels, as a fresh clone has it."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "irgrid", root / "irgrid",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    return root


def test_the_clone_shadows_the_install(clone):
    proc = subprocess.run([sys.executable, "-c", "import irgrid; print(irgrid.__file__)"], cwd=clone,
                          capture_output=True, text=True, timeout=60)
    assert Path(proc.stdout.strip()) == clone / "irgrid" / "__init__.py"


def test_show_config_names_the_fix(clone):
    proc = subprocess.run([sys.executable, "-c", "import irgrid; irgrid.show_config()"], cwd=clone,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("irgrid.errors.NotBuiltError: ") and all(a in last for a in ADVICE[1:]), proc.stderr
    assert "ModuleNotFoundError" not in proc.stderr


def test_cli_config_is_one_line(clone):
    err = assert_one_line_error(run_cli("config", cwd=clone), 2, *ADVICE)
    assert str(clone / "irgrid") in err


def test_cli_first_kernel_use_is_one_line(clone):
    proc = run_cli("infer", ROOT / "samples" / "flow_warp" / "model.xml", "-niter", 1, cwd=clone)
    assert_one_line_error(proc, 2, *ADVICE, "irgrid._kernels.")


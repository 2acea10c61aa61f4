"""Facts kept in one place: the kernel modules are listed once (irgrid._kernels), and what each
operator runs is its OpSpec's."""
from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import irgrid  # noqa: F401  (registers the operators)
from irgrid import _kernels
from irgrid.registry import all_specs

ROOT = Path(__file__).resolve().parents[1]


def _setup_list(name: str) -> list[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"setup.py has no {name} list")


def test_setup_builds_the_modules_irgrid_kernels_lists():
    assert sorted(_setup_list("KERNELS")) == sorted(_kernels.OPENMP_MODULES)
    assert sorted(_setup_list("PLAIN")) == sorted(_kernels.PLAIN_MODULES)


def test_each_entry_names_a_listed_kernel_that_exists():
    entries = {spec.entry for spec in all_specs() if spec.entry}
    assert entries
    for entry in entries:
        for module, name in re.findall(r"\b([a-z_]+)\.([A-Za-z_]+)\b", entry):
            assert module in _kernels.OPERATOR_KERNELS, entry
            assert hasattr(importlib.import_module(f"irgrid._kernels.{module}"), name), entry

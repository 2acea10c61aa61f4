"""Facts kept in one place: the kernel modules are listed once (irgrid._kernels), and what each
operator runs is its OpSpec's."""
from __future__ import annotations

import ast
import importlib
import re

import irgrid  # noqa: F401  (registers the operators)
from irgrid import _kernels
from irgrid.registry import all_specs
from oracles import ROOT


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


def test_a_new_operator_needs_no_hand_kept_list():
    """Adding an operator touches its module (which registers its OpSpec), its kernel and the import in
    irgrid/ops (or ops/glue) __init__.py. What else knows of operators is generated from the registry:
    the README's table (test_readme.py), the OpenVINO extension's op classes, what describe() names."""
    import sys

    from irgrid.openvino.ops import extensions, op_class

    for path in (ROOT / "irgrid" / "ops").rglob("*.py"):
        if "register(" in path.read_text():
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            assert module in sys.modules, f"{module} registers operators but `import irgrid` does not import it"
    owned = [(spec.type, version) for spec in all_specs() if not spec.native for version in spec.versions]
    assert len(extensions()) == len(owned)
    for type_, version in owned:
        assert op_class(type_, version).get_type_info(None).name == type_


def test_readme_layout_matches_the_tree():
    """The README's Layout block names every module and folder of the package, and each path it names
    at the start of a line exists."""
    readme = (ROOT / "README.md").read_text()
    layout = readme.split("## Layout\n\n```\n", 1)[1].split("```", 1)[0]
    for line in layout.splitlines():
        first = line.split(" ", 1)[0]
        if first:
            assert (ROOT / first).exists(), f"the README's layout names {first}, which does not exist"
    package = ROOT / "irgrid"
    for path in sorted(package.iterdir()):
        if path.name.startswith("__") or path.suffix not in (".py", "") or path.name.endswith(".egg-info"):
            continue
        name = path.name + ("/" if path.is_dir() else "")
        assert name in layout, f"the README's layout does not mention irgrid/{name}"
    for folder in sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith("__")):
        assert f"{folder}/" in layout, f"the README's layout does not mention tests/{folder}/"

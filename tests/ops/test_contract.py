"""The operator contract: IR-free operators, complete attribute specs, and a one-way data path."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import irgrid
from irgrid.errors import ShapeError
from irgrid.registry import TensorInfo, all_specs, find

PACKAGE = Path(irgrid.__file__).parent


def _imports() -> dict[str, set[str]]:
    """irgrid module -> the irgrid modules it imports (relative imports resolved, at any depth)."""
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        base = parts[:-1]  # the package a relative import starts from
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[:len(base) - node.level + 1]
                    target = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [f"{target}.{alias.name}" for alias in node.names]
                found.update(n for n in [target, *names] if n.startswith("irgrid"))
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("irgrid"))
        known = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
                 for p in PACKAGE.rglob("*.py")}
        graph[module] = {m for m in found if m in known and m != module}
    return graph


def test_data_path_is_one_way():
    graph = _imports()
    for module, deps in graph.items():
        if module.startswith("irgrid.ir"):
            assert all(d.startswith(("irgrid.ir", "irgrid.errors")) for d in deps), (module, deps)
        if module.startswith("irgrid.runtime"):
            assert "irgrid.checker" not in deps, module
    assert not any(d.startswith("irgrid.ops") for d in graph["irgrid.registry"])


def test_no_import_cycles():
    graph = {m: {d for d in deps if d != "irgrid"} for m, deps in _imports().items() if m != "irgrid"}
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in graph.get(module, ()):
            if dep.startswith(module + "."):
                continue  # a package importing its own submodules registers them, no cycle
            assert state.get(dep) != 1, " -> ".join(path + [dep])
            if dep not in state:
                visit(dep, path + [dep])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


@pytest.mark.parametrize("spec", all_specs(), ids=lambda s: f"{s.type}-{s.versions[0]}")
def test_attribute_specs_are_complete(spec):
    """Every attribute has a typed default that writes (and goes to OpenVINO's visitor) and reads back."""
    for attr in spec.attrs:
        if attr.default is None:  # an optional Parameter shape: written only when given
            continue
        assert attr.parse(attr.write(attr.default)) == attr.default, attr
        assert attr.parse(attr.visit_value(attr.default)) == attr.default, attr


def test_ownership_and_output_counts():
    owned = {(s.type, v) for s in all_specs() if not s.native for v in s.versions}
    assert owned == {("GridSample", "irgrid1"), ("DeformConv", "irgrid1"), ("AffineGrid", "irgrid1")}
    assert all(v.startswith("irgrid") for _, v in owned)
    assert find("GridSample", "opset9").native and find("ExperimentalDetectronPriorGridGenerator", "opset6").native
    assert find("GridSample", "irgrid1").outputs == 1 and find("Result", "opset1").outputs == 0


def test_version_spellings():
    """GridSample-9 allows only bilinear/bicubic/nearest; irgrid1 also reads ONNX-16's names and writes
    ONNX-20's; both give the kernels one canonical vocabulary."""
    v9, own = find("GridSample", "opset9"), find("GridSample", "irgrid1")
    assert v9.parse_attrs({"mode": "bicubic"})["mode"] == "cubic"
    assert v9.write_attrs(v9.parse_attrs({"mode": "bilinear"}))["mode"] == "bilinear"
    with pytest.raises(irgrid.LayerAttributeError, match="bilinear, bicubic, nearest"):
        v9.parse_attrs({"mode": "linear"})
    assert own.parse_attrs({"mode": "bicubic"}) == own.parse_attrs({"mode": "cubic"})
    assert own.write_attrs(own.parse_attrs({"mode": "bilinear", "align_corners": 1})) == {
        "align_corners": "true", "mode": "linear", "padding_mode": "zeros"}


def test_operators_take_attributes_and_infos_not_layers():
    spec = find("GridSample", "irgrid1")
    attrs = spec.parse_attrs({"mode": "nearest"})
    (out,) = spec.infer(attrs, [TensorInfo((2, 3, None, 5, 6), "f64"), TensorInfo((2, 7, 8, 9, 3), "f32")])
    assert out.shape == (2, 3, 7, 8, 9) and out.element_type == "f64"
    with pytest.raises(ShapeError) as info:
        spec.infer(attrs, [TensorInfo((2, 3, 5, 6), "f32"), TensorInfo((2, 7, 8, 3), "f32")])
    assert info.value.input == 1 and info.value.layer is None


def test_graph_pass_locates_operator_errors(tmp_path):
    """An operator's `input=` index becomes the layer's IR port id, with type, name and id."""
    from irgrid.builder import IRBuilder

    b = IRBuilder("located")
    x, g = b.parameter("x", (1, 2, 4, 4)), b.parameter("g", (1, 3, 3, 3))
    (y,) = b.layer("GridSample", "irgrid1", [x, g], {}, name="gs", outputs=[((1, 2, 3, 3), "f32")])
    b.result(y)
    path = b.save(tmp_path / "m.xml")
    (problem,) = irgrid.check_model(path)
    assert (problem.layer.name, problem.port) == ("gs", 1)
    assert str(problem).startswith('GridSample layer "gs" (id 2), port 1: grid\'s last dim')
    with pytest.raises(ShapeError, match=r'GridSample layer "gs" \(id 2\), port 1'):
        irgrid.compile_model(path)

"""The README's support table is the registry's, and its commands are the ones CI runs."""

from irgrid.registry import support_table
from oracles import ROOT, readme_snippet


def test_support_table_matches_registry():
    readme = (ROOT / "README.md").read_text()
    for row in support_table():
        assert "| " + " | ".join(row) + " |" in readme, f"README lacks the row for {row[0]} {row[1]}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = "pip install '.[test]' && pytest"
    assert command in readme
    assert command in (ROOT / ".ci" / "run").read_text()


def test_python_api_example_runs(monkeypatch):
    """The README's Python snippet, run as written from the repository root."""
    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    assert namespace["problems"] == []
    (name, warped), = namespace["outputs"].items()
    assert name == "warped" and warped.shape == (1, 3, 96, 128)


def test_ir_writer_example_runs(monkeypatch, tmp_path):
    """The README's IRBuilder snippet writes an IR that irgrid checks clean."""
    import irgrid

    readme = (ROOT / "README.md").read_text()
    snippet = readme.split("```python\n")[2].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(snippet, "README.md", "exec"), {})
    assert irgrid.check_model(tmp_path / "volume_warp.xml") == []


def test_openvino_recipe_runs(monkeypatch):
    """The recipe reads and compiles the 3-D sample (an irgrid1 layer) in OpenVINO with the native library."""
    import numpy as np

    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(readme_snippet("core.add_extension(str(irgrid.openvino.library_path()))"), "README.md", "exec"), namespace)
    inputs = dict(np.load(ROOT / "samples/volume_warp/inputs.npz"))
    out = namespace["compiled"](inputs)[0]
    import irgrid

    (expected,) = irgrid.compile_model(ROOT / "samples/volume_warp/model.xml")(inputs).values()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_torch_conversion_example_runs(monkeypatch, tmp_path):
    import pytest

    pytest.importorskip("torch")
    import irgrid

    monkeypatch.chdir(tmp_path)
    exec(compile(readme_snippet("extension=irgrid.openvino.conversion_extensions()"), "README.md", "exec"), {})
    model = irgrid.read_model(tmp_path / "warp.xml")
    assert [layer.version for layer in model.layers.values() if layer.type == "GridSample"] == ["irgrid1"]

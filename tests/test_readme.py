"""The README's support table is the registry's, and its commands are the ones CI runs."""
from pathlib import Path

from irgrid.registry import support_table

ROOT = Path(__file__).resolve().parents[1]


def test_support_table_matches_registry():
    readme = (ROOT / "README.md").read_text()
    for row in support_table():
        assert "| " + " | ".join(row) + " |" in readme, f"README lacks the row for {row[0]} {row[1]}"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = "pip install '.[test]' && pytest"
    assert command in readme
    assert command in (ROOT / ".ci" / "run").read_text()

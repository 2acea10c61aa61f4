"""Fuzz target: `irgrid check`, the checker API and the CLI verb, on structure-aware mutations of the seed
IRs.

Oracle: `irgrid.check_model` returns a list of `Problem`s (each one line when printed, its dict
JSON-serialisable, located at a layer of the model) or raises an IRGridError (the model could not be read);
`irgrid check --json` exits 0, 1 or 2, printing JSON on success and exactly one stderr line on exit 2.
Anything else, a hang past -timeout or memory past harness.limit_memory is a finding.
"""
import contextlib
import io
import json
import sys

import atheris

from harness import limit_memory, mutate_ir, pick_seed, run, scratch_dir, seed_inputs, seed_irs, unexpected, write_ir

with atheris.instrument_imports(include=["irgrid"]):
    import irgrid
    from irgrid.cli import main as cli
    from irgrid.errors import Problem

SEEDS = seed_irs("samples", "saved", "layers")
WORK = scratch_dir()


def test_one_input(data: bytes) -> None:
    (_, xml, blob), rest = pick_seed(data, SEEDS)
    xml, blob = mutate_ir(atheris.FuzzedDataProvider(rest), xml, blob)
    path = write_ir(WORK, xml, blob)
    try:
        problems = irgrid.check_model(path)
    except Exception as exc:
        if unexpected(exc):
            raise
        problems = None
    for problem in problems or ():
        assert isinstance(problem, Problem), problem
        assert len(str(problem).splitlines()) == 1, str(problem)
        json.dumps(problem.to_dict())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(["check", str(path), "--json"])
    lines = err.getvalue().strip().splitlines()
    assert code in (0, 1, 2), code
    if code == 2:
        assert len(lines) == 1, lines
    else:
        json.loads(out.getvalue())
        assert (code == 0) == (problems == []), (code, problems)


if __name__ == "__main__":
    limit_memory()
    run(test_one_input, seed_inputs(len(SEEDS)))

"""The kernels' nogil chunk functions touch no Python object: `cython -a` scores every line 0."""
import re
import shutil
import subprocess
import sys

import pytest

from oracles import ROOT

KERNELS = ROOT / "kernels/cython"


def _nogil_function_lines(source: str) -> set[int]:
    """Line numbers inside top-level `cdef ... nogil` functions (signature excluded)."""
    lines = source.splitlines()
    inside, found = False, set()
    for number, line in enumerate(lines, start=1):
        top_level = line and not line[0].isspace()
        if top_level:
            inside = False
        if top_level and line.startswith("cdef ") and "(" in line:
            # The signature may continue over several lines up to the one ending in ':'.
            end = next(i for i in range(number - 1, len(lines)) if lines[i].rstrip().endswith(":"))
            signature = " ".join(lines[number - 1:end + 1])
            inside = "nogil" in signature
            skip_until = end + 1
            continue
        if inside and number > skip_until and line.strip():
            found.add(number)
    return found


@pytest.mark.parametrize("name", ["sampling", "prior_boxes", "deform_columns", "affine_grid_kernel"])
def test_nogil_chunk_functions_are_white(name, tmp_path):
    cython = shutil.which("cython") or shutil.which("cython3")
    command = [cython] if cython else [sys.executable, "-m", "cython"]
    source = KERNELS / f"{name}.pyx"
    subprocess.run([*command, "-a", "-3", "-I", str(KERNELS), str(source), "-o", str(tmp_path / f"{name}.c")],
                   check=True, capture_output=True)
    html = (tmp_path / f"{name}.html").read_text()
    scores = {int(line): int(score) for score, line in
              re.findall(r'class="cython line score-(\d+)"[^>]*>\+?<span class="">(\d+)</span>', html)}
    lines = _nogil_function_lines(source.read_text())
    assert lines, f"no nogil chunk function found in {source.name}"
    yellow = sorted(n for n in lines if scores.get(n, 0) > 0)
    assert not yellow, f"{source.name} lines {yellow} touch Python objects"

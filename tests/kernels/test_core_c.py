"""The C core (kernels/core) of DeformConv and PriorGridGenerator builds without Python: plain C99 and C11,
no Python.h, Py_ssize_t or OpenMP, and headers a C++ extension can include (kernels/core/README.md)."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from oracles import ROOT
CORE = ROOT / "kernels" / "core"
SOURCES = sorted(path.name for path in CORE.glob("*.c"))  # every kernel of the core
INCLUDES = [f"-I{CORE}"]


def _compiler(*names: str) -> str:
    found = next((shutil.which(n) for n in names if shutil.which(n)), None)
    if not found:
        pytest.skip(f"no {names[0]}")
    return found


@pytest.mark.parametrize("source", SOURCES)
def test_core_source_is_plain_c(source):
    text = (CORE / source).read_text()
    headers = {source.replace(".c", ".h"), *re.findall(r'#include "([^"]+)"', text)}
    for name in headers:
        body = (CORE / name).read_text() if (CORE / name).exists() else ""
        assert "Python.h" not in body and "Py_ssize_t" not in body and "omp.h" not in body, name
        assert "#pragma omp" not in body, name


@pytest.mark.parametrize("std", ["c99", "c11"])
@pytest.mark.parametrize("source", SOURCES)
def test_core_compiles_as_strict_c(source, std, tmp_path):
    """C99 compiled at -O2 (GCC's flow warnings, such as a value read unset, need the optimiser); C11
    checked for syntax and the front end's warnings only: grid_sample.c's per-case copies take a minute
    to optimise, and the standard, not the optimiser, is what differs."""
    cc = _compiler("cc", "gcc", "clang")
    compile_ = ["-O2", "-c", "-o", str(tmp_path / "core.o")] if std == "c99" else ["-fsyntax-only"]
    subprocess.run([cc, f"-std={std}", "-pedantic", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
                    *INCLUDES, *compile_, str(CORE / source)], check=True, capture_output=True)


@pytest.mark.parametrize("source", SOURCES)
def test_core_compiles_without_x86_vector_code(source, tmp_path):
    """The portable build other CPUs get (simd.h's vector paths stubbed, never called there: cpu.h reports
    no AVX2), forced on x86 by IRGRID_NO_X86_SIMD: every function the plans name has its stub. The stubs
    leave their parameters unused, so not -Wextra."""
    cc = _compiler("cc", "gcc", "clang")
    subprocess.run([cc, "-std=c99", "-pedantic", "-Wall", "-Werror", "-Wno-unused-function", "-ffp-contract=off",
                    "-DIRGRID_NO_X86_SIMD", *INCLUDES, "-fsyntax-only", str(CORE / source)], check=True,
                   capture_output=True)


def test_core_headers_link_from_cplusplus(tmp_path):
    cc, cxx = _compiler("cc", "gcc", "clang"), _compiler("c++", "g++", "clang++")
    objects = []
    for source in SOURCES:
        objects.append(tmp_path / source.replace(".c", ".o"))
        subprocess.run([cc, "-O0", "-ffp-contract=off", *INCLUDES, "-c", str(CORE / source), "-o", str(objects[-1])],
                       check=True, capture_output=True)  # what links and runs is the point, not its speed
    main = tmp_path / "main.cpp"
    main.write_text(r"""
#include <cstdio>
#include "deform_im2col.h"
#include "prior_grid.h"
int main() {
    float priors[4] = {-1, -2, 1, 2}, out[2 * 3 * 4];
    irgrid_prior_grid grid{};
    grid.n_priors = 1; grid.layer_h = 2; grid.layer_w = 3; grid.step_w = 4; grid.step_h = 8;
    grid.priors = priors; grid.out = out;
    if (irgrid_prior_grid_plan(&grid)) return 1;
    irgrid_prior_grid_run(&grid, 0, nullptr, nullptr, 0, grid.schedule.units[0]);
    float x[2 * 2] = {1, 2, 3, 4}, col[2 * 2] = {0};
    irgrid_deform_im2col conv{};  // 1-D, 1 channel, kernel 2: a plain convolution's columns
    conv.rank = 1; conv.channels = 1; conv.in_dims[0] = 4; conv.out_dims[0] = 3; conv.kernel[0] = 2;
    conv.strides[0] = 1; conv.dilations[0] = 1; conv.groups = 1; conv.offset_groups = 1;
    conv.tile_start = 1; conv.tile_stop = 3; conv.x = x; conv.col = col;
    int status = irgrid_deform_im2col_plan(&conv);
    conv.rank = 0;
    if (status || irgrid_deform_im2col_plan(&conv) != IRGRID_E_RANK) return 2;
    conv.rank = 1;
    irgrid_deform_im2col_plan(&conv);
    irgrid_deform_im2col_run(&conv, 0, nullptr, nullptr, 0, conv.schedule.units[0]);
    std::printf("%g %g %g %g | %g %g %g %g | %s\n", out[0], out[1], out[2], out[3], col[0], col[1], col[2], col[3],
                irgrid_error_text(IRGRID_E_RANK));
    return 0;
}
""")
    subprocess.run([cxx, "-std=c++17", "-Wall", f"-I{CORE}", str(main), *map(str, objects), "-o", str(tmp_path / "main")],
                   check=True, capture_output=True)
    run = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "1 2 3 6 | 2 3 3 4 | unsupported spatial rank"

"""Builds the native fuzz targets (docs/fuzzing.md, "Native targets"): libFuzzer executables of the C core's
kernels (kernels/core) and of the OpenVINO extension's attribute parsing and shape inference
(kernels/openvino/attributes.cpp, shape_infer.cpp), with AddressSanitizer and UndefinedBehaviorSanitizer.

    python tests/fuzz/native/build_targets.py OUT_DIR      # prints each target's path

clang is required (GCC has no libFuzzer); Debian's `clang-14` with `libclang-rt-14-dev` (.ci/run installs
them). The core is compiled with -ffp-contract=off as irgrid's real builds are, so the bits the targets
compare are the bits irgrid computes. The extension's parsing and inference use no OpenVINO type (only
the standard library and the core's guards.h), so those targets link no OpenVINO library: nothing
uninstrumented sits between the fuzzer and the code under test. A target is rebuilt when any source or
header it may include is newer than it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CORE = ROOT / "kernels" / "core"
EXTENSION = ROOT / "kernels" / "openvino"
CLANGS = ["clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15", "clang-14"]

SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
# -O1 for the campaign and CI alike: grid_sample.c compiles in about twice -O0's time with both sanitizers, and
# the targets run their inputs about ten times faster (docs/fuzzing.md, "Native CI").
FLAGS = ["-g", "-fno-omit-frame-pointer", "-ffp-contract=off", "-O1", *SANITIZE]
# GridSample's 8-channel pixels stream a group's output from 4 MiB on (kernels/core/simd.h), past any problem
# the harness builds (at most about 23,000 points); from 16 KiB (512 points of 8 channels) they reach it.
CORE_DEFINES = ["-DIRGRID_STREAM_SCATTERED_MIN_BYTES=16384"]
# The kernels' loops compare indices and coordinates at every tap, and libFuzzer's comparison tracing
# (trace-cmp: a call per comparison, for its value profile and its table of operands to splice into inputs)
# took 68% of fuzz_grid_sample's time (perf, 2026-11-29), for operands that are computed floats, not input
# bytes. The kernels keep their edge coverage and the sanitizers; the harnesses and the extension's parsing,
# whose comparisons do read the input, keep the tracing.
KERNEL_COVERAGE = ["-fno-sanitize-coverage=trace-cmp"]
# UBSan's pointer-overflow check (an address computed past the ends of the address space) instruments every
# address the kernels compute: 174 of grid_sample.c's 289 s compile with both sanitizers on a first-generation
# Zen (2026-12-02; 115 s without it), and no finding came from it. An access through such an address is still
# AddressSanitizer's; the kernels keep every other UBSan check (signed and float-to-integer overflow above all).
KERNEL_CHECKS = ["-fno-sanitize=pointer-overflow"]
# target -> the sources it links beside its harness (fuzz_<name>.cpp)
TARGETS = {
    "fuzz_grid_sample": [CORE / "grid_sample.c", CORE / "grid_sample_tune.c", CORE / "affine_grid.c"],
    "fuzz_affine_grid": [CORE / "affine_grid.c"],
    "fuzz_elementwise": [CORE / "elementwise.c"],
    "fuzz_deform": [CORE / "deform_im2col.c"],
    "fuzz_prior_grid": [CORE / "prior_grid.c"],
    "fuzz_openvino_ops": [EXTENSION / "attributes.cpp", EXTENSION / "shape_infer.cpp"],
}


def find_clang() -> str | None:
    """The first clang on PATH whose C++ driver (clang++ of the same version) is there too, or None."""
    for name in CLANGS:
        if shutil.which(name) and shutil.which(name.replace("clang", "clang++")):
            return name
    return None


def _newest(paths) -> float:
    return max(p.stat().st_mtime for p in paths)


def build(out: Path, clang: str | None = None, jobs: int = os.cpu_count() or 1) -> dict[str, Path]:
    """Every target in OUT (objects under OUT/obj), compiling `jobs` sources at a time; returns
    {name: executable}. Raises RuntimeError without clang, CalledProcessError when a compile fails."""
    clang = clang or find_clang()
    if clang is None:
        raise RuntimeError("no clang found (" + ", ".join(CLANGS) + "): apt-get install clang-14 libclang-rt-14-dev")
    clangxx = clang.replace("clang", "clang++")
    (out / "obj").mkdir(parents=True, exist_ok=True)
    headers = [*CORE.glob("*.h"), *EXTENSION.glob("*.hpp"), *EXTENSION.glob("*.inc"), HERE / "common.hpp",
               Path(__file__).resolve()]
    includes = [f"-I{CORE}", f"-I{EXTENSION}", f"-I{HERE}"]
    harnesses = {HERE / f"{name}.cpp" for name in TARGETS}
    sources = sorted(harnesses | {source for needed in TARGETS.values() for source in needed})

    def compile_one(source: Path) -> None:
        obj = out / "obj" / (source.stem + ".o")
        if obj.exists() and obj.stat().st_mtime >= _newest([source, *headers]):
            return
        compiler, std = (clangxx, "-std=c++20") if source.suffix == ".cpp" else (clang, "-std=c11")
        # a harness links libFuzzer's main; the code under test gets its coverage instrumentation only
        fuzzer = ["-fsanitize=fuzzer" if source in harnesses else "-fsanitize=fuzzer-no-link"]
        if source.parent == CORE:
            fuzzer += KERNEL_COVERAGE + KERNEL_CHECKS + CORE_DEFINES
        subprocess.run([compiler, std, *FLAGS, *fuzzer, *includes, "-c", str(source), "-o", str(obj)],
                       check=True)

    # grid_sample.c first: by far the longest compile with both sanitizers (above); the rest compiles beside it
    sources.sort(key=lambda source: source.name != "grid_sample.c")
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(compile_one, sources))
    built = {}
    for name, needed in TARGETS.items():
        objects = [out / "obj" / (source.stem + ".o") for source in [HERE / f"{name}.cpp", *needed]]
        exe = out / name
        if not exe.exists() or exe.stat().st_mtime < _newest(objects):
            subprocess.run([clangxx, *FLAGS, "-fsanitize=fuzzer", *map(str, objects), "-lm", "-o", str(exe)],
                           check=True)
        built[name] = exe
    return built


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for path in build(Path(sys.argv[1])).values():
        print(path)

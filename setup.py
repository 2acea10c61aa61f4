"""Build the Cython kernels in kernels/cython/ into irgrid._kernels, with OpenMP (where the compiler has it)
attached only to the modules that use it, and the native OpenVINO extension library in kernels/openvino/
(CMake, against the `openvino` package's C++ headers and CMake files) into irgrid/openvino/.

setuptools drives CMake rather than a CMake-first backend (scikit-build-core, meson-python) because the
Cython modules, their per-module OpenMP and vectoriser flags and the editable install already live
here; the library is one CMake target, built beside them by the same `pip install .`."""
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = ["_openmp", "affine_grid_kernel", "deform_columns", "elementwise", "prior_boxes", "sampling"]  # use prange, or report on OpenMP
PLAIN = ["constants"]  # no OpenMP: importing these must not load libgomp


def openmp_flags() -> list[str]:
    """-fopenmp when the C compiler accepts it (a 1-thread build otherwise), unless IRGRID_NO_OPENMP."""
    if os.environ.get("IRGRID_NO_OPENMP") or sys.platform == "win32":
        return []
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "t.c")
        src.write_text("#include <omp.h>\nint main(void){return omp_get_max_threads() < 1;}\n")
        try:
            ok = subprocess.run([cc, "-fopenmp", str(src), "-o", str(Path(tmp, "t"))],
                                capture_output=True).returncode == 0
        except OSError:
            ok = False
    return ["-fopenmp"] if ok else []


omp = openmp_flags()
# No automatic FMA contraction: a * b + c must round the same wherever it is compiled (AffineGrid and the
# fused AffineGrid -> GridSample kernel share arithmetic and must agree bitwise); the FMAs written as
# intrinsics in the AVX2 headers (chosen at run time) are unaffected.
STRICT = ["-ffp-contract=off"]
# The C core (kernels/core: plain C, shared with the OpenVINO extension's build) that each kernel
# compiles in, and the headers each includes: a change to one rebuilds it.
CORE_SOURCES = {"sampling": ["kernels/core/grid_sample.c", "kernels/core/grid_sample_tune.c", "kernels/core/scratch.c"],
                "affine_grid_kernel": ["kernels/core/affine_grid.c"],
                "elementwise": ["kernels/core/elementwise.c", "kernels/core/scratch.c"],
                "deform_columns": ["kernels/core/deform_im2col.c", "kernels/core/gemm.c"], "prior_boxes": ["kernels/core/prior_grid.c"]}
CORE_HEADERS = [str(path) for path in sorted(Path("kernels/core").glob("*.h"))]
DEPENDS = {name: ["kernels/cython/worker_cpus.h"] for name in KERNELS if name != "_openmp"}
for name in CORE_SOURCES:
    DEPENDS[name] += CORE_HEADERS + ["kernels/cython/core.pxd"]
# DeformConv's scalar path (kernels/core/deform_im2col.c, compiled into deform_columns only, so the module's
# flags are that file's) fills small per-point tap arrays one value at a time and reads them right back;
# GCC's SLP vectoriser turns those reads into 16-byte loads of values just stored as two 8-byte ones, which
# the CPU cannot forward from its store buffer (a stall per point and tap: 3-D DeformConv took 1.2x the time).
NO_SLP = {"deform_columns": ["-fno-tree-slp-vectorize"]}
# numpy's C API: sampling.SamplePlan checks its arrays' dtype and shape without Python calls.
numpy_api = dict(include_dirs=["kernels/cython", "kernels/core", numpy.get_include()],
                 define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])
extensions = [
    Extension(f"irgrid._kernels.{name}", [f"kernels/cython/{name}.pyx", *CORE_SOURCES.get(name, [])],
              depends=DEPENDS.get(name, []),
              extra_compile_args=["-O3", *STRICT, *NO_SLP.get(name, []), *omp], extra_link_args=omp, **numpy_api)
    for name in KERNELS
] + [Extension(f"irgrid._kernels.{name}", [f"kernels/cython/{name}.pyx"], depends=["kernels/core/guards.h"],
               include_dirs=["kernels/cython", "kernels/core"], extra_compile_args=["-O2", *STRICT])
     for name in PLAIN]


class BuildWithNativeLibrary(build_ext):
    """build_ext, the modules compiled side by side (one per CPU), beside kernels/openvino's CMake project,
    built at the same time into irgrid/openvino/libirgrid_openvino.so, with libirgrid_openvino.json naming
    the OpenVINO version it was built against (irgrid.openvino.native): on a 2-vCPU first-generation Zen the
    whole build took 223 s one compile at a time. Without a C++ compiler or CMake the library is left out
    with a warning (irgrid's Python ops still carry the operators into OpenVINO), unless
    IRGRID_REQUIRE_NATIVE=1 makes that an error."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        native = self.guarded(self.start_native_library)
        super().run()
        if native is not None:
            self.guarded(lambda: self.finish_native_library(*native))

    @staticmethod
    def guarded(step):
        try:
            return step()
        except (OSError, subprocess.CalledProcessError) as exc:
            if os.environ.get("IRGRID_REQUIRE_NATIVE") == "1":
                raise
            print(f"warning: the native OpenVINO extension library was not built ({exc}); "
                  "irgrid's Python ops remain", file=sys.stderr)
            return None

    def start_native_library(self) -> tuple[subprocess.Popen, Path]:
        """Configure the CMake project, then start its build; returns (the build, its folder)."""
        import openvino.utils

        build = Path(self.build_temp, "openvino_extension").resolve()
        build.mkdir(parents=True, exist_ok=True)
        cmake = os.environ.get("CMAKE", "cmake")
        subprocess.run([cmake, "-S", str(Path("kernels/openvino").resolve()), "-B", str(build), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release", f"-DOpenVINO_DIR={openvino.utils.get_cmake_path()}",
                        f"-DTBB_DIR={openvino.utils.get_cmake_path()}",
                        # installed beside the openvino package: site-packages/{irgrid/openvino, openvino/libs}
                        "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON", "-DCMAKE_INSTALL_RPATH=$ORIGIN/../../openvino/libs"],
                       check=True)
        return subprocess.Popen([cmake, "--build", str(build), "--parallel", str(os.cpu_count() or 1)]), build

    def finish_native_library(self, process: subprocess.Popen, build: Path) -> None:
        import json

        import openvino

        if process.wait() != 0:
            raise subprocess.CalledProcessError(process.returncode, process.args)
        target = Path("irgrid/openvino") if self.inplace else Path(self.build_lib, "irgrid/openvino")
        target.mkdir(parents=True, exist_ok=True)
        self.copy_file(str(build / "libirgrid_openvino.so"), str(target / "libirgrid_openvino.so"))
        (target / "libirgrid_openvino.json").write_text(json.dumps({"openvino": openvino.__version__}) + "\n")


setup(ext_modules=cythonize(extensions, include_path=["kernels/cython"], compiler_directives={"language_level": 3}),
      cmdclass={"build_ext": BuildWithNativeLibrary})

"""Compiled Cython kernels (sources in the top-level kernels/cython/ folder).

The one list of the kernel modules: setup.py builds the same names (tests/test_one_place.py holds
it to them), irgrid.openvino.ops imports the operator kernels, and an OpSpec's `entry` names one.
"""

# The kernels operators run; each gives its OpenMP workers the CPUs of the thread importing it.
OPERATOR_KERNELS = ("affine_grid_kernel", "deform_columns", "prior_boxes", "sampling")
# What irgrid's runtime runs beside the operators' kernels: chains of element-wise glue layers in one pass.
RUNTIME_KERNELS = ("elementwise",)
# Built with OpenMP: the kernels above and `_openmp`, which reports on the OpenMP runtime.
OPENMP_MODULES = ("_openmp", *OPERATOR_KERNELS, *RUNTIME_KERNELS)
# Built without OpenMP: importing these must not load libgomp.
PLAIN_MODULES = ("constants",)

# cython: language_level=3
"""The codes and limits of the C core (kernels/core/guards.h), for the Python side (irgrid/ops/*.py).

Built without OpenMP, so importing irgrid (which registers the operators, whose attribute specs use
these names) does not load libgomp: OMP_* variables are then read only when a kernel first runs,
after irgrid has checked them.
"""
from core cimport (
    IRGRID_PAD_ZEROS, IRGRID_PAD_BORDER, IRGRID_PAD_REFLECTION, IRGRID_MODE_NEAREST, IRGRID_MODE_LINEAR,
    IRGRID_MODE_CUBIC, IRGRID_MAX_TAPS,
)

MODES = {"nearest": IRGRID_MODE_NEAREST, "linear": IRGRID_MODE_LINEAR, "cubic": IRGRID_MODE_CUBIC}
PADDINGS = {"zeros": IRGRID_PAD_ZEROS, "border": IRGRID_PAD_BORDER, "reflection": IRGRID_PAD_REFLECTION}
TAPS_PER_DIM = {"nearest": 1, "linear": 2, "cubic": 4}
MAX_TAPS_PER_POINT = IRGRID_MAX_TAPS

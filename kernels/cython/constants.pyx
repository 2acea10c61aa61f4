# cython: language_level=3
"""The codes and limits of interpolation.pxd, for the Python side (irgrid/ops/*.py).

Built without OpenMP, so importing irgrid (which registers the operators, whose attribute specs use
these names) does not load libgomp: OMP_* variables are then read only when a kernel first runs,
after irgrid has checked them.
"""
from interpolation cimport (
    PAD_ZEROS, PAD_BORDER, PAD_REFLECTION, MODE_NEAREST, MODE_LINEAR, MODE_CUBIC, MAX_TAPS,
)

MODES = {"nearest": MODE_NEAREST, "linear": MODE_LINEAR, "cubic": MODE_CUBIC}
PADDINGS = {"zeros": PAD_ZEROS, "border": PAD_BORDER, "reflection": PAD_REFLECTION}
TAPS_PER_DIM = {"nearest": 1, "linear": 2, "cubic": 4}
MAX_TAPS_PER_POINT = MAX_TAPS

"""Glue layers, computed with numpy, so the graphs around the grid operators run."""
from . import (arithmetic, comparison, convert, data_movement, elementwise, expand, gather_nd, interpolate,  # noqa: F401
               io, matmul, range, reduction, reshape, scatter_elements, scatter_nd, select, slicing, split)

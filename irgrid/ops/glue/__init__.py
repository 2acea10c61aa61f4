"""Glue layers, computed with numpy (the heaviest f32 ones on one-op OpenVINO models: irgrid/dense.py),
so the graphs around the grid operators run."""
from . import (adaptive_pooling, arithmetic, comparison, convert, data_movement, elementwise, expand,  # noqa: F401
               gather_nd, interpolate, io, matmul, non_zero, pooling, prelu, range, reduction, reshape,
               scatter_elements, scatter_nd, select, slicing, split)

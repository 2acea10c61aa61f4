"""Glue layers, computed with numpy, so the graphs around the grid operators run."""
from . import arithmetic, convert, data_movement, io, reshape  # noqa: F401

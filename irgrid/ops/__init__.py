"""Every operator irgrid runs, one module each; importing this package registers them all."""
from . import convolution, deform_conv, glue, grid_sample, prior_grid  # noqa: F401

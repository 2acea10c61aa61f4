"""Every operator irgrid runs, one module each; importing this package registers them all."""
from . import affine_grid, convolution, deform_conv, glue, grid_sample, prior_grid  # noqa: F401

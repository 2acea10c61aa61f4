# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""AffineGrid: the sampling grid theta @ [x, y, (z,) 1] at every point of a regular (D,) H, W lattice.

The driver of the C core's kernel (kernels/core/affine_grid.h): validate, fill its problem struct, plan,
and run its chunk function (chunks of a fixed number of points) over `prange`. The fused AffineGrid ->
GridSample kernel computes its coordinates with the same core function (kernels/core/affine.h).
"""
from cython.parallel cimport prange
from cython cimport floating
from libc.limits cimport INT_MAX

from core cimport (
    IRGRID_AFFINE_MAX_RANK, IRGRID_F32, IRGRID_F64, irgrid_affine_grid, irgrid_affine_grid_plan,
    irgrid_affine_grid_run, irgrid_error_text, irgrid_index,
)
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

MAX_RANK = IRGRID_AFFINE_MAX_RANK


cdef void run_serially(const irgrid_affine_grid* p) noexcept nogil:
    """A planned problem's units, in this thread."""
    if p.schedule.phases:
        irgrid_affine_grid_run(p, 0, NULL, NULL, 0, p.schedule.units[0])


def affine_grid(const floating[::1] theta, floating[::1] grid, Py_ssize_t batch, const Py_ssize_t[::1] out_dims,
                bint align_corners, int num_threads) -> None:
    """Flattened theta (batch, r, r + 1) -> flattened grid (batch, *out_dims, r); out_dims outermost first."""
    cdef Py_ssize_t rank = out_dims.shape[0]
    cdef Py_ssize_t points = 1, k
    cdef irgrid_index u
    cdef irgrid_affine_grid p
    cdef int status
    if rank < 1 or rank > IRGRID_AFFINE_MAX_RANK:
        raise ValueError(f"rank must be in 1..{IRGRID_AFFINE_MAX_RANK}")
    for k in range(rank):
        if out_dims[k] < 1:
            raise ValueError("grid dims must be positive")
        points *= out_dims[k]
    if out_dims[rank - 1] > INT_MAX:
        raise ValueError(f"rows of more than {INT_MAX} points are not supported")
    if batch < 0 or theta.shape[0] != batch * rank * (rank + 1) or grid.shape[0] != batch * points * rank:
        raise ValueError("buffer sizes do not match the shapes")
    if batch == 0:
        return
    p.dtype = IRGRID_F32 if floating is float else IRGRID_F64
    p.batch, p.rank, p.align_corners, p.threads = batch, rank, align_corners, num_threads
    for k in range(rank):
        p.out_dims[k] = out_dims[k]
    p.theta, p.grid = &theta[0], &grid[0]
    status = irgrid_affine_grid_plan(&p)
    if status:
        raise ValueError(irgrid_error_text(status).decode())
    if p.schedule.workers <= 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            run_serially(&p)
        return
    for u in prange(p.schedule.units[0], nogil=True, schedule="static", num_threads=p.schedule.workers):
        irgrid_free_worker()
        irgrid_affine_grid_run(&p, 0, NULL, NULL, u, u + 1)

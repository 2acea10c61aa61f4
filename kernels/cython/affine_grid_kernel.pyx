# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""AffineGrid: the sampling grid theta @ [x, y, (z,) 1] at every point of a regular (D,) H, W lattice.

Chunk function + prange driver: `affine_grid_points` writes a range of one batch item's points with
affine.pxd's `affine_points` and touches no Python object, so a native OpenVINO extension can drive
it with its own loop; the fused AffineGrid -> GridSample kernel (sampling.pyx) computes its
coordinates with the same `affine_points`.
"""
from cython.parallel cimport prange
from cython cimport floating
from libc.limits cimport INT_MAX

from affine cimport AFFINE_MAX_RANK, affine_axes, affine_points
from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

MAX_RANK = AFFINE_MAX_RANK

cdef enum:
    # Grid points per work unit: enough that waking a thread pays off; fixed, so results never depend
    # on the thread count.
    POINTS_PER_CHUNK = 16384


cdef void affine_grid_points(const floating* theta, floating* grid, Py_ssize_t rank, const Py_ssize_t* extents,
                             const floating* starts, const floating* steps, Py_ssize_t points,
                             Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Points [start, stop) of batch item `batch_index`: theta (N, rank, rank + 1), grid (N, points, rank)."""
    affine_points(theta + batch_index * rank * (rank + 1), grid + (batch_index * points + start) * rank, rank,
                  extents, starts, steps, start, stop)


def affine_grid(const floating[::1] theta, floating[::1] grid, Py_ssize_t batch, const Py_ssize_t[::1] out_dims,
                bint align_corners, int num_threads) -> None:
    """Flattened theta (batch, r, r + 1) -> flattened grid (batch, *out_dims, r); out_dims outermost first."""
    cdef Py_ssize_t rank = out_dims.shape[0]
    cdef Py_ssize_t points = 1, k, chunk, b, start, chunks_per_item, n_chunks
    cdef Py_ssize_t extents[AFFINE_MAX_RANK]
    cdef floating starts[AFFINE_MAX_RANK]
    cdef floating steps[AFFINE_MAX_RANK]
    if rank < 1 or rank > AFFINE_MAX_RANK:
        raise ValueError(f"rank must be in 1..{AFFINE_MAX_RANK}")
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
    affine_axes(&out_dims[0], rank, align_corners, extents, starts, steps)
    chunks_per_item = (points + POINTS_PER_CHUNK - 1) // POINTS_PER_CHUNK
    n_chunks = batch * chunks_per_item
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            for b in range(batch):
                affine_grid_points(&theta[0], &grid[0], rank, extents, starts, steps, points, b, 0, points)
        return
    for chunk in prange(n_chunks, nogil=True, schedule="static", num_threads=num_threads):
        irgrid_free_worker()
        b = chunk // chunks_per_item
        start = (chunk - b * chunks_per_item) * POINTS_PER_CHUNK
        affine_grid_points(&theta[0], &grid[0], rank, extents, starts, steps, points, b, start,
                           min(start + POINTS_PER_CHUNK, points))

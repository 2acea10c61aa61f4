# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""AffineGrid: the sampling grid theta @ [x, y, (z,) 1] at every point of a regular (D,) H, W lattice.

Chunk function + prange driver: `affine_grid_points` writes a range of one batch item's points and
touches no Python object, so a native OpenVINO extension can drive it with its own loop. The
arithmetic is `affine_point`'s of affine.pxd, which the fused AffineGrid -> GridSample kernel
(sampling.pyx) shares.
"""
from cython.parallel cimport prange
from cython cimport floating
from libc.limits cimport INT_MAX

from affine cimport AFFINE_MAX_RANK, affine_axes, first_index, next_index

MAX_RANK = AFFINE_MAX_RANK

cdef enum:
    # Grid points per work unit: enough that waking a thread pays off; fixed, so results never depend
    # on the thread count.
    POINTS_PER_CHUNK = 16384


cdef void affine_grid_points(const floating* theta, floating* grid, Py_ssize_t rank, const Py_ssize_t* extents,
                             const floating* starts, const floating* steps, Py_ssize_t points,
                             Py_ssize_t batch_index, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Points [start, stop) of batch item `batch_index`: theta (N, rank, rank + 1), grid (N, points, rank).

    Row by row: along a row only x changes, so theta's y and z terms are computed once per row and
    the inner loop, on local scalars only, is a few multiply-adds the compiler vectorises. Every
    coordinate is still exactly `affine_point`'s sum in its order, ((t0 * x + t1 * y) + t2 * z) + t3
    (the build disables FMA contraction), so AffineGrid and the fused kernel agree bitwise.
    """
    cdef Py_ssize_t index[AFFINE_MAX_RANK]
    cdef Py_ssize_t n, p = start, cols = rank + 1
    cdef int i, first  # int: packed int -> float conversion, so the row loops vectorise
    cdef const floating* t = theta + batch_index * rank * cols
    cdef floating* g = grid + (batch_index * points + start) * rank
    cdef floating x, x0 = starts[0], dx = steps[0]
    # Per output coordinate k: theta's x column s_k, its constant column c_k, and per row the y and
    # z terms y_k, z_k.
    cdef floating s0 = t[0], s1 = 0, s2 = 0, c0 = t[rank], c1 = 0, c2 = 0
    cdef floating y0 = 0, y1 = 0, y2 = 0, z0 = 0, z1 = 0, z2 = 0, y, z
    if rank == 2:
        s1, c1 = t[3], t[5]
    elif rank == 3:
        s1, s2, c1, c2 = t[4], t[8], t[7], t[11]
    first_index(start, rank, extents, index)
    while p < stop:
        n = min(extents[0] - index[0], stop - p)
        first = <int>index[0]
        if rank == 2:
            y = starts[1] + <floating>index[1] * steps[1]
            y0, y1 = t[1] * y, t[4] * y
            for i in range(first, first + <int>n):
                x = x0 + <floating>i * dx
                g[0] = s0 * x + y0 + c0
                g[1] = s1 * x + y1 + c1
                g += 2
        elif rank == 3:
            y = starts[1] + <floating>index[1] * steps[1]
            z = starts[2] + <floating>index[2] * steps[2]
            y0, y1, y2 = t[1] * y, t[5] * y, t[9] * y
            z0, z1, z2 = t[2] * z, t[6] * z, t[10] * z
            for i in range(first, first + <int>n):
                x = x0 + <floating>i * dx
                g[0] = s0 * x + y0 + z0 + c0
                g[1] = s1 * x + y1 + z1 + c1
                g[2] = s2 * x + y2 + z2 + c2
                g += 3
        else:
            for i in range(first, first + <int>n):
                g[0] = s0 * (x0 + <floating>i * dx) + c0
                g += 1
        p += n
        index[0] = extents[0] - 1  # the row's last point: next_index carries into the outer dims
        next_index(rank, extents, index)


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
        b = chunk // chunks_per_item
        start = (chunk - b * chunks_per_item) * POINTS_PER_CHUNK
        affine_grid_points(&theta[0], &grid[0], rank, extents, starts, steps, points, b, start,
                           min(start + POINTS_PER_CHUNK, points))

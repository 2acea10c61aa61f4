# cython: language_level=3, cdivision=True
"""Affine-grid coordinates, shared by AffineGrid (affine_grid_kernel.pyx) and the fused
AffineGrid -> GridSample kernel (sampling.pyx): both compute every coordinate with this one piece of
arithmetic, so fusing them changes no bit of the result.

Semantics (ONNX AffineGrid-20's function body): along an axis of L points, base coordinate i is
start + i * step, with step = 2 / L and start = -1 + step / 2 (align_corners=0), or step = 2 / (L - 1)
and start = -1 (align_corners=1). The point's normalised coordinates are theta @ [x, y, (z,) 1].
Where the spec is undefined (L = 1 with align_corners=1: 2 / 0), the single point sits at 0, its own
centre, as torch places it.
"""
from cython cimport floating

cdef enum:
    AFFINE_MAX_RANK = 3  # AffineGrid is 2-D or 3-D (1-D also works)


cdef inline void axis_start_step(Py_ssize_t length, bint align_corners, floating* start,
                                 floating* step) noexcept nogil:
    if align_corners:
        if length == 1:
            start[0] = 0
            step[0] = 0
            return
        step[0] = <floating>2 / <floating>(length - 1)
        start[0] = -1
        return
    step[0] = <floating>2 / <floating>length
    start[0] = -1 + step[0] / 2


cdef inline void first_index(Py_ssize_t point, Py_ssize_t rank, const Py_ssize_t* extents,
                             Py_ssize_t* index) noexcept nogil:
    """The multi-index of flat `point` over `extents`, both listed innermost (x) first."""
    cdef Py_ssize_t k
    for k in range(rank):
        index[k] = point % extents[k]
        point = point // extents[k]


cdef inline void next_index(Py_ssize_t rank, const Py_ssize_t* extents, Py_ssize_t* index) noexcept nogil:
    """Advance a multi-index (innermost first) to the next point in row-major order."""
    cdef Py_ssize_t k
    for k in range(rank):
        index[k] += 1
        if index[k] < extents[k]:
            return
        index[k] = 0


cdef inline void affine_axes(const Py_ssize_t* out_dims, Py_ssize_t rank, bint align_corners,
                             Py_ssize_t* extents, floating* starts, floating* steps) noexcept nogil:
    """Per-axis extents, starts and steps innermost first, from out_dims listed outermost first
    (size[2:]: (D,) H, W)."""
    cdef Py_ssize_t k
    for k in range(rank):
        extents[k] = out_dims[rank - 1 - k]
        axis_start_step(extents[k], align_corners, starts + k, steps + k)


cdef inline void affine_points(const floating* t, floating* g, Py_ssize_t rank, const Py_ssize_t* extents,
                               const floating* starts, const floating* steps, Py_ssize_t start,
                               Py_ssize_t stop) noexcept nogil:
    """The coordinates of lattice points [start, stop) of one item into g (stop - start points of
    `rank` values): t is the item's theta (rank, rank + 1); extents below INT_MAX (callers check).

    Row by row: along a row only x changes, so theta's y and z terms are computed once per row and
    the inner loop, on local scalars only, is a few multiply-adds the compiler vectorises. Each
    coordinate is theta @ [x, y, (z,) 1] summed left to right, ((t0 * x + t1 * y) + t2 * z) + t3,
    with x = start + i * step per axis (the build disables FMA contraction); AffineGrid and the fused
    kernel both call this function, so they agree bitwise.
    """
    cdef Py_ssize_t index[AFFINE_MAX_RANK]
    cdef Py_ssize_t n, p = start, cols = rank + 1
    cdef int i, first  # int: packed int -> float conversion, so the row loops vectorise
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

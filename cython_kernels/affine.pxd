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


cdef inline void affine_point(const floating* theta, Py_ssize_t rank, const Py_ssize_t* index,
                              const floating* starts, const floating* steps, floating* g) noexcept nogil:
    """g = theta @ [base, 1] at the point `index`: theta is (rank, rank + 1) row-major; index, starts,
    steps and g list x (innermost) first. Summed left to right: theta[k, 0] * x + theta[k, 1] * y ...
    (2-D and 3-D written out, the same sums in the same order, so that the compiler keeps them in
    registers)."""
    cdef floating x = starts[0] + <floating>index[0] * steps[0]
    cdef floating y, z
    if rank == 2:
        y = starts[1] + <floating>index[1] * steps[1]
        g[0] = theta[0] * x + theta[1] * y + theta[2]
        g[1] = theta[3] * x + theta[4] * y + theta[5]
    elif rank == 3:
        y = starts[1] + <floating>index[1] * steps[1]
        z = starts[2] + <floating>index[2] * steps[2]
        g[0] = theta[0] * x + theta[1] * y + theta[2] * z + theta[3]
        g[1] = theta[4] * x + theta[5] * y + theta[6] * z + theta[7]
        g[2] = theta[8] * x + theta[9] * y + theta[10] * z + theta[11]
    else:
        g[0] = theta[0] * x + theta[1]


cdef inline void affine_axes(const Py_ssize_t* out_dims, Py_ssize_t rank, bint align_corners,
                             Py_ssize_t* extents, floating* starts, floating* steps) noexcept nogil:
    """Per-axis extents, starts and steps innermost first, from out_dims listed outermost first
    (size[2:]: (D,) H, W)."""
    cdef Py_ssize_t k
    for k in range(rank):
        extents[k] = out_dims[rank - 1 - k]
        axis_start_step(extents[k], align_corners, starts + k, steps + k)

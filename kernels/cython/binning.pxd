# cython: language_level=3, cdivision=True
"""A scattered grid's points taken tile by tile. GridSample's 3-D cubic run reads a point's 64 taps
from 16 rows of its group's scratch (4 MiB for 8 channels of 32x64x64); on a uniformly random grid
consecutive points' rows lie anywhere, so nearly every row comes from L3. Sorted by the tile of the
volume they sample (16 pixels of one row: a tile's taps span 4 planes x 4 rows x 19 pixels, 9.5 KiB,
within L1; 2, 4, ... rows where the volume has more tiles than a chunk has points), points that read
the same rows run together.

Per chunk of at most BIN_CAPACITY points of a batch item, once for all channel groups (sampling.pyx's
sort_chunk): the points' tile keys (simd_gather.h's irgrid_tile_keys) and a stable counting sort of
their coordinates into tile order (`sort_by_tile`). Then per channel group (binned_span): the run over
them writing each point's channels as one pixel, and irgrid_unbin putting the outputs back in point
order. A point's result depends only on its own coordinates, so the order changes no bit of it.
Whether a chunk pays for this is judged from its first BIN_SAMPLE points (`scattered`): a smooth
warp's consecutive points mostly share a tile and run faster in their own order.
"""
from libc.string cimport memset
from cython cimport floating

cdef enum:
    BIN_SAMPLE = 1024  # points `scattered` looks at (a multiple of the vector width)


cdef inline Py_ssize_t tiling(Py_ssize_t rank, const Py_ssize_t* dims, bint align_corners, Py_ssize_t most,
                              Py_ssize_t* tiles, double* scale, double* offset, Py_ssize_t* judge_rows) noexcept nogil:
    """Tiles along each dim (16 pixels along rows; 1 row, or the fewest of 2, 4, 8, ... that keep the
    tiles within `most`; 1 along the others; taps from 2 pixels before to 2 after the volume) and the
    map from a normalised coordinate g to its tile, floor(g * scale + offset) (GridSample's pixel
    coordinate, plus 2, over the tile size); returns how many tiles in all (more than `most` only
    where even one tile of all the rows is too many). judge_rows: tile rows per tile of at least 4
    rows, the ones `scattered` judges by."""
    cdef Py_ssize_t k, size, rows = 1, total
    while True:
        total = 1
        for k in range(rank):
            size = 16 if k == rank - 1 else (rows if k == rank - 2 else 1)
            tiles[k] = (dims[k] + 4 + size - 1) // size
            scale[k] = (dims[k] - 1 if align_corners else dims[k]) / (2.0 * size)
            offset[k] = ((dims[k] - 1) / 2.0 + 2) / size
            total *= tiles[k]
        if total <= most or rank < 2 or rows >= dims[rank - 2] + 4:
            judge_rows[0] = max(1, 4 // rows)
            return total
        rows *= 2


cdef inline Py_ssize_t judged_tile(int key, Py_ssize_t row_tiles, Py_ssize_t x_tiles,
                                   Py_ssize_t judge_rows) noexcept nogil:
    """A tile key's tile of judge_rows tile rows (the same pixels along rows, outer dims as they are)."""
    cdef Py_ssize_t x = key % x_tiles, row = key // x_tiles
    return (row // row_tiles * row_tiles + row % row_tiles // judge_rows) * x_tiles + x


cdef inline bint scattered(const int* keys, Py_ssize_t m, Py_ssize_t row_tiles, Py_ssize_t x_tiles,
                           Py_ssize_t judge_rows) noexcept nogil:
    """Whether more than every other one of m consecutive points changes tile, tiles of at least 4 rows
    (judge_rows tile rows: `tiling`). Judged by tiles of 4 rows, the benchmark's smooth warps change
    tile at 12-20% of their points and run faster unbinned; by 1-row tiles, at 25-33%, and a warp
    turned to run down the rows would change at every point."""
    cdef Py_ssize_t i, changes = 0
    for i in range(1, m):
        changes += (judged_tile(keys[i], row_tiles, x_tiles, judge_rows)
                    != judged_tile(keys[i - 1], row_tiles, x_tiles, judge_rows))
    return 2 * changes > m


cdef inline void sort_by_tile(const floating* g, Py_ssize_t n, Py_ssize_t n_tiles, int* counts, int* slot,
                              int* order, floating* binned) noexcept nogil:
    """3-D points g[0, n) (3 coordinates each: only 3-D cubic bins) stably sorted by their tile keys,
    given in slot: their coordinates into `binned`, and slot[i] set to point i's position there
    (counts: n_tiles ints; order: n ints, the points in tile order). The positions are scattered
    first and the coordinates then gathered in order: scattering each point's coordinates to its
    position stalled on the stores (each a random line). The gather is spelled out for 3
    coordinates: a loop over them per point took 1.1-1.3x sort_chunk's CPU time (perf, random grid)."""
    cdef Py_ssize_t i, j, t, total = 0, count
    memset(counts, 0, n_tiles * sizeof(int))
    for i in range(n):
        counts[slot[i]] += 1
    for t in range(n_tiles):
        count = counts[t]
        counts[t] = <int>total
        total += count
    for i in range(n):
        t = slot[i]
        slot[i] = counts[t]
        order[counts[t]] = <int>i
        counts[t] += 1
    for j in range(n):
        i = order[j]
        binned[3 * j], binned[3 * j + 1], binned[3 * j + 2] = g[3 * i], g[3 * i + 1], g[3 * i + 2]

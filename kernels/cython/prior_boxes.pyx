# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""ExperimentalDetectronPriorGridGenerator-6: every prior shifted to every cell centre of the grid.

Chunk function + prange driver: `prior_grid_rows` holds all the arithmetic for a range of grid rows
and touches no Python object, so a native OpenVINO extension can drive it with its own loop.
"""
from cython.parallel cimport prange
from cython cimport floating

from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef enum:
    # Output values per work unit: enough that waking a thread pays off. The chunk's row count
    # follows from the shapes alone, so results never depend on the thread count.
    VALUES_PER_CHUNK = 65536


cdef void prior_grid_rows(const floating* priors, Py_ssize_t n_priors, floating* out, Py_ssize_t layer_w,
                          floating step_w, floating step_h, Py_ssize_t row_start,
                          Py_ssize_t row_stop) noexcept nogil:
    """Rows [row_start, row_stop) of the grid: out[h, w, s] = priors[s] + step * (cell + 0.5).

    The arithmetic stays in `floating` (f32 for f32, as OpenVINO's CPU plugin computes).
    """
    cdef Py_ssize_t h, w, s
    cdef floating half = 0.5, cx, cy
    cdef floating* o
    for h in range(row_start, row_stop):
        cy = step_h * (<floating>h + half)
        for w in range(layer_w):
            cx = step_w * (<floating>w + half)
            o = out + (h * layer_w + w) * n_priors * 4
            for s in range(n_priors):
                o[4 * s + 0] = priors[4 * s + 0] + cx
                o[4 * s + 1] = priors[4 * s + 1] + cy
                o[4 * s + 2] = priors[4 * s + 2] + cx
                o[4 * s + 3] = priors[4 * s + 3] + cy


def prior_grid(const floating[:, ::1] priors, floating[::1] out, Py_ssize_t layer_h, Py_ssize_t layer_w,
               floating step_w, floating step_h, int num_threads) -> None:
    """Write the first layer_h * layer_w * n_priors rows of `out` (flat, row-major [*, 4])."""
    cdef Py_ssize_t n_priors = priors.shape[0]
    cdef Py_ssize_t rows_per_chunk, n_chunks, chunk, start, stop
    if priors.shape[1] != 4:
        raise ValueError("priors must have shape [n, 4]")
    if layer_h < 0 or layer_w < 0 or out.shape[0] < layer_h * layer_w * n_priors * 4:
        raise ValueError("output buffer is smaller than the grid")
    if n_priors == 0 or layer_w == 0 or layer_h == 0:
        return
    rows_per_chunk = max(VALUES_PER_CHUNK // (layer_w * n_priors * 4), 1)
    n_chunks = (layer_h + rows_per_chunk - 1) // rows_per_chunk
    num_threads = max(min(num_threads, n_chunks), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            prior_grid_rows(&priors[0, 0], n_priors, &out[0], layer_w, step_w, step_h, 0, layer_h)
        return
    for chunk in prange(n_chunks, nogil=True, schedule="static", num_threads=num_threads):
        irgrid_free_worker()
        start = chunk * rows_per_chunk
        stop = min(start + rows_per_chunk, layer_h)
        prior_grid_rows(&priors[0, 0], n_priors, &out[0], layer_w, step_w, step_h, start, stop)

# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""ExperimentalDetectronPriorGridGenerator-6: every prior shifted to every cell centre of the grid.

The driver: the arithmetic is C (kernels/core/prior_grid.h), so the OpenVINO extension runs the very same
code; here validate, fill the problem, plan, prange its units.
"""
from cython.parallel cimport prange
from cython cimport floating

from worker_cpus cimport irgrid_free_worker, irgrid_take_cpus

irgrid_take_cpus()  # this module's OpenMP workers run on the importing thread's CPUs (worker_cpus.h)

cdef extern from "prior_grid.h" nogil:
    ctypedef struct irgrid_schedule:
        Py_ssize_t units[4]
    ctypedef struct irgrid_prior_grid:
        int f64
        Py_ssize_t n_priors, layer_h, layer_w
        double step_w, step_h
        const void* priors
        void* out
        irgrid_schedule schedule
    int irgrid_prior_grid_plan(irgrid_prior_grid* p)
    void irgrid_prior_grid_run(const irgrid_prior_grid* p, int phase, void* shared, void* worker_scratch,
                               Py_ssize_t begin, Py_ssize_t end)
    const char* irgrid_error_text(int status)


cdef inline void run_unit(const irgrid_prior_grid* problem, Py_ssize_t unit) noexcept nogil:
    """One unit of the plan on an OpenMP worker, the worker first given the module's CPUs."""
    irgrid_free_worker()
    irgrid_prior_grid_run(problem, 0, NULL, NULL, unit, unit + 1)


def prior_grid(const floating[:, ::1] priors, floating[::1] out, Py_ssize_t layer_h, Py_ssize_t layer_w,
               floating step_w, floating step_h, int num_threads) -> None:
    """Write the first layer_h * layer_w * n_priors rows of `out` (flat, row-major [*, 4])."""
    cdef Py_ssize_t n_priors = priors.shape[0], units, unit
    cdef irgrid_prior_grid problem
    cdef int status
    if priors.shape[1] != 4:
        raise ValueError("priors must have shape [n, 4]")
    if layer_h < 0 or layer_w < 0 or out.shape[0] < layer_h * layer_w * n_priors * 4:
        raise ValueError("output buffer is smaller than the grid")
    if n_priors == 0 or layer_w == 0 or layer_h == 0:
        return
    problem.f64 = floating is double
    problem.n_priors = n_priors
    problem.layer_h = layer_h
    problem.layer_w = layer_w
    problem.step_w = step_w
    problem.step_h = step_h
    problem.priors = &priors[0, 0]
    problem.out = &out[0]
    status = irgrid_prior_grid_plan(&problem)
    if status:
        raise ValueError(f"PriorGridGenerator: {irgrid_error_text(status).decode()}")
    units = problem.schedule.units[0]
    num_threads = max(min(num_threads, units), 1)
    if num_threads == 1:  # no parallel region: waking idle threads costs more than small calls take
        with nogil:
            irgrid_prior_grid_run(&problem, 0, NULL, NULL, 0, units)
        return
    for unit in prange(units, nogil=True, schedule="static", num_threads=num_threads):
        run_unit(&problem, unit)

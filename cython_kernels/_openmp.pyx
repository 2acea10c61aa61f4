# cython: language_level=3
"""Whether this build has OpenMP, for `irgrid.show_config()`."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int irgrid_openmp_enabled(void) { return 1; }
    static int irgrid_openmp_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int irgrid_openmp_enabled(void) { return 0; }
    static int irgrid_openmp_max_threads(void) { return 1; }
    #endif
    """
    int irgrid_openmp_enabled()
    int irgrid_openmp_max_threads()


def openmp_enabled() -> bool:
    return bool(irgrid_openmp_enabled())


def openmp_max_threads() -> int:
    return irgrid_openmp_max_threads()

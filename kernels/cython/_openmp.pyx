# cython: language_level=3
"""Whether this build has OpenMP, for `irgrid.show_config()`."""

cdef extern from *:
    """
    #ifdef _OPENMP
    static int irgrid_openmp_enabled(void) { return 1; }
    #else
    static int irgrid_openmp_enabled(void) { return 0; }
    #endif
    """
    int irgrid_openmp_enabled()


def openmp_enabled() -> bool:
    return bool(irgrid_openmp_enabled())

# Every kernel module with a parallel loop: irgrid_take_cpus() at import, irgrid_free_worker() first in
# each prange body (why: worker_cpus.h).
cdef extern from "worker_cpus.h":
    void irgrid_take_cpus() noexcept nogil
    void irgrid_free_worker() noexcept nogil

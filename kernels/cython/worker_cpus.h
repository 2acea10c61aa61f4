/* OpenMP workers on the CPUs of the thread that imported their kernel module (worker_cpus.pxd).

   OpenVINO's CPU plugin pins each thread that runs a graph to one core (ENABLE_CPU_PINNING), and a new
   thread inherits the CPU mask of the thread that starts it: the OpenMP workers of a parallel loop
   started on such a thread (an irgrid op inside OpenVINO) all ran on that one core, 2 threads no faster
   than 1 (3-D trilinear: 29 ms against 13 ms in irgrid's runtime). libgomp also ends the workers that a
   smaller team leaves idle and starts new ones for a larger team, from whichever thread starts it.
   So each module takes its importing thread's mask (irgrid.openvino imports every kernel module before
   OpenVINO runs an op), and each worker sets its own mask to it in its first parallel loop of that
   module (a thread-local flag: nothing to do after that). The thread that starts a loop keeps its mask,
   as OpenVINO set it. (Unpinning that thread around every call instead, as irgrid did until
   2026-11-26, cost 4-6% of a 2 ms 3-D GridSample inside OpenVINO: two sched_setaffinity calls per
   inference and the migrations they caused.) */
#ifndef IRGRID_WORKER_CPUS_H
#define IRGRID_WORKER_CPUS_H
#if defined(__linux__) && defined(_OPENMP)
#include <omp.h>
#include <sched.h>

static cpu_set_t irgrid_module_cpus;
static int irgrid_module_cpus_taken = 0;
static __thread int irgrid_worker_freed = 0;

/* At module import: the importing thread's CPUs (none taken past 1024 CPUs: then workers keep theirs). */
static void irgrid_take_cpus(void) {
    irgrid_module_cpus_taken = sched_getaffinity(0, sizeof(cpu_set_t), &irgrid_module_cpus) == 0;
}

/* First in every parallel loop's body, or, before a dynamically scheduled loop (which may leave a new
   worker without a chunk), first in its parallel block: a worker's first call gives it the module's CPUs. */
static inline void irgrid_free_worker(void) {
    if (!irgrid_worker_freed) {
        irgrid_worker_freed = 1;
        if (irgrid_module_cpus_taken && omp_get_thread_num() > 0)
            sched_setaffinity(0, sizeof(cpu_set_t), &irgrid_module_cpus);
    }
}
#else
static void irgrid_take_cpus(void) {}
static inline void irgrid_free_worker(void) {}
#endif
#endif

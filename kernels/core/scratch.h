/* A call's scratch (its workers' schedule.worker_bytes and its schedule.shared_bytes), kept by the
   caller between calls in an irgrid_scratch_cache.

   Why keep it: a kernel's scratch is megabytes (GridSample's interleaved planes, 8 MiB a worker or
   a large image's group), and memory freshly taken from the system costs a page fault and a zeroed
   page per 4 KiB on every touch of every call; under a hypervisor each fault and each TLB miss costs
   more again. Kept, the pages stay mapped (and warm in the caches). Large blocks are 2 MiB aligned and advised as huge pages
   (MADV_HUGEPAGE, where the system has it), so that a random grid's gathers over an interleaved scratch
   miss the TLB far less. Measured: benchmarks/README.md, "The scratch kept between calls".

   The cache holds at most one block, swapped atomically: a call takes it (or a new, larger one) and
   gives it back when done; two calls at once each get a block of their own, and the second one given
   back is freed. A zeroed cache is empty; irgrid_scratch_release frees what it holds. */
#ifndef IRGRID_SCRATCH_H
#define IRGRID_SCRATCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    void* block;  /* the block kept (NULL: none); touched only through the functions below */
} irgrid_scratch_cache;

/* At least `bytes` of 64-byte aligned scratch (contents undefined), the cache's block where it is large
   enough; NULL when the memory cannot be had. */
void* irgrid_scratch_take(irgrid_scratch_cache* cache, size_t bytes);

/* Gives back what irgrid_scratch_take returned (NULL: nothing). */
void irgrid_scratch_give(irgrid_scratch_cache* cache, void* scratch);

/* Frees the block the cache holds (call it when no call can be running). */
void irgrid_scratch_release(irgrid_scratch_cache* cache);

#ifdef __cplusplus
}
#endif
#endif

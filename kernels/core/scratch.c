/* scratch.h: the kept scratch block. A block is [header | scratch]: the header (one cache line) records
   the scratch's capacity, so the cache swaps a single pointer. */
#define _DEFAULT_SOURCE  /* posix_memalign, madvise */
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "scratch.h"

enum { HEADER = 64 };
/* From this size on, blocks are aligned to and advised as 2 MiB pages (the x86-64 huge page). */
#define HUGE_BYTES ((size_t)2 << 20)

static size_t capacity(const void* block) { return *(const size_t*)block; }

static void* new_block(size_t bytes) {
    void* block = NULL;
    size_t total = HEADER + bytes, align = total >= HUGE_BYTES ? HUGE_BYTES : 64;
    if (bytes > SIZE_MAX - HEADER - HUGE_BYTES)
        return NULL;
    if (align == HUGE_BYTES)
        total = (total + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
    if (posix_memalign(&block, align, total) != 0)
        return NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align == HUGE_BYTES)
        (void)madvise(block, total, MADV_HUGEPAGE);  /* advice only: without it, 4 KiB pages */
#endif
    *(size_t*)block = total - HEADER;
    return block;
}

void* irgrid_scratch_take(irgrid_scratch_cache* cache, size_t bytes) {
    void* block = __atomic_exchange_n(&cache->block, NULL, __ATOMIC_ACQ_REL);
    if (block != NULL && capacity(block) < bytes) {
        free(block);
        block = NULL;
    }
    if (block == NULL)
        block = new_block(bytes);
    return block == NULL ? NULL : (char*)block + HEADER;
}

void irgrid_scratch_give(irgrid_scratch_cache* cache, void* scratch) {
    void* block = scratch == NULL ? NULL : (char*)scratch - HEADER;
    void* empty = NULL;
    if (block != NULL && !__atomic_compare_exchange_n(&cache->block, &empty, block, 0, __ATOMIC_ACQ_REL,
                                                      __ATOMIC_ACQUIRE))
        free(block);  /* another call gave its block back first */
}

void irgrid_scratch_release(irgrid_scratch_cache* cache) {
    free(__atomic_exchange_n(&cache->block, NULL, __ATOMIC_ACQ_REL));
}

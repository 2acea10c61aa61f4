/* The work a kernel's plan hands its driver (README.md, "The shape of a kernel"). */
#ifndef IRGRID_SCHEDULE_H
#define IRGRID_SCHEDULE_H

#include <stddef.h>
#include <string.h>

#include "guards.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IRGRID_MAX_PHASES 4
/* Bytes at the start of each worker's scratch that hold the worker's state between units of one call;
   a driver zeroes them (irgrid_worker_reset) before the worker's first unit of a call. */
#define IRGRID_WORKER_HEADER 64

typedef struct {
    int phases;                              /* run in order, every unit of one before the next */
    irgrid_index rounds;                     /* the phases run this many times over, round r's phase k
                                                as phase r * phases + k (0 or 1: once) */
    irgrid_index units[IRGRID_MAX_PHASES];   /* work units of each phase */
    size_t worker_bytes;                     /* scratch per worker, IRGRID_WORKER_HEADER included (0: none) */
    size_t shared_bytes;                     /* scratch of the whole call, shared by its workers (0: none) */
    int workers;                             /* most workers worth running (0: no limit) */
    int in_order;                            /* 1: give each worker one contiguous run of a phase's units
                                                (its scratch carries state from unit to unit); 0: any */
} irgrid_schedule;

static inline void irgrid_worker_reset(void* worker_scratch) {
    if (worker_scratch) memset(worker_scratch, 0, IRGRID_WORKER_HEADER);
}

#ifdef __cplusplus
}
#endif

#endif

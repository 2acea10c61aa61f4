/* The work a kernel's plan hands its driver (README.md, "The shape of a kernel"). */
#ifndef IRGRID_SCHEDULE_H
#define IRGRID_SCHEDULE_H

#include <stddef.h>
#include <string.h>

#include "guards.h"

#define IRGRID_MAX_PHASES 4
/* Bytes at the start of each worker's scratch that hold the worker's state between units of one call;
   a driver zeroes them (irgrid_worker_reset) before the worker's first unit of a call. */
#define IRGRID_WORKER_HEADER 64

typedef struct {
    int phases;                              /* run in order, every unit of one before the next */
    irgrid_index units[IRGRID_MAX_PHASES];   /* work units of each phase */
    size_t worker_bytes;                     /* scratch per worker, IRGRID_WORKER_HEADER included (0: none) */
    size_t shared_bytes;                     /* scratch of the whole call, shared by its workers (0: none) */
} irgrid_schedule;

static inline void irgrid_worker_reset(void* worker_scratch) {
    if (worker_scratch) memset(worker_scratch, 0, IRGRID_WORKER_HEADER);
}

#endif

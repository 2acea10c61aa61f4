/* AffineGrid: the sampling grid theta @ [x, y, (z,) 1] at every point of a regular (D,) H, W lattice, as
   a problem struct, a plan and a chunk function (README.md). The coordinates are affine.h's
   irgrid_affine_points, which GridSample's fused path calls too. */
#ifndef IRGRID_AFFINE_GRID_H
#define IRGRID_AFFINE_GRID_H

#include "affine.h"
#include "dtype.h"
#include "guards.h"
#include "schedule.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grid points per work unit: enough that waking a thread pays off; fixed, so results never depend on
   the thread count. */
#define IRGRID_AFFINE_POINTS_PER_CHUNK 16384

typedef struct irgrid_affine_grid {
    /* The problem: the caller fills these. */
    int dtype;                                       /* IRGRID_F32 or IRGRID_F64 */
    irgrid_index batch, rank;                        /* theta (batch, rank, rank + 1), 1 <= rank <= 3 */
    irgrid_index out_dims[IRGRID_AFFINE_MAX_RANK];   /* the lattice, outermost first */
    int align_corners;
    const void* theta;
    void* grid;                                      /* (batch, *out_dims, rank) */
    int threads;                                     /* workers the driver will run */

    /* Derived by irgrid_affine_grid_plan. */
    irgrid_index points, chunks_per_item;
    irgrid_index extents[IRGRID_AFFINE_MAX_RANK];
    float starts32[IRGRID_AFFINE_MAX_RANK], steps32[IRGRID_AFFINE_MAX_RANK];
    double starts64[IRGRID_AFFINE_MAX_RANK], steps64[IRGRID_AFFINE_MAX_RANK];
    irgrid_schedule schedule;
} irgrid_affine_grid;

/* Checks the problem (0 or an IRGRID_E_* code) and derives the schedule: one phase of
   batch * ceil(points / IRGRID_AFFINE_POINTS_PER_CHUNK) units, no scratch. */
int irgrid_affine_grid_plan(irgrid_affine_grid* p);

/* Units [begin, end) (chunks of IRGRID_AFFINE_POINTS_PER_CHUNK points of one item), serially. */
void irgrid_affine_grid_run(const irgrid_affine_grid* p, int phase, void* shared, void* worker, irgrid_index begin,
                            irgrid_index end);

#ifdef __cplusplus
}
#endif
#endif

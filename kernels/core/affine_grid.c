/* AffineGrid's plan and chunk function (affine_grid.h). */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "affine_grid.h"

int irgrid_affine_grid_plan(irgrid_affine_grid* p) {
    irgrid_schedule* s = &p->schedule;
    irgrid_index k, points = 1;
    memset(s, 0, sizeof(*s));
    if (p->dtype != IRGRID_F32 && p->dtype != IRGRID_F64)
        return IRGRID_E_MODE;
    if (p->rank < 1 || p->rank > IRGRID_AFFINE_MAX_RANK)
        return IRGRID_E_RANK;
    if (p->batch < 0)
        return IRGRID_E_DIMS;
    for (k = 0; k < p->rank; k++) {
        if (p->out_dims[k] < 1)
            return IRGRID_E_DIMS;
        if (points > PTRDIFF_MAX / p->out_dims[k])
            return IRGRID_E_SIZE;
        points *= p->out_dims[k];
    }
    if (p->out_dims[p->rank - 1] > INT_MAX)
        return IRGRID_E_SIZE;  /* irgrid_affine_points counts along a row in int */
    /* No grid that large can exist (a caller passes it), and the unit count below must not overflow. */
    if (p->batch > 0 && points > (irgrid_index)IRGRID_INDEX_LIMIT / p->rank / p->batch)
        return IRGRID_E_SIZE;
    p->points = points;
    irgrid_affine_axes_f32(p->out_dims, p->rank, p->align_corners, p->extents, p->starts32, p->steps32);
    irgrid_affine_axes_f64(p->out_dims, p->rank, p->align_corners, p->extents, p->starts64, p->steps64);
    p->chunks_per_item = points / IRGRID_AFFINE_POINTS_PER_CHUNK + (points % IRGRID_AFFINE_POINTS_PER_CHUNK != 0);
    s->phases = p->batch > 0;
    s->units[0] = p->batch * p->chunks_per_item;
    s->workers = (int)(s->units[0] < p->threads ? (s->units[0] > 1 ? s->units[0] : 1) : (p->threads > 1 ? p->threads : 1));
    s->in_order = 1;
    return IRGRID_OK;
}

void irgrid_affine_grid_run(const irgrid_affine_grid* p, int phase, void* shared, void* worker, irgrid_index begin,
                            irgrid_index end) {
    const irgrid_index rank = p->rank, points = p->points, cols = rank * (rank + 1);
    irgrid_index u, b, start, stop;
    (void)phase;
    (void)shared;
    (void)worker;
    for (u = begin; u < end; u++) {
        b = u / p->chunks_per_item;
        start = (u - b * p->chunks_per_item) * IRGRID_AFFINE_POINTS_PER_CHUNK;
        stop = start + IRGRID_AFFINE_POINTS_PER_CHUNK < points ? start + IRGRID_AFFINE_POINTS_PER_CHUNK : points;
        if (p->dtype == IRGRID_F32)
            irgrid_affine_points_f32((const float*)p->theta + b * cols, (float*)p->grid + (b * points + start) * rank,
                                     rank, p->extents, p->starts32, p->steps32, start, stop);
        else
            irgrid_affine_points_f64((const double*)p->theta + b * cols,
                                     (double*)p->grid + (b * points + start) * rank, rank, p->extents, p->starts64,
                                     p->steps64, start, stop);
    }
}

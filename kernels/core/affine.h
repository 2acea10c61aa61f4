/* Affine-grid coordinates, shared by AffineGrid (affine_grid.c) and GridSample's fused AffineGrid ->
   GridSample path (grid_sample.c): both compute every coordinate with this one piece of arithmetic, so
   fusing them changes no bit of the result.

   Semantics (ONNX AffineGrid-20's function body): along an axis of L points, base coordinate i is
   start + i * step, with step = 2 / L and start = -1 + step / 2 (align_corners=0), or step = 2 / (L - 1)
   and start = -1 (align_corners=1). The point's normalised coordinates are theta @ [x, y, (z,) 1].
   Where the spec is undefined (L = 1 with align_corners=1: 2 / 0), the single point sits at 0, its own
   centre, as torch places it. */
#ifndef IRGRID_AFFINE_H
#define IRGRID_AFFINE_H

#include "guards.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IRGRID_AFFINE_MAX_RANK 3  /* AffineGrid is 2-D or 3-D (1-D also works) */

/* The multi-index of flat `point` over `extents`, both listed innermost (x) first. */
static inline void irgrid_affine_first_index(irgrid_index point, irgrid_index rank, const irgrid_index* extents,
                                             irgrid_index* index) {
    irgrid_index k;
    for (k = 0; k < rank; k++) {
        index[k] = point % extents[k];
        point = point / extents[k];
    }
}

/* Advance a multi-index (innermost first) to the next point in row-major order. */
static inline void irgrid_affine_next_index(irgrid_index rank, const irgrid_index* extents, irgrid_index* index) {
    irgrid_index k;
    for (k = 0; k < rank; k++) {
        index[k] += 1;
        if (index[k] < extents[k])
            return;
        index[k] = 0;
    }
}

#define IRGRID_T float
#define IRGRID_FN(name) name##_f32
#include "affine_body.h"
#undef IRGRID_T
#undef IRGRID_FN

#define IRGRID_T double
#define IRGRID_FN(name) name##_f64
#include "affine_body.h"
#undef IRGRID_T
#undef IRGRID_FN

#ifdef __cplusplus
}
#endif
#endif

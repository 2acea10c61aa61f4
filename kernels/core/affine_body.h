/* affine.h's float-typed functions for one type: included once per type with IRGRID_T and IRGRID_FN. */

static inline void IRGRID_FN(irgrid_axis_start_step)(irgrid_index length, int align_corners, IRGRID_T* start,
                                                     IRGRID_T* step) {
    if (align_corners) {
        if (length == 1) {
            start[0] = (IRGRID_T)0.0;
            step[0] = (IRGRID_T)0.0;
            return;
        }
        step[0] = (IRGRID_T)2 / (IRGRID_T)(length - 1);
        start[0] = (IRGRID_T)-1.0;
        return;
    }
    step[0] = (IRGRID_T)2 / (IRGRID_T)length;
    start[0] = (IRGRID_T)(-1.0 + (step[0] / 2.0));
}

/* Per-axis extents, starts and steps innermost first, from out_dims listed outermost first
   (size[2:]: (D,) H, W). */
static inline void IRGRID_FN(irgrid_affine_axes)(const irgrid_index* out_dims, irgrid_index rank, int align_corners,
                                                 irgrid_index* extents, IRGRID_T* starts, IRGRID_T* steps) {
    irgrid_index k;
    for (k = 0; k < rank; k++) {
        extents[k] = out_dims[rank - 1 - k];
        IRGRID_FN(irgrid_axis_start_step)(extents[k], align_corners, starts + k, steps + k);
    }
}

/* The coordinates of lattice points [start, stop) of one item into g (stop - start points of `rank`
   values): t is the item's theta (rank, rank + 1); extents below INT_MAX (callers check).

   Row by row: along a row only x changes, so theta's y and z terms are computed once per row and the
   inner loop, on local scalars only, is a few multiply-adds the compiler vectorises. Each coordinate is
   theta @ [x, y, (z,) 1] summed left to right, ((t0 * x + t1 * y) + t2 * z) + t3, with
   x = start + i * step per axis (the build disables FMA contraction). */
static inline void IRGRID_FN(irgrid_affine_points)(const IRGRID_T* t, IRGRID_T* g, irgrid_index rank,
                                                   const irgrid_index* extents, const IRGRID_T* starts,
                                                   const IRGRID_T* steps, irgrid_index start, irgrid_index stop) {
    irgrid_index index[IRGRID_AFFINE_MAX_RANK];
    irgrid_index n, p = start;
    int i, first;  /* int: packed int -> float conversion, so the row loops vectorise */
    IRGRID_T x, x0 = starts[0], dx = steps[0];
    /* Per output coordinate k: theta's x column s_k, its constant column c_k, and per row the y and
       z terms y_k, z_k. */
    IRGRID_T s0 = t[0], s1 = 0, s2 = 0, c0 = t[rank], c1 = 0, c2 = 0;
    IRGRID_T y0 = 0, y1 = 0, y2 = 0, z0 = 0, z1 = 0, z2 = 0, y, z;
    if (rank == 2) {
        s1 = t[3];
        c1 = t[5];
    } else if (rank == 3) {
        s1 = t[4];
        s2 = t[8];
        c1 = t[7];
        c2 = t[11];
    }
    irgrid_affine_first_index(start, rank, extents, index);
    while (p < stop) {
        n = stop - p < extents[0] - index[0] ? stop - p : extents[0] - index[0];
        first = (int)index[0];
        if (rank == 2) {
            y = starts[1] + (IRGRID_T)index[1] * steps[1];
            y0 = t[1] * y;
            y1 = t[4] * y;
            for (i = first; i < first + (int)n; i++) {
                x = x0 + (IRGRID_T)i * dx;
                g[0] = s0 * x + y0 + c0;
                g[1] = s1 * x + y1 + c1;
                g += 2;
            }
        } else if (rank == 3) {
            y = starts[1] + (IRGRID_T)index[1] * steps[1];
            z = starts[2] + (IRGRID_T)index[2] * steps[2];
            y0 = t[1] * y;
            y1 = t[5] * y;
            y2 = t[9] * y;
            z0 = t[2] * z;
            z1 = t[6] * z;
            z2 = t[10] * z;
            for (i = first; i < first + (int)n; i++) {
                x = x0 + (IRGRID_T)i * dx;
                g[0] = s0 * x + y0 + z0 + c0;
                g[1] = s1 * x + y1 + z1 + c1;
                g[2] = s2 * x + y2 + z2 + c2;
                g += 3;
            }
        } else {
            for (i = first; i < first + (int)n; i++) {
                g[0] = s0 * (x0 + (IRGRID_T)i * dx) + c0;
                g += 1;
            }
        }
        p += n;
        index[0] = extents[0] - 1;  /* the row's last point: next_index carries into the outer dims */
        irgrid_affine_next_index(rank, extents, index);
    }
}

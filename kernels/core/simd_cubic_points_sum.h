/* The sums of cubic's one-channel pixels for one vector type (simd.h's macros: VF, LOADU, MUL, FMADD, SFX,
   LANES), included by simd_cubic_points.h (16 points a vector) and simd_cubic_points8.h (8), each after its
   SFX(irgrid_cubic_row_taps): a row's 4 taps of LANES points as 4 vectors. The sums are irgrid_cubic_run's,
   in its order (a row's 4 taps with the x weights, MUL then FMAs; the 4 rows with the y weights; in 3-D the
   4 planes with the z weights), so both widths give the row runs' bits. */

/* One plane's 4 rows (the plane's first row at `offset` from each point's first tap). */
IRGRID_AVX2_INLINE VF SFX(irgrid_cubic_plane_taps)(const float* s, const int* first, irgrid_index offset,
                                                   irgrid_index pitch, const VF* wy, const VF* wx) {
    VF t[4], row, acc = ZERO();
    int r;
    for (r = 0; r < 4; r++) {
        SFX(irgrid_cubic_row_taps)(s, first, offset + r * pitch, t);
        row = MUL(wx[0], t[0]);
        row = FMADD(wx[1], t[1], row);
        row = FMADD(wx[2], t[2], row);
        row = FMADD(wx[3], t[3], row);
        acc = r ? FMADD(wy[r], row, acc) : MUL(wy[0], row);
    }
    return acc;
}

/* A block's output in one channel's scratch s, rank R (2 or 3): its points' first taps and their weights
   per dim, outermost first (irgrid_cubic_window's); pitch and plane: a row's and a plane's floats. */
IRGRID_AVX2_INLINE VF SFX(irgrid_cubic_points_sum)(const float* s, const int* first, const float (*wt)[4][LANES],
                                                   irgrid_index R, irgrid_index pitch, irgrid_index plane) {
    VF wx[4], wy[4], acc;
    int j;
    for (j = 0; j < 4; j++) {
        wy[j] = LOADU(wt[R - 2][j]);
        wx[j] = LOADU(wt[R - 1][j]);
    }
    if (R == 2)
        return SFX(irgrid_cubic_plane_taps)(s, first, 0, pitch, wy, wx);
    acc = MUL(LOADU(wt[0][0]), SFX(irgrid_cubic_plane_taps)(s, first, 0, pitch, wy, wx));
    for (j = 1; j < 4; j++)
        acc = FMADD(LOADU(wt[0][j]), SFX(irgrid_cubic_plane_taps)(s, first, j * plane, pitch, wy, wx), acc);
    return acc;
}

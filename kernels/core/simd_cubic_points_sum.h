/* The sums of cubic's one-channel pixels for one vector type (simd.h's macros: VF, LOADU, MUL, FMADD, SFX,
   LANES), included by simd_cubic_points.h (16 points a vector) and simd_cubic_points8.h (8), each after its
   SFX(irgrid_cubic_row_taps): a row's 4 taps of LANES points as 4 vectors. The sums are irgrid_cubic_run's,
   in its order (a row's 4 taps with the x weights, MUL then FMAs; the 4 rows with the y weights; in 3-D the
   4 planes with the z weights), so both widths give the row runs' bits. */

/* One plane's 4 rows of LANES points: row r's first taps at s + first[k] + offset + r * pitch (lane k), or
   where `rows` is given (reflection's, irgrid_cubic_mirror_window) at s + rows[r][k], their 4 taps swapped
   end for end in the `reversed` lanes where `reverses`. */
IRGRID_AVX2_INLINE VF SFX(irgrid_cubic_plane_taps)(const float* s, const int* first, const int (*rows)[LANES],
                                                   irgrid_index offset, irgrid_index pitch, int reverses, VF reversed,
                                                   const VF* wy, const VF* wx, int broadcast) {
    VF t[4], u, row, acc = ZERO();
    int r, j;
    for (r = 0; r < 4; r++) {
        SFX(irgrid_cubic_row_taps)(s, rows ? rows[r] : first, rows ? 0 : offset + r * pitch, broadcast, t);
        for (j = 0; reverses && j < 2; j++) {
            u = t[j];
            t[j] = BLEND(t[j], t[3 - j], reversed);
            t[3 - j] = BLEND(t[3 - j], u, reversed);
        }
        row = MUL(wx[0], t[0]);
        row = FMADD(wx[1], t[1], row);
        row = FMADD(wx[2], t[2], row);
        row = FMADD(wx[3], t[3], row);
        acc = r ? FMADD(wy[r], row, acc) : MUL(wy[0], row);
    }
    return acc;
}

/* A block's output in one channel's scratch s, rank R (2 or 3): its points' first taps (`first`; pitch and
   plane: a row's and a plane's floats) or, with reflection, each row's (`rows`, 4 a plane, plane by plane)
   and the lanes whose rows are reversed, and the weights per dim, outermost first; `broadcast`: how a row's
   loads go into place (SFX(irgrid_cubic_row_taps)). */
IRGRID_AVX2_INLINE VF SFX(irgrid_cubic_rows_sum)(const float* s, const int* first, const int (*rows)[LANES],
                                                 irgrid_index pitch, irgrid_index plane, const float (*wt)[4][LANES],
                                                 irgrid_index R, int reverses, VF reversed, int broadcast) {
    VF wx[4], wy[4], acc;
    int j;
    for (j = 0; j < 4; j++) {
        wy[j] = LOADU(wt[R - 2][j]);
        wx[j] = LOADU(wt[R - 1][j]);
    }
    if (R == 2)
        return SFX(irgrid_cubic_plane_taps)(s, first, rows, 0, pitch, reverses, reversed, wy, wx, broadcast);
    acc = MUL(LOADU(wt[0][0]), SFX(irgrid_cubic_plane_taps)(s, first, rows, 0, pitch, reverses, reversed, wy, wx,
                                                            broadcast));
    for (j = 1; j < 4; j++)
        acc = FMADD(LOADU(wt[0][j]), SFX(irgrid_cubic_plane_taps)(s, first, rows ? rows + 4 * j : NULL, j * plane,
                                                                   pitch, reverses, reversed, wy, wx, broadcast),
                    acc);
    return acc;
}

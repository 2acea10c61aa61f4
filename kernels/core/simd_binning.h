/* Binning (binning.h) of the vector GridSample for one float type (a part of simd_body.h): a scattered
   grid's points sorted by the tile they sample: tile keys of a chunk's points and its outputs put back
   in point order. */

#if LANES != 16  /* (the 16-lane section takes only irgrid_unbin, for 3-D cubic's 16-channel pixels) */
/* The tile keys of points [0, n) (coordinates g, n x rank, innermost first) into keys: per dim k
   (outermost first) floor(g * scale[k] + offset[k]) clamped to [0, tiles[k] - 1] (NaN at 0: the
   maximum of NaN and 0 is 0), dim order[0]'s tile most significant, then order[1]'s, ... */
static IRGRID_AVX2 void SFX(irgrid_tile_keys)(const FT* g, irgrid_index n, irgrid_index rank, const double* scale,
                                              const double* offset, const irgrid_index* tiles, const int* order,
                                              int* keys) {
    FT coords[3][LANES];
    VF t, gk[3], scales[3], offsets[3], lasts[3];
    VI key, counts[3];
    int tail[LANES], dim[3];
    irgrid_index p, j, k, m;
    /* dim order[j]'s constants, made once: converted and broadcast for every block of points, they took
       3-D cubic of one channel on a random grid 1.03x the time (Zen 4, paired) */
    for (j = 0; j < rank; j++) {
        k = order[j];
        dim[j] = (int)(rank - 1 - k);  /* its component of the grid, which lists innermost first */
        scales[j] = SET1((FT)scale[k]);
        offsets[j] = SET1((FT)offset[k]);
        lasts[j] = SET1((FT)(tiles[k] - 1));
        counts[j] = ISET1((int)tiles[k]);
    }
    for (p = 0; p < n; p += LANES) {
        m = n - p < LANES ? n - p : LANES;
        SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
        key = ISET1(0);
        for (j = 0; j < rank; j++) {  /* dim order[j] outermost first */
            t = FMADD(gk[dim[j]], scales[j], offsets[j]);
            t = VMIN(VMAX(t, ZERO()), lasts[j]);
            key = IADD(IMUL(key, counts[j]), TOINT(FLOOR(t)));
        }
        if (m == LANES) {
            ISTOREU(keys + p, key);
        } else {
            ISTOREU(tail, key);
            for (j = 0; j < m; j++)
                keys[p + j] = tail[j];
        }
    }
}
#endif

/* Outputs of n points stored by point (out + j * LANES: the point in bin position j) back in point
   order: point i (bin position slot[i]) into y + c * y_cstride + i for its first `channels` channels;
   a large output streamed as irgrid_cubic3d_run streams its own. */
static IRGRID_AVX2 void SFX(irgrid_unbin)(const FT* out, const int* slot, irgrid_index n, irgrid_index channels, FT* y,
                                          irgrid_index y_cstride) {
    VF r[LANES], pending[LANES];
    irgrid_index p, c, lane;
    const int stream = IRGRID_STREAMS(y, y_cstride, channels, FT);
    for (p = 0; p + LANES <= n; p += LANES) {
        for (lane = 0; lane < LANES; lane++)
            r[lane] = LOADU(out + (irgrid_index)slot[p + lane] * LANES);
        TRANSPOSE(r);
        if (stream && (p & LANES) == 0 && p + 2 * LANES <= n) {
            for (c = 0; c < channels; c++)
                pending[c] = r[c];
        } else if (stream && (p & LANES)) {
            for (c = 0; c < channels; c++) {
                STREAM(y + c * y_cstride + p - LANES, pending[c]);
                STREAM(y + c * y_cstride + p, r[c]);
            }
        } else {
            for (c = 0; c < channels; c++)
                STOREU(y + c * y_cstride + p, r[c]);
        }
    }
    if (stream)
        _mm_sfence();
    for (; p < n; p++)
        for (c = 0; c < channels; c++)
            y[c * y_cstride + p] = out[(irgrid_index)slot[p] * LANES + c];
}

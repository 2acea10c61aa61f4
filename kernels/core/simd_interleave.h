/* The interleaved path of the vector GridSample for one float type (a part of simd_body.h): the generic
   run over a scratch of a channel group's planes, one vector of channels per pixel. */

/* ---- Channel-interleaved path (2-D and 3-D nearest, linear and cubic): a group of up
   to LANES channel planes copied into scratch as pixels of LANES channels (one vector each) plus one
   pixel of zeros, which every dropped tap reads instead (so nothing out of range, and no Inf or NaN
   of X, is read for it). A point's tap is then one vector load for all the group's channels instead
   of one gather element per channel; the taps (irgrid_taps), weights and the FMA chain per output
   are the gather path's, so both paths give the same bits (3-D cubic has no gather path). */

/* Taps per point of the interleaved path's widest case (3-D cubic), and their rows (outer dims). */
#ifndef IRGRID_INTERLEAVE_TAPS
#define IRGRID_INTERLEAVE_TAPS 64
#define IRGRID_INTERLEAVE_ROWS 16
#endif

/* Pixels [0, n) of planes x + c * x_cstride (c < channels <= LANES; the other channels are zeros)
   into s: pixel p's channel c at s[p * LANES + c]. */
static IRGRID_AVX2 void SFX(irgrid_interleave_pixels)(const FT* x, irgrid_index channels, irgrid_index x_cstride,
                                                      irgrid_index n, FT* s) {
    VF r[LANES];
    irgrid_index p, c;
    for (p = 0; p + LANES <= n; p += LANES) {
        for (c = 0; c < LANES; c++)
            r[c] = c < channels ? LOADU(x + c * x_cstride + p) : ZERO();
        TRANSPOSE(r);
        for (c = 0; c < LANES; c++)
            STOREU(s + (p + c) * LANES, r[c]);
    }
    for (; p < n; p++)
        for (c = 0; c < LANES; c++)
            s[p * LANES + c] = c < channels ? x[c * x_cstride + p] : 0;
}

/* Planes of `plane` pixels into s as irgrid_interleave_pixels puts them, then the zero pixel. */
static IRGRID_AVX2 void SFX(irgrid_interleave)(const FT* x, irgrid_index channels, irgrid_index x_cstride,
                                               irgrid_index plane, FT* s) {
    SFX(irgrid_interleave_pixels)(x, channels, x_cstride, plane, s);
    STOREU(s + plane * LANES, ZERO());
}

/* The taps of points [p, p + m) (m <= LANES) for irgrid_interleaved_run: pixel byte offsets into the
   scratch (dropped taps at the zero pixel) and, with more than one tap, weights; fallback as
   irgrid_simd_sample's. */
IRGRID_AVX2_INLINE void SFX(irgrid_block_taps)(const FT* g, irgrid_index p, irgrid_index m, int rank,
        const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align, VI zero_pixel,
        int (*pix)[LANES], FT (*wt)[LANES], irgrid_index* fallback, irgrid_index* nf) {
    SFX(irgrid_dim) d[3];
    VI row_off[IRGRID_INTERLEAVE_ROWS], idx;
    VF row_w[IRGRID_INTERLEAVE_ROWS], row_ok[IRGRID_INTERLEAVE_ROWS], w, ok;
    const int per_dim = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    int r, j, t, rows;
    SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, mode, padding, align, 0, d, fallback, nf);
    rows = SFX(irgrid_rows)(d, rank, per_dim, row_off, row_w, row_ok);
    for (r = 0, t = 0; r < rows; r++)
        for (j = 0; j < per_dim; j++, t++) {
            SFX(irgrid_tap)(row_off[r], row_w[r], row_ok[r], d + rank - 1, j, &idx, &w, &ok);
            /* a pixel is one vector (PIXEL_OFFSET: its bytes); the scratch's 1 GiB bound keeps offsets in int32 */
            ISTOREU(pix[t], PIXEL_OFFSET(KEEP_INDEX(idx, ok, zero_pixel)));
            if (mode != 0)
                STOREU(wt[t], w);
        }
}

/* Outputs of points [0, n) (coordinates g, n x rank, innermost first) of the interleaved group s in
   its first `channels` channels (y + c * y_cstride), `per_dim` taps per dim (1, 2 or 4; at most
   IRGRID_INTERLEAVE_TAPS taps); fallback as irgrid_simd_sample's. Taps outer, lanes inner: the
   LANES sums are independent FMA chains in flight together, each in tap order. Software-pipelined:
   the next block's taps are computed before this block's sums, so the sums' loads have their
   addresses long before they issue and the CPU overlaps their cache misses with that work (Zen 4,
   2 threads: 0.77-0.91x the time on 2-D bilinear, nearest, batched and 3-D trilinear; bicubic and
   tricubic unchanged within noise). With 16 lanes (a 64-byte line of f32 outputs a channel) the first
   block ends where the output's planes reach a line, so that every later block writes whole lines:
   OpenVINO hands an op outputs on 32-byte boundaries, and there each 64-byte store crossed two lines
   (the 16-channel run took as long as the 8-channel one inside OpenVINO, 0.51-0.52 ms on 2-D
   bilinear smooth). A large output's whole lines are streamed past the caches: 16 lanes from a group's
   1 MiB (IRGRID_STREAMS); 8 lanes, two blocks a line, where the plan says so (`streams`: grid_sample.c's
   stream_output; IRGRID_STREAM_SCATTERED_MIN_BYTES, irgrid_interleaved_streamed). */
IRGRID_AVX2_INLINE irgrid_index SFX(irgrid_interleaved_run)(const FT* s, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, irgrid_index plane, int rank, const irgrid_index* dims,
        const irgrid_index* strides, int mode, int padding, int align, int streams, irgrid_index* fallback) {
    VF acc[LANES], store_mask;
    FT wt[2][IRGRID_INTERLEAVE_TAPS][LANES], lanes[LANES];
    int pix[2][IRGRID_INTERLEAVE_TAPS][LANES], t, lane, cur = 0;  /* two blocks' taps: this one, the next */
    irgrid_index p, m, next, c, nf = 0;
    const char* bytes = (const char*)s;
    const int per_dim = mode == 0 ? 1 : (mode == 1 ? 2 : 4);
    const int taps = rank == 3 ? per_dim * per_dim * per_dim : per_dim * per_dim;
    const VI zero_pixel = ISET1((int)plane);
    const uintptr_t misaligned = (uintptr_t)y & 63;
    const irgrid_index head = LANES == 16 && misaligned % sizeof(FT) == 0 && misaligned
                              ? (irgrid_index)((64 - misaligned) / sizeof(FT)) : LANES;
    const int stream = LANES == 16 && IRGRID_STREAMS(y + head % LANES, y_cstride, channels, FT);
    /* 8 lanes: a block's outputs are half a line a channel, so two blocks are streamed together, the
       first held (an output on 32-byte boundaries, as OpenVINO hands one, from its first whole line) */
    const int pairs = LANES == 8 && sizeof(FT) == 4 && streams && ((uintptr_t)y & 31) == 0
                      && IRGRID_STREAMS_FROM(y + ((uintptr_t)y & 32) / sizeof(FT), y_cstride, channels, FT,
                                             IRGRID_STREAM_SCATTERED_MIN_BYTES);
    VF pending[LANES];
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    m = n < head ? n : head;  /* this block's points */
    if (n > 0)
        SFX(irgrid_block_taps)(g, 0, m, rank, dims, strides, mode, padding, align, zero_pixel, pix[0], wt[0], fallback,
                               &nf);
    for (p = 0; p < n; p = next, cur ^= 1) {
        next = p + m;
        if (next < n)
            SFX(irgrid_block_taps)(g, next, n - next < LANES ? n - next : LANES, rank, dims, strides, mode, padding,
                                   align, zero_pixel, pix[cur ^ 1], wt[cur ^ 1], fallback, &nf);
        for (lane = 0; lane < LANES; lane++)
            acc[lane] = LOADU((const FT*)(bytes + pix[cur][0][lane]));
        if (taps > 1) {
            for (lane = 0; lane < LANES; lane++)
                acc[lane] = MUL(SET1(wt[cur][0][lane]), acc[lane]);
            for (t = 1; t < taps; t++)
                for (lane = 0; lane < LANES; lane++)
                    acc[lane] = FMADD(SET1(wt[cur][t][lane]), LOADU((const FT*)(bytes + pix[cur][t][lane])),
                                      acc[lane]);
        }
        TRANSPOSE(acc);
        if (stream && m == LANES)
            for (c = 0; c < channels; c++)
                STREAM(y + c * y_cstride + p, acc[c]);
        else if (pairs && m == LANES && ((uintptr_t)(y + p) & 63) == 0 && p + 2 * LANES <= n)
            for (c = 0; c < channels; c++)  /* the first of a pair: held */
                pending[c] = acc[c];
        else if (pairs && m == LANES && ((uintptr_t)(y + p) & 63) && p >= LANES)  /* the second: a line each */
            for (c = 0; c < channels; c++) {
                STREAM(y + c * y_cstride + p - LANES, pending[c]);
                STREAM(y + c * y_cstride + p, acc[c]);
            }
        else
            IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c);
        m = n - next < LANES ? n - next : LANES;
    }
    if (stream || pairs)
        _mm_sfence();
    return nf;
}

/* irgrid_interleaved_run with rank and mode as constants (irgrid_interleave_fits' cases). Aligned to
   a page: where this function lay moved 3-D trilinear on random grids by 1.05-1.20x whenever code
   before it changed size (benchmarks/README.md, "Where the code lies"); at a page boundary its loops
   keep their address bits 11:0 whatever precedes it. */
static IRGRID_AVX2 __attribute__((aligned(4096))) irgrid_index SFX(irgrid_interleaved_sample)(const FT* s,
        const FT* g, FT* y, irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index plane,
        irgrid_index rank, const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align,
        irgrid_index* fallback) {
#define IRGRID_RUN(r, md) SFX(irgrid_interleaved_run)(s, g, y, n, channels, y_cstride, plane, r, dims, strides, md, \
                                                      padding, align, 0, fallback)
    if (rank == 2)
        return mode == 0 ? IRGRID_RUN(2, 0) : (mode == 1 ? IRGRID_RUN(2, 1) : IRGRID_RUN(2, 2));
    return mode == 0 ? IRGRID_RUN(3, 0) : (mode == 1 ? IRGRID_RUN(3, 1) : IRGRID_RUN(3, 2));
#undef IRGRID_RUN
}

#if LANES == 8
/* The 8-lane f32 run of linear (and cubic without a row scratch) streaming a large output two blocks a
   line, where the plan says so (grid_sample.c's stream_output). A function of its own, page-aligned as
   irgrid_interleaved_sample is, so that that one's 8-lane runs keep their code: with a variable choosing
   the stores inside them, 3-D trilinear on a smooth grid took 1.04x the time at one thread. */
static IRGRID_AVX2 __attribute__((aligned(4096))) irgrid_index SFX(irgrid_interleaved_streamed)(const FT* s,
        const FT* g, FT* y, irgrid_index n, irgrid_index channels, irgrid_index y_cstride, irgrid_index plane,
        irgrid_index rank, const irgrid_index* dims, const irgrid_index* strides, int mode, int padding, int align,
        irgrid_index* fallback) {
#define IRGRID_RUN(r, md) SFX(irgrid_interleaved_run)(s, g, y, n, channels, y_cstride, plane, r, dims, strides, md, \
                                                      padding, align, 1, fallback)
    if (rank == 2)
        return mode == 1 ? IRGRID_RUN(2, 1) : IRGRID_RUN(2, 2);
    return mode == 1 ? IRGRID_RUN(3, 1) : IRGRID_RUN(3, 2);
#undef IRGRID_RUN
}
#endif

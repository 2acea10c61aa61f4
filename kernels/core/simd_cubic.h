/* The separable cubic runs (2-D and 3-D) of the vector GridSample for one float type (a part of
   simd_body.h). */

/* ---- 3-D cubic, separably. Its scratch (irgrid_interleave_rows) pads every dim with zeros: 3 zero
   pixels before every row of W pixels, 3 zero rows before every plane of H rows, 3 zero planes before
   the D planes and 4 after them, so that a dim's taps 3 before its first pixel or 3 after its last read
   zeros (the leading zeros of the next row or plane are the trailing ones of the one before). A point's
   64 taps are 4 planes, 4 rows in each and 4 pixels in each row, each dim with its 4 weights: a row's
   four x taps are summed with the x weights, a plane's four rows with the y weights, the planes with
   the z weights, all held in registers.
   With zeros padding (irgrid_cubic_window) a point's taps are consecutive in every dim (a dropped
   tap reads the padding's zeros), so a point needs one offset, its first tap's, and its taps lie at
   constant strides from it; a point one of whose dims keeps no tap (and a fallback point) reads the
   zero window of the trailing planes. Border and reflection padding repeat or mirror pixels, so their
   taps (irgrid_cubic_taps) are 4 plane, 4 row and 4 pixel offsets per point.
   grid_sample.c takes this run wherever that scratch fits (`rows_layout`), the generic one elsewhere. */

/* The taps of points [p, p + m) (m <= LANES) of a rank-2 or rank-3 grid for irgrid_cubic2d_run or
   irgrid_cubic3d_run with border or reflection padding: per dim (outermost first) 4 byte offsets from
   the scratch's first pixel (dropped ones at that dim's index D, H or W, which is padding) and 4
   weights; fallback as irgrid_simd_sample's (those lanes read the zero plane, in 2-D the zero row). */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_taps)(const FT* g, irgrid_index p, irgrid_index m, int rank,
        const irgrid_index* dims, const irgrid_index* strides, int padding, int align, int (*pix)[4][LANES],
        FT (*wt)[4][LANES], irgrid_index* fallback, irgrid_index* nf) {
    SFX(irgrid_dim) d[3];
    VF no_plane;
    int k, j;
    SFX(irgrid_lane_taps)(g, p, m, rank, dims, strides, 2, padding, align, 1, d, fallback, nf);
    /* lanes keeping no plane (2-D: row; fallback lanes among them, whose other taps may lie anywhere)
       read the zero plane's zero row's zero pixel */
    no_plane = ANDNOT(OR(OR(d[0].ok[0], d[0].ok[1]), OR(d[0].ok[2], d[0].ok[3])), CMP(ZERO(), ZERO(), _CMP_EQ_OQ));
    for (k = 0; k < rank; k++) {
        /* the zero plane, a plane's zero row, a row's zero pixel */
        const VI zeros = ISET1((int)(dims[k] * strides[k]));
        for (j = 0; j < 4; j++) {
            ISTOREU(pix[k][j],
                    PIXEL_OFFSET(KEEP_INDEX(d[k].off[j], k ? ANDNOT(no_plane, d[k].ok[j]) : d[k].ok[j], zeros)));
            STOREU(wt[k][j], d[k].w[j]);
        }
    }
}

/* The taps of points [p, p + m) (m <= LANES) of a rank-2 or rank-3 grid for irgrid_cubic2d_run or
   irgrid_cubic3d_run with zeros padding: per lane the byte offset of its first tap in the scratch
   (`first`) and per dim (outermost first) 4 weights, as irgrid_cubic_taps computes them; fallback as
   irgrid_simd_sample's (those lanes read the zero window, 4 zero rows or planes after the last). With
   `replicate` (border padding over simd_cubic_points.h's layout, every dim's edge pixel 3 times on
   each side) a lane whose taps all lie past an edge keeps its clamped first tap, which reads the edge's
   copies; fallback lanes read the first pixel. With `indices` (simd_cubic_points.h's pixels of one
   float) `first` holds pixel indices rather than byte offsets: a volume of 2^25 pixels or more has byte
   offsets of 64-byte pixels past int32 (a channel's pixels stay within INTERLEAVE_LARGE_BYTES, 2^28). */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_window)(const FT* g, irgrid_index p, irgrid_index m, int rank,
        const irgrid_index* dims, const irgrid_index* pitches, int align, int replicate, int indices, int* first,
        FT (*wt)[4][LANES], irgrid_index* fallback, irgrid_index* nf) {
    VI at;
    const VF one = SET1(1), all = CMP(one, one, _CMP_EQ_OQ);
    VF bad = ZERO(), out = ZERO(), gk[3], x, base, w[4];
    VI pixel = ISET1(0);
    FT coords[3][LANES];
    int k, j;
    SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++) {  /* dim k outermost first; the grid lists innermost first */
        x = SFX(irgrid_pixel_coordinate)(gk[rank - 1 - k], dims[k], align, 1, &bad);
        base = FLOOR(x);
        NATIVE_CUBIC(SUB(x, base), w);
        for (j = 0; j < 4; j++)
            STOREU(wt[k][j], w[j]);
        /* the first tap, 3 zeros before the dim's first pixel at the least, at its last at the most */
        base = SUB(base, one);
        out = OR(out, OR(CMP(base, SET1((FT)-3), _CMP_LT_OQ), CMP(base, SET1((FT)(dims[k] - 1)), _CMP_GT_OQ)));
        base = VMIN(VMAX(base, SET1((FT)-3)), SET1((FT)(dims[k] - 1)));
        pixel = IADD(pixel, IMUL(TOINT(ADD(base, SET1(3))), ISET1((int)pitches[k])));
    }
    SFX(irgrid_record_fallback)(bad, p, m, fallback, nf);
    /* a dim without taps, or a fallback lane: plane D + 3 (row H + 3), the first of the 4 trailing zero
       planes (rows); with `replicate` a fallback lane only, at the first pixel */
    at = replicate ? KEEP_INDEX(pixel, ANDNOT(bad, all), ISET1(0))
                   : KEEP_INDEX(pixel, ANDNOT(OR(out, bad), all), ISET1((int)((dims[0] + 3) * pitches[0])));
    ISTOREU(first, indices ? at : PIXEL_OFFSET(at));
}

/* The taps of points [p, p + m) (m <= LANES) of a rank-2 or rank-3 grid with reflection padding over
   irgrid_mirror_padded_f32x1's layout (`pitches`, outermost first): per lane the pixel index of each of
   its rows' first tap (`rows`: 4, or in 3-D 16, plane by plane), the weights per dim as irgrid_cubic_window
   computes them, and the lanes whose row taps come reversed (*reversed, all-ones lanes). Each dim's taps
   floor - 1 .. floor + 2 reflect on their own (irgrid_pad): within 3 pixels of the dim the layout holds
   them; wholly past one edge (within one fold) they are the pixels c - (floor - 1) - j, j = 0..3 (c: -1
   and 2L - 1, with align_corners 0 and 2L - 2), a run inside the dim in reverse order: outer dims step
   back a row or plane at a time, a row's 4 taps are read forwards and reversed by the sum
   (simd_cubic_points_sum.h). Lanes with a tap past one fold (irgrid_pad's, whose rule this keeps) and
   fallback lanes go to fallback and read the first rows. */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_mirror_window)(const FT* g, irgrid_index p, irgrid_index m, int rank,
        const irgrid_index* dims, const irgrid_index* pitches, int align, int (*rows)[LANES], FT (*wt)[4][LANES],
        VF* reversed, irgrid_index* fallback, irgrid_index* nf) {
    const VF one = SET1(1), three = SET1(3), all = CMP(one, one, _CMP_EQ_OQ);
    VF bad = ZERO(), gk[3], x, s, c, start, back = ZERO(), kept, w[4];
    VI first = ISET1(0), step[2];
    FT coords[3][LANES], len;
    int k, j, q, r;
    SFX(irgrid_lane_coords)(g, p, m, rank, gk, coords);
    for (k = 0; k < rank; k++) {  /* dim k outermost first; the grid lists innermost first */
        len = (FT)dims[k];
        x = SFX(irgrid_pixel_coordinate)(gk[rank - 1 - k], dims[k], align, 1, &bad);
        s = FLOOR(x);
        NATIVE_CUBIC(SUB(x, s), w);
        for (j = 0; j < 4; j++)
            STOREU(wt[k][j], w[j]);
        s = SUB(s, one);  /* the first tap */
        if (align && dims[k] == 1) {  /* every tap is the one pixel, as are the layout's 3 before it */
            start = SET1((FT)-3);
            back = ZERO();
        } else {
            bad = OR(bad, OR(CMP(s, SET1(align ? 1 - len : -len), _CMP_LT_OQ),
                             CMP(ADD(s, three), SET1(align ? 2 * (len - 1) : 2 * len - 1), _CMP_GT_OQ)));
            back = OR(CMP(s, SET1(-3), _CMP_LT_OQ), CMP(s, SET1(len - 1), _CMP_GT_OQ));
            c = BLEND(SET1(align ? 2 * (len - 1) : 2 * len - 1), SET1(align ? 0 : -1), CMP(s, ZERO(), _CMP_LT_OQ));
            /* the run's lowest pixel, c - s - 3: a row reads from it, an outer dim from its highest */
            start = BLEND(s, k == rank - 1 ? SUB(SUB(c, s), three) : SUB(c, s), back);
        }
        first = IADD(first, IMUL(TOINT(ADD(start, three)), ISET1((int)pitches[k])));
        if (k < rank - 1)
            step[k] = KEEP_INDEX(ISET1(-(int)pitches[k]), back, ISET1((int)pitches[k]));
    }
    *reversed = back;
    SFX(irgrid_record_fallback)(bad, p, m, fallback, nf);
    kept = ANDNOT(bad, all);
    first = KEEP_INDEX(first, kept, ISET1(0));
    for (k = 0; k < rank - 1; k++)
        step[k] = KEEP_INDEX(step[k], kept, ISET1((int)pitches[k]));
    for (q = 0; q < (rank == 3 ? 4 : 1); q++)
        for (r = 0; r < 4; r++)
            ISTOREU(rows[q * 4 + r], rank == 3 ? IADD(IADD(first, IMUL(ISET1(q), step[0])), IMUL(ISET1(r), step[1]))
                                               : IADD(first, IMUL(ISET1(r), step[0])));
}

/* One row's four x taps (byte offsets x within the row), weighted. */
IRGRID_AVX2_INLINE VF SFX(irgrid_row_sum)(const char* row, const irgrid_index* x, const VF* w) {
    VF sum = MUL(w[0], LOADU((const FT*)(row + x[0])));
    sum = FMADD(w[1], LOADU((const FT*)(row + x[1])), sum);
    sum = FMADD(w[2], LOADU((const FT*)(row + x[2])), sum);
    return FMADD(w[3], LOADU((const FT*)(row + x[3])), sum);
}

/* One plane's four rows (byte offsets y within the plane), weighted. */
IRGRID_AVX2_INLINE VF SFX(irgrid_plane_sum)(const char* plane, const irgrid_index* y, const VF* wy, const irgrid_index* x,
                                            const VF* wx) {
    VF sum = MUL(wy[0], SFX(irgrid_row_sum)(plane + y[0], x, wx));
    sum = FMADD(wy[1], SFX(irgrid_row_sum)(plane + y[1], x, wx), sum);
    sum = FMADD(wy[2], SFX(irgrid_row_sum)(plane + y[2], x, wx), sum);
    return FMADD(wy[3], SFX(irgrid_row_sum)(plane + y[3], x, wx), sum);
}

/* The taps of the block of points [p, p + m) (m <= LANES) into pix and wt: irgrid_cubic_window's
   (its offsets in pix[0][0]) with zeros padding, irgrid_cubic_taps' (from the scratch's first pixel)
   otherwise. */
IRGRID_AVX2_INLINE void SFX(irgrid_cubic_block)(const FT* g, irgrid_index p, irgrid_index m, int rank,
        const irgrid_index* dims, const irgrid_index* pitches, int padding, int align, int (*pix)[4][LANES],
        FT (*wt)[4][LANES], irgrid_index* fallback, irgrid_index* nf) {
    if (padding == 0)
        SFX(irgrid_cubic_window)(g, p, m, rank, dims, pitches, align, 0, 0, pix[0][0], wt, fallback, nf);
    else
        SFX(irgrid_cubic_taps)(g, p, m, rank, dims, pitches, padding, align, pix, wt, fallback, nf);
}

/* Prefetches the last two rows of the last of the 4 planes that points [0, m) of a block read (pix
   as irgrid_cubic_block sets it; bytes and the pitches as irgrid_cubic3d_run has them), the ones
   a binned chunk meets first: its points go through the volume plane by plane and row by row, so
   the points one row before read the other rows and the points one plane before the other planes,
   while the chunk's sweep read that plane last a whole scratch ago (from L3). Each row's 4 taps
   span 128 bytes, 2 or 3 lines. Prefetching all 4 rows, or the last row of every plane, measured
   slower (benchmarks/README.md, "Prefetching a binned chunk's rows"). Where the CPU gains from it
   (cpu.h's irgrid_cpu_prefetches: not on Zen 5, whose own prefetchers cover these rows). */
IRGRID_AVX2_INLINE void SFX(irgrid_prefetch_last_rows)(const char* bytes, int (*pix)[4][LANES], int m, int padding,
                                                       irgrid_index plane_bytes, irgrid_index row_bytes) {
    const char* row;
    int lane, r;
    for (lane = 0; lane < m; lane++)
        for (r = 2; r < 4; r++) {
            row = bytes + (padding == 0 ? pix[0][0][lane] + 3 * plane_bytes + r * row_bytes
                                        : pix[0][3][lane] + pix[1][r][lane] + pix[2][0][lane]);
            __builtin_prefetch(row);
            __builtin_prefetch(row + 64);
            __builtin_prefetch(row + 127);
        }
}

/* The separable cubic run of rank R (2 or 3, a constant where it is inlined) over its row scratch
   (irgrid_interleave_rows' for 3-D, dims D, H, W; irgrid_interleave_plane2d's for 2-D, dims H, W):
   irgrid_interleaved_run's software pipeline, a point's taps from irgrid_cubic_block, each row's 4
   taps summed with the x weights and a plane's 4 rows with the y weights (irgrid_plane_sum), in 3-D
   the 4 planes with the z weights. The 2-D and 3-D runs below are this one function, so their sums
   are the same operations in the same order as before they were folded. */
IRGRID_AVX2_INLINE irgrid_index SFX(irgrid_cubic_run)(const FT* s, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, int by_point, const int R, const irgrid_index* dims,
        int padding, int align, int streams, irgrid_index* fallback) {
    const irgrid_index pitch = dims[R - 1] + 3, pixel = LANES * (irgrid_index)sizeof(FT);
    const irgrid_index pitches[3] = {R == 3 ? (dims[1] + 3) * pitch : pitch, R == 3 ? pitch : 1, 1};
    const irgrid_index plane_bytes = pitches[0] * pixel;  /* 3-D: a plane; 2-D: a row */
    const int no_taps = (int)((dims[0] + 3) * plane_bytes);  /* irgrid_cubic_window's zero window */
    int pix[2][3][4][LANES], j, lane, next, cur = 0;  /* two blocks' taps: this one, the next; dims (z,) y, x */
    FT wt[2][3][4][LANES], lanes[LANES];
    VF acc[LANES], wx[4], wy[4], store_mask, pending[LANES];
    /* 3-D from a group's 1 MiB; 2-D where the plan says so (a scattered grid), from 4 MiB */
    const int stream = streams && !by_point
                       && (R == 3 ? IRGRID_STREAMS(y, y_cstride, channels, FT)
                                  : IRGRID_STREAMS_FROM(y, y_cstride, channels, FT, IRGRID_STREAM_SCATTERED_MIN_BYTES));
    const int prefetch = R == 3 && by_point && (irgrid_cpu_prefetches() & IRGRID_PREFETCH_ROWS);
    irgrid_index p, m, c, nf = 0, ox[4], oy[4];
    const char* planes[4];
    /* zeros padding: the first tap's offsets count from the scratch's start, the others' from its pixel
       (0, 0(, 0)) */
    const char* bytes = (const char*)s + (padding == 0 ? 0 : 3 * (R == 3 ? pitches[0] + pitch + 1 : pitch + 1) * pixel);
    for (lane = 0; lane < LANES; lane++)
        lanes[lane] = (FT)lane;
    for (j = 0; j < 4; j++) {  /* zeros padding: the rows and pixels of a point's taps */
        oy[j] = j * pitch * pixel;
        ox[j] = j * pixel;
    }
    if (n > 0)
        SFX(irgrid_cubic_block)(g, 0, n < LANES ? n : LANES, R, dims, pitches, padding, align, pix[0], wt[0],
                                fallback, &nf);
    for (p = 0; p < n; p += LANES, cur ^= 1) {
        m = n - p < LANES ? n - p : LANES;
        if (p + LANES < n) {
            next = n - p - LANES < LANES ? (int)(n - p - LANES) : LANES;
            SFX(irgrid_cubic_block)(g, p + LANES, next, R, dims, pitches, padding, align, pix[cur ^ 1], wt[cur ^ 1],
                                    fallback, &nf);
            if (prefetch)
                SFX(irgrid_prefetch_last_rows)(bytes, pix[cur ^ 1], next, padding, plane_bytes, pitch * pixel);
        }
        for (lane = 0; lane < LANES; lane++) {
            if (padding == 0 && pix[cur][0][0][lane] == no_taps) {
                acc[lane] = ZERO();
                continue;
            }
            for (j = 0; j < 4; j++) {
                if (R == 3 && padding == 0) {
                    planes[j] = bytes + pix[cur][0][0][lane] + j * plane_bytes;
                } else if (R == 3) {
                    planes[j] = bytes + pix[cur][0][j][lane];
                    oy[j] = pix[cur][1][j][lane];
                    ox[j] = pix[cur][2][j][lane];
                } else if (padding != 0) {
                    oy[j] = pix[cur][0][j][lane];
                    ox[j] = pix[cur][1][j][lane];
                }
                wy[j] = SET1(wt[cur][R - 2][j][lane]);
                wx[j] = SET1(wt[cur][R - 1][j][lane]);
            }
            if (R == 2) {
                acc[lane] = SFX(irgrid_plane_sum)(padding == 0 ? bytes + pix[cur][0][0][lane] : bytes, oy, wy, ox, wx);
                continue;
            }
            acc[lane] = MUL(SET1(wt[cur][0][0][lane]), SFX(irgrid_plane_sum)(planes[0], oy, wy, ox, wx));
            for (j = 1; j < 4; j++)
                acc[lane] = FMADD(SET1(wt[cur][0][j][lane]), SFX(irgrid_plane_sum)(planes[j], oy, wy, ox, wx),
                                  acc[lane]);
        }
        if (by_point) {
            for (lane = 0; lane < m; lane++)
                STOREU(y + (p + lane) * LANES, acc[lane]);
            continue;
        }
        TRANSPOSE(acc);  /* stored as irgrid_interleaved_run stores, or streamed a pair of blocks at a time */
        if (stream && (p & LANES) == 0 && p + 2 * LANES <= n) {  /* the first of a pair: held */
            for (c = 0; c < channels; c++)
                pending[c] = acc[c];
        } else if (stream && m == LANES && (p & LANES)) {  /* the second: both, a line per channel */
            for (c = 0; c < channels; c++) {
                STREAM(y + c * y_cstride + p - LANES, pending[c]);
                STREAM(y + c * y_cstride + p, acc[c]);
            }
        } else {
            IRGRID_STORE_PLANAR(acc, y, y_cstride, p, m, channels, lanes, store_mask, c);
        }
    }
    if (stream)
        _mm_sfence();
    return nf;
}

/* The 2-D row scratch of a group (dims H, W; (H + 7) * (W + 3) pixels): its H rows of W pixels, each
   after 3 zero pixels, after 3 zero rows and before 4 (one plane of irgrid_interleave_rows' layout
   and the 4 trailing zero rows, the zero window), so that with zeros padding a point's 16 taps lie at
   constant strides from its first (irgrid_cubic_window). */
static IRGRID_AVX2 void SFX(irgrid_interleave_plane2d)(const FT* x, irgrid_index channels, irgrid_index x_cstride,
                                                       const irgrid_index* dims, FT* s) {
    const irgrid_index width = dims[1], pitch = (width + 3) * LANES;
    irgrid_index r, j;
    FT* row;
    memset(s, 0, (size_t)(3 * pitch) * sizeof(FT));
    for (r = 0; r < dims[0]; r++) {
        row = s + (r + 3) * pitch;
        for (j = 0; j < 3; j++)
            STOREU(row + j * LANES, ZERO());
        SFX(irgrid_interleave)(x + r * width, channels, x_cstride, width, row + 3 * LANES);
    }
    memset(s + (dims[0] + 3) * pitch, 0, (size_t)(4 * pitch) * sizeof(FT));
}

/* 2-D cubic over irgrid_interleave_plane2d's scratch (dims H, W): a point's 4 rows of 4 taps (with
   zeros padding at constant strides from its first, irgrid_cubic_window; otherwise 4 row and 4 pixel
   offsets, irgrid_cubic_taps), each row summed with the x weights and the rows with the y weights,
   all in registers (irgrid_plane_sum), as irgrid_cubic3d_run sums one plane; software-pipelined as it
   is; outputs transposed into the planar y as irgrid_interleaved_run stores them. Against the generic
   run (16 offsets and 16 weights per point from memory): benchmarks/README.md, "A separable 2-D
   cubic run". */
static IRGRID_AVX2 irgrid_index SFX(irgrid_cubic2d_run)(const FT* s, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, const irgrid_index* dims, int padding, int align,
        int streams, irgrid_index* fallback) {
    if (sizeof(FT) == 4 && streams)  /* a constant in each run, so that the unstreamed one keeps its code */
        return SFX(irgrid_cubic_run)(s, g, y, n, channels, y_cstride, 0, 2, dims, padding, align, 1, fallback);
    return SFX(irgrid_cubic_run)(s, g, y, n, channels, y_cstride, 0, 2, dims, padding, align, 0, fallback);
}

/* 3-D cubic's own row scratch and run. */
/* The zero planes of that scratch (dims D, H, W of (D + 7) * (H + 3) * (W + 3) pixels): the 3 before
   the volume's planes and the 4 after them. */
static IRGRID_AVX2 void SFX(irgrid_rows_padding)(const irgrid_index* dims, FT* s) {
    const irgrid_index plane_pitch = (dims[1] + 3) * (dims[2] + 3) * LANES;
    memset(s, 0, (size_t)(3 * plane_pitch) * sizeof(FT));
    memset(s + (dims[0] + 3) * plane_pitch, 0, (size_t)(4 * plane_pitch) * sizeof(FT));
}

/* Planes [z0, z1) of the group's planes (x + c * x_cstride, dims D, H, W) into s with the zero rows
   and pixels before their rows (irgrid_rows_padding zeroes the planes around them). */
static IRGRID_AVX2 void SFX(irgrid_interleave_rows)(const FT* x, irgrid_index channels, irgrid_index x_cstride,
                                                    const irgrid_index* dims, irgrid_index z0, irgrid_index z1, FT* s) {
    const irgrid_index width = dims[2], pitch = (width + 3) * LANES, plane_pitch = (dims[1] + 3) * pitch;
    irgrid_index z, r, j;
    FT* row;
    for (z = z0; z < z1; z++) {
        memset(s + (z + 3) * plane_pitch, 0, (size_t)(3 * pitch) * sizeof(FT));
        for (r = 0; r < dims[1]; r++) {
            row = s + (z + 3) * plane_pitch + (r + 3) * pitch;
            for (j = 0; j < 3; j++)
                STOREU(row + j * LANES, ZERO());
            /* its W pixels, then a zero pixel: the next row's first (or the next plane's first zero
               row's), which is zero anyway */
            SFX(irgrid_interleave)(x + (z * dims[1] + r) * width, channels, x_cstride, width, row + 3 * LANES);
        }
    }
}

/* The least and greatest depth (the third coordinate) of 3-D points [0, n) of g into *lo and *hi, NaN
   skipped (a vector minimum or maximum with NaN first keeps the other operand; +-inf if all are NaN):
   grid_sample.c's hold_planes, before each block of points. Three vectors hold LANES points, a depth
   at every third float. */
static IRGRID_AVX2 void SFX(irgrid_depth_range)(const FT* g, irgrid_index n, FT* lo, FT* hi) {
    VF low[3], high[3];
    FT lows[3 * LANES], highs[3 * LANES], least = (FT)INFINITY, most = (FT)-INFINITY, v;
    irgrid_index p = 0, i;
    for (i = 0; i < 3; i++) {
        low[i] = SET1(least);
        high[i] = SET1(most);
    }
    for (; p + LANES <= n; p += LANES)
        for (i = 0; i < 3; i++) {
            low[i] = VMIN(LOADU(g + p * 3 + i * LANES), low[i]);
            high[i] = VMAX(LOADU(g + p * 3 + i * LANES), high[i]);
        }
    for (i = 0; i < 3; i++) {
        STOREU(lows + i * LANES, low[i]);
        STOREU(highs + i * LANES, high[i]);
    }
    for (i = 2; i < 3 * LANES; i += 3) {
        least = lows[i] < least ? lows[i] : least;
        most = highs[i] > most ? highs[i] : most;
    }
    for (; p < n; p++) {
        v = g[p * 3 + 2];
        least = v < least ? v : least;
        most = v > most ? v : most;
    }
    *lo = least;
    *hi = most;
}

/* irgrid_interleaved_run for 3-D cubic over irgrid_interleave_rows' scratch (dims D, H, W),
   software-pipelined the same way; with `by_point`, point i's LANES channels (those past `channels`
   zeros) go to y + i * LANES instead (binned_span's buffer, unbinned by irgrid_unbin), and each
   block's rows that a binned chunk meets first are prefetched (irgrid_prefetch_last_rows, where the CPU
   gains from it). A planar output of at least IRGRID_STREAM_MIN_BYTES whose channel planes start on
   64-byte lines (a SamplePlan's fresh output does) is written a pair of blocks at a time, one whole
   line per channel, with non-temporal stores; then the same values as regular stores. With zeros padding a point one of
   whose dims keeps no tap (irgrid_cubic_window's zero window) is 0 without its 80 FMAs: about a
   tenth of a uniform grid in [-1.1, 1.1]'s points, 0.97x the time on it at one thread. */
static IRGRID_AVX2 irgrid_index SFX(irgrid_cubic3d_run)(const FT* s, const FT* g, FT* y, irgrid_index n,
        irgrid_index channels, irgrid_index y_cstride, int by_point, const irgrid_index* dims, int padding, int align,
        irgrid_index* fallback) {
    return SFX(irgrid_cubic_run)(s, g, y, n, channels, y_cstride, by_point, 3, dims, padding, align, 1, fallback);
}

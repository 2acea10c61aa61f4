/* grid_sample.c's chunk functions for one float type: included once per type with IRGRID_T (the float)
   and IRGRID_FN(name) (its suffixed name, also that of simd.h's functions for the type) defined. */

/* simd.h's interleaved-path function `name` for plan p's pixels: the 16-channel one where the plan took
   them (f32 only: IRGRID_WIDE_PIXELS), the type's own otherwise. */
#if IRGRID_WIDE_PIXELS
#define IRGRID_PIXELS_FN(p, name) ((p)->lanes == 16 ? name##_f32x16 : IRGRID_FN(name))
#else
#define IRGRID_PIXELS_FN(p, name) IRGRID_FN(name)
#endif

/* The taps of one point at normalised coordinates g (innermost dim first) into off / wt. Returns their
   count: 0 when the point samples only zeros padding, -1 when it is NaN. */
static inline irgrid_index IRGRID_FN(point_taps)(const IRGRID_T* g, irgrid_index rank, const irgrid_index* dims,
                                                 const irgrid_index* strides, int mode, int padding, int align_corners,
                                                 irgrid_index* off, IRGRID_T* wt) {
    irgrid_index dim_off[4 * IRGRID_MAX_RANK];
    IRGRID_T dim_w[4 * IRGRID_MAX_RANK];
    irgrid_index dim_n[IRGRID_MAX_RANK];
    irgrid_index k;
    int status = IRGRID_POINT_OK;
    for (k = 0; k < rank; k++) {  /* k: spatial dim, outermost first; the grid lists innermost first */
        status = IRGRID_FN(irgrid_scalar_dim_taps)(g[rank - 1 - k], dims[k], strides[k], mode, padding, align_corners,
                                            dim_off + 4 * k, dim_w + 4 * k, dim_n + k);
        if (status != IRGRID_POINT_OK)
            break;
    }
    if (status == IRGRID_POINT_ZERO)  /* a NaN in a later coordinate still makes the point NaN */
        for (k = k + 1; k < rank; k++)
            if (g[rank - 1 - k] != g[rank - 1 - k])
                status = IRGRID_POINT_NAN;
    if (status != IRGRID_POINT_OK)
        return status == IRGRID_POINT_NAN ? -1 : 0;
    return IRGRID_FN(irgrid_outer_product_taps)(dim_off, dim_w, dim_n, rank, 4, (IRGRID_T)1, off, wt);
}

/* Outputs [start, start + n) of batch item `batch_index` in every channel, from the block's taps (point
   i's at tap_off / tap_w + i * max_taps, tap_n[i] of them), one channel plane at a time. */
static void IRGRID_FN(apply_taps)(const IRGRID_T* x, IRGRID_T* y, irgrid_index channels, irgrid_index plane,
                                  irgrid_index points, irgrid_index max_taps, irgrid_index batch_index,
                                  irgrid_index start, irgrid_index n, const irgrid_index* tap_off,
                                  const IRGRID_T* tap_w, const irgrid_index* tap_n) {
    irgrid_index i, c, count;
    const irgrid_index* off;
    const IRGRID_T* wt;
    const IRGRID_T* xc;
    IRGRID_T* yc;
    for (c = 0; c < channels; c++) {
        xc = x + (batch_index * channels + c) * plane;
        yc = y + (batch_index * channels + c) * points + start;
        for (i = 0; i < n; i++) {
            count = tap_n[i];
            off = tap_off + i * max_taps;
            wt = tap_w + i * max_taps;
            if (c + 1 < channels && count > 0)
                /* The next channel reads the same offsets in the next plane: ask for them now, so they
                   arrive while this channel computes (measured 1.2-1.7x on 2-D linear/nearest). */
                __builtin_prefetch(xc + plane + off[count - 1]);
            if (count == 4)  /* the common interior bilinear point, unrolled (same summation order) */
                yc[i] = wt[0] * xc[off[0]] + wt[1] * xc[off[1]] + wt[2] * xc[off[2]] + wt[3] * xc[off[3]];
            else if (count == 1)
                yc[i] = wt[0] * xc[off[0]];
            else if (count <= 0)
                yc[i] = count < 0 ? (IRGRID_T)NAN : (IRGRID_T)0.0;
            else
                yc[i] = IRGRID_FN(irgrid_weighted_sum)(xc, off, wt, count);
        }
    }
}

/* The coordinates of points [start, stop) of item b displaced by the field (grid_sample.h's
   irgrid_displacement) into g. Along a row only the innermost index changes: its loop, per rank, on
   local scalars, restrict pointers and an int index (packed int -> float conversion), is one the
   compiler vectorises (scalar, it took 3.3 ns a point, a fifth of a one-channel GridSample's time). */
static void IRGRID_FN(displaced_points)(const irgrid_grid_sample* p, irgrid_index b, IRGRID_T* restrict g,
                                        irgrid_index start, irgrid_index stop) {
    const irgrid_displacement* d = &p->displacement;
    const irgrid_index rank = p->rank, points = p->points;
    const IRGRID_T* field = (const IRGRID_T*)p->coords + b * d->channels * points;
    const IRGRID_T* f[IRGRID_AFFINE_MAX_RANK];
    IRGRID_T gain[IRGRID_AFFINE_MAX_RANK], scale[IRGRID_AFFINE_MAX_RANK], shift[IRGRID_AFFINE_MAX_RANK];
    irgrid_index index[IRGRID_AFFINE_MAX_RANK] = {0, 0, 0}, k, j, n, pt = start;
    int first;  /* rows are at most INT_MAX points (the plan checks) */
    for (k = 0; k < rank; k++) {
        f[k] = field + d->component[k] * points;
        gain[k] = (IRGRID_T)d->gain[k];
        scale[k] = (IRGRID_T)d->scale[k];
        shift[k] = (IRGRID_T)d->shift[k];
    }
    irgrid_affine_first_index(start, rank, p->extents, index);
    while (pt < stop) {
        n = stop - pt < p->extents[0] - index[0] ? stop - pt : p->extents[0] - index[0];
        const IRGRID_T* restrict f0 = f[0] + pt;
        const IRGRID_T g0 = gain[0], s0 = scale[0], h0 = shift[0];
        first = (int)index[0];
        if (rank == 1) {
            for (j = 0; j < n; j++)
                g[j] = ((IRGRID_T)(first + (int)j) + g0 * f0[j]) * s0 + h0;
        } else if (rank == 2) {
            const IRGRID_T* restrict f1 = f[1] + pt;
            const IRGRID_T y = (IRGRID_T)index[1], g1 = gain[1], s1 = scale[1], h1 = shift[1];
            for (j = 0; j < n; j++) {
                g[2 * j] = ((IRGRID_T)(first + (int)j) + g0 * f0[j]) * s0 + h0;
                g[2 * j + 1] = (y + g1 * f1[j]) * s1 + h1;
            }
        } else {
            const IRGRID_T *restrict f1 = f[1] + pt, *restrict f2 = f[2] + pt;
            const IRGRID_T y = (IRGRID_T)index[1], g1 = gain[1], s1 = scale[1], h1 = shift[1];
            const IRGRID_T z = (IRGRID_T)index[2], g2 = gain[2], s2 = scale[2], h2 = shift[2];
            for (j = 0; j < n; j++) {
                g[3 * j] = ((IRGRID_T)(first + (int)j) + g0 * f0[j]) * s0 + h0;
                g[3 * j + 1] = (y + g1 * f1[j]) * s1 + h1;
                g[3 * j + 2] = (z + g2 * f2[j]) * s2 + h2;
            }
        }
        g += n * rank;
        pt += n;
        index[0] += n - 1;
        irgrid_affine_next_index(rank, p->extents, index);
    }
}

/* The coordinates of points [start, stop) of item b: the grid's own, or those of a fused AffineGrid
   (affine.h's irgrid_affine_points, the very function AffineGrid's own kernel calls, so the result is
   bitwise AffineGrid then GridSample) or of a displacement computed into `buffer`. */
static const IRGRID_T* IRGRID_FN(block_coords)(const irgrid_grid_sample* p, const IRGRID_T* starts,
                                               const IRGRID_T* steps, irgrid_index b, irgrid_index start,
                                               irgrid_index stop, IRGRID_T* buffer) {
    const IRGRID_T* coords = (const IRGRID_T*)p->coords;
    const irgrid_index rank = p->rank;
    if (p->affine) {
        IRGRID_FN(irgrid_affine_points)(coords + b * rank * (rank + 1), buffer, rank, p->extents, starts, steps, start,
                                        stop);
        return buffer;
    }
    if (p->displaced) {
        IRGRID_FN(displaced_points)(p, b, buffer, start, stop);
        return buffer;
    }
    return coords + (b * p->points + start) * rank;
}

/* Output points [start, stop) of batch item `batch_index` (at most IRGRID_MAX_TAPS / max_taps points):
   the scalar path. Computed coordinates (affine, displaced) come COMPUTED_SPAN points at a time. The
   block's taps are computed once into stack buffers that stay in L1, then every channel reads them,
   writing the block's outputs contiguously. */
static void IRGRID_FN(sample_block)(const irgrid_grid_sample* p, const IRGRID_T* starts, const IRGRID_T* steps,
                                    irgrid_index batch_index, irgrid_index start, irgrid_index stop) {
    irgrid_index tap_off[IRGRID_MAX_TAPS];
    IRGRID_T tap_w[IRGRID_MAX_TAPS];
    irgrid_index tap_n[IRGRID_MAX_TAPS];
    IRGRID_T computed[COMPUTED_SPAN * IRGRID_AFFINE_MAX_RANK];
    const irgrid_index rank = p->rank, max_taps = p->max_taps, points = p->points;
    irgrid_index i, n = stop - start;
    const IRGRID_T* g = NULL;
    for (i = 0; i < n; i++) {
        if (i % COMPUTED_SPAN == 0)
            g = IRGRID_FN(block_coords)(p, starts, steps, batch_index, start + i,
                                        start + i + COMPUTED_SPAN < stop ? start + i + COMPUTED_SPAN : stop, computed);
        tap_n[i] = IRGRID_FN(point_taps)(g + i % COMPUTED_SPAN * rank, rank, p->dims, p->strides, p->mode, p->padding,
                                         p->align_corners, tap_off + i * max_taps, tap_w + i * max_taps);
    }
    IRGRID_FN(apply_taps)((const IRGRID_T*)p->data, (IRGRID_T*)p->output, p->channels, p->plane, points, max_taps,
                          batch_index, start, n, tap_off, tap_w, tap_n);
}

/* simd_points' points left to the scalar path (non-finite or far coordinates; fallback[0, n), at most a
   block), point by point: out of line, so that the vector runs' caller stays small whatever the compiler
   inlines (a build that inlined this into it ran 3-D trilinear of batched 16-channel items 1.04-1.05x
   slower, benchmarks/README.md, "Cubic with reflection padding by points"). */
static __attribute__((noinline)) void IRGRID_FN(fallback_points)(const irgrid_grid_sample* p, const IRGRID_T* xb,
        const IRGRID_T* g, IRGRID_T* yb, irgrid_index y_cstride, int by_point, irgrid_index channels,
        const irgrid_index* fallback, irgrid_index n) {
    irgrid_index tap_off[SIMD_MAX_TAPS];
    IRGRID_T tap_w[SIMD_MAX_TAPS];
    irgrid_index i, j, count;
    for (j = 0; j < n; j++) {
        i = fallback[j];
        count = IRGRID_FN(point_taps)(g + i * p->rank, p->rank, p->dims, p->strides, p->mode, p->padding,
                                      p->align_corners, tap_off, tap_w);
        if (by_point)
            IRGRID_FN(apply_taps)(xb, yb + i * p->lanes, channels, p->plane, 1, p->max_taps, 0, 0, 1, tap_off, tap_w,
                                  &count);
        else
            IRGRID_FN(apply_taps)(xb, yb, channels, p->plane, y_cstride, p->max_taps, 0, i, 1, tap_off, tap_w, &count);
    }
}

/* Points g[0, n) (n <= SIMD_BLOCK) of planes xb (`channels` of them) into yb + c * y_cstride + i (or,
   `by_point`, 3-D cubic over its row scratch only, yb + i * lanes + c) with simd.h's vector kernels
   (an interleaved one when `scratch` holds these channels interleaved); the points they leave
   (non-finite or far coordinates) go through point_taps and apply_taps. */
static void IRGRID_FN(simd_points)(const irgrid_grid_sample* p, const IRGRID_T* xb, const IRGRID_T* g, IRGRID_T* yb,
                                   irgrid_index y_cstride, int by_point, irgrid_index n, irgrid_index channels,
                                   const IRGRID_T* scratch) {
    irgrid_index fallback[SIMD_BLOCK];
    irgrid_index n_fallback;
    const irgrid_index rank = p->rank;
    const int rows = p->rows;
#if IRGRID_WIDE_PIXELS  /* (one-channel pixels, nearest by points and 8-channel pixels streamed: f32 only) */
    if (p->pixel == 1 && !p->wide)
        n_fallback = irgrid_nearest8_f32(xb, g, yb, n, channels, y_cstride, p->plane, p->dims, p->padding,
                                          p->align_corners, p->loads, fallback);
    else if (p->pixel && p->mode == IRGRID_MODE_LINEAR)
        n_fallback = irgrid_pairs_pixels_run_f32(scratch, g, yb, n, channels, y_cstride, p->pixel, p->dims, p->padding,
                                                 p->align_corners, fallback);
    else if (p->pixel)
        n_fallback = irgrid_nearest_points_run_f32(scratch != NULL ? scratch : xb, g, yb, n, channels, y_cstride,
                                                   p->plane, p->pixel, p->dims, p->padding, p->align_corners,
                                                   p->loads, fallback);
    else if (scratch != NULL && rows == 2)
        n_fallback = (p->wide ? irgrid_cubic_points_run_f32x1 : irgrid_cubic_points8_run_f32x1)(
            scratch, g, yb, n, channels, y_cstride, rank, p->dims, p->padding, p->align_corners, fallback);
    else if (scratch != NULL && !rows && p->streams && p->lanes == 8)
        n_fallback = irgrid_interleaved_streamed_f32(scratch, g, yb, n, channels, y_cstride, p->plane, rank, p->dims,
                                                     p->strides, p->mode, p->padding, p->align_corners, fallback);
    else
#endif
    if (scratch != NULL && rank == 2 && rows)
        n_fallback = IRGRID_PIXELS_FN(p, irgrid_cubic2d_run)(scratch, g, yb, n, channels, y_cstride, p->dims,
                                                             p->padding, p->align_corners, p->streams, fallback);
    else if (scratch != NULL && rows)
        n_fallback = IRGRID_PIXELS_FN(p, irgrid_cubic3d_run)(scratch, g, yb, n, channels, y_cstride, by_point,
                                                             p->dims, p->padding, p->align_corners, fallback);
    else if (scratch != NULL)
        n_fallback = IRGRID_PIXELS_FN(p, irgrid_interleaved_sample)(scratch, g, yb, n, channels, y_cstride, p->plane,
                                                                    rank, p->dims, p->strides, p->mode, p->padding,
                                                                    p->align_corners, fallback);
    else
        n_fallback = IRGRID_FN(irgrid_simd_sample)(xb, g, yb, n, channels, p->plane, y_cstride, rank, p->dims,
                                                   p->strides, p->mode, p->padding, p->align_corners, p->loads,
                                                   p->wide, fallback);
    if (n_fallback > 0)
        IRGRID_FN(fallback_points)(p, xb, g, yb, y_cstride, by_point, channels, fallback, n_fallback);
}

/* Copies into 3-D cubic's row scratch the planes of xb (`channels` of them) that points g[0, n) may read
   and it lacks, keeping its planes one run [held->lo, held->hi). A smooth warp's points read a few
   planes at a time, so each plane is copied just before the points that read it, while it is in L2,
   instead of the whole volume first; a warp that reads part of the volume copies only that part. From
   the points' least and greatest depth coordinate (irgrid_depth_range, NaN skipped; clamped to +-4,
   beyond which no tap changes) the planes from the first tap's (floor - 1) to the last one's
   (floor + 2), one more on each side because the kernel computes coordinates in its own precision
   (its floor may be one off at an integer), and one more after: taps past a plane's last row or pixel
   read the next plane's leading zero rows, which come with it. Reflection padding that would fold a
   tap: every plane. */
static void IRGRID_FN(hold_planes)(const irgrid_grid_sample* p, const IRGRID_T* xb, irgrid_index channels,
                                   const IRGRID_T* g, irgrid_index n, IRGRID_T* scratch, irgrid_held* held) {
    const irgrid_index* dims = p->dims;
    IRGRID_T g_lo, g_hi;
    double z_lo, z_hi, depth = (double)dims[0], lo, hi;
    irgrid_index a, b;
    if (held->lo == 0 && held->hi == dims[0])
        return;
    IRGRID_PIXELS_FN(p, irgrid_depth_range)(g, n, &g_lo, &g_hi);
    if (!(g_lo <= g_hi))  /* every depth NaN: the scalar path takes these points */
        return;
    /* both ends within [-4, 4], whatever side an infinite end is on: with one plane and align_corners,
       denormalising an infinity gives inf * 0 = NaN (a fuzzing finding, docs/fuzzing.md) */
    g_lo = -4 > g_lo ? (IRGRID_T)-4 : (4 < g_lo ? (IRGRID_T)4 : g_lo);
    g_hi = -4 > g_hi ? (IRGRID_T)-4 : (4 < g_hi ? (IRGRID_T)4 : g_hi);
    z_lo = irgrid_denormalize_f64((double)g_lo, dims[0], p->align_corners);
    z_hi = irgrid_denormalize_f64((double)g_hi, dims[0], p->align_corners);
    if (p->padding == IRGRID_PAD_REFLECTION && (z_lo < 0.0 || z_hi > depth - 1.0)) {
        a = 0;
        b = dims[0];
    } else {
        lo = floor(z_lo) - 2.0;
        lo = 0 > lo ? 0 : lo;
        a = (irgrid_index)(depth - 1.0 < lo ? depth - 1.0 : lo);
        hi = floor(z_hi) + 5.0;
        hi = 1 > hi ? 1 : hi;
        b = (irgrid_index)(depth < hi ? depth : hi);
    }
    if (held->lo == held->hi)
        held->lo = held->hi = a;
    if (a < held->lo) {
        IRGRID_PIXELS_FN(p, irgrid_interleave_rows)(xb, channels, p->plane, dims, a, held->lo, scratch);
        held->lo = a;
    }
    if (b > held->hi) {
        IRGRID_PIXELS_FN(p, irgrid_interleave_rows)(xb, channels, p->plane, dims, held->hi, b, scratch);
        held->hi = b;
    }
}

/* Output points [start, stop) (at most SIMD_BLOCK) of channels [c0, c1) of batch item `batch_index`, as
   sample_block but with the vector kernels (simd_points); with `held`, over a row scratch that first
   takes the planes these points read (hold_planes). */
static void IRGRID_FN(simd_block)(const irgrid_grid_sample* p, const IRGRID_T* starts, const IRGRID_T* steps,
                                  irgrid_index batch_index, irgrid_index start, irgrid_index stop, irgrid_index c0,
                                  irgrid_index c1, IRGRID_T* scratch, irgrid_held* held) {
    IRGRID_T computed[SIMD_BLOCK * IRGRID_AFFINE_MAX_RANK];
    const irgrid_index plane = p->plane, points = p->points, channels = p->channels;
    const IRGRID_T* x = (const IRGRID_T*)p->data;
    const IRGRID_T* g = IRGRID_FN(block_coords)(p, starts, steps, batch_index, start, stop, computed);
    if (held != NULL)
        IRGRID_FN(hold_planes)(p, x + (batch_index * channels + c0) * plane, c1 - c0, g, stop - start, scratch, held);
    IRGRID_FN(simd_points)(p, x + (batch_index * channels + c0) * plane, g,
                           (IRGRID_T*)p->output + (batch_index * channels + c0) * points + start, points, 0,
                           stop - start, c1 - c0, scratch);
}

/* Points [start, stop) of channels [c0, c1) of one batch item, simd_block by simd_block. */
static void IRGRID_FN(simd_span)(const irgrid_grid_sample* p, const IRGRID_T* starts, const IRGRID_T* steps,
                                 irgrid_index batch_index, irgrid_index start, irgrid_index stop, irgrid_index c0,
                                 irgrid_index c1, IRGRID_T* scratch, irgrid_held* held) {
    while (start < stop) {
        IRGRID_FN(simd_block)(p, starts, steps, batch_index, start,
                              start + SIMD_BLOCK < stop ? start + SIMD_BLOCK : stop, c0, c1, scratch, held);
        start += SIMD_BLOCK;
    }
}

/* The gather path's unit: one batch item's points [p0, p1) of one group of channels. */
static void IRGRID_FN(simd_chunk)(const irgrid_grid_sample* p, const IRGRID_T* starts, const IRGRID_T* steps,
                                  irgrid_index chunk) {
    const irgrid_index groups = p->groups, spans = p->spans;
    const irgrid_index b = chunk / (groups * spans), rest = chunk % (groups * spans);
    const irgrid_index c0 = rest / spans * p->group, p0 = rest % spans * p->span;
    const irgrid_index c1 = c0 + p->group < p->channels ? c0 + p->group : p->channels;
    const irgrid_index p1 = p0 + p->span < p->points ? p0 + p->span : p->points;
    IRGRID_FN(simd_span)(p, starts, steps, b, p0, p1, c0, c1, NULL, NULL);
}

/* Chunk i of the bins' segment of an item's points g (rank coordinates each): judged from its first
   IRGRID_BIN_SAMPLE points and, if scattered (or binning is forced), its coordinates sorted by tile
   into the bins. The worker's output buffer holds the sort's order meanwhile: the segment's units,
   which use it for outputs, run after every chunk is sorted (the next phase). */
static void IRGRID_FN(sort_chunk)(const irgrid_grid_sample* p, const IRGRID_T* g, const irgrid_bins* bins,
                                  irgrid_index i) {
    const irgrid_index rank = p->rank, at = i * bins->chunk;
    irgrid_index n = bins->last - bins->first - at, m;
    int* slot = bins->slot + at;
    if (n <= 0)  /* a chunk past a shorter last segment's */
        return;
    n = bins->chunk < n ? bins->chunk : n;
    m = n < IRGRID_BIN_SAMPLE ? n : IRGRID_BIN_SAMPLE;
    g += (bins->first + at) * rank;
    IRGRID_FN(irgrid_tile_keys)(g, m, rank, p->scale, p->offset, p->tiles, irgrid_dims_in_order, slot);
    bins->sorted[i] = p->binning == IRGRID_POLICY_ALWAYS
                      || irgrid_scattered(slot, m, p->tiles[rank - 2], p->tiles[rank - 1], p->judge_rows);
    if (!bins->sorted[i])
        return;
    if (p->key_order[0] == 0)  /* the judged keys' order: they serve */
        IRGRID_FN(irgrid_tile_keys)(g + m * rank, n - m, rank, p->scale, p->offset, p->tiles, p->key_order, slot + m);
    else
        IRGRID_FN(irgrid_tile_keys)(g, n, rank, p->scale, p->offset, p->tiles, p->key_order, slot);
    IRGRID_FN(irgrid_sort_by_tile)(g, n, p->n_tiles, bins->counts, slot, (int*)bins->out,
                                   (IRGRID_T*)bins->coords + at * rank);
}

/* A sorted chunk's outputs over one-channel pixels (binned_span: a plane a channel in out, `stride` apart,
   in tile order) back in point order: point i (tile position slot[i]) into y + c * y_cstride + i. */
static void IRGRID_FN(unbin_planes)(const IRGRID_T* out, irgrid_index stride, const int* slot, irgrid_index n,
                                    irgrid_index channels, IRGRID_T* y, irgrid_index y_cstride) {
    irgrid_index c, i;
    for (c = 0; c < channels; c++)
        for (i = 0; i < n; i++)
            y[c * y_cstride + i] = out[c * stride + slot[i]];
}

/* simd_span for 3-D cubic on a grid (not a fused AffineGrid), chunk by chunk of the bins' segment (start
   a chunk boundary): a sorted chunk is sampled in tile order into the worker's bins->out, then put back;
   the others as simd_span does. Over the row scratch bins->out holds a pixel a point (irgrid_unbin), over
   one-channel pixels (rows 2, the whole volume copied in) a plane a channel (unbin_planes). */
static void IRGRID_FN(binned_span)(const irgrid_grid_sample* p, irgrid_index batch_index, irgrid_index start,
                                   irgrid_index stop, irgrid_index c0, irgrid_index c1, IRGRID_T* scratch,
                                   irgrid_held* held, const irgrid_bins* bins) {
    const irgrid_index rank = p->rank, lanes = p->lanes, points = p->points;
    const int planes = p->rows == 2;
    irgrid_index n, s, m;
    const IRGRID_T* gb;
    IRGRID_T* out = (IRGRID_T*)bins->out;
    const IRGRID_T* xb = (const IRGRID_T*)p->data + (batch_index * p->channels + c0) * p->plane;
    IRGRID_T* yb = (IRGRID_T*)p->output + (batch_index * p->channels + c0) * points;
    while (start < stop) {
        n = stop - start < bins->chunk ? stop - start : bins->chunk;
        if (bins->sorted[(start - bins->first) / bins->chunk]) {
            gb = (const IRGRID_T*)bins->coords + (start - bins->first) * rank;
            for (s = 0; s < (n + SIMD_BLOCK - 1) / SIMD_BLOCK; s++) {
                m = SIMD_BLOCK < n - s * SIMD_BLOCK ? SIMD_BLOCK : n - s * SIMD_BLOCK;
                if (!planes)
                    IRGRID_FN(hold_planes)(p, xb, c1 - c0, gb + s * SIMD_BLOCK * rank, m, scratch, held);
                IRGRID_FN(simd_points)(p, xb, gb + s * SIMD_BLOCK * rank, out + s * SIMD_BLOCK * (planes ? 1 : lanes),
                                       planes ? bins->chunk : 1, !planes, m, c1 - c0, scratch);
            }
            if (planes)
                IRGRID_FN(unbin_planes)(out, bins->chunk, bins->slot + (start - bins->first), n, c1 - c0, yb + start,
                                        points);
            else
                IRGRID_PIXELS_FN(p, irgrid_unbin)(out, bins->slot + (start - bins->first), n, c1 - c0, yb + start,
                                                  points);
        } else {
            IRGRID_FN(simd_span)(p, NULL, NULL, batch_index, start, start + n, c0, c1, scratch, planes ? NULL : held);
        }
        start += n;
    }
}

/* The interleaved path's unit: points of span `unit % spans` (of points [first, last)) of channel group
   `unit / spans` (of `lanes` channels) over the worker's scratch, which holds group `held->key - 1`
   interleaved (copied in first if it is another; 3-D cubic's row scratch takes its planes as points
   need them, hold_planes, 2-D cubic's its one plane at once); through `bins` (binned_span) where
   given. */
static void IRGRID_FN(interleave_unit)(const irgrid_grid_sample* p, const IRGRID_T* starts, const IRGRID_T* steps,
                                       irgrid_index unit, irgrid_index first, irgrid_index last, IRGRID_T* scratch,
                                       irgrid_held* held, const irgrid_bins* bins) {
    const irgrid_index key = unit / p->spans, b = key / p->groups, channels = p->channels, plane = p->plane;
    const irgrid_index c0 = key % p->groups * p->lanes, p0 = first + unit % p->spans * p->span;
    const irgrid_index c1 = c0 + p->lanes < channels ? c0 + p->lanes : channels;
    const irgrid_index p1 = p0 + p->span < last ? p0 + p->span : last;
    const int rows = p->rows;
    const IRGRID_T* x = (const IRGRID_T*)p->data;
    if (p0 >= p1)
        return;
    if (held->key != key + 1) {
#if IRGRID_WIDE_PIXELS
        if (p->stacked) {
            irgrid_stack_rows(x + b * plane, p->dims[0], p->dims[1], p->padding == IRGRID_PAD_BORDER, scratch);
        } else if (p->pixel) {
            irgrid_interleave_narrow_f32(x + (b * channels + c0) * plane, c1 - c0, plane, plane, p->pixel, scratch);
            memset(scratch + plane * p->pixel, 0, (size_t)p->pixel * sizeof(float));  /* the zero pixel */
        } else if (rows == 2 && p->padding == IRGRID_PAD_ZEROS)
            irgrid_interleave_padded_f32x1(x + (b * channels + c0) * plane, c1 - c0, plane, p->rank, p->dims, scratch);
        else if (rows == 2)
            irgrid_mirror_padded_f32x1(x + (b * channels + c0) * plane, c1 - c0, plane, p->rank, p->dims, p->padding,
                                       p->align_corners, scratch);
        else
#endif
        if (rows && p->rank == 2)
            IRGRID_PIXELS_FN(p, irgrid_interleave_plane2d)(x + (b * channels + c0) * plane, c1 - c0, plane, p->dims,
                                                           scratch);
        else if (rows)
            IRGRID_PIXELS_FN(p, irgrid_rows_padding)(p->dims, scratch);
        else
            IRGRID_PIXELS_FN(p, irgrid_interleave)(x + (b * channels + c0) * plane, c1 - c0, plane, plane, scratch);
        held->key = key + 1;
        held->lo = held->hi = 0;
    }
    if (bins != NULL)
        IRGRID_FN(binned_span)(p, b, p0, p1, c0, c1, scratch, held, bins);
    else
        IRGRID_FN(simd_span)(p, starts, steps, b, p0, p1, c0, c1, scratch, rows == 1 && p->rank == 3 ? held : NULL);
}

/* A shared row scratch's copy unit (grid_sample.c's rows_shared): planes [i * piece, (i + 1) * piece) of
   channels [c0, c1) of item b, the first unit also the zero planes around them. (Each plane's copy also
   writes the zero pixel after its last row, the next plane's first: two units may both write that zero.) */
static void IRGRID_FN(copy_planes)(const irgrid_grid_sample* p, irgrid_index b, irgrid_index c0, irgrid_index c1,
                                   irgrid_index i, IRGRID_T* scratch) {
    const irgrid_index z0 = i * p->piece, z1 = z0 + p->piece < p->dims[0] ? z0 + p->piece : p->dims[0];
    if (i == 0)
        IRGRID_PIXELS_FN(p, irgrid_rows_padding)(p->dims, scratch);
    IRGRID_PIXELS_FN(p, irgrid_interleave_rows)((const IRGRID_T*)p->data + (b * p->channels + c0) * p->plane, c1 - c0,
                                                p->plane, p->dims, z0, z1, scratch);
}

/* A shared row scratch's sampling unit: span `span` of the bins' segment over channels [c0, c1), every
   plane in place. */
static void IRGRID_FN(shared_rows_span)(const irgrid_grid_sample* p, irgrid_index b, irgrid_index c0,
                                        irgrid_index c1, irgrid_index span, const irgrid_bins* bins) {
    irgrid_held all = {0, 0, 0};
    const irgrid_index p0 = bins->first + span * p->span;
    const irgrid_index p1 = p0 + p->span < bins->last ? p0 + p->span : bins->last;
    all.hi = p->dims[0];
    if (p0 < p1)
        IRGRID_FN(binned_span)(p, b, p0, p1, c0, c1, (IRGRID_T*)bins->rows, &all, bins);
}

/* IRGRID_GS_SHARED's copy unit: pixels [start, start + piece) of channels [c0, c1) of item b into the
   shared scratch (pixels of p->pixel floats for 2-D nearest by points), and, in the last piece, the zero
   pixel after them. */
static void IRGRID_FN(copy_piece)(const irgrid_grid_sample* p, irgrid_index b, irgrid_index c0, irgrid_index c1,
                                  irgrid_index start, IRGRID_T* scratch) {
    const irgrid_index plane = p->plane, n = p->piece < plane - start ? p->piece : plane - start;
    const IRGRID_T* x = (const IRGRID_T*)p->data + (b * p->channels + c0) * plane + start;
#if IRGRID_WIDE_PIXELS
    if (p->pixel) {
        irgrid_interleave_narrow_f32(x, c1 - c0, plane, n, p->pixel, scratch + start * p->pixel);
        if (start + n == plane)
            memset(scratch + plane * p->pixel, 0, (size_t)p->pixel * sizeof(float));
        return;
    }
#endif
    if (start + n == plane)
        IRGRID_PIXELS_FN(p, irgrid_interleave)(x, c1 - c0, plane, n, scratch + start * p->lanes);
    else
        IRGRID_PIXELS_FN(p, irgrid_interleave_pixels)(x, c1 - c0, plane, n, scratch + start * p->lanes);
}

static void IRGRID_FN(run)(const irgrid_grid_sample* p, int phase, void* shared, void* worker, irgrid_index begin,
                           irgrid_index end, const IRGRID_T* starts, const IRGRID_T* steps) {
    irgrid_index u, b, start, round, first, last, c0, c1;
    irgrid_held* held = (irgrid_held*)worker;
    IRGRID_T* scratch = worker ? (IRGRID_T*)((char*)worker + IRGRID_WORKER_HEADER) : NULL;
    irgrid_bins bins;
    switch (p->path) {
    case IRGRID_GS_BLOCKS:
        for (u = begin; u < end; u++) {
            b = u / p->chunks_per_item;
            start = (u - b * p->chunks_per_item) * p->chunk_points;
            IRGRID_FN(sample_block)(p, starts, steps, b, start,
                                    start + p->chunk_points < p->points ? start + p->chunk_points : p->points);
        }
        return;
    case IRGRID_GS_GATHER:
        for (u = begin; u < end; u++)
            IRGRID_FN(simd_chunk)(p, starts, steps, u);
        return;
    case IRGRID_GS_INTERLEAVE:
        for (u = begin; u < end; u++)
            IRGRID_FN(interleave_unit)(p, starts, steps, u, 0, p->points, scratch, held, NULL);
        return;
    case IRGRID_GS_SHARED:  /* per round (item b, channel group) the copy phase, then the spans of points */
        round = phase / 2;
        b = round / p->groups;
        c0 = round % p->groups * p->lanes;
        c1 = c0 + p->lanes < p->channels ? c0 + p->lanes : p->channels;
        for (u = begin; u < end; u++) {
            start = u * (phase % 2 == 0 ? p->piece : p->span);
            if (phase % 2 == 0)
                IRGRID_FN(copy_piece)(p, b, c0, c1, start, (IRGRID_T*)shared);
            else
                IRGRID_FN(simd_span)(p, starts, steps, b, start,
                                     start + p->span < p->points ? start + p->span : p->points, c0, c1,
                                     (IRGRID_T*)shared, NULL);
        }
        return;
    default:  /* IRGRID_GS_BINNED: per round (item b, segment k(, group: rows_shared)) the sort phase (and the
                 group's copy), then the units */
        round = p->piece ? phase / 2 / p->groups : phase / 2;
        c0 = p->piece ? phase / 2 % p->groups * p->lanes : 0;
        c1 = c0 + p->lanes < p->channels ? c0 + p->lanes : p->channels;
        b = round / p->segments;
        first = round % p->segments * p->segment;
        last = first + p->segment < p->points ? first + p->segment : p->points;
        bins_layout(p, shared, worker, first, last, &bins);
        for (u = begin; u < end; u++)
            if (phase % 2 == 1 && p->piece)
                IRGRID_FN(shared_rows_span)(p, b, c0, c1, u, &bins);
            else if (phase % 2 == 1)
                IRGRID_FN(interleave_unit)(p, NULL, NULL, b * p->units_per_round + u, first, last, scratch, held,
                                           &bins);
            else if (u >= bins.chunks)
                IRGRID_FN(copy_planes)(p, b, c0, c1, u - bins.chunks, (IRGRID_T*)bins.rows);
            else if (c0 == 0)  /* sorted once for every group */
                IRGRID_FN(sort_chunk)(p, (const IRGRID_T*)p->coords + b * p->points * p->rank, &bins, u);
        return;
    }
}

#undef IRGRID_PIXELS_FN

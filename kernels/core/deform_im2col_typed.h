/* The im2col's arithmetic for one element type, included by deform_im2col.c once per type with
   IRGRID_T (float or double), IRGRID_F32 (1 for float) and IRGRID_TS(name) (name_f32 / name_f64) set:
   one source for both types, as the Cython kernel's fused type gave. Not a public header. */

/* floor of a coordinate already clamped to +-2**52 (exact there; no libm call). */
static inline irgrid_index IRGRID_TS(floor_index)(IRGRID_T x) {
    irgrid_index i = (irgrid_index)x;
    return x < (IRGRID_T)i ? i - 1 : i;
}

static inline IRGRID_T IRGRID_TS(clamp)(IRGRID_T x) {
#if IRGRID_F32
    return irgrid_clamp_coordinate_f32(x);
#else
    return irgrid_clamp_coordinate_f64(x);
#endif
}

/* The (at most 2) taps of one dim at pixel coordinate x: flat offsets and linear weights. */
static inline int IRGRID_TS(linear_taps)(IRGRID_T x, irgrid_index length, irgrid_index stride, int boundary,
                                         irgrid_index* offsets, IRGRID_T* weights, irgrid_index* count) {
    irgrid_index lo, hi, n = 0;
    IRGRID_T frac;
    if (x != x)
        return IRGRID_POINT_NAN;
    if (boundary == IRGRID_DEFORM_EDGE && !(x >= 0 && x < length))
        return IRGRID_POINT_ZERO;
    x = IRGRID_TS(clamp)(x);
    lo = IRGRID_TS(floor_index)(x);
    frac = x - (IRGRID_T)lo;
    hi = lo + 1;
    if (boundary == IRGRID_DEFORM_EDGE && hi > length - 1)
        hi = length - 1;
    if (irgrid_deform_inside(lo, length)) {
        offsets[0] = lo * stride;
        weights[0] = 1 - frac;
        n = 1;
    }
    if (frac != 0 && irgrid_deform_inside(hi, length)) {
        offsets[n] = hi * stride;
        weights[n] = frac;
        n += 1;
    }
    *count = n;
    return n > 0 ? IRGRID_POINT_OK : IRGRID_POINT_ZERO;
}

static inline void IRGRID_TS(apply_taps)(const irgrid_deform_paths* paths, const IRGRID_T* x, const irgrid_index* off,
                                         const IRGRID_T* w, irgrid_index n, IRGRID_T* dst, irgrid_index length,
                                         int stream) {
#if IRGRID_F32
    if (stream && paths->stream_f32 && paths->stream_f32(x, off, w, n, dst, length))
        return;
    paths->apply_f32(x, off, w, n, dst, length);
#else
    (void)stream;
    paths->apply_f64(x, off, w, n, dst, length);
#endif
}

/* A point's taps from its per-dim taps (dim d's at dim_off/dim_w + 2 * d, dim_n[d] of them), weights
   (scale * w_0) * w_1 * ...: expanded forward, dim d doubling the list with its second tap (so the last
   dim varies slowest). Returns the tap count, a power of two. */
static inline irgrid_index IRGRID_TS(point_taps)(const irgrid_index* dim_off, const IRGRID_T* dim_w,
                                                 const irgrid_index* dim_n, irgrid_index rank, IRGRID_T scale,
                                                 irgrid_index* off, IRGRID_T* wt) {
    irgrid_index d, e, count = 1, lo_off, hi_off;
    IRGRID_T lo_w, hi_w, w0_lo, w0_hi;
    irgrid_index o2[4];
    IRGRID_T w2[4];
    /* The common 2-D and 3-D cases unrolled (same sums and products as the loop below); with
       -fno-tree-slp-vectorize, 3-D DeformConv 0.9x the time of the loop. */
    if (rank == 2 && dim_n[0] == 2 && dim_n[1] == 2) {
        w0_lo = scale * dim_w[0];
        w0_hi = scale * dim_w[1];
        off[0] = dim_off[0] + dim_off[2]; wt[0] = w0_lo * dim_w[2];
        off[1] = dim_off[1] + dim_off[2]; wt[1] = w0_hi * dim_w[2];
        off[2] = dim_off[0] + dim_off[3]; wt[2] = w0_lo * dim_w[3];
        off[3] = dim_off[1] + dim_off[3]; wt[3] = w0_hi * dim_w[3];
        return 4;
    }
    if (rank == 3 && dim_n[0] == 2 && dim_n[1] == 2 && dim_n[2] == 2) {
        w0_lo = scale * dim_w[0];
        w0_hi = scale * dim_w[1];
        o2[0] = dim_off[0] + dim_off[2]; w2[0] = w0_lo * dim_w[2];
        o2[1] = dim_off[1] + dim_off[2]; w2[1] = w0_hi * dim_w[2];
        o2[2] = dim_off[0] + dim_off[3]; w2[2] = w0_lo * dim_w[3];
        o2[3] = dim_off[1] + dim_off[3]; w2[3] = w0_hi * dim_w[3];
        for (e = 0; e < 4; e++) {
            off[e] = o2[e] + dim_off[4]; wt[e] = w2[e] * dim_w[4];
            off[4 + e] = o2[e] + dim_off[5]; wt[4 + e] = w2[e] * dim_w[5];
        }
        return 8;
    }
    off[0] = 0;
    wt[0] = scale;
    for (d = 0; d < rank; d++) {
        lo_off = dim_off[2 * d];
        lo_w = dim_w[2 * d];
        if (dim_n[d] == 2) {
            hi_off = dim_off[2 * d + 1];
            hi_w = dim_w[2 * d + 1];
            for (e = 0; e < count; e++) {
                off[count + e] = off[e] + hi_off;
                wt[count + e] = wt[e] * hi_w;
                off[e] = off[e] + lo_off;
                wt[e] = wt[e] * lo_w;
            }
            count = 2 * count;
        } else {
            for (e = 0; e < count; e++) {
                off[e] = off[e] + lo_off;
                wt[e] = wt[e] * lo_w;
            }
        }
    }
    return count;
}

/* Column rows of output points [start, stop) (absolute, at most IRGRID_DEFORM_CHUNK_POINTS) for every group;
   called with a constant rank for 2-D and 3-D, so the per-dim loops of the common ranks unroll. Kernel taps
   outer, points inner: a tap's offset and mask rows are read contiguously (walking every tap per point
   touched G * K * (r + 1) rows `points` apart, often a multiple of 4 KiB, so all in one L1 set). */
static inline void IRGRID_TS(sample_rank)(const irgrid_deform_im2col* p, const irgrid_deform_paths* paths,
                                          const irgrid_index rank, irgrid_index start, irgrid_index stop) {
    irgrid_index base[IRGRID_DEFORM_CHUNK_POINTS * IRGRID_DEFORM_MAX_RANK];  /* o_d * stride_d - pad_begin_d */
    irgrid_index kidx[IRGRID_DEFORM_MAX_RANK];  /* kernel tap index per dim (an odometer over k) */
    irgrid_index koff[IRGRID_DEFORM_MAX_RANK];  /* kidx_d * dilation_d */
    irgrid_index tap_off[IRGRID_MAX_TAPS];
    IRGRID_T tap_w[IRGRID_MAX_TAPS];
    irgrid_index dim_off[2 * IRGRID_DEFORM_MAX_RANK];
    IRGRID_T dim_w[2 * IRGRID_DEFORM_MAX_RANK];
    irgrid_index dim_n[IRGRID_DEFORM_MAX_RANK];
    const IRGRID_T* x = (const IRGRID_T*)p->x;
    const IRGRID_T* offsets = (const IRGRID_T*)p->offsets;
    const IRGRID_T* mask = (const IRGRID_T*)p->mask;
    IRGRID_T* col = (IRGRID_T*)p->col;
    /* The dims and strides every tap reads, copied beside the tap arrays: read from the caller's struct they
       left 3-D f32 im2col 6-8% slower than the Cython kernel (CPU time; not instruction count, which fell). */
    irgrid_index in_dims[IRGRID_DEFORM_MAX_RANK], in_strides[IRGRID_DEFORM_MAX_RANK];
    const irgrid_index* out_dims = p->out_dims;
    const irgrid_index* kernel = p->kernel;
    const irgrid_index* strides = p->strides;
    const irgrid_index* dilations = p->dilations;
    const irgrid_index* pads_begin = p->pads_begin;
    const irgrid_index channels = p->channels, points = p->points, kernel_size = p->kernel_size;
    const irgrid_index offset_groups = p->offset_groups, tile_start = p->tile_start;
    const irgrid_index group_channels = channels / p->groups, offset_channels = channels / offset_groups;
    const irgrid_index row_length = kernel_size * group_channels;
    const irgrid_index block = (p->tile_stop - tile_start) * row_length;
    const int has_offsets = p->has_offsets, has_mask = p->has_mask, boundary = p->boundary, stream = p->stream;
    irgrid_index pt, d, k, g, q, rest, count, c, c_first, c_end, gc, gc_first, seg_end, j, tap, ahead;
    IRGRID_T pos;
    int status;
    IRGRID_T* dst;
    uint32_t todo;
#if IRGRID_F32
    float fbase[3 * 8];
    const float *off_first, *scale;
    unsigned left;
    int points8 = 0, dims_exact = 1;
#endif
    for (d = 0; d < rank; d++) {
        in_dims[d] = p->in_dims[d];
        in_strides[d] = p->in_strides[d];
#if IRGRID_F32  /* the 8-point path compares f32 coordinates with the dims: exact up to 2**24 */
        dims_exact = dims_exact && in_dims[d] <= (irgrid_index)1 << 24;
#endif
    }
    for (pt = start; pt < stop; pt++) {
        rest = pt;
        for (d = rank - 1; d >= 0; d--) {
            base[(pt - start) * rank + d] = (rest % out_dims[d]) * strides[d] - pads_begin[d];
            rest = rest / out_dims[d];
        }
    }
    for (g = 0; g < offset_groups; g++) {
        c_first = g * offset_channels;
        c_end = c_first + offset_channels;
        gc_first = c_first / group_channels;
#if IRGRID_F32  /* 2-D and 3-D f32, the offset group within one convolution group (streamed or not) */
        points8 = (rank == 2 || rank == 3) && dims_exact && paths->points8_f32 != 0
                  && c_end <= (gc_first + 1) * group_channels;
#endif
        for (d = 0; d < rank; d++) {
            kidx[d] = 0;
            koff[d] = 0;
        }
        for (k = 0; k < kernel_size; k++) {
            tap = g * kernel_size + k;
            todo = ((uint32_t)1 << (stop - start)) - 1;  /* points left to the scalar path */
            /* The next unit's offsets and mask: G * K * (r + 1) rows `points` apart, more streams than the
               hardware's prefetchers follow (3-D, 81 rows: the offsets' loads took a third of the time). */
            ahead = stop + IRGRID_DEFORM_CHUNK_POINTS - 1 < points ? stop + IRGRID_DEFORM_CHUNK_POINTS - 1 : points - 1;
            for (d = 0; has_offsets && d < rank; d++)
                __builtin_prefetch(offsets + (tap * rank + d) * points + ahead);
            if (has_mask)
                __builtin_prefetch(mask + tap * points + ahead);
#if IRGRID_F32
            q = 0;
            while (points8 && q + 8 <= stop - start) {
                for (d = 0; d < rank; d++)
                    for (j = 0; j < 8; j++)
                        fbase[8 * d + j] = (float)(base[(q + j) * rank + d] + koff[d]);
                off_first = has_offsets ? offsets + tap * rank * points + start + q : 0;
                scale = has_mask ? mask + tap * points + start + q : 0;
                left = paths->points8_f32((int)rank, x + c_first, fbase, off_first, points, scale, in_dims,
                                          in_strides,
                                          col + gc_first * block + (start + q - tile_start) * row_length
                                          + k * group_channels + c_first - gc_first * group_channels,
                                          row_length, offset_channels, stream, boundary == IRGRID_DEFORM_ZEROS);
                todo &= ~((uint32_t)(~left & 0xFFu) << q);
                q += 8;
            }
#endif
            for (pt = start; pt < stop; pt++) {
                if (!((todo >> (pt - start)) & 1u))
                    continue;
                status = IRGRID_POINT_OK;
                for (d = 0; d < rank; d++) {
                    pos = (IRGRID_T)(base[(pt - start) * rank + d] + koff[d]);
                    if (has_offsets)
                        pos = pos + offsets[(tap * rank + d) * points + pt];
                    status = IRGRID_TS(linear_taps)(pos, in_dims[d], in_strides[d], boundary, dim_off + 2 * d,
                                                    dim_w + 2 * d, dim_n + d);
                    if (status == IRGRID_POINT_NAN)
                        break;
                    if (status == IRGRID_POINT_ZERO) {  /* a NaN in a later dim still makes the point NaN */
                        for (q = d + 1; q < rank; q++) {
                            pos = (IRGRID_T)(base[(pt - start) * rank + q] + koff[q]);
                            if (has_offsets)
                                pos = pos + offsets[(tap * rank + q) * points + pt];
                            if (pos != pos)
                                status = IRGRID_POINT_NAN;
                        }
                        break;
                    }
                }
                count = 0;
                if (status == IRGRID_POINT_OK)
                    count = IRGRID_TS(point_taps)(dim_off, dim_w, dim_n, rank,
                                                  has_mask ? mask[tap * points + pt] : (IRGRID_T)1, tap_off, tap_w);
                /* The group's channels, split where a convolution group ends. */
                c = c_first;
                gc = gc_first;
                while (c < c_end) {
                    seg_end = (gc + 1) * group_channels < c_end ? (gc + 1) * group_channels : c_end;
                    dst = col + gc * block + (pt - tile_start) * row_length + k * group_channels + c
                          - gc * group_channels;
                    if (count > 0) {
                        IRGRID_TS(apply_taps)(paths, x + c, tap_off, tap_w, count, dst, seg_end - c, stream);
                    } else {
                        for (j = 0; j < seg_end - c; j++)
                            dst[j] = status == IRGRID_POINT_NAN ? (IRGRID_T)NAN : (IRGRID_T)0;
                    }
                    c = seg_end;
                    gc = gc + 1;
                }
            }
            for (d = rank - 1; d >= 0; d--) {  /* next kernel tap */
                kidx[d] += 1;
                koff[d] += dilations[d];
                if (kidx[d] < kernel[d])
                    break;
                kidx[d] = 0;
                koff[d] = 0;
            }
        }
    }
}

/* sample_rank with the rank a constant for 2-D and 3-D. */
static void IRGRID_TS(sample_points)(const irgrid_deform_im2col* p, const irgrid_deform_paths* paths,
                                     irgrid_index start, irgrid_index stop) {
    if (p->rank == 2)
        IRGRID_TS(sample_rank)(p, paths, 2, start, stop);
    else if (p->rank == 3)
        IRGRID_TS(sample_rank)(p, paths, 3, start, stop);
    else
        IRGRID_TS(sample_rank)(p, paths, p->rank, start, stop);
    if (p->stream)
        irgrid_store_fence();
}

/* dst[c, r] = src[r, c] (+ bias[c]) for rows [r0, r1) and columns [c0, c1): the AVX2 kernel for f32 where
   selected, else 8 x 8 tiles in plain C (8 source rows fit an 8-way L1 set even when the row stride is a
   power of two). */
static void IRGRID_TS(transpose_block)(const irgrid_deform_paths* paths, const IRGRID_T* src, irgrid_index src_stride,
                                       IRGRID_T* dst, irgrid_index dst_stride, irgrid_index r0, irgrid_index r1,
                                       irgrid_index c0, irgrid_index c1, const IRGRID_T* bias) {
    irgrid_index rb, re, cb, ce, r, c;
#if IRGRID_F32
    if (paths->transpose_f32) {
        paths->transpose_f32(src, src_stride, dst, dst_stride, r0, r1, c0, c1, bias);
        return;
    }
#else
    (void)paths;
#endif
    for (rb = r0; rb < r1; rb = re) {
        re = rb + 8 < r1 ? rb + 8 : r1;
        for (cb = c0; cb < c1; cb = ce) {
            ce = cb + 8 < c1 ? cb + 8 : c1;
            for (c = cb; c < ce; c++) {
                if (bias) {
                    for (r = rb; r < re; r++)
                        dst[c * dst_stride + r] = src[r * src_stride + c] + bias[c];
                } else {
                    for (r = rb; r < re; r++)
                        dst[c * dst_stride + r] = src[r * src_stride + c];
                }
            }
        }
    }
}

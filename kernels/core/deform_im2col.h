/* DeformConv's im2col: the column matrix a GEMM turns into a (deformable) convolution, for any number r
   of spatial dims (README.md, "The shape of a kernel"; docs/semantics.md, "DeformConv").

   The input comes channels-last, x (*in_dims, C), so every tap of a sampling point is a contiguous run of
   channels. The columns are written point-major, one block per convolution group gc:

       col[gc, p - tile_start, k * Cg + c'] = mask[g * K + k, p] * sum over taps t of w_t * x[tap_t, gc * Cg + c']
       pos_d = o_d * stride_d - pad_begin_d + k_d * dilation_d + offset[(g * K + k) * r + d, p]

   with Cg = C / groups and g the offset group of channel gc * Cg + c'. offsets are (G * K * r, points),
   mask (G * K, points), col (groups, tile_stop - tile_start, K * Cg), all flat and contiguous.

   Boundary rules:
   - IRGRID_DEFORM_ZEROS (ONNX DeformConv, OpenVINO bilinear_interpolation_pad=true): taps floor(x) and
     floor(x) + 1, each dropped when outside [0, L);
   - IRGRID_DEFORM_EDGE (OpenVINO bilinear_interpolation_pad=false, DeformableConvolution-1): a point
     outside [0, L) in any dim gives 0; inside, taps floor(x) and min(ceil(x), L - 1).
   A tap whose linear weight is exactly 0 (an integer coordinate) is not read. A NaN coordinate gives a NaN
   column value; +-Inf and huge coordinates are outside (0); a point with no tap inside gives 0 whatever
   its mask. A point's 2**n taps are summed as a balanced tree of pairs (per block of 8), rounded the same
   on the AVX2 and baseline builds (compile with -ffp-contract=off: no fused multiply-add).

   The work unit is IRGRID_DEFORM_CHUNK_POINTS output points, each written whole (all groups and kernel
   taps), so the columns never depend on how units are spread over threads. Why each path is as it is,
   measured: benchmarks/README.md, "How DeformConv got here". */
#ifndef IRGRID_DEFORM_IM2COL_H
#define IRGRID_DEFORM_IM2COL_H

#include "guards.h"
#include "schedule.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2**r taps per point must fit IRGRID_MAX_TAPS: r <= 12. */
#define IRGRID_DEFORM_MAX_RANK 12
/* Output points per work unit of the im2col. */
#define IRGRID_DEFORM_CHUNK_POINTS 16
/* The column transpose's work unit: a block of this many source rows by as many columns (16 KiB of f32). */
#define IRGRID_DEFORM_TRANSPOSE_BLOCK 64

enum { IRGRID_DEFORM_ZEROS = 0, IRGRID_DEFORM_EDGE = 1 };
/* Vector paths: the best the CPU has (AVX2+FMA where present, probed once), or the baseline C build. */
enum { IRGRID_DEFORM_SIMD_AUTO = 0, IRGRID_DEFORM_SIMD_BASELINE = 1 };

typedef struct {
    /* The problem, set by the caller. */
    int f64;                                            /* 0: the data pointers are float, 1: double */
    int rank;                                           /* spatial dims r, 1..IRGRID_DEFORM_MAX_RANK */
    irgrid_index channels;                              /* C, a multiple of groups and of offset_groups */
    irgrid_index in_dims[IRGRID_DEFORM_MAX_RANK];
    irgrid_index out_dims[IRGRID_DEFORM_MAX_RANK];
    irgrid_index kernel[IRGRID_DEFORM_MAX_RANK];
    irgrid_index strides[IRGRID_DEFORM_MAX_RANK];
    irgrid_index dilations[IRGRID_DEFORM_MAX_RANK];
    irgrid_index pads_begin[IRGRID_DEFORM_MAX_RANK];
    irgrid_index groups, offset_groups;
    int has_offsets, has_mask;                          /* 0: offsets / mask are not read (may be NULL) */
    int boundary;                                       /* IRGRID_DEFORM_ZEROS or IRGRID_DEFORM_EDGE */
    irgrid_index tile_start, tile_stop;                 /* the output points [start, stop) col holds */
    int stream;                                         /* write col with non-temporal stores where it can */
    int simd;                                           /* IRGRID_DEFORM_SIMD_AUTO or _BASELINE */
    const void* x;                                      /* (*in_dims, C) */
    const void* offsets;                                /* (offset_groups * K * r, points) */
    const void* mask;                                   /* (offset_groups * K, points) */
    void* col;                                          /* (groups, tile_stop - tile_start, K * C / groups) */
    /* Derived by irgrid_deform_im2col_plan. */
    irgrid_index in_strides[IRGRID_DEFORM_MAX_RANK];    /* element strides of the spatial dims in x */
    irgrid_index points, kernel_size;                   /* prod(out_dims), K = prod(kernel) */
    irgrid_schedule schedule;                           /* one phase of ceil(tile points / CHUNK_POINTS) units */
} irgrid_deform_im2col;

int irgrid_deform_im2col_plan(irgrid_deform_im2col* p);
void irgrid_deform_im2col_run(const irgrid_deform_im2col* p, int phase, void* shared, void* worker_scratch,
                              irgrid_index begin, irgrid_index end);

/* dst[c, r] = src[r, c] (+ bias[c]) for a (rows, cols) source: the data into channels-last before the
   im2col, the GEMM's (points, oC) block into the output after it. Units are
   IRGRID_DEFORM_TRANSPOSE_BLOCK square blocks of the source, row-major (so a plane of few rows still
   splits); a range of units is one or more rectangles. Both strides in elements, inner strides 1. */
typedef struct {
    int f64;                                            /* 0: float, 1: double */
    int simd;                                           /* IRGRID_DEFORM_SIMD_AUTO or _BASELINE */
    irgrid_index rows, cols;                            /* of src */
    irgrid_index src_stride, dst_stride;                /* between rows of src, of dst */
    const void* src;
    void* dst;
    const void* bias;                                   /* cols values, or NULL */
    /* Derived by irgrid_deform_transpose_plan. */
    irgrid_index col_blocks;
    irgrid_schedule schedule;                           /* one phase of row blocks * col_blocks units */
} irgrid_deform_transpose;

int irgrid_deform_transpose_plan(irgrid_deform_transpose* p);
void irgrid_deform_transpose_run(const irgrid_deform_transpose* p, int phase, void* shared, void* worker_scratch,
                                 irgrid_index begin, irgrid_index end);

/* The vector path a simd policy gives on this CPU: "avx2+fma" or "baseline". */
const char* irgrid_deform_simd_name(int simd);

#ifdef __cplusplus
}
#endif

#endif

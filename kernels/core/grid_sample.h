/* GridSample for any number r of spatial dims (nearest, N-linear, N-cubic; three paddings), and the
   fused AffineGrid -> GridSample, as a problem struct, a plan and a chunk function (README.md).

   Data x (batch, channels, *dims) is sampled at a grid (batch, *out_dims, r) of normalised coordinates
   (innermost dim first), or, `affine`, at the lattice of a fused AffineGrid over out_dims given theta
   (batch, r, r + 1), or, `displaced`, at the output points moved by a displacement field (batch, m,
   *out_dims) (irgrid_displacement); the output is (batch, channels, *out_dims). All are contiguous.

   The plan chooses one of six paths (grid_sample.c; why each, and what each measured:
   benchmarks/README.md, "GridSample's paths: measurements"): the scalar blocks (any rank and mode),
   the AVX2 gather path (2-D, 3-D nearest/linear), its 2-D bilinear pair reads run across the items of
   a batch of small one-channel items (RAFT's lookups: IRGRID_GS_ITEMS, units of SIMD_BLOCK points of
   the whole batch), the interleaved path (channels copied into a per-worker scratch as one vector per
   pixel; from a few channels on), for planes past its 8 MiB the same with one scratch shared by the
   workers (IRGRID_GS_SHARED: per item and group a copy phase, then the sampling phase:
   schedule.rounds), and, for 3-D cubic on a grid, the interleaved path with points binned by tile (a
   sort phase, then the units, per item and segment of points: schedule.rounds; on a scattered grid
   per group too, the workers sharing one row scratch the sort phase copies in). A point's result
   depends only on its coordinates and the path, never on the blocking or the worker count. */
#ifndef IRGRID_GRID_SAMPLE_H
#define IRGRID_GRID_SAMPLE_H

#include "affine.h"
#include "dtype.h"
#include "guards.h"
#include "schedule.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Path policies a caller may pin (interleave, binning and gathers). */
enum { IRGRID_POLICY_NEVER = 0, IRGRID_POLICY_AUTO = 1, IRGRID_POLICY_ALWAYS = 2 };

/* The paths irgrid_grid_sample_plan chooses (its `path`). */
enum {
    IRGRID_GS_BLOCKS = 0,
    IRGRID_GS_GATHER = 1,
    IRGRID_GS_INTERLEAVE = 2,
    IRGRID_GS_BINNED = 3,
    IRGRID_GS_ITEMS = 4,
    IRGRID_GS_SHARED = 5
};

/* A warp by a displacement field (`displaced`): the output point with multi-index i (innermost first)
   samples at normalised coordinates g_k = ((T)i_k + gain_k * f_k) * scale_k + shift_k, f_k the field's
   channel component[k] at that point, in the data's float type T (gain, scale and shift rounded to T).
   It is how models warp by a flow in pixels: g = 2 (i + flow) / (size - 1) - 1 has gain 1, scale
   2 / (size - 1) and shift -1 (irgrid's runtime fits the four from the model's own graph). */
typedef struct irgrid_displacement {
    irgrid_index channels;                    /* m, the field's channels */
    irgrid_index component[IRGRID_AFFINE_MAX_RANK];
    double gain[IRGRID_AFFINE_MAX_RANK], scale[IRGRID_AFFINE_MAX_RANK], shift[IRGRID_AFFINE_MAX_RANK];
} irgrid_displacement;

typedef struct irgrid_grid_sample {
    /* The problem: the caller fills these. */
    int dtype;                                /* IRGRID_F32 or IRGRID_F64 */
    irgrid_index batch, channels, rank;       /* data (batch, channels, *dims), 1 <= rank <= IRGRID_MAX_RANK */
    irgrid_index dims[IRGRID_MAX_RANK];       /* data's spatial dims, outermost first */
    irgrid_index out_dims[IRGRID_MAX_RANK];   /* output's spatial dims, outermost first */
    int mode, padding, align_corners;         /* IRGRID_MODE_*, IRGRID_PAD_*, 0 or 1 */
    int affine;                               /* 1: coords is theta (batch, rank, rank + 1), rank <= 3 */
    int grid_align_corners;                   /* the fused AffineGrid's align_corners */
    int displaced;                            /* 1: coords is a displacement field, rank <= 3 */
    irgrid_displacement displacement;
    const void* data;
    const void* coords;                       /* the grid, (affine) theta or (displaced) the field */
    void* output;
    /* Path policies (irgrid's runtime sets them from use_simd / use_interleave / use_binning). */
    int simd;                                 /* 1: vector paths where the CPU has AVX2 and FMA */
    int interleave;                           /* IRGRID_POLICY_*: AUTO from a few channels on */
    int binning;                              /* IRGRID_POLICY_*: AUTO for chunks judged scattered */
    int gathers;                              /* IRGRID_POLICY_*: the gather path reads with AVX2 gathers
                                                 (ALWAYS), scalar loads (NEVER) or, AUTO, whichever this
                                                 CPU runs faster (irgrid_grid_sample_gathers_pay); the
                                                 same bits either way */
    int avx512;                               /* IRGRID_POLICY_*: f32 512-bit code where the CPU has
                                                 AVX-512 F/VL/BW/DQ: the gather path's taps 16 lanes at a
                                                 time and the interleaved path's 16-channel pixels (ALWAYS;
                                                 AUTO: grid_sample.c's wide_taps and wide_pixels) or
                                                 neither (NEVER); the same bits either way */
    int threads;                              /* workers the driver will run: units are split so each
                                                 has some; no bit depends on it */

    /* Derived by irgrid_grid_sample_plan: read-only for the caller, except `schedule`. */
    int path;                                 /* IRGRID_GS_* */
    int loads;                                /* the gather path reads with scalar loads */
    int wide;                                 /* the gather path's f32 taps are computed 16 lanes at a time */
    irgrid_index strides[IRGRID_MAX_RANK], plane, points, max_taps;
    irgrid_index extents[IRGRID_AFFINE_MAX_RANK];
    float starts32[IRGRID_AFFINE_MAX_RANK], steps32[IRGRID_AFFINE_MAX_RANK];
    double starts64[IRGRID_AFFINE_MAX_RANK], steps64[IRGRID_AFFINE_MAX_RANK];
    irgrid_index chunk_points, chunks_per_item;        /* blocks */
    irgrid_index group, groups, span, spans;           /* gather and interleaved: channels per group, points per span */
    irgrid_index lanes, units_per_round, segment, segments, scratch_items;  /* interleaved */
    int rows;                                 /* interleaved cubic: a row scratch and its separable run
                                                 (2: the group's channels as planes of one-channel
                                                 pixels, simd_cubic_points.h) */
    int per_call;                             /* 1: the schedule depends on the grid's values (grid_sample.c's
                                                 shared_pixels): a driver that keeps a plan between calls
                                                 plans again for each call's grid */
    int streams;                              /* the 8-channel interleaved run or 2-D cubic's rows stream a
                                                 large output on this scattered grid (grid_sample.c's
                                                 stream_output) */
    int pixel;                                /* 2-D nearest by points (simd_nearest_points.h): floats a
                                                 pixel, 1 (X's own planes: the gather path) or 2 or 4 (the
                                                 interleaved path's scratch); 0: not this run */
    int stacked;                              /* 2-D bilinear of one channel over stacked rows (pixel 2, zeros
                                                 or border padding: a pixel holds a row's value and the one
                                                 below it, so that a point's four taps are one 16-byte load,
                                                 simd_pairs_pixels.h) */
    irgrid_index piece;                       /* shared: pixels a copy unit copies; binned: planes (a row
                                                 scratch for all the workers), 0: a scratch a worker */
    irgrid_index bin_chunk, n_tiles, judge_rows;       /* binned */
    irgrid_index tiles[3];
    double scale[3], offset[3];
    int key_order[3];                         /* binned: the dims of a tile's key, most significant first */
    irgrid_index slot_bytes, coords_bytes, counts_bytes, out_bytes;
    irgrid_schedule schedule;
} irgrid_grid_sample;

/* 1 when this CPU runs the vector paths (AVX2 and FMA; a cached CPUID probe): where it is 0, `simd`
   changes nothing. */
int irgrid_grid_sample_simd_available(void);

/* 1 unless one scalar load per lane runs the gather path at least 10% faster than this CPU's masked AVX2
   gathers: measured once per process, on a small bilinear problem in L1, the fastest of a few
   alternating runs of each. Gathers are fast on some cores and many times slower on others (Intel cores
   with the Gather Data Sampling microcode mitigation; AMD Zen before Zen 5), so no constant chooses well
   everywhere; where the two are close (Zen 5) gathers, which 2-D nearest by points reads faster. */
int irgrid_grid_sample_gathers_pay(void);

/* 1 when this CPU has AVX-512 F, VL, BW and DQ, for the 16-lane f32 taps and pixels (the `avx512` policy). */
int irgrid_grid_sample_wide_available(void);

/* Checks the problem (0 or an IRGRID_E_* code), derives the fields above and the schedule. Cheap
   (no allocation, O(rank)): a driver may plan per call. */
int irgrid_grid_sample_plan(irgrid_grid_sample* p);

/* A driver's whole call of a problem, timed: plans p (irgrid_grid_sample_plan, its policies as they are),
   runs every phase of its schedule on the driver's threads and returns the seconds that took, or a
   negative number if it failed. */
typedef double (*irgrid_grid_sample_timed_run)(irgrid_grid_sample* p, void* context);

/* Chooses p's path policies (interleave, avx512, gathers, binning) by timing them on this call
   (grid_sample_tune.c): the plan of p's own policies, and each other plan that one policy set to NEVER or
   ALWAYS gives (not the scalar blocks, nor in cubic a plan that sums otherwise: a row run or not, another
   row layout), kept only where its output has p's bits; the fastest, if it beats p's own plan by a
   margin, becomes p's (p planned, its policies set). Writes the call's result into p->output; `spare` is
   a buffer of the output's size and 64 bytes more for the other candidates' results (each written as
   far past a 64-byte line as p->output is). Returns the candidate chosen (0: p's own plan), or -1 where
   p's own plan failed (p's output is then not written: run it as usual for its error). */
int irgrid_grid_sample_tune(irgrid_grid_sample* p, void* spare, irgrid_grid_sample_timed_run run, void* context);

/* Units [begin, end) of phase `phase` (round * schedule.phases + phase of the round), serially;
   `shared`: schedule.shared_bytes, 64-byte aligned; `worker`: this worker's schedule.worker_bytes,
   64-byte aligned, irgrid_worker_reset before its first unit of a call. */
void irgrid_grid_sample_run(const irgrid_grid_sample* p, int phase, void* shared, void* worker, irgrid_index begin,
                            irgrid_index end);

#ifdef __cplusplus
}
#endif
#endif

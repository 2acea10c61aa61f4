/* GridSample's plan and chunk function (grid_sample.h). The scalar arithmetic is interpolation.h's, the
   vector paths' simd.h's; this file chooses the path, lays out the scratch and runs the units. Why each
   constant and path is what it is, and what was measured: benchmarks/README.md, "GridSample's paths:
   measurements". */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "grid_sample.h"
#include "binning.h"
#include "interpolation.h"
#include "simd.h"

enum {
    PIXEL_BYTES = 32,   /* a pixel of the interleaved scratches: one AVX2 vector of a group's channels */
    COMPUTED_SPAN = 256, /* computed coordinates (affine, displaced) made at a time by the scalar path */
    SIMD_BLOCK = 1024,  /* points per call of a vector kernel (its fallback list and affine coordinates) */
    SIMD_MAX_TAPS = 64, /* taps of the vector paths' widest point (3-D cubic, interleaved path only) */
};
/* Channel planes one unit of the gather path reads (all its points, a few channels at a time): a few
   MiB, so that random grids' gathers hit L2/L3 and the TLB, while each point's taps are computed once
   for that many channels. */
#define SIMD_GROUP_BYTES ((irgrid_index)2 << 20)
/* Interleaved path: its scratch per worker at most this (a group's planes, interleaved; larger ones
   where scratch_fits allows), and chosen by default from so many channels on (interleave_from). */
#define INTERLEAVE_MAX_BYTES ((irgrid_index)8 << 20)
#define INTERLEAVE_MIN_CHANNELS 4
#define INTERLEAVE_MIN_CHANNELS_F32 5
#define INTERLEAVE_MIN_CHANNELS_3D_NEAREST 16
/* 3-D cubic on a scattered grid (binning.h): points binned at a time (a chunk); more points per span
   sort them closer, until the output buffer leaves L2 before unbinning. */
#define BIN_CAPACITY ((irgrid_index)1 << 15)
/* ... and an item's points sorted before they are sampled (a segment, a round of the schedule): at
   most this many at a time, so that the shared bins stay within 16 MiB (f32) however large the grid. */
#define BIN_SEGMENT ((irgrid_index)1 << 20)

/* The state a worker keeps between units, in its scratch's header (zeroed by irgrid_worker_reset): the
   channel group its scratch holds (key + 1; 0: none yet) and a row scratch's planes [lo, hi) copied in
   so far (hold_planes). */
typedef struct {
    irgrid_index key, lo, hi;
} irgrid_held;

/* 3-D cubic's binning of a segment of one batch item's points, [first, last): in chunks of `chunk`
   points, each judged and, where scattered, sorted by tile once (sort_chunk) for every channel group;
   each unit then samples its chunks in tile order (binned_span). */
typedef struct {
    irgrid_index first, last, chunk, chunks;
    int* slot;     /* shared, per point of the segment: its position in its chunk's tile order */
    void* coords;  /* shared: the segment's coordinates, each chunk's in tile order */
    char* sorted;  /* shared, per chunk: whether it was judged scattered, so sorted */
    void* rows;    /* shared: the row scratch of a round's group (rows_shared), else NULL */
    int* counts;   /* the worker's: n_tiles ints for irgrid_sort_by_tile */
    void* out;     /* the worker's: a chunk's outputs in tile order, a pixel each */
} irgrid_bins;

static irgrid_index round64(irgrid_index n) { return (n + 63) / 64 * 64; }

/* Pixels of cubic's row scratch: in 3-D (irgrid_interleave_rows) D planes of H rows of W pixels, each
   row after 3 zero pixels, each plane after 3 zero rows, the planes after 3 zero planes and before 4;
   in 2-D (irgrid_interleave_plane2d) one such plane, its rows before 4 zero rows: the layout of
   one-channel pixels with zeros padding (simd_cubic_layout.h), a pixel a float there. */
static irgrid_index row_pixels(irgrid_index rank, const irgrid_index* dims) {
    return irgrid_cubic_layout_of(rank, dims, 0).size;
}

static irgrid_index ceil_div(irgrid_index a, irgrid_index b) { return (a + b - 1) / b; }
static irgrid_index min_index(irgrid_index a, irgrid_index b) { return a < b ? a : b; }

/* Past INTERLEAVE_MAX_BYTES a group's interleaved scratch (a plane of 256K pixels or more: 512 x 512
   and up), where the gather path measured several times slower (benchmarks/README.md, "Large planes"),
   is taken within INTERLEAVE_LARGE_BYTES (byte offsets in int32) and with the scratches of a call
   together within INTERLEAVE_X_SHARE times X's own bytes: */
#define INTERLEAVE_X_SHARE 4
#define INTERLEAVE_LARGE_BYTES ((irgrid_index)1 << 30)

static irgrid_index x_share(const irgrid_grid_sample* p) {
    return INTERLEAVE_X_SHARE * p->batch * p->channels * p->plane * (p->dtype == IRGRID_F32 ? 4 : 8);
}

/* Whether the workers of a call share one scratch (not a row scratch): past INTERLEAVE_MAX_BYTES, from
   more channels than half a pixel's. Per item and channel group the workers copy the plane in pieces,
   then sample spans of points: one large scratch at a time instead of one a worker (X 1x16x512x512,
   two groups on two workers, bilinear: 0.40-0.64x the time of a scratch per worker; where each worker
   had copied the same group, 1x8x512x512, 0.5-0.6x the gather path's). With fewer channels the copy
   writes twice X's bytes or more (4 channels, bilinear: 1.1-1.3x the gather path's time). Below
   INTERLEAVE_MAX_BYTES a shared scratch lost on random grids: each worker's copied half stayed dirty in
   its own core's L2 (benchmarks/README.md, "16-channel pixels"; "Large planes" for these). */
static int shared_large(const irgrid_grid_sample* p, irgrid_index bytes) {
    return !p->rows && bytes > INTERLEAVE_MAX_BYTES
           && p->channels > PIXEL_BYTES / (p->dtype == IRGRID_F32 ? 4 : 8) / 2;
}

/* Whether the workers of a call share one scratch (not a row scratch, nor few-channel pixels) because
   with a scratch a worker at least SHARED_WORKERS_A_GROUP of them would each copy the same group's
   plane: where an item's groups are fewer than the threads, its points are split into spans
   (unit_span), and every worker copies the whole plane of its span's group, so the copies grow with the
   threads while each worker's points shrink. Shared, a group is copied once, in pieces, whatever the
   threads. With more threads than the host's 2 cores (OMP_WAIT_POLICY=passive: the total work sets the
   time), Zen 4: X 1x32x256x256 bilinear (two groups of 16 channels) at 8 threads took 1.14 ms shared
   against 2.47-3.24 a worker on a random grid, 3-D trilinear 1x16x32x64x64 (two groups of 8) 2.17-3.24
   against 5.91-6.26; at 2 threads, a group a worker, shared took 1.1-1.4x (its reads in the other
   core's L2). Two workers a group gained on those oversubscribed cores, where real ones would read each
   other's halves across cores, so from 4 workers a group (benchmarks/README.md, "More threads than
   groups: one shared scratch"); more cores than 2 are not measured. */
#define SHARED_WORKERS_A_GROUP 4
static int shared_many(const irgrid_grid_sample* p) {
    return !p->rows && !p->pixel && p->channels > PIXEL_BYTES / (p->dtype == IRGRID_F32 ? 4 : 8) / 2
           && (irgrid_index)p->threads >= SHARED_WORKERS_A_GROUP * p->batch * p->groups
           && ceil_div(p->points, SIMD_BLOCK) >= SHARED_WORKERS_A_GROUP;  /* spans of SIMD_BLOCK at least */
}

/* Whether the interleaved path takes a scratch of `bytes` a group (the plane's, not the row scratch):
   up to INTERLEAVE_MAX_BYTES a worker, past it (above) one shared (shared_large). */
static int scratch_fits(const irgrid_grid_sample* p, irgrid_index bytes) {
    return bytes <= INTERLEAVE_MAX_BYTES
           || (shared_large(p, bytes) && bytes <= INTERLEAVE_LARGE_BYTES && bytes <= x_share(p));
}

/* Whether a cubic call goes through a row scratch and its separable run (irgrid_cubic2d_run,
   irgrid_cubic3d_run): up to INTERLEAVE_MAX_BYTES, or past it (above) within x_share, its workers then
   as many as x_share holds (row_workers). Never by the thread count: the row runs sum in their own
   order, so this choice sets cubic's bits. Otherwise the plane and one zero pixel serve
   irgrid_interleaved_sample's generic run. */
static int rows_layout(const irgrid_grid_sample* p) {
    const irgrid_index bytes = row_pixels(p->rank, p->dims) * PIXEL_BYTES;
    return p->mode == IRGRID_MODE_CUBIC && (p->rank == 2 || p->rank == 3)
           && (bytes <= INTERLEAVE_MAX_BYTES || (bytes <= INTERLEAVE_LARGE_BYTES && bytes <= x_share(p)));
}

/* The most workers a row scratch of `bytes` a worker allows: all within INTERLEAVE_MAX_BYTES, past it
   as many as x_share holds (the gather path took 6-8x the time of two workers' row runs on a group of
   8 channels that both copied, benchmarks/README.md, "Large planes"). */
static int row_workers(const irgrid_grid_sample* p, irgrid_index bytes, int workers) {
    const irgrid_index most = bytes <= INTERLEAVE_MAX_BYTES ? workers : x_share(p) / bytes;
    return most < 1 ? 1 : (most < workers ? (int)most : workers);
}

/* Pixels of one-channel pixels' scratch with border or reflection padding: every dim's 3 pixels past each
   edge (simd_cubic_layout.h). */
static irgrid_index mirror_pixels(irgrid_index rank, const irgrid_index* dims) {
    return irgrid_cubic_layout_of(rank, dims, 1).size;
}

/* Pixels of a scratch of stacked rows (irgrid_stack_rows) for this call's plane and padding. */
static irgrid_index stacked_pixels(const irgrid_grid_sample* p) {
    return p->padding == IRGRID_PAD_BORDER ? p->dims[0] * (p->dims[1] + 1) : (p->dims[0] + 1) * (p->dims[1] + 1) + 2;
}

/* Pixels of a group's scratch: the row scratch's (the plan's `rows`; with one-channel pixels and border or
   reflection padding mirror_pixels), stacked rows' or the plane's and a zero pixel. */
static irgrid_index scratch_pixels(const irgrid_grid_sample* p) {
    if (p->stacked)
        return stacked_pixels(p);
    if (p->rows == 2 && p->padding != IRGRID_PAD_ZEROS)
        return mirror_pixels(p->rank, p->dims);
    return p->rows ? row_pixels(p->rank, p->dims) : p->plane + 1;
}

/* The bins of segment [first, last) in `shared` (slot, coordinates, sorted flags; a row scratch for all
   the workers, rows_shared) and `worker` (after the header and its own interleaved scratch, if any:
   counts, outputs). */
static void bins_layout(const irgrid_grid_sample* p, void* shared, void* worker, irgrid_index first,
                        irgrid_index last, irgrid_bins* bins) {
    char* s = (char*)shared;
    const irgrid_index scratch = p->piece ? 0 : p->scratch_items * (p->dtype == IRGRID_F32 ? 4 : 8);  /* its own */
    char* w = (char*)worker + IRGRID_WORKER_HEADER + scratch;
    bins->first = first;
    bins->last = last;
    bins->chunk = p->bin_chunk;
    bins->chunks = ceil_div(p->segment, p->bin_chunk);
    bins->slot = (int*)s;
    bins->coords = s + p->slot_bytes;
    bins->sorted = s + p->slot_bytes + p->coords_bytes;
    bins->rows = p->piece ? s + p->slot_bytes + p->coords_bytes + round64(bins->chunks) : NULL;
    bins->counts = (int*)w;
    bins->out = w + p->counts_bytes;
}

/* A scratch of stacked rows for a height x width plane x, with zeros or `border` padding's layout
   (simd_pairs_pixels.h describes both; scratch_pixels their size). Each row's pixels but the edges are
   irgrid_interleave_narrow_f32's pairs of a row and the row below it (border's last row: itself). */
static void irgrid_stack_rows(const float* x, irgrid_index height, irgrid_index width, int border, float* s) {
    const irgrid_index row = width + 1;
    irgrid_index j, i;
    if (border) {
        for (j = 0; j < height; j++, s += 2 * row) {
            irgrid_interleave_narrow_f32(x + j * width, 2, j + 1 < height ? width : 0, width, 2, s);
            s[2 * width] = s[2 * width - 2];  /* past the last pixel: the last */
            s[2 * width + 1] = s[2 * width - 1];
        }
        return;
    }
    for (j = 0; j <= height; j++, s += 2 * row) {
        s[0] = s[1] = 0.0f;  /* column -1 */
        if (j > 0 && j < height) {
            irgrid_interleave_narrow_f32(x + (j - 1) * width, 2, width, width, 2, s + 2);
            continue;
        }
        for (i = 0; i < width; i++) {  /* the zeros above X and its first row; its last row and the zeros */
            s[2 * i + 2] = j > 0 ? x[(j - 1) * width + i] : 0.0f;
            s[2 * i + 3] = j < height ? x[j * width + i] : 0.0f;
        }
    }
    s[0] = s[1] = s[2] = s[3] = 0.0f;  /* the zero pixels */
}

#define IRGRID_T float
#define IRGRID_FN(name) name##_f32
#define IRGRID_WIDE_PIXELS 1  /* the interleaved path's 16-channel pixels (f32 only, interleave_lanes) */
#include "grid_sample_body.h"
#undef IRGRID_T
#undef IRGRID_FN
#undef IRGRID_WIDE_PIXELS

#define IRGRID_T double
#define IRGRID_FN(name) name##_f64
#include "grid_sample_body.h"
#undef IRGRID_T
#undef IRGRID_FN

/* Whether a batch of small one-channel items runs as one run of points (IRGRID_GS_ITEMS): 2-D bilinear
   f32 that the pair reads cover (rows of 2 pixels or more), items below the
   gather path's block (IRGRID_SIMD_GROUPS groups: from there one item is a run of its own), a lane's
   pair start within int32 (a plane per item boundary among 16 lanes). On a grid or on coordinates
   computed per item (a fused AffineGrid: RAFT's lookup windows, `coords + delta`, export as one). */
static int items_run(const irgrid_grid_sample* p) {
    return p->dtype == IRGRID_F32 && p->rank == 2 && p->channels == 1 && p->batch > 1
           && p->mode == IRGRID_MODE_LINEAR && p->dims[1] >= 2
           && p->points < IRGRID_SIMD_GROUPS * 8 && p->plane <= INT_MAX / 17;
}

/* Whether a call may run 512-bit code (the gather path's 16-lane taps, wide_taps; the interleaved path's
   16-channel pixels, wide_pixels): f32 where the CPU has AVX-512 F/VL/BW/DQ, with the policy ALWAYS, or
   AUTO on calls of WIDE_MIN_POINTS points or more. On small calls the 512-bit instructions cost more
   than they save, in the code that runs after them: on Intel's server cores they lower the clock for a while (the AVX-512 frequency licence). Measured on a Cascade
   Lake Xeon, a tiny GridSample inside OpenVINO took 1.12x the time by 16 lanes at 4 points and 1.07x at
   256, 0.95x at 1024; irgrid's own calls followed by scalar work, 0.95x at 529 points (benchmarks/
   README.md, "Small calls by 8 lanes"). The two give the same bits, so the choice changes only time. */
#define WIDE_MIN_POINTS 512
static int wide_call(const irgrid_grid_sample* p) {
    return p->dtype == IRGRID_F32 && irgrid_cpu_avx512()
           && (p->avx512 == IRGRID_POLICY_ALWAYS
               || (p->avx512 == IRGRID_POLICY_AUTO && p->batch * p->points >= WIDE_MIN_POINTS));
}

/* Whether the gather path's f32 taps (and the pair reads) go 16 lanes at a time: on calls wide_call
   allows, in 2-D and in 3-D trilinear sampling of one to IRGRID_PAIRS_CHANNELS channels (the 16-lane pair
   run). Other 3-D taps took as long as or longer than 8 lanes (benchmarks/README.md, "On an
   Intel Xeon host"). */
static int wide_taps(const irgrid_grid_sample* p) {
    return wide_call(p) && (p->avx512 == IRGRID_POLICY_ALWAYS || p->rank == 2
                            || (p->rank == 3 && p->mode == IRGRID_MODE_LINEAR && p->channels <= IRGRID_PAIRS_CHANNELS));
}

static int workers_for(int threads, irgrid_index units) {
    return (int)(units < threads ? (units > 1 ? units : 1) : (threads > 1 ? threads : 1));
}

/* The tiles 3-D cubic's row runs bin a scattered grid's points by (binning.h): 16 pixels of a row each
   (sort_chunk keys them, irgrid_scattered judges by 4 rows of them); how many. */
static irgrid_index row_tiles(irgrid_grid_sample* p) {
    return irgrid_tiling(p->rank, p->dims, p->align_corners, BIN_CAPACITY, 1, 1, 16, p->tiles, p->scale, p->offset,
                         &p->judge_rows);
}

/* Whether 3-D cubic's grid is scattered, as sort_chunk judges a chunk of it, here by the first item's first
   IRGRID_BIN_SAMPLE points (without a grid, as for a scattered one); a fused AffineGrid's or displacement's
   points are not. The answer makes the schedule depend on the grid's values (per_call). */
static int scattered_grid(irgrid_grid_sample* p) {
    int keys[IRGRID_BIN_SAMPLE];
    const irgrid_index m = min_index(IRGRID_BIN_SAMPLE, p->points);
    if (p->affine || p->displaced)
        return 0;
    p->per_call = 1;
    if (p->coords == NULL)
        return 1;
    row_tiles(p);
    if (p->dtype == IRGRID_F32)
        irgrid_tile_keys_f32((const float*)p->coords, m, p->rank, p->scale, p->offset, p->tiles, irgrid_dims_in_order,
                             keys);
    else
        irgrid_tile_keys_f64((const double*)p->coords, m, p->rank, p->scale, p->offset, p->tiles,
                             irgrid_dims_in_order, keys);
    return irgrid_scattered(keys, m, p->tiles[p->rank - 2], p->tiles[p->rank - 1], p->judge_rows);
}

/* Whether binned 3-D cubic on this CPU keeps 8-channel pixels so that each worker samples a channel group
   of its own (cpu.h's irgrid_cpu_groups_apart, which says why): at 2 threads or more, on a grid the plan
   bins, where 16-channel pixels would leave fewer groups than workers (one scratch they all sweep,
   rows_shared) and 8-channel pixels would not. Both give the same bits. */
static int groups_apart(irgrid_grid_sample* p) {
    const irgrid_index workers = p->threads;
    return irgrid_cpu_groups_apart() && workers > 1 && ceil_div(p->channels, 16) < workers
           && ceil_div(p->channels, 8) >= workers && p->binning != IRGRID_POLICY_NEVER
           && (p->binning == IRGRID_POLICY_ALWAYS || scattered_grid(p));
}

/* Whether the interleaved path takes pixels of 16 f32 channels (64 bytes, a cache line; simd.h's
   irgrid_interleaved_sample_f32x16, irgrid_cubic2d_run_f32x16) rather than 8, on calls wide_call
   allows, where a group's scratch still fits. 2-D cubic's row scratch: with the policy ALWAYS or from 9
   channels on (its run outweighs the copy-in: 0.63-0.90x the time at 12 to 32 channels: benchmarks/
   README.md, "16-channel pixels for 2-D cubic"). 3-D cubic's (up to x_share, as rows_layout allows): with
   the policy ALWAYS, or from 9 channels on within INTERLEAVE_MAX_BYTES and past it on a grid that is not
   scattered (scattered_grid). On Zen 5 (1 and 2 threads) smooth grids took 0.57-0.67x the time of 8-channel
   pixels, random ones within INTERLEAVE_MAX_BYTES 0.65-0.90x; past it random ones took 0.93-1.08x even with
   the scratch shared (rows_shared), whose binned sweeps read 4 planes of 64-byte pixels, more than L2
   holds (benchmarks/README.md, "16-channel pixels for 3-D cubic"). Where the CPU prefers a group a worker
   (cpu.h's irgrid_cpu_groups_apart: Zen 4), a scattered grid keeps 8-channel pixels wherever 16-channel
   ones would leave fewer groups than workers and 8-channel ones would not (groups_apart).
   The generic run (2-D and 3-D nearest and linear, cubic where no row scratch fits): with the policy
   ALWAYS, or from 9 channels on (fewer would leave half of each pixel zeros) where every worker has a
   group of its own, or in 2-D bilinear. With fewer groups than workers each worker copies the whole
   group in for its span of points: 2-D nearest's cheap run then took 1.12-1.22x the time of
   8-channel pixels with 16 or 24 channels at 2 threads (0.71-0.93x at 1 thread), 3-D trilinear's 16
   channels 0.93-1.05x, while 2-D bilinear's took 0.67-0.97x from 9 channels on (benchmarks/README.md,
   "16-channel pixels"). Only within INTERLEAVE_MAX_BYTES: larger scratches (planes of 256K pixels and
   more) keep 8-channel pixels, half the scratch (benchmarks/README.md, "Large planes"). */
static int wide_pixels(irgrid_grid_sample* p) {
    const irgrid_index bytes = scratch_pixels(p) * 64;
    if (!wide_call(p))
        return 0;
    if (p->rows && p->rank == 3)
        return (bytes <= INTERLEAVE_MAX_BYTES || (bytes <= INTERLEAVE_LARGE_BYTES && bytes <= x_share(p)))
               && (p->avx512 == IRGRID_POLICY_ALWAYS
                   || (p->channels > 8 && (bytes <= INTERLEAVE_MAX_BYTES
                                           || (p->binning != IRGRID_POLICY_ALWAYS && !scattered_grid(p)))
                       && !groups_apart(p)));
    if (bytes > INTERLEAVE_MAX_BYTES)
        return 0;
    if (p->rows)
        return p->avx512 == IRGRID_POLICY_ALWAYS || p->channels > 8;
    return p->avx512 == IRGRID_POLICY_ALWAYS
           || (p->channels > 8 && (p->batch * ceil_div(p->channels, 16) >= (irgrid_index)p->threads
                                   || (p->rank == 2 && p->mode == IRGRID_MODE_LINEAR)));
}

/* The channels from which the policy AUTO takes the interleaved path (its copy-in then pays for itself):
   - cubic with a row scratch (the plan's `rows`): from one. Its row run read a point's 16 or 64 taps
     from a few rows, where the gather path gathered each: 2-D X 1xCx256x256 at C = 1-3 took 0.39-0.87x
     the gather path's time, 3-D X 1xCx32x64x64 0.13-0.20x (2 threads, smooth and random grids);
   - f32 2-D nearest and linear (which the pair run reads: simd.h's IRGRID_PAIRS_CHANNELS, 2-D and 3-D):
     INTERLEAVE_MIN_CHANNELS_F32. At 4 channels the pair run took
     0.60x (smooth) and 0.80x (random) of the interleaved path's time in 2-D, 0.77x and 0.98x in 3-D,
     and 2-D nearest's gather path 0.76x and 0.97x; at 5 the interleaved path won in 3-D and on
     nearest's random grid (2-D bilinear's random grid: 0.96x);
   - 3-D nearest (one tap a point, cheap to gather) from INTERLEAVE_MIN_CHANNELS_3D_NEAREST;
   - the rest (f64, cubic without a row scratch) from INTERLEAVE_MIN_CHANNELS.
   Measured on Zen 5 (benchmarks/README.md, "Few channels: which path from how many"). */
static irgrid_index interleave_from(const irgrid_grid_sample* p) {
    if (p->rows)
        return 1;
    if (p->rank == 3 && p->mode == IRGRID_MODE_NEAREST)
        return INTERLEAVE_MIN_CHANNELS_3D_NEAREST;
    if (p->dtype == IRGRID_F32 && ((p->rank == 2 && p->mode == IRGRID_MODE_NEAREST) || p->mode == IRGRID_MODE_LINEAR))
        return INTERLEAVE_MIN_CHANNELS_F32;
    return INTERLEAVE_MIN_CHANNELS;
}

/* Whether a cubic call (2-D or 3-D) takes pixels of one channel (simd_cubic_points.h, 16 points a vector on
   calls wide_call allows, else simd_cubic_points8.h's 8; the plan's rows 2): f32, any padding, at most
   CUBIC_POINTS_CHANNELS channels, their row scratch (each worker copies it whole) within
   INTERLEAVE_MAX_BYTES, in 3-D past it within INTERLEAVE_LARGE_BYTES and x_share (the workers as many as
   x_share holds: row_workers). 2-D X 1xCx256x256 took 0.39-0.87x the 8-channel row run's time, X
   1x3x512x512 (3.2 MiB) 0.49x and 0.56x (benchmarks/README.md, "Cubic of few channels by points"). In 3-D
   a random grid's 16 rows a point miss L2 once the scratch passes it (X 1xCx32x64x64, 700 KiB a channel:
   1.25x the 8-channel run's time at two channels, 1.95x at three) unless its points are binned
   (points_bins_pay): binned, 0.67-0.71x at two channels, 0.95-0.99x at three, the smooth grid 0.67x and
   0.95-0.96x; X 1x3x16x64x64 and 1x3x24x80x80 1.00x ("Binned one-channel pixels"). Past
   INTERLEAVE_MAX_BYTES of 8-channel pixels, which then ran on as few workers as x_share holds or, past
   x_share, on the scalar path: X 1xCx32x128x128 one channel 0.96 ms (random grid) and 0.50 (smooth) against
   the scalar path's 5.9 and 5.1, three 0.62x and 0.47x the time of the 8-channel run on one worker ("Large
   volumes of few channels"). By 8 points (under the AVX2 cap on Zen 5) 3-D one channel took 0.47-0.57x,
   2-D one to three 0.40-0.88x, X 1x1x512x512 (which took the gather path) 0.28-0.31x ("Cubic of few
   channels by 8 points"). With reflection padding 0.29-0.74x, volumes past x_share (which took the scalar
   path) 0.07-0.3x ("Cubic with reflection padding by points"). */
#define CUBIC_POINTS_CHANNELS 3
static int cubic_points(const irgrid_grid_sample* p) {
    const irgrid_index bytes = (p->padding != IRGRID_PAD_ZEROS ? mirror_pixels(p->rank, p->dims)
                                                                : row_pixels(p->rank, p->dims)) * p->channels * 4;
    return p->mode == IRGRID_MODE_CUBIC && p->channels <= CUBIC_POINTS_CHANNELS
           && p->dtype == IRGRID_F32 && (p->rank == 2 || p->rank == 3)
           && (bytes <= INTERLEAVE_MAX_BYTES
               || (p->rank == 3 && bytes <= INTERLEAVE_LARGE_BYTES && bytes <= x_share(p)));
}

/* Whether the gather path (and nearest by points) read with scalar loads rather than gathers: the policy,
   AUTO by what this CPU runs faster (irgrid_grid_sample_gathers_pay). */
static int reads_by_loads(const irgrid_grid_sample* p) {
    return p->gathers == IRGRID_POLICY_NEVER || (p->gathers == IRGRID_POLICY_AUTO && !irgrid_grid_sample_gathers_pay());
}

/* Floats a pixel of the runs by points over a scratch of few-channel pixels (the plan's `pixel`), 0 where
   neither is taken: 2-D nearest (simd_nearest_points.h) of one to POINTS_CHANNELS f32 channels and 2-D
   bilinear (simd_pairs_pixels.h) of two to POINTS_CHANNELS with rows of 2 pixels or more, any padding,
   and of one channel with zeros or border padding over stacked rows (pixels of 2: a row's value and the one
   below it, the plan's `stacked`; Zen 4, X 1x1x256x256 against the pair run: 0.74-0.85x random,
   0.78-0.92x smooth; each worker copies the plane, about 8 us of 256 x 256 there, and saves about 0.5 ns
   a point, so only where the call has half a plane's points a thread or more),
   with the interleave policy AUTO (NEVER and ALWAYS keep the gather and the interleaved paths, for
   comparisons). Nearest of one channel reads X's plane by 16-lane gathers or loads (no scratch; 8 lanes,
   simd_gather_path.h's irgrid_nearest8_f32, where wide_call leaves a call to AVX2); so do two to four
   channels where wide_call leaves a call to AVX2 and an item has a gather path's block of points or more
   (IRGRID_SIMD_GROUPS * 8: below it the gather path prefetches a small item's lines, and RAFT-sized
   items of 64-144 points of two channels took 1.06-1.13x its time by planes). On Zen 1 (AVX2 on 128-bit
   units, 2 threads, against the gather path) X 1x2x256x256 took 0.83-0.84x the time, 1x3x256x256 and
   1x4x256x256 0.69-0.74x, 1x3x512x512 0.77-0.90x, 8x2x64x64 0.83-0.85x (benchmarks/README.md, "Zen 1:
   AVX2 on 128-bit units"). Two to four
   channels, on calls wide_call allows, a scratch of pairs or of 4-channel pixels (each worker's, or on a
   local grid one shared: shared_pixels), within INTERLEAVE_MAX_BYTES, and only where an item has as many
   points as its plane has pixels (measured at 1 and 2 threads; with a scratch a worker, more workers copy
   as much each and read fewer points).
   Nearest on Zen 5 (X 1xCx256x256, against the gather path): one channel 0.81-0.95x the time at 2
   threads, two 0.68-1.00x, three and four 0.52-0.76x at one thread (benchmarks/README.md, "Nearest of few
   channels by points"). Bilinear on Zen 4 (against the pair run): X 1x2x256x256 0.73-0.93x, 1x3x256x256
   0.75-1.00x. With fewer points than pixels the copy outweighs the reads (Zen 4, 2 threads): a grid of
   half the plane's pixels took 0.96-1.27x the time (bilinear) and 0.90-1.16x (nearest), a quarter up to
   1.64x and 1.80x, RAFT's lookups of two channels (81 points an item of 2,852 pixels) 1.3-1.6x and 3.1x
   (benchmarks/README.md, "Bilinear of few channels by pixels").
   Every scratch a worker is a copy of the whole plane, so the copies grow with the threads while each
   worker's points shrink. On Zen 4 at 1 thread (X 1xCx256x256, random grids, the pair run and the
   gather path against the pixels) a copy costs what 0.28-0.34 of a plane's points save at two and three
   channels (two channels' bilinear: 18 us against 0.87 ns a point) and 0.09-0.17 at four (whose 4-float
   pixels save the most a point); so, with a margin of 1.5-2x, a pixel run needs half a plane's points
   a thread or more, a quarter at four channels (at 1 and 2 threads no more than the rules above ask),
   two to four channels on a local grid excepted (one shared scratch, its copy split among the workers:
   shared_pixels). At 3-6 threads over the host's 2 cores two and three channels had taken 1.06-1.30x
   the pair run's time (benchmarks/README.md, "Few-channel pixels and more threads"); more cores than 2
   are not measured. */
#define POINTS_CHANNELS 4
static int local_grid(irgrid_grid_sample* p);
static int points_pixel(irgrid_grid_sample* p) {
    const int bilinear = p->mode == IRGRID_MODE_LINEAR && p->dims[1] >= 2
                         && (p->channels >= 2 || p->padding != IRGRID_PAD_REFLECTION);
    const int planes = p->mode == IRGRID_MODE_NEAREST && !wide_call(p) && p->points >= IRGRID_SIMD_GROUPS * 8;
    const int pixel = (p->channels == 1 && !bilinear) || planes ? 1 : (p->channels <= 2 ? 2 : 4);
    return p->dtype == IRGRID_F32 && (p->mode == IRGRID_MODE_NEAREST || bilinear) && p->rank == 2
                   && p->channels >= 1 && p->channels <= POINTS_CHANNELS && p->interleave == IRGRID_POLICY_AUTO
                   && (pixel == 2 && p->channels == 1 ? stacked_pixels(p) : p->plane + 1) * pixel * 4
                              <= INTERLEAVE_MAX_BYTES
                   && (pixel == 1 || (wide_call(p) && p->points >= p->plane))
                   && (pixel == 1 || (p->channels == 4 ? 4 : 2) * p->batch * p->points >= p->plane * p->threads
                       || (p->channels > 1 && local_grid(p)))
               ? pixel : 0;
}

/* Channels per group of the interleaved path (one vector of them per pixel; with one-channel pixels,
   cubic_points, every channel in one group), 0 when it is not chosen: a group's scratch fits
   (scratch_fits; with cubic's row scratch, the plan's `rows`, where that one fits), the policy (the
   caller checked that the vector path fits). */
static irgrid_index interleave_lanes(irgrid_grid_sample* p, irgrid_index itemsize) {
    const int pixel = points_pixel(p);
    if (pixel > 1) {
        p->pixel = pixel;
        p->stacked = p->channels == 1;
        p->loads = p->mode == IRGRID_MODE_NEAREST && reads_by_loads(p);  /* bilinear's pixels: 16-byte loads */
        return pixel;
    }
    if (p->interleave != IRGRID_POLICY_NEVER && cubic_points(p)) {
        p->rows = 2;
        p->wide = wide_call(p);  /* 16 points a vector, else 8 */
        return p->channels;
    }
    p->rows = rows_layout(p);
    if (p->interleave == IRGRID_POLICY_NEVER || (!p->rows && !scratch_fits(p, scratch_pixels(p) * PIXEL_BYTES))
        || (p->interleave == IRGRID_POLICY_AUTO && p->channels < interleave_from(p)))
        return 0;
    if (wide_pixels(p))
        return 16;
    return PIXEL_BYTES / itemsize;
}

/* The interleaved path: units of (batch item, group of `lanes` channels, span of points), each worker
   with one scratch (a group's planes interleaved). Items with few groups are split into spans of points
   (each worker copies a group in once per run of its units), so that every worker has work; in order,
   so a worker's consecutive units share a group. 3-D cubic on a grid (binned) goes item by item,
   segment by segment of BIN_SEGMENT points (the schedule's rounds): the workers first judge and sort
   the segment's chunks (phase 0), then sample its units (phase 1), so that each chunk is sorted once
   for all the channel groups. */
/* IRGRID_GS_SHARED's schedule (shared_large, shared_many, shared_pixels): per round (item, channel group) a copy phase
   of pieces of the plane, then a phase of spans of points, about two units a worker in each; one scratch
   for all. 2-D nearest by points (shared_pixels) gives each worker contiguous pieces and spans, so that
   a local grid's points read the part of the plane their worker copied. */
static int plan_shared(irgrid_grid_sample* p, irgrid_index itemsize) {
    irgrid_schedule* s = &p->schedule;
    const irgrid_index units = 2 * (irgrid_index)(p->threads > 1 ? p->threads : 1);  /* a phase's */
    p->path = IRGRID_GS_SHARED;
    if (p->batch > INT_MAX / 2 / p->groups)
        return IRGRID_E_SIZE;  /* phases are numbered in an int */
    p->piece = round64(ceil_div(p->plane, units));
    p->span = ceil_div(p->points, min_index(units, ceil_div(p->points, SIMD_BLOCK)));
    p->spans = ceil_div(p->points, p->span);
    s->phases = 2;
    s->rounds = p->batch * p->groups;
    s->units[0] = ceil_div(p->plane, p->piece);
    s->units[1] = p->spans;
    s->workers = workers_for(p->threads, s->units[0] > s->units[1] ? s->units[0] : s->units[1]);
    s->in_order = p->pixel > 1;
    s->shared_bytes = (size_t)(p->scratch_items * itemsize);
    return IRGRID_OK;
}

/* Whether 2-D nearest by points of two to four channels (the plan's pixel 2 or 4) shares one scratch among
   its workers. With a scratch a worker each copies the whole plane into pixels for its span of points (13
   us of a 36-41 us call at 2 threads, X 1x2x256x256). Where each worker's points read mostly the part of
   the plane it would copy of a shared scratch (a smooth warp), one shared scratch, each worker copying a
   contiguous part, took 0.81-0.88x the time at two to four channels; where they read anywhere (a random
   grid), 1.17-1.19x, every other read then a line in the other core's L2 (benchmarks/README.md, "Nearest
   of few channels: a shared scratch for local grids"). So the plan judges the grid, the first item's:
   shared where at least 3 in 4 of SHARED_JUDGE_POINTS points spread over it (read from few lines: the
   grid's cold lines had cost a random grid's call 2-4% with a line a point) read a pixel in the same
   fraction of the plane (of `threads` parts) as their own index's of the points, non-finite and far
   coordinates counted as not. That makes the schedule depend on the grid's values (per_call); calls of
   fewer than SHARED_MIN_POINTS points an item, whose copies cost little, keep a scratch a worker, and so
   do stacked rows (one channel's copy is cheap): on X 1x1x256x256's smooth grid at 2 threads a shared
   scratch took 0.94x the pair run's time in a calm phase of the Zen 4 host and 1.39x minutes later, in a
   phase where reads from the other core's caches were slow (2-D nearest of two channels' shared scratch
   1.5x slower then too), a scratch a worker 0.93x in that phase (benchmarks/README.md, "Zen 4: one
   channel over stacked rows"). */
#define SHARED_JUDGE_POINTS 64  /* in runs of 4 consecutive ones (a grid's line or two each) */
#define SHARED_MIN_POINTS 16384
static int shared_pixels(irgrid_grid_sample* p) {
    return !p->stacked && p->pixel >= 2 && local_grid(p);
}

/* shared_pixels' judgement of the grid (and points_pixel's, for more threads than a scratch a worker
   pays for). */
static int local_grid(irgrid_grid_sample* p) {
    const float* g = (const float*)p->coords;
    const irgrid_index height = p->dims[0], width = p->dims[1], parts = p->threads;
    irgrid_index j, i, row, col, local = 0;
    double x, y;
    if (p->threads < 2 || p->points < SHARED_MIN_POINTS || p->affine || p->displaced
        || p->interleave != IRGRID_POLICY_AUTO)
        return 0;
    p->per_call = 1;
    if (g == NULL)  /* planned without a grid (SamplePlan.route): a scratch a worker */
        return 0;
    for (j = 0; j < SHARED_JUDGE_POINTS; j++) {
        i = (2 * (j / 4) + 1) * p->points / (SHARED_JUDGE_POINTS / 2) + j % 4;
        x = (double)g[2 * i];
        y = (double)g[2 * i + 1];
        if (!(fabs(x) <= 4.0 && fabs(y) <= 4.0))  /* NaN, infinite or far */
            continue;
        x = floor(irgrid_denormalize_f64(x, width, p->align_corners) + 0.5);
        y = floor(irgrid_denormalize_f64(y, height, p->align_corners) + 0.5);
        col = (irgrid_index)(x < 0 ? 0 : (x > (double)(width - 1) ? (double)(width - 1) : x));
        row = (irgrid_index)(y < 0 ? 0 : (y > (double)(height - 1) ? (double)(height - 1) : y));
        local += (row * width + col) * parts / p->plane == i * parts / p->points;
    }
    return 4 * local >= 3 * SHARED_JUDGE_POINTS;
}

/* Points a unit of the interleaved path spans: items of `segment` points split into spans where the
   items and the `groups` of channels a round holds are fewer than two a worker, so that every worker has
   work. */
static irgrid_index unit_span(const irgrid_grid_sample* p, irgrid_index items, irgrid_index groups,
                              irgrid_index segment) {
    irgrid_index spans = 1;
    if (items * groups < 2 * (irgrid_index)p->threads)
        spans = min_index(ceil_div(2 * (irgrid_index)p->threads, items * groups), ceil_div(segment, SIMD_BLOCK));
    return ceil_div(segment, spans);
}

/* The points of a binned span's chunks: as many chunks of equal size as BIN_CAPACITY needs (rounding a
   span up to whole chunks of BIN_CAPACITY made a span just past one chunk two: 153,600 points at two
   threads, four spans of 38,400, became three units of 65,536 for two workers; benchmarks/README.md,
   "Binned one-channel pixels"). */
static irgrid_index bin_chunk_of(irgrid_index span) { return ceil_div(span, ceil_div(span, BIN_CAPACITY)); }

/* Whether 3-D cubic over one-channel pixels (cubic_points) bins a scattered grid's points (the policy
   AUTO; ALWAYS bins every call it can), by tiles of 2 planes x 8 rows x a whole row (binning.h; their
   taps' rows, 5 x 11 x the row, within L1): where the scratch is at least POINTS_BIN_MIN_BYTES and a
   chunk's points (`chunk`) at least 1 / POINTS_BIN_DENSITY of the volume's pixels. A random grid's 16
   rows a point then come from L2 at nearly every point; sorted, neighbouring points share them. Measured
   on Zen 5 (binned over not, 2 threads, random grid of as many points as pixels): X 1x1x32x64x64
   0.82-0.86x the time, 1x2x16x64x64 0.79x, 1x3x16x32x32 0.78x, 1x1x32x128x128 0.70x, 1x2x32x128x128
   0.65x, with border and reflection padding 0.83-0.86x; the smooth grids, which the judge leaves
   unbinned, 1.00-1.03x. Below those limits the sort cost more than it saved: 1x1x16x32x32 (93 KiB)
   1.01-1.06x, 1x2x8x32x32 1.10x, 1x1x8x32x32 1.28-1.32x; on 1x1x32x64x64, grids of 2048 points
   (chunks of 1/128 of the pixels and less) 1.18-1.37x, 16384 (1/32 at 2 threads) 0.91-1.01x, 32768
   (1/16) 0.89-0.95x (benchmarks/README.md, "Binned one-channel pixels"). */
#define POINTS_BIN_MIN_BYTES ((irgrid_index)160 << 10)
#define POINTS_BIN_DENSITY 16
static int points_bins_pay(const irgrid_grid_sample* p, irgrid_index chunk) {
    return p->binning == IRGRID_POLICY_ALWAYS
           || (p->scratch_items * (irgrid_index)sizeof(float) >= POINTS_BIN_MIN_BYTES
               && chunk * POINTS_BIN_DENSITY >= p->plane);
}

/* Whether binned 3-D cubic over a row scratch (the plan's rows 1) takes one for all the workers (a
   round's group copied in by all of them, then sampled; the plan's `piece` planes a copy unit): on a
   scattered grid (binning ALWAYS: every one), at two threads or more, where a round's channel groups are
   fewer than the workers, or a group's scratch is past INTERLEAVE_MAX_BYTES. Every sorted chunk sweeps
   the whole volume, which each worker's scratch would otherwise hold a copy of: on Zen 5 (2 threads,
   random grids) X 1x16x32x64x64 in 16-channel pixels took 0.57-0.59x the time of a scratch a worker,
   two groups of them (X 1x32x32x64x64, 11.2 MB each) 0.62x. 8-channel pixels (5.6 MB a group): one group
   for two workers 1.00x (in half the memory), a group to each worker 1.04-1.07x, so those keep a scratch
   a worker (benchmarks/README.md, "16-channel pixels for 3-D cubic"). A smooth grid's chunks are not
   sorted: each worker copies only the planes its own points read, just before reading them (hold_planes). */
static int rows_shared(irgrid_grid_sample* p, irgrid_index itemsize) {
    return p->rows == 1 && p->threads > 1
           && (p->groups < (irgrid_index)p->threads || p->scratch_items * itemsize > INTERLEAVE_MAX_BYTES)
           && (p->binning == IRGRID_POLICY_ALWAYS || scattered_grid(p));
}

/* Whether the interleaved path streams a large output with non-temporal stores where only a scattered grid
   gains from it: the 8-channel generic run (two blocks a line: a block writes half a line a channel) and
   2-D cubic's row runs, f32, from IRGRID_STREAM_SCATTERED_MIN_BYTES a group, on a grid the plan judges
   scattered (scattered_grid; no policy pins it: a tuner's first calls in a fresh process took it on
   smooth grids too). (The 16-channel generic run and 3-D cubic's stream from a group's 1 MiB on every
   grid: IRGRID_STREAMS.) On Zen 4 random grids took 0.75-0.97x the time streamed (X 1x16x512x512 bilinear
   on the shared scratch 0.77-0.86x, 3-D trilinear 1x16x32x64x64 0.85-0.90x, 2-D bicubic 1x32x256x256
   0.85-0.88x): the scratch keeps L3 for the reads that evicted output lines would have taken it from.
   Smooth grids, whose reads the prefetchers cover, took 0.91-1.08x, nearest on random ones 1.02-1.11x
   (benchmarks/README.md, "Zen 4: large outputs of 8-channel pixels streamed"). */
static int stream_output(irgrid_grid_sample* p, irgrid_index itemsize) {
    return ((p->lanes == 8 && !p->rows) || (p->rows == 1 && p->rank == 2)) && itemsize == 4
           && p->mode != IRGRID_MODE_NEAREST
           && min_index(p->channels, p->lanes) * p->points * itemsize >= IRGRID_STREAM_SCATTERED_MIN_BYTES
           && scattered_grid(p);
}

static int plan_interleave(irgrid_grid_sample* p, irgrid_index itemsize) {
    irgrid_schedule* s = &p->schedule;
    const irgrid_index bin_segment = min_index(p->points, BIN_SEGMENT);
    irgrid_index items = p->batch, segment = p->points, span, n_units;
    int binned = 0, shared = 0, rows_outer;
    p->groups = ceil_div(p->channels, p->lanes);
    p->streams = stream_output(p, itemsize);
    p->scratch_items = (scratch_pixels(p) * p->lanes + 15) / 16 * 16;  /* a multiple of 64 bytes */
    if (shared_large(p, p->scratch_items * itemsize) || shared_many(p) || shared_pixels(p))
        return plan_shared(p, itemsize);
    if (p->binning != IRGRID_POLICY_NEVER && !p->affine && !p->displaced && p->rank == 3 && p->rows) {
        if (p->rows == 2)  /* one-channel pixels */
            p->n_tiles = irgrid_tiling(p->rank, p->dims, p->align_corners, BIN_CAPACITY, 2, 8, p->dims[2] + 4,
                                       p->tiles, p->scale, p->offset, &p->judge_rows);
        else
            p->n_tiles = row_tiles(p);
        /* A sorted chunk runs tile by tile, its key's most significant dim outermost: planes, each step
           reading 4 planes of rows; in 16-channel pixels, where the volume has fewer planes than rows, rows,
           each step 4 rows of every plane. On Zen 5 (random grids, 1 and 2 threads) that took 0.85-0.99x
           the time of planes outermost (X 1x16x32x64x64: 0.89-0.94x; its 4 planes of 64-byte pixels are
           1.15 MB, past a core's 1 MiB of L2, its 4 rows 0.67 MB); 8-channel pixels 0.97-1.03x, so they
           keep planes outermost, as their rows' prefetch (irgrid_prefetch_last_rows) was measured with
           (benchmarks/README.md, "16-channel pixels for 3-D cubic"). */
        rows_outer = p->rows == 1 && p->lanes == 16 && p->dims[0] + 7 < p->dims[1] + 3;
        p->key_order[0] = rows_outer;
        p->key_order[1] = !rows_outer;
        p->key_order[2] = 2;
        if (p->n_tiles <= BIN_CAPACITY  /* else even tiles of every row outnumber a chunk's points */
            && (p->rows == 1 || points_bins_pay(p, bin_chunk_of(unit_span(p, 1, p->groups, bin_segment))))) {
            binned = 1;
            items = 1;
            segment = bin_segment;
            shared = rows_shared(p, itemsize);
        }
    }
    span = unit_span(p, items, shared ? 1 : p->groups, segment);
    if (binned) {  /* spans of whole chunks */
        p->bin_chunk = bin_chunk_of(span);
        span = ceil_div(span, p->bin_chunk) * p->bin_chunk;
    }
    p->span = span;
    p->spans = ceil_div(segment, span);
    n_units = items * p->groups * p->spans;
    p->units_per_round = n_units;
    s->workers = workers_for(p->threads, n_units);
    s->in_order = 1;
    s->worker_bytes = (size_t)(IRGRID_WORKER_HEADER + (shared ? 0 : p->scratch_items * itemsize));
    if (p->rows && !shared)
        s->workers = row_workers(p, p->scratch_items * itemsize, s->workers);
    if (!binned) {
        p->path = IRGRID_GS_INTERLEAVE;
        s->phases = 1;
        s->units[0] = n_units;
        return IRGRID_OK;
    }
    p->path = IRGRID_GS_BINNED;
    p->segment = segment;
    p->segments = ceil_div(p->points, segment);
    if (p->batch > INT_MAX / 2 / p->segments / p->groups)
        return IRGRID_E_SIZE;  /* phases are numbered in an int */
    p->slot_bytes = round64(segment * (irgrid_index)sizeof(int));
    p->coords_bytes = round64(segment * p->rank * itemsize);
    p->counts_bytes = round64(p->n_tiles * (irgrid_index)sizeof(int));
    p->out_bytes = round64(p->bin_chunk * p->lanes * itemsize);
    s->phases = 2;
    s->rounds = p->batch * p->segments;
    s->units[0] = ceil_div(segment, p->bin_chunk);
    s->units[1] = n_units;
    s->shared_bytes = (size_t)(p->slot_bytes + p->coords_bytes + round64(s->units[0]));
    s->worker_bytes += (size_t)(p->counts_bytes + p->out_bytes);
    if (shared) {  /* per round one group's planes, in pieces of a few planes, then its spans */
        p->piece = ceil_div(p->dims[0], min_index(p->dims[0], 2 * (irgrid_index)p->threads));
        s->rounds *= p->groups;
        s->units[0] += ceil_div(p->dims[0], p->piece);
        s->units[1] = p->spans;
        s->workers = workers_for(p->threads, s->units[0] > s->units[1] ? s->units[0] : s->units[1]);
        s->shared_bytes += (size_t)(p->scratch_items * itemsize);
    }
    return IRGRID_OK;
}

int irgrid_grid_sample_simd_available(void) { return irgrid_cpu_avx2(); }

int irgrid_grid_sample_wide_available(void) { return irgrid_cpu_avx512(); }

/* Calibration (irgrid_grid_sample_gathers_pay): the gather path's bilinear run over points scattered in
   one 32 x 32 plane, CALIBRATION_POINTS of them, CALIBRATION_CALLS calls at a time, timed CALIBRATION_RUNS
   times each way, alternating. Fewer points than the pair run takes (IRGRID_SIMD_GROUPS * 8): with 512
   it had timed the pair run, whose reads are the same either way, so the answer was a coin's (it flipped
   between processes on Zen 5); a few calls at a time, for the TSC's steps of about 26 ticks (Zen 5).
   NOTE: gathers are taken unless scalar loads are clearly faster: on Zen 5 the two are within 2% here,
   while 2-D nearest by points reads a channel 0.77x as fast by loads (benchmarks/README.md, "Nearest of
   few channels by points"); where gathers are many times slower (Intel's Gather Data Sampling
   mitigation) loads still win by far. */
enum { CALIBRATION_SIDE = 32, CALIBRATION_POINTS = IRGRID_SIMD_GROUPS * 8 - 16, CALIBRATION_CALLS = 8,
       CALIBRATION_RUNS = 11 };

#ifdef IRGRID_SIMD_X86
static unsigned long long calibration_ticks(const float* x, const float* g, float* y, int loads) {
    const irgrid_index dims[2] = {CALIBRATION_SIDE, CALIBRATION_SIDE}, strides[2] = {CALIBRATION_SIDE, 1};
    irgrid_index fallback[CALIBRATION_POINTS];
    unsigned long long start = __builtin_ia32_rdtsc();
    int call;
    for (call = 0; call < CALIBRATION_CALLS; call++)
        irgrid_simd_sample_f32(x, g, y, CALIBRATION_POINTS, 1, CALIBRATION_SIDE * CALIBRATION_SIDE, CALIBRATION_POINTS,
                               2, dims, strides, IRGRID_MODE_LINEAR, IRGRID_PAD_ZEROS, 0, loads, 0, fallback);
    return __builtin_ia32_rdtsc() - start;
}

static int measure_gathers(void) {
    float x[CALIBRATION_SIDE * CALIBRATION_SIDE], g[2 * CALIBRATION_POINTS], y[CALIBRATION_POINTS];
    unsigned long long best[2] = {~0ULL, ~0ULL}, ticks;
    unsigned state = 12345u;
    int k, run, loads;
    for (k = 0; k < CALIBRATION_SIDE * CALIBRATION_SIDE; k++)
        x[k] = (float)k;
    for (k = 0; k < 2 * CALIBRATION_POINTS; k++) {  /* a fixed LCG: uniform in [-1, 1) */
        state = state * 1664525u + 1013904223u;
        g[k] = (float)(state >> 8) / (float)(1u << 23) - 1.0f;
    }
    for (run = 0; run < CALIBRATION_RUNS; run++)
        for (loads = 0; loads < 2; loads++) {
            ticks = calibration_ticks(x, g, y, run % 2 ? 1 - loads : loads);
            if (ticks < best[run % 2 ? 1 - loads : loads])
                best[run % 2 ? 1 - loads : loads] = ticks;
        }
    return best[1] * 10 >= best[0] * 9;  /* loads at least 10% faster, else gathers (NOTE above) */
}
#endif

int irgrid_grid_sample_gathers_pay(void) {
    static int state = -1;  /* the CPU's answer, the same for every caller: a race only measures twice */
    int pays = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (pays < 0) {
        pays = 1;
#ifdef IRGRID_SIMD_X86
        if (irgrid_cpu_avx2())
            pays = measure_gathers();
#endif
        __atomic_store_n(&state, pays, __ATOMIC_RELAXED);
    }
    return pays;
}

int irgrid_grid_sample_plan(irgrid_grid_sample* p) {
    irgrid_schedule* s = &p->schedule;
    const irgrid_index rank = p->rank, itemsize = p->dtype == IRGRID_F32 ? 4 : 8;
    irgrid_index k, plane = 1, max_taps = 1, points = 1;
    int simd;
    memset(s, 0, sizeof(*s));
    p->loads = 0;
    p->wide = 0;
    p->rows = 0;
    p->pixel = 0;
    p->stacked = 0;
    p->piece = 0;
    p->per_call = 0;
    p->streams = 0;
    if (p->dtype != IRGRID_F32 && p->dtype != IRGRID_F64)
        return IRGRID_E_MODE;
    if (rank < 1 || rank > IRGRID_MAX_RANK || ((p->affine || p->displaced) && rank > IRGRID_AFFINE_MAX_RANK))
        return IRGRID_E_RANK;
    if (p->affine && p->displaced)
        return IRGRID_E_MODE;
    if ((p->mode != IRGRID_MODE_NEAREST && p->mode != IRGRID_MODE_LINEAR && p->mode != IRGRID_MODE_CUBIC)
        || (p->padding != IRGRID_PAD_ZEROS && p->padding != IRGRID_PAD_BORDER && p->padding != IRGRID_PAD_REFLECTION))
        return IRGRID_E_MODE;
    if (p->batch < 0 || p->channels < 0)
        return IRGRID_E_DIMS;
    for (k = rank - 1; k >= 0; k--) {
        if (p->dims[k] < 1)
            return IRGRID_E_DIMS;
        if (plane > PTRDIFF_MAX / p->dims[k])
            return IRGRID_E_SIZE;
        p->strides[k] = plane;
        plane *= p->dims[k];
        max_taps *= p->mode == IRGRID_MODE_NEAREST ? 1 : (p->mode == IRGRID_MODE_LINEAR ? 2 : 4);
        if (max_taps > IRGRID_MAX_TAPS)
            return IRGRID_E_TAPS;
    }
    for (k = 0; k < rank; k++) {
        if (p->out_dims[k] < (p->affine || p->displaced ? 1 : 0))
            return IRGRID_E_DIMS;
        if (p->out_dims[k] && points > PTRDIFF_MAX / p->out_dims[k])
            return IRGRID_E_SIZE;
        points *= p->out_dims[k];
    }
    if (p->affine) {
        if (p->out_dims[rank - 1] > INT_MAX)
            return IRGRID_E_SIZE;  /* irgrid_affine_points counts along a row in int */
        irgrid_affine_axes_f32(p->out_dims, rank, p->grid_align_corners, p->extents, p->starts32, p->steps32);
        irgrid_affine_axes_f64(p->out_dims, rank, p->grid_align_corners, p->extents, p->starts64, p->steps64);
    }
    if (p->displaced) {
        if (p->displacement.channels < 1)
            return IRGRID_E_DIMS;
        if (p->out_dims[rank - 1] > INT_MAX)
            return IRGRID_E_SIZE;  /* displaced_points counts along a row in int */
        for (k = 0; k < rank; k++) {
            p->extents[k] = p->out_dims[rank - 1 - k];
            if (p->displacement.component[k] < 0 || p->displacement.component[k] >= p->displacement.channels)
                return IRGRID_E_DIMS;
        }
    }
    p->plane = plane;
    p->max_taps = max_taps;
    p->points = points;
    s->phases = 1;
    if (p->batch == 0 || p->channels == 0 || points == 0) {  /* nothing to write */
        s->phases = 0;
        return IRGRID_OK;
    }
    /* No data or output that large can exist (a caller passes both), and the schedule's unit counts, formed
       from these products, must not overflow: past IRGRID_INDEX_LIMIT elements the problem is refused. */
    if (p->channels > (irgrid_index)IRGRID_INDEX_LIMIT / p->batch
        || (plane > (irgrid_index)IRGRID_INDEX_LIMIT / (p->batch * p->channels))
        || (points > (irgrid_index)IRGRID_INDEX_LIMIT / (p->batch * p->channels))
        || (p->displaced && p->displacement.channels > (irgrid_index)IRGRID_INDEX_LIMIT / (p->batch * points)))
        return IRGRID_E_SIZE;
    simd = p->simd && irgrid_cpu_avx2();
    if (simd && irgrid_interleave_fits(rank, p->mode, plane)) {
        p->lanes = interleave_lanes(p, itemsize);
        if (p->lanes)
            return plan_interleave(p, itemsize);
    }
    if (simd && irgrid_simd_fits(rank, p->mode, plane) && items_run(p)) {
        p->path = IRGRID_GS_ITEMS;
        p->wide = wide_taps(p);
        p->span = SIMD_BLOCK;
        p->spans = ceil_div(p->batch * points, SIMD_BLOCK);
        s->units[0] = p->spans;
        s->workers = workers_for(p->threads, s->units[0]);
        return IRGRID_OK;
    }
    if (simd && irgrid_simd_fits(rank, p->mode, plane)) {
        p->path = IRGRID_GS_GATHER;
        p->loads = plane >= 2 && reads_by_loads(p);  /* (scalar loads read x[0] and x[1] for masked-off lanes) */
        p->wide = wide_taps(p);
        p->pixel = points_pixel(p) == 1;
        p->group = min_index(p->channels, SIMD_GROUP_BYTES / (plane * itemsize));
        p->group = p->group > 1 ? p->group : 1;
        p->span = points;
        if (p->affine || p->displaced) {  /* coordinates computed per block of points: every channel reads them */
            p->group = p->channels;
            p->span = min_index(points, SIMD_BLOCK);
        }
        p->groups = ceil_div(p->channels, p->group);
        if (p->batch * p->groups < 2 * (irgrid_index)p->threads)  /* few channels: split the points */
            p->span = min_index(p->span, round64(ceil_div(points, ceil_div(2 * (irgrid_index)p->threads,
                                                                             p->batch * p->groups))));
        p->spans = ceil_div(points, p->span);
        s->units[0] = p->batch * p->groups * p->spans;
        s->workers = workers_for(p->threads, s->units[0]);
        return IRGRID_OK;
    }
    p->path = IRGRID_GS_BLOCKS;
    p->chunk_points = IRGRID_MAX_TAPS / max_taps;
    p->chunks_per_item = ceil_div(points, p->chunk_points);
    s->units[0] = p->batch * p->chunks_per_item;
    s->workers = workers_for(p->threads, s->units[0]);
    return IRGRID_OK;
}

/* IRGRID_GS_ITEMS' units [begin, end): SIMD_BLOCK points of the batch's run each (computed coordinates
   computed item by item into one buffer first); the points the pair reads leave, through the scalar
   path in their own item. */
static void run_items(const irgrid_grid_sample* p, irgrid_index begin, irgrid_index end) {
    const float* x = (const float*)p->data;
    float* y = (float*)p->output;
    const irgrid_index points = p->points, total = p->batch * points;
    irgrid_index fallback[SIMD_BLOCK], tap_off[SIMD_MAX_TAPS];
    float tap_w[SIMD_MAX_TAPS], computed[SIMD_BLOCK * 2];
    const float* g;
    irgrid_index u, q0, q, n, j, n_fallback, count, start, stop;
    irgrid_items items;
    for (u = begin; u < end; u++) {
        q0 = u * SIMD_BLOCK;
        n = min_index(SIMD_BLOCK, total - q0);
        g = (const float*)p->coords + 2 * q0;
        if (p->affine || p->displaced) {
            for (q = q0; q < q0 + n; q += stop - start) {
                start = q % points;
                stop = min_index(points, start + q0 + n - q);
                block_coords_f32(p, p->starts32, p->steps32, q / points, start, stop, computed + 2 * (q - q0));
            }
            g = computed;
        }
        items.per_item = points;
        items.plane = p->plane;
        items.item = q0 / points;
        items.rem = q0 % points;
        n_fallback = irgrid_pairs_items_f32(x, g, y + q0, n, p->dims, p->padding, p->align_corners, p->wide, &items,
                                            fallback);
        for (j = 0; j < n_fallback; j++) {
            q = q0 + fallback[j];
            count = point_taps_f32(g + 2 * fallback[j], 2, p->dims, p->strides, p->mode, p->padding, p->align_corners,
                                   tap_off, tap_w);
            apply_taps_f32(x, y, 1, p->plane, points, p->max_taps, q / points, q % points, 1, tap_off, tap_w, &count);
        }
    }
}

void irgrid_grid_sample_run(const irgrid_grid_sample* p, int phase, void* shared, void* worker, irgrid_index begin,
                            irgrid_index end) {
    if (p->path == IRGRID_GS_ITEMS)
        run_items(p, begin, end);
    else if (p->dtype == IRGRID_F32)
        run_f32(p, phase, shared, worker, begin, end, p->starts32, p->steps32);
    else
        run_f64(p, phase, shared, worker, begin, end, p->starts64, p->steps64);
}

/* A scattered grid's points taken tile by tile. GridSample's 3-D cubic run reads a point's 64 taps
   from 16 rows of its group's scratch (4 MiB for 8 channels of 32x64x64); on a uniformly random grid
   consecutive points' rows lie anywhere, so nearly every row comes from L3. Sorted by the tile of the
   volume they sample (16 pixels of one row: a tile's taps span 4 planes x 4 rows x 19 pixels, 9.5 KiB,
   within L1; 2, 4, ... rows where the volume has more tiles than a chunk has points), points that read
   the same rows run together. Over one-channel pixels (a float a pixel, 700 KiB for 32x64x64, within
   L2) the rows miss L1 instead, and coarser tiles serve: 2 planes x 8 rows x a whole row, whose taps
   (5 planes x 11 rows x the row) still fit L1, fewer tiles for the sort to count (grid_sample.c's
   points_bins_pay).

   Per chunk of at most IRGRID_BIN_CAPACITY points of a batch item, once for all channel groups
   (grid_sample.c's sort_chunk phase): the points' tile keys (simd_binning.h's irgrid_tile_keys) and a
   stable counting sort of their coordinates into tile order (irgrid_sort_by_tile). Then per channel
   group (binned_span): the run over them writing each point's channels as one pixel (one-channel
   pixels: a plane a channel), and irgrid_unbin putting the outputs back in point order. A point's
   result depends only on its own coordinates, so the order changes no bit of it. Whether a chunk pays
   for this is judged from its first IRGRID_BIN_SAMPLE points (irgrid_scattered): a smooth warp's
   consecutive points mostly share a tile and run faster in their own order. */
#ifndef IRGRID_BINNING_H
#define IRGRID_BINNING_H

#include <string.h>

#include "guards.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IRGRID_BIN_SAMPLE 1024  /* points irgrid_scattered looks at (a multiple of the vector width) */

/* The order of a tile key's dims irgrid_scattered judges by (simd_binning.h's irgrid_tile_keys): the
   outermost most significant. */
static const int irgrid_dims_in_order[3] = {0, 1, 2};

/* Tiles along each dim (x_size pixels along rows; `rows` rows, or the fewest of 2, 4, 8, ... times as
   many that keep the tiles within `most`; `planes` along the others; taps from 2 pixels before to 2 after
   the volume) and the map from a normalised coordinate g to its tile, floor(g * scale + offset)
   (GridSample's pixel coordinate, plus 2, over the tile size); returns how many tiles in all (more than
   `most` only where even one tile of all the rows is too many). judge_rows: tile rows per tile of at
   least 4 rows, the ones irgrid_scattered judges by. */
static inline irgrid_index irgrid_tiling(irgrid_index rank, const irgrid_index* dims, int align_corners,
                                         irgrid_index most, irgrid_index planes, irgrid_index rows,
                                         irgrid_index x_size, irgrid_index* tiles, double* scale, double* offset,
                                         irgrid_index* judge_rows) {
    irgrid_index k, size, total;
    for (;;) {
        total = 1;
        for (k = 0; k < rank; k++) {
            size = k == rank - 1 ? x_size : (k == rank - 2 ? rows : planes);
            tiles[k] = (dims[k] + 4 + size - 1) / size;
            scale[k] = (double)(align_corners ? dims[k] - 1 : dims[k]) / (2.0 * size);
            offset[k] = (((double)(dims[k] - 1)) / 2.0 + 2.0) / (double)size;
            total *= tiles[k];
        }
        if (total <= most || rank < 2 || rows >= dims[rank - 2] + 4) {
            judge_rows[0] = 4 / rows > 1 ? 4 / rows : 1;
            return total;
        }
        rows *= 2;
    }
}

/* A tile key's tile of judge_rows tile rows (the same pixels along rows, outer dims as they are). */
static inline irgrid_index irgrid_judged_tile(int key, irgrid_index row_tiles, irgrid_index x_tiles,
                                              irgrid_index judge_rows) {
    irgrid_index x = key % x_tiles, row = key / x_tiles;
    return (row / row_tiles * row_tiles + row % row_tiles / judge_rows) * x_tiles + x;
}

/* Whether more than every other one of m consecutive points changes tile, tiles of at least 4 rows
   (judge_rows tile rows: irgrid_tiling). Judged by tiles of 4 rows, the benchmark's smooth warps change
   tile at 12-20% of their points and run faster unbinned; by 1-row tiles, at 25-33%, and a warp turned
   to run down the rows would change at every point. Tiles of 4 rows or more are their own judged tiles
   (judge_rows 1: the keys compared as they are); the divisions of irgrid_judged_tile at every point had
   taken 4% of a smooth grid's time over one-channel pixels. */
static inline int irgrid_scattered(const int* keys, irgrid_index m, irgrid_index row_tiles, irgrid_index x_tiles,
                                   irgrid_index judge_rows) {
    irgrid_index i, changes = 0, tile, before;
    if (m < 2)
        return 0;
    before = judge_rows == 1 ? keys[0] : irgrid_judged_tile(keys[0], row_tiles, x_tiles, judge_rows);
    for (i = 1; i < m; i++) {
        tile = judge_rows == 1 ? keys[i] : irgrid_judged_tile(keys[i], row_tiles, x_tiles, judge_rows);
        changes += tile != before;
        before = tile;
    }
    return 2 * changes > m;
}

/* 3-D points g[0, n) (3 coordinates each: only 3-D cubic bins) stably sorted by their tile keys, given
   in slot: their coordinates into `binned`, and slot[i] set to point i's position there (counts:
   n_tiles ints; order: n ints, the points in tile order). The positions are scattered first and the
   coordinates then gathered in order: scattering each point's coordinates to its position stalled on
   the stores (each a random line). The gather is spelled out for 3 coordinates: a loop over them per
   point took 1.1-1.3x sort_chunk's CPU time (perf, random grid). */
#define IRGRID_SORT_BY_TILE(T, name)                                                                   \
    static inline void name(const T* g, irgrid_index n, irgrid_index n_tiles, int* counts, int* slot,  \
                            int* order, T* binned) {                                                    \
        irgrid_index i, j, t, total = 0, count;                                                        \
        memset(counts, 0, (size_t)n_tiles * sizeof(int));                                              \
        for (i = 0; i < n; i++)                                                                        \
            counts[slot[i]] += 1;                                                                      \
        for (t = 0; t < n_tiles; t++) {                                                                \
            count = counts[t];                                                                         \
            counts[t] = (int)total;                                                                    \
            total += count;                                                                            \
        }                                                                                              \
        for (i = 0; i < n; i++) {                                                                      \
            t = slot[i];                                                                               \
            slot[i] = counts[t];                                                                       \
            order[counts[t]] = (int)i;                                                                 \
            counts[t] += 1;                                                                            \
        }                                                                                              \
        for (j = 0; j < n; j++) {                                                                      \
            i = order[j];                                                                              \
            binned[3 * j] = g[3 * i];                                                                  \
            binned[3 * j + 1] = g[3 * i + 1];                                                          \
            binned[3 * j + 2] = g[3 * i + 2];                                                          \
        }                                                                                              \
    }
IRGRID_SORT_BY_TILE(float, irgrid_sort_by_tile_f32)
IRGRID_SORT_BY_TILE(double, irgrid_sort_by_tile_f64)
#undef IRGRID_SORT_BY_TILE

#ifdef __cplusplus
}
#endif
#endif

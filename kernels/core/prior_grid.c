/* ExperimentalDetectronPriorGridGenerator-6 (prior_grid.h). */
#include <string.h>

#include "prior_grid.h"

/* Rows [row_start, row_stop) of the grid, in T's arithmetic. */
#define IRGRID_PRIOR_ROWS(T)                                                                          \
    const T* priors = (const T*)p->priors;                                                            \
    T* out = (T*)p->out;                                                                              \
    const T step_w = (T)p->step_w, step_h = (T)p->step_h, half = (T)0.5;                              \
    const irgrid_index n_priors = p->n_priors, layer_w = p->layer_w;                                  \
    irgrid_index h, w, s;                                                                             \
    for (h = row_start; h < row_stop; h++) {                                                          \
        const T cy = step_h * ((T)h + half);                                                          \
        for (w = 0; w < layer_w; w++) {                                                               \
            const T cx = step_w * ((T)w + half);                                                      \
            T* o = out + (h * layer_w + w) * n_priors * 4;                                            \
            for (s = 0; s < n_priors; s++) {                                                          \
                o[4 * s + 0] = priors[4 * s + 0] + cx;                                                \
                o[4 * s + 1] = priors[4 * s + 1] + cy;                                                \
                o[4 * s + 2] = priors[4 * s + 2] + cx;                                                \
                o[4 * s + 3] = priors[4 * s + 3] + cy;                                                \
            }                                                                                         \
        }                                                                                             \
    }

static void irgrid_prior_rows_f32(const irgrid_prior_grid* p, irgrid_index row_start, irgrid_index row_stop) {
    IRGRID_PRIOR_ROWS(float)
}

static void irgrid_prior_rows_f64(const irgrid_prior_grid* p, irgrid_index row_start, irgrid_index row_stop) {
    IRGRID_PRIOR_ROWS(double)
}

int irgrid_prior_grid_plan(irgrid_prior_grid* p) {
    irgrid_index row_values;
    const irgrid_index limit = (irgrid_index)IRGRID_INDEX_LIMIT;
    memset(&p->schedule, 0, sizeof(p->schedule));
    p->rows_per_unit = 1;
    if (p->n_priors < 0 || p->layer_h < 0 || p->layer_w < 0)
        return IRGRID_E_DIMS;
    p->schedule.phases = 1;
    if (p->n_priors == 0 || p->layer_h == 0 || p->layer_w == 0)
        return IRGRID_OK;
    if (p->n_priors > limit / 4 / p->layer_w || p->layer_h > limit / 4 / p->layer_w / p->n_priors)
        return IRGRID_E_SIZE;
    row_values = p->layer_w * p->n_priors * 4;
    p->rows_per_unit = IRGRID_PRIOR_GRID_VALUES / row_values > 1 ? IRGRID_PRIOR_GRID_VALUES / row_values : 1;
    p->schedule.units[0] = (p->layer_h + p->rows_per_unit - 1) / p->rows_per_unit;
    return IRGRID_OK;
}

void irgrid_prior_grid_run(const irgrid_prior_grid* p, int phase, void* shared, void* worker_scratch,
                           irgrid_index begin, irgrid_index end) {
    const irgrid_index row_start = begin * p->rows_per_unit;
    const irgrid_index row_stop = end * p->rows_per_unit < p->layer_h ? end * p->rows_per_unit : p->layer_h;
    (void)phase; (void)shared; (void)worker_scratch;
    if (p->f64)
        irgrid_prior_rows_f64(p, row_start, row_stop);
    else
        irgrid_prior_rows_f32(p, row_start, row_stop);
}

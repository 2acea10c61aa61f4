/* ExperimentalDetectronPriorGridGenerator-6: every prior shifted to every cell centre of the grid
   (README.md, "The shape of a kernel").

       out[h, w, s, :] = priors[s, :] + (cx, cy, cx, cy),  cx = step_w * (w + 0.5), cy = step_h * (h + 0.5)

   in the data's type (f32 for f32, as OpenVINO's CPU plugin computes). The work unit is a run of whole
   grid rows holding about IRGRID_PRIOR_GRID_VALUES output values, its length fixed by the shapes alone. */
#ifndef IRGRID_PRIOR_GRID_H
#define IRGRID_PRIOR_GRID_H

#include "guards.h"
#include "schedule.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output values per work unit: enough that waking a thread pays off. */
#define IRGRID_PRIOR_GRID_VALUES 65536

typedef struct {
    /* The problem, set by the caller. */
    int f64;                            /* 0: the data pointers are float, 1: double */
    irgrid_index n_priors;              /* rows of priors (n_priors, 4) */
    irgrid_index layer_h, layer_w;      /* the grid */
    double step_w, step_h;              /* cell size; for f32, values a float holds exactly */
    const void* priors;
    void* out;                          /* (layer_h, layer_w, n_priors, 4) */
    /* Derived by irgrid_prior_grid_plan. */
    irgrid_index rows_per_unit;
    irgrid_schedule schedule;           /* one phase of ceil(layer_h / rows_per_unit) units */
} irgrid_prior_grid;

int irgrid_prior_grid_plan(irgrid_prior_grid* p);
void irgrid_prior_grid_run(const irgrid_prior_grid* p, int phase, void* shared, void* worker_scratch,
                           irgrid_index begin, irgrid_index end);

#ifdef __cplusplus
}
#endif

#endif

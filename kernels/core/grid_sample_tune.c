/* GridSample's path policies chosen by timing them on the running CPU (grid_sample.h's
   irgrid_grid_sample_tune).

   Why: the plan's thresholds (when to interleave, 8- or 16-channel pixels, gathers or loads, binning)
   were measured on the hosts this project had, AMD Zen 4 and Zen 5 and a Cascade Lake Xeon, and a
   threshold tuned on one CPU can lose on another (issue 42: gathers cost several times more on some
   Intel cores than on Zen 5; on Zen 5 itself 2-D nearest of 32 channels ran 0.94-0.96x the time with
   8-channel pixels against the plan's 16). Every candidate here gives the same bits as the plan's own
   choice, which the tuner checks on the call it times, so a tuned layer computes what an untuned one
   does, only on the path this CPU runs fastest. */
#include <stdint.h>
#include <string.h>

#include "grid_sample.h"

/* Rounds of timed calls (each candidate TUNE_CALLS calls back to back a round: the first after another
   candidate's finds the caches holding that one's scratch, which a model's calls of one plan do not; the
   fastest counts), the margin by which a candidate must beat the plan's own choice to replace it (the
   host's noise between calls is a few percent), and the time a candidate may take, over the fastest
   one's after any round, before it is dropped. A call of more than TUNE_MAX_SECONDS is not tuned (its
   candidates' calls would cost a start-up of seconds), nor one of fewer than TUNE_MIN_VALUES output
   values (a few microseconds: what a faster path saves is small beside its candidates' calls). */
#define TUNE_ROUNDS 4
#define TUNE_CALLS 2
#define TUNE_MARGIN 0.05
#define TUNE_DROP 1.5
#define TUNE_MAX_SECONDS 0.05
#define TUNE_MIN_VALUES 16384

/* The policies a candidate sets. */
enum { POLICIES = 4, CANDIDATES = 1 + 2 * POLICIES };

static int* policy_of(irgrid_grid_sample* p, int k) {
    return k == 0 ? &p->interleave : (k == 1 ? &p->avx512 : (k == 2 ? &p->gathers : &p->binning));
}

/* Whether two plans run the same code over the same units (the fields a run reads besides the
   problem's own). */
static int same_plan(const irgrid_grid_sample* a, const irgrid_grid_sample* b) {
    const irgrid_schedule *s = &a->schedule, *t = &b->schedule;
    int k;
    if (a->path != b->path || a->loads != b->loads || a->wide != b->wide || a->group != b->group
        || a->span != b->span || a->lanes != b->lanes || a->rows != b->rows || a->pixel != b->pixel
        || a->piece != b->piece || a->bin_chunk != b->bin_chunk || a->n_tiles != b->n_tiles || a->streams != b->streams
        || (a->path == IRGRID_GS_BINNED && a->binning != b->binning))  /* (the sort reads binning ALWAYS) */
        return 0;
    if (s->phases != t->phases || s->rounds != t->rounds || s->workers != t->workers || s->in_order != t->in_order
        || s->worker_bytes != t->worker_bytes || s->shared_bytes != t->shared_bytes)
        return 0;
    for (k = 0; k < IRGRID_MAX_PHASES; k++)
        if (s->units[k] != t->units[k])
            return 0;
    return 1;
}

/* Whether p runs cubic's separable rows (a row scratch on the interleaved, shared or binned path; the plan
   sets `rows` on the gather path too, where the row layout would have been). */
static int row_run(const irgrid_grid_sample* p) {
    return p->rows && (p->path == IRGRID_GS_INTERLEAVE || p->path == IRGRID_GS_SHARED || p->path == IRGRID_GS_BINNED);
}

/* The candidates: p as planned, then p with one policy set to NEVER or to ALWAYS, each that plans a run of
   its own. Not the scalar blocks where p has a vector path (several times slower wherever both run), nor,
   in cubic, a row run where p has none or the other way round, or another row layout (the row runs sum
   in their own order: other bits, which the bit check would only find after a call of each). */
static int candidates(const irgrid_grid_sample* p, irgrid_grid_sample* cand) {
    static const int values[2] = {IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS};
    int n = 0, k, v, c;
    cand[n++] = *p;
    for (k = 0; k < POLICIES; k++)
        for (v = 0; v < 2; v++) {
            irgrid_grid_sample q = *p;
            if (*policy_of(&q, k) == values[v])
                continue;
            *policy_of(&q, k) = values[v];
            if (irgrid_grid_sample_plan(&q) != IRGRID_OK || (q.path == IRGRID_GS_BLOCKS && p->path != IRGRID_GS_BLOCKS)
                || (p->mode == IRGRID_MODE_CUBIC && (row_run(&q) != row_run(p) || q.rows != p->rows)))
                continue;
            for (c = 0; c < n && !same_plan(&cand[c], &q); c++)
                ;
            if (c == n)
                cand[n++] = q;
        }
    return n;
}

/* Drops the candidates (but the first) slower than TUNE_DROP times the fastest so far. */
static void drop_slow(int n, const double* best, int* alive) {
    double fastest = best[0];
    int c;
    for (c = 1; c < n; c++)
        if (alive[c] && best[c] < fastest)
            fastest = best[c];
    for (c = 1; c < n; c++)
        if (alive[c] && best[c] > fastest * TUNE_DROP)
            alive[c] = 0;
}

int irgrid_grid_sample_tune(irgrid_grid_sample* p, void* spare, irgrid_grid_sample_timed_run run, void* context) {
    irgrid_grid_sample cand[CANDIDATES];
    double best[CANDIDATES], t;
    int alive[CANDIDATES], n, c, k, r, round, chosen = 0;
    const int status = irgrid_grid_sample_plan(p);
    void* const output = p->output;
    size_t bytes;
    if (status != IRGRID_OK)
        return -1;
    cand[0] = *p;
    bytes = (size_t)(p->batch * p->channels * p->points) * (p->dtype == IRGRID_F32 ? 4 : 8);
    n = p->batch * p->channels * p->points < TUNE_MIN_VALUES ? 1 : candidates(p, cand);
    /* the plan's own result into the output; each other candidate's into `spare`, kept only where it
       has the same bits (a first call, which may take fresh scratch: its time is not judged alone) */
    best[0] = run(&cand[0], context);
    if (best[0] < 0)
        return -1;
    if (n == 1 || best[0] > TUNE_MAX_SECONDS)
        return 0;
    alive[0] = 1;
    /* the other candidates' output as far past a 64-byte line as the call's own: the runs stream a large
       output only where its planes start on lines, and split stores across lines elsewhere (a spare
       aligned otherwise timed 3-D cubic's 16-channel pixels 0.98x the rules' plan where they took 0.75x) */
    spare = (char*)spare + (((uintptr_t)output - (uintptr_t)spare) & 63);
    for (c = 1; c < n; c++) {
        cand[c].output = spare;
        best[c] = run(&cand[c], context);
        alive[c] = best[c] >= 0 && memcmp(spare, output, bytes) == 0;
    }
    for (round = 0; round < TUNE_ROUNDS; round++) {  /* each candidate once a round, in a rotating order */
        for (r = 0; r < n; r++) {
            c = (r + round) % n;
            for (k = 0; k < TUNE_CALLS && alive[c]; k++) {
                t = run(&cand[c], context);
                if (t < 0 && c == 0)
                    return -1;
                if (t < 0)
                    alive[c] = 0;
                else if (t < best[c])
                    best[c] = t;
            }
        }
        drop_slow(n, best, alive);
    }
    for (c = 1; c < n; c++)
        if (alive[c] && best[c] < best[chosen] && best[c] < best[0] * (1.0 - TUNE_MARGIN))
            chosen = c;
    *p = cand[chosen];
    p->output = output;
    return chosen;
}

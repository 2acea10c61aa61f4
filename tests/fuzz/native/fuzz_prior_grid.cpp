// libFuzzer target: ExperimentalDetectronPriorGridGenerator's kernel through the C core's contract
// (kernels/core/prior_grid.h), under ASan and UBSan: fuzzed prior count and grid (0 to 2^63 - 1, and
// negative), steps and prior values (NaN, +-Inf, huge, denormal, exact halves), f32 or f64.
//
// Oracle (docs/fuzzing.md): no sanitizer report; the plan refuses with an IRGRID_E_* code and accepts
// every small valid problem; its units cover every grid row; the output is the same bits on one worker
// and on 2-5 (every value written); tame priors and steps give finite values.
extern "C" {
#include "prior_grid.h"
}
#include "common.hpp"

using namespace fuzz;

template <class T>
static void run(FuzzedDataProvider& in, irgrid_prior_grid& p, int64_t priors_n, int64_t out_n) {
    Buffer priors(priors_n * sizeof(T), 0), out_a(out_n * sizeof(T), 0xA5), out_b(out_n * sizeof(T), 0x5A);
    fill_values(in, Fill::from(in), priors.as<T>(), priors_n);
    p.priors = priors.data;
    same_bits_on_any_workers(in, p, irgrid_prior_grid_run, p.out, out_a, out_b);
    const T steps[2] = {(T)p.step_w, (T)p.step_h};
    if (tame(priors.as<T>(), priors_n, 1e6) && tame(steps, 2, 1e6)) FUZZ_CHECK(tame(out_a.as<T>(), out_n, 1e30));
}

static double pick_step(FuzzedDataProvider& in) {
    if (in.ConsumeIntegral<uint8_t>() < 32) return specials()[in.ConsumeIntegralInRange<size_t>(0, specials().size() - 1)];
    return in.ConsumeIntegralInRange<int>(0, 64) / 2.0;  // as a float holds them exactly (prior_grid.h)
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    irgrid_prior_grid p{};
    p.f64 = in.ConsumeBool();
    p.n_priors = pick_size(in, 5);
    p.layer_h = pick_size(in, 40);
    p.layer_w = pick_size(in, 40);
    p.step_w = pick_step(in);
    p.step_h = pick_step(in);

    const int status = irgrid_prior_grid_plan(&p);
    const bool small_valid = p.n_priors >= 0 && p.n_priors <= 1 << 10 && p.layer_h >= 0 && p.layer_h <= 1 << 10
                             && p.layer_w >= 0 && p.layer_w <= 1 << 10;
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return 0;
    }
    const irgrid_schedule& s = p.schedule;
    FUZZ_CHECK(s.worker_bytes == 0 && s.shared_bytes == 0 && s.phases == 1);
    FUZZ_CHECK(p.rows_per_unit >= 1);
    if (p.n_priors && p.layer_w) FUZZ_CHECK(s.units[0] >= (p.layer_h + p.rows_per_unit - 1) / p.rows_per_unit);
    const int64_t priors_n = times(p.n_priors, 4), out_n = times(times(times(p.layer_h, p.layer_w), p.n_priors), 4);
    if (priors_n < 0 || out_n < 0 || priors_n + out_n > MAX_ELEMENTS) return 0;  // planned, too large to run here
    if (p.f64)
        run<double>(in, p, priors_n, out_n);
    else
        run<float>(in, p, priors_n, out_n);
    return 0;
}

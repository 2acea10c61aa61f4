// libFuzzer target: AffineGrid through the C core's contract (kernels/core/affine_grid.h), under ASan
// and UBSan: fuzzed dtype, rank (1-3 and beyond), lattice dims (0 to 2^63 - 1), align_corners, batch,
// thread hint, and theta values (NaN, +-Inf, huge, denormal, exact halves).
//
// Oracle (docs/fuzzing.md): no sanitizer report; the plan refuses with an IRGRID_E_* code and accepts
// every small valid problem, with no scratch; the grid is the same bits run on one worker and on 2-5
// workers (every value written); a finite theta of tame values gives a finite grid.
extern "C" {
#include "affine_grid.h"
}
#include "common.hpp"

using namespace fuzz;

template <class T>
static void run(FuzzedDataProvider& in, irgrid_affine_grid& p, int64_t theta_n, int64_t grid_n) {
    Buffer theta(theta_n * sizeof(T), 0), grid_a(grid_n * sizeof(T), 0xA5), grid_b(grid_n * sizeof(T), 0x5A);
    fill_values(in, Fill::from(in), theta.as<T>(), theta_n);
    p.theta = theta.data;
    same_bits_on_any_workers(in, p, irgrid_affine_grid_run, p.grid, grid_a, grid_b);
    if (tame(theta.as<T>(), theta_n, 1e6)) FUZZ_CHECK(tame(grid_a.as<T>(), grid_n, 1e30));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    irgrid_affine_grid p{};
    p.dtype = pick_code(in, 2);
    const uint8_t rank_kind = in.ConsumeIntegral<uint8_t>();
    p.rank = rank_kind < 240 ? 1 + rank_kind % 3 : pick_size(in, 4);
    const int64_t dims = p.rank < 0 ? 0 : (p.rank > IRGRID_AFFINE_MAX_RANK ? IRGRID_AFFINE_MAX_RANK : p.rank);
    for (int64_t k = 0; k < dims; k++) p.out_dims[k] = pick_size(in, 40);
    p.batch = pick_size(in, 3);
    p.align_corners = in.ConsumeBool();
    p.threads = in.ConsumeIntegralInRange<int>(0, 8);

    const int status = irgrid_affine_grid_plan(&p);
    bool small_valid = (p.dtype == IRGRID_F32 || p.dtype == IRGRID_F64) && p.rank >= 1 && p.rank <= 3 && p.batch >= 0
                       && p.batch <= 64;
    for (int64_t k = 0; k < dims; k++) small_valid = small_valid && p.out_dims[k] >= 1 && p.out_dims[k] <= 1 << 16;
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return 0;
    }
    FUZZ_CHECK(p.schedule.worker_bytes == 0 && p.schedule.shared_bytes == 0);
    int64_t points = 1;
    for (int64_t k = 0; k < p.rank; k++) points = times(points, p.out_dims[k]);
    const int64_t theta_n = times(p.batch, p.rank * (p.rank + 1)), grid_n = times(times(p.batch, points), p.rank);
    if (theta_n < 0 || grid_n < 0 || theta_n + grid_n > MAX_ELEMENTS) return 0;  // planned, too large to run here
    if (p.dtype == IRGRID_F32)
        run<float>(in, p, theta_n, grid_n);
    else
        run<double>(in, p, theta_n, grid_n);
    return 0;
}

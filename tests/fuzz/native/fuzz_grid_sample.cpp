// libFuzzer target: GridSample (and the fused AffineGrid -> GridSample, the displacement warp) through the C
// core's contract, problem struct -> irgrid_grid_sample_plan -> irgrid_grid_sample_run over every round, phase and unit
// (kernels/core/grid_sample.h), under ASan and UBSan. The fuzzer picks the problem (dtype, rank, dims
// from 0 to 2^63 - 1, mode, padding, align_corners, the path policies, the thread hint) and the values
// (NaN, +-Inf, 1e30, 3.4e38, denormals, exact halves at chosen places).
//
// Oracle (docs/fuzzing.md): no sanitizer report; the plan refuses with an IRGRID_E_* code, never
// crashes, and accepts every small valid problem; its scratch stays within fuzz::MAX_SCRATCH (or, for
// a large image's planes, within what that image's bytes allow, common.hpp); the
// output is the same bits planned for 1 thread and run on one worker as planned for the fuzzed thread
// hint and run on 2-5 workers in any grouping (every output written, no scratch read before it is
// written); the path tuner (irgrid_grid_sample_tune, its times scripted by the input) writes the bits of
// the plan it started from, and the plan it returns gives them too; with the vector paths off, fused equals AffineGrid then GridSample and a displacement warp
// equals GridSample on the grid of its formula (grid_sample.h); and docs/semantics.md's
// rules per point: a NaN coordinate gives NaN, a point at infinity gives 0 under zeros padding, finite
// coordinates over tame data give finite values.
extern "C" {
#include "affine_grid.h"
#include "grid_sample.h"
}
#include "common.hpp"

using namespace fuzz;

namespace {

double pick_special(FuzzedDataProvider& in) {
    return specials()[in.ConsumeIntegralInRange<size_t>(0, specials().size() - 1)];
}

int64_t product(const irgrid_index* dims, int64_t rank) {
    int64_t n = 1;
    for (int64_t k = 0; k < rank; k++) n = times(n, dims[k]);
    return n;
}

// Plan `p` for one thread and run it on one worker into a fresh output filled with `garbage`.
void run_alone(irgrid_grid_sample p, Buffer& out, unsigned char garbage) {
    p.threads = 1;
    p.output = out.data;
    if (out.bytes) std::memset(out.data, garbage, out.bytes);
    FUZZ_CHECK(irgrid_grid_sample_plan(&p) == IRGRID_OK);
    run_schedule(p, irgrid_grid_sample_run, Split{}, garbage);
}

// `p`, whose coordinates the kernel computes (a fused AffineGrid, a displacement), wrote into out_a the bits
// GridSample gives on `grid`, the same coordinates computed apart.
void check_same_on_grid(const irgrid_grid_sample& p, const Buffer& grid, const Buffer& out_a, Buffer& out_b) {
    irgrid_grid_sample unfused = p;
    unfused.affine = 0;
    unfused.displaced = 0;
    unfused.coords = grid.data;
    run_alone(unfused, out_b, 0x5A);
    FUZZ_CHECK(std::memcmp(out_a.data, out_b.data, out_a.bytes) == 0, p.path);
}

// irgrid_grid_sample_tune's timed run, scripted: the candidate planned and run on one worker, its "seconds"
// drawn from the input (a few of them failures), so that every branch of the tuner's choice is reached.
struct Script {
    FuzzedDataProvider* in;
};

double scripted_run(irgrid_grid_sample* p, void* context) {
    FuzzedDataProvider& in = *static_cast<Script*>(context)->in;
    FUZZ_CHECK(irgrid_grid_sample_plan(p) == IRGRID_OK, p->interleave * 3 + p->avx512, p->gathers * 3 + p->binning);
    run_schedule(*p, irgrid_grid_sample_run, Split{}, 0x3C);
    const int draw = in.ConsumeIntegralInRange<int>(0, 63);
    return draw == 0 ? -1.0 : draw * 1e-3;
}

// The tuner on p (planned), its output into out_b: out_a's bits (the rules' plan, run alone), and so are
// those of the plan it leaves in p.
void check_tuned(FuzzedDataProvider& in, const irgrid_grid_sample& p, const Buffer& out_a, Buffer& out_b) {
    irgrid_grid_sample t = p;
    Buffer spare(out_a.bytes + 64, 0x77);
    Script script{&in};
    t.output = out_b.data;
    if (out_b.bytes) std::memset(out_b.data, 0x3C, out_b.bytes);
    const int chosen = irgrid_grid_sample_tune(&t, spare.data, scripted_run, &script);
    if (chosen < 0) return;  // the rules' plan "failed" (a drawn failure): its output is not promised
    FUZZ_CHECK(chosen < 9 && t.output == out_b.data, chosen);
    if (out_a.bytes) FUZZ_CHECK(std::memcmp(out_a.data, out_b.data, out_a.bytes) == 0, chosen, t.path);
    run_alone(t, out_b, 0x3C);
    if (out_a.bytes) FUZZ_CHECK(std::memcmp(out_a.data, out_b.data, out_a.bytes) == 0, chosen, t.path);
}

template <class T>
void check_points(const irgrid_grid_sample& p, const T* coords, const T* out, bool tame_data) {
    const int64_t r = p.rank;
    for (int64_t b = 0; b < p.batch; b++)
        for (int64_t q = 0; q < p.points; q++) {
            bool nan = false, infinite = false;
            for (int64_t d = 0; d < r; d++) {
                const T g = coords[(b * p.points + q) * r + d];
                nan = nan || g != g;
                infinite = infinite || (g == g && !(std::fabs((double)g) < IRGRID_AT_INFINITY));
            }
            for (int64_t c = 0; c < p.channels; c++) {
                const T y = out[(b * p.channels + c) * p.points + q];
                if (nan && !infinite) FUZZ_CHECK(y != y, (long long)b, (long long)q);
                if (infinite && !nan && p.padding == IRGRID_PAD_ZEROS) FUZZ_CHECK(y == 0, (long long)b, (long long)q);
                if (!nan && !infinite && tame_data) FUZZ_CHECK(std::isfinite((double)y), (long long)b, (long long)q);
            }
        }
}

template <class T>
void run(FuzzedDataProvider& in, irgrid_grid_sample p, int64_t data_n, int64_t coords_n, int64_t out_n) {
    Buffer data(data_n * sizeof(T), 0), coords(coords_n * sizeof(T), 0);
    Buffer out_a(out_n * sizeof(T), 0xA5), out_b(out_n * sizeof(T), 0x5A);
    fill_values(in, Fill::from(in), data.as<T>(), data_n);
    fill_values(in, Fill::from(in), coords.as<T>(), coords_n);
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // a warp's coordinates: rising with the point's index
        T* c = coords.as<T>();                         // (2-D nearest by points shares a scratch on such grids)
        for (int64_t i = 0; i < coords_n; i++)
            if (std::isfinite((double)c[i])) c[i] = (T)(-1.1 + 2.2 * double(i) / double(coords_n));
    }
    p.data = data.data;
    p.coords = coords.data;

    run_alone(p, out_a, 0xA5);

    irgrid_grid_sample q = p;  // the caller's thread hint, on several workers, reading either way
    q.gathers = in.ConsumeIntegralInRange<int>(IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS);
    q.output = out_b.data;
    FUZZ_CHECK(irgrid_grid_sample_plan(&q) == IRGRID_OK);
    run_schedule(q, irgrid_grid_sample_run, pick_split(in), 0x5A);
    if (out_a.bytes) FUZZ_CHECK(std::memcmp(out_a.data, out_b.data, out_a.bytes) == 0, q.path, q.threads);
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) check_tuned(in, p, out_a, out_b);

    const T* grid = p.affine ? nullptr : coords.as<T>();
    const int64_t lattice_n = p.affine ? times(p.batch, times(p.points, p.rank)) : 0;
    Buffer lattice(lattice_n > 0 && out_a.bytes ? lattice_n * sizeof(T) : 0, 0);
    if (p.affine && !p.simd && lattice.bytes) {  // fused == AffineGrid, then GridSample on its grid
        irgrid_affine_grid a{};
        a.dtype = p.dtype;
        a.batch = p.batch;
        a.rank = p.rank;
        for (int64_t k = 0; k < p.rank; k++) a.out_dims[k] = p.out_dims[k];
        a.align_corners = p.grid_align_corners;
        a.theta = coords.data;
        a.grid = lattice.data;
        a.threads = 1;
        FUZZ_CHECK(irgrid_affine_grid_plan(&a) == IRGRID_OK);
        run_schedule(a, irgrid_affine_grid_run, Split{}, 0);
        check_same_on_grid(p, lattice, out_a, out_b);
        grid = lattice.as<T>();
    }
    const int64_t displaced_n = p.displaced ? times(p.batch, times(p.points, p.rank)) : 0;
    Buffer displaced(displaced_n > 0 && out_a.bytes ? displaced_n * sizeof(T) : 0, 0);
    if (p.displaced) grid = nullptr;
    if (p.displaced && !p.simd && displaced.bytes) {  // the warp == GridSample on its formula's grid
        const irgrid_displacement& d = p.displacement;
        T* g = displaced.as<T>();
        for (int64_t b = 0; b < p.batch; b++)
            for (int64_t q = 0; q < p.points; q++) {
                int64_t rest = q;
                for (int64_t k = 0; k < p.rank; k++) {  // innermost (x) first
                    const int64_t extent = p.out_dims[p.rank - 1 - k], index = rest % extent;
                    rest /= extent;
                    const T f = coords.as<T>()[(b * d.channels + d.component[k]) * p.points + q];
                    g[(b * p.points + q) * p.rank + k] = ((T)index + (T)d.gain[k] * f) * (T)d.scale[k] + (T)d.shift[k];
                }
            }
        check_same_on_grid(p, displaced, out_a, out_b);
        grid = displaced.as<T>();
    }
    if (grid) check_points(p, grid, out_a.as<T>(), tame(data.as<T>(), data_n, 1e6));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    irgrid_grid_sample p{};
    p.dtype = pick_code(in, 2);
    const uint8_t rank_kind = in.ConsumeIntegral<uint8_t>();
    // 192-199: 2-D with outputs of 16-40 points a side, 184-191: 3-D with 7-13, so that calls reach the
    // paths that start at a block of 256 points (the pair reads at 8 and 16 lanes, the fused few-channel run);
    // 200-201: 2-D with 128-152 a side, past the 16,384 points from which 2-D nearest by points judges the
    // grid (grid_sample.c's shared_pixels)
    const bool large = rank_kind >= 192 && rank_kind < 202, large_3d = rank_kind >= 184 && rank_kind < 192;
    const int64_t large_side = rank_kind >= 200 ? 128 : 16;
    p.rank = large ? 2 : large_3d ? 3 : rank_kind < 200 ? 1 + rank_kind % 3
                     : (rank_kind < 250 ? rank_kind % 8 : pick_size(in, IRGRID_MAX_RANK + 1));
    const int64_t dims = p.rank < 0 ? 0 : (p.rank > IRGRID_MAX_RANK ? IRGRID_MAX_RANK : p.rank);
    for (int64_t k = 0; k < dims; k++) {
        p.dims[k] = pick_size(in, 6);
        p.out_dims[k] = pick_size(in, 6);
        if (large && p.out_dims[k] >= 0 && p.out_dims[k] <= 6) p.out_dims[k] = large_side + 4 * p.out_dims[k];
        if (large_3d && p.out_dims[k] >= 0 && p.out_dims[k] <= 6) p.out_dims[k] = 7 + p.out_dims[k];
    }
    p.batch = pick_size(in, 2);
    p.channels = pick_size(in, 20);
    p.mode = pick_code(in, 3);
    p.padding = pick_code(in, 3);
    p.align_corners = in.ConsumeBool();
    const uint8_t source = in.ConsumeIntegral<uint8_t>();  // the grid, a fused AffineGrid or a displacement
    p.affine = source < 64;
    p.displaced = source >= 64 && source < 112;
    p.grid_align_corners = in.ConsumeBool();
    if (p.displaced) {
        irgrid_displacement& d = p.displacement;
        d.channels = pick_size(in, 4);
        for (int64_t k = 0; k < IRGRID_AFFINE_MAX_RANK; k++) {
            d.component[k] = in.ConsumeIntegralInRange<int64_t>(-1, 4);
            d.gain[k] = in.ConsumeBool() ? 1.0 : pick_special(in);
            d.scale[k] = in.ConsumeBool() ? 2.0 / in.ConsumeIntegralInRange<int>(1, 64) : pick_special(in);
            d.shift[k] = in.ConsumeBool() ? -1.0 : pick_special(in);
        }
    }
    p.simd = in.ConsumeBool();
    p.interleave = in.ConsumeIntegralInRange<int>(IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS);
    p.binning = in.ConsumeIntegralInRange<int>(IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS);
    p.gathers = in.ConsumeIntegralInRange<int>(IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS);
    p.threads = in.ConsumeIntegralInRange<int>(0, 8);
    p.avx512 = in.ConsumeIntegralInRange<int>(IRGRID_POLICY_NEVER, IRGRID_POLICY_ALWAYS);  // 16-lane taps where the CPU has them

    irgrid_grid_sample planned = p;
    const int status = irgrid_grid_sample_plan(&planned);
    bool small_valid = (p.dtype == IRGRID_F32 || p.dtype == IRGRID_F64) && p.mode >= 0 && p.mode <= 2 && p.padding >= 0
                       && p.padding <= 2 && p.rank >= 1 && p.rank <= 3 && p.batch >= 0 && p.batch <= 64
                       && p.channels >= 0 && p.channels <= 64;
    for (int64_t k = 0; k < dims; k++)
        small_valid = small_valid && p.dims[k] >= 1 && p.dims[k] <= 64
                      && p.out_dims[k] >= (p.affine || p.displaced ? 1 : 0) && p.out_dims[k] <= 64
                      && (!p.displaced || (p.displacement.component[k] >= 0
                                           && p.displacement.component[k] < p.displacement.channels));
    small_valid = small_valid && (!p.displaced || (p.displacement.channels >= 1 && p.displacement.channels <= 64));
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return 0;
    }
    const irgrid_schedule& s = planned.schedule;
    const int64_t plane = product(p.dims, p.rank), points = product(p.out_dims, p.rank);
    const int64_t data_n = times(times(p.batch, p.channels), plane);
    // The drivers take s.workers scratches (at most the hint's; a large row scratch's plan takes fewer).
    const int64_t hint = p.threads > 1 ? p.threads : 1, workers = s.workers > 1 ? s.workers : 1;
    const int64_t past = int64_t(s.worker_bytes) - int64_t(MAX_SCRATCH);
    const int64_t data_share = times(LARGE_SCRATCH_SHARE, times(data_n, p.dtype == IRGRID_F32 ? 4 : 8));
    FUZZ_CHECK((s.shared_bytes <= MAX_SCRATCH
                || (s.shared_bytes <= MAX_LARGE_SCRATCH && int64_t(s.shared_bytes) <= data_share))
                   && (s.worker_bytes <= MAX_SCRATCH
                       || (s.worker_bytes <= MAX_LARGE_SCRATCH + MAX_SCRATCH && times(workers, past) <= data_share)),
               (long long)s.worker_bytes, (long long)s.shared_bytes);
    FUZZ_CHECK(s.workers <= hint, s.workers, p.threads);
    FUZZ_CHECK(planned.path >= IRGRID_GS_BLOCKS && planned.path <= IRGRID_GS_SHARED, planned.path);

    const int64_t coords_n = p.affine      ? times(p.batch, times(p.rank, p.rank + 1))
                             : p.displaced ? times(times(p.batch, points), p.displacement.channels)
                                           : times(times(p.batch, points), p.rank);
    const int64_t out_n = times(times(p.batch, p.channels), points);
    const int64_t work = times(out_n, planned.max_taps);
    if (data_n < 0 || coords_n < 0 || out_n < 0 || data_n + coords_n + out_n > MAX_ELEMENTS || work > MAX_WORK)
        return 0;  // planned, too large to run here
    if (p.dtype == IRGRID_F32)
        run<float>(in, planned, data_n, coords_n, out_n);
    else
        run<double>(in, planned, data_n, coords_n, out_n);
    return 0;
}

// What every native fuzz target shares (docs/fuzzing.md, "Native targets"): reading the fuzzer's bytes
// into sizes and values, buffers sized exactly (so AddressSanitizer sees one element past the end), and
// a driver that runs a planned kernel's schedule as kernels/core/README.md says a driver must, over
// one worker or several, so that the targets can compare the two.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

extern "C" {
#include "schedule.h"
#include "status.h"
}

namespace fuzz {

// A broken oracle: print why and abort, which libFuzzer reports as a crash and saves the input.
[[noreturn]] inline void fail(const char* what, long long a = 0, long long b = 0) {
    std::fprintf(stderr, "ORACLE FAILED: %s (%lld, %lld)\n", what, a, b);
    std::abort();
}
#define FUZZ_CHECK(cond, ...) \
    do { if (!(cond)) fuzz::fail("`" #cond "`" __VA_OPT__(,) __VA_ARGS__); } while (0)

// The harness' bounds: it runs a problem only when its buffers hold at most this many elements in all
// (memory stays bounded; larger problems are planned, not run) ...
constexpr int64_t MAX_ELEMENTS = int64_t(1) << 20;
// ... and at most this many taps' worth of work (outputs x taps per output), so that each input runs in
// milliseconds and the campaign's executions go to many problems rather than a few large ones. On
// fuzz_grid_sample's corpus (2026-11-29): 2^21 ran 268 exec/s, 2^19 520 (the same edges within 4 of
// 5,574), 2^17 1,098 but lost 40 edges, of paths that start at large calls.
constexpr int64_t MAX_WORK = int64_t(1) << 19;
// ... and a plan's scratch, per worker and shared, must stay within this: the core's own limits are
// 8 MiB of interleaved planes plus bins, and 2^20 points' sorted coordinates (grid_sample.c); past it,
// GridSample's interleaved planes of large images within MAX_LARGE_SCRATCH a worker (or shared by the
// workers) and LARGE_SCRATCH_SHARE times the data's bytes in all (grid_sample.c's scratch_fits).
constexpr size_t MAX_SCRATCH = size_t(64) << 20;
constexpr size_t MAX_LARGE_SCRATCH = size_t(1) << 30;
constexpr int64_t LARGE_SCRATCH_SHARE = 4;

// a * b, or -1 when either is negative or the product passes 2^60 (so that the harness' sizes, and sums
// of a few of them, never overflow).
inline int64_t times(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (b != 0 && a > (int64_t(1) << 60) / b) return -1;
    return a * b;
}

// A size or count: mostly small, sometimes a boundary the plan must refuse or survive (0, negative,
// 2^31, 2^48, PTRDIFF_MAX ...), sometimes any 64-bit value.
inline int64_t pick_size(FuzzedDataProvider& in, int64_t small_max) {
    static const int64_t edges[] = {0, -1, 1, 2, 3, 7, 64, 65, 1000, int64_t(1) << 20, (int64_t(1) << 31) - 1,
                                    int64_t(1) << 31, int64_t(1) << 32, int64_t(1) << 48, int64_t(1) << 52,
                                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    const uint8_t kind = in.ConsumeIntegral<uint8_t>();
    if (kind < 224) return in.ConsumeIntegralInRange<int64_t>(0, small_max);
    if (kind < 252) return edges[in.ConsumeIntegralInRange<size_t>(0, sizeof(edges) / sizeof(edges[0]) - 1)];
    return in.ConsumeIntegral<int64_t>();
}

// A code (mode, padding, flag, dtype ...): one of 0 .. count - 1 mostly, any int sometimes.
inline int pick_code(FuzzedDataProvider& in, int count) {
    const uint8_t kind = in.ConsumeIntegral<uint8_t>();
    if (kind < 248) return kind % count;
    return in.ConsumeIntegral<int>();
}

// Values the kernels must survive anywhere: NaN, infinities, huge (1e30 is irgrid's "at infinity",
// 3.4e38 near f32's largest, 2^52 its index clamp), denormals (f32's and f64's), signed zeros, exact
// halves (rounding ties) and values just off integers.
inline const std::vector<double>& specials() {
    static const std::vector<double> table = {
        std::nan(""), INFINITY, -INFINITY, 1e30, -1e30, 3.4e38, -3.4e38, 1e300, 4503599627370496.0,
        4503599627370497.0, -4503599627370496.0, 1e15, 1e-40, -1e-40, 5e-324, 1.17549435e-38, 0.0, -0.0,
        0.5, -0.5, 1.5, -1.5, 2.5, 1.0, -1.0, 0.99999994, 1.0000001, -0.99999994, 16777217.0, 1e6};
    return table;
}

// How a buffer is filled: a xorshift stream seeded by the input (so a few bytes fill a million values,
// deterministically), in one of several distributions, with a share of specials.
struct Fill {
    uint64_t state = 1;
    int kind = 0;          // 0: uniform [-1, 1]; 1: multiples of 1/64 in [-2, 2] (exact halves); 2: integers
                           // in [-8, 8]; 3: uniform [-1e6, 1e6]; 4: uniform [-1.25, 1.25] (grid coordinates)
    unsigned special = 0;  // per 256 values, how many are specials

    static Fill from(FuzzedDataProvider& in) {
        Fill f;
        f.state = in.ConsumeIntegral<uint64_t>() | 1;
        f.kind = in.ConsumeIntegralInRange<int>(0, 4);
        const uint8_t s = in.ConsumeIntegral<uint8_t>();
        f.special = s < 128 ? 0 : (s < 224 ? 4 : s - 200u);
        return f;
    }
    uint64_t next() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
    }
    double value() {
        const uint64_t r = next();
        if ((r & 255) < special) return specials()[(r >> 8) % specials().size()];
        const double u = double(r >> 11) / 9007199254740992.0;  // [0, 1)
        switch (kind) {
        case 0: return 2 * u - 1;
        case 1: return double(int64_t(u * 257) - 128) / 64;
        case 2: return double(int64_t(u * 17) - 8);
        case 3: return 2e6 * u - 1e6;
        default: return 2.5 * u - 1.25;
        }
    }
};

// An exactly sized, 64-byte aligned allocation (a kernel's scratch, or a tensor): ASan flags any access
// past its end. Filled with `garbage` so a result that reads what no unit wrote differs between runs.
struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    Buffer() = default;
    Buffer(size_t n, unsigned char garbage) : bytes(n) {
        if (n == 0) return;
        if (posix_memalign(&data, 64, n) != 0) fail("posix_memalign", (long long)n);
        std::memset(data, garbage, n);
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer() { std::free(data); }
    template <class T> T* as() const { return static_cast<T*>(data); }
};

// `count` values of type T from `fill`, then up to 8 specials at places the input chooses.
template <class T>
void fill_values(FuzzedDataProvider& in, Fill fill, T* values, int64_t count) {
    for (int64_t i = 0; i < count; i++) values[i] = (T)fill.value();
    const int pokes = in.ConsumeIntegralInRange<int>(0, 8);
    for (int k = 0; count > 0 && k < pokes; k++) {
        const int64_t at = in.ConsumeIntegralInRange<int64_t>(0, count - 1);
        values[at] = (T)specials()[in.ConsumeIntegralInRange<size_t>(0, specials().size() - 1)];
    }
}

// How a driver spreads each phase's units over its workers: contiguous runs (as drive.hpp and OpenMP's
// static schedule do), run last worker first; or, where the schedule allows any grouping (!in_order),
// unit by unit round robin.
struct Split {
    int workers = 1;
    bool reverse = false;
    bool round_robin = false;
};

// Runs a planned problem's schedule (kernels/core/README.md): each worker with its own scratch, reset
// before its first unit of the call, the rounds and phases in order. Scratch and shared bytes start as
// `garbage`, so a result that depends on scratch no unit wrote differs between two runs.
template <class Problem, class Run>
void run_schedule(const Problem& p, Run run, Split split, unsigned char garbage) {
    const irgrid_schedule& s = p.schedule;
    FUZZ_CHECK(s.phases >= 0 && s.phases <= IRGRID_MAX_PHASES, s.phases);
    FUZZ_CHECK(s.rounds >= 0, (long long)s.rounds);
    FUZZ_CHECK(s.worker_bytes == 0 || s.worker_bytes >= IRGRID_WORKER_HEADER, (long long)s.worker_bytes);
    int workers = split.workers;
    if (s.workers > 0 && s.workers < workers) workers = s.workers;
    Buffer shared(s.shared_bytes, garbage);
    std::vector<std::unique_ptr<Buffer>> scratch;
    for (int w = 0; w < workers; w++) {
        scratch.push_back(std::make_unique<Buffer>(s.worker_bytes, garbage));
        irgrid_worker_reset(scratch.back()->data);
    }
    const irgrid_index rounds = s.rounds > 0 ? s.rounds : 1;
    for (irgrid_index round = 0; round < rounds; round++)
        for (int k = 0; k < s.phases; k++) {
            const irgrid_index units = s.units[k];
            FUZZ_CHECK(units >= 0, (long long)units);
            const int phase = (int)(round * s.phases + k);
            const int team = units < workers ? (int)units : workers;
            if (split.round_robin && !s.in_order) {
                for (irgrid_index u = 0; u < units; u++)
                    run(&p, phase, shared.data, scratch[u % team]->data, u, u + 1);
                continue;
            }
            for (int i = 0; i < team; i++) {
                const int w = split.reverse ? team - 1 - i : i;
                const irgrid_index begin = units * w / team, end = units * (w + 1) / team;
                if (begin < end) run(&p, phase, shared.data, scratch[w]->data, begin, end);
            }
        }
}

inline Split pick_split(FuzzedDataProvider& in) {
    Split split;
    split.workers = in.ConsumeIntegralInRange<int>(2, 5);
    split.reverse = in.ConsumeBool();
    split.round_robin = in.ConsumeBool();
    return split;
}

// The thread-count independence of a planned problem whose output `out` points into: run once on one
// worker into `a` (filled with 0xA5 first), once split as the fuzzer picks into `b` (0x5A), the same bits.
template <class Problem, class Run>
void same_bits_on_any_workers(FuzzedDataProvider& in, Problem& p, Run run, void*& out, Buffer& a, Buffer& b) {
    out = a.data;
    run_schedule(p, run, Split{}, 0xA5);
    out = b.data;
    run_schedule(p, run, pick_split(in), 0x5A);
    if (a.bytes) FUZZ_CHECK(std::memcmp(a.data, b.data, a.bytes) == 0);
}

// Whether two arrays hold the same values bit for bit, except that any NaN equals any NaN: for results
// of two code paths (AVX2 and baseline), where x86's default NaN from arithmetic (sign bit set) may meet
// a NaN the kernel writes (sign bit clear); the sign of a NaN means nothing (docs/semantics.md).
template <class T>
bool same_values(const T* a, const T* b, int64_t count) {
    for (int64_t i = 0; i < count; i++)
        if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0 && !(a[i] != a[i] && b[i] != b[i])) return false;
    return true;
}

inline bool known_status(int status) { return status >= IRGRID_E_RANK && status <= IRGRID_E_SIZE; }

// Whether every value is finite and at most `bound` in magnitude.
template <class T>
bool tame(const T* values, int64_t count, double bound) {
    for (int64_t i = 0; i < count; i++)
        if (!(std::fabs((double)values[i]) <= bound)) return false;
    return true;
}

}  // namespace fuzz

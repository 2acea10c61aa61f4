// libFuzzer target: DeformConv's kernels through the C core's contract (kernels/core/deform_im2col.h),
// under ASan and UBSan: the im2col (fuzzed rank 1-3 and beyond, channels, groups and offset groups,
// dims, kernel, strides, dilations, pads of any sign and size, offsets and mask present or not, both
// boundary rules, the tile, non-temporal stores, the vector policy; data, offsets and mask with NaN,
// +-Inf, huge, denormal, exact halves) and the column transpose (rows, columns, strides, bias).
//
// Oracle (docs/fuzzing.md): no sanitizer report; the plans refuse with an IRGRID_E_* code and accept
// every small valid problem; the columns are the same bits on one worker and on 2-5, with the AVX2
// build and the baseline one, with and without streaming stores (deform_im2col.h's promise; every
// value written; a NaN's sign aside: fuzz::same_values); docs/semantics.md's rules per sample: a NaN
// offset gives NaN, an infinite one 0 whatever the mask, finite offsets over tame data and mask give
// finite columns; the transpose moves every value exactly (plus its bias) and writes nothing past a
// row of the destination.
extern "C" {
#include "deform_im2col.h"
}
#include "common.hpp"

using namespace fuzz;

namespace {

int other_simd(int simd) { return simd == IRGRID_DEFORM_SIMD_AUTO ? IRGRID_DEFORM_SIMD_BASELINE : IRGRID_DEFORM_SIMD_AUTO; }

template <class T>
void check_samples(const irgrid_deform_im2col& p, const T* offsets, const T* col, bool tame_inputs) {
    const int64_t r = p.rank, K = p.kernel_size, tile = p.tile_stop - p.tile_start, cg = p.channels / p.groups;
    const int64_t per_offset_group = p.channels / p.offset_groups;
    for (int64_t q = p.tile_start; q < p.tile_stop; q++)
        for (int64_t g = 0; g < p.offset_groups; g++)
            for (int64_t k = 0; k < K; k++) {
                bool nan = false, infinite = false;
                for (int64_t d = 0; p.has_offsets && d < r; d++) {
                    const T o = offsets[((g * K + k) * r + d) * p.points + q];
                    nan = nan || o != o;
                    infinite = infinite || std::isinf((double)o);
                }
                for (int64_t ch = g * per_offset_group; ch < (g + 1) * per_offset_group; ch++) {
                    const int64_t gc = ch / cg, c = ch % cg;
                    const T v = col[(gc * tile + (q - p.tile_start)) * K * cg + k * cg + c];
                    if (nan && !infinite) FUZZ_CHECK(v != v, (long long)q, (long long)ch);
                    if (infinite && !nan) FUZZ_CHECK(v == 0, (long long)q, (long long)ch);
                    if (!nan && !infinite && tame_inputs) FUZZ_CHECK(std::isfinite((double)v), (long long)q, (long long)ch);
                }
            }
}

template <class T>
void run_im2col(FuzzedDataProvider& in, irgrid_deform_im2col p, int64_t x_n, int64_t offsets_n, int64_t mask_n,
                int64_t col_n) {
    Buffer x(x_n * sizeof(T), 0), offsets(offsets_n * sizeof(T), 0), mask(mask_n * sizeof(T), 0);
    Buffer col_a(col_n * sizeof(T), 0xA5), col_b(col_n * sizeof(T), 0x5A);
    fill_values(in, Fill::from(in), x.as<T>(), x_n);
    fill_values(in, Fill::from(in), offsets.as<T>(), offsets_n);
    fill_values(in, Fill::from(in), mask.as<T>(), mask_n);
    p.x = x.data;
    p.offsets = offsets.data;
    p.mask = mask.data;
    p.col = col_a.data;
    run_schedule(p, irgrid_deform_im2col_run, Split{}, 0xA5);
    p.col = col_b.data;
    p.simd = other_simd(p.simd);
    p.stream = !p.stream;
    FUZZ_CHECK(irgrid_deform_im2col_plan(&p) == IRGRID_OK);
    run_schedule(p, irgrid_deform_im2col_run, pick_split(in), 0x5A);
    FUZZ_CHECK(same_values(col_a.as<T>(), col_b.as<T>(), col_n));
    const bool tame_inputs = tame(x.as<T>(), x_n, 1e6) && tame(mask.as<T>(), mask_n, 1e6);
    check_samples(p, offsets.as<T>(), col_a.as<T>(), tame_inputs);
}

void im2col(FuzzedDataProvider& in) {
    irgrid_deform_im2col p{};
    p.f64 = in.ConsumeBool();
    const uint8_t rank_kind = in.ConsumeIntegral<uint8_t>();
    p.rank = rank_kind < 224 ? 1 + rank_kind % 3 : (rank_kind < 250 ? rank_kind % 8 : (int)pick_size(in, 14));
    p.groups = pick_size(in, 3);
    p.offset_groups = pick_size(in, 3);
    const int64_t per = pick_size(in, 3), both = times(times(p.groups, p.offset_groups), per);
    p.channels = in.ConsumeIntegral<uint8_t>() < 224 && both >= 0 ? both : pick_size(in, 12);
    const int dims = p.rank < 0 ? 0 : (p.rank > IRGRID_DEFORM_MAX_RANK ? IRGRID_DEFORM_MAX_RANK : p.rank);
    int64_t points = 1;
    for (int d = 0; d < dims; d++) {
        p.in_dims[d] = pick_size(in, 6);
        p.out_dims[d] = pick_size(in, 6);
        p.kernel[d] = pick_size(in, 3);
        p.strides[d] = pick_size(in, 3);
        p.dilations[d] = pick_size(in, 3);
        p.pads_begin[d] = in.ConsumeIntegral<uint8_t>() < 224 ? in.ConsumeIntegralInRange<int64_t>(-3, 3) : pick_size(in, 9);
        points = times(points, p.out_dims[d]);
    }
    p.has_offsets = in.ConsumeIntegral<uint8_t>() < 224;
    p.has_mask = in.ConsumeBool();
    p.boundary = pick_code(in, 2);
    p.stream = in.ConsumeBool();
    p.simd = pick_code(in, 2);
    if (in.ConsumeIntegral<uint8_t>() < 240 && points >= 0) {
        p.tile_start = in.ConsumeIntegralInRange<int64_t>(0, points);
        p.tile_stop = in.ConsumeIntegralInRange<int64_t>(p.tile_start, points);
    } else {
        p.tile_start = pick_size(in, 64);
        p.tile_stop = pick_size(in, 64);
    }

    const int status = irgrid_deform_im2col_plan(&p);
    bool small_valid = p.rank >= 1 && p.rank <= 3 && (p.boundary == 0 || p.boundary == 1) && (p.simd == 0 || p.simd == 1)
                       && p.channels >= 0 && p.channels <= 64 && p.groups >= 1 && p.groups <= 64
                       && p.offset_groups >= 1 && p.offset_groups <= 64
                       && p.channels % p.groups == 0 && p.channels % p.offset_groups == 0 && p.tile_start >= 0
                       && p.tile_start <= p.tile_stop && p.tile_stop <= points;
    for (int d = 0; d < dims; d++)
        small_valid = small_valid && p.in_dims[d] >= 1 && p.in_dims[d] <= 64 && p.out_dims[d] >= 1 && p.out_dims[d] <= 64
                      && p.kernel[d] >= 1 && p.kernel[d] <= 8 && p.strides[d] >= 1 && p.strides[d] <= 64
                      && p.dilations[d] >= 1 && p.dilations[d] <= 64 && p.pads_begin[d] >= -64 && p.pads_begin[d] <= 64;
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return;
    }
    FUZZ_CHECK(p.schedule.worker_bytes == 0 && p.schedule.shared_bytes == 0);
    int64_t plane = 1;
    for (int d = 0; d < p.rank; d++) plane = times(plane, p.in_dims[d]);
    const int64_t taps = times(p.offset_groups, p.kernel_size);
    const int64_t x_n = times(plane, p.channels), offsets_n = p.has_offsets ? times(times(taps, p.rank), p.points) : 0;
    const int64_t mask_n = p.has_mask ? times(taps, p.points) : 0;
    const int64_t col_n = times(times(p.tile_stop - p.tile_start, p.kernel_size), p.channels);
    const int64_t samples = times(p.tile_stop - p.tile_start, taps);  // what check_samples visits
    if (x_n < 0 || offsets_n < 0 || mask_n < 0 || col_n < 0 || x_n + offsets_n + mask_n + col_n > MAX_ELEMENTS
        || times(col_n, int64_t(1) << p.rank) > MAX_WORK || samples < 0 || samples > MAX_ELEMENTS)
        return;  // planned, too large to run here
    if (p.f64)
        run_im2col<double>(in, p, x_n, offsets_n, mask_n, col_n);
    else
        run_im2col<float>(in, p, x_n, offsets_n, mask_n, col_n);
}

template <class T>
void run_transpose(FuzzedDataProvider& in, irgrid_deform_transpose p, int64_t src_n, int64_t dst_n, bool with_bias) {
    Buffer src(src_n * sizeof(T), 0), bias(with_bias ? p.cols * sizeof(T) : 0, 0);
    Buffer dst_a(dst_n * sizeof(T), 0xA5), dst_b(dst_n * sizeof(T), 0xA5);
    fill_values(in, Fill::from(in), src.as<T>(), src_n);
    fill_values(in, Fill::from(in), bias.as<T>(), with_bias ? p.cols : 0);
    p.src = src.data;
    p.bias = bias.data;
    p.dst = dst_a.data;
    run_schedule(p, irgrid_deform_transpose_run, Split{}, 0);
    p.dst = dst_b.data;
    p.simd = other_simd(p.simd);
    FUZZ_CHECK(irgrid_deform_transpose_plan(&p) == IRGRID_OK);
    run_schedule(p, irgrid_deform_transpose_run, pick_split(in), 0);
    if (dst_n) FUZZ_CHECK(std::memcmp(dst_a.data, dst_b.data, dst_a.bytes) == 0);
    const T* s = src.as<T>();
    const T* b = bias.as<T>();
    const T* d = dst_a.as<T>();
    T untouched;
    std::memset(&untouched, 0xA5, sizeof(T));
    for (int64_t c = 0; c < p.cols; c++)
        for (int64_t r = 0; r < p.dst_stride; r++) {
            const T want = r >= p.rows ? untouched : (b ? s[r * p.src_stride + c] + b[c] : s[r * p.src_stride + c]);
            FUZZ_CHECK(std::memcmp(&want, &d[c * p.dst_stride + r], sizeof(T)) == 0, (long long)r, (long long)c);
        }
}

void transpose(FuzzedDataProvider& in) {
    irgrid_deform_transpose p{};
    p.f64 = in.ConsumeBool();
    p.simd = pick_code(in, 2);
    p.rows = pick_size(in, 150);
    p.cols = pick_size(in, 300);  // past 256: more than one of the AVX2 transpose's source spans
    // The caller's contract: rows do not overlap (strides at least a row; the plan does not see them).
    // A row plus 0-9, or one draw in 4 the next multiple of 256 elements (f32 rows 1 KiB apart, which
    // the AVX2 transpose walks by destination strips).
    auto stride = [&](int64_t row) -> int64_t {
        if (row >= MAX_ELEMENTS)
            return row;
        return in.ConsumeIntegralInRange<int>(0, 3) == 0 ? (row + 255) / 256 * 256
                                                          : row + in.ConsumeIntegralInRange<int64_t>(0, 9);
    };
    p.src_stride = stride(p.cols);
    p.dst_stride = stride(p.rows);
    const bool with_bias = in.ConsumeBool();
    const int status = irgrid_deform_transpose_plan(&p);
    const bool small_valid = (p.simd == 0 || p.simd == 1) && p.rows >= 0 && p.rows <= 1 << 20 && p.cols >= 0
                             && p.cols <= 1 << 20;
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return;
    }
    const int64_t src_n = times(p.rows, p.src_stride), dst_n = times(p.cols, p.dst_stride);
    if (p.rows > MAX_ELEMENTS || p.cols > MAX_ELEMENTS || src_n < 0 || dst_n < 0 || src_n + dst_n > MAX_ELEMENTS)
        return;  // planned, too large to run here (an empty side does not bound the other: check both)
    if (p.f64)
        run_transpose<double>(in, p, src_n, dst_n, with_bias);
    else
        run_transpose<float>(in, p, src_n, dst_n, with_bias);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    if (in.ConsumeIntegral<uint8_t>() < 192)
        im2col(in);
    else
        transpose(in);
    return 0;
}

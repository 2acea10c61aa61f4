// What irgrid's ops compute inside OpenVINO: the C core's kernels (kernels/core), driven on the
// stream's threads (drive.hpp), over the inputs in the type irgrid's runtime computes in (tensors.hpp).
#include "ops.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "drive.hpp"
#include "errors.hpp"
#include "gemm.hpp"
#include "tensors.hpp"

extern "C" {
#include "affine_grid.h"
#include "deform_im2col.h"
#include "grid_sample.h"
}

namespace irgrid_ov {

static int code_of(const std::string& name, std::initializer_list<const char*> names) {
    int code = 0;
    for (const char* candidate : names) {
        if (name == candidate) return code;
        code++;
    }
    throw std::logic_error("unknown attribute value " + name);
}

// --- GridSample: irgrid/ops/grid_sample.py's `sample` ---

void GridSample::attributes_changed() {
    m_codes.mode = code_of(m_attrs.at("mode").text, {"nearest", "linear", "cubic"});
    m_codes.padding = code_of(m_attrs.at("padding_mode").text, {"zeros", "border", "reflection"});
    m_codes.align_corners = m_attrs.at("align_corners").flag;
}

// Whether the first inference of a shape tunes the kernel's path policies: unless IRGRID_AUTO is
// "rules" (irgrid.timing.auto_mode: how irgrid chooses where two ways both run; "measure" by default).
static bool tunes() {
    const char* mode = std::getenv("IRGRID_AUTO");
    std::string text = mode ? mode : "";
    text.erase(0, text.find_first_not_of(" \t"));
    text.erase(text.find_last_not_of(" \t") + 1);
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return (char)std::tolower(c); });
    return text != "rules";
}

struct TuneContext {
    irgrid_scratch_cache* cache;
    int threads;
};

// irgrid_grid_sample_tune's call of a candidate (irgrid_grid_sample_timed_run): the whole call, timed.
static double timed_drive(irgrid_grid_sample* p, void* context) {
    auto& c = *static_cast<TuneContext*>(context);
    try {
        const auto start = std::chrono::steady_clock::now();
        drive(*p, c.threads, irgrid_grid_sample_plan, irgrid_grid_sample_run, *c.cache);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (...) {
        return -1;
    }
}

// Sets p's policies: those chosen for its key, else (on the key's first inference) those
// irgrid_grid_sample_tune chooses where tunes(), or AUTO. Returns whether it ran p (the tuner writes the
// output, of out_bytes).
static bool tuned_policies(irgrid_grid_sample& p, size_t out_bytes, std::vector<size_t> key, std::mutex& lock,
                           std::vector<GridSample::Tuned>& tuned, irgrid_scratch_cache& cache) {
    p.interleave = p.binning = p.gathers = p.avx512 = IRGRID_POLICY_AUTO;
    {
        std::lock_guard<std::mutex> guard(lock);
        for (const auto& t : tuned)
            if (t.key == key) {
                p.interleave = t.interleave;
                p.avx512 = t.avx512;
                p.gathers = t.gathers;
                p.binning = t.binning;
                return false;
            }
    }
    irgrid_grid_sample q = p;
    bool ran = false;
    if (tunes()) {
        std::vector<unsigned char> spare(out_bytes + 64);
        TuneContext context{&cache, p.threads};
        ran = irgrid_grid_sample_tune(&q, spare.data(), timed_drive, &context) >= 0;
        irgrid_scratch_release(&cache);  // (it holds the largest candidate's scratch: the next call takes its own)
        if (!ran) return false;  // the plan failed: drive reports its error
    }
    std::lock_guard<std::mutex> guard(lock);
    tuned.push_back({std::move(key), q.interleave, q.avx512, q.gathers, q.binning});
    return ran;
}

template <class T>
static void grid_sample(const GridSample::Codes& codes, const ov::Tensor& data, const ov::Tensor& grid, ov::Tensor& out,
                        irgrid_scratch_cache& cache, std::mutex& lock, std::vector<GridSample::Tuned>& tuned) {
    std::vector<T> data_copy, grid_copy, out_copy;
    const auto& x_shape = data.get_shape();
    const auto& y_shape = out.get_shape();
    irgrid_grid_sample p{};
    p.dtype = sizeof(T) == 4 ? IRGRID_F32 : IRGRID_F64;
    p.batch = (irgrid_index)x_shape[0];
    p.channels = (irgrid_index)x_shape[1];
    p.rank = (irgrid_index)x_shape.size() - 2;
    for (irgrid_index k = 0; k < p.rank; k++) {
        p.dims[k] = (irgrid_index)x_shape[k + 2];
        p.out_dims[k] = (irgrid_index)y_shape[k + 2];
    }
    if (out.get_size() == 0) return;
    p.mode = codes.mode;
    p.padding = codes.padding;
    p.align_corners = codes.align_corners;
    p.data = values_as<T>(data, data_copy);
    p.coords = values_as<T>(grid, grid_copy);
    T* y = results_as<T>(out, out_copy);
    p.output = y;
    p.simd = 1;  // where the CPU has them and the process allows them (cpu.h: IRGRID_SIMD, ONEDNN_MAX_CPU_ISA)
    p.threads = arena_threads();
    std::vector<size_t> key(x_shape.begin(), x_shape.end());
    const auto& g_shape = grid.get_shape();
    key.insert(key.end(), g_shape.begin(), g_shape.end());
    key.push_back(sizeof(T));
    key.push_back((size_t)p.threads);
    if (!tuned_policies(p, out.get_size() * sizeof(T), std::move(key), lock, tuned, cache))
        drive(p, p.threads, irgrid_grid_sample_plan, irgrid_grid_sample_run, cache);
    if (!out_copy.empty()) store(y, out);
}

void GridSample::compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    const auto data_type = inputs[0].get_element_type();
    // Wide integers are computed in f64 (their values exceed f32's mantissa), as is anything sampled
    // with an f64 operand; everything else in f32.
    const bool wide = data_type.is_integral_number() && data_type.size() >= 4;
    if (wide || data_type == ov::element::f64 || inputs[1].get_element_type() == ov::element::f64)
        grid_sample<double>(m_codes, inputs[0], inputs[1], outputs[0], m_scratch, m_tuned_lock, m_tuned);
    else
        grid_sample<float>(m_codes, inputs[0], inputs[1], outputs[0], m_scratch, m_tuned_lock, m_tuned);
}

// --- AffineGrid: irgrid/ops/affine_grid.py's `affine_grid` ---

template <class T>
static void affine_grid(const Attrs& attrs, const ov::Tensor& theta, ov::Tensor& out, irgrid_scratch_cache& cache) {
    std::vector<T> theta_copy, out_copy;
    const auto& y_shape = out.get_shape();
    if (out.get_size() == 0) return;
    irgrid_affine_grid p{};
    p.dtype = sizeof(T) == 4 ? IRGRID_F32 : IRGRID_F64;
    p.batch = (irgrid_index)y_shape[0];
    p.rank = (irgrid_index)y_shape.size() - 2;
    for (irgrid_index k = 0; k < p.rank; k++) p.out_dims[k] = (irgrid_index)y_shape[k + 1];
    p.align_corners = attrs.at("align_corners").flag;
    p.theta = values_as<T>(theta, theta_copy);
    T* grid = results_as<T>(out, out_copy);
    p.grid = grid;
    p.threads = arena_threads();
    drive(p, p.threads, irgrid_affine_grid_plan, irgrid_affine_grid_run, cache);
    if (!out_copy.empty()) store(grid, out);
}

void AffineGrid::compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    if (inputs[0].get_element_type() == ov::element::f64)
        affine_grid<double>(m_attrs, inputs[0], outputs[0], m_scratch);
    else
        affine_grid<float>(m_attrs, inputs[0], outputs[0], m_scratch);
}

// --- DeformConv: irgrid/ops/im2col.py's `convolve`: the same tiles, layouts and GEMMs, so the same bits ---

#include "convolution_plan.inc"

// dst[c, r] = src[r, c] (+ bias[c]) for a (rows, cols) source, on the C core's blocked transpose.
template <class T>
static void transpose(const T* src, T* dst, irgrid_index rows, irgrid_index cols, irgrid_index src_stride,
                      irgrid_index dst_stride, const T* bias, int simd, int threads, irgrid_scratch_cache& cache) {
    irgrid_deform_transpose t{};
    t.f64 = sizeof(T) == 8;
    t.simd = simd;
    t.rows = rows;
    t.cols = cols;
    t.src_stride = src_stride;
    t.dst_stride = dst_stride;
    t.src = src;
    t.dst = dst;
    t.bias = bias;
    drive(t, threads, irgrid_deform_transpose_plan, irgrid_deform_transpose_run, cache);
}

template <class T>
static void deform_conv(const Attrs& attrs, const ov::TensorVector& inputs, ov::Tensor& out,
                        irgrid_scratch_cache& cache) {
    const auto& x_shape = inputs[0].get_shape();
    const auto& w_shape = inputs[1].get_shape();
    const auto& y_shape = out.get_shape();
    if (out.get_size() == 0) return;
    const int rank = (int)x_shape.size() - 2;
    const irgrid_index batch = (irgrid_index)x_shape[0], channels = (irgrid_index)x_shape[1];
    const irgrid_index out_channels = (irgrid_index)w_shape[0];
    const irgrid_index group = attrs.at("group").integer, per_group = out_channels / group;
    std::vector<int64_t> kernel(w_shape.begin() + 2, w_shape.end());
    const Geometry geometry = deform_conv_geometry(attrs, kernel);
    irgrid_index plane = 1, points = 1, kernel_size = 1;
    for (int d = 0; d < rank; d++) {
        plane *= (irgrid_index)x_shape[d + 2];
        points *= (irgrid_index)y_shape[d + 2];
        kernel_size *= kernel[d];
    }
    const irgrid_index cg = channels / group, group_rows = kernel_size * cg;
    std::vector<T> x_copy, w_copy, offsets_copy, bias_copy, mask_copy, y_copy;
    const T* x = values_as<T>(inputs[0], x_copy);
    const T* w = values_as<T>(inputs[1], w_copy);
    const T* offsets = values_as<T>(inputs[2], offsets_copy);
    const T* bias = inputs.size() > 3 && inputs[3].get_size() ? values_as<T>(inputs[3], bias_copy) : nullptr;
    const T* mask = inputs.size() > 4 ? values_as<T>(inputs[4], mask_copy) : nullptr;
    T* y = results_as<T>(out, y_copy);
    const bool openvino_gemm = sizeof(T) == 4 && gemm_on_openvino();
    const bool filters_first = openvino_gemm && per_group >= FILTERS_FIRST;
    // Output points per tile: the columns and, unless the filters come first, the GEMM block within
    // TILE_BYTES (below STREAM_MIN_CHANNELS output channels per group NARROW_TILE_BYTES), or one point's
    // (im2col.py's tile_points).
    const irgrid_index per_point = channels * kernel_size + (filters_first ? 0 : per_group);
    const size_t budget = per_group >= STREAM_MIN_CHANNELS ? TILE_BYTES : std::min(TILE_BYTES, NARROW_TILE_BYTES);
    const irgrid_index tile = std::max<irgrid_index>(
        1, std::min<irgrid_index>(points, (irgrid_index)(budget / (sizeof(T) * (size_t)std::max<irgrid_index>(1, per_point)))));
    // The work memory, kept in the op's scratch cache between calls (megabytes: allocated and faulted in
    // on every call they cost more than the layer's im2col): the columns, the GEMM's (tile, oC / group)
    // block (filters first: the output of a tile that is not all of it), one item's data channels-last,
    // and the filters reordered. Each part starts on a 64-byte boundary.
    auto aligned = [](size_t elements) { return (elements * sizeof(T) + 63) / 64 * 64; };
    const size_t column_bytes = aligned((size_t)(channels * kernel_size * tile));
    const size_t block_bytes = aligned(filters_first && tile == points ? 0 : (size_t)(tile * per_group));
    const size_t data_bytes = aligned((size_t)(plane * channels));
    Scratch memory(cache, column_bytes + block_bytes + data_bytes + aligned((size_t)(group * group_rows * per_group)));
    T* const columns = reinterpret_cast<T*>(memory.get());
    T* const block = reinterpret_cast<T*>(memory.get() + column_bytes);
    T* const data = reinterpret_cast<T*>(memory.get() + column_bytes + block_bytes);
    T* const weights = reinterpret_cast<T*>(memory.get() + column_bytes + block_bytes + data_bytes);
    // The filters in the columns' (k, c) order: (group, oC / group, K * C / group) filters first, else
    // (group, K * C / group, oC / group).
    for (irgrid_index g = 0; g < group; g++)
        for (irgrid_index o = 0; o < per_group; o++)
            for (irgrid_index c = 0; c < cg; c++)
                for (irgrid_index k = 0; k < kernel_size; k++)
                    weights[(size_t)(filters_first ? (g * per_group + o) * group_rows + k * cg + c
                                                   : (g * group_rows + k * cg + c) * per_group + o)] =
                        w[(size_t)(((g * per_group + o) * cg + c) * kernel_size + k)];
    const int threads = arena_threads();
    const int simd = IRGRID_DEFORM_SIMD_AUTO;  // as GridSample's p.simd
    // Non-temporal column stores where the tile outgrows the caches and the GEMM does enough work per
    // column value (im2col.py's STREAM_BYTES and STREAM_MIN_CHANNELS; the same bits either way).
    const int stream = (size_t)(channels * kernel_size * tile) * sizeof(T) > STREAM_BYTES && per_group >= STREAM_MIN_CHANNELS;
    for (irgrid_index item = 0; item < batch; item++) {
        transpose(x + item * channels * plane, data, channels, plane, plane, channels, static_cast<const T*>(nullptr), simd, threads, cache);
        for (irgrid_index start = 0; start < points; start += tile) {
            const irgrid_index stop = std::min(start + tile, points), n = stop - start;
            irgrid_deform_im2col p{};
            p.f64 = sizeof(T) == 8;
            p.rank = rank;
            p.channels = channels;
            for (int d = 0; d < rank; d++) {
                p.in_dims[d] = (irgrid_index)x_shape[d + 2];
                p.out_dims[d] = (irgrid_index)y_shape[d + 2];
                p.kernel[d] = geometry.kernel[d];
                p.strides[d] = geometry.strides[d];
                p.dilations[d] = geometry.dilations[d];
                p.pads_begin[d] = geometry.pads_begin[d];
            }
            p.groups = group;
            p.offset_groups = attrs.at("offset_group").integer;
            p.has_offsets = 1;
            p.has_mask = mask != nullptr;
            p.boundary = IRGRID_DEFORM_ZEROS;
            p.tile_start = start;
            p.tile_stop = stop;
            p.simd = simd;
            p.stream = stream;
            p.x = data;
            p.offsets = offsets + item * (inputs[2].get_size() / batch);
            p.mask = mask ? mask + item * (inputs[4].get_size() / batch) : nullptr;
            p.col = columns;
            drive(p, threads, irgrid_deform_im2col_plan, irgrid_deform_im2col_run, cache);
            for (irgrid_index g = 0; g < group; g++) {
                const T* col = columns + g * n * group_rows;
                const T* wg = weights + g * group_rows * per_group;
                const T* group_bias = bias ? bias + g * per_group : nullptr;
                T* yg = y + (item * out_channels + g * per_group) * points;
                if (filters_first) {  // (oC / group, n) straight into the output when the tile is all of it
                    float* target = n == points ? reinterpret_cast<float*>(yg) : reinterpret_cast<float*>(block);
                    openvino_matmul(reinterpret_cast<const float*>(wg), reinterpret_cast<const float*>(col),
                                    reinterpret_cast<const float*>(group_bias), target, (size_t)per_group,
                                    (size_t)group_rows, (size_t)n, true, threads);
                    if (n != points)
                        for (irgrid_index o = 0; o < per_group; o++)
                            std::memcpy(yg + o * points + start, block + o * n, (size_t)n * sizeof(T));
                    continue;
                }
                if (openvino_gemm)
                    openvino_matmul(reinterpret_cast<const float*>(col), reinterpret_cast<const float*>(wg), nullptr,
                                    reinterpret_cast<float*>(block), (size_t)n, (size_t)group_rows,
                                    (size_t)per_group, false, threads);
                else
                    own_gemm<T>(col, wg, block, (size_t)n, (size_t)group_rows, (size_t)per_group, threads, cache);
                transpose(block, yg + start, n, per_group, per_group, points, group_bias, simd, threads, cache);
            }
        }
    }
    if (!y_copy.empty()) store(y, out);
}

void DeformConv::compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    bool f64 = false;
    for (const auto& tensor : inputs) f64 = f64 || tensor.get_element_type() == ov::element::f64;
    if (f64)
        deform_conv<double>(m_attrs, inputs, outputs[0], m_scratch);
    else
        deform_conv<float>(m_attrs, inputs, outputs[0], m_scratch);
}

}  // namespace irgrid_ov

#include "shape_infer.hpp"

#include <algorithm>
#include <cstdint>

#include "errors.hpp"

extern "C" {
#include "guards.h"
}

namespace irgrid_ov {

static const int64_t UNKNOWN = -1;

std::string format_shape(const Info& info) {
    if (!info.rank_known) return "[...]";
    std::string out = "[";
    for (size_t i = 0; i < info.dims.size(); i++)
        out += (i ? "," : "") + (info.dims[i] < 0 ? std::string("?") : std::to_string(info.dims[i]));
    return out + "]";
}

static bool is_float(const std::string& type) { return type == "f16" || type == "bf16" || type == "f32" || type == "f64"; }

static void require_float(const Info& info, int index, const std::string& what) {
    if (!is_float(info.type)) throw shape_error(what + " must be a floating-point tensor, got " + info.type, index);
}

static int64_t merge_dim(int64_t a, int64_t b, const std::string& what, int index = -1) {
    if (a >= 0 && b >= 0 && a != b)
        throw shape_error(what + ": " + std::to_string(a) + " != " + std::to_string(b), index);
    return a >= 0 ? a : b;
}

// The product of sizes (each >= 0) in decimal, exact however large (Python's ints print so; the
// message of a count past int64 names it whole).
static std::string product_text(const std::vector<int64_t>& factors) {
    std::vector<int> digits{1};  // least significant first
    for (int64_t factor : factors) {
        unsigned __int128 carry = 0;
        for (auto& d : digits) {
            const unsigned __int128 v = (unsigned __int128)d * (uint64_t)factor + carry;
            d = (int)(v % 10);
            carry = v / 10;
        }
        while (carry) { digits.push_back((int)(carry % 10)); carry /= 10; }
    }
    while (digits.size() > 1 && digits.back() == 0) digits.pop_back();
    std::string out;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) out += (char)('0' + *it);
    return out;
}

static std::string power_text(int base, int64_t exp) { return product_text(std::vector<int64_t>(exp, base)); }

// A value of the geometry's int128 arithmetic in decimal.
static std::string int128_text(__int128 value) {
    if (value < 0) return "-" + int128_text(-value);
    std::string out;
    do { out.insert(out.begin(), (char)('0' + (int)(value % 10))); value /= 10; } while (value);
    return out;
}

static Info shaped(std::vector<int64_t> dims, const std::string& type) {
    Info info;
    info.rank_known = true;
    info.dims = std::move(dims);
    info.type = type;
    return info;
}

// --- GridSample (irgrid/ops/grid_sample.py) ---

std::vector<Info> infer_grid_sample(const Attrs& attrs, const std::vector<Info>& inputs) {
    const Info& data = inputs[0];
    const Info& grid = inputs[1];
    if (data.rank() < 3)
        throw shape_error("data must have rank at least 3 (N, C and one spatial dim), got " + format_shape(data), 0);
    const int64_t r = data.rank() - 2;
    if (grid.rank() != data.rank())
        throw shape_error("grid must have rank " + std::to_string(data.rank()) + " like the data (N, " + std::to_string(r) +
                          " spatial dims, " + std::to_string(r) + "), got " + format_shape(grid), 1);
    require_float(grid, 1, "grid");
    merge_dim(grid.dims.back(), r, "grid's last dim must equal the " + std::to_string(r) + " spatial dims of the data", 1);
    int64_t batch = merge_dim(data.dims[0], grid.dims[0], "data and grid batch sizes differ", 1);
    const std::string& mode = attrs.at("mode").text;
    int per_dim = mode == "nearest" ? 1 : (mode == "linear" ? 2 : 4);
    double taps = 1;
    for (int64_t k = 0; k < r; k++) taps *= per_dim;
    if (taps > IRGRID_MAX_TAPS)
        throw shape_error(mode + " sampling in " + std::to_string(r) + " dims needs " + power_text(per_dim, r) +
                          " taps per point; irgrid supports up to " + std::to_string(IRGRID_MAX_TAPS));
    if (data.type == "boolean") throw shape_error("boolean data is not supported", 0);
    for (int64_t k = 2; k < data.rank(); k++)
        if (data.dims[k] == 0) throw shape_error("data's spatial dims must be positive, got " + format_shape(data), 0);
    std::vector<int64_t> out{batch, data.dims[1]};
    out.insert(out.end(), grid.dims.begin() + 1, grid.dims.end() - 1);
    return {shaped(out, data.type)};
}

// --- AffineGrid (irgrid/ops/affine_grid.py) ---

static void require_rank(const Info& info, int64_t rank, int index, const std::string& what) {
    if (info.rank() != rank)
        throw shape_error(what + " must have rank " + std::to_string(rank) + ", got " + format_shape(info), index);
}

static int64_t spatial_rank(const Info& theta, const Info& size) {
    const int64_t length = size.dims[0];
    if (length >= 0 && length != 4 && length != 5)
        throw shape_error("size must have 4 elements (N, C, H, W) or 5 (N, C, D, H, W), got " + std::to_string(length), 1);
    const int64_t rows = theta.dims[1], cols = theta.dims[2];
    if (length >= 0) {
        int64_t rank = length - 2;
        if ((rows >= 0 && rows != rank) || (cols >= 0 && cols != rank + 1))
            throw shape_error("theta must have shape (N, " + std::to_string(rank) + ", " + std::to_string(rank + 1) +
                              ") for a " + std::to_string(length) + "-element size, got " + format_shape(theta), 0);
        return rank;
    }
    std::vector<int64_t> ranks;
    for (int64_t r : {2, 3})
        if ((rows < 0 || rows == r) && (cols < 0 || cols == r + 1)) ranks.push_back(r);
    if (ranks.empty()) throw shape_error("theta must have shape (N, 2, 3) or (N, 3, 4), got " + format_shape(theta), 0);
    return ranks.size() == 1 ? ranks[0] : UNKNOWN;
}

std::vector<Info> infer_affine_grid(const Attrs&, const std::vector<Info>& inputs) {
    const Info& theta = inputs[0];
    const Info& size = inputs[1];
    require_rank(theta, 3, 0, "theta");
    require_float(theta, 0, "theta");
    require_rank(size, 1, 1, "size");
    if (size.type != "i64" && size.type != "i32") throw shape_error("size must be an i64 tensor, got " + size.type, 1);
    int64_t rank = spatial_rank(theta, size);
    if (rank < 0) {
        Info out;
        out.type = theta.type;
        return {out};
    }
    if (!size.has_values) {
        std::vector<int64_t> out(rank + 2, UNKNOWN);
        out[0] = theta.dims[0];
        out[rank + 1] = rank;
        return {shaped(out, theta.type)};
    }
    const auto& values = size.values;
    for (int64_t v : values)
        if (v <= 0) {
            std::string list;
            for (size_t i = 0; i < values.size(); i++) list += (i ? ", " : "") + std::to_string(values[i]);
            throw shape_error("size [" + list + "] must be positive", 1);
        }
    int64_t batch = merge_dim(theta.dims[0], values[0], "theta's batch and size[0] differ", 1);
    std::vector<int64_t> out{batch};
    out.insert(out.end(), values.begin() + 2, values.end());
    out.push_back(rank);
    return {shaped(out, theta.type)};
}

// --- DeformConv irgrid1 (irgrid/ops/deform_conv.py) ---

static std::vector<int64_t> spatial_values(const std::vector<int64_t>& values, size_t count, const std::string& name) {
    if (values.size() == 1) return std::vector<int64_t>(count, values[0]);
    if (values.size() != count)
        throw attribute_error("attribute " + name + " needs " + std::to_string(count) + " values for this input, got " +
                              std::to_string(values.size()));
    return values;
}

static std::string list_text(const std::vector<int64_t>& values) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); i++) out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

Geometry deform_conv_geometry(const Attrs& attrs, const std::vector<int64_t>& kernel) {
    const size_t r = kernel.size();
    const auto& kernel_shape = attrs.at("kernel_shape").integers;
    if (!(kernel_shape.size() == 1 && kernel_shape[0] == 0) && kernel_shape != kernel)
        throw shape_error("kernel_shape " + list_text(kernel_shape) + " differs from W's spatial dims " + list_text(kernel), 1);
    std::vector<int64_t> pads = attrs.at("pads").integers;
    if (pads.size() == 1) pads = std::vector<int64_t>(2 * r, pads[0]);
    if (pads.size() != 2 * r)
        throw attribute_error("attribute pads needs " + std::to_string(2 * r) + " values (begins, then ends), got " +
                              std::to_string(pads.size()));
    Geometry g;
    g.kernel = kernel;
    g.strides = spatial_values(attrs.at("strides").integers, r, "strides");
    g.dilations = spatial_values(attrs.at("dilations").integers, r, "dilations");
    g.pads_begin.assign(pads.begin(), pads.begin() + r);
    g.pads_end.assign(pads.begin() + r, pads.end());
    return g;
}

static std::vector<int64_t> output_dims(const Geometry& g, const std::vector<int64_t>& in_dims) {
    std::vector<int64_t> dims;
    for (size_t axis = 0; axis < in_dims.size(); axis++) {
        if (in_dims[axis] < 0) {
            dims.push_back(UNKNOWN);
            continue;
        }
        // In int128, as Python's ints compute it: each term is an int64, so neither sum nor product overflows.
        const __int128 span = (__int128)g.dilations[axis] * (g.kernel[axis] - 1) + 1;
        const __int128 padded = (__int128)in_dims[axis] + g.pads_begin[axis] + g.pads_end[axis];
        if (padded < span)
            throw shape_error("spatial axis " + std::to_string(axis) + ": the dilated kernel (" + int128_text(span) +
                              ") is larger than the padded input (" + int128_text(padded) +
                              "); the output size would not be positive", 0);
        const __int128 out = (padded - span) / g.strides[axis] + 1;
        if (out > INT64_MAX)  // a dim OpenVINO cannot hold (irgrid's reader caps dims at 2^48 before this)
            throw shape_error("spatial axis " + std::to_string(axis) + ": the output size " + int128_text(out) +
                              " is past int64", 0);
        dims.push_back((int64_t)out);
    }
    return dims;
}

static void require_rank_like_data(const Info& info, int64_t rank, int index, const std::string& what) {
    if (info.rank() != rank)
        throw shape_error(what + " must have rank " + std::to_string(rank) + " like the data, got " + format_shape(info), index);
}

// channel_factors: the channels' count as a product (offset groups, kernel dims[, spatial dims]), empty
// while unknown; a count past int64 differs from any dim (Python compares its exact value).
static void check_sampling_input(const Info& info, int index, const std::string& what, int64_t batch,
                                 const std::vector<int64_t>& channel_factors, const std::vector<int64_t>& out_dims,
                                 int64_t rank, const std::string& per_tap) {
    require_rank_like_data(info, rank, index, what);
    require_float(info, index, what);
    merge_dim(info.dims[0], batch, what + " batch differs from the data's", index);
    const std::string channels_what = what + " channels must be offset groups x kernel size" + per_tap;
    int64_t channels = channel_factors.empty() ? UNKNOWN : 1;
    for (int64_t factor : channel_factors)
        if (channels >= 0 && __builtin_mul_overflow(channels, factor, &channels)) channels = -2;  // past int64
    if (channels != -2)
        merge_dim(info.dims[1], channels, channels_what, index);
    else if (info.dims[1] >= 0)
        throw shape_error(channels_what + ": " + std::to_string(info.dims[1]) + " != " + product_text(channel_factors), index);
    for (size_t axis = 0; axis < out_dims.size(); axis++)
        merge_dim(info.dims[2 + axis], out_dims[axis], what + " spatial dim " + std::to_string(axis) + " must equal the output's", index);
}

std::vector<Info> infer_deform_conv(const Attrs& attrs, const std::vector<Info>& inputs) {
    const Info& data = inputs[0];
    const Info& filters = inputs[1];
    const Info& offsets = inputs[2];
    for (size_t index = 1; index < inputs.size(); index++)
        if (inputs[index].type != data.type)
            throw shape_error("input " + std::to_string(index) + " has element type " + inputs[index].type + ", the data " +
                              data.type, (int)index);
    if (data.rank() < 3)
        throw shape_error("data must have rank at least 3 (N, C and a spatial dim), got " + format_shape(data), 0);
    const int64_t r = data.rank() - 2;
    int max_rank = 0;
    while ((1 << (max_rank + 1)) <= IRGRID_MAX_TAPS) max_rank++;
    if (r > max_rank)
        throw shape_error(std::to_string(r) + " spatial dims: irgrid's kernel supports up to " + std::to_string(max_rank), 0);
    require_float(data, 0, "data");
    require_rank_like_data(filters, data.rank(), 1, "filters");
    require_float(filters, 1, "filters");
    const int64_t group = attrs.at("group").integer, offset_groups = attrs.at("offset_group").integer;
    const int64_t channels = data.dims[1], out_channels = filters.dims[0];
    if (channels >= 0 && channels % group)
        throw shape_error("input channels " + std::to_string(channels) + " are not divisible by group " + std::to_string(group), 0);
    if (out_channels >= 0 && out_channels % group)
        throw shape_error("output channels " + std::to_string(out_channels) + " (filters dim 0) are not divisible by group " +
                          std::to_string(group), 1);
    merge_dim(filters.dims[1], channels < 0 ? UNKNOWN : channels / group, "filters dim 1 must be input channels / group", 1);
    if (channels >= 0 && channels % offset_groups)
        throw shape_error("input channels " + std::to_string(channels) + " are not divisible by the " +
                          std::to_string(offset_groups) + " offset groups", 0);
    std::vector<int64_t> kernel(filters.dims.begin() + 2, filters.dims.end());
    bool zero = filters.dims[0] == 0, unknown = false;
    for (int64_t k : kernel) { zero = zero || k == 0; unknown = unknown || k < 0; }
    if (zero)
        throw shape_error("filters' output channels and kernel dims must be positive, got " + format_shape(filters), 1);
    std::vector<int64_t> out_dims(r, UNKNOWN);
    std::vector<int64_t> taps;  // offset groups x kernel dims: the mask's channels (empty: unknown)
    if (!unknown) {
        Geometry g = deform_conv_geometry(attrs, kernel);
        out_dims = output_dims(g, std::vector<int64_t>(data.dims.begin() + 2, data.dims.end()));
        taps = {offset_groups};
        taps.insert(taps.end(), kernel.begin(), kernel.end());
    }
    const int64_t batch = data.dims[0];
    std::vector<int64_t> offset_channels = taps;
    if (!taps.empty()) offset_channels.push_back(r);
    check_sampling_input(offsets, 2, "offsets", batch, offset_channels, out_dims, data.rank(),
                         " x " + std::to_string(r) + " spatial dims");
    if (inputs.size() > 4) check_sampling_input(inputs[4], 4, "mask", batch, taps, out_dims, data.rank(), "");
    if (inputs.size() > 3) {
        const Info& bias = inputs[3];
        require_float(bias, 3, "B");
        if (bias.rank() != 1 || (bias.dims[0] != 0 && bias.dims[0] >= 0 && out_channels >= 0 && bias.dims[0] != out_channels))
            throw shape_error("B must be 1-D of length oC = " + (out_channels < 0 ? std::string("None") : std::to_string(out_channels)) +
                              " (or empty for no bias), got " + format_shape(bias), 3);
    }
    std::vector<int64_t> out{batch, out_channels};
    out.insert(out.end(), out_dims.begin(), out_dims.end());
    return {shaped(out, data.type)};
}

}  // namespace irgrid_ov

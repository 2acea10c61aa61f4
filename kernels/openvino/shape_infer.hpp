// Shape inference of irgrid's own operators, as irgrid's operator modules do it (irgrid/ops/*.py's
// `infer`): the same checks in the same order, the same error wording, static and dynamic dims.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attributes.hpp"

namespace irgrid_ov {

// What inference knows of a value (irgrid.registry.TensorInfo): dims (-1 unknown) when the rank is
// known, the element type name ("f32", "i64", ...), and a constant integer input's values.
struct Info {
    bool rank_known = false;
    std::vector<int64_t> dims;
    std::string type;
    bool has_values = false;
    std::vector<int64_t> values;
    int64_t rank() const { return rank_known ? (int64_t)dims.size() : -1; }
};

std::string format_shape(const Info& info);

std::vector<Info> infer_grid_sample(const Attrs& attrs, const std::vector<Info>& inputs);
std::vector<Info> infer_affine_grid(const Attrs& attrs, const std::vector<Info>& inputs);
std::vector<Info> infer_deform_conv(const Attrs& attrs, const std::vector<Info>& inputs);

// DeformConv's resolved geometry (irgrid.ops.deform_conv.Geometry), per spatial dim.
struct Geometry {
    std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
};
// The geometry of DeformConv irgrid1 for filters of spatial dims `kernel` (after infer accepted the
// inputs).
Geometry deform_conv_geometry(const Attrs& attrs, const std::vector<int64_t>& kernel);

}  // namespace irgrid_ov

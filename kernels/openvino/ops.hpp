// irgrid's own operators (version irgrid1) as native OpenVINO ops, one class per (type, version).
#pragma once

#include <mutex>
#include <vector>

#include "op.hpp"

namespace irgrid_ov {

class GridSample : public IrgridOp {
public:
    OPENVINO_OP("GridSample", "irgrid1");
    GridSample() : IrgridOp("GridSample", "irgrid1") { attributes_changed(); }
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& args) const override { return clone_as<GridSample>(args); }

    // The attributes as the C core's codes (interpolation.h).
    struct Codes {
        int mode = 0, padding = 0, align_corners = 0;
    };
    // The path policies irgrid_grid_sample_tune chose (kernels/core/grid_sample.h) for one input shape
    // (data, then grid), float type and thread count.
    struct Tuned {
        std::vector<size_t> key;
        int interleave, avx512, gathers, binning;
    };

protected:
    void attributes_changed() override;
    std::vector<Info> infer(const std::vector<Info>& inputs) const override { return infer_grid_sample(m_attrs, inputs); }
    void compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

private:
    Codes m_codes;
    // Chosen on the first inference of each key (none with IRGRID_AUTO=rules), kept for the next ones.
    mutable std::mutex m_tuned_lock;
    mutable std::vector<Tuned> m_tuned;
};

class AffineGrid : public IrgridOp {
public:
    OPENVINO_OP("AffineGrid", "irgrid1");
    AffineGrid() : IrgridOp("AffineGrid", "irgrid1") {}
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& args) const override { return clone_as<AffineGrid>(args); }

protected:
    std::vector<Info> infer(const std::vector<Info>& inputs) const override { return infer_affine_grid(m_attrs, inputs); }
    void compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
};

class DeformConv : public IrgridOp {
public:
    OPENVINO_OP("DeformConv", "irgrid1");
    DeformConv() : IrgridOp("DeformConv", "irgrid1") {}
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& args) const override { return clone_as<DeformConv>(args); }

protected:
    std::vector<Info> infer(const std::vector<Info>& inputs) const override { return infer_deform_conv(m_attrs, inputs); }
    void compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
};

}  // namespace irgrid_ov

// The common part of irgrid's ops inside OpenVINO: attributes read as IR text and parsed by irgrid's
// rules (attributes.hpp), shape inference run on OpenVINO's partial shapes, errors naming the node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <openvino/op/op.hpp>

#include "attributes.hpp"
#include "shape_infer.hpp"

extern "C" {
#include "scratch.h"
}

namespace irgrid_ov {

class IrgridOp : public ov::op::Op {
public:
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    bool has_evaluate() const override { return true; }
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
    ~IrgridOp() override { irgrid_scratch_release(&m_scratch); }

protected:
    IrgridOp(const char* type, const char* version);
    // Called whenever m_attrs changes (parsed, or copied into a clone), and by a derived constructor:
    // an op keeps here what its kernel reads on every inference, so evaluate looks nothing up by name.
    virtual void attributes_changed() {}
    // Output infos of inputs as irgrid's operator module infers them.
    virtual std::vector<Info> infer(const std::vector<Info>& inputs) const = 0;
    // The outputs' values (shapes already set).
    virtual void compute(ov::TensorVector& outputs, const ov::TensorVector& inputs) const = 0;
    template <class Derived>
    std::shared_ptr<ov::Node> clone_as(const ov::OutputVector& new_args) const {
        auto op = std::make_shared<Derived>();
        op->m_texts = m_texts;
        op->m_attrs = m_attrs;
        static_cast<IrgridOp&>(*op).attributes_changed();
        op->set_arguments(new_args);
        op->constructor_validate_and_infer_types();
        return op;
    }
    // Runs fn, rethrowing an irgrid error as OpenVINO's, naming this node (and the input at fault).
    template <class Fn>
    auto located(Fn&& fn) const -> decltype(fn());

    const OpDescription& m_description;
    std::map<std::string, std::string> m_texts;  // each attribute's IR text
    Attrs m_attrs;                               // and its canonical value
    // The kernels' scratch, kept between inferences (evaluate is const; concurrent inferences each take
    // a block of their own: kernels/core/scratch.h).
    mutable irgrid_scratch_cache m_scratch{};
};

}  // namespace irgrid_ov

#include "op.hpp"

#include <openvino/op/constant.hpp>

#include "errors.hpp"

namespace irgrid_ov {

IrgridOp::IrgridOp(const char* type, const char* version) : m_description(op_description(type, version)) {
    std::map<std::string, std::string> none;
    m_attrs = parse_attrs(m_description, none);
    for (const auto& attr : m_description.attrs) m_texts[attr.name] = attr.default_text;
}

template <class Fn>
auto IrgridOp::located(Fn&& fn) const -> decltype(fn()) {
    try {
        return fn();
    } catch (const OpError& error) {
        // Until OpenVINO names a node (its IR reader does so after validating it), its friendly name is
        // a generated one the model does not contain.
        std::string where = std::string(m_description.type) + " node";
        if (get_friendly_name() != get_name()) where += " \"" + get_friendly_name() + "\"";
        if (error.input >= 0) where += ", input " + std::to_string(error.input);
        OPENVINO_THROW(error.kind, ": ", where, ": ", error.what());
    }
}

bool IrgridOp::visit_attributes(ov::AttributeVisitor& visitor) {
    // Every value goes to the visitor as its IR text and comes back parsed by irgrid's rules: OpenVINO's
    // typed adapters read leniently ("yes" as false, "1.5" as 1), where irgrid refuses such text.
    for (const auto& attr : m_description.attrs) visitor.on_attribute(attr.name, m_texts[attr.name]);
    m_attrs = located([&] { return parse_attrs(m_description, m_texts); });
    attributes_changed();
    for (const auto& attr : m_description.attrs) m_texts[attr.name] = write_value(attr, m_attrs.at(attr.name));
    return true;
}

static std::string type_name(const ov::element::Type& type) { return type.is_dynamic() ? "" : type.get_type_name(); }

void IrgridOp::validate_and_infer_types() {
    const int count = (int)get_input_size();
    std::vector<Info> inputs(count);
    bool dynamic_type = false, unknown_rank = false;
    for (int i = 0; i < count; i++) {
        const auto& shape = get_input_partial_shape(i);
        Info& info = inputs[i];
        info.type = type_name(get_input_element_type(i));
        dynamic_type = dynamic_type || info.type.empty();
        info.rank_known = shape.rank().is_static();
        unknown_rank = unknown_rank || !info.rank_known;
        if (info.rank_known)
            for (const auto& dim : shape) info.dims.push_back(dim.is_static() ? dim.get_length() : -1);
        auto constant = ov::as_type_ptr<ov::op::v0::Constant>(input_value(i).get_node_shared_ptr());
        if (constant && get_input_element_type(i).is_integral_number()) {
            info.has_values = true;
            info.values = constant->cast_vector<int64_t>();
        }
    }
    std::vector<Info> outputs = located([&] {
        if (count < m_description.fewest_inputs || count > m_description.most_inputs) {
            std::string want = m_description.fewest_inputs == m_description.most_inputs
                                   ? std::to_string(m_description.fewest_inputs)
                                   : std::to_string(m_description.fewest_inputs) + " to " + std::to_string(m_description.most_inputs);
            throw OpError("ParseError", "has " + std::to_string(count) + " inputs, " + m_description.type + " takes " + want);
        }
        if (dynamic_type) return std::vector<Info>(get_output_size() ? get_output_size() : 1);
        if (unknown_rank) {  // irgrid's inference needs every input's rank
            Info out;
            out.type = inputs[0].type;
            return std::vector<Info>{out};
        }
        return infer(inputs);
    });
    for (size_t k = 0; k < outputs.size(); k++) {
        const Info& info = outputs[k];
        ov::PartialShape shape = ov::PartialShape::dynamic();
        if (info.rank_known) {
            std::vector<ov::Dimension> dims;
            for (int64_t d : info.dims) dims.push_back(d < 0 ? ov::Dimension::dynamic() : ov::Dimension(d));
            shape = ov::PartialShape(dims);
        }
        set_output_type(k, info.type.empty() ? ov::element::dynamic : ov::element::Type(info.type), shape);
    }
}

bool IrgridOp::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    if (get_output_partial_shape(0).is_dynamic()) {  // size the outputs from the inputs (and their values)
        std::vector<Info> infos(inputs.size());
        for (size_t i = 0; i < inputs.size(); i++) {
            Info& info = infos[i];
            info.rank_known = true;
            for (size_t d : inputs[i].get_shape()) info.dims.push_back((int64_t)d);
            info.type = type_name(inputs[i].get_element_type());
            if (inputs[i].get_element_type() == ov::element::i64 || inputs[i].get_element_type() == ov::element::i32) {
                info.has_values = true;
                for (size_t e = 0; e < inputs[i].get_size(); e++)
                    info.values.push_back(inputs[i].get_element_type() == ov::element::i64 ? inputs[i].data<const int64_t>()[e]
                                                                                           : inputs[i].data<const int32_t>()[e]);
            }
        }
        std::vector<Info> out = located([&] { return infer(infos); });
        for (size_t k = 0; k < outputs.size(); k++) outputs[k].set_shape(ov::Shape(out[k].dims.begin(), out[k].dims.end()));
    }
    located([&] { compute(outputs, inputs); return 0; });
    return true;
}

}  // namespace irgrid_ov

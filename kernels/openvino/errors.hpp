// Errors as irgrid raises them: a kind (irgrid's exception class name), the reason, and the input at
// fault; the op that catches one names itself and that input (errors.py's `located`).
#pragma once

#include <stdexcept>
#include <string>

namespace irgrid_ov {

struct OpError : std::runtime_error {
    std::string kind;
    int input;  // -1: none
    OpError(std::string kind_, const std::string& reason, int input_ = -1)
        : std::runtime_error(reason), kind(std::move(kind_)), input(input_) {}
};

inline OpError attribute_error(const std::string& reason) { return OpError("LayerAttributeError", reason); }
inline OpError shape_error(const std::string& reason, int input = -1) { return OpError("ShapeError", reason, input); }

}  // namespace irgrid_ov

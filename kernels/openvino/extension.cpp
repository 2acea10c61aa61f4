// The library's one exported symbol, create_extensions: an op extension per irgrid-owned operator.
#include <openvino/core/extension.hpp>
#include <openvino/core/op_extension.hpp>

#include "ops.hpp"

OPENVINO_CREATE_EXTENSIONS(std::vector<ov::Extension::Ptr>({
    std::make_shared<ov::OpExtension<irgrid_ov::GridSample>>(),
    std::make_shared<ov::OpExtension<irgrid_ov::AffineGrid>>(),
    std::make_shared<ov::OpExtension<irgrid_ov::DeformConv>>(),
}));

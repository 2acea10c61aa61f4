// libFuzzer target: the native OpenVINO extension's attribute parsing (kernels/openvino/attributes.cpp)
// and shape inference (shape_infer.cpp), called as IrgridOp does (op.cpp): the attributes of
// GridSample, AffineGrid or DeformConv irgrid1 from fuzzed IR texts, then that op's inference on 3 to 5
// fuzzed input descriptions (element types, ranks, dims from unknown to 2^63 - 1, constant values),
// under ASan and UBSan.
//
// Oracle (docs/fuzzing.md): no sanitizer report; every refusal is an OpError of the kind irgrid raises
// there (LayerAttributeError while parsing; ShapeError or LayerAttributeError while inferring), never
// another exception; a parsed value written back as IR text (write_value) parses to the same value;
// an inferred output has a type and dims that are unknown (-1) or sizes (>= 0).
#include <map>
#include <string>
#include <vector>

#include "attributes.hpp"
#include "common.hpp"
#include "errors.hpp"
#include "shape_infer.hpp"

using namespace fuzz;
using namespace irgrid_ov;

namespace {

const char* const TYPES[] = {"GridSample", "AffineGrid", "DeformConv"};
const char* const ELEMENT_TYPES[] = {"f32", "f16", "bf16", "f64", "i64", "i32", "u8", "i8", "boolean", "u1", "string"};
// Texts irgrid's reader must take or refuse by its rules: spaces, signs, brackets, int64's edges and
// past them, 20 digits, empty items, every spelling of a choice in other cases, non-ASCII bytes.
const char* const TEXTS[] = {"", " ", "0", "1", "-1", "+1", " 1 ", "2", "3", "[1,2]", "[ 1, 2 ]", "1,2,3", "1,,2", "[]",
                             "[", "]", ",", "1 2", "0x10", "1e3", "1.5", "nan", "-0", "9223372036854775807",
                             "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                             "99999999999999999999", "0000000000000000001", "true", "TRUE ", "False", "yes", "linear",
                             "Bilinear", "bicubic", "CUBIC", "nearest", "zeros", "border", "reflection", "\t1\n",
                             "\x1c" "1", "1\x85", "\xc3\xa9"};

std::string pick_text(FuzzedDataProvider& in) {
    if (in.ConsumeBool()) return TEXTS[in.ConsumeIntegralInRange<size_t>(0, sizeof(TEXTS) / sizeof(TEXTS[0]) - 1)];
    return in.ConsumeRandomLengthString(32);
}

bool same(const Value& a, const Value& b) {
    return a.flag == b.flag && a.integer == b.integer && a.text == b.text && a.integers == b.integers;
}

int64_t pick_dim(FuzzedDataProvider& in) {
    const uint8_t kind = in.ConsumeIntegral<uint8_t>();
    if (kind < 32) return -1;  // unknown
    return pick_size(in, 9) & std::numeric_limits<int64_t>::max();  // static: a size, any
}

Info pick_info(FuzzedDataProvider& in) {
    Info info;
    info.rank_known = true;  // IrgridOp infers only when every rank is known
    info.type = ELEMENT_TYPES[in.ConsumeIntegralInRange<size_t>(0, sizeof(ELEMENT_TYPES) / sizeof(ELEMENT_TYPES[0]) - 1)];
    const int rank = in.ConsumeIntegral<uint8_t>() < 240 ? in.ConsumeIntegralInRange<int>(0, 6) : in.ConsumeIntegralInRange<int>(0, 40);
    int64_t count = 1;
    for (int k = 0; k < rank; k++) {
        info.dims.push_back(pick_dim(in));
        count = info.dims.back() < 0 ? -1 : times(count, info.dims.back());
    }
    // A constant integer input (validate_and_infer_types) or any integer tensor at run time (evaluate):
    // its values, as many as its static shape holds.
    if ((info.type == "i64" || info.type == "i32") && count >= 0 && count <= 16 && in.ConsumeBool())
        for (int64_t i = 0; i < count; i++) {
            info.has_values = true;
            info.values.push_back(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-2, 9) : pick_size(in, 64));
        }
    return info;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    const std::string type = TYPES[in.ConsumeIntegralInRange<int>(0, 2)];
    const OpDescription& op = op_description(type, "irgrid1");
    std::map<std::string, std::string> texts;
    for (const auto& attr : op.attrs)
        if (in.ConsumeIntegral<uint8_t>() < 160) texts[attr.name] = pick_text(in);
    if (in.ConsumeIntegral<uint8_t>() < 16) texts[pick_text(in)] = pick_text(in);  // an attribute irgrid ignores

    Attrs attrs;
    try {
        attrs = parse_attrs(op, texts);
    } catch (const OpError& error) {
        FUZZ_CHECK(error.kind == "LayerAttributeError");
        return 0;
    }
    std::map<std::string, std::string> written;
    for (const auto& attr : op.attrs) written[attr.name] = write_value(attr, attrs.at(attr.name));
    const Attrs again = parse_attrs(op, written);
    for (const auto& attr : op.attrs) FUZZ_CHECK(same(attrs.at(attr.name), again.at(attr.name)));

    std::vector<Info> inputs(in.ConsumeIntegralInRange<int>(op.fewest_inputs, op.most_inputs));
    for (auto& info : inputs) info = pick_info(in);
    std::vector<Info> outputs;
    try {
        if (type == "GridSample") outputs = infer_grid_sample(attrs, inputs);
        else if (type == "AffineGrid") outputs = infer_affine_grid(attrs, inputs);
        else outputs = infer_deform_conv(attrs, inputs);
    } catch (const OpError& error) {
        FUZZ_CHECK(error.kind == "ShapeError" || error.kind == "LayerAttributeError");
        return 0;
    }
    FUZZ_CHECK(!outputs.empty());
    for (const auto& out : outputs) {
        FUZZ_CHECK(!out.type.empty());
        for (int64_t d : out.dims) FUZZ_CHECK(d >= -1, (long long)d);
        format_shape(out);
    }
    return 0;
}

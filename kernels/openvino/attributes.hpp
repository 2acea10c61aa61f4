// Layer attributes as irgrid's reader parses them (irgrid/ir/attributes.py), from the descriptions
// generated out of irgrid's operator registry (descriptions.inc): the same spellings, defaults, bounds
// and error wording, with no second hand-kept copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace irgrid_ov {

enum class AttrKind { Bool, Int, Str, Ints };

struct AttrSpec {
    const char* name;
    AttrKind kind;
    const char* default_text;  // the default as IR text
    bool required;
    std::vector<std::pair<const char*, const char*>> choices;  // IR spelling -> canonical value, in order
    bool has_minimum;
    int64_t minimum;
    const char* minimum_text;  // as irgrid prints it
};

struct OpDescription {
    const char* type;
    const char* version;
    int fewest_inputs, most_inputs;
    std::vector<AttrSpec> attrs;
};

// The description of an irgrid-owned (type, version); throws std::logic_error for an unknown one.
const OpDescription& op_description(const std::string& type, const std::string& version);

// A parsed (canonical) attribute value.
struct Value {
    bool flag = false;
    int64_t integer = 0;
    std::string text;
    std::vector<int64_t> integers;
};
using Attrs = std::map<std::string, Value>;

// Canonical values of every attribute from IR texts (absent ones take their defaults); an OpError of
// kind LayerAttributeError with irgrid's reason otherwise.
Attrs parse_attrs(const OpDescription& op, const std::map<std::string, std::string>& texts);

// A canonical value as IR text (the first spelling of a choice), as irgrid's writer gives it.
std::string write_value(const AttrSpec& attr, const Value& value);

}  // namespace irgrid_ov

#include "attributes.hpp"

#include <cctype>
#include <stdexcept>

#include "errors.hpp"

namespace irgrid_ov {

static const std::vector<OpDescription>& all_descriptions() {
    static const std::vector<OpDescription> table = {
#include "descriptions.inc"
    };
    return table;
}

const OpDescription& op_description(const std::string& type, const std::string& version) {
    for (const auto& op : all_descriptions())
        if (type == op.type && version == op.version) return op;
    throw std::logic_error("no description of " + type + " " + version);
}

// Python's str.strip() on ASCII text: the characters str.isspace() accepts below 128.
static bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

static std::string strip(const std::string& text, const char* extra = "") {
    size_t a = 0, b = text.size();
    auto drop = [&](unsigned char c) { return is_space(c) || (c && std::string(extra).find((char)c) != std::string::npos); };
    while (a < b && drop(text[a])) a++;
    while (b > a && drop(text[b - 1])) b--;
    return text.substr(a, b - a);
}

static std::string lower(std::string text) {
    for (auto& c : text) c = (char)std::tolower((unsigned char)c);
    return text;
}

// Python's repr() of a str, for the error text: single quotes unless the text holds one and no double.
static std::string python_repr(const std::string& text) {
    char quote = (text.find('\'') != std::string::npos && text.find('"') == std::string::npos) ? '"' : '\'';
    std::string out(1, quote);
    static const char* hex = "0123456789abcdef";
    for (unsigned char c : text) {
        if (c == '\\' || c == (unsigned char)quote) { out += '\\'; out += (char)c; }
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) { out += "\\x"; out += hex[c >> 4]; out += hex[c & 15]; }
        else out += (char)c;
    }
    return out + quote;
}

struct Reason : std::runtime_error {
    using std::runtime_error::runtime_error;
};

static bool parse_bool(const std::string& text) {
    std::string key = lower(strip(text));
    if (key == "true" || key == "1") return true;
    if (key == "false" || key == "0") return false;
    throw Reason("is not a boolean (true/false/1/0)");
}

// An int64 of at most 19 digits, as irgrid's reader takes it.
static int64_t parse_int(const std::string& raw) {
    std::string text = strip(raw);
    size_t i = (!text.empty() && (text[0] == '+' || text[0] == '-')) ? 1 : 0;
    size_t digits = text.size() - i;
    if (digits < 1 || digits > 19) throw Reason("is not an integer");
    for (size_t k = i; k < text.size(); k++)
        if (!std::isdigit((unsigned char)text[k])) throw Reason("is not an integer");
    // 19 digits may pass int64: compare as unsigned magnitude.
    unsigned long long magnitude = std::stoull(text.substr(i));
    bool negative = text[0] == '-';
    if (magnitude > (negative ? 9223372036854775808ULL : 9223372036854775807ULL))
        throw Reason("is outside the int64 range");
    return negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
}

static std::vector<int64_t> parse_ints(const std::string& raw) {
    std::string text = strip(raw, "[]");
    std::vector<int64_t> values;
    if (strip(text).empty()) return values;
    size_t start = 0;
    while (true) {
        size_t comma = text.find(',', start);
        values.push_back(parse_int(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
        if (comma == std::string::npos) return values;
        start = comma + 1;
    }
}

static Value parse_value(const AttrSpec& attr, const std::string& text) {
    Value value;
    switch (attr.kind) {
    case AttrKind::Bool: value.flag = parse_bool(text); break;
    case AttrKind::Int: value.integer = parse_int(text); break;
    case AttrKind::Str: value.text = lower(strip(text)); break;
    case AttrKind::Ints: value.integers = parse_ints(text); break;
    }
    if (!attr.choices.empty()) {
        const char* canonical = nullptr;
        for (const auto& choice : attr.choices)
            if (value.text == choice.first) canonical = choice.second;
        if (!canonical) {
            std::string list;
            for (const auto& choice : attr.choices) list += (list.empty() ? "" : ", ") + std::string(choice.first);
            throw Reason("must be one of " + list);
        }
        value.text = canonical;
    }
    if (attr.has_minimum) {
        std::vector<int64_t> items = attr.kind == AttrKind::Ints ? value.integers : std::vector<int64_t>{value.integer};
        for (int64_t v : items)
            if (v < attr.minimum) throw Reason(std::string("must be >= ") + attr.minimum_text);
    }
    return value;
}

Attrs parse_attrs(const OpDescription& op, const std::map<std::string, std::string>& texts) {
    Attrs parsed;
    for (const auto& attr : op.attrs) {
        auto given = texts.find(attr.name);
        std::string text = given == texts.end() ? std::string() : given->second;
        if (given == texts.end()) {
            if (attr.required) throw attribute_error(std::string("required attribute '") + attr.name + "' is missing");
            text = attr.default_text;
        }
        try {
            parsed[attr.name] = parse_value(attr, text);
        } catch (const Reason& reason) {
            throw attribute_error(std::string("attribute ") + attr.name + "=" + python_repr(text) + " " + reason.what());
        } catch (const std::out_of_range&) {
            throw attribute_error(std::string("attribute ") + attr.name + "=" + python_repr(text) + " is outside the int64 range");
        }
    }
    return parsed;
}

std::string write_value(const AttrSpec& attr, const Value& value) {
    switch (attr.kind) {
    case AttrKind::Bool: return value.flag ? "true" : "false";
    case AttrKind::Int: return std::to_string(value.integer);
    case AttrKind::Ints: {
        std::string out;
        for (size_t i = 0; i < value.integers.size(); i++) out += (i ? ", " : "") + std::to_string(value.integers[i]);
        return out;
    }
    case AttrKind::Str:
        for (const auto& choice : attr.choices)
            if (value.text == choice.second) return choice.first;
        return value.text;
    }
    return {};
}

}  // namespace irgrid_ov

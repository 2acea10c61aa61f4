// OpenVINO tensors in the types irgrid's kernels compute in (f32, f64), and results back in the
// output's type, converted as irgrid's runtime converts them (irgrid/ops/common.py, element_types.py):
// f16 and bf16 rounded to nearest even, integers rounded half to even and saturated, NaN giving 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <openvino/core/type/bfloat16.hpp>
#include <openvino/core/type/float16.hpp>
#include <openvino/runtime/tensor.hpp>

#include "errors.hpp"

namespace irgrid_ov {

template <class T, class S>
void widen(const S* src, T* dst, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = static_cast<T>(static_cast<double>(src[i]));
}

// The tensor's values as T: a pointer into the tensor when it already holds T, else into `copy`.
template <class T>
const T* values_as(const ov::Tensor& tensor, std::vector<T>& copy) {
    const auto type = tensor.get_element_type();
    const size_t n = tensor.get_size();
    if (type == ov::element::from<T>()) return tensor.data<const T>();
    copy.resize(n);
    switch (type) {
    case ov::element::f32: widen(tensor.data<const float>(), copy.data(), n); break;
    case ov::element::f64: widen(tensor.data<const double>(), copy.data(), n); break;
    case ov::element::f16: widen(tensor.data<const ov::float16>(), copy.data(), n); break;
    case ov::element::bf16: widen(tensor.data<const ov::bfloat16>(), copy.data(), n); break;
    case ov::element::i8: widen(tensor.data<const int8_t>(), copy.data(), n); break;
    case ov::element::i16: widen(tensor.data<const int16_t>(), copy.data(), n); break;
    case ov::element::i32: widen(tensor.data<const int32_t>(), copy.data(), n); break;
    case ov::element::i64: widen(tensor.data<const int64_t>(), copy.data(), n); break;
    case ov::element::u8: widen(tensor.data<const uint8_t>(), copy.data(), n); break;
    case ov::element::u16: widen(tensor.data<const uint16_t>(), copy.data(), n); break;
    case ov::element::u32: widen(tensor.data<const uint32_t>(), copy.data(), n); break;
    case ov::element::u64: widen(tensor.data<const uint64_t>(), copy.data(), n); break;
    default: throw shape_error("element type " + type.get_type_name() + " is not supported");
    }
    return copy.data();
}

// bf16 bits of x rounded to nearest even; a NaN stays a (quiet) NaN (irgrid's round_to_bf16).
inline uint16_t bf16_bits(float x) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    if (std::isnan(x)) return (uint16_t)((bits | 0x00400000u) >> 16);
    return (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// Float -> integer type I: NaN 0, rounded half to even, saturated (irgrid's to_integer).
template <class I, class T>
I to_integer(T value) {
    if (std::isnan(value)) return 0;
    const double r = std::nearbyint(static_cast<double>(value));
    const double lo = static_cast<double>(std::numeric_limits<I>::min());
    // A 64-bit maximum rounds up past the range as a double: step back to the largest double inside.
    const double hi = sizeof(I) == 8 ? std::nextafter(static_cast<double>(std::numeric_limits<I>::max()), 0.0)
                                     : static_cast<double>(std::numeric_limits<I>::max());
    if (r <= lo) return std::numeric_limits<I>::min();
    if (r > hi) return std::numeric_limits<I>::max();
    return static_cast<I>(r);
}

template <class T>
void store(const T* values, ov::Tensor& out) {
    const size_t n = out.get_size();
    switch (out.get_element_type()) {
    case ov::element::f32: for (size_t i = 0; i < n; i++) out.data<float>()[i] = (float)values[i]; break;
    case ov::element::f64: for (size_t i = 0; i < n; i++) out.data<double>()[i] = (double)values[i]; break;
    case ov::element::f16: for (size_t i = 0; i < n; i++) out.data<ov::float16>()[i] = ov::float16((float)values[i]); break;
    case ov::element::bf16: for (size_t i = 0; i < n; i++) out.data<ov::bfloat16>()[i] = ov::bfloat16::from_bits(bf16_bits((float)values[i])); break;
    case ov::element::i8: for (size_t i = 0; i < n; i++) out.data<int8_t>()[i] = to_integer<int8_t>(values[i]); break;
    case ov::element::i16: for (size_t i = 0; i < n; i++) out.data<int16_t>()[i] = to_integer<int16_t>(values[i]); break;
    case ov::element::i32: for (size_t i = 0; i < n; i++) out.data<int32_t>()[i] = to_integer<int32_t>(values[i]); break;
    case ov::element::i64: for (size_t i = 0; i < n; i++) out.data<int64_t>()[i] = to_integer<int64_t>(values[i]); break;
    case ov::element::u8: for (size_t i = 0; i < n; i++) out.data<uint8_t>()[i] = to_integer<uint8_t>(values[i]); break;
    case ov::element::u16: for (size_t i = 0; i < n; i++) out.data<uint16_t>()[i] = to_integer<uint16_t>(values[i]); break;
    case ov::element::u32: for (size_t i = 0; i < n; i++) out.data<uint32_t>()[i] = to_integer<uint32_t>(values[i]); break;
    case ov::element::u64: for (size_t i = 0; i < n; i++) out.data<uint64_t>()[i] = to_integer<uint64_t>(values[i]); break;
    default: throw shape_error("element type " + out.get_element_type().get_type_name() + " is not supported");
    }
}

// Where a kernel writes T results: the output tensor itself when it holds T, else `copy` (then store()).
template <class T>
T* results_as(ov::Tensor& out, std::vector<T>& copy) {
    if (out.get_element_type() == ov::element::from<T>()) return out.data<T>();
    copy.resize(out.get_size());
    return copy.data();
}

}  // namespace irgrid_ov

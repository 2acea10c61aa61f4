// The native DeformConv's GEMMs (gemm.hpp).
//
// OpenVINO's MatMul runs in its own Core, compiled once per (shapes, layout, bias, threads) and kept (the
// 64 most recent), with a pool of infer requests per compiled model so that streams calling at once do not
// wait for each other. The Core is created on first use and never destroyed: at process exit its plugins
// may be unloaded before this library's static destructors run.
#include "gemm.hpp"

#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include <openvino/op/add.hpp>
#include <openvino/op/matmul.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/runtime/core.hpp>

#include "drive.hpp"

extern "C" {
#include "gemm.h"
}

namespace irgrid_ov {

bool gemm_on_openvino() {
    const char* name = std::getenv("IRGRID_GEMM");
    if (!name) return true;
    std::string text(name);
    const auto a = text.find_first_not_of(" \t\n\r\f\v"), b = text.find_last_not_of(" \t\n\r\f\v");
    text = a == std::string::npos ? "" : text.substr(a, b - a + 1);
    for (auto& c : text) c = (char)std::tolower((unsigned char)c);
    return text != "numpy";
}

namespace {

using Key = std::tuple<size_t, size_t, size_t, bool, bool, int>;  // m, k, n, transpose_b, bias, threads

struct Compiled {
    ov::CompiledModel model;
    std::vector<ov::InferRequest> idle;  // guarded by the cache's mutex
};

constexpr size_t KEPT = 64;

std::mutex cache_mutex;
std::map<Key, std::shared_ptr<Compiled>> cache;
std::list<Key> recency;  // most recently used first

ov::Core& gemm_core() {
    static ov::Core* core = new ov::Core();
    return *core;
}

std::shared_ptr<Compiled> compile(const Key& key) {
    const auto [m, k, n, transpose_b, bias, threads] = key;
    auto left = std::make_shared<ov::op::v0::Parameter>(ov::element::f32, ov::Shape{m, k});
    auto right = std::make_shared<ov::op::v0::Parameter>(ov::element::f32, transpose_b ? ov::Shape{n, k} : ov::Shape{k, n});
    ov::ParameterVector parameters{left, right};
    std::shared_ptr<ov::Node> product = std::make_shared<ov::op::v0::MatMul>(left, right, false, transpose_b);
    if (bias) {
        parameters.push_back(std::make_shared<ov::op::v0::Parameter>(ov::element::f32, ov::Shape{m, 1}));
        product = std::make_shared<ov::op::v1::Add>(product, parameters.back());
    }
    auto model = std::make_shared<ov::Model>(ov::OutputVector{product}, parameters, "irgrid_gemm");
    auto compiled = std::make_shared<Compiled>();
    // irgrid/dense.py's settings, and no CPU pinning: called from inside the stream's own (pinned) threads,
    // a pinned MatMul took 1.6x as long at 2 threads (pinning does not change the bits).
    compiled->model = gemm_core().compile_model(model, "CPU", ov::AnyMap{
        {"INFERENCE_PRECISION_HINT", "f32"}, {"INFERENCE_NUM_THREADS", threads}, {"NUM_STREAMS", 1},
        {"ENABLE_CPU_PINNING", false}});
    return compiled;
}

// The compiled model for key (compiled outside the lock) and an infer request of it.
std::pair<std::shared_ptr<Compiled>, ov::InferRequest> take(const Key& key) {
    std::shared_ptr<Compiled> compiled;
    {
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto found = cache.find(key);
        if (found != cache.end()) {
            compiled = found->second;
            recency.remove(key);
            recency.push_front(key);
            if (!compiled->idle.empty()) {
                ov::InferRequest request = compiled->idle.back();
                compiled->idle.pop_back();
                return {compiled, request};
            }
        }
    }
    if (!compiled) {
        compiled = compile(key);
        std::lock_guard<std::mutex> lock(cache_mutex);
        auto inserted = cache.emplace(key, compiled);
        if (!inserted.second) {
            compiled = inserted.first->second;  // another stream compiled it meanwhile
        } else {
            recency.push_front(key);
            if (recency.size() > KEPT) {
                cache.erase(recency.back());
                recency.pop_back();
            }
        }
    }
    return {compiled, compiled->model.create_infer_request()};
}

void give_back(const std::shared_ptr<Compiled>& compiled, ov::InferRequest request) {
    std::lock_guard<std::mutex> lock(cache_mutex);
    compiled->idle.push_back(std::move(request));
}

}  // namespace

void openvino_matmul(const float* a, const float* b, const float* bias, float* out, size_t m, size_t k, size_t n,
                     bool transpose_b, int threads) {
    const Key key{m, k, n, transpose_b, bias != nullptr, threads < 1 ? 1 : threads};
    auto [compiled, request] = take(key);
    request.set_input_tensor(0, ov::Tensor(ov::element::f32, ov::Shape{m, k}, const_cast<float*>(a)));
    request.set_input_tensor(1, ov::Tensor(ov::element::f32, transpose_b ? ov::Shape{n, k} : ov::Shape{k, n},
                                           const_cast<float*>(b)));
    if (bias) request.set_input_tensor(2, ov::Tensor(ov::element::f32, ov::Shape{m, 1}, const_cast<float*>(bias)));
    request.set_output_tensor(0, ov::Tensor(ov::element::f32, ov::Shape{m, n}, out));
    request.infer();
    give_back(compiled, std::move(request));
}

template <class T>
void own_gemm(const T* a, const T* b, T* out, size_t m, size_t k, size_t n, int threads, irgrid_scratch_cache& cache) {
    irgrid_gemm p{};
    p.f64 = sizeof(T) == 8;
    p.rows = (irgrid_index)m;
    p.inner = (irgrid_index)k;
    p.cols = (irgrid_index)n;
    p.a = a;
    p.b = b;
    p.out = out;
    drive(p, threads, irgrid_gemm_plan, irgrid_gemm_run, cache);
}

template void own_gemm<float>(const float*, const float*, float*, size_t, size_t, size_t, int, irgrid_scratch_cache&);
template void own_gemm<double>(const double*, const double*, double*, size_t, size_t, size_t, int, irgrid_scratch_cache&);

}  // namespace irgrid_ov

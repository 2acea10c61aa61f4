// libFuzzer target: element-wise chains through the C core's contract (kernels/core/elementwise.h), under
// ASan and UBSan: fuzzed dtype, output rank (0-4 and beyond) and dims, inputs that broadcast along any
// dims or run backwards (negative strides), booleans, programs of any operations and registers (well
// formed mostly, anything sometimes), thread hint, and values (NaN, +-Inf, huge, denormal, signed zeros).
//
// Oracle (docs/fuzzing.md): no sanitizer report; the plan refuses with an IRGRID_E_* code or accepts, and
// accepts every small well-formed program; the output is the same bits on one worker and on 2-5 workers;
// and it is, value for value, what a plain per-element evaluation of the program gives (each input read
// at its strides, the steps in order in T: the blocks, merged dims, gathers and filled scalars change
// nothing).
extern "C" {
#include "dtype.h"
#include "elementwise.h"
}
#include "common.hpp"

using namespace fuzz;

namespace {

constexpr int MAX_DIMS = 4;  // the dims the harness draws for a well-formed problem (the core takes 8)
// Outputs and inputs run only up to this many elements in all (larger ones are planned, not run): the
// per-element reference is slow, and 64 rows of blocks cover every way the kernel splits its work.
constexpr int64_t MAX_RUN = int64_t(1) << 16;

struct Input {
    std::unique_ptr<Buffer> memory;
    int64_t elements = 0;
};

bool boolean_result(int op) { return (op >= IRGRID_EW_LESS && op <= IRGRID_EW_NOT_EQUAL) || op >= IRGRID_EW_AND; }

// One element of the program, evaluated alone: the reference the kernel must match.
template <class T>
void evaluate(const irgrid_elementwise& p, int64_t flat, int64_t total, void* out) {
    T f[IRGRID_EW_MAX_REGISTERS] = {};
    unsigned char b[IRGRID_EW_MAX_REGISTERS] = {};
    int64_t index[IRGRID_EW_MAX_RANK], rest = flat;
    for (int d = p.rank - 1; d >= 0; d--) {
        index[d] = rest % p.dims[d];
        rest /= p.dims[d];
    }
    (void)total;
    for (int k = 0; k < p.inputs; k++) {
        int64_t offset = 0;
        for (int d = 0; d < p.rank; d++) offset += index[d] * p.strides[k][d];
        if (p.boolean[k])
            b[k] = static_cast<const unsigned char*>(p.input[k])[offset];
        else
            f[k] = static_cast<const T*>(p.input[k])[offset];
    }
    // an operand the operation does not read may hold any number: clamped, never read
    auto reg = [](int r) { return r >= 0 && r < IRGRID_EW_MAX_REGISTERS ? r : 0; };
    for (int i = 0; i < p.steps; i++) {
        const irgrid_ew_step& s = p.step[i];
        const int r = i == p.steps - 1 ? IRGRID_EW_MAX_REGISTERS - 1 : s.out;
        const int sa = reg(s.a), sb = reg(s.b), sc = reg(s.c);
        const T x = f[sa], y = f[sb];
        switch (s.op) {
        case IRGRID_EW_ADD: f[r] = x + y; break;
        case IRGRID_EW_SUBTRACT: f[r] = x - y; break;
        case IRGRID_EW_MULTIPLY: f[r] = x * y; break;
        case IRGRID_EW_DIVIDE: f[r] = x / y; break;
        case IRGRID_EW_MINIMUM: f[r] = x < y ? x : y; break;
        case IRGRID_EW_MAXIMUM: f[r] = x > y ? x : y; break;
        case IRGRID_EW_LESS: b[r] = x < y; break;
        case IRGRID_EW_GREATER: b[r] = x > y; break;
        case IRGRID_EW_LESS_EQUAL: b[r] = x <= y; break;
        case IRGRID_EW_GREATER_EQUAL: b[r] = x >= y; break;
        case IRGRID_EW_EQUAL: b[r] = x == y; break;
        case IRGRID_EW_NOT_EQUAL: b[r] = x != y; break;
        case IRGRID_EW_SELECT: f[r] = b[sa] ? f[sb] : f[sc]; break;
        case IRGRID_EW_AND: b[r] = (b[sa] != 0) & (b[sb] != 0); break;
        case IRGRID_EW_OR: b[r] = (b[sa] != 0) | (b[sb] != 0); break;
        case IRGRID_EW_XOR: b[r] = (b[sa] != 0) ^ (b[sb] != 0); break;
        default: b[r] = b[sa] == 0; break;  // NOT
        }
    }
    const irgrid_ew_step& last = p.step[p.steps - 1];
    if (boolean_result(last.op))
        static_cast<unsigned char*>(out)[flat] = b[IRGRID_EW_MAX_REGISTERS - 1];
    else
        static_cast<T*>(out)[flat] = f[IRGRID_EW_MAX_REGISTERS - 1];
}

// A well-formed program mostly: each step an operation on registers holding the types it reads (a
// register's type is known as the steps are drawn), writing a fresh or dead temporary it does not read.
void draw_program(FuzzedDataProvider& in, irgrid_elementwise& p) {
    const bool any = in.ConsumeIntegral<uint8_t>() >= 248;  // anything: the plan must refuse or survive it
    p.registers = p.inputs + in.ConsumeIntegralInRange<int>(any ? -2 : 1, 4);
    p.steps = any ? pick_code(in, IRGRID_EW_MAX_STEPS + 2) : in.ConsumeIntegralInRange<int>(1, 8);
    const int steps = p.steps < 0 ? 0 : (p.steps > IRGRID_EW_MAX_STEPS ? IRGRID_EW_MAX_STEPS : p.steps);
    int type[IRGRID_EW_MAX_REGISTERS];  // -1 undefined, 0 F, 1 B
    for (int k = 0; k < IRGRID_EW_MAX_REGISTERS; k++) type[k] = k < p.inputs ? p.boolean[k] : -1;
    for (int i = 0; i < steps; i++) {
        irgrid_ew_step& s = p.step[i];
        s.op = pick_code(in, IRGRID_EW_OPS);
        auto pick = [&](int want) {  // a register of type `want`, or anything when the fuzzer says so
            if (any || in.ConsumeIntegral<uint8_t>() >= 250) return in.ConsumeIntegralInRange<int>(-1, IRGRID_EW_MAX_REGISTERS);
            int found[IRGRID_EW_MAX_REGISTERS], n = 0;
            for (int k = 0; k < p.registers && k < IRGRID_EW_MAX_REGISTERS; k++)
                if (type[k] == want) found[n++] = k;
            return n ? found[in.ConsumeIntegralInRange<int>(0, n - 1)] : 0;
        };
        const int op = s.op;
        const bool reads_boolean = op >= IRGRID_EW_AND && op < IRGRID_EW_OPS;
        s.a = pick(op == IRGRID_EW_SELECT ? 1 : reads_boolean);
        s.b = pick(op == IRGRID_EW_SELECT ? 0 : reads_boolean);
        s.c = pick(0);
        s.out = any ? in.ConsumeIntegralInRange<int>(-1, IRGRID_EW_MAX_REGISTERS)
                    : in.ConsumeIntegralInRange<int>(p.inputs, p.registers - 1);
        if (s.out >= 0 && s.out < IRGRID_EW_MAX_REGISTERS && op >= 0 && op < IRGRID_EW_OPS)
            type[s.out] = boolean_result(op);
    }
}

// Whether the program is one the plan must accept: operations in range, operands defined, of the types
// they read, and no step but the last writing a register it reads or an input.
bool well_formed(const irgrid_elementwise& p) {
    if (p.inputs < 1 || p.registers < p.inputs || p.registers > IRGRID_EW_MAX_REGISTERS || p.steps < 1
        || p.steps > IRGRID_EW_MAX_STEPS)
        return false;
    int type[IRGRID_EW_MAX_REGISTERS];
    for (int k = 0; k < IRGRID_EW_MAX_REGISTERS; k++) type[k] = k < p.inputs ? p.boolean[k] : -1;
    for (int i = 0; i < p.steps; i++) {
        const irgrid_ew_step& s = p.step[i];
        if (s.op < 0 || s.op >= IRGRID_EW_OPS) return false;
        const int count = s.op == IRGRID_EW_SELECT ? 3 : (s.op == IRGRID_EW_NOT ? 1 : 2);
        const int reads[3] = {s.a, s.b, s.c};
        for (int j = 0; j < count; j++) {
            const int want = s.op == IRGRID_EW_SELECT ? j == 0 : s.op >= IRGRID_EW_AND;
            if (reads[j] < 0 || reads[j] >= p.registers || type[reads[j]] != want) return false;
            if (i < p.steps - 1 && reads[j] == s.out) return false;
        }
        if (i < p.steps - 1) {
            if (s.out < p.inputs || s.out >= p.registers) return false;
            type[s.out] = boolean_result(s.op);
        }
    }
    return true;
}

template <class T>
void run(FuzzedDataProvider& in, irgrid_elementwise& p, std::vector<Input>& inputs, int64_t total) {
    for (int k = 0; k < p.inputs; k++) {
        Input& input = inputs[k];
        if (p.boolean[k]) {
            Fill fill = Fill::from(in);
            for (int64_t i = 0; i < input.elements; i++) input.memory->as<unsigned char>()[i] = fill.value() > 0;
        } else {
            fill_values(in, Fill::from(in), input.memory->as<T>(), input.elements);
        }
    }
    const size_t item = boolean_result(p.step[p.steps - 1].op) ? 1 : sizeof(T);
    Buffer a(size_t(total) * item, 0xA5), b(size_t(total) * item, 0x5A), want(size_t(total) * item, 0);
    same_bits_on_any_workers(in, p, irgrid_elementwise_run, p.output, a, b);
    for (int64_t i = 0; i < total; i++) evaluate<T>(p, i, total, want.data);
    if (item == 1)
        FUZZ_CHECK(std::memcmp(a.data, want.data, size_t(total)) == 0);
    else
        FUZZ_CHECK(same_values(a.as<T>(), want.as<T>(), total));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
    FuzzedDataProvider in(bytes, size);
    irgrid_elementwise p{};
    p.dtype = pick_code(in, 2);
    const uint8_t rank_kind = in.ConsumeIntegral<uint8_t>();
    p.rank = rank_kind < 240 ? rank_kind % (MAX_DIMS + 1) : pick_code(in, IRGRID_EW_MAX_RANK + 3);
    const int dims = p.rank < 0 ? 0 : (p.rank > IRGRID_EW_MAX_RANK ? IRGRID_EW_MAX_RANK : p.rank);
    for (int d = 0; d < dims; d++) p.dims[d] = pick_size(in, d == dims - 1 ? 2100 : 12);
    p.inputs = in.ConsumeIntegralInRange<int>(1, 6);
    p.threads = in.ConsumeIntegralInRange<int>(0, 8);
    // each input: booleans or not; per dim broadcast (1), full, or full and backwards
    std::vector<Input> inputs(p.inputs);
    std::vector<std::vector<int>> kinds(p.inputs, std::vector<int>(dims, 0));
    int64_t held = 0;
    bool sizes_ok = true;
    for (int k = 0; k < p.inputs; k++) {
        p.boolean[k] = in.ConsumeIntegral<uint8_t>() < 64;
        int64_t elements = 1;
        for (int d = 0; d < dims; d++) {
            kinds[k][d] = in.ConsumeIntegralInRange<int>(0, 3);  // 0 broadcast; 1, 2 forwards; 3 backwards
            if (kinds[k][d]) elements = times(elements, p.dims[d]);
        }
        if (elements < 0 || elements > MAX_ELEMENTS) sizes_ok = false;
        inputs[k].elements = elements;
        held += sizes_ok ? elements : 0;
    }
    draw_program(in, p);
    const int status = irgrid_elementwise_plan(&p);
    int64_t total = 1;
    for (int d = 0; d < dims; d++) total = times(total, p.dims[d]);
    const bool small_valid = (p.dtype == IRGRID_F32 || p.dtype == IRGRID_F64) && p.rank >= 0 && p.rank <= MAX_DIMS
                             && total >= 0 && total <= MAX_ELEMENTS && well_formed(p);
    if (status != IRGRID_OK) {
        FUZZ_CHECK(known_status(status), status);
        FUZZ_CHECK(!small_valid, status);
        return 0;
    }
    FUZZ_CHECK(well_formed(p));
    if (!sizes_ok || total < 0 || total > MAX_RUN || held + total > MAX_RUN || total == 0) return 0;
    FUZZ_CHECK(p.schedule.worker_bytes <= MAX_SCRATCH && p.schedule.shared_bytes == 0);
    const size_t item = p.dtype == IRGRID_F32 ? 4 : 8;
    for (int k = 0; k < p.inputs; k++) {  // each input C-contiguous over its own dims, strides 0 where broadcast
        inputs[k].memory = std::make_unique<Buffer>(size_t(inputs[k].elements) * (p.boolean[k] ? 1 : item), 0);
        int64_t stride = 1, start = 0;
        for (int d = dims - 1; d >= 0; d--) {
            p.strides[k][d] = kinds[k][d] == 0 ? 0 : (kinds[k][d] == 3 ? -stride : stride);
            if (kinds[k][d] == 3) start += (p.dims[d] - 1) * stride;
            if (kinds[k][d]) stride *= p.dims[d];
        }
        p.input[k] = static_cast<const char*>(inputs[k].memory->data) + start * int64_t(p.boolean[k] ? 1 : item);
    }
    FUZZ_CHECK(irgrid_elementwise_plan(&p) == IRGRID_OK);  // again, with the strides
    if (p.dtype == IRGRID_F32)
        run<float>(in, p, inputs, total);
    else
        run<double>(in, p, inputs, total);
    return 0;
}

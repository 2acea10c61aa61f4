/* A chain of element-wise layers in one pass (elementwise.h). */
#include "elementwise.h"

#include <stdint.h>
#include <string.h>

#include "dtype.h"
#include "status.h"

#define REGISTER_BYTES ((irgrid_index)IRGRID_EW_BLOCK * 8)

static int operands_of(int op) { return op == IRGRID_EW_SELECT ? 3 : (op == IRGRID_EW_NOT ? 1 : 2); }

static int gives_boolean(int op) {
    return (op >= IRGRID_EW_LESS && op <= IRGRID_EW_NOT_EQUAL) || op >= IRGRID_EW_AND;
}

/* Whether operand k (0: a, 1: b, 2: c) of op is B. */
static int reads_boolean(int op, int k) { return op == IRGRID_EW_SELECT ? k == 0 : op >= IRGRID_EW_AND; }

/* The program's steps read defined registers of the types their operations take and never write a
   register they read (the step loops take restrict pointers). */
static int check_program(const irgrid_elementwise* p) {
    unsigned char boolean[IRGRID_EW_MAX_REGISTERS], defined[IRGRID_EW_MAX_REGISTERS];
    int i, j, k;
    memset(defined, 0, sizeof defined);
    for (k = 0; k < p->inputs; k++) {
        defined[k] = 1;
        boolean[k] = p->boolean[k] != 0;
    }
    for (i = 0; i < p->steps; i++) {
        const irgrid_ew_step* s = &p->step[i];
        const int reads[3] = {s->a, s->b, s->c};
        if (s->op < 0 || s->op >= IRGRID_EW_OPS)
            return IRGRID_E_MODE;
        for (j = 0; j < operands_of(s->op); j++) {
            k = reads[j];
            if (k < 0 || k >= p->registers || !defined[k] || boolean[k] != reads_boolean(s->op, j)
                || (i < p->steps - 1 && k == s->out))
                return IRGRID_E_MODE;
        }
        if (i < p->steps - 1) {
            if (s->out < p->inputs || s->out >= p->registers)
                return IRGRID_E_MODE;
            defined[s->out] = 1;
            boolean[s->out] = (unsigned char)gives_boolean(s->op);
        }
    }
    return IRGRID_OK;
}

int irgrid_elementwise_plan(irgrid_elementwise* p) {
    irgrid_schedule* s = &p->schedule;
    irgrid_index total = 1, units;
    int k, d, m, status;
    memset(s, 0, sizeof(*s));
    if (p->dtype != IRGRID_F32 && p->dtype != IRGRID_F64)
        return IRGRID_E_MODE;
    if (p->rank < 0 || p->rank > IRGRID_EW_MAX_RANK)
        return IRGRID_E_RANK;
    if (p->inputs < 1 || p->registers < p->inputs || p->registers > IRGRID_EW_MAX_REGISTERS || p->steps < 1
        || p->steps > IRGRID_EW_MAX_STEPS)
        return IRGRID_E_MODE;
    if ((status = check_program(p)) != IRGRID_OK)
        return status;
    for (d = 0; d < p->rank; d++) {
        if (p->dims[d] < 0)
            return IRGRID_E_DIMS;
        if (p->dims[d] == 0)  /* nothing to write, whatever the other dims */
            return IRGRID_OK;
    }
    for (d = 0; d < p->rank; d++) {
        if (total > (irgrid_index)IRGRID_INDEX_LIMIT / p->dims[d])
            return IRGRID_E_SIZE;
        total *= p->dims[d];
    }
    s->phases = 1;
    /* Dims of 1 dropped; a dim merged into the one before it where every input steps over it as over
       that dim's elements (the output is contiguous): PWC-Net's mask becomes one row. */
    m = 0;
    for (d = 0; d < p->rank; d++) {
        if (p->dims[d] == 1)
            continue;
        if (m > 0) {
            for (k = 0; k < p->inputs && p->merged_strides[k][m - 1] == p->strides[k][d] * p->dims[d]; k++)
                ;
            if (k == p->inputs) {
                p->merged_dims[m - 1] *= p->dims[d];
                for (k = 0; k < p->inputs; k++)
                    p->merged_strides[k][m - 1] = p->strides[k][d];
                continue;
            }
        }
        p->merged_dims[m] = p->dims[d];
        for (k = 0; k < p->inputs; k++)
            p->merged_strides[k][m] = p->strides[k][d];
        m++;
    }
    if (m == 0) {  /* one element */
        p->merged_dims[m] = 1;
        for (k = 0; k < p->inputs; k++)
            p->merged_strides[k][m] = 0;
        m = 1;
    }
    p->merged_rank = m;
    for (k = 0; k < p->inputs; k++)  /* one value everywhere: its register is filled once per worker and call */
        for (p->scalar[k] = 1, d = 0; d < m; d++)
            p->scalar[k] &= p->merged_strides[k][d] == 0;
    p->row_length = p->merged_dims[m - 1];
    p->rows = total / p->row_length;
    if (p->row_length >= IRGRID_EW_BLOCK) {  /* units: blocks of a row */
        p->blocks_per_row = (p->row_length + IRGRID_EW_BLOCK - 1) / IRGRID_EW_BLOCK;
        p->rows_per_unit = 0;
        units = p->rows * p->blocks_per_row;
    } else {  /* units: runs of short rows */
        p->blocks_per_row = 0;
        p->rows_per_unit = IRGRID_EW_BLOCK / p->row_length;
        units = (p->rows + p->rows_per_unit - 1) / p->rows_per_unit;
    }
    s->units[0] = units;
    s->worker_bytes = (size_t)(IRGRID_WORKER_HEADER + p->registers * REGISTER_BYTES);
    s->workers = total < IRGRID_EW_PARALLEL || p->threads < 2 ? 1 : (units < p->threads ? (int)units : p->threads);
    return IRGRID_OK;
}

/* n elements of `size` bytes from src, `stride` elements apart, into dst; stride 0 repeats one value
   (copied once, then the filled part doubled). */
static void gather(const char* src, irgrid_index stride, irgrid_index n, size_t size, char* dst) {
    const size_t bytes = (size_t)n * size;
    size_t filled;
    irgrid_index j;
    if (n <= 0)
        return;
    if (stride != 0) {
        for (j = 0; j < n; j++)
            memcpy(dst + (size_t)j * size, src + j * stride * (irgrid_index)size, size);
        return;
    }
    memcpy(dst, src, size);
    for (filled = size; filled < bytes; filled *= 2)
        memcpy(dst + filled, dst, filled < bytes - filled ? filled : bytes - filled);
}

typedef unsigned char boolean_t;

/* One step over n elements, for float type T (numpy's arithmetic and comparisons, irgrid's Minimum and
   Maximum: arithmetic.py). */
#define IRGRID_EW_STEP(NAME, T)                                                                             \
    static void NAME(int op, void* restrict out, const void* restrict a, const void* restrict b,            \
                     const void* restrict c, irgrid_index n) {                                              \
        const T* restrict x = (const T*)a;                                                                  \
        const T* restrict y = (const T*)b;                                                                  \
        const boolean_t* restrict u = (const boolean_t*)a;                                                  \
        const boolean_t* restrict v = (const boolean_t*)b;                                                  \
        T* restrict z = (T*)out;                                                                            \
        boolean_t* restrict q = (boolean_t*)out;                                                            \
        irgrid_index j;                                                                                     \
        switch (op) {                                                                                       \
        case IRGRID_EW_ADD: for (j = 0; j < n; j++) z[j] = x[j] + y[j]; break;                              \
        case IRGRID_EW_SUBTRACT: for (j = 0; j < n; j++) z[j] = x[j] - y[j]; break;                         \
        case IRGRID_EW_MULTIPLY: for (j = 0; j < n; j++) z[j] = x[j] * y[j]; break;                         \
        case IRGRID_EW_DIVIDE: for (j = 0; j < n; j++) z[j] = x[j] / y[j]; break;                           \
        case IRGRID_EW_MINIMUM: for (j = 0; j < n; j++) z[j] = x[j] < y[j] ? x[j] : y[j]; break;            \
        case IRGRID_EW_MAXIMUM: for (j = 0; j < n; j++) z[j] = x[j] > y[j] ? x[j] : y[j]; break;            \
        case IRGRID_EW_LESS: for (j = 0; j < n; j++) q[j] = x[j] < y[j]; break;                             \
        case IRGRID_EW_GREATER: for (j = 0; j < n; j++) q[j] = x[j] > y[j]; break;                          \
        case IRGRID_EW_LESS_EQUAL: for (j = 0; j < n; j++) q[j] = x[j] <= y[j]; break;                      \
        case IRGRID_EW_GREATER_EQUAL: for (j = 0; j < n; j++) q[j] = x[j] >= y[j]; break;                   \
        case IRGRID_EW_EQUAL: for (j = 0; j < n; j++) q[j] = x[j] == y[j]; break;                           \
        case IRGRID_EW_NOT_EQUAL: for (j = 0; j < n; j++) q[j] = x[j] != y[j]; break;                       \
        case IRGRID_EW_SELECT: {                                                                            \
            const boolean_t* restrict w = (const boolean_t*)a;                                              \
            const T* restrict t = (const T*)b;                                                              \
            const T* restrict e = (const T*)c;                                                              \
            for (j = 0; j < n; j++) {                                                                       \
                const T then = t[j], otherwise = e[j]; /* both loaded: a blend, not a branch */             \
                z[j] = w[j] ? then : otherwise;                                                             \
            }                                                                                               \
            break;                                                                                          \
        }                                                                                                   \
        case IRGRID_EW_AND: for (j = 0; j < n; j++) q[j] = (u[j] != 0) & (v[j] != 0); break;                \
        case IRGRID_EW_OR: for (j = 0; j < n; j++) q[j] = (u[j] != 0) | (v[j] != 0); break;                 \
        case IRGRID_EW_XOR: for (j = 0; j < n; j++) q[j] = (u[j] != 0) ^ (v[j] != 0); break;                \
        case IRGRID_EW_NOT: for (j = 0; j < n; j++) q[j] = u[j] == 0; break;                                \
        default: break;                                                                                     \
        }                                                                                                   \
    }

IRGRID_EW_STEP(step_f32, float)
IRGRID_EW_STEP(step_f64, double)

/* The program over elements [first, first + n) of row `row` (n <= IRGRID_EW_BLOCK), the registers in
   `registers` (IRGRID_EW_MAX_REGISTERS of REGISTER_BYTES: an input read along the row with a stride
   other than 1 is gathered into its own). */
static void run_segment(const irgrid_elementwise* p, char* registers, irgrid_index row, irgrid_index first,
                        irgrid_index n) {
    const size_t float_size = p->dtype == IRGRID_F32 ? 4 : 8;
    const int last = p->merged_rank - 1;
    const void* at[IRGRID_EW_MAX_REGISTERS];
    irgrid_index offset[IRGRID_EW_MAX_REGISTERS], rest = row, index, stride;
    const irgrid_ew_step* s = &p->step[p->steps - 1];
    size_t size;
    char* out;
    int k, d, i;
    for (k = 0; k < p->inputs; k++)
        offset[k] = 0;
    for (d = last - 1; d >= 0; d--) {  /* the row's index along each outer dim */
        index = rest % p->merged_dims[d];
        rest /= p->merged_dims[d];
        for (k = 0; k < p->inputs; k++)
            offset[k] += index * p->merged_strides[k][d];
    }
    for (k = 0; k < p->inputs; k++) {
        size = p->boolean[k] ? 1 : float_size;
        stride = p->merged_strides[k][last];
        at[k] = (const char*)p->input[k] + (offset[k] + first * stride) * (irgrid_index)size;
        if (p->scalar[k]) {
            at[k] = registers + k * REGISTER_BYTES;  /* filled by irgrid_elementwise_run */
        } else if (stride != 1) {
            gather((const char*)at[k], stride, n, size, registers + k * REGISTER_BYTES);
            at[k] = registers + k * REGISTER_BYTES;
        }
    }
    for (k = p->inputs; k < p->registers; k++)
        at[k] = registers + k * REGISTER_BYTES;
    size = gives_boolean(s->op) ? 1 : float_size;
    out = (char*)p->output + (row * p->row_length + first) * (irgrid_index)size;
    for (i = 0; i < p->steps; i++) {
        s = &p->step[i];
        void* target = i == p->steps - 1 ? (void*)out : (void*)at[s->out];
        const void* c = operands_of(s->op) == 3 ? at[s->c] : NULL;
        const void* b = operands_of(s->op) >= 2 ? at[s->b] : NULL;
        if (p->dtype == IRGRID_F32)
            step_f32(s->op, target, at[s->a], b, c, n);
        else
            step_f64(s->op, target, at[s->a], b, c, n);
    }
}

void irgrid_elementwise_run(const irgrid_elementwise* p, int phase, void* shared, void* worker_scratch,
                            irgrid_index begin, irgrid_index end) {
    char* registers = (char*)worker_scratch + IRGRID_WORKER_HEADER;
    unsigned char* filled = (unsigned char*)worker_scratch;  /* the header: scalars filled this call */
    irgrid_index u, row, first, last_row;
    int k;
    (void)phase;
    (void)shared;
    if (!*filled) {
        for (k = 0; k < p->inputs; k++)
            if (p->scalar[k])
                gather((const char*)p->input[k], 0, IRGRID_EW_BLOCK, p->boolean[k] ? 1 : (p->dtype == IRGRID_F32 ? 4 : 8),
                       registers + k * REGISTER_BYTES);
        *filled = 1;
    }
    for (u = begin; u < end; u++) {
        if (p->blocks_per_row) {
            row = u / p->blocks_per_row;
            first = (u % p->blocks_per_row) * IRGRID_EW_BLOCK;
            run_segment(p, registers, row, first,
                        p->row_length - first < IRGRID_EW_BLOCK ? p->row_length - first : IRGRID_EW_BLOCK);
        } else {
            last_row = (u + 1) * p->rows_per_unit < p->rows ? (u + 1) * p->rows_per_unit : p->rows;
            for (row = u * p->rows_per_unit; row < last_row; row++)
                run_segment(p, registers, row, 0, p->row_length);
        }
    }
}

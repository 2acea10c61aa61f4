/* A chain of element-wise layers computed in one pass: a small program of steps (add, compare,
   select, ...) run block by block over the output, each block's intermediate values held in registers
   of IRGRID_EW_BLOCK elements (in the worker's scratch, so in L1/L2) instead of full-size tensors.

   Why: the layers around the grid operators are element-wise glue (PWC-Net's occlusion mask is Less,
   Select, Greater, Select, Multiply over 5.4 M elements). Run layer by layer, each one reads and
   writes a full tensor, one thread at a time (numpy). As one pass over blocks on every thread the
   inputs are read once and the output written once (benchmarks/README.md, "Element-wise chains").

   Each step computes exactly what the layer computes in numpy, element by element, in the same float
   type (IEEE add, subtract, multiply, divide and comparisons; minimum as `a < b ? a : b`, maximum as
   `a > b ? a : b`, irgrid's Minimum/Maximum; select copies), and -ffp-contract=off keeps a multiply and
   an add two roundings, so the results are bitwise the unfused layers', at any thread count.

   Values: F, the program's float type (`dtype`), or B, booleans stored as bytes 0 and 1 (numpy's bool). */
#ifndef IRGRID_ELEMENTWISE_H
#define IRGRID_ELEMENTWISE_H

#include "guards.h"
#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    IRGRID_EW_MAX_RANK = 8,        /* of the output (dims of 1 and mergeable dims folded first) */
    IRGRID_EW_MAX_REGISTERS = 32,  /* inputs first, then temporaries */
    IRGRID_EW_MAX_STEPS = 64,
    IRGRID_EW_BLOCK = 1024,        /* elements each step computes at a time (an f64 register: 8 KiB) */
    IRGRID_EW_PARALLEL = 65536     /* outputs of fewer elements run on one thread */
};

/* The operations, with what they read and give. */
enum {
    IRGRID_EW_ADD, IRGRID_EW_SUBTRACT, IRGRID_EW_MULTIPLY, IRGRID_EW_DIVIDE,  /* F, F -> F */
    IRGRID_EW_MINIMUM, IRGRID_EW_MAXIMUM,                                      /* F, F -> F */
    IRGRID_EW_LESS, IRGRID_EW_GREATER, IRGRID_EW_LESS_EQUAL, IRGRID_EW_GREATER_EQUAL,
    IRGRID_EW_EQUAL, IRGRID_EW_NOT_EQUAL,                                      /* F, F -> B */
    IRGRID_EW_SELECT,                                                          /* B, F, F -> F */
    IRGRID_EW_AND, IRGRID_EW_OR, IRGRID_EW_XOR,                                /* B, B -> B */
    IRGRID_EW_NOT,                                                             /* B -> B */
    IRGRID_EW_OPS
};

/* register out = op(a, b, c): registers [0, inputs) are the inputs, the others temporaries (a
   temporary's type is that of the step that last wrote it); operands an operation does not read are
   ignored. The last step writes the output instead of its `out`. */
typedef struct {
    int op, out, a, b, c;
} irgrid_ew_step;

typedef struct {
    int dtype;                                        /* IRGRID_F32 or IRGRID_F64: F */
    int rank;                                         /* the output's, 0..IRGRID_EW_MAX_RANK */
    irgrid_index dims[IRGRID_EW_MAX_RANK];
    int inputs, registers;                            /* 1 <= inputs <= registers <= IRGRID_EW_MAX_REGISTERS */
    const void* input[IRGRID_EW_MAX_REGISTERS];
    /* each input's stride in elements along each output dim (0 where it is broadcast), any sign */
    irgrid_index strides[IRGRID_EW_MAX_REGISTERS][IRGRID_EW_MAX_RANK];
    unsigned char boolean[IRGRID_EW_MAX_REGISTERS];   /* input k holds B values (else F) */
    int steps;
    irgrid_ew_step step[IRGRID_EW_MAX_STEPS];
    void* output;                                     /* contiguous, dims, of the last step's type */
    int threads;                                      /* a hint for the schedule's workers */
    irgrid_schedule schedule;
    /* set by the plan: the dims merged where every input's strides allow (the last one runs along
       rows), and the work units (blocks of a row, or runs of whole short rows) */
    int merged_rank;
    irgrid_index merged_dims[IRGRID_EW_MAX_RANK];
    irgrid_index merged_strides[IRGRID_EW_MAX_REGISTERS][IRGRID_EW_MAX_RANK];
    irgrid_index rows, row_length, blocks_per_row, rows_per_unit;
    unsigned char scalar[IRGRID_EW_MAX_REGISTERS];    /* input k is one value everywhere */
} irgrid_elementwise;

int irgrid_elementwise_plan(irgrid_elementwise* p);
/* A driver resets each worker's scratch header (irgrid_worker_reset) before its first unit of a call:
   it records whether the worker has filled the registers of the one-value inputs. */
void irgrid_elementwise_run(const irgrid_elementwise* p, int phase, void* shared, void* worker_scratch,
                            irgrid_index begin, irgrid_index end);

#ifdef __cplusplus
}
#endif
#endif

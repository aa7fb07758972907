// res_bench.h -- resbench's shapes and options (res_shapes.cc has the table).
#ifndef ADALOAD_RES_BENCH_H
#define ADALOAD_RES_BENCH_H

#include <stdint.h>

#include "lnmod_res_desc.h"

// Wan 2.1's three residual sites (kernels/pending/README.md):
//   1: x + y_sa * e[2], then norm3 (GATE, AFFINE)
//   2: x + y_ca, then norm2(x)(1 + e[4]) + e[3] (GATE_NONE, MODULATE)
//   3: x + y_ffn * e[5], then norm1'(x)(1 + e'[1]) + e'[0] (GATE, MODULATE)
struct res_shape {
    const char *name;
    int site;
    lnmod_layout lay;
    lnmod_dtype rt, bt, mt, ot; // res, branch, mod, out
    int64_t D, rows, S, L;
    bool dh;       // the backward gets dh (else NULL)
    bool inplace;  // h = r (forward), dr = dh (backward)
    bool misalign; // every array 4 bytes off 16-byte alignment
    bool timed;
};

extern const res_shape RES_SHAPES[];
extern const int RES_NSHAPES;

// The descriptor of a shape: strides 6*D (chunk views of e [B, 6, D]; +1 misaligned).
lnmod_res_desc res_desc_of(const res_shape &s);

struct res_opts {
    int reps = 9, threads = 16;
    bool quick = false, list = false;
    const char *only = "", *exact = nullptr;
    unsigned long long seed = 1;
};

// --model-test (res_model_test.cc): the check on verify's fp32 CPU models; 0 when all held.
int res_model_test(int threads);
// --plan-test (res_plan_test.cu): the column-sum plans and the workspace layout; 0 when right.
int res_plan_test(void);

#endif

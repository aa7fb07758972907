/* res_inputs.h -- resbench's host inputs and its --self-test (host code only).
 *
 * A shape's inputs, in storage dtypes, made by per-block xorshift streams (the same whatever
 * the thread count): r with a per-row offset (rows i % 7 * 3; every 13th row +1000: a large
 * mean), y in [-0.5, 0.5), the gate in [-1, 1), scale in [-0.25, 0.25) (AFFINE: the weight
 * 1 + that), shift in [-0.5, 0.5), d_out in [-0.5, 0.5), dh in [-0.25, 0.25). Every 29th row
 * has a CONSTANT h: y = 0 and r = 2.5 + i % 3 (so h = r exactly and its variance is 0; an eps
 * baked in as 1e-5 instead of the descriptor's fails it). The gaps between the strided gate /
 * scale / shift rows hold NaN, so a kernel that reads a wrong row makes NaNs. */
#ifndef ADALOAD_RES_INPUTS_H
#define ADALOAD_RES_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "lnmod_res_desc.h"

struct res_host {
    std::vector<char> r, y, gate, scale, shift, dout, dh;
};

/* Elements of a strided modulation array of `rows` rows at `stride` (0 for none). */
int64_t res_mod_elems(int64_t rows, int64_t stride, int64_t D);
/* Bytes of each array of d: rows*D in each dtype, and the gate / scale / shift extents. */
size_t res_gate_bytes(const lnmod_res_desc *d);
size_t res_norm_bytes(const lnmod_res_desc *d, int shift);

/* large_mean false: no +1000 rows (--model-test: verify's fp32 model takes a plain fp32 mean,
 * whose rounding at |mean| ~ 1000 moves xhat by ~3e-5 rstd, past out's atol of 1e-5 where
 * xhat*a + b cancels; the kernels keep the mean as verify's (hi, lo) pivot pair and are held
 * to those rows). */
void res_make_inputs(const lnmod_res_desc *d, uint64_t seed, uint64_t shape_no, int threads, res_host *h,
                     bool large_mean = true);

/* The check against the reference's own outputs rounded to their dtypes (must pass) and the
 * same with one element of each output planted 1% (+0.01, away from 0; 3% in a 16-bit dtype) off (each must fail that output
 * exactly once), at two small shapes. Prints a line per case; 0 when all held. */
int res_self_test(int threads);

#endif

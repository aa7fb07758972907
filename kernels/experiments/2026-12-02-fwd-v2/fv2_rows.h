/* fv2_rows.h -- the x values of the harness's and the emulation test's inputs (one formula
 * for both). u: a uniform number in [0, 1) drawn for element j of row r.
 *   adv 0: (u - 0.5) * 4 plus a per-row offset (r % 7) * 3, so that the statistics matter;
 *   adv 1: the rows that break a careless statistics pass, by r % 5: a constant row at
 *          3e4 + r % 3 (variance exactly 0: rstd = 1/sqrt(eps)); mean 1e4 with a spread of
 *          1e-2 (a constant row again once x is 16-bit); one outlier of 1e3 in a row of
 *          N(0,1)-like values (the pivot may land on it); 5 + 1e-2 noise (a variance of
 *          8e-6, a few eps); huge values (`huge` = 1e15, 1e4 for fp16 x, as the verifier's
 *          VROW_HUGE). (Rows whose variance is far below eps are left out: the verifier's mean
 *          tolerance, 1e-5 of |mean| plus 1e-5 of the spread it recovers from rstd, is then
 *          1e-5 of a mean that is itself a cancellation; its grid has no such rows.)
 *   adv 2: every other row's first element an outlier of 1e3 among N(0,1)-like values (a
 *          statistics pass around the row's first element cancels ~D-fold: the flat chunk
 *          kernel's second pass, round 5), the other rows as adv 0. */
#ifndef ADALOAD_FV2_ROWS_H
#define ADALOAD_FV2_ROWS_H

#include <stdint.h>

static inline double fv2_input(int adv, double huge, int64_t r, int64_t j, int64_t D, double u)
{
    if (!adv || (adv == 2 && r % 2)) return (u - 0.5) * 4.0 + (double)(r % 7) * 3.0;
    if (adv == 2) return j == 0 ? 1e3 : (u - 0.5) * 3.0;
    switch (r % 5) {
    case 0: return 3e4 + (double)(r % 3);
    case 1: return 1e4 + (u - 0.5) * 2e-2;
    case 2: return j == (r * 7) % D ? 1e3 : (u - 0.5) * 3.0;
    case 3: return 5.0 + (u - 0.5) * 1e-2;
    default: return (u - 0.5) * huge;
    }
}

#endif

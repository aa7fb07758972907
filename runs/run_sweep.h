/* run_sweep.h -- the sweep view of a run (`adaload report --sweep RUN`): % of the in-run
 * copy bandwidth against the hidden size D, one series per kernel variant, as a markdown
 * table and as an SVG plot.
 *
 *   ada_sweep w;
 *   char err[256];
 *   if (ada_sweep_build(&set, want, nwant, NULL, &w, err, sizeof err)) -> nothing to show (err says why)
 *   ada_sweep_print(stdout, &w);                 // | D | dtile | row_per_warp | ... |
 *   if (ada_sweep_svg(f, &w, "title")) -> write error
 *   ada_sweep_free(&w);
 *
 * Points come from the lnmod_fwd/<variant>/<x>-<mod>-<y>/<layout>/D<D>/rows<R>[/graph<K>]
 * benchmarks of the set (the PyTorch peers too): the median over repetitions of their
 * pct_copy_bw counter. A sweep is one slice "<x>-<mod>-<y>/<layout>/rows<R>" of the run
 * (given, or by default the slice with the most distinct D; ties go to the first in the
 * run), with one series per variant. A benchmark with an error or without the counter is a missing point ("—" in the table, a
 * gap in the plot), never a zero. The library prints only to the FILE it is given.
 */
#ifndef ADALOAD_RUN_SWEEP_H
#define ADALOAD_RUN_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "run_bench.h"

typedef struct {
    char variant[64];
    double *pct;      /* one per ada_sweep.D; valid where has[i] */
    unsigned char *has;
} ada_sweep_series;

typedef struct {
    int64_t *D;       /* the distinct hidden sizes, ascending */
    int64_t nD;
    ada_sweep_series *s;
    int64_t ns;
    char shape[96];   /* the slice: "<x>-<mod>-<y>/<layout>/rows<R>" */
    char dtypes[24], layout[16]; /* the slice's parts, as run_name.h parsed them */
    int64_t rows, batch;
    int64_t nshapes;  /* slices in the run (of the wanted variants), this one included */
} ada_sweep;

/* Collects the sweep of set for the slice `shape` (NULL: the default slice), keeping only
 * the variants in want[0..nwant) when nwant > 0. 0 on success; -1 with a one-line reason in
 * err (no lnmod_fwd benchmark, no such slice -- the message lists the run's --, out of memory). */
int ada_sweep_build(const ada_bench_set *set, const char *const *want, int nwant, const char *shape,
                    ada_sweep *out, char *err, size_t err_n);
void ada_sweep_free(ada_sweep *w);

/* The markdown table: a row per D, a column per series. */
void ada_sweep_print(FILE *f, const ada_sweep *w);

/* Issue 21's width bar for dtile's forward (bf16 x/y, fp32 per-sample modulation, >= 32,760
 * rows): the % of the in-run copy width D needs -- 90 at the multiples of 64 from 1024 to
 * 16384, 85 at the other multiples of 8 there, 80 at the even widths from 256 to 1023, 60 at
 * odd D -- or 0 where the bar sets nothing (even widths below 256 or above 16384, and the even
 * widths from 1024 that are not multiples of 8). */
double ada_sweep_width_need(int64_t D);

/* The width bar's verdict for series `variant` of w, into f: a line per width that misses its
 * need or has no point, then how many widths meet it, per class and in all. Only for the bar's
 * slice (bf16-f32-bf16/sample/rows<R>, R >= 32,760) and a series that is there: otherwise it
 * prints nothing and returns 1; 0 when printed. */
int ada_sweep_bar_print(FILE *f, const ada_sweep *w, const char *variant);

/* The plot: D on a log2 axis, % of copy from 0, the 90% and 80% bar lines dashed, one
 * polyline with markers per series and a legend. 0, or -1 if writing failed. */
int ada_sweep_svg(FILE *f, const ada_sweep *w, const char *title);

#endif

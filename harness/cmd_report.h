/* cmd_report.h -- the parts of `adaload report` (cmd_report.c) that its other files share:
 * reading a run folder, the sweep view (cmd_report_sweep.c), the user peers' table
 * (cmd_report_peers.c). Each prints to stdout and returns an exit code (cli.h). */
#ifndef ADALOAD_CMD_REPORT_H
#define ADALOAD_CMD_REPORT_H
#include "cli_opts.h"
#include "run_bench.h"

/* bench.json and peers.json (when present) of RUN into *s: ADA_EXIT_OK, or the exit code
 * after the one-line message (2 bad folder or file, 3 out of memory). */
int report_load_run(const char *run, ada_bench_set *s);

/* A shape suffix without its "/graph<K>" part (K follows each direction's own bytes, so a
 * shape's forward and backward share this key). */
void report_shape_key(const char *suffix, char *key, size_t n);

/* The record <op>/<variant>/<key>, or <op>/<variant>/<key>/graph<K> for the K (2..64) the
 * shape's bytes gave it (bench_shapes.h), where key is a shape without /graph<K>; NULL when
 * the run has none. */
const ada_bench_rec *report_find_shape(const ada_bench_set *s, const char *op, const char *variant,
                                       const char *key);

/* --sweep: the view of one slice (shape, or the slice with the most D), with --out also
 * the SVG plot, written atomically and never into the run folder. */
int report_sweep(const char *run, const cli_list *want, const char *shape, const char *out);

/* The benchmarks of the user's own peers (`bench --peer MODULE:FUNCTION`, peer:<name>) beside
 * dtile's of the same shape and direction; prints nothing when the run has none. */
void report_user_peers(const ada_bench_set *s, const cli_list *want);

/* Issue 21's layout and dtype bar (cmd_report_layouts.c): dtile's forward per token, per frame,
 * with fp16 and fp32 x at the bar's widths, >= 85% of copy; nothing when the run has none. */
void report_layout_bar(const ada_bench_set *s);

/* The fused gated residual op's table (cmd_report_res.c: lnmod_res_fwd/lnmod_res_bwd of the
 * kernel variants beside the PyTorch chain's peers) and issue 22's bar; nothing when the run
 * has none. report_res_has_variant: 1 when the run has a res benchmark of that variant. */
void report_res(const ada_bench_set *s, const cli_list *want);
int report_res_has_variant(const ada_bench_set *s, const char *variant);
#endif

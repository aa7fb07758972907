/* cmd_report.c -- `adaload report RUN`: the README's results table from a run folder.
 *
 *   adaload report results/nvidia-h200/2026-11-29T210000Z_abc1234 [--variant V ...]
 *   adaload report --sweep RUN [--shape S] [--variant V ...] [--out plot.svg]
 *
 * Prints markdown: one row per (shape, kernel variant) of the run's lnmod_fwd benchmarks,
 * with the median time (us), bandwidth (TB/s, from the minimal bytes), % of the copy
 * bandwidth measured in the same run, and the speed-up over the PyTorch peers of the same
 * shape (peers.json): x torch.compile = t(torch.compile) / t(variant), x eager likewise.
 * A missing peer or counter prints as an em dash; a peer whose outputs failed the float64
 * check at that shape ("wrong result", runs/run_bench.h) prints as "wrong result", never as a
 * ratio. Where the run has lnmod_bwd benchmarks a second table follows: per (shape, variant)
 * the backward's time, TB/s, % of copy and × each backward peer (eager, torch.compile, Wan's
 * table form under torch.compile, Liger), then forward + backward (the forward found under
 * its own /graph<K>) and × the peers' forward + backward; the bytes each keeps for the
 * backward (saved_bytes); and the backward's bar (issue 18). The fused residual op's
 * lnmod_res_fwd/lnmod_res_bwd benchmarks get their own table and bar (cmd_report_res.c).
 * Exit 0, or 2 for a bad folder.
 *
 * --sweep prints the sweep view instead (runs/run_sweep.h): % of copy against D, a row per
 * D and a column per variant, for one slice <x>-<mod>-<y>/<layout>/rows<R> of the run
 * (--shape; default the slice with the most D). --out FILE also writes it as an SVG plot,
 * atomically; never into the run folder (run folders are never edited), never over
 * anything but a regular file; without --out no plot is written. A bad --out is exit 2 with
 * nothing written.
 */
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "cli_opts.h"
#include "cmd_report.h"
#include "commands.h"
#include "run_bench.h"
#include "run_meta.h"
#include "run_name.h"


static void usage(FILE *f)
{
    fprintf(f, "usage: adaload report RUN_FOLDER [--variant V ...]\n"
               "       adaload report --sweep RUN_FOLDER [--shape S] [--variant V ...] [--out FILE.svg]\n"
               "  prints the results table (markdown) of a run folder written by adaload bench:\n"
               "  shape, variant, us, TB/s, %% of copy, x torch.compile, x eager (and the backward's\n"
               "  table with forward + backward where the run has one); with --sweep, %% of\n"
               "  copy against the hidden size D, one column per variant, and with --out the same as\n"
               "  an SVG plot written to FILE (never into the run folder; no plot without --out)\n");
}

/* Splits a kernel benchmark's name (run_name.h, the one parser) into its variant and the
 * shape after it (a pointer into name); lnmod_bwd names only when bwd is given (*bwd says
 * which). 0 on success. */
static int split_name(const char *name, int *bwd, char *variant, size_t vn, const char **suffix)
{
    ada_bench_name b;
    if (ada_bench_name_parse(name, &b) || b.res || strlen(b.variant) >= vn) return -1; /* res: its own table */
    int is_bwd = !strcmp(b.dir, "bwd");
    if (is_bwd && !bwd) return -1;
    snprintf(variant, vn, "%s", b.variant);
    *suffix = name + strlen(name) - strlen(b.shape);
    if (bwd) *bwd = is_bwd;
    return 0;
}

/* A suffix without its "/graph<K>" part: the shape's forward and backward, whose K each
 * follows their own bytes (bench_shapes.h), share it. */
void report_shape_key(const char *suffix, char *key, size_t n)
{
    snprintf(key, n, "%s", suffix);
    char *g = strstr(key, "/graph");
    if (g) *g = '\0';
}

static int is_peer(const char *variant) { return ada_bench_name_is_peer(variant); }

/* The median time of a record that ran (0: missing, an error or a wrong result). */
static double rec_time(const ada_bench_rec *r)
{
    return (r && !r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0;
}

static const ada_bench_rec *peer_rec(const ada_bench_set *s, const char *op, const char *peer,
                                     const char *suffix)
{
    char name[512];
    snprintf(name, sizeof name, "%s/%s/%s", op, peer, suffix);
    return ada_bench_find(s, name);
}

static double peer_time(const ada_bench_set *s, const char *peer, const char *suffix)
{
    return rec_time(peer_rec(s, "lnmod_fwd", peer, suffix));
}

/* 1 when a record of a peer was checked wrong against float64, 2 when the peer failed at the
 * shape (raised: peers.json's message says how), 0 otherwise (it ran, or it is missing). */
static int rec_bad(const ada_bench_rec *r) { return !r ? 0 : r->wrong ? 1 : r->error ? 2 : 0; }

/* The cell of a peer beside ours: "wrong result" when a record of it was checked wrong
 * against float64, "failed" when it raised (never a ratio), "—" when it did not run, else
 * peer time / ours. */
static void peer_cell(char *buf, size_t n, double peer_t, int bad, double ours)
{
    if (bad) snprintf(buf, n, bad == 1 ? "wrong result" : "failed");
    else if (peer_t > 0 && ours > 0) snprintf(buf, n, "%.2f×", peer_t / ours);
    else snprintf(buf, n, "—");
}

/* The speed bar of the project (README): dtile, per-sample fp32 modulation, D in
 * {1536, 3072, 5120}, rows >= 32,760: >= 90% of the copy bandwidth with bf16 x/y (85% with
 * fp32 x), and >= 2x torch.compile and >= 6x eager. Printed as a summary under the table;
 * a missing peer, or one that failed (raised) at the shape, counts as not met (the bar needs
 * them in the same run); one whose outputs were wrong there is not compared (said under it). */
static void print_bar(const ada_bench_set *s)
{
    int64_t shapes = 0, met = 0, skipped = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        ada_bench_name b;
        if (ada_bench_name_parse(r->name, &b) || strcmp(b.op, "lnmod_fwd") || strcmp(b.variant, "dtile")) continue;
        const char *suffix = r->name + strlen(r->name) - strlen(b.shape);
        int64_t D = b.D, rows = b.rows;
        if (strcmp(b.layout, "sample") || strcmp(b.mod, "f32") || (D != 1536 && D != 3072 && D != 5120) || rows < 32760)
            continue;
        int bf16 = !strcmp(b.x, "bf16") && !strcmp(b.y, "bf16");
        if (!bf16 && strcmp(b.x, "f32")) continue;
        shapes++;
        double need = bf16 ? 90.0 : 85.0;
        double pct = (!r->error && r->has_pct) ? ada_median(r->pct_copy, r->n) : 0;
        double t = (!r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0;
        double tc = peer_time(s, "torch_compile", suffix), te = peer_time(s, "torch_eager", suffix);
        int bc = rec_bad(peer_rec(s, "lnmod_fwd", "torch_compile", suffix)),
            be = rec_bad(peer_rec(s, "lnmod_fwd", "torch_eager", suffix));
        /* wrong (1): not compared; failed (2): the forward bar needs the peer, so not met */
        skipped += bf16 && bc == 1;
        skipped += bf16 && be == 1;
        /* The 2x / 6x part of the bar is for the bf16 shapes only (torch.compile already
         * runs fp32 rows near the copy bandwidth, so 2x is physically out of reach there); a
         * peer that was wrong or failed at the shape is not compared (said under the bar). */
        int ok_bw = pct >= need, ok_c = !bf16 || bc == 1 || (t > 0 && tc >= 2 * t),
            ok_e = !bf16 || be == 1 || (t > 0 && te >= 6 * t);
        if (ok_bw && ok_c && ok_e) {
            met++;
            continue;
        }
        if (shapes - met == 1) printf("\n");
        if (pct > 0) printf("- bar missed: %s: %.1f%% of copy (needs %.0f%%)", suffix, pct, need);
        else printf("- bar missed: %s: no copy ceiling in this run (needs %.0f%%)", suffix, need);
        if (bf16) {
            if (bc) printf(", torch.compile %s", bc == 1 ? "wrong here: not compared" : "failed here (the bar needs it)");
            else if (tc > 0 && t > 0) printf(", %.2f× torch.compile (needs 2×)", tc / t);
            else printf(", no torch.compile peer");
            if (be) printf(", eager %s", be == 1 ? "wrong here: not compared" : "failed here (the bar needs it)");
            else if (te > 0 && t > 0) printf(", %.2f× eager (needs 6×)", te / t);
            else printf(", no eager peer");
        }
        printf("\n");
    }
    if (shapes > 0)
        printf("\nSpeed bar (dtile; D 1536/3072/5120; rows >= 32,760; >= 90%% of copy in bf16, "
               ">= 85%% with fp32 x; bf16 also >= 2× torch.compile and >= 6× eager): %lld of %lld shapes "
               "meet it.\n",
               (long long)met, (long long)shapes);
    if (skipped > 0)
        printf("Not compared: %lld peer forward(s) at these shapes were wrong (\"wrong result\" in the table): "
               "no ratio is taken against them.\n", (long long)skipped);
}

static int report(const char *run, const cli_list *want);

int cmd_report(int argc, char **argv)
{
    const char *run = NULL, *shape = NULL, *out = NULL;
    cli_list want = {0};
    int npos = 0, sweep = 0;
    const cli_opt opts[] = {
        CLI_LIST("--variant", &want, "V", "only these variants (repeatable, or comma-separated)"),
        CLI_FLAG("--sweep", &sweep, "the sweep view: % of copy against D, a column per variant"),
        CLI_STR("--shape", &shape, "S", "with --sweep: the slice <x>-<mod>-<y>/<layout>/rows<R>"),
        CLI_STR("--out", &out, "FILE", "with --sweep: also write the plot as SVG to FILE"),
        CLI_END};
    int r = cli_parse("report", opts, argc, argv, &run, 1, &npos);
    if (r == CLI_HELP) {
        usage(stdout);
        cli_print_options(stdout, opts);
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (!run) return ada_usage_error("report", "give a run folder (results/<testbed>/bench/<run>/)");
    if (!sweep && (shape || out)) return ada_usage_error("report", "--shape and --out go with --sweep");
    /* The report quotes names and messages from the run's files: it is made in memory and
     * printed with their control bytes escaped, so no terminal escape reaches the terminal. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len), *real = stdout;
    if (!mem) return ada_msg("report", "out of memory"), ADA_EXIT_INTERNAL;
    stdout = mem;
    int rc = sweep ? report_sweep(run, &want, shape, out) : report(run, &want);
    stdout = real;
    fclose(mem);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) printf("\\x%02x", c);
        else putchar(c);
    }
    free(text);
    return rc;
}

/* bench.json and peers.json (when present) of a run folder; ADA_EXIT_OK or the usage exit
 * after the one-line message (cmd_report.h). */
int report_load_run(const char *run, ada_bench_set *s)
{
    char err[512];
    struct stat st;
    if (stat(run, &st) != 0 || !S_ISDIR(st.st_mode))
        return ada_usage_error("report", "%s: not a run folder (results/<testbed>/bench/<run>/)", run);
    int lrc = ada_bench_load(run, s, err, sizeof err);
    if (!lrc) return ADA_EXIT_OK;
    ada_bench_set_free(s);
    ada_msg("report", "%s", err);
    return lrc == ADA_RUNS_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
}

/* One table row: a kernel benchmark (not a peer), its variant and shape suffix. */
typedef struct {
    int64_t idx, first; /* record index; index of the first record of its shape */
    const char *suffix;
    char variant[64];
} table_row;

static int by_suffix(const void *a, const void *b)
{
    const table_row *x = a, *y = b;
    int c = strcmp(x->suffix, y->suffix);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int by_first(const void *a, const void *b)
{
    const table_row *x = a, *y = b;
    if (x->first != y->first) return (x->first > y->first) - (x->first < y->first);
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The rows of one direction (bwd 0: lnmod_fwd, 1: lnmod_bwd) in table order -- shapes by
 * first appearance, variants in run order -- by two sorts (n log n: a run may hold tens of
 * thousands of benchmarks). NULL when none / OOM. */
static table_row *table_order(const ada_bench_set *s, int bwd, int64_t *n)
{
    *n = 0;
    table_row *t = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *t);
    if (!t) {
        *n = s->n;
        return NULL;
    }
    for (int64_t i = 0; i < s->n; i++) {
        table_row *r = &t[*n];
        int b = 0;
        if (split_name(s->r[i].name, &b, r->variant, sizeof r->variant, &r->suffix) || b != bwd ||
            is_peer(r->variant))
            continue;
        r->idx = i;
        (*n)++;
    }
    qsort(t, (size_t)*n, sizeof *t, by_suffix);
    for (int64_t i = 0; i < *n; i++)
        t[i].first = (i > 0 && !strcmp(t[i].suffix, t[i - 1].suffix)) ? t[i - 1].first : t[i].idx;
    qsort(t, (size_t)*n, sizeof *t, by_first);
    return t;
}

static void print_row(const ada_bench_set *s, const ada_bench_rec *r, const char *v, const char *suffix)
{
    if (r->error || r->n == 0) {
        printf("| %s | %s | error: %s | — | — | — | — |\n", suffix, v, r->error_message ? r->error_message : "no repetitions");
        return;
    }
    double t = ada_median(r->time_ns, r->n);
    char tbs[32] = "—", pct[32] = "—", xc[32] = "—", xe[32] = "—";
    if (r->has_bps) snprintf(tbs, sizeof tbs, "%.2f", ada_median(r->bps, r->n) * 1e-12);
    /* 0 means no copy ceiling of these bytes ran: shown as missing, not as 0%. */
    if (r->has_pct && ada_median(r->pct_copy, r->n) > 0) snprintf(pct, sizeof pct, "%.1f%%", ada_median(r->pct_copy, r->n));
    const ada_bench_rec *pc = peer_rec(s, "lnmod_fwd", "torch_compile", suffix),
                        *pe = peer_rec(s, "lnmod_fwd", "torch_eager", suffix);
    peer_cell(xc, sizeof xc, rec_time(pc), rec_bad(pc), t);
    peer_cell(xe, sizeof xe, rec_time(pe), rec_bad(pe), t);
    printf("| %s | %s | %.1f | %s | %s | %s | %s |\n", suffix, v, t * 1e-3, tbs, pct, xc, xe);
}

/* The backward's peers (bench/peers/torch_peers.py) and their column titles. */
static const char *const bwd_peers[] = {"torch_eager", "torch_compile", "torch_compile_table", "liger"};
static const char *const bwd_heads[] = {"eager", "torch.compile", "compile, Wan table", "Liger"};
enum { N_BWD_PEERS = 4 };

/* <op>/<variant>/<key>[/graph<K>] with K in 2..64 (ada_graph_k's range), or NULL
 * (cmd_report.h). */
const ada_bench_rec *report_find_shape(const ada_bench_set *s, const char *op, const char *variant,
                                       const char *key)
{
    char name[600];
    snprintf(name, sizeof name, "%s/%s/%s", op, variant, key);
    const ada_bench_rec *r = ada_bench_find(s, name);
    for (int k = 2; !r && k <= 64; k++) {
        snprintf(name, sizeof name, "%s/%s/%s/graph%d", op, variant, key, k);
        r = ada_bench_find(s, name);
    }
    return r;
}

/* Forward + backward of variant at a shape: the time (0 when either is missing) and whether
 * either was checked wrong (1) or failed (2), as rec_bad. */
static double fwd_bwd(const ada_bench_set *s, const char *variant, const char *key, int *wrong)
{
    const ada_bench_rec *f = report_find_shape(s, "lnmod_fwd", variant, key),
                        *b = report_find_shape(s, "lnmod_bwd", variant, key);
    *wrong = rec_bad(f) > rec_bad(b) ? rec_bad(f) : rec_bad(b);
    double tf = rec_time(f), tb = rec_time(b);
    return tf > 0 && tb > 0 ? tf + tb : 0;
}

static void bwd_row(const ada_bench_set *s, const ada_bench_rec *r, const char *v, const char *suffix)
{
    char key[512], cells[N_BWD_PEERS][32], sum[N_BWD_PEERS][32], tf[32] = "—", tfb[32] = "—";
    report_shape_key(suffix, key, sizeof key);
    if (r->error || r->n == 0) {
        printf("| %s | %s | error: %s | | | | | | |\n", key, v, r->error_message ? r->error_message : "no repetitions");
        return;
    }
    double t = rec_time(r), pct = r->has_pct ? ada_median(r->pct_copy, r->n) : 0;
    int w = 0;
    double f = rec_time(report_find_shape(s, "lnmod_fwd", v, key)), ours = fwd_bwd(s, v, key, &w);
    if (f > 0) snprintf(tf, sizeof tf, "%.1f", f * 1e-3);
    if (ours > 0) snprintf(tfb, sizeof tfb, "%.1f", ours * 1e-3);
    for (int p = 0; p < N_BWD_PEERS; p++) {
        const ada_bench_rec *pb = peer_rec(s, "lnmod_bwd", bwd_peers[p], suffix);
        peer_cell(cells[p], sizeof cells[p], rec_time(pb), rec_bad(pb), t);
        int pw = 0;
        double pt = fwd_bwd(s, bwd_peers[p], key, &pw);
        peer_cell(sum[p], sizeof sum[p], pt, pw, ours);
    }
    char pc[32] = "—";
    if (pct > 0) snprintf(pc, sizeof pc, "%.1f%%", pct);
    printf("| %s | %s | %.1f | %.2f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", key, v,
           t * 1e-3, r->has_bps ? ada_median(r->bps, r->n) * 1e-12 : 0.0, pc, cells[0], cells[1], cells[2],
           cells[3], tf, tfb, sum[0], sum[1], sum[2], sum[3]);
}

/* Bytes the forward keeps for the backward, per shape: ours (saved_bytes of our backward
 * benchmarks: mean and rstd, 8 B a row) against the peers' (torch.cuda.memory_allocated). */
static void print_saved(const ada_bench_set *s, const table_row *rows, int64_t n)
{
    int any = 0;
    for (int64_t k = 0; k < n; k++) {
        const ada_bench_rec *r = &s->r[rows[k].idx];
        if (!r->has_saved || (k > 0 && !strcmp(rows[k].suffix, rows[k - 1].suffix))) continue;
        if (!any++)
            printf("\nKept for the backward beyond the inputs (MB; x itself is kept by all): ours (mean, "
                   "rstd) against PyTorch's, torch.cuda.memory_allocated after one forward.\n\n"
                   "| shape | ours | eager | torch.compile | compile, Wan table | Liger |\n"
                   "|---|---:|---:|---:|---:|---:|\n");
        char key[512];
        report_shape_key(rows[k].suffix, key, sizeof key);
        printf("| %s | %.1f", key, r->saved_bytes * 1e-6);
        for (int p = 0; p < N_BWD_PEERS; p++) {
            const ada_bench_rec *pb = peer_rec(s, "lnmod_bwd", bwd_peers[p], rows[k].suffix);
            if (pb && pb->has_saved) printf(" | %.1f", pb->saved_bytes * 1e-6);
            else printf(" | %s", rec_bad(pb) == 1 ? "wrong result" : rec_bad(pb) ? "failed" : "—");
        }
        printf(" |\n");
    }
}

/* The backward's bar (issue 18): dtile, bf16 x/dy/dx, fp32 modulation, D 1536/3072/5120,
 * rows >= 32,760: >= 85% of copy per sample (80% per token and per frame); per sample also
 * >= 3.5x eager's and >= 1.4x torch.compile's backward where its gradients are right, ahead
 * of Liger where it ran, and forward + backward >= 1.5x torch.compile's. */
static void print_bwd_bar(const ada_bench_set *s, const table_row *rows, int64_t n)
{
    int64_t shapes = 0, met = 0, skipped = 0;
    for (int64_t k = 0; k < n; k++) {
        const ada_bench_rec *r = &s->r[rows[k].idx];
        ada_bench_name b;
        if (strcmp(rows[k].variant, "dtile") || ada_bench_name_parse(r->name, &b) || strcmp(b.dtypes, "bf16-f32-bf16") ||
            (b.D != 1536 && b.D != 3072 && b.D != 5120) || b.rows < 32760)
            continue;
        int sample = !strcmp(b.layout, "sample");
        shapes++;
        double need = sample ? 85.0 : 80.0, t = rec_time(r);
        double pct = (t > 0 && r->has_pct) ? ada_median(r->pct_copy, r->n) : 0;
        char why[512] = "";
        size_t w = 0;
        if (!(pct >= need)) w += (size_t)snprintf(why + w, sizeof why - w, ", %.1f%% of copy (needs %.0f%%)", pct, need);
        if (sample) {
            static const double want[N_BWD_PEERS] = {3.5, 1.4, 1.4, 1.0};
            char key[512];
            report_shape_key(rows[k].suffix, key, sizeof key);
            for (int p = 0; p < N_BWD_PEERS && w < sizeof why - 96; p++) {
                const ada_bench_rec *pb = peer_rec(s, "lnmod_bwd", bwd_peers[p], rows[k].suffix);
                double pt = rec_time(pb);
                if (rec_bad(pb)) { /* a wrong or failed peer is not a bar to meet */
                    skipped++;
                    continue;
                }
                if (pt <= 0 && p < 2) w += (size_t)snprintf(why + w, sizeof why - w, ", no %s peer", bwd_heads[p]);
                else if (pt > 0 && !(t > 0 && pt >= want[p] * t))
                    w += (size_t)snprintf(why + w, sizeof why - w, ", %.2f× %s (needs %.1f×)", t > 0 ? pt / t : 0,
                                          bwd_heads[p], want[p]);
            }
            int ow = 0, cw = 0;
            double ours = fwd_bwd(s, "dtile", key, &ow), tc = fwd_bwd(s, "torch_compile", key, &cw);
            if (!cw && tc > 0 && !(ours > 0 && tc >= 1.5 * ours) && w < sizeof why - 96)
                w += (size_t)snprintf(why + w, sizeof why - w, ", fwd+bwd %.2f× torch.compile (needs 1.5×)",
                                      ours > 0 ? tc / ours : 0);
        }
        if (w == 0) {
            met++;
            continue;
        }
        if (shapes - met == 1) printf("\n");
        printf("- backward bar missed: %s%s\n", rows[k].suffix, why);
    }
    if (shapes > 0)
        printf("\nBackward bar (dtile; bf16, fp32 modulation; D 1536/3072/5120; rows >= 32,760; >= 85%% of copy "
               "per sample, 80%% per token and frame; per sample >= 3.5× eager, >= 1.4× torch.compile where its "
               "gradients are right, ahead of Liger, fwd+bwd >= 1.5× torch.compile): %lld of %lld shapes meet it.\n",
               (long long)met, (long long)shapes);
    if (skipped > 0)
        printf("Not compared: %lld peer backward(s) at these shapes were wrong or failed (\"wrong result\" / "
               "\"failed\" in the table): no ratio is taken against them.\n", (long long)skipped);
}

/* The backward table, forward + backward beside it, the memory kept, the bar. */
static int print_backward(const ada_bench_set *s, const cli_list *want)
{
    int64_t n = 0;
    table_row *rows = table_order(s, 1, &n);
    if (!rows) return n > 0 ? -1 : 0;
    int64_t kept = 0;
    for (int64_t k = 0; k < n; k++) {
        int wanted = want->n == 0;
        for (int q = 0; q < want->n && !wanted; q++) wanted = !strcmp(want->v[q], rows[k].variant);
        if (wanted) rows[kept++] = rows[k];
    }
    if (kept > 0) {
        printf("\nBackward (dx, dscale, dshift; TB/s and %% of copy from its minimal bytes: read x, dy, mean, "
               "rstd and scale, write dx, dscale and dshift) and forward + backward. × = the PyTorch peer's "
               "time / ours: backward alone, then fwd+bwd; \"wrong result\": the peer's outputs or gradients "
               "failed the float64 check at that shape (peers.json says by how much).\n\n"
               "| shape | variant | bwd µs | TB/s | %% of copy | × eager | × torch.compile | × compile, Wan table "
               "| × Liger | fwd µs | fwd+bwd µs | fwd+bwd × eager | × torch.compile | × compile, Wan table | × Liger |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int64_t k = 0; k < kept; k++) bwd_row(s, &s->r[rows[k].idx], rows[k].variant, rows[k].suffix);
        print_saved(s, rows, kept);
        print_bwd_bar(s, rows, kept);
    }
    free(rows);
    return 0;
}

/* Every --variant must name a variant of the run: 0, or -1 after the message. */
static int check_variants(const ada_bench_set *s, const cli_list *want, const char *run)
{
    for (int q = 0; q < want->n; q++) {
        int found = 0;
        for (int64_t i = 0; i < s->n && !found; i++) {
            char v[64];
            const char *suf;
            int b;
            found = !split_name(s->r[i].name, &b, v, sizeof v, &suf) && !strcmp(v, want->v[q]);
        }
        found = found || report_res_has_variant(s, want->v[q]);
        if (!found) {
            ada_usage_error("report", "--variant %s: no such variant in %s", want->v[q], run);
            return -1;
        }
    }
    return 0;
}

static int report(const char *run, const cli_list *want)
{
    ada_bench_set s = {0};
    char path[4096];
    int lrc = report_load_run(run, &s);
    if (lrc) return lrc;

    if (check_variants(&s, want, run)) {
        ada_bench_set_free(&s);
        return ADA_EXIT_USAGE;
    }
    /* The device, from meta.json when it says. */
    snprintf(path, sizeof path, "%s/meta.json", run);
    json_t *meta = json_load_file(path, 0, NULL);
    const char *gpu = NULL;
    if (meta) {
        json_t *m = json_object_get(meta, "sysinfo"); /* meta.json; "machine" in older files */
        if (!m) m = json_object_get(meta, "machine");
        if (!m) m = meta;
        gpu = json_string_value(json_object_get(
            json_array_get(json_object_get(json_object_get(m, "cuda"), "devices"), 0), "name"));
    }
    printf("Run `%s`%s%s. Medians over the repetitions; TB/s from the minimal bytes; %% of copy "
           "= of a device-to-device copy of the same bytes timed in the same run; x = PyTorch "
           "peer's time / ours.\n\n",
           run, gpu ? " on " : "", gpu ? gpu : "");
    ada_run_meta pm; /* the plug-ins, through meta.json's one reader (run_meta.h) */
    if (meta && ada_run_meta_from_json(meta, &pm) == ADA_RUNS_OK) {
        char esc[4 * 2048 + 1];
        ada_escape(pm.plugins, esc, sizeof esc);
        if (pm.plugins[0]) printf("Plug-in variants (`plugin:<name>`, not adaload's kernels): %s.\n\n", esc);
        ada_run_meta_free(&pm);
    }
    json_decref(meta);

    printf("| shape | variant | µs | TB/s | %% of copy | × torch.compile | × eager |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
    int64_t rows = 0, nrow = 0;
    table_row *order = table_order(&s, 0, &nrow);
    if (!order && nrow > 0) {
        ada_bench_set_free(&s);
        ada_msg("report", "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    /* Shapes in the order of the run, each with its variants in the order of the run. */
    for (int64_t k = 0; k < nrow; k++) {
        const ada_bench_rec *r = &s.r[order[k].idx];
        const char *suffix = order[k].suffix, *v = order[k].variant;
        int wanted = want->n == 0;
        for (int q = 0; q < want->n && !wanted; q++) wanted = !strcmp(want->v[q], v);
        if (!wanted) continue;
        rows++;
        print_row(&s, r, v, suffix);
    }
    free(order);
    if (rows == 0) printf("| (no lnmod_fwd benchmarks in this run) | | | | | | |\n");
    print_bar(&s);
    report_layout_bar(&s);
    report_user_peers(&s, want);
    if (print_backward(&s, want)) {
        ada_bench_set_free(&s);
        ada_msg("report", "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    report_res(&s, want);
    ada_bench_set_free(&s);
    return ADA_EXIT_OK;
}

/* cmd_report.c -- `adaload report RUN`: the README's results table from a run folder.
 *
 *   adaload report results/nvidia-h200/2026-11-29T210000Z_abc1234 [--variant V ...]
 *   adaload report --sweep RUN [--shape S] [--variant V ...] [--out plot.svg]
 *
 * Prints markdown: one row per (shape, kernel variant) of the run's lnmod_fwd benchmarks,
 * with the median time (us), bandwidth (TB/s, from the minimal bytes), % of the copy
 * bandwidth measured in the same run, and the speed-up over the PyTorch peers of the same
 * shape (peers.json): x torch.compile = t(torch.compile) / t(variant), x eager likewise.
 * A missing peer or counter prints as an em dash. Exit 0, or 2 for a bad folder.
 *
 * --sweep prints the sweep view instead (runs/run_sweep.h): % of copy against D, a row per
 * D and a column per variant, for one slice <x>-<mod>-<y>/<layout>/rows<R> of the run
 * (--shape; default the slice with the most D). --out FILE also writes it as an SVG plot,
 * atomically; never into the run folder (run folders are never edited), never over
 * anything but a regular file; without --out no plot is written. A bad --out is exit 2 with
 * nothing written.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ada_output.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "run_bench.h"
#include "run_sweep.h"

static const char *const peer_prefixes[] = {"torch_", NULL};

static void usage(FILE *f)
{
    fprintf(f, "usage: adaload report RUN_FOLDER [--variant V ...]\n"
               "       adaload report --sweep RUN_FOLDER [--shape S] [--variant V ...] [--out FILE.svg]\n"
               "  prints the results table (markdown) of a run folder written by adaload bench:\n"
               "  shape, variant, us, TB/s, %% of copy, x torch.compile, x eager; with --sweep, %% of\n"
               "  copy against the hidden size D, one column per variant, and with --out the same as\n"
               "  an SVG plot written to FILE (never into the run folder; no plot without --out)\n");
}

/* Splits "lnmod_fwd/<variant>/<suffix>"; 0 on success. */
static int split_name(const char *name, char *variant, size_t vn, const char **suffix)
{
    const char *p = "lnmod_fwd/";
    if (strncmp(name, p, strlen(p))) return -1;
    const char *v = name + strlen(p), *slash = strchr(v, '/');
    if (!slash || (size_t)(slash - v) >= vn) return -1;
    memcpy(variant, v, (size_t)(slash - v));
    variant[slash - v] = '\0';
    *suffix = slash + 1;
    return 0;
}

static int is_peer(const char *variant)
{
    for (const char *const *p = peer_prefixes; *p; p++)
        if (!strncmp(variant, *p, strlen(*p))) return 1;
    return 0;
}

static double peer_time(const ada_bench_set *s, const char *peer, const char *suffix)
{
    char name[512];
    snprintf(name, sizeof name, "lnmod_fwd/%s/%s", peer, suffix);
    const ada_bench_rec *r = ada_bench_find(s, name);
    return (r && !r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0;
}

/* The speed bar of the project (README): dtile, per-sample fp32 modulation, D in
 * {1536, 3072, 5120}, rows >= 32,760: >= 90% of the copy bandwidth with bf16 x/y (85% with
 * fp32 x), and >= 2x torch.compile and >= 6x eager. Printed as a summary under the table;
 * a missing peer counts as not met (the bar needs them in the same run). */
static void print_bar(const ada_bench_set *s)
{
    int64_t shapes = 0, met = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        char v[128], x[8], m[8], y[8];
        const char *suffix;
        long long D = 0, rows = 0;
        if (split_name(r->name, v, sizeof v, &suffix) || strcmp(v, "dtile")) continue;
        if (sscanf(suffix, "%7[^-]-%7[^-]-%7[^/]/sample/D%lld/rows%lld", x, m, y, &D, &rows) != 5) continue;
        if (strcmp(m, "f32") || (D != 1536 && D != 3072 && D != 5120) || rows < 32760) continue;
        int bf16 = !strcmp(x, "bf16") && !strcmp(y, "bf16");
        if (!bf16 && strcmp(x, "f32")) continue;
        shapes++;
        double need = bf16 ? 90.0 : 85.0;
        double pct = (!r->error && r->has_pct) ? ada_median(r->pct_copy, r->n) : 0;
        double t = (!r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0;
        double tc = peer_time(s, "torch_compile", suffix), te = peer_time(s, "torch_eager", suffix);
        /* The 2x / 6x part of the bar is for the bf16 shapes only (torch.compile already
         * runs fp32 rows near the copy bandwidth, so 2x is physically out of reach there). */
        int ok_bw = pct >= need, ok_c = !bf16 || (t > 0 && tc >= 2 * t),
            ok_e = !bf16 || (t > 0 && te >= 6 * t);
        if (ok_bw && ok_c && ok_e) {
            met++;
            continue;
        }
        if (shapes - met == 1) printf("\n");
        if (pct > 0) printf("- bar missed: %s: %.1f%% of copy (needs %.0f%%)", suffix, pct, need);
        else printf("- bar missed: %s: no copy ceiling in this run (needs %.0f%%)", suffix, need);
        if (bf16) {
            if (tc > 0 && t > 0) printf(", %.2f× torch.compile (needs 2×)", tc / t);
            else printf(", no torch.compile peer");
            if (te > 0 && t > 0) printf(", %.2f× eager (needs 6×)", te / t);
            else printf(", no eager peer");
        }
        printf("\n");
    }
    if (shapes > 0)
        printf("\nSpeed bar (dtile; D 1536/3072/5120; rows >= 32,760; >= 90%% of copy in bf16, "
               ">= 85%% with fp32 x; bf16 also >= 2× torch.compile and >= 6× eager): %lld of %lld shapes "
               "meet it.\n",
               (long long)met, (long long)shapes);
}

static int report(const char *run, const cli_list *want);
static int sweep_report(const char *run, const cli_list *want, const char *shape, const char *out);

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
    return sweep ? sweep_report(run, &want, shape, out) : report(run, &want);
}

/* bench.json and peers.json (when present) of a run folder; ADA_EXIT_OK or the usage exit
 * after the one-line message. */
static int load_run(const char *run, ada_bench_set *s)
{
    char err[512], path[4096];
    snprintf(path, sizeof path, "%s/bench.json", run);
    int lrc = ada_bench_load_file(path, s, err, sizeof err);
    snprintf(path, sizeof path, "%s/peers.json", run);
    FILE *pf = lrc ? NULL : fopen(path, "r");
    if (pf) {
        fclose(pf);
        lrc = ada_bench_load_file(path, s, err, sizeof err);
    }
    if (!lrc) return ADA_EXIT_OK;
    ada_bench_set_free(s);
    ada_msg("report", "%s", err);
    return lrc == ADA_RUNS_ENOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
}

/* 0 when out may be written: not inside the run folder, and nothing or a regular file there. */
static int check_out(const char *run, const char *out)
{
    struct stat st;
    if (lstat(out, &st) == 0 && !S_ISREG(st.st_mode))
        return ada_usage_error("report", "--out %s: exists and is not a regular file (not replaced)", out);
    char dir[PATH_MAX], rdir[PATH_MAX], rrun[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (!realpath(dir, rdir)) return ada_usage_error("report", "--out %s: folder %s: %s", out, dir, strerror(errno));
    if (!realpath(run, rrun)) return ada_usage_error("report", "%s: %s", run, strerror(errno));
    size_t n = strlen(rrun);
    if (!strncmp(rdir, rrun, n) && (rdir[n] == '\0' || rdir[n] == '/'))
        return ada_usage_error("report", "--out %s: inside the run folder; run folders are never edited", out);
    return ADA_EXIT_OK;
}

static int sweep_report(const char *run, const cli_list *want, const char *shape, const char *out)
{
    if (out && check_out(run, out)) return ADA_EXIT_USAGE;
    ada_bench_set s = {0};
    int rc = load_run(run, &s);
    if (rc) return rc;
    ada_sweep w;
    char err[1024];
    if (ada_sweep_build(&s, want->v, want->n, shape, &w, err, sizeof err)) {
        ada_bench_set_free(&s);
        return ada_usage_error("report", "%s: %s", run, err);
    }
    ada_bench_set_free(&s);
    printf("Run `%s`. Medians of pct_copy_bw over the repetitions (%% of a device-to-device "
           "copy of the same bytes timed in the same run).\n\n", run);
    ada_sweep_print(stdout, &w);
    if (out) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        char title[512];
        snprintf(title, sizeof title, "%s: %s", run, w.shape);
        int bad = !m || ada_sweep_svg(m, &w, title);
        if (m) bad = (fclose(m) != 0) || bad;
        if (bad || ada_write_file_atomic(out, buf, len)) {
            rc = ada_usage_error("report", "cannot write %s: %s", out, errno ? strerror(errno) : "I/O error");
        } else {
            printf("\nPlot: %s\n", out);
        }
        free(buf);
    }
    ada_sweep_free(&w);
    return rc;
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

/* The rows in table order -- shapes by first appearance, variants in run order -- by two
 * sorts (n log n: a run may hold tens of thousands of benchmarks). NULL when none / OOM. */
static table_row *table_order(const ada_bench_set *s, int64_t *n)
{
    *n = 0;
    table_row *t = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *t);
    if (!t) {
        *n = s->n;
        return NULL;
    }
    for (int64_t i = 0; i < s->n; i++) {
        table_row *r = &t[*n];
        if (split_name(s->r[i].name, r->variant, sizeof r->variant, &r->suffix) || is_peer(r->variant)) continue;
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
    double tc = peer_time(s, "torch_compile", suffix), te = peer_time(s, "torch_eager", suffix);
    if (tc > 0) snprintf(xc, sizeof xc, "%.2f×", tc / t);
    if (te > 0) snprintf(xe, sizeof xe, "%.2f×", te / t);
    printf("| %s | %s | %.1f | %s | %s | %s | %s |\n", suffix, v, t * 1e-3, tbs, pct, xc, xe);
}

/* Every --variant must name a variant of the run: 0, or -1 after the message. */
static int check_variants(const ada_bench_set *s, const cli_list *want, const char *run)
{
    for (int q = 0; q < want->n; q++) {
        int found = 0;
        for (int64_t i = 0; i < s->n && !found; i++) {
            char v[64];
            const char *suf;
            found = !split_name(s->r[i].name, v, sizeof v, &suf) && !strcmp(v, want->v[q]);
        }
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
    int lrc = load_run(run, &s);
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
    json_decref(meta);

    printf("| shape | variant | µs | TB/s | %% of copy | × torch.compile | × eager |\n");
    printf("|---|---|---:|---:|---:|---:|---:|\n");
    int64_t rows = 0, nrow = 0;
    table_row *order = table_order(&s, &nrow);
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
    ada_bench_set_free(&s);
    return ADA_EXIT_OK;
}

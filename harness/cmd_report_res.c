/* cmd_report_res.c -- `adaload report`'s table of the fused gated residual op (issue 22):
 * per (shape, kernel variant) of the run's lnmod_res_fwd / lnmod_res_bwd benchmarks, each
 * direction's median time and % of the in-run copy of its minimal bytes (bench_shapes.h:
 * lnmod_res_fwd_min_bytes with the statistics, lnmod_res_bwd_min_bytes with dh), forward +
 * backward, and × each PyTorch peer of the chain (eager, torch.compile) per direction and for
 * forward + backward; a peer checked wrong against float64 at the shape prints "wrong result",
 * one that raised "failed", never a ratio. Rows of every residual site of Wan's block (a shape
 * key with /site1 or /site2 after the layout: run_name.h; none: site 3). Then issue 22's bar,
 * of site 3's shapes alone: each shape that misses it with its reasons, the count, and how many
 * shapes compile could not be compared at. Prints nothing when the run has no such benchmarks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_report.h"
#include "run_name.h"

static const char *const res_peers[] = {"torch_eager", "torch_compile"};
enum { N_RES_PEERS = 2 };

static double med(const ada_bench_rec *r) { return (r && !r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0; }
static int bad(const ada_bench_rec *r) { return !r ? 0 : r->wrong ? 1 : r->error ? 2 : 0; }
static double pct(const ada_bench_rec *r)
{
    return (r && !r->error && r->n > 0 && r->has_pct) ? ada_median(r->pct_copy, r->n) : 0;
}

/* "wrong result", "failed", "—" or the ratio peer / ours. */
static void cell(char *buf, size_t n, double peer_t, int why, double ours)
{
    if (why) snprintf(buf, n, why == 1 ? "wrong result" : "failed");
    else if (peer_t > 0 && ours > 0) snprintf(buf, n, "%.2f×", peer_t / ours);
    else snprintf(buf, n, "—");
}

static void num(char *buf, size_t n, double v, const char *fmt)
{
    if (v > 0) snprintf(buf, n, fmt, v);
    else snprintf(buf, n, "—");
}

int report_res_has_variant(const ada_bench_set *s, const char *variant)
{
    ada_bench_name b;
    for (int64_t i = 0; i < s->n; i++)
        if (!ada_bench_name_parse(s->r[i].name, &b) && b.res && !strcmp(b.variant, variant)) return 1;
    return 0;
}

typedef struct {
    const ada_bench_rec *f, *b;
    double tf, tb;
} res_pair;

static res_pair pair_of(const ada_bench_set *s, const char *variant, const char *key)
{
    res_pair p = {report_find_shape(s, "lnmod_res_fwd", variant, key), report_find_shape(s, "lnmod_res_bwd", variant, key),
                  0, 0};
    p.tf = med(p.f);
    p.tb = med(p.b);
    return p;
}

/* One row; returns 1 when it is a bar shape (dtile, site 3 with its dtypes, per sample, Wan D,
 * rows >= 32,760), with *met, *compared (compile right at the shape) and, when missed, why[]
 * (the reasons, ", "-separated) filled. Sites 1 and 2 are rows, never bar shapes. */
static int row(const ada_bench_set *s, const ada_bench_name *nb, const char *key, int *met, int *compared, char *why,
               size_t nwhy)
{
    res_pair o = pair_of(s, nb->variant, key), pe[N_RES_PEERS];
    char fu[32], fp[32], bu[32], bp[32], su[32], x[3][N_RES_PEERS][32];
    num(fu, sizeof fu, o.tf * 1e-3, "%.1f");
    num(fp, sizeof fp, pct(o.f), "%.1f%%");
    num(bu, sizeof bu, o.tb * 1e-3, "%.1f");
    num(bp, sizeof bp, pct(o.b), "%.1f%%");
    num(su, sizeof su, (o.tf > 0 && o.tb > 0) ? (o.tf + o.tb) * 1e-3 : 0, "%.1f");
    for (int p = 0; p < N_RES_PEERS; p++) {
        pe[p] = pair_of(s, res_peers[p], key);
        cell(x[0][p], sizeof x[0][p], pe[p].tf, bad(pe[p].f), o.tf);
        cell(x[1][p], sizeof x[1][p], pe[p].tb, bad(pe[p].b), o.tb);
        int kind = bad(pe[p].f) == 1 || bad(pe[p].b) == 1 ? 1 : (bad(pe[p].f) || bad(pe[p].b)) ? 2 : 0;
        cell(x[2][p], sizeof x[2][p], (pe[p].tf > 0 && pe[p].tb > 0) ? pe[p].tf + pe[p].tb : 0, kind,
             (o.tf > 0 && o.tb > 0) ? o.tf + o.tb : 0);
    }
    printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", key, nb->variant, fu, fp, bu, bp, su,
           x[0][0], x[0][1], x[1][0], x[1][1], x[2][0], x[2][1]);
    if (nb->site != 3 || strcmp(nb->variant, "dtile") || strcmp(nb->layout, "sample") || strcmp(nb->x, "f32") ||
        strcmp(nb->branch, "bf16") || strcmp(nb->mod, "f32") || strcmp(nb->y, "bf16") || nb->rows < 32760 ||
        (nb->D != 1536 && nb->D != 3072 && nb->D != 5120))
        return 0;
    /* Compile's results are right unless its forward was wrong or its backward was wrong or
     * raised (a backward that returns no gradient has no right result; as issue 18's bar); a
     * forward that raised misses the bar for want of it. */
    const res_pair *c = &pe[1];
    *compared = !(bad(c->f) == 1 || bad(c->b) != 0);
    double ours = o.tf + o.tb, theirs = c->tf + c->tb;
    size_t w = 0;
    why[0] = 0;
    if (!(pct(o.f) >= 85.0)) w += (size_t)snprintf(why + w, nwhy - w, ", forward %s of copy (needs 85%%)", fp);
    if (!(pct(o.b) >= 85.0) && w < nwhy) w += (size_t)snprintf(why + w, nwhy - w, ", backward %s of copy (needs 85%%)", bp);
    if (*compared && w < nwhy) {
        if (bad(c->f)) w += (size_t)snprintf(why + w, nwhy - w, ", torch.compile's forward failed (the bar needs it)");
        else if (!(o.tf > 0 && o.tb > 0 && c->tf > 0 && c->tb > 0)) w += (size_t)snprintf(why + w, nwhy - w, ", no fwd+bwd time to compare");
        else if (!(theirs >= 1.5 * ours))
            w += (size_t)snprintf(why + w, nwhy - w, ", fwd+bwd %.3f× torch.compile (needs 1.5×)", theirs / ours);
    }
    *met = w == 0;
    return 1;
}

void report_res(const ada_bench_set *s, const cli_list *want)
{
    int64_t shapes = 0, met = 0, not_compared = 0, nrow = 0;
    char missed[9][800]; /* "- bar missed: " + key[256] + why[512] */
    int nmissed = 0;
    for (int64_t i = 0; i < s->n; i++) {
        ada_bench_name b, e;
        char key[256], ek[256];
        if (ada_bench_name_parse(s->r[i].name, &b) || !b.res || ada_bench_name_is_peer(b.variant)) continue;
        int wanted = want->n == 0;
        for (int q = 0; q < want->n && !wanted; q++) wanted = !strcmp(want->v[q], b.variant);
        if (!wanted) continue;
        report_shape_key(b.shape, key, sizeof key);
        int seen = 0; /* the other direction of this (shape, variant) came first */
        for (int64_t j = 0; j < i && !seen; j++) {
            if (ada_bench_name_parse(s->r[j].name, &e) || !e.res || strcmp(e.variant, b.variant)) continue;
            report_shape_key(e.shape, ek, sizeof ek);
            seen = !strcmp(ek, key);
        }
        if (seen) continue;
        if (nrow++ == 0)
            printf("\nFused gated residual + LayerNorm-Modulate (issue 22: h = r + g·y, out = LN(h)·(1 + scale) + "
                   "shift -- Wan's site 3; a shape with site1: g = e[2], out = LN(h)·w + b (norm3), site2: h = r + "
                   "y, scale e[4], shift e[3]; forward with mean/rstd, backward with dh; %% of copy from each "
                   "direction's minimal bytes). × = the PyTorch peer's time / ours (its chain, eager and "
                   "torch.compile); \"wrong result\": its outputs or gradients failed the float64 check at that "
                   "shape.\n\n"
                   "| shape | variant | fwd µs | fwd %% of copy | bwd µs | bwd %% of copy | fwd+bwd µs | fwd × eager "
                   "| fwd × torch.compile | bwd × eager | bwd × torch.compile | fwd+bwd × eager | fwd+bwd × torch.compile |\n"
                   "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        int m = 0, compared = 1;
        char why[512];
        if (row(s, &b, key, &m, &compared, why, sizeof why)) {
            shapes++;
            met += m;
            not_compared += !compared;
            if (!m && nmissed < 9) snprintf(missed[nmissed++], sizeof missed[0], "- bar missed: %s%s", key, why);
        }
    }
    if (nmissed > 0) printf("\n");
    for (int i = 0; i < nmissed; i++) printf("%s\n", missed[i]);
    if (shapes - met > nmissed) printf("- (%lld more shapes missed it)\n", (long long)(shapes - met - nmissed));
    if (shapes > 0)
        printf("\nFused residual bar (dtile; site 3: fp32 residual, bf16 branch and out, per-sample fp32 gate and "
               "modulation; D 1536/3072/5120; rows >= 32,760; >= 85%% of copy forward and backward, fwd+bwd >= 1.5× "
               "torch.compile where its results are right): %lld of %lld shapes meet it.\n",
               (long long)met, (long long)shapes);
    if (not_compared > 0)
        printf("Not compared: torch.compile was wrong at %lld of these shapes (\"wrong result\" above, or a "
               "backward that \"failed\": it raised instead of returning gradients).\n",
               (long long)not_compared);
}

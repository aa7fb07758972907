/* run_compare.c -- two runs compared like with like (run_compare.h). */
#include "run_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_name.h"

static int is_peer_name(const char *name)
{
    ada_bench_name b;
    return ada_bench_name_parse(name, &b) == 0 && ada_bench_name_is_peer(b.variant);
}

/* The earlier medians of name in the history object (up to cap), oldest first. */
static int64_t history_of(const json_t *h, const char *name, double *out, int64_t cap)
{
    const json_t *arr = json_object_get(h, name);
    int64_t n = 0, len = (int64_t)json_array_size(arr), from = len > cap ? len - cap : 0;
    for (int64_t i = from; i < len; i++) {
        double v = json_number_value(json_array_get(arr, (size_t)i));
        if (v > 0 && isfinite(v)) out[n++] = v;
    }
    return n;
}

int ada_runs_alike(const ada_bench_set *a, const ada_run_meta *ma, const ada_bench_set *b, const ada_run_meta *mb,
                   char *why, size_t n)
{
    size_t w = 0;
    why[0] = '\0';
#define ADD(...) (w += (size_t)snprintf(why + (w < n ? w : n - 1), w < n ? n - w : 1, __VA_ARGS__))
    if (ma && mb && *ma->testbed && *mb->testbed && strcmp(ma->testbed, mb->testbed))
        ADD("testbed %s against testbed %s", ma->testbed, mb->testbed);
    if (a->set && b->set && strcmp(a->set, b->set)) ADD("%sset %s against set %s", w ? "; " : "", a->set, b->set);
    int64_t ra = ada_bench_repetitions(a), rb = ada_bench_repetitions(b);
    if (ra > 0 && rb > 0 && ra != rb)
        ADD("%s%lld repetitions against %lld", w ? "; " : "", (long long)ra, (long long)rb);
#undef ADD
    return w == 0;
}

int ada_compare_runs(const ada_bench_set *a, const ada_bench_set *b, const ada_run_meta *ma, const ada_run_meta *mb,
                     const ada_cmp_opts *oin, ada_cmp *c, char *err, size_t en)
{
    memset(c, 0, sizeof *c);
    ada_cmp_opts o = *oin;
    if (o.threshold <= 0) o.threshold = 0.05;
    if (o.alpha <= 0) o.alpha = 0.05;
    char why[400];
    if (!ada_runs_alike(a, ma, b, mb, why, sizeof why))
        return snprintf(err, en, "%s: not comparable (only runs of the same testbed, set and repetition count are "
                                 "compared)", why),
               -1;
    if (ma && mb) {
        ada_run_fp fa = ma->fp, fb = mb->fp;
        if (!(fa.copy_gbps > 0)) ada_run_fp_copy(&fa, a); /* runs older than the field */
        if (!(fb.copy_gbps > 0)) ada_run_fp_copy(&fb, b);
        c->same_code = ada_run_same_code(ma, mb);
        c->other_machine = ada_run_fp_differs(&fa, &fb, c->machine, sizeof c->machine);
    } else {
        snprintf(c->machine, sizeof c->machine, "unknown (no meta.json)");
    }
    c->row = calloc((size_t)a->n + 1, sizeof *c->row);
    if (!c->row) return snprintf(err, en, "out of memory"), -1;
    for (int64_t i = 0; i < a->n; i++) {
        const ada_bench_rec *x = &a->r[i];
        const ada_bench_rec *y = ada_bench_find(b, x->name);
        if (!y) {
            c->only_a++;
            continue;
        }
        if (o.skip_peers && is_peer_name(x->name)) continue;
        ada_cmp_row *r = &c->row[c->n++];
        r->name = y->name;
        r->ratio = 1;
        r->p = 1;
        if (x->error || y->error || x->n == 0 || y->n == 0) {
            r->error = x->error ? "in A" : y->error ? "in B" : "no repetitions";
            c->errors++;
            continue;
        }
        r->a_ns = ada_median(x->time_ns, x->n);
        r->b_ns = ada_median(y->time_ns, y->n);
        ada_mwu t;
        double prior[ADA_BAND_RUNS];
        int64_t np = o.history ? history_of(o.history, x->name, prior, ADA_BAND_RUNS) : 0;
        r->v = ada_history_verdict(prior, np, x->time_ns, x->n, y->time_ns, y->n, o.threshold, o.alpha, &r->ratio,
                                   &r->band, &r->banded, &t);
        r->p = t.p;
        /* The code did not change: what moved is the machine or its state, never a regression. */
        if ((r->v == ADA_SLOWER || r->v == ADA_FASTER) && c->same_code) r->v = ADA_DRIFT;
        c->slower += r->v == ADA_SLOWER;
        c->faster += r->v == ADA_FASTER;
        c->same += r->v == ADA_SAME;
        c->too_few += r->v == ADA_TOO_FEW;
        c->drift += r->v == ADA_DRIFT;
    }
    for (int64_t i = 0; i < b->n; i++)
        if (!ada_bench_find(a, b->r[i].name)) c->only_b++;
    return 0;
}

void ada_cmp_free(ada_cmp *c)
{
    free(c->row);
    memset(c, 0, sizeof *c);
}

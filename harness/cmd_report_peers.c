/* cmd_report_peers.c -- `adaload report`'s table of the user's own peers: the callables given
 * to `adaload bench --peer MODULE:FUNCTION` (bench/peers/peer_user.py), recorded as
 * lnmod_fwd/peer:<name>/... and lnmod_bwd/peer:<name>/... in peers.json. Each row: the shape,
 * the direction, the peer's median time and % of adaload's in-run copy of the same bytes (the
 * one ceiling of the run), dtile's time at the same shape and direction, and × = the peer's
 * time / dtile's (the report's convention: above 1, dtile is faster). A peer found wrong
 * against float64 at that shape prints "wrong result" with its errors, one that failed
 * (raised) prints "failed" with its message -- never a time or a ratio. */
#include <stdio.h>
#include <string.h>

#include "cmd_report.h"
#include "run_name.h"

static int user_peer(const char *variant) { return !strncmp(variant, "peer:", 5); }

static int wanted(const cli_list *want, const char *variant)
{
    if (want->n == 0) return 1;
    for (int q = 0; q < want->n; q++)
        if (!strcmp(want->v[q], variant)) return 1;
    return 0;
}

/* dtile's record of the same op and shape (the peer's graph K is its own: dtile's is found
 * by the shape without /graph<K>). */
static const ada_bench_rec *dtile_of(const ada_bench_set *s, const ada_bench_name *b)
{
    char key[sizeof b->shape];
    report_shape_key(b->shape, key, sizeof key);
    return report_find_shape(s, b->op, "dtile", key);
}

static double median_time(const ada_bench_rec *r)
{
    return (r && !r->error && r->n > 0) ? ada_median(r->time_ns, r->n) : 0;
}

void report_user_peers(const ada_bench_set *s, const cli_list *want)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        ada_bench_name b;
        if (ada_bench_name_parse(r->name, &b) || !user_peer(b.variant) || !wanted(want, b.variant)) continue;
        if (rows++ == 0)
            printf("\nYour peers (`adaload bench --peer MODULE:FUNCTION`), each checked against float64 at "
                   "the shape before its time counts; %% of copy = of adaload's copy of the same bytes in "
                   "this run; × = the peer's time / dtile's.\n\n"
                   "| shape | dir | peer | µs | %% of copy | dtile µs | × |\n|---|---|---|---:|---:|---:|---:|\n");
        const ada_bench_rec *d = dtile_of(s, &b);
        double t = median_time(r), td = median_time(d);
        char dt[32] = "—", x[32] = "—", pct[32] = "—";
        if (td > 0) snprintf(dt, sizeof dt, "%.1f", td * 1e-3);
        if (r->error || r->n == 0) {
            const char *m = r->error_message ? r->error_message : "no repetitions";
            printf("| %s | %s | %s | %s%s | | %s | |\n", b.shape, b.dir, b.variant, r->wrong ? "" : "failed: ", m, dt);
            continue;
        }
        if (r->has_pct && ada_median(r->pct_copy, r->n) > 0)
            snprintf(pct, sizeof pct, "%.1f%%", ada_median(r->pct_copy, r->n));
        if (td > 0 && t > 0) snprintf(x, sizeof x, "%.2f×", t / td);
        printf("| %s | %s | %s | %.1f | %s | %s | %s |\n", b.shape, b.dir, b.variant, t * 1e-3, pct, dt, x);
    }
}

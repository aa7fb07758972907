/* cmd_report_layouts.c -- issue 21's layout and dtype bar under `adaload report`'s table: dtile's
 * forward per token and per frame (bf16 x/y, fp32 modulation) and per sample with fp16 or fp32
 * x, at the widths of the speed bar's family (D 1536, 2048, 3072, 4096, 5120), rows >= 32,760:
 * >= 85% of the in-run copy each (the wan set times exactly these shapes). */
#include <stdio.h>
#include <string.h>

#include "cmd_report.h"
#include "run_name.h"

/* 1 when benchmark name b is one of the bar's shapes. */
static int layout_bar_shape(const ada_bench_name *b)
{
    if (strcmp(b->op, "lnmod_fwd") || strcmp(b->variant, "dtile") || b->rows < 32760 || b->batch != 1) return 0;
    if (b->D != 1536 && b->D != 2048 && b->D != 3072 && b->D != 4096 && b->D != 5120) return 0;
    if (strcmp(b->mod, "f32")) return 0;
    const int bf16 = !strcmp(b->dtypes, "bf16-f32-bf16");
    if (!strcmp(b->layout, "token") || !strcmp(b->layout, "frame")) return bf16;
    return !strcmp(b->layout, "sample") && (!strcmp(b->dtypes, "f16-f32-f16") || !strcmp(b->dtypes, "f32-f32-f32"));
}

void report_layout_bar(const ada_bench_set *s)
{
    int64_t shapes = 0, met = 0;
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        ada_bench_name b;
        if (ada_bench_name_parse(r->name, &b) || !layout_bar_shape(&b)) continue;
        shapes++;
        const double pct = (!r->error && r->has_pct && r->n > 0) ? ada_median(r->pct_copy, r->n) : -1;
        if (pct >= 85.0) {
            met++;
            continue;
        }
        if (shapes - met == 1) printf("\n");
        if (pct >= 0) printf("- layout bar missed: %s: %.1f%% of copy (needs 85%%)\n", b.shape, pct);
        else printf("- layout bar missed: %s: no %% of copy in this run (needs 85%%)\n", b.shape);
    }
    if (shapes > 0)
        printf("\nLayout and dtype bar (issue 21: dtile's forward per token and per frame in bf16, and fp16 and "
               "fp32 x per sample; D 1536/2048/3072/4096/5120; rows >= 32,760; >= 85%% of copy): %lld of %lld "
               "shapes meet it.\n",
               (long long)met, (long long)shapes);
}

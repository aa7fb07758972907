/* run_sweep.c -- the sweep view: % of copy against D, table and SVG (run_sweep.h). */
#include "run_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_name.h"

/* A forward kernel benchmark's parts (run_name.h: variant, slice, D, ...); 0 if it is one. */
static int fwd_name(const char *name, ada_bench_name *b)
{
    return ada_bench_name_parse(name, b) || strcmp(b->op, "lnmod_fwd") ? -1 : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t index_of(const int64_t *v, int64_t n, int64_t x)
{
    for (int64_t i = 0; i < n; i++)
        if (v[i] == x) return i;
    return -1;
}

void ada_sweep_free(ada_sweep *w)
{
    if (!w) return;
    for (int64_t i = 0; i < w->ns; i++) {
        free(w->s[i].pct);
        free(w->s[i].has);
    }
    free(w->s);
    free(w->D);
    memset(w, 0, sizeof *w);
}

static int wanted(const char *variant, const char *const *want, int nwant)
{
    if (nwant <= 0) return 1;
    for (int k = 0; k < nwant; k++)
        if (!strcmp(want[k], variant)) return 1;
    return 0;
}

/* The series of variant, created when new; NULL when out of memory. */
static ada_sweep_series *series(ada_sweep *w, const char *variant)
{
    for (int64_t i = 0; i < w->ns; i++)
        if (!strcmp(w->s[i].variant, variant)) return &w->s[i];
    ada_sweep_series *ns = realloc(w->s, (size_t)(w->ns + 1) * sizeof *ns);
    if (!ns) return NULL;
    w->s = ns;
    ada_sweep_series *s = &w->s[w->ns++];
    memset(s, 0, sizeof *s);
    snprintf(s->variant, sizeof s->variant, "%s", variant);
    s->pct = calloc((size_t)w->nD, sizeof *s->pct);
    s->has = calloc((size_t)w->nD, 1);
    return (s->pct && s->has) ? s : NULL;
}

typedef struct {
    char key[96];
    int64_t nD;
} slice;

/* The run's slices with their distinct-D counts, in run order; -1 when out of memory. */
static int64_t slices(const ada_bench_set *set, const char *const *want, int nwant, slice **out)
{
    slice *v = calloc((size_t)(set->n > 0 ? set->n : 1), sizeof *v);
    int64_t *seenD = malloc((size_t)(set->n > 0 ? set->n : 1) * sizeof *seenD);
    int64_t n = 0;
    if (!v || !seenD) {
        free(v);
        free(seenD);
        return -1;
    }
    ada_bench_name b;
    for (int64_t i = 0; i < set->n; i++) {
        if (fwd_name(set->r[i].name, &b) || !wanted(b.variant, want, nwant)) continue;
        int64_t k = 0;
        while (k < n && strcmp(v[k].key, b.slice)) k++;
        if (k == n) snprintf(v[n++].key, sizeof v[0].key, "%s", b.slice);
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t m = 0;
        for (int64_t i = 0; i < set->n; i++)
            if (!fwd_name(set->r[i].name, &b) && wanted(b.variant, want, nwant) && !strcmp(b.slice, v[k].key) &&
                index_of(seenD, m, b.D) < 0)
                seenD[m++] = b.D;
        v[k].nD = m;
    }
    free(seenD);
    *out = v;
    return n;
}

int ada_sweep_build(const ada_bench_set *set, const char *const *want, int nwant, const char *shape_in,
                    ada_sweep *out, char *err, size_t err_n)
{
    ada_sweep w;
    memset(&w, 0, sizeof w);
    memset(out, 0, sizeof *out);
    ada_bench_name b;
    slice *sl = NULL;
    int64_t nsl = slices(set, want, nwant, &sl);
    if (nsl < 0) goto nomem;
    if (nsl == 0) {
        snprintf(err, err_n, "no lnmod_fwd benchmarks%s in this run", nwant > 0 ? " of those variants" : "");
        free(sl);
        return -1;
    }
    int64_t pick = 0;
    if (shape_in) {
        while (pick < nsl && strcmp(sl[pick].key, shape_in)) pick++;
        if (pick == nsl) {
            int w0 = snprintf(err, err_n, "no benchmarks of shape %s in this run; it has:", shape_in);
            for (int64_t k = 0; k < nsl && w0 > 0 && (size_t)w0 < err_n; k++)
                w0 += snprintf(err + w0, err_n - (size_t)w0, " %s", sl[k].key);
            free(sl);
            return -1;
        }
    } else {
        for (int64_t k = 1; k < nsl; k++)
            if (sl[k].nD > sl[pick].nD) pick = k;
    }
    snprintf(w.shape, sizeof w.shape, "%s", sl[pick].key);
    w.nshapes = nsl;
    free(sl);
    w.D = malloc((size_t)set->n * sizeof *w.D);
    if (!w.D) goto nomem;
    for (int64_t i = 0; i < set->n; i++)
        if (!fwd_name(set->r[i].name, &b) && wanted(b.variant, want, nwant) && !strcmp(b.slice, w.shape) &&
            index_of(w.D, w.nD, b.D) < 0)
            w.D[w.nD++] = b.D;
    qsort(w.D, (size_t)w.nD, sizeof *w.D, cmp_i64);
    for (int64_t i = 0; i < set->n; i++) {
        const ada_bench_rec *r = &set->r[i];
        if (fwd_name(r->name, &b) || !wanted(b.variant, want, nwant) || strcmp(b.slice, w.shape)) continue;
        /* the slice's parts, the same for each of its benchmarks */
        snprintf(w.dtypes, sizeof w.dtypes, "%s", b.dtypes);
        snprintf(w.layout, sizeof w.layout, "%s", b.layout);
        w.rows = b.rows;
        w.batch = b.batch;
        ada_sweep_series *s = series(&w, b.variant);
        if (!s) goto nomem;
        int64_t k = index_of(w.D, w.nD, b.D);
        double pct = (!r->error && r->n > 0 && r->has_pct) ? ada_median(r->pct_copy, r->n) : 0;
        if (pct > 0 && isfinite(pct)) {
            s->pct[k] = pct;
            s->has[k] = 1;
        }
    }
    *out = w;
    return 0;
nomem:
    snprintf(err, err_n, "out of memory");
    ada_sweep_free(&w);
    return -1;
}

void ada_sweep_print(FILE *f, const ada_sweep *w)
{
    fprintf(f, "Sweep of %s: %% of the in-run copy bandwidth by hidden size D", w->shape);
    if (w->nshapes > 1)
        fprintf(f, " (%lld other shapes in this run: --shape picks one)", (long long)(w->nshapes - 1));
    fprintf(f, ".\n\n| D |");
    for (int64_t i = 0; i < w->ns; i++) fprintf(f, " %s |", w->s[i].variant);
    fprintf(f, "\n|---:|");
    for (int64_t i = 0; i < w->ns; i++) fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int64_t k = 0; k < w->nD; k++) {
        fprintf(f, "| %lld |", (long long)w->D[k]);
        for (int64_t i = 0; i < w->ns; i++) {
            if (w->s[i].has[k]) fprintf(f, " %.1f%% |", w->s[i].pct[k]);
            else fprintf(f, " — |");
        }
        fprintf(f, "\n");
    }
}

/* XML text with &, <, > and " escaped. */
double ada_sweep_width_need(int64_t D)
{
    if (D <= 0) return 0;
    if (D % 2) return 60;
    if (D >= 256 && D < 1024) return 80;
    if (D >= 1024 && D <= 16384) return D % 64 == 0 ? 90 : D % 8 == 0 ? 85 : 0;
    return 0;
}

int ada_sweep_bar_print(FILE *f, const ada_sweep *w, const char *variant)
{
    if (strcmp(w->dtypes, "bf16-f32-bf16") || strcmp(w->layout, "sample") || w->rows < 32760 || w->batch != 1)
        return 1;
    const ada_sweep_series *s = NULL;
    for (int64_t i = 0; i < w->ns; i++)
        if (!strcmp(w->s[i].variant, variant)) s = &w->s[i];
    if (!s) return 1;
    static const double needs[4] = {90, 85, 80, 60};
    int64_t n[4] = {0}, met[4] = {0}, misses = 0;
    for (int64_t k = 0; k < w->nD; k++) {
        const double need = ada_sweep_width_need(w->D[k]);
        int c = 0;
        while (c < 4 && needs[c] != need) c++;
        if (c == 4) continue; /* no bar at this width */
        n[c]++;
        if (s->has[k] && s->pct[k] >= need) {
            met[c]++;
            continue;
        }
        if (!misses++) fprintf(f, "\n");
        if (s->has[k])
            fprintf(f, "- width bar missed: D %lld: %.1f%% of copy (needs %.0f%%)\n", (long long)w->D[k], s->pct[k],
                    need);
        else
            fprintf(f, "- width bar missed: D %lld: no point in this run (needs %.0f%%)\n", (long long)w->D[k], need);
    }
    const int64_t all = n[0] + n[1] + n[2] + n[3], ok = met[0] + met[1] + met[2] + met[3];
    fprintf(f, "\nWidth bar (issue 21: %s, %s; >= 90%% of copy at the multiples of 64 from 1024 to 16384, "
               ">= 85%% at the other multiples of 8 there, >= 80%% from 256 to 1023, >= 60%% at odd D): "
               "%lld of %lld widths meet it",
            variant, w->shape, (long long)ok, (long long)all);
    const char *names[4] = {"multiples of 64", "other multiples of 8", "256-1023", "odd"};
    for (int c = 0, first = 1; c < 4; c++)
        if (n[c]) {
            fprintf(f, "%s%s %lld/%lld", first ? " (" : ", ", names[c], (long long)met[c], (long long)n[c]);
            first = 0;
        }
    fprintf(f, "%s.\n", all ? ")" : "");
    return 0;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

enum { W = 960, H = 540, ML = 70, MR = 230, MT = 50, MB = 60 };
static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

typedef struct {
    double lx0, lx1, ymax;
} axes;

static double px(const axes *a, int64_t D)
{
    double t = a->lx1 > a->lx0 ? (log2((double)D) - a->lx0) / (a->lx1 - a->lx0) : 0.5;
    return ML + t * (W - ML - MR);
}

static double py(const axes *a, double pct)
{
    return MT + (1 - pct / a->ymax) * (H - MT - MB);
}

static void svg_axes(FILE *f, const axes *a, const ada_sweep *w)
{
    /* Horizontal grid every 10%, dashed bar lines at 80% and 90%. */
    for (int p = 0; p <= (int)a->ymax; p += 10) {
        double y = py(a, p);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ML, y, W - MR, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">%d%%</text>\n", ML - 6, y + 4, p);
    }
    for (int p = 80; p <= 90; p += 10)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\" "
                   "stroke-dasharray=\"6,4\"/>\n", ML, py(a, p), W - MR, py(a, p));
    /* Vertical ticks at the powers of two inside the range, and at the ends. */
    for (int e = (int)ceil(a->lx0); e <= (int)floor(a->lx1); e++) {
        double x = px(a, (int64_t)1 << e);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", x, MT, x, H - MB);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"12\">%lld</text>\n", x,
                H - MB + 18, (long long)1 << e);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#000\"/>\n", ML, MT,
            W - ML - MR, H - MT - MB);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">hidden size D (log scale; "
               "%lld points)</text>\n", (ML + W - MR) / 2, H - 18, (long long)w->nD);
    fprintf(f, "<text x=\"16\" y=\"%d\" font-size=\"13\" transform=\"rotate(-90 16 %d)\" "
               "text-anchor=\"middle\">%% of the in-run copy bandwidth</text>\n", (MT + H - MB) / 2, (MT + H - MB) / 2);
}

int ada_sweep_svg(FILE *f, const ada_sweep *w, const char *title)
{
    axes a = {log2((double)w->D[0]), log2((double)w->D[w->nD - 1]), 110};
    for (int64_t i = 0; i < w->ns; i++)
        for (int64_t k = 0; k < w->nD; k++)
            if (w->s[i].has[k] && w->s[i].pct[k] > a.ymax) a.ymax = 10 * ceil(w->s[i].pct[k] / 10);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n<rect width=\"100%%\" "
               "height=\"100%%\" fill=\"#fff\"/>\n<text x=\"%d\" y=\"28\" font-size=\"15\">",
            W, H, W, H, ML);
    xml_text(f, title ? title : "adaload sweep");
    fprintf(f, "</text>\n");
    svg_axes(f, &a, w);
    for (int64_t i = 0; i < w->ns; i++) {
        const ada_sweep_series *s = &w->s[i];
        const char *c = colors[i % (int64_t)(sizeof colors / sizeof *colors)];
        /* A gap (missing point) ends the current polyline. */
        int open = 0;
        for (int64_t k = 0; k <= w->nD; k++) {
            int have = k < w->nD && s->has[k];
            if (have && !open) {
                fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
                open = 1;
            }
            if (have) fprintf(f, "%.1f,%.1f ", px(&a, w->D[k]), py(&a, s->pct[k]));
            if (!have && open) {
                fprintf(f, "\"/>\n");
                open = 0;
            }
        }
        for (int64_t k = 0; k < w->nD; k++)
            if (s->has[k])
                fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>D %lld: %.1f%%"
                           "</title></circle>\n", px(&a, w->D[k]), py(&a, s->pct[k]), c,
                        (long long)w->D[k], s->pct[k]);
        double ly = MT + 10 + 20.0 * (double)i;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
                W - MR + 12, ly, W - MR + 36, ly, c);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" font-size=\"12\">", W - MR + 42, ly + 4);
        xml_text(f, s->variant);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}

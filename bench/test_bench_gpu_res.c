/* test_bench_gpu_res.c -- the fused residual op's input sets of the GPU benchmarks
 * (bench_gpu_res.h), host side, no GPU needed (CUDA builds only): for every res shape of the
 * wan set and a two-sample shape of each site, both directions, each part of a set lies inside
 * set_bytes (what bench_gpu.c fills with random values: nothing read uninitialised),
 * 256-byte aligned, no two overlapping; the gate, scale and shift (and their gradients) are
 * Wan's chunks at the shape's site -- site 1 gate e[2] and weight/bias in their own region,
 * site 2 no gate and e[4]/e[3], site 3 e[5], e[1], e[0] -- and every row the op touches at the
 * descriptor's strides stays inside its region. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "bench_gpu_res.h"
#include "bench_shapes.h"

typedef struct {
    const char *what;
    size_t at, len;
} part;

/* The set's parts with their lengths (the next part's start; the last: set_bytes). */
static int parts(const ada_res_offsets *o, int bwd, part *p)
{
    int n = 0;
    p[n++] = (part){"r", o->r, 0};
    p[n++] = (part){"y", o->y, 0};
    p[n++] = (part){"e", o->e, 0};
    p[n++] = (part){"wb", o->wb, 0};
    p[n++] = (part){"stats", o->stats, 0};
    if (!bwd) {
        p[n++] = (part){"h", o->h, 0};
        p[n++] = (part){"out", o->out, 0};
    } else {
        p[n++] = (part){"dout", o->dout, 0};
        p[n++] = (part){"dh", o->dh, 0};
        p[n++] = (part){"dr", o->dr, 0};
        p[n++] = (part){"dy", o->dy, 0};
        p[n++] = (part){"de", o->de, 0};
        p[n++] = (part){"dwb", o->dwb, 0};
        p[n++] = (part){"ws", o->ws, 0};
    }
    for (int i = 0; i < n; i++) p[i].len = (i + 1 < n ? p[i + 1].at : o->set_bytes) - p[i].at;
    return n;
}

/* rows rows of D elements of esz bytes at stride elements from off lie inside [lo, lo + len). */
static void inside(const char *what, size_t off, int64_t rows, int64_t D, int64_t stride, size_t esz, size_t lo,
                   size_t len)
{
    size_t end = off + (size_t)((rows - 1) * stride + D) * esz;
    cr_assert(off >= lo && end <= lo + len, "%s: [%zu, %zu) outside its region [%zu, %zu)", what, off, end, lo,
              lo + len);
}

static void check_set(const ada_shape *s, int bwd)
{
    const lnmod_res_desc *d = &s->rdesc;
    ada_res_offsets o;
    const size_t ws = 12345; /* any workspace size: its region gets at least that */
    ada_res_offsets_make(d, bwd, ws, &o);
    part p[16];
    int n = parts(&o, bwd, p);
    const size_t esz = lnmod_dtype_size(d->mod_dtype), chunk = (size_t)d->D * esz;
    const size_t elems = (size_t)(d->rows * d->D);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(p[i].at % 256, 0, "site %d %s: %s not 256-byte aligned", s->site, bwd ? "bwd" : "fwd", p[i].what);
        cr_assert(p[i].at + p[i].len <= o.set_bytes, "%s past the set", p[i].what);
        if (i > 0) cr_assert(p[i].at >= p[i - 1].at, "%s before %s: overlap", p[i].what, p[i - 1].what);
    }
    /* The row arrays, each at least rows x D of its dtype. */
    cr_assert(o.y - o.r >= elems * lnmod_dtype_size(d->res_dtype));
    cr_assert(o.e - o.y >= elems * lnmod_dtype_size(d->branch_dtype));
    cr_assert(p[5].len >= (bwd ? elems * lnmod_dtype_size(d->out_dtype) : elems * lnmod_dtype_size(d->res_dtype)));
    cr_assert(p[6].len >= (bwd ? elems * lnmod_dtype_size(d->res_dtype) : elems * lnmod_dtype_size(d->out_dtype)));
    cr_assert(p[4].len >= (size_t)(8 * d->rows), "mean and rstd");
    if (bwd) {
        cr_assert(o.dy - o.dr >= elems * lnmod_dtype_size(d->res_dtype));
        cr_assert(o.de - o.dy >= elems * lnmod_dtype_size(d->branch_dtype));
        cr_assert(o.set_bytes - o.ws >= ws);
    }
    const int64_t B = lnmod_res_mod_rows(d), S6 = 6 * d->D;
    const size_t elen = o.wb - o.e, wblen = o.stats - o.wb;
    const size_t delen = bwd ? o.dwb - o.de : 0, dwblen = bwd ? o.ws - o.dwb : 0;
    /* Wan's chunks at the site: which input is where. */
    size_t gate_c = 5, sc_c = 1, sf_c = 0;
    if (s->site == 1) gate_c = 2;
    if (s->site == 2) sc_c = 4, sf_c = 3;
    cr_assert_eq(o.has_gate, s->site != 2, "site %d", s->site);
    if (o.has_gate) {
        cr_assert_eq(o.gate, o.e + gate_c * chunk, "site %d: the gate is e[%zu]", s->site, gate_c);
        inside("gate", o.gate, B, d->D, d->gate_stride, esz, o.e, elen);
        if (bwd) {
            cr_assert_eq(o.dgate, o.de + gate_c * chunk);
            inside("dgate", o.dgate, B, d->D, d->gate_stride, esz, o.de, delen);
        }
    }
    if (s->site == 1) { /* norm3's weight and bias [D], dweight and dbias */
        cr_assert(wblen >= 2 * chunk, "site 1: weight and bias need a region of 2*D");
        cr_assert_eq(o.scale, o.wb);
        cr_assert_eq(o.shift, o.wb + chunk);
        if (bwd) {
            cr_assert(dwblen >= 2 * chunk);
            cr_assert_eq(o.dscale, o.dwb);
            cr_assert_eq(o.dshift, o.dwb + chunk);
        }
        return;
    }
    cr_assert_eq(wblen, 0, "site %d has no weight region", s->site);
    cr_assert_eq(o.scale, o.e + sc_c * chunk, "site %d: scale is e[%zu]", s->site, sc_c);
    cr_assert_eq(o.shift, o.e + sf_c * chunk, "site %d: shift is e[%zu]", s->site, sf_c);
    inside("scale", o.scale, B, d->D, d->scale_stride, esz, o.e, elen);
    inside("shift", o.shift, B, d->D, d->shift_stride, esz, o.e, elen);
    cr_assert(elen >= (size_t)(B * S6) * esz);
    if (bwd) {
        cr_assert_eq(o.dscale, o.de + sc_c * chunk);
        cr_assert_eq(o.dshift, o.de + sf_c * chunk);
        inside("dscale", o.dscale, B, d->D, d->scale_stride, esz, o.de, delen);
        inside("dshift", o.dshift, B, d->D, d->shift_stride, esz, o.de, delen);
    }
}

Test(bench_gpu_res, input_sets_per_site)
{
    static ada_shape sh[ADA_MAX_SHAPES];
    int64_t n = ada_shape_set("wan", sh, ADA_MAX_SHAPES), seen[4] = {0};
    cr_assert(n > 0);
    for (int64_t i = 0; i < n; i++) {
        if (!sh[i].res) continue;
        seen[sh[i].site]++;
        for (int bwd = 0; bwd < 2; bwd++) check_set(&sh[i], bwd);
    }
    cr_assert(seen[1] > 0 && seen[2] > 0 && seen[3] > 0, "every site in the wan set");
    for (int site = 1; site <= 3; site++) { /* two samples: the table's second row in range too */
        ada_shape s = ada_shape_make_res(64, 40, 2, site, LNMOD_BF16, LNMOD_BF16);
        cr_assert_eq(lnmod_res_desc_validate(&s.rdesc), LNMOD_OK);
        for (int bwd = 0; bwd < 2; bwd++) check_set(&s, bwd);
    }
}

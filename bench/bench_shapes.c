/* bench_shapes.c -- the shape sets and benchmark names of `adaload bench` (bench_shapes.h).
 *
 * Token counts (one sample, rows = tokens): Wan's VAE compresses frames 4x in time and 8x8
 * in space, the DiT patch is 1x2x2, so a WxH clip of F = 4k+1 frames has
 * (1 + (F-1)/4) * (H/16) * (W/16) tokens:
 *   480x832:  1 frame 1,560   17 frames 5,460    33 frames 14,040   81 frames 32,760
 *   720x1280: 1 frame 3,600   17 frames 12,600   33 frames 32,400   81 frames 75,600
 */
#include "bench_shapes.h"

#include <stdio.h>
#include <string.h>

static const int64_t wan_D[] = {1536, 3072, 5120};
static const int64_t wan_rows[] = {1560, 3600, 5460, 12600, 14040, 32400, 32760, 75600};
static const int64_t sweep_D[] = {256, 512, 1024, 1536, 2048, 3072, 4096, 5120, 8192, 16384};
enum { SWEEP_ROWS = 32760 };

int64_t ada_graph_k(int64_t bytes)
{
    const int64_t target = (int64_t)64 << 20;
    if (bytes <= 0 || bytes >= ADA_GRAPH_BYTES_BELOW) return 0;
    int64_t k = (target + bytes - 1) / bytes;
    if (k < 2) k = 2;
    if (k > 64) k = 64;
    return k;
}

ada_shape ada_shape_make(int64_t D, int64_t rows, lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y)
{
    ada_shape s;
    s.desc = lnmod_desc_default();
    s.desc.rows = rows;
    s.desc.D = D;
    s.desc.rows_per_sample = rows;
    s.desc.frame_len = rows;
    s.desc.x_dtype = x;
    s.desc.mod_dtype = mod;
    s.desc.y_dtype = y;
    s.desc.layout = LNMOD_PER_SAMPLE;
    /* scale and shift are chunks of Wan's [B, 6, D] modulation tensor. */
    s.desc.scale_stride = 6 * D;
    s.desc.shift_stride = 6 * D;
    s.min_bytes = lnmod_fwd_min_bytes(&s.desc, 0);
    s.graph_k = ada_graph_k(s.min_bytes);
    return s;
}

static int push(ada_shape *out, int64_t cap, int64_t *n, ada_shape s)
{
    if (*n >= cap) return -1;
    out[(*n)++] = s;
    return 0;
}

int64_t ada_shape_set(const char *set, ada_shape *out, int64_t cap)
{
    int64_t n = 0;
    int bad = 0;
    if (!set) return -1;
    if (!strcmp(set, "wan")) {
        /* Grouped by D, so a report reads one model size at a time. */
        for (size_t i = 0; i < sizeof wan_D / sizeof *wan_D; i++) {
            for (size_t j = 0; j < sizeof wan_rows / sizeof *wan_rows; j++)
                bad |= push(out, cap, &n, ada_shape_make(wan_D[i], wan_rows[j], LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
            /* The official Wan code keeps the residual stream in fp32: the long clips again
             * with fp32 x (and fp32 y, so the dtype triple stays one name). */
            for (size_t j = 0; j < sizeof wan_rows / sizeof *wan_rows; j++)
                if (wan_rows[j] >= 32760)
                    bad |= push(out, cap, &n, ada_shape_make(wan_D[i], wan_rows[j], LNMOD_F32, LNMOD_F32, LNMOD_F32));
        }
    } else if (!strcmp(set, "sweep")) {
        for (size_t i = 0; i < sizeof sweep_D / sizeof *sweep_D; i++)
            bad |= push(out, cap, &n, ada_shape_make(sweep_D[i], SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
    } else if (!strcmp(set, "quick")) {
        /* One small (graph-timed) and one large bf16 shape, and an fp32 one: seconds. */
        bad |= push(out, cap, &n, ada_shape_make(1536, 1560, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        bad |= push(out, cap, &n, ada_shape_make(5120, 32760, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        bad |= push(out, cap, &n, ada_shape_make(3072, 32760, LNMOD_F32, LNMOD_F32, LNMOD_F32));
    } else {
        return -1;
    }
    return bad ? -1 : n;
}

static int fits(int w, size_t n) { return w >= 0 && (size_t)w < n ? 0 : -1; }

int ada_shape_suffix(const ada_shape *s, char *buf, size_t n)
{
    const lnmod_desc *d = &s->desc;
    int w = snprintf(buf, n, "%s-%s-%s/%s/D%lld/rows%lld", lnmod_dtype_name(d->x_dtype),
                     lnmod_dtype_name(d->mod_dtype), lnmod_dtype_name(d->y_dtype),
                     lnmod_layout_name(d->layout), (long long)d->D, (long long)d->rows);
    if (fits(w, n)) return -1;
    if (s->graph_k > 0) {
        int w2 = snprintf(buf + w, n - (size_t)w, "/graph%lld", (long long)s->graph_k);
        if (fits(w2, n - (size_t)w)) return -1;
    }
    return 0;
}

int ada_shape_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n)
{
    char suffix[ADA_NAME_MAX];
    if (ada_shape_suffix(s, suffix, sizeof suffix)) return -1;
    return fits(snprintf(buf, n, "lnmod_fwd/%s/%s", variant, suffix), n);
}

int ada_copy_bench_name(int64_t bytes, char *buf, size_t n)
{
    int64_t k = ada_graph_k(bytes);
    int w = k > 0 ? snprintf(buf, n, "copy/bytes%lld/graph%lld", (long long)bytes, (long long)k)
                  : snprintf(buf, n, "copy/bytes%lld", (long long)bytes);
    return fits(w, n);
}

json_t *ada_shapes_json(const ada_shape *s, int64_t n)
{
    json_t *a = json_array();
    for (int64_t i = 0; i < n; i++) {
        const lnmod_desc *d = &s[i].desc;
        char suffix[ADA_NAME_MAX], copy[ADA_NAME_MAX];
        if (ada_shape_suffix(&s[i], suffix, sizeof suffix) ||
            ada_copy_bench_name(s[i].min_bytes, copy, sizeof copy)) {
            json_decref(a);
            return NULL;
        }
        json_t *o = json_object();
        json_object_set_new(o, "suffix", json_string(suffix));
        json_object_set_new(o, "copy_name", json_string(copy));
        json_object_set_new(o, "x_dtype", json_string(lnmod_dtype_name(d->x_dtype)));
        json_object_set_new(o, "mod_dtype", json_string(lnmod_dtype_name(d->mod_dtype)));
        json_object_set_new(o, "y_dtype", json_string(lnmod_dtype_name(d->y_dtype)));
        json_object_set_new(o, "layout", json_string(lnmod_layout_name(d->layout)));
        json_object_set_new(o, "D", json_integer(d->D));
        json_object_set_new(o, "rows", json_integer(d->rows));
        json_object_set_new(o, "rows_per_sample", json_integer(d->rows_per_sample));
        json_object_set_new(o, "mod_stride", json_integer(d->scale_stride));
        json_object_set_new(o, "eps", json_real(d->eps));
        json_object_set_new(o, "min_bytes", json_integer(s[i].min_bytes));
        json_object_set_new(o, "graph_k", json_integer(s[i].graph_k));
        json_array_append_new(a, o);
    }
    return a;
}

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
/* The layouts and dtypes beyond bf16 per-sample are timed at the widths of the speed bar
 * (issue 11: 1536, 2048, 3072, 4096, 5120) on a 480p 81-frame clip, and at the Wan widths on
 * a 720p 81-frame clip. Frame lengths: 480x832 -> 30 x 52 = 1,560 tokens per latent frame,
 * 720x1280 -> 45 x 80 = 3,600; both clips have 21 latent frames. */
static const int64_t bar_D[] = {1536, 2048, 3072, 4096, 5120};
enum { CLIP480 = 32760, FRAME480 = 1560, CLIP720 = 75600, FRAME720 = 3600 };
/* The sweep: every multiple of 128 from 256 to 8192, five larger widths (13824 and 14336: the
 * forward's 512-thread chunk kernels of 27 and 28 columns a thread, timed nowhere else), and a
 * width of each class of issue 21's bar that the multiples of 128 miss -- odd multiples of 64 from 1024 to
 * 16384 (bar 90% of copy), multiples of 8 but not of 64 (85% from 1024; 80% below it), odd D
 * (60%) -- bf16 per-sample at 32,760 rows. */
static const int64_t sweep_big_D[] = {10240, 12288, 13824, 14336, 16384};
static const int64_t sweep_m64_D[] = {1088, 1216, 1344, 2112, 3136, 4160, 6208, 8256, 9280, 11328, 14400, 16320};
static const int64_t sweep_m8_D[] = {264, 520, 776, 1000, 1032, 1160, 2056, 3080, 5128, 9000};
static const int64_t sweep_odd_D[] = {255, 777, 1537, 3001, 5119, 16383};
/* The fused op's widths in the sweep (site 3, one sample of SWEEP_ROWS): the public DiTs' hidden
 * sizes around Wan's (Open-Sora 1152, CogVideoX 1920, 3840-wide models) and the multiples of
 * 1024 to 10,240 -- the neighbours of the three widths issue 22's bar names. */
static const int64_t sweep_res_D[] = {1024, 1152, 1536, 1920, 2048, 2304, 2560,
                                      3072, 3840, 4096, 5120, 6144, 8192, 10240};
enum { SWEEP_ROWS = 32760, SWEEP_STEP = 128, SWEEP_FIRST = 256, SWEEP_LAST = 8192 };

/* The models set: hidden sizes of public image and video diffusion transformers, one sample
 * at the token count of their usual resolution (rows = tokens of one sample, batch 1), bf16
 * per-sample. D = heads x head dim of the public config; tokens = latent frames x latent
 * height / patch x latent width / patch. Open-Sora 1.2's STDiT3-XL/2 (hpcaitech/Open-Sora
 * stdit3.py: depth 28, hidden 1152, patch 1x2x2) has DiT-XL/2's width and is covered by the
 * 1152 rows. */
static const ada_model_shape models[] = {
    /* facebookresearch/DiT models.py DiT_XL_2: depth 28, hidden 1152, 16 heads, patch 2;
     * 256x256 -> VAE /8 -> 32x32 latent -> 16x16 tokens; 512x512 -> 32x32. */
    {"dit-xl-2-256px", 1152, 256, "DiT_XL_2 (facebookresearch/DiT), 256x256: 32x32 latent, patch 2"},
    {"dit-xl-2-512px", 1152, 1024, "DiT_XL_2 (facebookresearch/DiT), 512x512: 64x64 latent, patch 2"},
    /* PixArt-alpha/PixArt-XL-2-1024-MS transformer config: 16 heads x 72, sample_size 128, patch 2. */
    {"pixart-alpha-1024px", 1152, 4096, "PixArt-XL-2-1024-MS config: 16 x 72, 128x128 latent, patch 2"},
    /* maxin-cn/Latte-1 transformer config: 16 heads x 72, sample_size 64, patch 2, 16 frames. */
    {"latte-1-512px-16f", 1152, 16384, "Latte-1 config: 16 x 72, 16 frames x 64x64 latent, patch 2"},
    /* Hunyuan-DiT DiT-g/2: hidden 1408, depth 40, patch 2; 1024x1024 -> 128x128 latent. */
    {"hunyuan-dit-1024px", 1408, 4096, "Hunyuan-DiT DiT-g/2: hidden 1408, 128x128 latent, patch 2"},
    /* stabilityai/stable-diffusion-3-medium transformer config: 24 heads x 64, sample 128, patch 2. */
    {"sd3-medium-1024px", 1536, 4096, "SD3-medium config: 24 x 64, 128x128 latent, patch 2"},
    /* stabilityai/stable-diffusion-3.5-large transformer config: 38 heads x 64, sample 128, patch 2. */
    {"sd3.5-large-1024px", 2432, 4096, "SD3.5-large config: 38 x 64, 128x128 latent, patch 2"},
    /* black-forest-labs FLUX.1 transformer config: 24 heads x 128; 1024x1024 -> 128x128
     * latent packed 2x2 -> 4,096 image tokens. */
    {"flux1-1024px", 3072, 4096, "FLUX.1 config: 24 x 128, 128x128 latent, 2x2 packing"},
    /* THUDM/CogVideoX-2b transformer config: 30 heads x 64, 49 frames 480x720 -> 13 x 60 x 90
     * latent (temporal compression 4), patch 2 -> 13 x 30 x 45. */
    {"cogvideox-2b-49f", 1920, 17550, "CogVideoX-2b config: 30 x 64, 13 x 60 x 90 latent, patch 2"},
    /* CogVideoX-5b: 48 heads x 64 (the 5b-1.5 config; 42 layers), same latent as the 2b. */
    {"cogvideox-5b-49f", 3072, 17550, "CogVideoX-5b config: 48 x 64, 13 x 60 x 90 latent, patch 2"},
    /* genmo Mochi 1: visual stream hidden_size_x 3072, depth 48, patch 2; its VAE compresses
     * 8x8 in space and 6x in time: 480x848, 163 frames -> 28 x 60 x 106 -> 28 x 30 x 53. */
    {"mochi-1-480p-163f", 3072, 44520, "Mochi 1: hidden_size_x 3072, 28 x 60 x 106 latent, patch 2"},
    /* Lightricks/LTX-Video transformer config: 32 heads x 64, patch 1; its VAE compresses
     * 32x32 in space and 8x in time: 768x512, 121 frames -> 16 x 16 x 24. */
    {"ltx-video-2b-768x512-121f", 2048, 6144, "LTX-Video config: 32 x 64, 16 x 16 x 24 latent, patch 1"},
    /* LTX-Video-0.9.7 (13B) transformer config: 32 heads x 128, 48 layers, same latent. */
    {"ltx-video-13b-768x512-121f", 4096, 6144, "LTX-Video-0.9.7 config: 32 x 128, 16 x 16 x 24 latent, patch 1"},
    /* tencent/HunyuanVideo: hidden 3072, 24 heads, patch 1x2x2, VAE 4x8x8: 720x1280, 129
     * frames -> 33 x 90 x 160 -> 33 x 45 x 80. */
    {"hunyuanvideo-720p-129f", 3072, 118800, "HunyuanVideo: hidden 3072, 33 x 90 x 160 latent, patch 1x2x2"},
    /* Wan 2.1 / 2.2: datasets/models/ presets and their public configs. */
    {"wan2.1-1.3b-480p-81f", 1536, 32760, "Wan 2.1 T2V-1.3B: dim 1536, 480x832 81 frames"},
    {"wan2.1-14b-720p-81f", 5120, 75600, "Wan 2.1 T2V-14B: dim 5120, 720x1280 81 frames"},
    {"wan2.2-5b-704p-121f", 3072, 27280, "Wan 2.2 TI2V-5B: dim 3072, 704x1280 121 frames, VAE 4x16x16"},
};

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
    memset(&s, 0, sizeof s);
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
    s.bwd_min_bytes = lnmod_bwd_min_bytes(&s.desc);
    s.bwd_graph_k = ada_graph_k(s.bwd_min_bytes);
    return s;
}

ada_shape ada_shape_make_batch(int64_t D, int64_t S, int64_t B, lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y)
{
    ada_shape s = ada_shape_make(D, S * B, x, mod, y);
    s.desc.rows_per_sample = S;
    s.desc.frame_len = S;
    s.min_bytes = lnmod_fwd_min_bytes(&s.desc, 0);
    s.graph_k = ada_graph_k(s.min_bytes);
    s.bwd_min_bytes = lnmod_bwd_min_bytes(&s.desc);
    s.bwd_graph_k = ada_graph_k(s.bwd_min_bytes);
    return s;
}

ada_shape ada_shape_make_layout(int64_t D, int64_t S, lnmod_layout layout, int64_t frame_len,
                                lnmod_dtype x, lnmod_dtype mod, lnmod_dtype y)
{
    ada_shape s = ada_shape_make(D, S, x, mod, y);
    s.desc.layout = layout;
    /* Per token and per frame, scale and shift are chunks of a [B, S, 6, D] / [B, F, 6, D]
     * tensor: the modulation rows are 6*D apart, as per sample. */
    s.desc.frame_len = layout == LNMOD_PER_FRAME ? frame_len : S;
    s.min_bytes = lnmod_fwd_min_bytes(&s.desc, 0);
    s.graph_k = ada_graph_k(s.min_bytes);
    s.bwd_min_bytes = lnmod_bwd_min_bytes(&s.desc);
    s.bwd_graph_k = ada_graph_k(s.bwd_min_bytes);
    return s;
}

ada_shape ada_shape_make_res(int64_t D, int64_t S, int64_t B, int site, lnmod_dtype branch, lnmod_dtype out)
{
    ada_shape s;
    memset(&s, 0, sizeof s);
    s.res = 1;
    s.site = site >= 1 && site <= 3 ? site : 0;
    s.rdesc = lnmod_res_desc_default();
    s.rdesc.rows = S * B;
    s.rdesc.D = D;
    s.rdesc.rows_per_sample = S;
    s.rdesc.frame_len = S;
    s.rdesc.layout = LNMOD_PER_SAMPLE;
    /* Site 1: gate e[2], norm3's weight and bias; site 2: no gate, scale e[4], shift e[3];
     * site 3: gate e[5], scale e'[1], shift e'[0] (the chunks: bench_gpu_res.h). */
    s.rdesc.gate = s.site == 2 ? LNMOD_RES_GATE_NONE : s.site ? LNMOD_RES_GATE : LNMOD_RES_GATE_COUNT;
    s.rdesc.norm = s.site == 1 ? LNMOD_RES_AFFINE : LNMOD_RES_MODULATE;
    s.rdesc.res_dtype = LNMOD_F32;
    s.rdesc.branch_dtype = branch;
    s.rdesc.mod_dtype = LNMOD_F32;
    s.rdesc.out_dtype = out;
    /* Every table row of [B, 6, D] (the strides a site does not use are ignored). */
    s.rdesc.gate_stride = s.rdesc.scale_stride = s.rdesc.shift_stride = 6 * D;
    s.desc = lnmod_res_map_desc(&s.rdesc);
    s.min_bytes = lnmod_res_fwd_min_bytes(&s.rdesc, 1);
    s.graph_k = ada_graph_k(s.min_bytes);
    s.bwd_min_bytes = lnmod_res_bwd_min_bytes(&s.rdesc, 1);
    s.bwd_graph_k = ada_graph_k(s.bwd_min_bytes);
    return s;
}

const ada_model_shape *ada_model_shapes(int64_t *n)
{
    *n = (int64_t)(sizeof models / sizeof *models);
    return models;
}

static int push(ada_shape *out, int64_t cap, int64_t *n, ada_shape s)
{
    if (*n >= cap) return -1;
    out[(*n)++] = s;
    return 0;
}

/* The wan set's per-token, per-frame, fp16 and extra fp32 shapes (see bar_D). */
static void wan_layouts(ada_shape *out, int64_t cap, int64_t *n, int *bad)
{
    for (size_t i = 0; i < sizeof bar_D / sizeof *bar_D; i++) {
        int64_t D = bar_D[i];
        int wan = D == 1536 || D == 3072 || D == 5120;
        for (int big = 0; big <= wan; big++) {
            int64_t S = big ? CLIP720 : CLIP480, L = big ? FRAME720 : FRAME480;
            *bad |= push(out, cap, n, ada_shape_make_layout(D, S, LNMOD_PER_TOKEN, S, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
            *bad |= push(out, cap, n, ada_shape_make_layout(D, S, LNMOD_PER_FRAME, L, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
            *bad |= push(out, cap, n, ada_shape_make(D, S, LNMOD_F16, LNMOD_F32, LNMOD_F16));
        }
        /* fp32 x at the two bar widths the per-sample Wan shapes above do not have. */
        if (!wan) *bad |= push(out, cap, n, ada_shape_make(D, CLIP480, LNMOD_F32, LNMOD_F32, LNMOD_F32));
    }
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
            /* Two 480p 81-frame clips in one call: where torch.compile's gradients of the
             * chain are right (at one sample they are not: issue 18), so it can be compared. */
            bad |= push(out, cap, &n, ada_shape_make_batch(wan_D[i], CLIP480, 2, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
            /* The official Wan code keeps the residual stream in fp32: the long clips again
             * with fp32 x (and fp32 y, so the dtype triple stays one name). */
            for (size_t j = 0; j < sizeof wan_rows / sizeof *wan_rows; j++)
                if (wan_rows[j] >= 32760)
                    bad |= push(out, cap, &n, ada_shape_make(wan_D[i], wan_rows[j], LNMOD_F32, LNMOD_F32, LNMOD_F32));
        }
        wan_layouts(out, cap, &n, &bad);
        /* The fused gated residual op at issue 22's bar shapes (site 3, per sample), then the
         * block's other two sites at one 480p 81-frame clip. */
        for (size_t i = 0; i < sizeof wan_D / sizeof *wan_D; i++) {
            bad |= push(out, cap, &n, ada_shape_make_res(wan_D[i], CLIP480, 1, 3, LNMOD_BF16, LNMOD_BF16));
            bad |= push(out, cap, &n, ada_shape_make_res(wan_D[i], CLIP720, 1, 3, LNMOD_BF16, LNMOD_BF16));
            bad |= push(out, cap, &n, ada_shape_make_res(wan_D[i], CLIP480, 2, 3, LNMOD_BF16, LNMOD_BF16));
        }
        for (int site = 1; site <= 2; site++)
            for (size_t i = 0; i < sizeof wan_D / sizeof *wan_D; i++)
                bad |= push(out, cap, &n, ada_shape_make_res(wan_D[i], CLIP480, 1, site, LNMOD_BF16, LNMOD_BF16));
    } else if (!strcmp(set, "sweep")) {
        for (int64_t D = SWEEP_FIRST; D <= SWEEP_LAST; D += SWEEP_STEP)
            bad |= push(out, cap, &n, ada_shape_make(D, SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        for (size_t i = 0; i < sizeof sweep_big_D / sizeof *sweep_big_D; i++)
            bad |= push(out, cap, &n, ada_shape_make(sweep_big_D[i], SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        for (size_t i = 0; i < sizeof sweep_m64_D / sizeof *sweep_m64_D; i++)
            bad |= push(out, cap, &n, ada_shape_make(sweep_m64_D[i], SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        for (size_t i = 0; i < sizeof sweep_m8_D / sizeof *sweep_m8_D; i++)
            bad |= push(out, cap, &n, ada_shape_make(sweep_m8_D[i], SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        for (size_t i = 0; i < sizeof sweep_odd_D / sizeof *sweep_odd_D; i++)
            bad |= push(out, cap, &n, ada_shape_make(sweep_odd_D[i], SWEEP_ROWS, LNMOD_BF16, LNMOD_F32, LNMOD_BF16));
        for (size_t i = 0; i < sizeof sweep_res_D / sizeof *sweep_res_D; i++)
            bad |= push(out, cap, &n, ada_shape_make_res(sweep_res_D[i], SWEEP_ROWS, 1, 3, LNMOD_BF16, LNMOD_BF16));
    } else if (!strcmp(set, "models")) {
        for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
            ada_shape m = ada_shape_make(models[i].D, models[i].tokens, LNMOD_BF16, LNMOD_F32, LNMOD_BF16);
            m.model = models[i].name;
            bad |= push(out, cap, &n, m);
        }
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

/* The suffix with graph K k (0: none). */
static int suffix_k(const ada_shape *s, int64_t k, char *buf, size_t n)
{
    const lnmod_desc *d = &s->desc;
    const lnmod_res_desc *r = &s->rdesc;
    int w = s->res ? snprintf(buf, n, "%s-%s-%s-%s/", lnmod_dtype_name(r->res_dtype), lnmod_dtype_name(r->branch_dtype),
                              lnmod_dtype_name(r->mod_dtype), lnmod_dtype_name(r->out_dtype))
                   : snprintf(buf, n, "%s-%s-%s/", lnmod_dtype_name(d->x_dtype), lnmod_dtype_name(d->mod_dtype),
                              lnmod_dtype_name(d->y_dtype));
    if (fits(w, n)) return -1;
    /* Sites 1 and 2 of the fused op say so after the layout; site 3 keeps the names it had. */
    if (s->res && (s->site < 1 || s->site > 3)) return -1;
    const char *site = !s->res || s->site == 3 ? "" : s->site == 1 ? "/site1" : "/site2";
    int wl = snprintf(buf + w, n - (size_t)w, "%s%s/D%lld/rows%lld", lnmod_layout_name(d->layout), site,
                      (long long)d->D, (long long)d->rows);
    if (fits(wl, n - (size_t)w)) return -1;
    w += wl;
    if (d->rows_per_sample > 0 && d->rows / d->rows_per_sample > 1) { /* several samples */
        int wb = snprintf(buf + w, n - (size_t)w, "/B%lld", (long long)(d->rows / d->rows_per_sample));
        if (fits(wb, n - (size_t)w)) return -1;
        w += wb;
    }
    if (k > 0) {
        int w2 = snprintf(buf + w, n - (size_t)w, "/graph%lld", (long long)k);
        if (fits(w2, n - (size_t)w)) return -1;
    }
    return 0;
}

int ada_shape_suffix(const ada_shape *s, char *buf, size_t n) { return suffix_k(s, s->graph_k, buf, n); }

int ada_shape_bwd_suffix(const ada_shape *s, char *buf, size_t n)
{
    return suffix_k(s, s->bwd_graph_k, buf, n);
}

int ada_shape_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n)
{
    char suffix[ADA_NAME_MAX];
    if (ada_shape_suffix(s, suffix, sizeof suffix)) return -1;
    return fits(snprintf(buf, n, "%s/%s/%s", s->res ? "lnmod_res_fwd" : "lnmod_fwd", variant, suffix), n);
}

int ada_shape_bwd_bench_name(const ada_shape *s, const char *variant, char *buf, size_t n)
{
    char suffix[ADA_NAME_MAX];
    if (ada_shape_bwd_suffix(s, suffix, sizeof suffix)) return -1;
    return fits(snprintf(buf, n, "%s/%s/%s", s->res ? "lnmod_res_bwd" : "lnmod_bwd", variant, suffix), n);
}

int ada_copy_bench_name(int64_t bytes, char *buf, size_t n)
{
    int64_t k = ada_graph_k(bytes);
    int w = k > 0 ? snprintf(buf, n, "copy/bytes%lld/graph%lld", (long long)bytes, (long long)k)
                  : snprintf(buf, n, "copy/bytes%lld", (long long)bytes);
    return fits(w, n);
}

/* A res shape's fields beyond the map's (bench/peers/res_peers.py reads them); x_dtype and
 * y_dtype stay the map's (fp32), so readers of lnmod shapes must look at "op" first. */
static void res_json(json_t *o, const lnmod_res_desc *r, int site)
{
    json_object_set_new(o, "op", json_string("lnmod_res"));
    json_object_set_new(o, "res_dtype", json_string(lnmod_dtype_name(r->res_dtype)));
    json_object_set_new(o, "branch_dtype", json_string(lnmod_dtype_name(r->branch_dtype)));
    json_object_set_new(o, "out_dtype", json_string(lnmod_dtype_name(r->out_dtype)));
    json_object_set_new(o, "mod_dtype", json_string(lnmod_dtype_name(r->mod_dtype)));
    json_object_set_new(o, "gate", json_boolean(r->gate == LNMOD_RES_GATE));
    json_object_set_new(o, "norm", json_string(r->norm == LNMOD_RES_AFFINE ? "affine" : "modulate"));
    json_object_set_new(o, "gate_stride", json_integer(r->gate_stride));
    json_object_set_new(o, "site", json_integer(site));
}

json_t *ada_shapes_json(const ada_shape *s, int64_t n)
{
    json_t *a = json_array();
    for (int64_t i = 0; i < n; i++) {
        const lnmod_desc *d = &s[i].desc;
        char suffix[ADA_NAME_MAX], copy[ADA_NAME_MAX], bsuffix[ADA_NAME_MAX], bcopy[ADA_NAME_MAX];
        if (ada_shape_suffix(&s[i], suffix, sizeof suffix) ||
            ada_copy_bench_name(s[i].min_bytes, copy, sizeof copy) ||
            ada_shape_bwd_suffix(&s[i], bsuffix, sizeof bsuffix) ||
            ada_copy_bench_name(s[i].bwd_min_bytes, bcopy, sizeof bcopy)) {
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
        json_object_set_new(o, "frame_len", json_integer(d->frame_len));
        json_object_set_new(o, "mod_rows", json_integer(lnmod_mod_rows(d)));
        if (s[i].model) json_object_set_new(o, "model", json_string(s[i].model));
        json_object_set_new(o, "mod_stride", json_integer(s[i].res ? s[i].rdesc.scale_stride : d->scale_stride));
        json_object_set_new(o, "eps", json_real(d->eps));
        json_object_set_new(o, "min_bytes", json_integer(s[i].min_bytes));
        json_object_set_new(o, "graph_k", json_integer(s[i].graph_k));
        json_object_set_new(o, "bwd_suffix", json_string(bsuffix));
        json_object_set_new(o, "bwd_copy_name", json_string(bcopy));
        json_object_set_new(o, "bwd_min_bytes", json_integer(s[i].bwd_min_bytes));
        json_object_set_new(o, "bwd_graph_k", json_integer(s[i].bwd_graph_k));
        if (s[i].res) res_json(o, &s[i].rdesc, s[i].site);
        json_array_append_new(a, o);
    }
    return a;
}

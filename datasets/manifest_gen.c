/* manifest_gen.c -- the generator behind the datasets/ manifests (see manifest_gen.h).
 *
 * The tables below are statistics of real public datasets (counted from the per-sample
 * metadata listed in datasets/README.md, which gives the sources and how they were counted);
 * the raw metadata is not part of the project. Everything else is a stated rule.
 *
 * default: one row = one training sample of a world-model style mixed run.
 *   25% images: aspect class drawn from MS-COCO val2017 sizes; trained at 480p or 720p with
 *       equal odds (web image sets are larger than COCO, so both tiers occur).
 *   75% clips: (aspect class, source short side >= 720) drawn from LSVQ test sizes; 720p when
 *       the source has >= 720 lines, else 480p (smaller sources are upscaled to 480p);
 *       duration d drawn from the Panda-70M validation durations (inverse CDF through their
 *       5% quantiles); at Wan's 16 fps the clip has floor(16 d) frames and the loader takes
 *       the longest window of 16k+1 frames (17 .. 113) or 121 that fits.
 *   Each (aspect class, tier) has one shape (sides multiples of 16, area near the tier's
 *   16:9 area): the loader resizes and center-crops to it.
 * longtail: raw shapes that the planner must snap (sides not multiples of 16, frame counts
 *   not 4k+1), 45% images with a few very large ones, 55% clips from low-resolution web
 *   sizes, frames with a heavy tail up to 121.
 */
#include "manifest_gen.h"

#include <math.h>
#include <string.h>

#include "ada_rng.h"

typedef struct {
    const char *name;
    int h480, w480, h720, w720; /* training shapes (height x width) per tier */
} aspect;

/* Shapes: 16:9 are Wan's own 480x832 and 720x1280; others keep the area within ~4% with
 * sides in multiples of 16; portrait shapes are the landscape ones transposed. */
static const aspect aspects[] = {
    {"16:9", 480, 832, 720, 1280},  {"4:3", 544, 720, 832, 1104}, {"3:2", 512, 768, 784, 1184},
    {"21:9", 416, 976, 624, 1456},  {"1:1", 624, 624, 960, 960},  {"2:3", 768, 512, 1184, 784},
    {"3:4", 720, 544, 1104, 832},   {"9:16", 832, 480, 1280, 720},
};
enum { A169, A43, A32, A219, A11, A23, A34, A916 };

typedef struct {
    int aspect;
    int hi; /* source short side >= 720 */
    int count;
} joint;

/* LSVQ test split (7,220 videos): sizes by nearest aspect class (log ratio) and by whether
 * the short side reaches 720 lines. */
static const joint lsvq[] = {
    {A169, 1, 3994}, {A169, 0, 609}, {A43, 0, 1778}, {A43, 1, 138}, {A916, 0, 343}, {A916, 1, 41},
    {A32, 0, 227},   {A32, 1, 26},   {A11, 0, 37},   {A11, 1, 10},  {A34, 0, 10},   {A23, 0, 4},
    {A219, 0, 3},
};

/* MS-COCO val2017 (5,000 images) by nearest aspect class. */
static const joint coco[] = {
    {A43, 0, 1689}, {A32, 0, 1622}, {A34, 0, 618}, {A23, 0, 510},
    {A11, 0, 278},  {A169, 0, 196}, {A916, 0, 47}, {A219, 0, 40},
};

/* Panda-70M validation (6,000 clips): duration quantiles in seconds at 0%, 5%, ..., 100%. */
static const double panda_q[21] = {2.000, 2.269, 2.502, 2.753, 3.070, 3.400, 3.794,
                                   4.037, 4.271, 4.805, 5.440, 6.406, 7.574, 8.248,
                                   10.144, 12.057, 15.949, 20.308, 31.406, 48.000, 48.132};

static int draw_joint(ada_rng *r, const joint *t, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += (uint64_t)t[i].count;
    uint64_t u = ada_rng_below(r, total);
    int i = 0;
    while (u >= (uint64_t)t[i].count) u -= (uint64_t)t[i++].count;
    return i;
}

/* The loader's window: the longest of 17, 33, ..., 113 (16k+1) or 121 frames within n. */
static int window_frames(int64_t n)
{
    if (n >= 121) return 121;
    int k = (int)((n - 1) / 16);
    return 16 * k + 1; /* n >= 32 here (clips last >= 2 s), so k >= 1 */
}

static int gen_default(FILE *out, int64_t rows, uint64_t seed)
{
    ada_rng r;
    ada_rng_seed(&r, seed);
    fputs("id,width,height,frames\n", out);
    for (int64_t i = 1; i <= rows; i++) {
        int h, w, frames;
        if (ada_rng_below(&r, 4) == 0) {
            const aspect *a = &aspects[coco[draw_joint(&r, coco, (int)(sizeof coco / sizeof *coco))].aspect];
            int hi = ada_rng_below(&r, 2) == 0;
            h = hi ? a->h720 : a->h480;
            w = hi ? a->w720 : a->w480;
            frames = 1;
        } else {
            const joint *j = &lsvq[draw_joint(&r, lsvq, (int)(sizeof lsvq / sizeof *lsvq))];
            const aspect *a = &aspects[j->aspect];
            h = j->hi ? a->h720 : a->h480;
            w = j->hi ? a->w720 : a->w480;
            double x = ada_rng_uniform(&r) * 20.0;
            int q = (int)x;
            double d = panda_q[q] + (x - q) * (panda_q[q + 1] - panda_q[q]);
            frames = window_frames((int64_t)floor(16.0 * d));
        }
        if (fprintf(out, "s%06lld,%d,%d,%d\n", (long long)i, w, h, frames) < 0) return -2;
    }
    return 0;
}

typedef struct {
    int w, h, weight;
} raw_size;

/* Raw image sizes: camera, web and a few very large scans; weights out of 100. */
static const raw_size lt_images[] = {
    {256, 256, 20},  {512, 512, 15},   {640, 480, 15},   {480, 640, 5},    {1024, 1024, 10},
    {1280, 720, 10}, {1920, 1080, 10}, {2048, 1536, 8},  {3840, 2160, 5},  {4096, 4096, 2},
};
/* Raw clip sizes: web video tiers, mostly below 480p. */
static const raw_size lt_clips[] = {
    {320, 240, 15}, {426, 240, 20}, {480, 360, 10}, {640, 360, 20},
    {640, 480, 10}, {854, 480, 15}, {1280, 720, 8}, {720, 1280, 2},
};
/* Raw frame counts: a heavy tail, as piecewise-linear quantiles (u, frames). */
static const double lt_frames_u[] = {0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 0.98, 0.995, 1.0};
static const double lt_frames_v[] = {2, 6, 12, 22, 40, 60, 81, 100, 118, 121};

static const raw_size *draw_size(ada_rng *r, const raw_size *t, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += t[i].weight;
    int u = (int)ada_rng_below(r, (uint64_t)total), i = 0;
    while (u >= t[i].weight) u -= t[i++].weight;
    return &t[i];
}

static int gen_longtail(FILE *out, int64_t rows, uint64_t seed)
{
    ada_rng r;
    ada_rng_seed(&r, seed);
    fputs("id,width,height,frames\n", out);
    for (int64_t i = 1; i <= rows; i++) {
        const raw_size *s;
        int frames;
        if (ada_rng_below(&r, 100) < 45) {
            s = draw_size(&r, lt_images, (int)(sizeof lt_images / sizeof *lt_images));
            frames = 1;
        } else {
            s = draw_size(&r, lt_clips, (int)(sizeof lt_clips / sizeof *lt_clips));
            double u = ada_rng_uniform(&r);
            int k = 0;
            while (u >= lt_frames_u[k + 1]) k++;
            double t = (u - lt_frames_u[k]) / (lt_frames_u[k + 1] - lt_frames_u[k]);
            frames = (int)floor(lt_frames_v[k] + t * (lt_frames_v[k + 1] - lt_frames_v[k]));
        }
        if (fprintf(out, "lt%05lld,%d,%d,%d\n", (long long)i, s->w, s->h, frames) < 0) return -2;
    }
    return 0;
}

/* Ten rows whose token counts can be checked by hand (datasets/README.md works them out):
 * columns in an unusual order, an unknown column, fps and weight, two shapes that snap. */
static const char tiny_csv[] = "frames,height,width,id,fps,weight,caption_words\n"
                               "1,480,832,img-a,,1,12\n"
                               "1,720,1280,img-b,,1,7\n"
                               "81,480,832,clip-a,16,1,30\n"
                               "33,480,832,clip-b,16,1,9\n"
                               "121,720,1280,clip-c,16,1,44\n"
                               "81,720,1280,clip-d,16,1,20\n"
                               "100,480,854,clip-e,30,0.5,5\n"
                               "81,480,832,clip-f,16,2,3\n"
                               "1,500,500,img-c,,1,1\n"
                               "17,480,832,clip-g,24,1,8\n";

int64_t ada_gen_default_rows(const char *kind)
{
    if (!strcmp(kind, "tiny")) return 10;
    if (!strcmp(kind, "default")) return 100000;
    if (!strcmp(kind, "longtail")) return 20000;
    return 0;
}

uint64_t ada_gen_default_seed(const char *kind)
{
    if (!strcmp(kind, "tiny")) return 0;
    if (!strcmp(kind, "default")) return 1;
    if (!strcmp(kind, "longtail")) return 2;
    return 0;
}

int ada_gen_manifest(FILE *out, const char *kind, int64_t rows, uint64_t seed)
{
    if (rows <= 0) rows = ada_gen_default_rows(kind);
    int rc;
    if (!strcmp(kind, "tiny")) rc = fputs(tiny_csv, out) < 0 ? -2 : 0;
    else if (!strcmp(kind, "default")) rc = gen_default(out, rows, seed);
    else if (!strcmp(kind, "longtail")) rc = gen_longtail(out, rows, seed);
    else return -1;
    if (rc == 0 && (fflush(out) != 0 || ferror(out))) rc = -2;
    return rc;
}

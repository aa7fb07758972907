/* cmd_verify.c -- `adaload verify`: every LayerNorm-Modulate kernel variant against the
 * float64 CPU reference, over a grid of dtypes x layouts x shapes, with fresh random and
 * adversarial inputs; writes the correctness record verify.json that CI's gate reads.
 *
 *   adaload verify [--grid quick|full|smoke] [--variant NAME]... [--seed N] [--threads N]
 *                  [--out DIR | --no-record] [--sanitizers] [--sanitizer-timeout S]
 *                  [--cpu-model] [--list]
 *
 * Per input set (dtypes, layout, D, rows; geometry from verify_inputs.h): inputs are drawn
 * once, the reference is computed once, then for each variant: y, mean and rstd and their
 * 256-byte guard bands before and after are poisoned (0xFF, a NaN), the kernel runs, the
 * guards must be untouched and every output element must pass verify_check.h's tolerance
 * table. Inputs sit between NaN guard bands too (a stray read that is used shows up as a
 * NaN), and every device buffer is allocated at exactly guards + data, so memcheck sees any
 * access beyond the bands. A sticky CUDA error ends the GPU work: the remaining cases are
 * recorded as not run. Exit 0 when every case passed (and every sanitizer run was clean), 1 when any
 * failed, 2 on bad usage, 77 when there is no GPU (no CUDA build or no device).
 *
 * Grids: smoke (the verifier's own tests), quick (D 1, 33, 1537, 5120; rows 1, 3, 1560),
 * full (D 1 ... 12288, 14 sizes; rows 1, 3, 1560, 32760; plus one rows*D > 2^31 case per
 * variant: bf16 x/y, fp32 per-sample modulation, D 4096, 524,800 rows). All 9 dtype
 * combinations and the 3 layouts in every grid.
 *
 * --sanitizers re-runs this program under compute-sanitizer (memcheck, racecheck,
 * initcheck, synccheck; the four concurrently, each with a quarter of the CPU threads) over
 * the quick grid with the same variants and seed, logs each into the run folder
 * (sanitizer_<tool>.log) and records "clean", "errors" or "not run: <why>" (compute-sanitizer
 * missing -- found via $ADALOAD_COMPUTE_SANITIZER, PATH or /usr/local/cuda/bin -- or a run
 * longer than --sanitizer-timeout).
 * --cpu-model swaps the GPU for fp32 CPU models (verify_model.h): a self-test of the
 * verifier on machines without a GPU; its records say backend "cpu-model" and never gate.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <jansson.h>

#include "build_info.h"
#include "cli.h"
#include "commands.h"
#include "lnmod_desc.h"
#include "ref_lnmod.h"
#include "results.h"
#include "verify_check.h"
#include "verify_inputs.h"
#include "verify_model.h"
#include "verify_par.h"

#if ADALOAD_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "lnmod.h"
#endif

extern char **environ;

#define CMD "verify"
#define GUARD 256 /* bytes of poison before and after every device buffer */
#define MAX_VARIANTS 32

/* ---- the grid ------------------------------------------------------------------------ */

static const int64_t full_D[] = {1, 7, 33, 127, 1000, 1536, 1537, 2048, 3072, 4096, 5119, 5120, 8192, 12288};
static const int64_t full_rows[] = {1, 3, 1560, 32760};
static const int64_t quick_D[] = {1, 33, 1537, 5120};
static const int64_t quick_rows[] = {1, 3, 1560};
static const int64_t smoke_D[] = {1, 7, 33, 257};
static const int64_t smoke_rows[] = {1, 3, 60};

/* The large case: rows * D = 2,149,580,800 > 2^31, in 16 samples of 32,800 rows. */
#define HUGE_ROWS 524800
#define HUGE_D 4096
#define HUGE_S 32800

typedef struct {
    lnmod_dtype x, mod, y;
} combo;

static const combo combos[] = {
    {LNMOD_F32, LNMOD_F32, LNMOD_F32},    {LNMOD_F16, LNMOD_F32, LNMOD_F16},
    {LNMOD_F16, LNMOD_F32, LNMOD_F32},    {LNMOD_F16, LNMOD_F16, LNMOD_F16},
    {LNMOD_F16, LNMOD_F16, LNMOD_F32},    {LNMOD_BF16, LNMOD_F32, LNMOD_BF16},
    {LNMOD_BF16, LNMOD_F32, LNMOD_F32},   {LNMOD_BF16, LNMOD_BF16, LNMOD_BF16},
    {LNMOD_BF16, LNMOD_BF16, LNMOD_F32},
};
#define NCOMBOS ((int)(sizeof combos / sizeof combos[0]))

typedef struct {
    int layout, combo;
    int64_t D, rows;
    int huge;
} set_spec;

/* ---- options ------------------------------------------------------------------------- */

typedef struct {
    const char *grid;
    const char *variants[MAX_VARIANTS];
    int nvariants;
    uint64_t seed;
    int seed_given;
    int threads;
    const char *out;
    int no_record;
    int sanitizers;
    int64_t sanitizer_timeout;
    int cpu_model;
    int list;
} vopts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adaload verify [options]\n"
            "  Checks every kernel variant against the float64 reference (needs a GPU).\n"
            "  --grid quick|full|smoke  cases to run (default quick; smoke = verifier self-test)\n"
            "  --variant NAME           a variant to check (repeatable; default all; --list)\n"
            "  --seed N                 input seed (default from the clock; always printed)\n"
            "  --threads N              CPU threads for inputs/reference/comparison (default: online CPUs)\n"
            "  --out DIR                write the record into DIR (default a new results/<gpu>/<run>/)\n"
            "  --no-record              print only, write nothing\n"
            "  --sanitizers             after the grid, run the quick grid under compute-sanitizer\n"
            "                           (memcheck, racecheck, initcheck, synccheck) and record verdicts\n"
            "  --sanitizer-timeout S    seconds allowed per sanitizer run (default 420)\n"
            "  --cpu-model              check fp32 CPU models instead of the GPU (self-test; see --list)\n"
            "  --list                   print the variants and exit\n"
            "exit: 0 all passed, 1 a case failed, 2 bad usage, 77 no CUDA device\n");
}

static int parse_opts(int argc, char **argv, vopts *o)
{
    memset(o, 0, sizeof *o);
    o->grid = "quick";
    o->sanitizer_timeout = 420;
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = nc > 0 ? (int)(nc > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : nc) : 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int takes = !strcmp(a, "--grid") || !strcmp(a, "--variant") || !strcmp(a, "--seed") ||
                    !strcmp(a, "--threads") || !strcmp(a, "--out") ||
                    !strcmp(a, "--sanitizer-timeout");
        if (takes && !v) return ada_usage_error(CMD, "option %s needs a value", a);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--grid")) {
            if (strcmp(v, "quick") && strcmp(v, "full") && strcmp(v, "smoke"))
                return ada_usage_error(CMD, "--grid must be quick, full or smoke, not '%s'", v);
            o->grid = v;
            i++;
        } else if (!strcmp(a, "--variant")) {
            if (o->nvariants == MAX_VARIANTS) return ada_usage_error(CMD, "too many --variant");
            o->variants[o->nvariants++] = v;
            i++;
        } else if (!strcmp(a, "--seed")) {
            /* Below 2^63 so the record stores it as a JSON integer, exactly. */
            if (ada_parse_u64(v, &o->seed) || o->seed > (uint64_t)INT64_MAX)
                return ada_usage_error(CMD, "--seed needs an integer in [0, 2^63), not '%s'", v);
            o->seed_given = 1;
            i++;
        } else if (!strcmp(a, "--threads")) {
            int64_t t;
            if (ada_parse_i64(v, 1, VERIFY_MAX_THREADS, &t))
                return ada_usage_error(CMD, "--threads needs an integer in [1, %d], not '%s'",
                                       VERIFY_MAX_THREADS, v);
            o->threads = (int)t;
            i++;
        } else if (!strcmp(a, "--sanitizer-timeout")) {
            if (ada_parse_i64(v, 1, 86400, &o->sanitizer_timeout))
                return ada_usage_error(CMD, "--sanitizer-timeout needs seconds in [1, 86400], not '%s'", v);
            i++;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
            i++;
        } else if (!strcmp(a, "--no-record")) {
            o->no_record = 1;
        } else if (!strcmp(a, "--sanitizers")) {
            o->sanitizers = 1;
        } else if (!strcmp(a, "--cpu-model")) {
            o->cpu_model = 1;
        } else if (!strcmp(a, "--list")) {
            o->list = 1;
        } else {
            return ada_usage_error(CMD, "unknown option '%s' (adaload verify --help)", a);
        }
    }
    if (o->out && o->no_record) return ada_usage_error(CMD, "--out and --no-record exclude each other");
    /* Model runs never create folders under results/ on their own: only with an explicit --out. */
    if (o->cpu_model && !o->out) o->no_record = 1;
    return 0;
}

/* ---- backends: the GPU, or the CPU models --------------------------------------------- */

typedef struct {
    int model;           /* 1: CPU models, memory is host memory */
    int threads;
    int context_lost;    /* a sticky CUDA error: nothing more can run */
    char lost_why[256];
} backend;

typedef struct {
    void *p;
    size_t cap;
    int pinned; /* page-locked (cudaMallocHost): transfers run at full PCIe speed */
} hbuf;

/* Grow-only host buffer: the grid reuses the biggest allocation instead of paging in
 * gigabytes per case. */
static void hbuf_free(hbuf *b);

static void *hbuf_get(hbuf *b, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (b->cap < bytes) {
        hbuf_free(b);
        b->p = malloc(bytes);
        b->cap = b->p ? bytes : 0;
    }
    return b->p;
}

static void hbuf_free(hbuf *b)
{
#if ADALOAD_HAVE_CUDA
    if (b->pinned) {
        cudaFreeHost(b->p);
        b->p = NULL;
        b->cap = 0;
        b->pinned = 0;
        return;
    }
#endif
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

/* Host buffer that travels to or from the device: page-locked on the GPU backend (the full
 * grid moves a few hundred GB each way), plain memory otherwise or if pinning fails. */
static void *hbuf_get_xfer(const backend *bk, hbuf *b, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        if (bytes == 0) bytes = 1;
        if (b->cap >= bytes) return b->p;
        hbuf_free(b);
        if (cudaMallocHost(&b->p, bytes) == cudaSuccess) {
            b->cap = bytes;
            b->pinned = 1;
            return b->p;
        }
        (void)cudaGetLastError();
        b->p = NULL;
    }
#endif
    (void)bk;
    return hbuf_get(b, bytes);
}

static void dev_free(backend *bk, hbuf *b)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        if (b->p) cudaFree(b->p);
        b->p = NULL;
        b->cap = 0;
        return;
    }
#endif
    (void)bk;
    hbuf_free(b);
}

/* Device buffer of exactly `bytes` (guards + data): never a larger leftover, so an access
 * beyond the guard bands falls outside the allocation, where compute-sanitizer's memcheck
 * reports it. NULL when the device is out of memory. */
static void *dev_get(backend *bk, hbuf *b, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        if (b->cap != bytes) {
            if (b->p) cudaFree(b->p);
            b->p = NULL;
            b->cap = 0;
            if (cudaMalloc(&b->p, bytes) != cudaSuccess) {
                (void)cudaGetLastError();
                b->p = NULL;
                return NULL;
            }
            b->cap = bytes;
        }
        return b->p;
    }
#endif
    (void)bk;
    if (b->cap != bytes) hbuf_free(b); /* exact here too, so ASan sees a model's stray access */
    return hbuf_get(b, bytes);
}

static int dev_poison(backend *bk, void *p, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemset(p, VERIFY_POISON_BYTE, bytes) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memset(p, VERIFY_POISON_BYTE, bytes);
    return 0;
}

static int dev_upload(backend *bk, void *dst, const void *src, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memcpy(dst, src, bytes);
    return 0;
}

static int dev_download(backend *bk, void *dst, const void *src, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memcpy(dst, src, bytes);
    return 0;
}

typedef struct {
    int which;
    const lnmod_desc *d;
    const void *x, *scale, *shift;
    void *y;
    float *mean, *rstd;
} model_ctx;

static void model_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    model_ctx *m = c;
    verify_model_rows(m->which, m->d, lo, hi, m->x, m->scale, m->shift, m->y, m->mean, m->rstd);
}

/* Runs variant on the backend and waits for it. 0 on success; otherwise err says why. */
static int backend_run(backend *bk, const char *variant, const lnmod_desc *d, const void *x,
                       const void *scale, const void *shift, void *y, float *mean, float *rstd,
                       char *err, size_t errn)
{
    if (bk->model) {
        model_ctx m = {verify_model_find(variant), d, x, scale, shift, y, mean, rstd};
        verify_parallel(d->rows, d->D * 4, bk->threads, model_range, &m);
        return 0;
    }
#if ADALOAD_HAVE_CUDA
    lnmod_status st = lnmod_forward(variant, d, x, scale, shift, y, mean, rstd, 0);
    if (st != LNMOD_OK) {
        cudaError_t le = cudaGetLastError();
        snprintf(err, errn, "lnmod_forward returned %s%s%s", lnmod_status_name(st),
                 le != cudaSuccess ? ": " : "", le != cudaSuccess ? cudaGetErrorString(le) : "");
        /* A launch error leaves the context usable; a sticky one shows up below. */
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        snprintf(err, errn, "kernel failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
        /* Clear the error; if the context is still broken (a sticky error such as an
         * illegal address), the next synchronization fails again and nothing more can run. */
        (void)cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) {
            bk->context_lost = 1;
            snprintf(bk->lost_why, sizeof bk->lost_why, "%s", err);
        }
        return -1;
    }
    return st == LNMOD_OK ? 0 : -1;
#else
    (void)variant, (void)d, (void)x, (void)scale, (void)shift, (void)y, (void)mean, (void)rstd;
    snprintf(err, errn, "GPU kernels not built");
    return -1;
#endif
}

/* ---- CPU work split over threads ------------------------------------------------------ */

typedef struct {
    const lnmod_desc *d;
    uint64_t seed, salt;
    void *x, *scale, *shift;
    double *ry, *rm, *rr;
    lnmod_status st[VERIFY_MAX_THREADS];
    /* comparison */
    const void *got_y;
    const float *got_mean, *got_rstd;
    verify_stats sy[VERIFY_MAX_THREADS], sm[VERIFY_MAX_THREADS], sr[VERIFY_MAX_THREADS];
} work_ctx;

static void fill_x_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    work_ctx *w = c;
    verify_fill_x_rows(w->d, w->seed, w->salt, lo, hi, w->x);
}

static void fill_mod_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    work_ctx *w = c;
    verify_fill_mod_rows(w->d, w->seed, lo, hi, w->scale, w->shift);
}

static void ref_range(void *c, int64_t lo, int64_t hi, int tid)
{
    work_ctx *w = c;
    w->st[tid] = ref_lnmod_forward_rows(w->d, lo, hi, w->x, w->scale, w->shift, w->ry, w->rm, w->rr);
}

static void cmp_range(void *c, int64_t lo, int64_t hi, int tid)
{
    work_ctx *w = c;
    verify_stats_init(&w->sy[tid]);
    verify_stats_init(&w->sm[tid]);
    verify_stats_init(&w->sr[tid]);
    verify_compare_y_rows(w->d, lo, hi, w->got_y, w->ry, &w->sy[tid]);
    if (w->got_mean)
        verify_compare_stats_rows(w->d, lo, hi, w->got_mean, w->got_rstd, w->rm, w->rr,
                                  &w->sm[tid], &w->sr[tid]);
}

/* ---- the run ------------------------------------------------------------------------- */

typedef struct {
    vopts *o;
    backend bk;
    const char *variants[MAX_VARIANTS];
    int nvariants;
    int per_case_lines;   /* one screen line per case (smoke/quick) or failures only (full) */
    json_t *cases;
    int64_t ncases_total, ncases_done, passed, failed, not_run;
    int64_t v_passed[MAX_VARIANTS], v_failed[MAX_VARIANTS], v_not_run[MAX_VARIANTS];
    struct timespec t0;
    double last_progress;
    /* Where the time goes (seconds): inputs, reference, device (copies, poison, kernel),
     * comparison -- so the full grid's cost can be tuned. */
    double t_inputs, t_ref, t_device, t_compare;
    /* buffers */
    hbuf hx, hscale, hshift, hry, hrm, hrr, hgy, hgm, hgr;
    hbuf dx, dscale, dshift, dy, dm, dr;
    work_ctx *w;
} run_state;

static double elapsed(const run_state *rs)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - rs->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - rs->t0.tv_nsec);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(run_state *rs, int force)
{
    double e = elapsed(rs);
    if (!force && e - rs->last_progress < 5.0) return;
    rs->last_progress = e;
    fprintf(stderr, "adaload verify: case %" PRId64 "/%" PRId64 ", %.0f s elapsed, %" PRId64 " failed\n",
            rs->ncases_done, rs->ncases_total, e, rs->failed);
}

static void dtypes_str(const lnmod_desc *d, char *buf, size_t n)
{
    snprintf(buf, n, "%s-%s-%s", lnmod_dtype_name(d->x_dtype), lnmod_dtype_name(d->mod_dtype),
             lnmod_dtype_name(d->y_dtype));
}

static json_t *jnum(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *case_json(const char *variant, const lnmod_desc *d, const verify_geom *g)
{
    json_t *c = json_object();
    json_object_set_new(c, "variant", json_string(variant));
    json_object_set_new(c, "x", json_string(lnmod_dtype_name(d->x_dtype)));
    json_object_set_new(c, "mod", json_string(lnmod_dtype_name(d->mod_dtype)));
    json_object_set_new(c, "y", json_string(lnmod_dtype_name(d->y_dtype)));
    json_object_set_new(c, "layout", json_string(lnmod_layout_name(d->layout)));
    json_object_set_new(c, "D", json_integer(d->D));
    json_object_set_new(c, "rows", json_integer(d->rows));
    json_object_set_new(c, "S", json_integer(d->rows_per_sample));
    json_object_set_new(c, "frame_len", json_integer(d->frame_len));
    json_object_set_new(c, "strides", json_pack("{s:I, s:I}", "scale", (json_int_t)d->scale_stride,
                                                "shift", (json_int_t)d->shift_stride));
    json_object_set_new(c, "offsets", json_pack("{s:I, s:I, s:I, s:I}", "x", (json_int_t)g->off.x,
                                                "scale", (json_int_t)g->off.scale, "shift",
                                                (json_int_t)g->off.shift, "y", (json_int_t)g->off.y));
    json_object_set_new(c, "eps", json_real(d->eps));
    json_object_set_new(c, "stats", json_boolean(g->want_stats));
    return c;
}

static void print_header(void)
{
    printf("%-14s %-14s %-6s %6s %7s %10s %10s %10s  %s\n", "variant", "x-mod-y", "layout",
           "D", "rows", "max_abs", "max_rel", "l2_rel", "verdict");
}

static void record_case(run_state *rs, int vi, json_t *c, int pass, int not_run,
                        const char *line, const char *detail)
{
    json_array_append_new(rs->cases, c);
    rs->ncases_done++;
    if (not_run) {
        rs->not_run++;
        rs->v_not_run[vi]++;
    } else if (pass) {
        rs->passed++;
        rs->v_passed[vi]++;
    } else {
        rs->failed++;
        rs->v_failed[vi]++;
    }
    if (rs->per_case_lines || !pass) {
        printf("%s\n", line);
        if (detail && *detail) printf("%s", detail);
        fflush(stdout);
    }
    progress(rs, 0);
}

static void free_buffers(run_state *rs)
{
    hbuf *hb[] = {&rs->hx, &rs->hscale, &rs->hshift, &rs->hry, &rs->hrm, &rs->hrr, &rs->hgy, &rs->hgm, &rs->hgr};
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) hbuf_free(hb[i]);
    hbuf *db[] = {&rs->dx, &rs->dscale, &rs->dshift, &rs->dy, &rs->dm, &rs->dr};
    for (size_t i = 0; i < sizeof db / sizeof db[0]; i++) dev_free(&rs->bk, db[i]);
}

/* Free host memory in bytes (MemAvailable), or -1 when unknown. */
static int64_t host_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    int64_t kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %" SCNd64 " kB", &kb) == 1) break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

/* One input set: draw inputs, reference once, every variant against it. */
static void run_set(run_state *rs, const set_spec *sp)
{
    lnmod_desc d = lnmod_desc_default();
    d.x_dtype = combos[sp->combo].x;
    d.mod_dtype = combos[sp->combo].mod;
    d.y_dtype = combos[sp->combo].y;
    d.layout = (lnmod_layout)sp->layout;
    /* Geometry depends on the case's identity only, not on the seed or the grid, so the
     * same case looks the same in every run. */
    uint64_t gh = verify_hash(verify_hash(verify_hash(verify_hash(verify_hash(0xada10ad, (uint64_t)sp->layout),
                                                                  (uint64_t)sp->combo), (uint64_t)sp->D),
                                          (uint64_t)sp->rows), (uint64_t)sp->huge);
    verify_geom g;
    verify_pick_geometry(&d, sp->rows, sp->D, gh, &g);
    if (sp->huge) {
        /* Start from empty pools: the biggest grid buffers (~13 GB host, ~10 GB device)
         * would otherwise sit beside this case's ~30 GB. */
        free_buffers(rs);
        d.rows_per_sample = HUGE_S;
        d.frame_len = HUGE_S;
        d.scale_stride = d.shift_stride = 6 * sp->D;
        d.eps = 1e-6;
        g.off = (verify_offsets){0, 0, 0, 0};
        g.want_stats = 1;
    }
    char dts[32], line[1024], detail[2048];
    dtypes_str(&d, dts, sizeof dts);
    detail[0] = '\0';

    const int64_t n = d.rows * d.D;
    const size_t xs = lnmod_dtype_size(d.x_dtype), ms = lnmod_dtype_size(d.mod_dtype),
                 ys = lnmod_dtype_size(d.y_dtype);
    const int64_t nsc = verify_mod_elems(&d, d.scale_stride), nsh = verify_mod_elems(&d, d.shift_stride);
    const size_t ybytes = 2 * GUARD + (size_t)(g.off.y + n) * ys;
    const size_t sbytes = 2 * GUARD + (size_t)d.rows * sizeof(float);

    const char *skip = NULL;
    char skipbuf[256];
    if (lnmod_desc_validate(&d) != LNMOD_OK) {
        snprintf(skipbuf, sizeof skipbuf, "verifier bug: invalid descriptor (%s)",
                 lnmod_strerror(lnmod_desc_validate(&d)));
        skip = skipbuf;
    }
    if (!skip && rs->bk.context_lost) {
        snprintf(skipbuf, sizeof skipbuf, "not run: CUDA context lost earlier (%.200s)", rs->bk.lost_why);
        skip = skipbuf;
    }
    if (!skip && sp->huge) {
        if (rs->bk.model) {
            skip = "not run: the rows*D > 2^31 case needs the GPU";
        } else {
            int64_t need_host = n * (int64_t)(xs + 8 + ys + ys) + ((int64_t)1 << 28);
            int64_t avail = host_mem_available();
            if (avail >= 0 && avail < need_host) {
                snprintf(skipbuf, sizeof skipbuf,
                         "not run: needs %.1f GB of host memory, %.1f GB available",
                         (double)need_host / 1e9, (double)avail / 1e9);
                skip = skipbuf;
            }
#if ADALOAD_HAVE_CUDA
            size_t fr = 0, tot = 0;
            int64_t need_dev = n * (int64_t)(xs + ys) + ((int64_t)1 << 28);
            if (!skip && cudaMemGetInfo(&fr, &tot) == cudaSuccess && (int64_t)fr < need_dev) {
                snprintf(skipbuf, sizeof skipbuf,
                         "not run: needs %.1f GB of device memory, %.1f GB free",
                         (double)need_dev / 1e9, (double)fr / 1e9);
                skip = skipbuf;
            }
#endif
        }
    }

    /* Host inputs and reference. */
    work_ctx *w = rs->w;
    void *hx = NULL, *hsc = NULL, *hsh = NULL;
    double *ry = NULL, *rm = NULL, *rr = NULL;
    if (!skip) {
        hx = hbuf_get_xfer(&rs->bk, &rs->hx, (size_t)n * xs);
        hsc = hbuf_get_xfer(&rs->bk, &rs->hscale, (size_t)nsc * ms);
        hsh = hbuf_get_xfer(&rs->bk, &rs->hshift, (size_t)nsh * ms);
        ry = hbuf_get(&rs->hry, (size_t)n * sizeof(double));
        rm = hbuf_get(&rs->hrm, (size_t)d.rows * sizeof(double));
        rr = hbuf_get(&rs->hrr, (size_t)d.rows * sizeof(double));
        if (!hx || !hsc || !hsh || !ry || !rm || !rr) skip = "not run: out of host memory";
    }
    if (!skip) {
        w->d = &d;
        w->seed = verify_hash(rs->o->seed, gh);
        w->salt = g.salt;
        w->x = hx;
        w->scale = hsc;
        w->shift = hsh;
        w->ry = ry;
        w->rm = rm;
        w->rr = rr;
        double t0 = now_s();
        verify_parallel(d.rows, d.D, rs->bk.threads, fill_x_range, w);
        verify_parallel(lnmod_mod_rows(&d), d.D + (d.scale_stride > d.shift_stride ? d.scale_stride : d.shift_stride),
                        rs->bk.threads, fill_mod_range, w);
        double t1 = now_s();
        rs->t_inputs += t1 - t0;
        int used = verify_parallel(d.rows, 3 * d.D, rs->bk.threads, ref_range, w);
        rs->t_ref += now_s() - t1;
        for (int t = 0; t < used; t++)
            if (w->st[t] != LNMOD_OK) {
                snprintf(skipbuf, sizeof skipbuf, "not run: the reference returned %s",
                         lnmod_status_name(w->st[t]));
                skip = skipbuf;
            }
    }

    /* Device inputs: poisoned guard bands around each, then the data at its offset. */
    unsigned char *dx = NULL, *dsc = NULL, *dsh = NULL, *dy = NULL, *dm = NULL, *dr = NULL;
    double tdev = now_s();
    if (!skip) {
        const size_t xb = 2 * GUARD + (size_t)(g.off.x + n) * xs;
        const size_t scb = 2 * GUARD + (size_t)(g.off.scale + nsc) * ms;
        const size_t shb = 2 * GUARD + (size_t)(g.off.shift + nsh) * ms;
        dx = dev_get(&rs->bk, &rs->dx, xb);
        dsc = dev_get(&rs->bk, &rs->dscale, scb);
        dsh = dev_get(&rs->bk, &rs->dshift, shb);
        dy = dev_get(&rs->bk, &rs->dy, ybytes);
        dm = dev_get(&rs->bk, &rs->dm, sbytes);
        dr = dev_get(&rs->bk, &rs->dr, sbytes);
        if (!dx || !dsc || !dsh || !dy || !dm || !dr) {
            skip = "not run: out of device memory";
        } else if (dev_poison(&rs->bk, dx, xb) || dev_poison(&rs->bk, dsc, scb) ||
                   dev_poison(&rs->bk, dsh, shb) ||
                   dev_upload(&rs->bk, dx + GUARD + g.off.x * xs, hx, (size_t)n * xs) ||
                   dev_upload(&rs->bk, dsc + GUARD + g.off.scale * ms, hsc, (size_t)nsc * ms) ||
                   dev_upload(&rs->bk, dsh + GUARD + g.off.shift * ms, hsh, (size_t)nsh * ms)) {
            skip = "not run: copying the inputs to the device failed";
        }
    }
    rs->t_device += now_s() - tdev;
    unsigned char *gy = NULL, *gm = NULL, *gr = NULL;
    if (!skip) {
        gy = hbuf_get_xfer(&rs->bk, &rs->hgy, ybytes);
        gm = hbuf_get(&rs->hgm, sbytes);
        gr = hbuf_get(&rs->hgr, sbytes);
        if (!gy || !gm || !gr) skip = "not run: out of host memory";
    }

    for (int vi = 0; vi < rs->nvariants; vi++) {
        const char *variant = rs->variants[vi];
        json_t *c = case_json(variant, &d, &g);
        if (!skip && rs->bk.context_lost) {
            snprintf(skipbuf, sizeof skipbuf, "not run: CUDA context lost earlier (%.200s)", rs->bk.lost_why);
            skip = skipbuf;
        }
        if (skip) {
            json_object_set_new(c, "pass", json_false());
            json_object_set_new(c, "not_run", json_string(skip));
            snprintf(line, sizeof line, "%-14s %-14s %-6s %6" PRId64 " %7" PRId64 " %10s %10s %10s  %s",
                     variant, dts, lnmod_layout_name(d.layout), d.D, d.rows, "-", "-", "-", skip);
            record_case(rs, vi, c, 0, 1, line, NULL);
            continue;
        }
        /* Poison every output, guards included, before every launch. */
        double tv = now_s();
        char err[512] = "";
        int ok = !dev_poison(&rs->bk, dy, ybytes) && !dev_poison(&rs->bk, dm, sbytes) &&
                 !dev_poison(&rs->bk, dr, sbytes);
        if (!ok) snprintf(err, sizeof err, "poisoning the outputs failed");
        float *pm = g.want_stats ? (float *)(dm + GUARD) : NULL;
        float *pr = g.want_stats ? (float *)(dr + GUARD) : NULL;
        if (ok)
            ok = backend_run(&rs->bk, variant, &d, dx + GUARD + g.off.x * xs, dsc + GUARD + g.off.scale * ms,
                             dsh + GUARD + g.off.shift * ms, dy + GUARD + g.off.y * ys, pm, pr, err,
                             sizeof err) == 0;
        if (ok && (dev_download(&rs->bk, gy, dy, ybytes) || dev_download(&rs->bk, gm, dm, sbytes) ||
                   dev_download(&rs->bk, gr, dr, sbytes))) {
            ok = 0;
            snprintf(err, sizeof err, "copying the outputs back failed");
        }
        double tc = now_s();
        rs->t_device += tc - tv;
        if (!ok) {
            json_object_set_new(c, "pass", json_false());
            json_object_set_new(c, "error", json_string(err));
            snprintf(line, sizeof line, "%-14s %-14s %-6s %6" PRId64 " %7" PRId64 " %10s %10s %10s  FAIL: %.400s",
                     variant, dts, lnmod_layout_name(d.layout), d.D, d.rows, "-", "-", "-", err);
            record_case(rs, vi, c, 0, 0, line, NULL);
            continue;
        }
        /* Guard bands: y's front band includes the offset element(s). */
        size_t bad = 0;
        const size_t yfront = GUARD + (size_t)g.off.y * ys, yend = yfront + (size_t)n * ys;
        int guard_ok = verify_guard_ok(gy, yfront, &bad) && verify_guard_ok(gy + yend, ybytes - yend, &bad);
        /* Without stats the whole stats buffers must stay untouched. */
        const size_t sfront = g.want_stats ? GUARD : sbytes;
        const size_t send = g.want_stats ? GUARD + (size_t)d.rows * sizeof(float) : sbytes;
        guard_ok = guard_ok && verify_guard_ok(gm, sfront, NULL) && verify_guard_ok(gm + send, sbytes - send, NULL) &&
                   verify_guard_ok(gr, sfront, NULL) && verify_guard_ok(gr + send, sbytes - send, NULL);

        w->got_y = gy + yfront;
        w->got_mean = g.want_stats ? (const float *)(gm + GUARD) : NULL;
        w->got_rstd = g.want_stats ? (const float *)(gr + GUARD) : NULL;
        int used = verify_parallel(d.rows, d.D, rs->bk.threads, cmp_range, w);
        verify_stats sy, sm, sr;
        verify_stats_init(&sy);
        verify_stats_init(&sm);
        verify_stats_init(&sr);
        for (int t = 0; t < used; t++) {
            verify_stats_merge(&sy, &w->sy[t]);
            verify_stats_merge(&sm, &w->sm[t]);
            verify_stats_merge(&sr, &w->sr[t]);
        }
        rs->t_compare += now_s() - tc;
        int pass_y = verify_stats_pass(&sy);
        int pass_stats = !g.want_stats || (verify_stats_pass(&sm) && verify_stats_pass(&sr));
        int pass = pass_y && pass_stats && guard_ok;

        json_object_set_new(c, "max_abs", jnum(sy.max_abs));
        json_object_set_new(c, "max_rel", jnum(sy.max_rel));
        json_object_set_new(c, "l2_rel", jnum(verify_stats_l2_rel(&sy)));
        json_object_set_new(c, "worst_index", json_integer(sy.worst_index));
        json_object_set_new(c, "worst_ratio", jnum(sy.worst_ratio));
        json_object_set_new(c, "nonfinite", json_integer(sy.nonfinite));
        json_object_set_new(c, "failed", json_integer(sy.failed));
        json_object_set_new(c, "guard_ok", json_boolean(guard_ok));
        if (g.want_stats) {
            json_object_set_new(c, "mean", json_pack("{s:o, s:o, s:I}", "max_abs", jnum(sm.max_abs),
                                                     "worst_ratio", jnum(sm.worst_ratio), "failed",
                                                     (json_int_t)sm.failed));
            json_object_set_new(c, "rstd", json_pack("{s:o, s:o, s:I}", "max_rel", jnum(sr.max_rel),
                                                     "worst_ratio", jnum(sr.worst_ratio), "failed",
                                                     (json_int_t)sr.failed));
        }
        json_object_set_new(c, "pass", json_boolean(pass));

        char verdict[128];
        if (pass) {
            snprintf(verdict, sizeof verdict, "ok");
        } else {
            snprintf(verdict, sizeof verdict, "FAIL%s%s%s%s", pass_y ? "" : " y",
                     (g.want_stats && !verify_stats_pass(&sm)) ? " mean" : "",
                     (g.want_stats && !verify_stats_pass(&sr)) ? " rstd" : "",
                     guard_ok ? "" : " guard");
            size_t k = 0;
            if (!pass_y && sy.worst_index >= 0) {
                json_t *sj = verify_stats_json(&sy);
                json_object_set(c, "first_failures", json_object_get(sj, "first_failures"));
                json_decref(sj);
                k += (size_t)snprintf(detail + k, sizeof detail - k,
                                      "    y: %" PRId64 " of %" PRId64 " elements fail (%" PRId64 " non-finite); worst at row %" PRId64 " col %" PRId64 ": got %.9g, ref %.9g (%.3g x allowed)\n",
                                      sy.failed, sy.n, sy.nonfinite, sy.worst_index / d.D,
                                      sy.worst_index % d.D, sy.worst_got, sy.worst_ref, sy.worst_ratio);
                for (int i = 0; i < sy.nfirst && k < sizeof detail - 200; i++)
                    k += (size_t)snprintf(detail + k, sizeof detail - k,
                                          "      first: row %" PRId64 " col %" PRId64 " (%s row) got %.9g ref %.9g\n",
                                          sy.first_index[i] / d.D, sy.first_index[i] % d.D,
                                          verify_row_kind_name(verify_row_kind_of(d.rows, sy.first_index[i] / d.D, g.salt)),
                                          sy.first_got[i], sy.first_ref[i]);
            }
            const verify_stats *ss[2] = {&sm, &sr};
            const char *sn[2] = {"mean", "rstd"};
            for (int q = 0; q < 2 && g.want_stats; q++)
                if (!verify_stats_pass(ss[q]) && k < sizeof detail - 200)
                    k += (size_t)snprintf(detail + k, sizeof detail - k,
                                          "    %s: %" PRId64 " of %" PRId64 " rows fail; worst row %" PRId64 " (%s): got %.9g, ref %.9g\n",
                                          sn[q], ss[q]->failed, ss[q]->n, ss[q]->worst_index,
                                          verify_row_kind_name(verify_row_kind_of(d.rows, ss[q]->worst_index, g.salt)),
                                          ss[q]->worst_got, ss[q]->worst_ref);
            if (!guard_ok && k < sizeof detail - 200)
                snprintf(detail + k, sizeof detail - k, "    guard band written (y or mean/rstd outside their extent)\n");
        }
        snprintf(line, sizeof line, "%-14s %-14s %-6s %6" PRId64 " %7" PRId64 " %10.3g %10.3g %10.3g  %s",
                 variant, dts, lnmod_layout_name(d.layout), d.D, d.rows, sy.max_abs, sy.max_rel,
                 verify_stats_l2_rel(&sy), verdict);
        record_case(rs, vi, c, pass, 0, line, detail);
        detail[0] = '\0';
    }
    if (sp->huge) free_buffers(rs); /* give the gigabytes back before anything else runs */
}

/* ---- sanitizers -------------------------------------------------------------------------- */

static const char *const san_tools[4] = {"memcheck", "racecheck", "initcheck", "synccheck"};

/* compute-sanitizer: $ADALOAD_COMPUTE_SANITIZER, then PATH, then /usr/local/cuda/bin. */
static int find_sanitizer(char *out, size_t n)
{
    const char *e = getenv("ADALOAD_COMPUTE_SANITIZER");
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (path) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", path);
        for (char *save = NULL, *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
            snprintf(out, n, "%s/compute-sanitizer", dir);
            if (access(out, X_OK) == 0) return 0;
        }
    }
    snprintf(out, n, "/usr/local/cuda/bin/compute-sanitizer");
    return access(out, X_OK) == 0 ? 0 : -1;
}

static void run_sanitizers(run_state *rs, const char *logdir, json_t *verdicts, json_t *details)
{
    vopts *o = rs->o;
    char cs[4096], self[4096];
    if (find_sanitizer(cs, sizeof cs) != 0) {
        for (int t = 0; t < 4; t++)
            json_object_set_new(verdicts, san_tools[t], json_string("not run: compute-sanitizer not found"));
        return;
    }
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) {
        for (int t = 0; t < 4; t++)
            json_object_set_new(verdicts, san_tools[t], json_string("not run: cannot find this program's path"));
        return;
    }
    self[sl] = '\0';
    char seed[32], thr[16];
    snprintf(seed, sizeof seed, "%" PRIu64, o->seed);
    /* The four run at once: give each a quarter of the CPU threads. */
    snprintf(thr, sizeof thr, "%d", o->threads >= 8 ? o->threads / 4 : 2);
    pid_t pids[4];
    char logs[4][4500];
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int t = 0; t < 4; t++) {
        const char *argv[20 + 2 * MAX_VARIANTS];
        int k = 0;
        argv[k++] = cs;
        argv[k++] = "--tool";
        argv[k++] = san_tools[t];
        argv[k++] = "--error-exitcode";
        argv[k++] = "1";
        argv[k++] = self;
        argv[k++] = "verify";
        argv[k++] = "--grid";
        /* The quick grid; a smoke run (the verifier's own tests) keeps its smoke grid. */
        argv[k++] = !strcmp(o->grid, "smoke") ? "smoke" : "quick";
        argv[k++] = "--no-record";
        argv[k++] = "--seed";
        argv[k++] = seed;
        argv[k++] = "--threads";
        argv[k++] = thr;
        if (o->cpu_model) argv[k++] = "--cpu-model"; /* plumbing tests without a GPU */
        for (int v = 0; v < rs->nvariants; v++) {
            argv[k++] = "--variant";
            argv[k++] = rs->variants[v];
        }
        argv[k] = NULL;
        snprintf(logs[t], sizeof logs[t], "%.4400s/sanitizer_%s.log", logdir, san_tools[t]);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, logs[t], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 1, 2);
        pids[t] = -1;
        if (posix_spawn(&pids[t], cs, &fa, NULL, (char *const *)argv, environ) != 0) pids[t] = -1;
        posix_spawn_file_actions_destroy(&fa);
        fprintf(stderr, "adaload verify: %s started (log %s)\n", san_tools[t], logs[t]);
    }
    int done[4] = {0, 0, 0, 0};
    int status[4] = {0, 0, 0, 0};
    double secs[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; t++)
        if (pids[t] < 0) done[t] = -1;
    for (;;) {
        int pending = 0;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec);
        for (int t = 0; t < 4; t++) {
            if (done[t]) continue;
            pid_t r = waitpid(pids[t], &status[t], WNOHANG);
            if (r == pids[t]) {
                done[t] = 1;
                secs[t] = el;
                fprintf(stderr, "adaload verify: %s finished after %.0f s\n", san_tools[t], el);
            } else if (el > (double)o->sanitizer_timeout) {
                kill(pids[t], SIGKILL); /* our own child */
                waitpid(pids[t], &status[t], 0);
                done[t] = 2;
                secs[t] = el;
            } else {
                pending = 1;
            }
        }
        if (!pending) break;
        struct timespec nap = {0, 200 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    for (int t = 0; t < 4; t++) {
        char v[256];
        int code = -1;
        if (done[t] == -1) {
            snprintf(v, sizeof v, "not run: could not start %.200s", cs);
        } else if (done[t] == 2) {
            snprintf(v, sizeof v, "not run: timed out after %" PRId64 " s", o->sanitizer_timeout);
        } else if (WIFEXITED(status[t])) {
            code = WEXITSTATUS(status[t]);
            if (code == 0) snprintf(v, sizeof v, "clean");
            else if (code == ADA_EXIT_SKIP) snprintf(v, sizeof v, "not run: the child found no GPU");
            else snprintf(v, sizeof v, "errors");
        } else {
            snprintf(v, sizeof v, "errors");
        }
        json_object_set_new(verdicts, san_tools[t], json_string(v));
        const char *base = strrchr(logs[t], '/');
        json_object_set_new(details, san_tools[t],
                            json_pack("{s:s, s:i, s:f, s:s}", "verdict", v, "exit_code", code,
                                      "seconds", secs[t], "log", base ? base + 1 : logs[t]));
        printf("sanitizer %-10s %s\n", san_tools[t], v);
    }
}

/* ---- the command ----------------------------------------------------------------------- */

static void list_variants(void)
{
#if ADALOAD_HAVE_CUDA
    printf("GPU kernel variants:\n");
    for (const lnmod_variant *v = lnmod_variants; v->name; v++)
        printf("  %-14s %s\n", v->name, v->description ? v->description : "");
#else
    printf("GPU kernel variants: none (this build has no CUDA toolkit)\n");
#endif
    printf("CPU models (--cpu-model, for the verifier's own tests):\n");
    for (int i = 0; verify_models[i].name; i++)
        printf("  %-14s %s\n", verify_models[i].name, verify_models[i].description);
}

static json_t *gpu_json(const backend *bk)
{
    json_t *g = json_object();
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        struct cudaDeviceProp p;
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        char buf[32];
        if (cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
            json_object_set_new(g, "name", json_string(p.name));
            json_object_set_new(g, "sm_count", json_integer(p.multiProcessorCount));
            snprintf(buf, sizeof buf, "sm_%d%d", p.major, p.minor);
            json_object_set_new(g, "arch", json_string(buf));
            json_object_set_new(g, "memory_bytes", json_integer((json_int_t)p.totalGlobalMem));
        }
        snprintf(buf, sizeof buf, "%d.%d", drv / 1000, (drv % 1000) / 10);
        json_object_set_new(g, "driver", json_string(buf));
        snprintf(buf, sizeof buf, "%d.%d", rt / 1000, (rt % 1000) / 10);
        json_object_set_new(g, "runtime", json_string(buf));
        return g;
    }
#endif
    (void)bk;
    json_object_set_new(g, "name", json_string("none (cpu model)"));
    return g;
}

static void join_cmdline(int argc, char **argv, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "adaload");
    for (int i = 0; i < argc && k < n; i++) k += (size_t)snprintf(buf + k, n - k, " %s", argv[i]);
}

int cmd_verify(int argc, char **argv)
{
    vopts o;
    int prc = parse_opts(argc, argv, &o);
    if (prc == -1) return ADA_EXIT_OK; /* --help */
    if (prc != 0) return prc;
    if (o.list) {
        list_variants();
        return ADA_EXIT_OK;
    }

    run_state *rs = calloc(1, sizeof *rs);
    work_ctx *w = calloc(1, sizeof *w);
    if (!rs || !w) {
        free(rs);
        free(w);
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_FAIL;
    }
    rs->o = &o;
    rs->w = w;
    rs->bk.model = o.cpu_model;
    rs->bk.threads = o.threads;

    /* Variants: the named ones (checked), or all of the backend's. */
    if (o.cpu_model) {
        for (int i = 0; i < o.nvariants; i++)
            if (verify_model_find(o.variants[i]) < 0) {
                free(rs);
                free(w);
                return ada_usage_error(CMD, "unknown model '%s' (adaload verify --list)", o.variants[i]);
            }
        if (o.nvariants == 0) o.variants[o.nvariants++] = "model";
    } else {
#if ADALOAD_HAVE_CUDA
        for (int i = 0; i < o.nvariants; i++)
            if (!lnmod_find_variant(o.variants[i])) {
                free(rs);
                free(w);
                return ada_usage_error(CMD, "unknown variant '%s' (adaload verify --list)", o.variants[i]);
            }
        if (o.nvariants == 0)
            for (const lnmod_variant *v = lnmod_variants; v->name && o.nvariants < MAX_VARIANTS; v++)
                o.variants[o.nvariants++] = v->name;
        if (ada_cuda_device_count() == 0) {
            free(rs);
            free(w);
            ada_msg(CMD, "no CUDA device here: nothing to verify (skipped)");
            return ADA_EXIT_SKIP;
        }
        if (o.nvariants == 0) {
            free(rs);
            free(w);
            ada_msg(CMD, "the kernel registry is empty: nothing to verify");
            return ADA_EXIT_FAIL;
        }
#else
        free(rs);
        free(w);
        ada_msg(CMD, "this build has no GPU kernels (no CUDA toolkit): nothing to verify (skipped)");
        return ADA_EXIT_SKIP;
#endif
    }
    for (int i = 0; i < o.nvariants; i++) rs->variants[i] = o.variants[i];
    rs->nvariants = o.nvariants;

    if (!o.seed_given) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t s = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        o.seed = ada_splitmix64(&s) >> 1; /* < 2^63: survives a JSON integer */
    }
    if (o.out) {
        char p[4200];
        snprintf(p, sizeof p, "%s/verify.json", o.out);
        struct stat st;
        if (stat(p, &st) == 0) {
            free(rs);
            free(w);
            return ada_usage_error(CMD, "%s exists: run folders are written once", p);
        }
    }
    /* The reference calls OpenBLAS from our threads: keep OpenBLAS itself single-threaded. */
    openblas_set_num_threads(1);

    /* The grid. */
    const int64_t *Ds, *Rs;
    int nD, nR;
    if (!strcmp(o.grid, "full")) {
        Ds = full_D, nD = (int)(sizeof full_D / sizeof full_D[0]);
        Rs = full_rows, nR = (int)(sizeof full_rows / sizeof full_rows[0]);
    } else if (!strcmp(o.grid, "quick")) {
        Ds = quick_D, nD = (int)(sizeof quick_D / sizeof quick_D[0]);
        Rs = quick_rows, nR = (int)(sizeof quick_rows / sizeof quick_rows[0]);
    } else {
        Ds = smoke_D, nD = (int)(sizeof smoke_D / sizeof smoke_D[0]);
        Rs = smoke_rows, nR = (int)(sizeof smoke_rows / sizeof smoke_rows[0]);
    }
    int nsets = nD * nR * LNMOD_LAYOUT_COUNT * NCOMBOS + (!strcmp(o.grid, "full") ? 1 : 0);
    set_spec *sets = calloc((size_t)nsets, sizeof *sets);
    if (!sets) {
        free(rs);
        free(w);
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_FAIL;
    }
    int k = 0;
    for (int a = 0; a < nD; a++)
        for (int b = 0; b < nR; b++)
            for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++)
                for (int c = 0; c < NCOMBOS; c++)
                    sets[k++] = (set_spec){l, c, Ds[a], Rs[b], 0};
    if (!strcmp(o.grid, "full")) sets[k++] = (set_spec){LNMOD_PER_SAMPLE, 5 /* bf16-f32-bf16 */, HUGE_D, HUGE_ROWS, 1};

    rs->ncases_total = (int64_t)nsets * rs->nvariants;
    rs->per_case_lines = strcmp(o.grid, "full") != 0;
    rs->cases = json_array();
    clock_gettime(CLOCK_MONOTONIC, &rs->t0);

    char date[32];
    ada_utc_iso(date, sizeof date);
    printf("adaload verify: grid %s, %d input sets x %d variant(s) = %" PRId64 " cases, seed %" PRIu64
           " (reproduce with --seed %" PRIu64 "), %d CPU threads, backend %s\n",
           o.grid, nsets, rs->nvariants, rs->ncases_total, o.seed, o.seed, o.threads,
           o.cpu_model ? "cpu-model" : "cuda");
    if (rs->per_case_lines) print_header();
    fflush(stdout);

    for (int i = 0; i < nsets; i++) run_set(rs, &sets[i]);
    progress(rs, 1);
    double grid_seconds = elapsed(rs);

    /* Summary per variant. */
    printf("\n%-14s %8s %8s %8s\n", "variant", "passed", "failed", "not run");
    for (int v = 0; v < rs->nvariants; v++)
        printf("%-14s %8" PRId64 " %8" PRId64 " %8" PRId64 "\n", rs->variants[v], rs->v_passed[v],
               rs->v_failed[v], rs->v_not_run[v]);
    printf("total: %" PRId64 " cases, %" PRId64 " passed, %" PRId64 " failed, %" PRId64 " not run (%.1f s)\n",
           rs->ncases_done, rs->passed, rs->failed, rs->not_run, grid_seconds);
    printf("time: inputs %.1f s, reference %.1f s, device %.1f s, comparison %.1f s\n", rs->t_inputs,
           rs->t_ref, rs->t_device, rs->t_compare);

    /* The run folder, then the sanitizers (their logs go into it), then the record. */
    char cmdline[2048];
    join_cmdline(argc, argv, cmdline, sizeof cmdline);
    char dir[4400] = "";
    int rc = ADA_EXIT_OK;
    int io_failed = 0;
    if (!o.no_record) {
        if (o.out) {
            if (ada_mkdirs(o.out) != 0) {
                ada_msg(CMD, "cannot create %s: %s", o.out, strerror(errno));
                io_failed = 1;
            } else {
                snprintf(dir, sizeof dir, "%s", o.out);
                char mp[4500];
                snprintf(mp, sizeof mp, "%s/meta.json", dir);
                struct stat st;
                if (stat(mp, &st) != 0 && ada_results_write_meta(dir, cmdline) != 0) {
                    ada_msg(CMD, "cannot write %s: %s", mp, strerror(errno));
                    io_failed = 1;
                }
            }
        } else {
            char tb[128];
            if (o.cpu_model) snprintf(tb, sizeof tb, "cpu-model");
            else if (ada_results_testbed(tb, sizeof tb) != 0) snprintf(tb, sizeof tb, "unknown");
            if (ada_results_new_run(ada_source_dir(), tb, cmdline, dir, sizeof dir) != 0) {
                ada_msg(CMD, "cannot create a run folder under %s/results: %s", ada_source_dir(), strerror(errno));
                io_failed = 1;
            }
        }
    }

    json_t *verdicts = json_object(), *details = json_object();
    if (o.sanitizers) {
        /* Logs go into the run folder, or a fresh temporary folder with --no-record. */
        char logdir[4400];
        snprintf(logdir, sizeof logdir, "%s", dir[0] ? dir : "/tmp/adaload-sanitizers-XXXXXX");
        if (!dir[0] && !mkdtemp(logdir)) snprintf(logdir, sizeof logdir, "/tmp");
        run_sanitizers(rs, logdir, verdicts, details);
        if (!dir[0]) printf("sanitizer logs: %s\n", logdir);
    } else {
        for (int t = 0; t < 4; t++)
            json_object_set_new(verdicts, san_tools[t], json_string("not run: --sanitizers not given"));
    }
    int san_errors = 0;
    for (int t = 0; t < 4; t++)
        if (!strcmp(json_string_value(json_object_get(verdicts, san_tools[t])), "errors")) san_errors = 1;

    int all_passed = rs->failed == 0 && rs->not_run == 0;
    if (rs->failed > 0 || san_errors) rc = ADA_EXIT_FAIL;

    if (dir[0] && !io_failed) {
        json_t *rec = json_object();
        json_object_set_new(rec, "schema", json_string("adaload.verify/1"));
        json_object_set_new(rec, "kernel_source_hash", json_string(ADALOAD_KERNEL_HASH));
        json_object_set_new(rec, "backend", json_string(o.cpu_model ? "cpu-model" : "cuda"));
        json_object_set_new(rec, "gpu", gpu_json(&rs->bk));
        json_object_set_new(rec, "seed", json_integer((json_int_t)o.seed));
        json_object_set_new(rec, "grid", json_string(o.grid));
        json_object_set_new(rec, "date", json_string(date));
        json_t *meta = NULL;
        {
            char mp[4500];
            snprintf(mp, sizeof mp, "%s/meta.json", dir);
            meta = json_load_file(mp, 0, NULL);
        }
        json_t *sha = meta ? json_object_get(meta, "git_sha") : NULL;
        json_object_set_new(rec, "git_sha", sha ? json_incref(sha) : json_string("unknown"));
        json_t *dirty = meta ? json_object_get(meta, "git_dirty") : NULL;
        json_object_set_new(rec, "git_dirty", dirty ? json_incref(dirty) : json_null());
        json_decref(meta);
        json_object_set_new(rec, "command_line", json_string(cmdline));
        json_object_set_new(rec, "threads", json_integer(o.threads));
        json_t *vs = json_array();
        for (int v = 0; v < rs->nvariants; v++) json_array_append_new(vs, json_string(rs->variants[v]));
        json_object_set_new(rec, "variants", vs);
        json_object_set_new(rec, "tolerances", verify_tol_json());
        json_object_set_new(rec, "elapsed_s", json_real(grid_seconds));
        json_object_set_new(rec, "phase_seconds",
                            json_pack("{s:f, s:f, s:f, s:f}", "inputs", rs->t_inputs, "reference",
                                      rs->t_ref, "device", rs->t_device, "comparison", rs->t_compare));
        json_object_set_new(rec, "cases", rs->cases);
        rs->cases = NULL;
        json_object_set_new(rec, "sanitizers", verdicts);
        verdicts = NULL;
        json_object_set_new(rec, "sanitizer_runs", details);
        details = NULL;
        json_object_set_new(rec, "summary", json_pack("{s:I, s:I, s:I, s:I}", "cases", (json_int_t)rs->ncases_done,
                                                      "passed", (json_int_t)rs->passed, "failed",
                                                      (json_int_t)rs->failed, "not_run", (json_int_t)rs->not_run));
        json_object_set_new(rec, "all_passed", json_boolean(all_passed));
        char path[4500];
        snprintf(path, sizeof path, "%s/verify.json", dir);
        if (ada_write_json_atomic(path, rec) != 0) {
            ada_msg(CMD, "cannot write %s: %s", path, strerror(errno));
            io_failed = 1;
        } else {
            printf("record: %s\n", path);
        }
        json_decref(rec);
    }
    json_decref(verdicts);
    json_decref(details);
    json_decref(rs->cases);

    if (rs->failed > 0) printf("verify: FAILED (%" PRId64 " of %" PRId64 " cases)\n", rs->failed, rs->ncases_done);
    else if (san_errors) printf("verify: FAILED (a sanitizer reported errors; see its log)\n");
    else if (rs->not_run > 0) printf("verify: passed, but %" PRId64 " case(s) could not run\n", rs->not_run);
    else printf("verify: all %" PRId64 " cases passed\n", rs->passed);
    if (io_failed && rc == ADA_EXIT_OK) rc = ADA_EXIT_FAIL;

    free_buffers(rs);
    free(sets);
    free(w);
    free(rs);
    return rc;
}

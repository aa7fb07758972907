/* verify_internal.h -- what the verify library's own files share (not for its users):
 * the session, the per-set working state and the helpers between verify_session.c
 * (inputs, reference, device, per-variant runs) and verify_case.c (judging one output). */
#ifndef ADALOAD_VERIFY_INTERNAL_H
#define ADALOAD_VERIFY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "verify.h"
#include "verify_backend.h"
#include "verify_check.h"
#include "verify_inputs.h"
#include "verify_par.h"

/* Process CPU time in seconds (all threads). */
static inline double verify_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define VERIFY_GUARD 256 /* bytes of poison before and after every device buffer */

/* The large case: rows * D = 2,149,580,800 > 2^31, in 16 samples of 32,800 rows. */
#define VERIFY_HUGE_ROWS 524800
#define VERIFY_HUGE_D 4096
#define VERIFY_HUGE_S 32800

/* Scratch of the parallel phases: one slot per thread. */
typedef struct {
    const lnmod_desc *d;
    uint64_t seed, salt;
    void *x, *scale, *shift;
    double *ry, *rm, *rr;
    lnmod_status st[VERIFY_MAX_THREADS];
    const void *got_y;
    const float *got_mean, *got_rstd;
    verify_stats sy[VERIFY_MAX_THREADS], sm[VERIFY_MAX_THREADS], sr[VERIFY_MAX_THREADS];
} verify_work;

/* One input set while it runs: descriptor, geometry, sizes and buffers. */
typedef struct {
    lnmod_desc d;
    verify_geom g;
    uint64_t gh;    /* hash of the set's identity */
    int64_t n;      /* rows * D */
    size_t xs, ms, ys;
    int64_t nsc, nsh; /* elements of scale and shift */
    size_t ybytes, sbytes;
    void *hx, *hsc, *hsh;
    double *ry, *rm, *rr;
    unsigned char *dx, *dsc, *dsh, *dy, *dm, *dr;
    unsigned char *gy, *gm, *gr;
    char dts[32];   /* "bf16-f32-bf16" */
} verify_setw;

/* Poison of the backward's second launch (the first uses VERIFY_POISON_BYTE): a finite
 * value in every dtype, so a kernel that reads its outputs back gets different numbers. */
#define VERIFY_POISON2_BYTE 0xA5

/* The backward's buffers (pools reused from set to set): host dy, fp32 statistics, each
 * variant's downloaded outputs (first launch), the second launch's downloads; the device
 * buffers of dy, mean, rstd, the three outputs and the workspace. */
typedef struct {
    verify_buf hdy, hmean, hrstd, hgx[VERIFY_MAX_VARIANTS], hgsc[VERIFY_MAX_VARIANTS], hgsh[VERIFY_MAX_VARIANTS];
    verify_buf tgx, tgsc, tgsh, hws;
    verify_buf ddy, dmean, drstd, dgx, dgsc, dgsh, dws;
} verify_bwd_pool;

struct verify_session {
    const verify_config *c;
    verify_backend bk;
    int per_case_lines; /* one line per case (smoke/quick) or failures only (full) */
    json_t *cases;
    verify_totals t;
    double t0, last_progress;
    verify_buf hx, hscale, hshift, hry, hrm, hrr, hgy, hgm, hgr;
    verify_buf dx, dscale, dshift, dy, dm, dr;
    verify_work *w;
    int directions;                     /* VERIFY_DIR_* bits */
    int has_bwd[VERIFY_MAX_VARIANTS];   /* the variant has a backward */
    verify_bwd_pool bp;
};

/* The backward cases of the prepared set w, for every variant with a backward
 * (verify_bwd.c); skip: the reason the set cannot run, or NULL. */
/* Free host memory in bytes (MemAvailable), or -1 when unknown; sizes a set's buffers. */
int64_t verify_host_mem_available(void);
void verify_run_backward(verify_session *s, const verify_setw *w, const char *skip);
void verify_bwd_pool_free(verify_session *s);
/* The line of a case that did not produce numbers. */
void verify_line_of(char *line, size_t n, const char *variant, int dir, const verify_setw *w, const char *tail);

/* The case's identity as JSON (variant, dtypes, layout, shape, strides, offsets, eps). */
json_t *verify_case_json(const char *variant, int dir, const lnmod_desc *d, const verify_geom *g);

/* Judges the downloaded outputs of one run (guards, y, statistics) into c (numbers, pass)
 * and writes the verdict ("ok" / "FAIL y mean ...") and a failure detail text. Returns
 * 1 when the case passed. */
int verify_judge_outputs(verify_session *s, const verify_setw *w, json_t *c, char *verdict,
                         size_t vn, char *detail, size_t dn, double *max_abs, double *max_rel,
                         double *l2_rel);

/* Counts the case, adds c to the records and hands the line (and detail) to the note. */
void verify_record_case(verify_session *s, int vi, int dir, json_t *c, int pass, int not_run,
                        const char *line, const char *detail);

#endif

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
#include "verify_res.h"

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

/* Scratch of the parallel input phases. */
typedef struct {
    const lnmod_desc *d;
    uint64_t seed, salt;
    void *x, *scale, *shift;
} verify_work;

/* One input set while it runs: descriptor, geometry, sizes and buffers. rm/rr: the float64
 * reference's statistics (verify_forward_check fills them; the backward's inputs). gy/gm/gr:
 * variant vi's downloaded forward outputs, when ran[vi]; err[vi]: why it did not run. */
typedef struct {
    lnmod_desc d;
    verify_geom g;
    uint64_t gh;    /* hash of the set's identity */
    int64_t n;      /* rows * D */
    size_t xs, ms, ys;
    int64_t nsc, nsh; /* elements of scale and shift */
    size_t ybytes, sbytes;
    void *hx, *hsc, *hsh;
    double *rm, *rr;
    unsigned char *dx, *dsc, *dsh, *dy, *dm, *dr;
    unsigned char *gy[VERIFY_MAX_VARIANTS], *gm[VERIFY_MAX_VARIANTS], *gr[VERIFY_MAX_VARIANTS];
    int ran[VERIFY_MAX_VARIANTS];
    char err[VERIFY_MAX_VARIANTS][512];
    char dts[32];   /* "bf16-f32-bf16" */
} verify_setw;

/* Poison of the backward's second launch (the first uses VERIFY_POISON_BYTE): a finite
 * value in every dtype, so a kernel that reads its outputs back gets different numbers. */
#define VERIFY_POISON2_BYTE 0xA5

/* The backward's buffers (pools reused from set to set): host dy, fp32 statistics, each
 * variant's downloaded outputs (first launch); the device buffers of dy, mean, rstd, the
 * three outputs of each of the two launches, the span check's counters, the workspace. */
typedef struct {
    verify_buf hdy, hmean, hrstd, hgx[VERIFY_MAX_VARIANTS], hgsc[VERIFY_MAX_VARIANTS], hgsh[VERIFY_MAX_VARIANTS];
    verify_buf hws;
    verify_buf ddy, dmean, drstd, dgx, dgsc, dgsh, dgx2, dgsc2, dgsh2, dcnt, dws;
} verify_bwd_pool;

struct verify_session {
    const verify_config *c;
    verify_backend bk;
    int per_case_lines; /* one line per case (smoke/quick) or failures only (full) */
    json_t *cases;
    verify_totals t;
    double t0, last_progress;
    verify_buf hx, hscale, hshift, hrm, hrr;
    verify_buf hgy[VERIFY_MAX_VARIANTS], hgm[VERIFY_MAX_VARIANTS], hgr[VERIFY_MAX_VARIANTS];
    verify_buf dx, dscale, dshift, dy, dm, dr;
    verify_work *w;
    int directions;                     /* VERIFY_DIR_* bits */
    int has_bwd[VERIFY_MAX_VARIANTS];   /* the variant has a backward */
    verify_bwd_pool bp;
    verify_res_gpu_pool rp; /* the fused op's GPU runner's buffers (rp.bk = &bk) */
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
/* The descriptor and geometry a set runs with (its dtypes, layout, samples and frames,
 * strides, pointer offsets, statistics, eps; the huge case's fixed ones); returns the
 * geometry hash. A function of the set alone (verify_session.c). */
uint64_t verify_set_desc(const verify_set *sp, lnmod_desc *d, verify_geom *g);
json_t *verify_case_json(const char *variant, int dir, const lnmod_desc *d, const verify_geom *g);

/* The forward's float64 reference over the set's rows, on the session's threads, fused with
 * the comparison of every forward output downloaded (w->ran[vi]): the statistics into
 * w->rm / w->rr (always: the backward needs them), and out[vi][0..2] = the y, mean and rstd
 * statistics of each variant that ran (merged in thread order). No rows*D doubles are
 * stored, and the reference is computed once per set whatever the number of variants.
 * Returns the reference's status (LNMOD_ERR_ALLOC for the scratch). */
lnmod_status verify_forward_check(verify_session *s, verify_setw *w, verify_stats (*out)[3]);

/* Judges variant vi's forward outputs (guards of w->gy/gm/gr[vi]; st: y, mean, rstd from
 * verify_forward_check) into c (numbers, pass) and writes the verdict ("ok" / "FAIL y mean
 * ...") and a failure detail text. Returns 1 when the case passed. */
int verify_judge_outputs(const verify_setw *w, int vi, const verify_stats st[3], json_t *c, char *verdict,
                         size_t vn, char *detail, size_t dn);

/* Counts the case, adds c to the records and hands the line (and detail) to the note. */
void verify_record_case(verify_session *s, int vi, int dir, json_t *c, int pass, int not_run,
                        const char *line, const char *detail);
/* The same for a case of op (VERIFY_OP_LNMOD, or VERIFY_OP_RES: vi indexes config.res_variants
 * and the totals' r_* counts). */
void verify_record_op_case(verify_session *s, int op, int vi, int dir, json_t *c, int pass, int not_run,
                           const char *line, const char *detail);

#endif

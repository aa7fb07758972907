/* verify_sanitizers.c -- compute-sanitizer runs of the verifier (verify.h): this program
 * again, under memcheck, racecheck, initcheck and synccheck at once, over the quick grid
 * (a smoke run keeps its smoke grid) and the fused op's sanitizer grid
 * (verify_res_sanitizer_grid), with logs and verdicts. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "verify.h"
#include "verify_res.h"

extern char **environ;

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

typedef struct {
    pid_t pid;
    int done;   /* 0 running, 1 exited, 2 killed (timeout), -1 never started */
    int status;
    double t0, secs; /* started at (ada_now_s), seconds it ran */
    char log[4500];
} san_run;

static void all_verdicts(json_t *verdicts, const char *v)
{
    for (int t = 0; t < 4; t++) json_object_set_new(verdicts, verify_sanitizer_tools[t], json_string(v));
}

/* Starts tool t: cs --tool T --error-exitcode 1 self verify --grid G --no-record ... */
static void start(const verify_config *c, const char *cs, const char *self, const char *log, int t,
                  san_run *r)
{
    char seed[32], thr[16];
    snprintf(seed, sizeof seed, "%" PRIu64, c->seed);
    /* The four run at once: give each a quarter of the CPU threads. */
    snprintf(thr, sizeof thr, "%d", c->threads >= 8 ? c->threads / 4 : 2);
    const char *argv[24 + 4 * VERIFY_MAX_VARIANTS + 2 * VERIFY_MAX_PLUGINS];
    int k = 0;
    argv[k++] = cs;
    argv[k++] = "--tool";
    argv[k++] = verify_sanitizer_tools[t];
    argv[k++] = "--error-exitcode";
    argv[k++] = "1";
    argv[k++] = self;
    argv[k++] = "verify";
    argv[k++] = "--grid";
    argv[k++] = verify_sanitizer_grid(c->grid);
    argv[k++] = "--no-record";
    argv[k++] = "--seed";
    argv[k++] = seed;
    argv[k++] = "--threads";
    argv[k++] = thr;
    if (c->cpu_model) argv[k++] = "--cpu-model"; /* plumbing tests without a GPU */
    argv[k++] = "--direction"; /* the same directions as the run itself: both by default */
    argv[k++] = c->directions == VERIFY_DIR_FWD ? "fwd" : c->directions == VERIFY_DIR_BWD ? "bwd" : "both";
    for (int p = 0; p < c->nplugins; p++) {
        argv[k++] = "--plugin";
        argv[k++] = c->plugins[p];
    }
    for (int v = 0; v < c->nvariants; v++) {
        argv[k++] = "--variant";
        argv[k++] = c->variants[v];
    }
    /* The fused op's variants: the GPU's are among the above (the child takes those with the
     * fused op), the CPU models are named apart; none: the child runs lnmod's cases alone. */
    for (int v = 0; v < c->nres_variants; v++) {
        int named = 0;
        for (int u = 0; u < c->nvariants; u++) named |= !strcmp(c->variants[u], c->res_variants[v]);
        if (!named) argv[k++] = "--variant", argv[k++] = c->res_variants[v];
    }
    argv[k++] = c->nres_variants ? "--res-grid" : "--op";
    argv[k++] = c->nres_variants ? verify_res_sanitizer_grid(c->grid) : "lnmod";
    argv[k] = NULL;
    snprintf(r->log, sizeof r->log, "%s", log);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, r->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    r->pid = -1;
    r->t0 = ada_now_s();
    if (posix_spawn(&r->pid, cs, &fa, NULL, (char *const *)argv, environ) != 0) r->pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    r->done = r->pid < 0 ? -1 : 0;
    ada_note(c->progress, c->progress_arg, "%s started (log %s)", verify_sanitizer_tools[t], r->log);
}

/* Waits for the four, killing any past the timeout (counted from its own start). */
static void wait_all(const verify_config *c, san_run *r)
{
    for (;;) {
        int pending = 0;
        for (int t = 0; t < 4; t++) {
            if (r[t].done) continue;
            const double el = ada_now_s() - r[t].t0;
            pid_t w = waitpid(r[t].pid, &r[t].status, WNOHANG);
            if (w == r[t].pid) {
                r[t].done = 1;
                r[t].secs = el;
                ada_note(c->progress, c->progress_arg, "%s finished after %.0f s", verify_sanitizer_tools[t], el);
            } else if (el > (double)c->sanitizer_timeout) {
                kill(r[t].pid, SIGKILL); /* our own child */
                waitpid(r[t].pid, &r[t].status, 0);
                r[t].done = 2;
                r[t].secs = el;
            } else {
                pending = 1;
            }
        }
        if (!pending) break;
        struct timespec nap = {0, 200 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
}

static void verdict_of(const verify_config *c, const san_run *r, const char *cs, char *v, size_t n, int *code)
{
    *code = -1;
    if (r->done == -1) {
        snprintf(v, n, "not run: could not start %.200s", cs);
    } else if (r->done == 2) {
        snprintf(v, n, "not run: timed out after %" PRId64 " s", c->sanitizer_timeout);
    } else if (WIFEXITED(r->status)) {
        *code = WEXITSTATUS(r->status);
        if (*code == 0) snprintf(v, n, "clean");
        else if (*code == 77) snprintf(v, n, "not run: the child found no GPU");
        else snprintf(v, n, "errors");
    } else {
        snprintf(v, n, "errors");
    }
}

typedef struct {
    const verify_config *c;
    char cs[4096];
    json_t *vs;       /* the variants, for details */
    int64_t ncases;   /* cases of the sanitizer grid */
    const char *why;  /* set: nothing was started, every verdict is this */
    san_run r[4];
} san_runs;

/* Launches the four (or notes in h->why why none can run); NULL only when out of memory. */
static san_runs *runs_start(const verify_config *c, const char *self, const char *const logs[4])
{
    san_runs *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->c = c;
    char me[4096];
    if (find_sanitizer(h->cs, sizeof h->cs) != 0) {
        h->why = "not run: compute-sanitizer not found";
        return h;
    }
    if (!self) {
        ssize_t sl = readlink("/proc/self/exe", me, sizeof me - 1);
        if (sl <= 0) {
            h->why = "not run: cannot find this program's path";
            return h;
        }
        me[sl] = '\0';
        self = me;
    }
    /* What each run is asked to check: the cases of the sanitizer grid for c's variants
     * (the child exits 0 only when every one of them passed and the tool found nothing). */
    int has_bwd[VERIFY_MAX_VARIANTS];
    for (int v = 0; v < c->nvariants; v++) has_bwd[v] = verify_has_backward(c->cpu_model, c->variants[v]);
    verify_case_id *ids;
    if (verify_grid_cases(verify_sanitizer_grid(c->grid), c->variants, has_bwd, c->nvariants, c->directions, &ids,
                          &h->ncases) == VERIFY_OK)
        free(ids);
    verify_res_set *rs;
    int nrs = 0;
    const int ndirs = c->directions == VERIFY_DIR_FWD || c->directions == VERIFY_DIR_BWD ? 1 : 2;
    if (c->nres_variants && verify_res_grid_sets(verify_res_sanitizer_grid(c->grid), &rs, &nrs) == VERIFY_OK) free(rs);
    h->ncases += (int64_t)nrs * ndirs * c->nres_variants;
    h->vs = json_array();
    for (int v = 0; v < c->nvariants; v++) json_array_append_new(h->vs, json_string(c->variants[v]));
    for (int t = 0; t < 4; t++) start(c, h->cs, self, logs[t], t, &h->r[t]);
    return h;
}

/* Waits for them, fills verdicts and details, frees h. */
static void runs_finish(san_runs *h, json_t *verdicts, json_t *details)
{
    if (!h) {
        all_verdicts(verdicts, "not run: out of memory");
        return;
    }
    if (h->why) {
        all_verdicts(verdicts, h->why);
        free(h);
        return;
    }
    const verify_config *c = h->c;
    wait_all(c, h->r);
    for (int t = 0; t < 4; t++) {
        char v[256];
        int code;
        verdict_of(c, &h->r[t], h->cs, v, sizeof v, &code);
        json_object_set_new(verdicts, verify_sanitizer_tools[t], json_string(v));
        char name[64];
        snprintf(name, sizeof name, "sanitizer_%s.log", verify_sanitizer_tools[t]);
        json_object_set_new(details, verify_sanitizer_tools[t],
                            json_pack("{s:s, s:i, s:f, s:s, s:s, s:O, s:I}", "verdict", v, "exit_code", code,
                                      "seconds", h->r[t].secs, "log", name, "grid", verify_sanitizer_grid(c->grid),
                                      "variants", h->vs, "cases", (json_int_t)h->ncases));
        if (c->nres_variants)
            json_object_set_new(json_object_get(details, verify_sanitizer_tools[t]), "res_grid",
                                json_string(verify_res_sanitizer_grid(c->grid)));
        ada_note(c->note, c->note_arg, "sanitizer %-10s %s", verify_sanitizer_tools[t], v);
    }
    json_decref(h->vs);
    free(h);
}

void verify_run_sanitizers(const verify_config *c, const char *self, const char *const logs[4],
                           json_t *verdicts, json_t *details)
{
    runs_finish(runs_start(c, self, logs), verdicts, details);
}

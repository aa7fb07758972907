/* bench_planner.c -- CPU benchmarks of the planner (see bench_planner.h for what they time
 * and report).
 *
 * The manifest is generated on first use into a temporary file that is unlinked at once and
 * read back through /proc/self/fd/N, so nothing is left behind however the run ends. Every
 * iteration reads and plans it from scratch (the page cache keeps the file in memory after
 * the first read, as it would for a training job's manifest).
 */
#include "bench_planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ada_util.h"
#include "bench_shim.h"
#include "manifest_gen.h"
#include "planner.h"

typedef struct {
    struct ada_planner_bench *owner;
    int64_t samples;
    plan_policy policy;
    plan_assign assign;
    int fd;         /* the unlinked manifest, -1 until generated */
    char path[64];  /* /proc/self/fd/N */
    char name[96];
} planner_case;

/* The registered cases: their pointers go to the shim and must outlive ada_bench_run. */
struct ada_planner_bench {
    planner_case cases[10];
    int ncases;
    char model_path[4096];
};

/* All cases of one size share one generated file. */
static int shared_fd(const ada_planner_bench *b, int64_t samples)
{
    for (int i = 0; i < b->ncases; i++)
        if (b->cases[i].samples == samples && b->cases[i].fd >= 0) return b->cases[i].fd;
    return -1;
}

static int ensure_manifest(planner_case *c)
{
    if (c->fd >= 0) return 0;
    int fd = shared_fd(c->owner, c->samples);
    if (fd < 0) {
        char tmp[] = "/tmp/adaload_bench_planner_XXXXXX";
        fd = mkstemp(tmp);
        if (fd < 0) return -1;
        unlink(tmp);
        FILE *f = fdopen(dup(fd), "w");
        if (!f) {
            close(fd);
            return -1;
        }
        static char buf[1 << 20];
        setvbuf(f, buf, _IOFBF, sizeof buf);
        int rc = ada_gen_manifest(f, "default", c->samples, 7);
        if (fclose(f) != 0 || rc != 0) {
            close(fd);
            return -1;
        }
    }
    c->fd = fd;
    snprintf(c->path, sizeof c->path, "/proc/self/fd/%d", fd);
    return 0;
}

static void bm_planner(ada_bench_state *st, void *arg)
{
    planner_case *c = arg;
    if (ensure_manifest(c)) {
        ada_bench_skip(st, "cannot generate the manifest in /tmp");
        return;
    }
    plan_model m;
    plan_error err;
    if (plan_model_load(c->owner->model_path, &m, &err)) {
        ada_bench_skip(st, err.msg);
        return;
    }
    plan_config cfg;
    plan_config_default(&cfg);
    cfg.policy = c->policy;
    cfg.assign = c->assign;
    /* lpt/kk keep gradients unsharded: the longest clips of the 14B manifest do not fit */
    cfg.oversize_drop = 1;
    double bytes = 0, secs = 0;
    int64_t iters = 0;
    while (ada_bench_keep_running(st)) {
        double t0 = ada_now_s();
        plan_manifest *mf = NULL;
        plan_result *r = NULL;
        plan_status s = plan_manifest_read(c->path, &m, 0, &mf, &err);
        if (!s) s = plan_build(mf, &m, &cfg, &r, &err);
        double t = ada_now_s() - t0;
        if (s) {
            plan_manifest_free(mf);
            ada_bench_skip(st, err.msg);
            return;
        }
        bytes = (double)(plan_manifest_bytes(mf) + r->peak_bytes);
        plan_result_free(r);
        plan_manifest_free(mf);
        ada_bench_set_iteration_time(st, t);
        secs += t;
        iters++;
    }
    if (iters == 0) return;
    ada_bench_counter(st, "samples", (double)c->samples);
    ada_bench_counter(st, "seconds_per_10M", secs / (double)iters * 1e7 / (double)c->samples);
    ada_bench_counter(st, "bytes_per_sample", bytes / (double)c->samples);
}

int ada_planner_bench_setup(const char *set, const char *model_path, ada_name_match_fn match, void *match_arg,
                            ada_planner_bench **out)
{
    *out = NULL;
    int big = !strcmp(set, "wan") || !strcmp(set, "full");
    if (!big && strcmp(set, "quick")) return 0;
    ada_planner_bench *b = calloc(1, sizeof *b);
    if (!b) return -1;
    *out = b;
    snprintf(b->model_path, sizeof b->model_path, "%s", model_path);
    const int64_t sizes[2] = {100000, 10000000};
    /* equal-token and dual with random assignment (the names of earlier runs), then dual with
     * each cost-aware assignment: cpu/planner/dual-<assign>/samples<N>. */
    const plan_assign assigns[] = {PLAN_ASSIGN_SORTED_WINDOW, PLAN_ASSIGN_LPT, PLAN_ASSIGN_KK};
    for (int s = 0; s < (big ? 2 : 1); s++) {
        for (int p = 0; p < 5; p++) {
            planner_case *c = &b->cases[b->ncases++];
            c->owner = b;
            c->samples = sizes[s];
            c->policy = p ? PLAN_POLICY_DUAL : PLAN_POLICY_EQUAL_TOKEN;
            c->assign = p < 2 ? PLAN_ASSIGN_RANDOM : assigns[p - 2];
            c->fd = -1;
            if (p < 2)
                snprintf(c->name, sizeof c->name, "cpu/planner/%s/samples%lld", plan_policy_name(c->policy),
                         (long long)c->samples);
            else
                snprintf(c->name, sizeof c->name, "cpu/planner/dual-%s/samples%lld", plan_assign_name(c->assign),
                         (long long)c->samples);
            if (match && !match(c->name, match_arg)) {
                b->ncases--;
                continue;
            }
            /* 9 repetitions where cheap (compare's Mann-Whitney test wants >= 9), 5 at 10 M. */
            if (ada_bench_register(c->name, bm_planner, c, s ? 5 : 9)) return -1;
        }
    }
    return b->ncases;
}

void ada_planner_bench_free(ada_planner_bench *b)
{
    if (!b) return;
    for (int i = 0; i < b->ncases; i++) {
        int fd = b->cases[i].fd;
        if (fd < 0) continue;
        for (int j = i; j < b->ncases; j++) /* sizes share one file: close it once */
            if (b->cases[j].fd == fd) b->cases[j].fd = -1;
        close(fd);
    }
    free(b);
}

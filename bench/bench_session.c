/* bench_session.c -- one `adaload bench` run (bench.h): check the configuration, register
 * the CPU, planner and GPU benchmarks, run them into a strict-JSON bench.json. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "ada_plugin.h"
#include "bench.h"
#include "bench_cpu.h"
#include "bench_gpu.h"
#include "bench_planner.h"
#include "bench_shim.h"

struct ada_bench_session {
    const ada_bench_config *c;
    ada_shape shapes[ADA_MAX_SHAPES];
    int64_t nshapes;
    const char *variants[ADA_BENCH_MAX_VARIANTS];
    int64_t nvariants;
    regex_t re;
    int re_on;
    char *run_filter;
    ada_cpu_bench *cpu;
    ada_planner_bench *planner;
    ada_gpu_bench *gpu;
    int gpu_state;
    char gpu_msg[512];
    int64_t registered, skipped;
};

static int match_name(const char *name, void *arg)
{
    ada_bench_session *s = arg;
    return !s->re_on || regexec(&s->re, name, 0, NULL, 0) == 0;
}

/* Set, variants and filter; ADA_BENCH_OK or ADA_BENCH_ERR_ARG with msg. */
static ada_bench_status check_config(ada_bench_session *s, char *msg, size_t n)
{
    const ada_bench_config *c = s->c;
    s->nshapes = ada_shape_set(c->set, s->shapes, ADA_MAX_SHAPES);
    if (s->nshapes < 0) return snprintf(msg, n, "--set %s: unknown set (quick, wan, sweep or models)", c->set), ADA_BENCH_ERR_ARG;
    if (c->nvariants > ADA_BENCH_MAX_VARIANTS) return snprintf(msg, n, "--variant: too many"), ADA_BENCH_ERR_ARG;
    for (int64_t v = 0; v < c->nvariants; v++) {
        if (!ada_gpu_variant_known(c->variants[v]))
            return snprintf(msg, n, "--variant %s: no such kernel variant (adaload verify --list)", c->variants[v]),
                   ADA_BENCH_ERR_ARG;
        s->variants[s->nvariants++] = c->variants[v];
    }
    if (s->nvariants == 0) {
        s->nvariants = ada_gpu_default_variants(s->variants, ADA_BENCH_MAX_VARIANTS);
        /* Loaded plug-ins (ada_plugin.h) are timed beside the built-in variants. */
        for (int i = 0; i < ada_plugin_count() && s->nvariants < ADA_BENCH_MAX_VARIANTS; i++)
            s->variants[s->nvariants++] = ada_plugin_name(i);
    }
    if (c->filter) {
        int e = regcomp(&s->re, c->filter, REG_EXTENDED | REG_NOSUB);
        if (e) {
            char eb[128];
            regerror(e, &s->re, eb, sizeof eb);
            return snprintf(msg, n, "--filter %s: bad regex: %s", c->filter, eb), ADA_BENCH_ERR_ARG;
        }
        s->re_on = 1;
        /* The filter chose the benchmarks at registration, copies included: a kernel
         * benchmark brings the copy ceiling of its bytes along even when the copy's name
         * does not match. The run-time filter (and the peers') must let those through. */
        size_t len = strlen(c->filter) + 16;
        s->run_filter = malloc(len);
        if (!s->run_filter) return snprintf(msg, n, "out of memory"), ADA_BENCH_ERR_NOMEM;
        snprintf(s->run_filter, len, "(%s)|^copy/", c->filter);
    }
    return ADA_BENCH_OK;
}

ada_bench_status ada_bench_session_new(const ada_bench_config *c, ada_bench_session **out, char *msg,
                                       size_t msg_n)
{
    *out = NULL;
    ada_bench_session *s = calloc(1, sizeof *s);
    if (!s) return snprintf(msg, msg_n, "out of memory"), ADA_BENCH_ERR_NOMEM;
    s->c = c;
    s->gpu_state = ADA_GPU_NONE;
    *out = s;
    ada_bench_status st = check_config(s, msg, msg_n);
    if (st != ADA_BENCH_OK) return st;
    /* Register: CPU (reference, planner), then GPU (copy ceilings before variants). */
    int64_t n_cpu = ada_cpu_bench_setup(c->set, match_name, s, c->repetitions, &s->cpu);
    int pl = ada_planner_bench_setup(c->set, c->planner_model, match_name, s, &s->planner);
    if (n_cpu < 0 || pl < 0)
        return snprintf(msg, msg_n, "cannot set up the CPU benchmarks%s", pl < 0 ? " (planner)" : ""),
               ADA_BENCH_ERR_NOMEM;
    s->registered = n_cpu + pl;
    if (c->no_gpu) {
        snprintf(s->gpu_msg, sizeof s->gpu_msg, "off (--no-gpu)");
        ada_note(c->note, c->note_arg, "GPU benchmarks off (--no-gpu)");
        return ADA_BENCH_OK;
    }
    int64_t n_gpu = 0;
    s->gpu_state = ada_gpu_bench_setup(s->shapes, s->nshapes, s->variants, s->nvariants, match_name, s,
                                       c->repetitions, c->note, c->note_arg, &s->gpu, &n_gpu, &s->skipped,
                                       s->gpu_msg, sizeof s->gpu_msg);
    s->registered += n_gpu;
    if (s->gpu_state == ADA_GPU_ERROR)
        return snprintf(msg, msg_n, "GPU set-up failed: %s", s->gpu_msg), ADA_BENCH_ERR_GPU;
    return ADA_BENCH_OK;
}

const ada_shape *ada_bench_session_shapes(const ada_bench_session *s, int64_t *n)
{
    *n = s->nshapes;
    return s->shapes;
}

int ada_bench_session_gpu_on(const ada_bench_session *s, const char **why)
{
    if (why) *why = s->gpu_state == ADA_GPU_OK ? "" : s->gpu_msg;
    return s->gpu_state == ADA_GPU_OK;
}

const char *ada_bench_session_run_filter(const ada_bench_session *s) { return s->run_filter; }

void ada_bench_session_counts(const ada_bench_session *s, int64_t *registered, int64_t *skipped)
{
    *registered = s->registered;
    *skipped = s->skipped;
}

ada_bench_status ada_bench_session_run(ada_bench_session *s, const char *json_path, double min_time_s,
                                       int *ran, char *msg, size_t msg_n)
{
    const ada_bench_config *c = s->c;
    *ran = 0;
    ada_bench_add_context("adaload_set", c->set);
    char buf[64];
    snprintf(buf, sizeof buf, "%d", c->repetitions);
    ada_bench_add_context("adaload_repetitions", buf);
    ada_bench_add_context("adaload_gpu", s->gpu_state == ADA_GPU_OK ? "on" : s->gpu_msg);
    fflush(stdout);
    int r = ada_bench_run(json_path, s->run_filter, min_time_s);
    if (r < 0) return snprintf(msg, msg_n, "the benchmark run failed"), ADA_BENCH_ERR_RUN;
    json_error_t je;
    json_t *j = json_load_file(json_path, 0, &je);
    if (!j) {
        snprintf(msg, msg_n, "%s:%d: Google Benchmark wrote invalid JSON: %s", json_path, je.line, je.text);
        return ADA_BENCH_ERR_RUN;
    }
    json_decref(j);
    *ran = r;
    return ADA_BENCH_OK;
}

void ada_bench_session_free(ada_bench_session *s)
{
    if (!s) return;
    ada_gpu_bench_free(s->gpu);
    ada_cpu_bench_free(s->cpu);
    ada_planner_bench_free(s->planner);
    if (s->re_on) regfree(&s->re);
    free(s->run_filter);
    free(s);
}

char *ada_bench_shapes_text(const char *set)
{
    ada_shape shapes[ADA_MAX_SHAPES];
    int64_t n = ada_shape_set(set, shapes, ADA_MAX_SHAPES);
    if (n < 0) return NULL;
    json_t *js = ada_shapes_json(shapes, n);
    char *s = js ? json_dumps(js, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(js);
    return s;
}

/* run_meta.c -- reading meta.json and the machine fingerprint (run_meta.h). */
#include "run_meta.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static char *dup_or(const char *s, const char *dflt) { return strdup(s && *s ? s : dflt); }

static void put(char *dst, size_t n, const char *s) { snprintf(dst, n, "%s", s ? s : ""); }

/* The fingerprint from meta.json's "fingerprint", else from its sysinfo. */
static void fp_from(const json_t *meta, ada_run_fp *fp)
{
    memset(fp, 0, sizeof *fp);
    const json_t *f = json_object_get(meta, "fingerprint");
    json_t *made = NULL;
    if (!json_is_object(f)) f = made = ada_run_fp_json(json_object_get(meta, "sysinfo"));
    put(fp->gpu, sizeof fp->gpu, jstr(f, "gpu"));
    put(fp->gpu_uuid, sizeof fp->gpu_uuid, jstr(f, "gpu_uuid"));
    put(fp->gpu_serial, sizeof fp->gpu_serial, jstr(f, "gpu_serial"));
    put(fp->driver, sizeof fp->driver, jstr(f, "driver"));
    put(fp->driver_cuda, sizeof fp->driver_cuda, jstr(f, "driver_cuda"));
    put(fp->host, sizeof fp->host, jstr(f, "host"));
    fp->sm_clock_mhz = (long)json_integer_value(json_object_get(f, "sm_clock_mhz"));
    fp->mem_clock_mhz = (long)json_integer_value(json_object_get(f, "mem_clock_mhz"));
    json_t *c = json_object_get(f, "copy_gbps");
    fp->copy_gbps = json_is_number(c) ? json_number_value(c) : 0;
    json_decref(made);
}

json_t *ada_run_fp_json(const json_t *sysinfo)
{
    const json_t *cuda = json_object_get(sysinfo, "cuda");
    const json_t *d = json_array_get(json_object_get(cuda, "devices"), 0);
    json_t *o = json_object();
    if (!o) return NULL;
    const char *keys[][2] = {{"gpu", "name"}, {"gpu_uuid", "uuid"}, {"gpu_serial", "serial"}};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (*jstr(d, keys[i][1])) json_object_set_new(o, keys[i][0], json_string(jstr(d, keys[i][1])));
    if (*jstr(cuda, "driver_version")) json_object_set_new(o, "driver", json_string(jstr(cuda, "driver_version")));
    if (*jstr(cuda, "driver_cuda_version"))
        json_object_set_new(o, "driver_cuda", json_string(jstr(cuda, "driver_cuda_version")));
    json_t *sm = json_object_get(d, "max_sm_clock_mhz"), *mem = json_object_get(d, "max_mem_clock_mhz");
    if (json_is_integer(sm)) json_object_set_new(o, "sm_clock_mhz", json_integer(json_integer_value(sm)));
    if (json_is_integer(mem)) json_object_set_new(o, "mem_clock_mhz", json_integer(json_integer_value(mem)));
    if (*jstr(sysinfo, "host")) json_object_set_new(o, "host", json_string(jstr(sysinfo, "host")));
    return o;
}

/* m->plugins and m->plugin_hashes from meta.json's "plugins" array (NULL: none). */
static void plugins_from(const json_t *a, ada_run_meta *m)
{
    char text[2048] = "", hashes[640] = "";
    size_t i, j;
    const json_t *p, *v;
    json_array_foreach(a, i, p) {
        size_t l = strlen(text), h = strlen(hashes);
        snprintf(text + l, sizeof text - l, "%s%s (sha256 %s:", i ? "; " : "", jstr(p, "path"), jstr(p, "file_sha256"));
        snprintf(hashes + h, sizeof hashes - h, "%s%s", i ? "," : "", jstr(p, "file_sha256"));
        json_array_foreach(json_object_get(p, "variants"), j, v) {
            l = strlen(text);
            snprintf(text + l, sizeof text - l, "%s %s", j ? "," : "", json_string_value(v) ? json_string_value(v) : "?");
        }
        l = strlen(text);
        snprintf(text + l, sizeof text - l, ")");
    }
    m->plugins = strdup(text);
    m->plugin_hashes = strdup(hashes);
}

/* The build options that change kernels, as one string (ada_run_same_code compares them): ""
 * when the run records none; the compile flags a user added ("c_flags", "cuda_flags": an
 * explore build's -D switches) are part of it, absent ones read as none. NULL when out of
 * memory. */
static char *build_of(const json_t *b)
{
    if (!json_is_object(b)) return strdup("");
    const char *fmt = "slow_variant %d, sanitized %d, %s, sm %s, nvcc %s, c flags [%s], cuda flags [%s]";
    const int slow = json_is_true(json_object_get(b, "slow_variant_build")),
              san = json_is_true(json_object_get(b, "sanitized"));
    const int n = snprintf(NULL, 0, fmt, slow, san, jstr(b, "build_type"), jstr(b, "cuda_architectures"),
                           jstr(b, "nvcc_version"), jstr(b, "c_flags"), jstr(b, "cuda_flags"));
    char *s = n < 0 ? NULL : malloc((size_t)n + 1);
    if (s)
        snprintf(s, (size_t)n + 1, fmt, slow, san, jstr(b, "build_type"), jstr(b, "cuda_architectures"),
                 jstr(b, "nvcc_version"), jstr(b, "c_flags"), jstr(b, "cuda_flags"));
    return s;
}

int ada_run_meta_from_json(const json_t *o, ada_run_meta *m)
{
    memset(m, 0, sizeof *m);
    m->git_sha = dup_or(jstr(o, "git_sha"), "unknown");
    json_t *d = json_object_get(o, "git_dirty");
    m->git_dirty = json_is_boolean(d) ? json_is_true(d) : -1;
    m->kernel_hash_v1 = dup_or(*jstr(o, "kernel_hash_v1") ? jstr(o, "kernel_hash_v1") : jstr(o, "kernel_source_hash"), "");
    m->kernel_hash_v2 =
        dup_or(*jstr(o, "kernel_hash_v2") ? jstr(o, "kernel_hash_v2") : jstr(o, "kernel_source_hash_v2"), "");
    m->command_line = dup_or(jstr(o, "command_line"), "");
    m->testbed = dup_or(jstr(o, "testbed"), "");
    m->kind = dup_or(jstr(o, "kind"), "");
    m->build = build_of(json_object_get(json_object_get(o, "sysinfo"), "build"));
    plugins_from(json_object_get(o, "plugins"), m);
    fp_from(o, &m->fp);
    if (!m->git_sha || !m->kernel_hash_v1 || !m->kernel_hash_v2 || !m->command_line || !m->testbed || !m->kind ||
        !m->build || !m->plugins || !m->plugin_hashes) {
        ada_run_meta_free(m);
        return ADA_RUNS_ENOMEM;
    }
    return ADA_RUNS_OK;
}

int ada_run_meta_load(const char *path, ada_run_meta *m, char *err, size_t en)
{
    memset(m, 0, sizeof *m);
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!json_is_object(o)) {
        snprintf(err, en, "%s: %s", path, o ? "not a JSON object" : je.text);
        json_decref(o);
        return ADA_RUNS_EINPUT;
    }
    int rc = ada_run_meta_from_json(o, m);
    json_decref(o);
    if (rc) snprintf(err, en, "%s: out of memory", path);
    return rc;
}

void ada_run_meta_free(ada_run_meta *m)
{
    free(m->plugins);
    free(m->plugin_hashes);
    free(m->git_sha);
    free(m->kernel_hash_v1);
    free(m->kernel_hash_v2);
    free(m->command_line);
    free(m->testbed);
    free(m->kind);
    free(m->build);
    memset(m, 0, sizeof *m);
}

void ada_run_fp_copy(ada_run_fp *fp, const ada_bench_set *s)
{
    long long best = -1;
    for (int64_t i = 0; i < s->n; i++) {
        const ada_bench_rec *r = &s->r[i];
        long long bytes = 0;
        char tail = 0;
        if (r->error || !r->has_bps || r->n == 0 || sscanf(r->name, "copy/bytes%lld%c", &bytes, &tail) < 1 || bytes <= best)
            continue;
        if (tail && tail != '/') continue;
        best = bytes;
        fp->copy_gbps = ada_median(r->bps, r->n) * 1e-9;
    }
}

/* Differs when both record the fact and it differs. */
static int both_differ(const char *a, const char *b) { return *a && *b && strcmp(a, b); }

int ada_run_fp_differs(const ada_run_fp *a, const ada_run_fp *b, char *why, size_t n)
{
    const char *what[] = {"GPU UUID", "GPU serial", "GPU", "driver", "CUDA driver API"};
    const char *x[] = {a->gpu_uuid, a->gpu_serial, a->gpu, a->driver, a->driver_cuda};
    const char *y[] = {b->gpu_uuid, b->gpu_serial, b->gpu, b->driver, b->driver_cuda};
    for (size_t i = 0; i < sizeof what / sizeof *what; i++)
        if (both_differ(x[i], y[i])) return snprintf(why, n, "%s %s -> %s", what[i], x[i], y[i]), 1;
    if (a->sm_clock_mhz && b->sm_clock_mhz && a->sm_clock_mhz != b->sm_clock_mhz)
        return snprintf(why, n, "SM clock %ld -> %ld MHz", a->sm_clock_mhz, b->sm_clock_mhz), 1;
    if (a->mem_clock_mhz && b->mem_clock_mhz && a->mem_clock_mhz != b->mem_clock_mhz)
        return snprintf(why, n, "memory clock %ld -> %ld MHz", a->mem_clock_mhz, b->mem_clock_mhz), 1;
    if (a->copy_gbps > 0 && b->copy_gbps > 0 && fabs(b->copy_gbps / a->copy_gbps - 1) > ADA_FP_COPY_TOL)
        return snprintf(why, n, "copy bandwidth %.0f -> %.0f GB/s", a->copy_gbps, b->copy_gbps), 1;
    snprintf(why, n, "same machine as far as both runs record");
    return 0;
}

int ada_run_same_code(const ada_run_meta *a, const ada_run_meta *b)
{
    int v2 = *a->kernel_hash_v2 && *b->kernel_hash_v2;
    const char *x = v2 ? a->kernel_hash_v2 : a->kernel_hash_v1, *y = v2 ? b->kernel_hash_v2 : b->kernel_hash_v1;
    if (!*x || strcmp(x, y)) return 0;
    /* A plug-in is code of the run too: other libraries (by file hash) are other code. */
    if (strcmp(a->plugin_hashes ? a->plugin_hashes : "", b->plugin_hashes ? b->plugin_hashes : "")) return 0;
    return !*a->build || !*b->build || !strcmp(a->build, b->build);
}

/* test_helpers.h -- what the planner's Criterion test files share: loading presets, temporary
 * manifests, reading and building with assertions. Test-only. */
#ifndef ADALOAD_TEST_HELPERS_H
#define ADALOAD_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest_gen.h"
#include "planner.h"

#define GIB 1073741824.0

static inline plan_model load_model(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/datasets/models/%s.json", PLAN_SOURCE_DIR, name);
    plan_model m;
    plan_error err;
    plan_status st = plan_model_load(path, &m, &err);
    cr_assert_eq(st, PLAN_OK, "%s: %s", path, err.msg);
    return m;
}

/* A temporary file holding `text`; the caller unlinks it. */
static inline char *tmp_file(const char *text)
{
    char *path = strdup("/tmp/adaload_test_planner_XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static inline char *tmp_generated(const char *kind, int64_t rows, uint64_t seed)
{
    char *path = tmp_file("");
    FILE *f = fopen(path, "w");
    cr_assert(f);
    cr_assert_eq(ada_gen_manifest(f, kind, rows, seed), 0);
    fclose(f);
    return path;
}

static inline plan_manifest *read_manifest(const char *path, const plan_model *m, int keep_ids)
{
    plan_manifest *mf = NULL;
    plan_error err;
    plan_status st = plan_manifest_read(path, m, keep_ids, &mf, &err);
    cr_assert_eq(st, PLAN_OK, "%s", err.msg);
    return mf;
}

static inline plan_result *build(const plan_manifest *mf, const plan_model *m, const plan_config *c)
{
    plan_result *r = NULL;
    plan_error err;
    plan_status st = plan_build(mf, m, c, &r, &err);
    cr_assert_eq(st, PLAN_OK, "%s", err.msg);
    return r;
}

static inline const plan_bucket *bucket_with(const plan_result *r, int64_t tokens)
{
    for (int64_t b = 0; b < r->nbuckets; b++)
        if (r->buckets[b].shape.tokens == tokens) return &r->buckets[b];
    cr_assert_fail("no bucket of %lld tokens", (long long)tokens);
    return NULL;
}

/* Every planned sample in exactly one micro-batch, every micro-batch on exactly one rank of
 * one step, micro-batches within one bucket and at most B samples (test_planner.c). */
void check_plan(const plan_result *r, const plan_manifest *mf);

#endif

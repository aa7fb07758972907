/* fuzz_catalog.c -- libFuzzer target: the catalog's readers of index.jsonl and meta.json on
 * arbitrary bytes. The input is split at its first 0x00 byte: the part before is written as
 * results/index.jsonl, the part after as the meta.json of one bench run folder (beside a
 * valid bench.json and a second, valid run); then `results check` (cat_check: the index
 * against the tree), the strict and the lenient scan, the index lines of what was scanned and
 * the filters run over it. Seeds: corpus/catalog/ (a committed index line and meta.json; a
 * 4,400-character path, which read past a stack buffer before). */
#include "fuzz_util.h"

#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "catalog.h"

static const char bench[] = "{\"context\": {\"adaload_set\": \"wan\"}, \"benchmarks\": [{\"name\": "
                            "\"lnmod_fwd/dtile/f32-f32-f32/sample/D8/rows8\", \"run_name\": "
                            "\"lnmod_fwd/dtile/f32-f32-f32/sample/D8/rows8\", \"run_type\": \"iteration\", "
                            "\"real_time\": 1.5, \"time_unit\": \"us\"}]}\n";
static const char meta[] = "{\"git_sha\": \"aaaaaaa\", \"git_dirty\": false, \"kernel_hash_v1\": \"k\", "
                           "\"command_line\": \"adaload bench\"}\n";

static char root[128], run1[256], run2[256];

static void setup(void)
{
    if (root[0]) return;
    snprintf(root, sizeof root, "%s/results", fuzz_scratch());
    snprintf(run1, sizeof run1, "%s/tb/bench/2026-01-01T000000Z_aaaaaaa", root);
    snprintf(run2, sizeof run2, "%s/tb/bench/2026-01-02T000000Z_bbbbbbb", root);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s'", run1, run2);
    if (system(cmd) != 0) abort();
    char p[300];
    snprintf(p, sizeof p, "%s/bench.json", run1);
    fuzz_put(p, bench, sizeof bench - 1);
    snprintf(p, sizeof p, "%s/bench.json", run2);
    fuzz_put(p, bench, sizeof bench - 1);
    snprintf(p, sizeof p, "%s/meta.json", run2);
    fuzz_put(p, meta, sizeof meta - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    const uint8_t *z = memchr(data, 0, size);
    size_t ni = z ? (size_t)(z - data) : size;
    char p[300], err[1024];
    snprintf(p, sizeof p, "%s/index.jsonl", root);
    fuzz_put(p, data, ni);
    snprintf(p, sizeof p, "%s/meta.json", run1);
    if (z) fuzz_put(p, z + 1, size - ni - 1);
    else fuzz_put(p, meta, sizeof meta - 1);

    char *report = NULL;
    cat_status s = cat_check(root, &report, err, sizeof err);
    if (s == CAT_OK && report && *report) abort(); /* agreeing trees say nothing */
    free(report);
    json_t *lines = NULL;
    if (cat_read_index(root, &lines, err, sizeof err) == CAT_OK) json_decref(lines);

    cat_catalog c;
    if (cat_scan(root, &c, err, sizeof err) == CAT_OK) cat_free(&c);
    json_t *bad = json_array();
    if (cat_scan_lenient(root, &c, bad, err, sizeof err) == CAT_OK) {
        if (c.n + (int64_t)json_array_size(bad) != 2) abort(); /* every run is listed or named bad */
        cat_filter f = {.since = "2026-01-02", .sha = "a"};
        for (int64_t i = 0; i < c.n; i++) {
            free(cat_run_line(&c.run[i]));
            (void)cat_match(&c.run[i], &f);
        }
        cat_free(&c);
    }
    json_decref(bad);
    return 0;
}

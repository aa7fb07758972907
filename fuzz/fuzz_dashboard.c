/* fuzz_dashboard.c -- libFuzzer target: the dashboard builder (dash_collect, then
 * dash_write_site) over a small results tree in which one file is the input: the first byte
 * picks which -- the bench.json of the newer of two wan runs, its meta.json, a verification
 * record (verify.json), or a planner run's bench.json -- the rest are valid. A tree whose
 * file is bad is either refused (an error, nothing written) or built with that run shown as
 * a bad run; either way nothing crashes or leaks. Seeds: corpus/dashboard/. */
#include "fuzz_util.h"

#include <string.h>

#include <jansson.h>

#include "dashboard.h"

static char root[128], site[128];

static void run_files(const char *dir, const char *sha, double us)
{
    char cmd[400], p[300], text[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) abort();
    snprintf(p, sizeof p, "%s/meta.json", dir);
    snprintf(text, sizeof text, "{\"git_sha\": \"%s\", \"git_dirty\": false, \"kernel_hash_v1\": \"k\", "
                                "\"command_line\": \"adaload bench\"}\n", sha);
    fuzz_put(p, text, strlen(text));
    size_t n = (size_t)snprintf(text, sizeof text, "{\"context\": {\"adaload_set\": \"wan\"}, \"benchmarks\": [");
    for (int k = 0; k < 3; k++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%s{\"name\": \"lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760\", \"run_name\": "
                              "\"lnmod_fwd/dtile/bf16-f32-bf16/sample/D1536/rows32760\", \"run_type\": \"iteration\", "
                              "\"repetitions\": 3, \"repetition_index\": %d, \"real_time\": %.2f, \"time_unit\": "
                              "\"us\", \"pct_copy_bw\": 80}",
                              k ? "," : "", k, us + k * 0.1);
    snprintf(text + n, sizeof text - n, "]}\n");
    snprintf(p, sizeof p, "%s/bench.json", dir);
    fuzz_put(p, text, strlen(text));
}

static const char *targets[4];
static char paths[4][300];
static const char verify_rec[] =
    "{\"schema\": \"adaload.verify/1\", \"kernel_hash_v2\": \"k2\", \"backend\": \"cuda\", \"grid\": \"full\", "
    "\"cases\": [{\"variant\": \"dtile\", \"x\": \"f32\", \"mod\": \"f32\", \"y\": \"f32\", \"layout\": "
    "\"sample\", \"D\": 1, \"rows\": 1, \"pass\": true}], \"summary\": {\"cases\": 1, \"passed\": 1}, "
    "\"all_passed\": true, \"sanitizers\": {\"memcheck\": \"clean\", \"racecheck\": \"clean\", "
    "\"initcheck\": \"clean\", \"synccheck\": \"clean\"}}\n";

static void setup(void)
{
    if (root[0]) return;
    snprintf(root, sizeof root, "%s/results", fuzz_scratch());
    snprintf(site, sizeof site, "%s/site", fuzz_scratch());
    char d[300];
    snprintf(d, sizeof d, "%s/gpu/bench/2026-01-01T000000Z_aaaaaaa", root);
    run_files(d, "aaaaaaa", 55.0);
    snprintf(d, sizeof d, "%s/gpu/bench/2026-01-02T000000Z_bbbbbbb", root);
    run_files(d, "bbbbbbb", 56.0);
    snprintf(paths[0], sizeof paths[0], "%s/bench.json", d);
    snprintf(paths[1], sizeof paths[1], "%s/meta.json", d);
    snprintf(d, sizeof d, "%s/gpu/verify/2026-01-01T000000Z_aaaaaaa", root);
    run_files(d, "aaaaaaa", 1.0);
    snprintf(paths[2], sizeof paths[2], "%s/verify.json", d);
    snprintf(d, sizeof d, "%s/gpu/planner/2026-01-03T000000Z_ccccccc", root);
    run_files(d, "ccccccc", 14000.0);
    snprintf(paths[3], sizeof paths[3], "%s/bench.json", d);
    for (int i = 0; i < 4; i++) targets[i] = paths[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    setup();
    int which = data[0] % 4;
    /* Put every file back as it was, then the input into the chosen one. */
    char d[300];
    snprintf(d, sizeof d, "%s/gpu/bench/2026-01-02T000000Z_bbbbbbb", root);
    run_files(d, "bbbbbbb", 56.0);
    snprintf(d, sizeof d, "%s/gpu/planner/2026-01-03T000000Z_ccccccc", root);
    run_files(d, "ccccccc", 14000.0);
    fuzz_put(targets[2], verify_rec, sizeof verify_rec - 1);
    fuzz_put(targets[which], data + 1, size - 1);

    dash_opts o = {.hash_v1 = "k"};
    json_t *js = NULL;
    char err[1024];
    if (dash_collect(root, &o, &js, err, sizeof err) == DASH_OK) {
        if (!json_is_array(json_object_get(js, "testbeds"))) abort();
        (void)dash_write_site(site, js, err, sizeof err);
        json_decref(js);
    } else if (js) {
        abort(); /* a refused tree hands back no data */
    }
    return 0;
}

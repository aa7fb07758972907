/* fuzz_runs.c -- libFuzzer target: the run-folder JSON loaders, on arbitrary bytes: the
 * first byte picks the reader of `report` and `compare` (ada_bench_load_file: Google
 * Benchmark JSON, loaded twice into one set as bench.json + peers.json are, then looked up
 * and turned into the custom files) or the gate's (json_loadb + gate_judge of a verify.json
 * or verify-summary.json, and of gate_summary's compact form of it; the same object read as
 * a meta.json, its fingerprint held against itself). A loaded set's names go through the
 * benchmark-name parser and the set is compared with itself (run_compare.h: nothing may be
 * slower than itself). Seeds: corpus/runs/ (a bench.json, a peers.json and a verify.json,
 * shrunk; a bench.json with names of several samples (/B<B>); a meta.json and a record with
 * "plugins", one entry malformed). */
#include "fuzz_util.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "run_bench.h"
#include "run_compare.h"
#include "run_meta.h"
#include "run_name.h"

static const gate_hashes hashes = {.v1 = "2dbd392c11648333a4bd429980a5bf75b54d339a3a55ba6ad9d8afde500ec48c",
                                   .v2 = "ea5f7d805b706d4aa6e91ee5d2210065392b26dbb26306e301aec0911ab3e134"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1) {
        json_error_t je;
        json_t *rec = json_loadb((const char *)data + 1, size - 1, 0, &je);
        if (rec) {
            gate_verdict v;
            char msg[512];
            (void)gate_judge(rec, &hashes, &v, msg, sizeof msg);
            json_t *compact = gate_summary(rec); /* the compact record of a full one */
            if (compact) {
                (void)gate_judge(compact, &hashes, &v, msg, sizeof msg);
                json_decref(compact);
            }
            ada_run_meta m;
            if (ada_run_meta_from_json(rec, &m) == ADA_RUNS_OK) {
                char why[256];
                if (ada_run_fp_differs(&m.fp, &m.fp, why, sizeof why)) abort(); /* a run's machine is its own */
                if ((*m.kernel_hash_v1 || *m.kernel_hash_v2) && !ada_run_same_code(&m, &m)) abort();
                ada_run_meta_free(&m);
            }
            json_decref(rec);
        }
        return 0;
    }
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    ada_bench_set s = {0};
    char err[512];
    if (ada_bench_load_file(path, &s, err, sizeof err) == ADA_RUNS_OK &&
        ada_bench_load_file(path, &s, err, sizeof err) == ADA_RUNS_OK) {
        for (int64_t i = 0; i < s.n; i++)
            if (ada_bench_find(&s, s.r[i].name) != &s.r[i]) abort();
        for (int64_t i = 0; i < s.n; i++) {
            ada_bench_name b;
            if (ada_bench_name_parse(s.r[i].name, &b) == 0 && strcmp(s.r[i].name + strlen(s.r[i].name) - strlen(b.shape), b.shape))
                abort();
        }
        ada_cmp_opts co = {0};
        ada_cmp c;
        if (ada_compare_runs(&s, &s, NULL, NULL, &co, &c, err, sizeof err) == 0 && c.slower) abort();
        ada_cmp_free(&c);
        json_t *a = NULL, *b = NULL;
        if (ada_bench_custom_json(&s, &a, &b) == 0) {
            json_decref(a);
            json_decref(b);
        }
    }
    ada_bench_set_free(&s);
    close(fd);
    return 0;
}

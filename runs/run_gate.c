/* run_gate.c -- judging verification records for the gate (run_gate.h). */
#include "run_gate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const tools[4] = {"memcheck", "racecheck", "initcheck", "synccheck"};

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A string field, or "?" when absent or not a string (never NULL into a format). */
static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "?";
}

/* Checks the fields every record must have; ADA_GATE_JUDGED when they are there. */
static ada_gate_verdict well_formed(const json_t *rec, char *msg, size_t n)
{
    if (!json_is_object(rec)) return snprintf(msg, n, "not a JSON object"), ADA_GATE_MALFORMED;
    const char *schema = json_string_value(json_object_get(rec, "schema"));
    if (!schema || strcmp(schema, "adaload.verify/1") != 0)
        return snprintf(msg, n, "schema is not \"adaload.verify/1\""), ADA_GATE_MALFORMED;
    if (!json_string_value(json_object_get(rec, "kernel_source_hash")))
        return snprintf(msg, n, "no kernel_source_hash string"), ADA_GATE_MALFORMED;
    json_t *cases = json_object_get(rec, "cases");
    if (!json_is_array(cases)) return snprintf(msg, n, "no cases array"), ADA_GATE_MALFORMED;
    if (!json_is_object(json_object_get(rec, "sanitizers"))) return snprintf(msg, n, "no sanitizers object"), ADA_GATE_MALFORMED;
    if (!json_is_boolean(json_object_get(rec, "all_passed"))) return snprintf(msg, n, "no all_passed boolean"), ADA_GATE_MALFORMED;
    if (!json_string_value(json_object_get(rec, "grid")) || !json_string_value(json_object_get(rec, "backend")))
        return snprintf(msg, n, "no grid or backend string"), ADA_GATE_MALFORMED;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (!json_is_boolean(json_object_get(c, "pass")))
            return snprintf(msg, n, "case %zu has no pass boolean", i), ADA_GATE_MALFORMED;
    }
    return ADA_GATE_JUDGED;
}

ada_gate_verdict ada_gate_judge(const json_t *rec, const char *hash, int *pass, char *msg, size_t n)
{
    *pass = 0;
    msg[0] = '\0';
    if (well_formed(rec, msg, n) != ADA_GATE_JUDGED) return ADA_GATE_MALFORMED;
    if (strcmp(str_of(rec, "kernel_source_hash"), hash) != 0) return ADA_GATE_OTHER_HASH;
    const char *backend = str_of(rec, "backend"), *grid = str_of(rec, "grid");
    json_t *cases = json_object_get(rec, "cases"), *san = json_object_get(rec, "sanitizers");
    if (strcmp(backend, "cuda") != 0) return snprintf(msg, n, "backend is \"%s\", not a GPU run", backend), ADA_GATE_JUDGED;
    if (strcmp(grid, "full") != 0) return snprintf(msg, n, "grid is \"%s\", the gate needs \"full\"", grid), ADA_GATE_JUDGED;
    if (json_array_size(cases) == 0) return snprintf(msg, n, "no cases"), ADA_GATE_JUDGED;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (!json_is_true(json_object_get(c, "pass"))) {
            const char *nr = json_string_value(json_object_get(c, "not_run"));
            snprintf(msg, n, "case %zu (%s %s-%s-%s %s D=%lld rows=%lld) %s", i, str_of(c, "variant"), str_of(c, "x"),
                     str_of(c, "mod"), str_of(c, "y"), str_of(c, "layout"),
                     (long long)json_integer_value(json_object_get(c, "D")),
                     (long long)json_integer_value(json_object_get(c, "rows")), nr ? nr : "failed");
            return ADA_GATE_JUDGED;
        }
    }
    if (!json_is_true(json_object_get(rec, "all_passed"))) return snprintf(msg, n, "all_passed is false"), ADA_GATE_JUDGED;
    for (int t = 0; t < 4; t++) {
        const char *v = json_string_value(json_object_get(san, tools[t]));
        if (!v || strcmp(v, "clean") != 0) {
            snprintf(msg, n, "sanitizer %s is \"%s\", not \"clean\"", tools[t], v ? v : "missing");
            return ADA_GATE_JUDGED;
        }
    }
    *pass = 1;
    return ADA_GATE_JUDGED;
}

/* One record file. */
static void scan_record(const char *path, const char *hash, ada_note_fn note, void *arg, ada_gate_result *r)
{
    r->nrec++;
    json_error_t jerr;
    json_t *rec = json_load_file(path, 0, &jerr);
    if (!rec) {
        ada_note(note, arg, "%s: malformed record: %s (line %d)", path, jerr.text, jerr.line);
        r->malformed++;
        return;
    }
    char msg[512];
    int pass = 0;
    ada_gate_verdict v = ada_gate_judge(rec, hash, &pass, msg, sizeof msg);
    json_decref(rec);
    if (v == ADA_GATE_MALFORMED) {
        ada_note(note, arg, "%s: malformed record: %s", path, msg);
        r->malformed++;
    } else if (v == ADA_GATE_JUDGED) {
        r->nmatch++;
        if (pass) {
            r->passed++;
            if (!r->pass_path[0]) snprintf(r->pass_path, sizeof r->pass_path, "%s", path);
        } else {
            ada_note(note, arg, "%s: same kernel sources, not counted: %s", path, msg);
        }
    }
}

static void scan_testbed(const char *tbdir, const char *hash, ada_note_fn note, void *arg, ada_gate_result *r)
{
    struct dirent **runs = NULL;
    int nrun = scandir(tbdir, &runs, NULL, alphasort);
    for (int b = 0; b < nrun; b++) {
        char path[8600];
        struct stat st;
        snprintf(path, sizeof path, "%.4400s/%.200s/verify.json", tbdir, runs[b]->d_name);
        if (runs[b]->d_name[0] != '.' && stat(path, &st) == 0) scan_record(path, hash, note, arg, r);
        free(runs[b]);
    }
    free(runs);
}

void ada_gate_scan(const char *results, const char *hash, ada_note_fn note, void *arg, ada_gate_result *r)
{
    memset(r, 0, sizeof *r);
    if (!is_dir(results)) return;
    struct dirent **tbs = NULL;
    int ntb = scandir(results, &tbs, NULL, alphasort);
    for (int a = 0; a < ntb; a++) {
        char tbdir[4400];
        snprintf(tbdir, sizeof tbdir, "%.4000s/%.255s", results, tbs[a]->d_name);
        if (tbs[a]->d_name[0] != '.' && is_dir(tbdir)) scan_testbed(tbdir, hash, note, arg, r);
        free(tbs[a]);
    }
    free(tbs);
}

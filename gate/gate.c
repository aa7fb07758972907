/* gate.c -- judging verification records (full and compact), making the compact one, and
 * scanning results/ for the gate (see gate.h).
 */
#include "gate.h"

#include "ada_util.h"
#include "verify.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "verify_tools.h"

#define tools verify_sanitizer_tools /* the list's owner is verify/ */

static gate_status bad(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return GATE_MALFORMED;
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *or_q(const char *s) { return s ? s : "?"; }

/* The hash a record names must equal the tree's hash of the record's scheme. */
static gate_status which_sources(const json_t *rec, const gate_hashes *h, int *mine, json_int_t *scheme,
                                 char *msg, size_t n)
{
    /* kernel_hash_v2 (scheme 2) in records since the names were unified; before,
     * kernel_source_hash with hash_scheme 2, or 1 when absent. */
    const char *v2 = str(rec, "kernel_hash_v2"), *hash = v2 ? v2 : str(rec, "kernel_source_hash");
    if (!hash) return bad(msg, n, "no kernel_hash_v2 (or kernel_source_hash) string");
    json_t *sch = v2 ? NULL : json_object_get(rec, "hash_scheme");
    *scheme = v2 ? 2 : 1;
    if (sch) {
        if (!json_is_integer(sch) || (json_integer_value(sch) != 1 && json_integer_value(sch) != 2))
            return bad(msg, n, "hash_scheme is neither 1 nor 2");
        *scheme = json_integer_value(sch);
    }
    const char *want = *scheme == 2 ? h->v2 : h->v1;
    *mine = want && !strcmp(hash, want);
    return GATE_OK;
}

/* Full records: every case has a pass boolean; the first failed one is named. */
static gate_status judge_cases(const json_t *cases, int *ok, char *msg, size_t n)
{
    size_t i;
    json_t *c;
    *ok = 1;
    json_array_foreach(cases, i, c) {
        if (!json_is_boolean(json_object_get(c, "pass"))) return bad(msg, n, "case %zu has no pass boolean", i);
    }
    json_array_foreach(cases, i, c) {
        if (json_is_true(json_object_get(c, "pass"))) continue;
        const char *nr = str(c, "not_run");
        snprintf(msg, n, "case %zu (%s %s-%s-%s %s D=%lld rows=%lld) %s", i, or_q(str(c, "variant")),
                 or_q(str(c, "x")), or_q(str(c, "mod")), or_q(str(c, "y")), or_q(str(c, "layout")),
                 (long long)json_integer_value(json_object_get(c, "D")),
                 (long long)json_integer_value(json_object_get(c, "rows")), nr ? nr : "failed");
        *ok = 0;
        return GATE_OK;
    }
    if (json_array_size(cases) == 0) {
        snprintf(msg, n, "no cases");
        *ok = 0;
    }
    return GATE_OK;
}

/* Compact records: groups add up to the summary, every group passed, no failures. */
static gate_status judge_groups(const json_t *rec, int *ok, char *msg, size_t n)
{
    json_t *groups = json_object_get(rec, "groups");
    json_t *fails = json_object_get(rec, "failures");
    json_t *sum = json_object_get(rec, "summary");
    if (!json_is_array(groups)) return bad(msg, n, "no groups array");
    if (!json_is_array(fails)) return bad(msg, n, "no failures array");
    if (!json_is_integer(json_object_get(sum, "cases"))) return bad(msg, n, "no summary.cases integer");
    json_int_t total = 0;
    size_t i;
    json_t *g;
    *ok = 1;
    json_array_foreach(groups, i, g) {
        json_t *c = json_object_get(g, "cases"), *p = json_object_get(g, "passed");
        if (!json_is_integer(c) || !json_is_integer(p))
            return bad(msg, n, "group %zu has no cases and passed integers", i);
        total += json_integer_value(c);
        if (*ok && json_integer_value(p) != json_integer_value(c)) {
            snprintf(msg, n, "group %zu (%s %s %s %s): %lld of %lld cases passed", i,
                     or_q(str(g, "variant")), or_q(str(g, "dtypes")), or_q(str(g, "layout")),
                     or_q(str(g, "direction")), (long long)json_integer_value(p),
                     (long long)json_integer_value(c));
            *ok = 0;
        }
    }
    if (total != json_integer_value(json_object_get(sum, "cases")))
        return bad(msg, n, "groups hold %lld cases, summary.cases says %lld", (long long)total,
                   (long long)json_integer_value(json_object_get(sum, "cases")));
    if (*ok && total == 0) {
        snprintf(msg, n, "no cases");
        *ok = 0;
    }
    if (*ok && json_array_size(fails) > 0) {
        snprintf(msg, n, "%zu failed case(s) listed", json_array_size(fails));
        *ok = 0;
    }
    return GATE_OK;
}

/* ---- content: the record's cases are exactly the grid's ------------------------------- */

enum { KEYLEN = 128 };

static int key_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The record's case keys (verify_case_key), sorted, in one allocation. 0; 1 with why in msg
 * (a case without an identity); -1 out of memory. */
static int record_keys(const json_t *rec, int compact, char ***keys, int64_t *nk, char *msg, size_t n)
{
    int64_t total = 0;
    size_t i, j;
    json_t *g, *sh;
    json_t *cases = json_object_get(rec, "cases"), *groups = json_object_get(rec, "groups");
    if (compact) {
        json_array_foreach(groups, i, g) total += (int64_t)json_array_size(json_object_get(g, "shapes"));
    } else {
        total = (int64_t)json_array_size(cases);
    }
    char **k = malloc((size_t)(total + 1) * (sizeof *k + KEYLEN));
    if (!k) return -1;
    char *text = (char *)(k + total + 1);
    int64_t m = 0;
    if (compact) {
        json_array_foreach(groups, i, g) {
            json_t *shapes = json_object_get(g, "shapes");
            if (!json_is_array(shapes) || (json_int_t)json_array_size(shapes) != json_integer_value(json_object_get(g, "cases"))) {
                snprintf(msg, n, "group %zu (%s %s %s) does not list the shapes of its %lld cases", i,
                         or_q(str(g, "variant")), or_q(str(g, "dtypes")), or_q(str(g, "layout")),
                         (long long)json_integer_value(json_object_get(g, "cases")));
                free(k);
                return 1;
            }
            json_array_foreach(shapes, j, sh) {
                k[m] = text + m * KEYLEN;
                json_t *D = json_array_get(sh, 0), *R = json_array_get(sh, 1);
                if (!json_is_integer(D) || !json_is_integer(R) ||
                    verify_case_key(str(g, "variant"), str(g, "dtypes"), str(g, "layout"),
                                    str(g, "direction") ? str(g, "direction") : "fwd", json_integer_value(D),
                                    json_integer_value(R), k[m], KEYLEN)) {
                    snprintf(msg, n, "group %zu shape %zu is not a case identity", i, j);
                    free(k);
                    return 1;
                }
                m++;
            }
        }
    } else {
        json_array_foreach(cases, i, g) {
            k[m] = text + m * KEYLEN;
            if (verify_case_key_json(g, k[m], KEYLEN)) {
                snprintf(msg, n, "case %zu has no identity (variant, x, mod, y, layout, D, rows)", i);
                free(k);
                return 1;
            }
            m++;
        }
    }
    qsort(k, (size_t)m, sizeof *k, key_cmp);
    *keys = k;
    *nk = m;
    return 0;
}

/* The record's keys against the grid's: 1 when equal as multisets, else 0 with the counts
 * and the first missing and unexpected case in msg. */
static int same_cases(char **got, int64_t ng, char **want, int64_t nw, const char *grid, char *msg, size_t n)
{
    int64_t a = 0, b = 0, missing = 0, extra = 0;
    const char *first_missing = NULL, *first_extra = NULL;
    while (a < ng || b < nw) {
        int c = a >= ng ? 1 : b >= nw ? -1 : strcmp(got[a], want[b]);
        if (c == 0) {
            a++, b++;
        } else if (c < 0) {
            if (!extra++) first_extra = got[a];
            a++;
        } else {
            if (!missing++) first_missing = want[b];
            b++;
        }
    }
    if (!missing && !extra) return 1;
    snprintf(msg, n,
             "its %lld cases are not the %lld cases of grid %s for the registry's variants: %lld missing%s%s%s, "
             "%lld unexpected or repeated%s%s%s",
             (long long)ng, (long long)nw, grid, (long long)missing, first_missing ? " (first: " : "",
             first_missing ? first_missing : "", first_missing ? ")" : "", (long long)extra,
             first_extra ? " (first: " : "", first_extra ? first_extra : "", first_extra ? ")" : "");
    return 0;
}

/* Every sanitizer verdict clean; and, for records that say what their sanitizer runs
 * checked (all scheme-2 records), each ran over verify's sanitizer grid for the registry's
 * variants: that grid, those variants, that many cases, exit code 0. Records of scheme 1
 * were made before runs said so; then verify always ran them over the quick grid, and their
 * verdicts are taken as they are. 1 when they pass, else 0 with why in msg. */
static int sanitizers_ran(const json_t *rec, json_int_t scheme, const char *grid, const char *const *reg, int nreg,
                          char *msg, size_t n)
{
    json_t *san = json_object_get(rec, "sanitizers"), *runs = json_object_get(rec, "sanitizer_runs");
    const char *sgrid = verify_sanitizer_grid(grid);
    verify_case_id *ids;
    int64_t ncases = 0;
    if (verify_grid_registry_cases(sgrid, &ids, &ncases) == VERIFY_OK) free(ids);
    for (int t = 0; t < 4; t++) {
        const char *sv = str(san, tools[t]);
        if (!sv || strcmp(sv, "clean"))
            return snprintf(msg, n, "sanitizer %s is \"%s\", not \"clean\"", tools[t], sv ? sv : "missing"), 0;
        json_t *d = json_object_get(runs, tools[t]);
        if (scheme < 2 && !json_object_get(d, "grid")) continue;
        const char *g = str(d, "grid");
        json_t *vs = json_object_get(d, "variants");
        if (!g || strcmp(g, sgrid))
            return snprintf(msg, n, "sanitizer %s ran over grid \"%s\", not \"%s\"", tools[t], g ? g : "missing",
                            sgrid), 0;
        if (!json_is_integer(json_object_get(d, "exit_code")) || json_integer_value(json_object_get(d, "exit_code")))
            return snprintf(msg, n, "sanitizer %s run has no exit_code 0", tools[t]), 0;
        int all = json_is_array(vs) && (int)json_array_size(vs) == nreg;
        for (int v = 0; all && v < nreg; v++) {
            int found = 0;
            for (size_t i = 0; i < json_array_size(vs); i++) {
                const char *name = json_string_value(json_array_get(vs, i));
                found |= name && !strcmp(name, reg[v]);
            }
            all = found;
        }
        if (!all) return snprintf(msg, n, "sanitizer %s did not run over every variant of the registry", tools[t]), 0;
        json_int_t want = (json_int_t)ncases;
        if (json_integer_value(json_object_get(d, "cases")) != want || !json_is_integer(json_object_get(d, "cases")))
            return snprintf(msg, n, "sanitizer %s checked %lld cases, grid %s has %lld", tools[t],
                            (long long)json_integer_value(json_object_get(d, "cases")), sgrid, (long long)want), 0;
    }
    return 1;
}

/* Escapes control bytes of msg in place (what the gate says may quote a record). */
static void escape_msg(char *msg, size_t n)
{
    if (!n) return;
    char tmp[2048];
    size_t k = strlen(ada_escape(msg, tmp, sizeof tmp < n ? sizeof tmp : n));
    memcpy(msg, tmp, k + 1);
}

/* gate_judge; with any, a record of other sources is judged as if it were of these. */
static gate_status judge(const json_t *rec, const gate_hashes *h, int any, gate_verdict *v, char *msg, size_t n)
{
    *v = GATE_OTHER_SOURCES;
    msg[0] = '\0';
    if (!json_is_object(rec)) return bad(msg, n, "not a JSON object");
    const char *schema = str(rec, "schema");
    int compact = schema && !strcmp(schema, "adaload.verify-summary/1");
    if (!compact && (!schema || strcmp(schema, "adaload.verify/1")))
        return bad(msg, n, "schema is neither \"adaload.verify/1\" nor \"adaload.verify-summary/1\"");
    int mine = 0;
    json_int_t scheme = 1;
    if (which_sources(rec, h, &mine, &scheme, msg, n) != GATE_OK) return GATE_MALFORMED;
    json_t *cases = json_object_get(rec, "cases");
    json_t *san = json_object_get(rec, "sanitizers");
    json_t *all = json_object_get(rec, "all_passed");
    const char *grid = str(rec, "grid"), *backend = str(rec, "backend");
    if (!compact && !json_is_array(cases)) return bad(msg, n, "no cases array");
    if (!json_is_object(san)) return bad(msg, n, "no sanitizers object");
    if (!json_is_boolean(all)) return bad(msg, n, "no all_passed boolean");
    if (!grid || !backend) return bad(msg, n, "no grid or backend string");
    int ok = 1;
    gate_status s = compact ? judge_groups(rec, &ok, msg, n) : judge_cases(cases, &ok, msg, n);
    if (s != GATE_OK) return s;
    if (!mine && !any) return GATE_OK;

    *v = GATE_NOT_COUNTED;
    if (gate_record_has_plugins(rec))
        return snprintf(msg, n, "it checked plug-in variants (a researcher's libraries, \"plugins\"): only records "
                                "of adaload's own kernels count"),
               GATE_OK;
    if (strcmp(backend, "cuda")) return snprintf(msg, n, "backend is \"%s\", not a GPU run", backend), GATE_OK;
    if (strcmp(grid, "full")) return snprintf(msg, n, "grid is \"%s\", the gate needs \"full\"", grid), GATE_OK;
    if (!ok) return GATE_OK;
    if (!json_is_true(all)) return snprintf(msg, n, "all_passed is false"), GATE_OK;
    int nreg = 0;
    const char *const *reg = verify_registry_variants(&nreg);
    if (!sanitizers_ran(rec, scheme, grid, reg, nreg, msg, n)) return GATE_OK;
    char **got = NULL, **want = NULL;
    int64_t ng = 0, nw = 0;
    int rk = record_keys(rec, compact, &got, &ng, msg, n);
    if (rk < 0) return GATE_NOMEM;
    if (rk > 0) return GATE_OK;
    verify_status vs = verify_grid_keys(grid, reg, nreg, &want, &nw);
    if (vs != VERIFY_OK) {
        free(got);
        return vs == VERIFY_ERR_NOMEM ? GATE_NOMEM : bad(msg, n, "grid %s has no cases", grid);
    }
    int same = same_cases(got, ng, want, nw, grid, msg, n);
    free(got);
    free(want);
    if (same) *v = GATE_PASS;
    return GATE_OK;
}

int gate_record_has_plugins(const json_t *rec)
{
    json_t *p = json_object_get(rec, "plugins"), *vs = json_object_get(rec, "variants"), *x;
    if (json_is_array(p) && json_array_size(p) > 0) return 1;
    size_t i;
    json_array_foreach(vs, i, x) if (json_is_string(x) && !strncmp(json_string_value(x), "plugin:", 7)) return 1;
    return 0;
}

gate_status gate_judge(const json_t *rec, const gate_hashes *h, gate_verdict *v, char *msg, size_t n)
{
    gate_status s = judge(rec, h, 0, v, msg, n);
    escape_msg(msg, n);
    return s;
}

gate_status gate_record_passes(const json_t *rec, int *passes, char *msg, size_t n)
{
    gate_hashes none = {NULL, NULL};
    gate_verdict v = GATE_OTHER_SOURCES;
    gate_status s = judge(rec, &none, 1, &v, msg, n);
    escape_msg(msg, n);
    *passes = s == GATE_OK && v == GATE_PASS;
    return s;
}

json_t *gate_read_record(const char *dir, char *path, size_t pn, char *msg, size_t n)
{
    struct stat st;
    snprintf(path, pn, "%s/verify-summary.json", dir);
    if (stat(path, &st) != 0) {
        snprintf(path, pn, "%s/verify.json", dir);
        if (stat(path, &st) != 0) {
            snprintf(msg, n, "no verify-summary.json or verify.json");
            return NULL;
        }
    }
    json_error_t je;
    json_t *rec = json_load_file(path, 0, &je);
    if (!rec) snprintf(msg, n, "%.200s (line %d)", je.text, je.line);
    return rec;
}

/* ---- the compact record ---------------------------------------------------------------- */

static double case_worst(const json_t *c)
{
    double w = json_number_value(json_object_get(c, "worst_ratio"));
    const char *sub[2] = {"mean", "rstd"};
    for (int k = 0; k < 2; k++) {
        double x = json_number_value(json_object_get(json_object_get(c, sub[k]), "worst_ratio"));
        if (x > w) w = x;
    }
    return w;
}

static json_t *group_of(json_t *groups, const json_t *c, const char *dtypes)
{
    const char *variant = or_q(str(c, "variant")), *layout = or_q(str(c, "layout"));
    const char *dir = str(c, "direction") ? str(c, "direction") : "fwd";
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        if (!strcmp(str(g, "variant"), variant) && !strcmp(str(g, "dtypes"), dtypes) &&
            !strcmp(str(g, "layout"), layout) && !strcmp(str(g, "direction"), dir))
            return g;
    }
    g = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:n}", "variant", variant, "dtypes",
                  dtypes, "layout", layout, "direction", dir, "cases", (json_int_t)0, "passed",
                  (json_int_t)0, "failed", (json_int_t)0, "not_run", (json_int_t)0, "worst_ratio", 0.0,
                  "worst_case");
    if (g && json_object_set_new(g, "shapes", json_array())) {
        json_decref(g);
        return NULL;
    }
    if (!g || json_array_append_new(groups, g)) return NULL;
    return g;
}

static void bump(json_t *g, const char *k)
{
    json_object_set_new(g, k, json_integer(json_integer_value(json_object_get(g, k)) + 1));
}

json_t *gate_summary(const json_t *full)
{
    json_t *cases = json_object_get(full, "cases");
    const char *schema = str(full, "schema");
    if (!json_is_array(cases) || !schema || strcmp(schema, "adaload.verify/1")) return NULL;
    json_t *out = json_object(), *groups = json_array(), *fails = json_array();
    int oom = !out || !groups || !fails;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)full, k, v) {
        if (oom) break;
        if (!strcmp(k, "cases")) continue;
        if (!strcmp(k, "schema")) v = json_string("adaload.verify-summary/1");
        else json_incref(v);
        oom |= json_object_set_new(out, k, v) != 0;
    }
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (oom) break;
        char dtypes[64];
        snprintf(dtypes, sizeof dtypes, "%.15s-%.15s-%.15s", or_q(str(c, "x")), or_q(str(c, "mod")),
                 or_q(str(c, "y")));
        json_t *g = group_of(groups, c, dtypes);
        if (!g) {
            oom = 1;
            break;
        }
        bump(g, "cases");
        oom |= json_array_append_new(json_object_get(g, "shapes"),
                                     json_pack("[O?, O?]", json_object_get(c, "D"), json_object_get(c, "rows"))) != 0;
        if (json_is_true(json_object_get(c, "pass"))) bump(g, "passed");
        else if (str(c, "not_run")) bump(g, "not_run");
        else bump(g, "failed");
        if (!json_is_true(json_object_get(c, "pass"))) oom |= json_array_append(fails, c) != 0;
        double w = case_worst(c);
        if (w > json_number_value(json_object_get(g, "worst_ratio")) || json_is_null(json_object_get(g, "worst_case"))) {
            json_object_set_new(g, "worst_ratio", json_real(w));
            json_object_set_new(g, "worst_case",
                                json_pack("{s:O?, s:O?}", "D", json_object_get(c, "D"), "rows",
                                          json_object_get(c, "rows")));
        }
    }
    if (oom || json_object_set_new(out, "groups", groups) || json_object_set_new(out, "failures", fails)) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- scanning results/ ----------------------------------------------------------------- */

static int note_line(gate_scan_result *r, size_t *cap, const char *path, const char *why);

/* Appends "path: why\n" to the notes, control bytes of both escaped: a note is one line. */
static int note(gate_scan_result *r, size_t *cap, const char *rawpath, const char *rawwhy)
{
    size_t pl = 4 * strlen(rawpath) + 1, wl = 4 * strlen(rawwhy) + 1;
    char *path = malloc(pl), *why = malloc(wl);
    if (!path || !why) {
        free(path);
        free(why);
        return -1;
    }
    ada_escape(rawpath, path, pl);
    ada_escape(rawwhy, why, wl);
    int rc = note_line(r, cap, path, why);
    free(path);
    free(why);
    return rc;
}

static int note_line(gate_scan_result *r, size_t *cap, const char *path, const char *why)
{
    size_t len = r->notes ? strlen(r->notes) : 0, add = strlen(path) + strlen(why) + 4;
    if (len + add > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        while (len + add > c) c *= 2;
        char *p = realloc(r->notes, c);
        if (!p) return -1;
        r->notes = p;
        *cap = c;
        if (!len) p[0] = '\0';
    }
    snprintf(r->notes + len, *cap - len, "%s: %s\n", path, why);
    return 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static gate_status judge_run(const char *dir, const gate_hashes *h, gate_scan_result *r, size_t *cap)
{
    char path[4200], msg[600];
    struct stat st;
    json_t *rec = gate_read_record(dir, path, sizeof path, msg, sizeof msg);
    if (!rec && stat(path, &st) != 0) return GATE_OK; /* not a record: the catalog's check names it */
    r->records++;
    gate_verdict v = GATE_OTHER_SOURCES;
    gate_status s = rec ? gate_judge(rec, h, &v, msg, sizeof msg) : GATE_MALFORMED;
    json_decref(rec);
    char why[700];
    int e = 0;
    if (s == GATE_MALFORMED) {
        r->malformed++;
        snprintf(why, sizeof why, "malformed record: %s", msg);
        e = note(r, cap, path, why);
    } else if (v == GATE_PASS) {
        r->matching++;
        if (!r->passed++) snprintf(r->pass_path, sizeof r->pass_path, "%s", path);
    } else if (v == GATE_NOT_COUNTED) {
        r->matching++;
        snprintf(why, sizeof why, "same kernel sources, not counted: %s", msg);
        e = note(r, cap, path, why);
    }
    return e ? GATE_NOMEM : GATE_OK;
}

static int skip(const struct dirent *d) { return d->d_name[0] != '.'; }

gate_status gate_scan(const char *results, const gate_hashes *h, gate_scan_result *r)
{
    memset(r, 0, sizeof *r);
    size_t cap = 0;
    struct dirent **tb = NULL;
    int ntb = is_dir(results) ? scandir(results, &tb, skip, alphasort) : 0;
    gate_status s = GATE_OK;
    for (int a = 0; a < ntb; a++) {
        char vdir[4200];
        snprintf(vdir, sizeof vdir, "%.4000s/%.180s/verify", results, tb[a]->d_name);
        struct dirent **runs = NULL;
        int nr = (s == GATE_OK && is_dir(vdir)) ? scandir(vdir, &runs, skip, alphasort) : 0;
        for (int b = 0; b < nr; b++) {
            char dir[4200];
            snprintf(dir, sizeof dir, "%.4000s/%.190s", vdir, runs[b]->d_name);
            if (s == GATE_OK && is_dir(dir)) s = judge_run(dir, h, r, &cap);
            free(runs[b]);
        }
        free(runs);
        free(tb[a]);
    }
    free(tb);
    return s;
}

void gate_scan_free(gate_scan_result *r)
{
    free(r->notes);
    r->notes = NULL;
}

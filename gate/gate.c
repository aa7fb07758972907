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

#include "verify_res.h"
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
        char key[160];
        if (verify_case_key_json(c, key, sizeof key)) snprintf(key, sizeof key, "%.100s, no identity", or_q(str(c, "variant")));
        snprintf(msg, n, "case %zu (%s) %s", i, key, nr ? nr : "failed");
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

enum { KEYLEN = 160 };

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
            const char *op = str(g, "op");
            const int res = op && !strcmp(op, "lnmod_res");
            json_array_foreach(shapes, j, sh) {
                k[m] = text + m * KEYLEN;
                json_t *D = json_array_get(sh, 0), *R = json_array_get(sh, 1);
                json_t *inplace = json_array_get(sh, 2), *dh = json_array_get(sh, 3);
                int bad_key = !json_is_integer(D) || !json_is_integer(R) || (json_object_get(g, "op") && !op) ||
                              (op && !res && strcmp(op, "lnmod"));
                if (!bad_key && res)
                    bad_key = !json_is_boolean(inplace) || !json_is_boolean(dh) ||
                              verify_res_case_key(str(g, "variant"), str(g, "site"), str(g, "dtypes"), str(g, "layout"),
                                                  str(g, "direction"), json_integer_value(D), json_integer_value(R),
                                                  json_is_true(inplace), json_is_true(dh), k[m], KEYLEN);
                else if (!bad_key)
                    bad_key = verify_case_key(str(g, "variant"), str(g, "dtypes"), str(g, "layout"),
                                              str(g, "direction") ? str(g, "direction") : "fwd", json_integer_value(D),
                                              json_integer_value(R), k[m], KEYLEN);
                if (bad_key) {
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
                snprintf(msg, n, "case %zu has no identity (variant, x, mod, y, layout, D, rows; lnmod_res: site, dtypes, "
                                 "inplace, dh)", i);
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
 * variants: that grid, those variants, that many cases, exit code 0; with ops holding the
 * fused op, also over its sanitizer grid ("res_grid"), counted in "cases". Records of scheme 1
 * were made before runs said so; then verify always ran them over the quick grid, and their
 * verdicts are taken as they are. 1 when they pass, else 0 with why in msg. */
static int sanitizers_ran(const json_t *rec, json_int_t scheme, const char *grid, int ops, const char *const *reg,
                          int nreg, char *msg, size_t n)
{
    json_t *san = json_object_get(rec, "sanitizers"), *runs = json_object_get(rec, "sanitizer_runs");
    const char *sgrid = verify_sanitizer_grid(grid), *rgrid = verify_res_sanitizer_grid(grid);
    int64_t ncases = 0;
    verify_sanitizer_registry_ncases(grid, ops, &ncases);
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
        const char *rg = str(d, "res_grid");
        if ((ops & VERIFY_OP_RES) && (!rg || strcmp(rg, rgrid)))
            return snprintf(msg, n, "sanitizer %s ran over lnmod_res grid \"%s\", not \"%s\"", tools[t],
                            rg ? rg : "missing", rgrid), 0;
        json_int_t want = (json_int_t)ncases; /* lnmod's cases of sgrid and, with the fused op, its of rgrid */
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

/* "shard": {index, count} into *k, *nk (0, 0 without one). GATE_MALFORMED when it is not
 * 1 <= index <= count, 2 <= count <= 64. */
static gate_status shard_of(const json_t *rec, int *k, int *nk, char *msg, size_t n)
{
    json_t *sh = json_object_get(rec, "shard");
    *k = *nk = 0;
    if (!sh) return GATE_OK;
    json_t *i = json_object_get(sh, "index"), *c = json_object_get(sh, "count");
    if (!json_is_integer(i) || !json_is_integer(c) || json_integer_value(c) < 2 || json_integer_value(c) > 64 ||
        json_integer_value(i) < 1 || json_integer_value(i) > json_integer_value(c))
        return bad(msg, n, "shard is not {index, count} with 1 <= index <= count and 2 <= count <= 64");
    *k = (int)json_integer_value(i);
    *nk = (int)json_integer_value(c);
    return GATE_OK;
}

/* 1 when every sanitizer verdict is "not run: ..." (the run was not asked for them). */
static int no_sanitizers(const json_t *rec)
{
    json_t *san = json_object_get(rec, "sanitizers");
    for (int t = 0; t < 4; t++) {
        const char *sv = str(san, tools[t]);
        if (!sv || strncmp(sv, "not run", 7)) return 0;
    }
    return 1;
}

/* The record's cases against those of grid (shard k of nk) for the registry's variants reg: 1 equal, 0 not (why in msg),
 * -1 out of memory, -2 the grid has none. */
static int cases_are_grids(const json_t *rec, int compact, const char *grid, int ops, int k, int nk,
                           const char *const *reg, int nreg, char *msg, size_t n)
{
    char **got = NULL, **want = NULL;
    int64_t ng = 0, nw = 0;
    int rk = record_keys(rec, compact, &got, &ng, msg, n);
    if (rk) return rk < 0 ? -1 : 0;
    verify_status vs = verify_grid_keys_ops(grid, reg, nreg, ops, k, nk, &want, &nw);
    if (vs != VERIFY_OK) {
        free(got);
        return vs == VERIFY_ERR_NOMEM ? -1 : -2;
    }
    int same = same_cases(got, ng, want, nw, grid, msg, n);
    free(got);
    free(want);
    return same;
}

/* gate_judge_ex; with any, a record of other sources is judged as if it were of these. */
static gate_status judge(const json_t *rec, const gate_hashes *h, int any, gate_judgement *j, char *msg, size_t n)
{
    memset(j, 0, sizeof *j);
    gate_verdict *v = &j->verdict;
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
    if (shard_of(rec, &j->shard, &j->nshards, msg, n) != GATE_OK) return GATE_MALFORMED;
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
    int nreg = 0;
    const char *const *reg = verify_registry_variants(&nreg);
    /* The ops expected: both for a record of these sources, and for any record that lists its
     * "ops" (made since the fused op is verified); lnmod's alone for an older record of other
     * sources (judged as it was when made). */
    const int ops = mine || json_object_get(rec, "ops") ? VERIFY_OP_ALL : VERIFY_OP_LNMOD;
    if (strcmp(grid, "full")) {
        /* Not a grid record; it may be the sanitizer record of joined shards: every case of its
         * grid passed, and the sanitizer runs the full grid's record would hold, clean. */
        char why[600];
        int sane = ok && json_is_true(all) && !j->nshards &&
                   sanitizers_ran(rec, scheme, "full", ops, reg, nreg, why, sizeof why);
        int same = sane ? cases_are_grids(rec, compact, grid, ops, 0, 0, reg, nreg, why, sizeof why) : 0;
        if (same == -1) return GATE_NOMEM;
        if (same == 1) {
            *v = GATE_SANITIZERS;
            return snprintf(msg, n, "grid \"%s\": the sanitizer record of joined full-grid shards", grid), GATE_OK;
        }
        return snprintf(msg, n, "grid is \"%s\", the gate needs \"full\"", grid), GATE_OK;
    }
    if (!ok) return GATE_OK;
    if (!json_is_true(all)) return snprintf(msg, n, "all_passed is false"), GATE_OK;
    /* A shard may leave the sanitizers to another record of its join; whatever it did run
     * must be clean. A whole record holds its own. */
    if (!(j->nshards && no_sanitizers(rec))) {
        if (!sanitizers_ran(rec, scheme, grid, ops, reg, nreg, msg, n)) return GATE_OK;
        j->sanitizers_clean = 1;
    }
    int same = cases_are_grids(rec, compact, grid, ops, j->shard, j->nshards, reg, nreg, msg, n);
    if (same == -1) return GATE_NOMEM;
    if (same == -2) return bad(msg, n, "grid %s has no cases", grid);
    if (same) *v = j->nshards ? GATE_PART : GATE_PASS;
    if (same && j->nshards) snprintf(msg, n, "shard %d of %d: counts once joined with the others", j->shard, j->nshards);
    return GATE_OK;
}

int gate_record_shard(const json_t *rec, int *shard, int *nshards)
{
    char msg[160];
    return shard_of(rec, shard, nshards, msg, sizeof msg) == GATE_OK ? 0 : -1;
}

int gate_record_has_plugins(const json_t *rec)
{
    json_t *p = json_object_get(rec, "plugins"), *vs = json_object_get(rec, "variants"), *x;
    if (json_is_array(p) && json_array_size(p) > 0) return 1;
    size_t i;
    json_array_foreach(vs, i, x) if (json_is_string(x) && !strncmp(json_string_value(x), "plugin:", 7)) return 1;
    return 0;
}

gate_status gate_judge_ex(const json_t *rec, const gate_hashes *h, gate_judgement *j, char *msg, size_t n)
{
    gate_status s = judge(rec, h, 0, j, msg, n);
    escape_msg(msg, n);
    return s;
}

gate_status gate_judge(const json_t *rec, const gate_hashes *h, gate_verdict *v, char *msg, size_t n)
{
    gate_judgement j;
    gate_status s = gate_judge_ex(rec, h, &j, msg, n);
    *v = j.verdict;
    return s;
}

gate_status gate_record_passes(const json_t *rec, int *passes, char *msg, size_t n)
{
    gate_hashes none = {NULL, NULL};
    gate_judgement j;
    gate_status s = judge(rec, &none, 1, &j, msg, n);
    escape_msg(msg, n);
    *passes = s == GATE_OK && (j.verdict == GATE_PASS || j.verdict == GATE_PART);
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
    const char *op = str(c, "op") ? str(c, "op") : "lnmod", *site = str(c, "site") ? str(c, "site") : "";
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g) {
        if (!strcmp(str(g, "variant"), variant) && !strcmp(str(g, "dtypes"), dtypes) &&
            !strcmp(str(g, "layout"), layout) && !strcmp(str(g, "direction"), dir) && !strcmp(str(g, "op"), op) &&
            !strcmp(str(g, "site") ? str(g, "site") : "", site))
            return g;
    }
    g = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:n}", "variant", variant, "dtypes",
                  dtypes, "layout", layout, "direction", dir, "cases", (json_int_t)0, "passed",
                  (json_int_t)0, "failed", (json_int_t)0, "not_run", (json_int_t)0, "worst_ratio", 0.0,
                  "worst_case");
    if (g && (json_object_set_new(g, "op", json_string(op)) ||
              (str(c, "site") && json_object_set_new(g, "site", json_string(site))) ||
              json_object_set_new(g, "shapes", json_array()))) {
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
        const int res = str(c, "op") && !strcmp(str(c, "op"), "lnmod_res");
        if (res) snprintf(dtypes, sizeof dtypes, "%.40s", or_q(str(c, "dtypes")));
        else snprintf(dtypes, sizeof dtypes, "%.15s-%.15s-%.15s", or_q(str(c, "x")), or_q(str(c, "mod")), or_q(str(c, "y")));
        json_t *g = group_of(groups, c, dtypes);
        if (!g) {
            oom = 1;
            break;
        }
        bump(g, "cases");
        /* a shape: [D, rows]; the fused op's: [D, rows, inplace, dh] */
        json_t *shape = res ? json_pack("[O?, O?, O?, O?]", json_object_get(c, "D"), json_object_get(c, "rows"),
                                        json_object_get(c, "inplace"), json_object_get(c, "dh"))
                            : json_pack("[O?, O?]", json_object_get(c, "D"), json_object_get(c, "rows"));
        oom |= !shape || json_array_append_new(json_object_get(g, "shapes"), shape) != 0;
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


/* gate_scan.c -- scanning results/ for the gate (gate.h): every record judged, the shards of
 * one source hash and one testbed joined with a sanitizer record of that testbed. */
#include "gate.h"

#include "ada_util.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The passing shards of this tree's sources seen so far, per shard count, and a sanitizer
 * record (or a shard that ran the sanitizers itself). */
typedef struct {
    uint64_t have[65];      /* bit k-1: shard k of count passed */
    char first[65][4200];   /* the path of its first shard seen */
    int sanitizers;
    char san_path[4200];
} join_state;

static void join_note(join_state *js, const gate_judgement *j, const char *path)
{
    if (j->verdict == GATE_PART) {
        if (!js->have[j->nshards]) snprintf(js->first[j->nshards], sizeof js->first[0], "%s", path);
        js->have[j->nshards] |= (uint64_t)1 << (j->shard - 1);
    }
    if ((j->verdict == GATE_SANITIZERS || (j->verdict == GATE_PART && j->sanitizers_clean)) && !js->sanitizers++)
        snprintf(js->san_path, sizeof js->san_path, "%s", path);
}

/* After a testbed's records: a complete set of its shards of one count with a sanitizer
 * record of it passes. */
static void join_finish(const join_state *js, gate_scan_result *r)
{
    if (r->passed || !js->sanitizers) return;
    for (int nk = 2; nk <= 64; nk++) {
        const uint64_t full = nk == 64 ? ~(uint64_t)0 : (((uint64_t)1 << nk) - 1);
        if (js->have[nk] != full) continue;
        r->passed = 1;
        r->joined = nk;
        snprintf(r->pass_path, sizeof r->pass_path, "%.1900s with the other %d shard(s) of %d and the sanitizer runs of %.1900s",
                 js->first[nk], nk - 1, nk, js->san_path);
        return;
    }
}

static gate_status judge_run(const char *dir, const gate_hashes *h, gate_scan_result *r, size_t *cap, join_state *js)
{
    char path[4200], msg[600];
    struct stat st;
    json_t *rec = gate_read_record(dir, path, sizeof path, msg, sizeof msg);
    if (!rec && stat(path, &st) != 0) return GATE_OK; /* not a record: the catalog's check names it */
    r->records++;
    gate_judgement j = {GATE_OTHER_SOURCES, 0, 0, 0};
    gate_status s = rec ? gate_judge_ex(rec, h, &j, msg, sizeof msg) : GATE_MALFORMED;
    const gate_verdict v = j.verdict;
    json_decref(rec);
    char why[700];
    int e = 0;
    if (s == GATE_OK) join_note(js, &j, path);
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
    } else if (v == GATE_PART || v == GATE_SANITIZERS) {
        r->matching++;
    }
    return e ? GATE_NOMEM : GATE_OK;
}

static int skip(const struct dirent *d) { return d->d_name[0] != '.'; }

gate_status gate_scan(const char *results, const gate_hashes *h, gate_scan_result *r)
{
    memset(r, 0, sizeof *r);
    size_t cap = 0;
    join_state *js = calloc(1, sizeof *js);
    if (!js) return GATE_NOMEM;
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
            if (s == GATE_OK && is_dir(dir)) s = judge_run(dir, h, r, &cap, js);
            free(runs[b]);
        }
        free(runs);
        free(tb[a]);
        /* A join is of one testbed's records: the full grid on one kind of machine. */
        if (s == GATE_OK) join_finish(js, r);
        memset(js, 0, sizeof *js);
    }
    free(tb);
    free(js);
    return s;
}

void gate_scan_free(gate_scan_result *r)
{
    free(r->notes);
    r->notes = NULL;
}

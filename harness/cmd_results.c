/* cmd_results.c -- `adaload results`: the catalog of results/ (catalog/catalog.h).
 *
 *   adaload results [list] [--kind K] [--testbed T] [--since D] [--until D] [--sha S]
 *                          [--hash H] [--json]      the runs, oldest first (filtered)
 *   adaload results index                           rebuilds results/index.jsonl from the tree
 *   adaload results check                           exit 1 unless index and tree agree
 *   adaload results add RUN                         appends the line of one finished run
 *   adaload results prune [--apply] [--main-ref R]  the pruning policy; a dry run unless --apply
 *   adaload results testbed                         this machine's testbed name
 *   adaload results new --kind K [--testbed T] [--owner-pid P] [--command C]
 *                                                   stages a new run folder (run_folder.h) and
 *                                                   prints its hidden path, for scripts
 *   adaload results publish STAGED                  renames it to its final name, indexes it
 *   adaload results discard STAGED                  removes a staged run that failed
 * --results DIR (default <source tree>/results) for all of them. The layout is
 * results/<testbed>/<kind>/<run>/; a tree that breaks it is bad input (exit 2, naming the
 * path). Exit 0 ok, 1 check found a difference, 2 bad usage or input or an output that
 * cannot be written, 3 out of memory.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_spawn.h"
#include "build_info.h"
#include "catalog.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "kernel_hash_v2.h"
#include "run_folder.h"

#define CMD "results"

typedef struct {
    const char *results, *kind, *testbed, *since, *until, *sha, *hash, *main_ref, *command;
    int json, apply;
    int64_t keep_bench, owner_pid;
} ropts;

static void usage(const cli_opt *opts)
{
    printf("usage: adaload results [list|index|check|add RUN|prune|testbed|new|publish DIR|discard DIR] [options]\n"
           "  list     the runs of results/<testbed>/<kind>/<run>/, oldest first (default)\n"
           "  index    rebuild results/index.jsonl from the run folders\n"
           "  check    exit 1 unless results/index.jsonl and the run folders agree\n"
           "  add RUN  append the line of the finished run folder RUN to the index\n"
           "  prune    what the policy removes (superseded full-grid verification records, bench\n"
           "           runs of commits not on the main line; with --keep-bench N, main-line runs\n"
           "           older than the newest N of their set) and why; runs that the README or\n"
           "           notes name are kept; --apply removes them\n"
           "  testbed  this machine's testbed name (the GPU's, or cpu-<host>)\n"
           "  new      stage a run folder of --kind K (meta.json written) under a hidden name\n"
           "           and print its path; fill it, then publish it (or discard it)\n"
           "  publish DIR  give a staged run its final name and add it to the index\n"
           "  discard DIR  remove a staged run\n");
    cli_print_options(stdout, opts);
    printf("exit: 0 ok, 1 check found a difference, 2 bad usage, input or output, 3 out of memory\n");
}

static int status_exit(cat_status s)
{
    return s == CAT_NOMEM ? ADA_EXIT_INTERNAL : s == CAT_MISMATCH ? ADA_EXIT_FAIL : ADA_EXIT_USAGE;
}

static int do_list(const ropts *o)
{
    cat_catalog c;
    char err[1024];
    cat_status s = cat_scan(o->results, &c, err, sizeof err);
    if (s != CAT_OK) return ada_msg(CMD, "%s", err), status_exit(s);
    cat_filter f = {.kind = o->kind, .testbed = o->testbed, .since = o->since, .until = o->until,
                    .sha = o->sha, .hash = o->hash};
    int64_t shown = 0;
    if (!o->json)
        printf("%-20s  %-14s  %-16s  %-7s  %-8s  %s\n", "time", "testbed", "kind", "commit", "kernels", "measured (path)");
    for (int64_t i = 0; i < c.n; i++) {
        const cat_run *r = &c.run[i];
        if (!cat_match(r, &f)) continue;
        shown++;
        if (o->json) {
            char *l = cat_run_line(r);
            if (!l) {
                cat_free(&c);
                return ada_msg(CMD, "out of memory"), ADA_EXIT_INTERNAL;
            }
            puts(l);
            free(l);
        } else {
            printf("%-20s  %-14s  %-16s  %-7.7s  %-8.8s  %s (%s)\n", r->time, r->testbed, r->kind, r->git_sha,
                   r->kernel_hash_v1, r->measured, r->path);
        }
    }
    if (!o->json) printf("%lld of %lld run(s)\n", (long long)shown, (long long)c.n);
    cat_free(&c);
    return ADA_EXIT_OK;
}

static int do_index(const ropts *o)
{
    cat_catalog c;
    char err[1024];
    cat_status s = cat_scan(o->results, &c, err, sizeof err);
    if (s == CAT_OK) s = cat_write_index(o->results, &c, err, sizeof err);
    if (s == CAT_OK) printf("%s/index.jsonl: %lld run(s)\n", o->results, (long long)c.n);
    else ada_msg(CMD, "%s", err);
    cat_free(&c);
    return s == CAT_OK ? ADA_EXIT_OK : status_exit(s);
}

static int do_check(const ropts *o)
{
    char err[1024], *report = NULL;
    cat_status s = cat_check(o->results, &report, err, sizeof err);
    if (s == CAT_OK) printf("%s/index.jsonl matches the run folders\n", o->results);
    else if (s == CAT_MISMATCH)
        fprintf(stderr, "%sadaload results: FAIL: %s/index.jsonl and the run folders disagree "
                        "(adaload results index rebuilds it; runs are never edited)\n",
                report ? report : "", o->results);
    else ada_msg(CMD, "%s", err);
    free(report);
    return s == CAT_OK ? ADA_EXIT_OK : status_exit(s);
}

static int do_add(const ropts *o, const char *run)
{
    char rel[4200], err[1024];
    if (cat_relpath(o->results, run, rel, sizeof rel) != CAT_OK)
        return ada_usage_error(CMD, "add %s: not a run folder %s/<testbed>/<kind>/<run>/", run, o->results);
    cat_status s = cat_append(o->results, rel, err, sizeof err);
    if (s != CAT_OK) return ada_msg(CMD, "%s", err), status_exit(s);
    printf("%s/index.jsonl: added %s\n", o->results, rel);
    return ADA_EXIT_OK;
}

/* A script's run folder, through the runs library like the commands' own (run_folder.h). */
static int do_new(const ropts *o)
{
    if (!o->kind) return ada_usage_error(CMD, "new needs --kind K");
    char tb[128];
    if (o->testbed) snprintf(tb, sizeof tb, "%s", o->testbed);
    else if (ada_run_testbed(tb, sizeof tb) != 0) return ada_msg(CMD, "no testbed name"), ADA_EXIT_INTERNAL;
    ada_run_spec sp = {.source = ada_source_dir(), .results = o->results, .testbed = tb, .kind = o->kind,
                       .cmdline = o->command ? o->command : "adaload results new", .owner_pid = (long)o->owner_pid};
    char dir[4400];
    if (ada_run_stage(&sp, dir, sizeof dir) != 0)
        return ada_usage_error(CMD, "new: cannot stage a %s run of testbed %s under %s: %s", o->kind, tb, o->results,
                               strerror(errno));
    printf("%s\n", dir);
    return ADA_EXIT_OK;
}

static int do_publish(const ropts *o, const char *staged)
{
    char dir[4400], err[1500];
    snprintf(dir, sizeof dir, "%s", staged);
    int fr = ada_run_finish(o->results, dir, sizeof dir, err, sizeof err);
    if (fr < 0) return ada_usage_error(CMD, "publish %s: %s", staged, errno == EINVAL ? "not a staged run folder" : err);
    if (fr > 0) return ada_usage_error(CMD, "%s", err);
    printf("%s\n", dir);
    return ADA_EXIT_OK;
}

static int do_discard(const char *staged)
{
    if (ada_run_discard(staged) != 0)
        return ada_usage_error(CMD, "discard %s: %s", staged, errno == EINVAL ? "not a staged run folder" : strerror(errno));
    return ADA_EXIT_OK;
}

/* on_main for the policy: `git merge-base --is-ancestor SHA REF` in the source tree. */
static int on_main(const char *sha, void *ctx)
{
    const char *ref = ctx;
    if (!sha || strlen(sha) < 7 || strspn(sha, "0123456789abcdef") != strlen(sha)) return -1;
    char *argv[] = {"git", "-C", (char *)ada_source_dir(), "merge-base", "--is-ancestor", (char *)sha, (char *)ref, NULL};
    int st = ada_spawn_wait(argv, 1);
    return st == 0 ? 1 : st == 1 ? 0 : -1;
}

/* Bytes of the regular files under dir (links not followed). */
static int64_t dir_bytes(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%.4000s/%.255s", dir, e->d_name);
        if (lstat(p, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) sum += dir_bytes(p);
        else if (S_ISREG(st.st_mode)) sum += st.st_size;
    }
    closedir(d);
    return sum;
}

/* Appends the file's text to *buf (a missing file adds nothing); -1 out of memory. */
static int slurp(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char chunk[8192];
    size_t k;
    int rc = 0;
    while (rc == 0 && (k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *p = realloc(*buf, *len + k + 1);
        if (!p) rc = -1;
        else {
            memcpy(p + *len, chunk, k);
            *len += k;
            p[*len] = '\0';
            *buf = p;
        }
    }
    fclose(f);
    return rc;
}

/* The docs that cite runs: README.md, kernels/NOTES.md, and every README.md of results/. */
static char *cited_text(const char *results)
{
    char *buf = calloc(1, 1);
    size_t len = 0;
    char p[4400];
    const char *docs[] = {"README.md", "kernels/NOTES.md", "planner/README.md"};
    for (size_t i = 0; buf && i < sizeof docs / sizeof *docs; i++) {
        snprintf(p, sizeof p, "%s/%s", ada_source_dir(), docs[i]);
        if (slurp(p, &buf, &len)) buf = (free(buf), NULL);
    }
    glob_t g;
    snprintf(p, sizeof p, "%s/*/*/README.md", results);
    if (buf && glob(p, 0, NULL, &g) == 0) {
        for (size_t i = 0; buf && i < g.gl_pathc; i++)
            if (slurp(g.gl_pathv[i], &buf, &len)) buf = (free(buf), NULL);
        globfree(&g);
    }
    return buf;
}

static int do_prune(const ropts *o)
{
    cat_catalog c;
    char err[1024];
    cat_status s = cat_scan(o->results, &c, err, sizeof err);
    if (s != CAT_OK) return ada_msg(CMD, "%s", err), status_exit(s);
    cat_decision *d = calloc((size_t)c.n + 1, sizeof *d);
    char *cited = cited_text(o->results);
    cat_prune_opts po = {.hash_v1 = ADALOAD_KERNEL_HASH, .hash_v2 = ADALOAD_KERNEL_HASH_V2, .on_main = on_main,
                         .ctx = (void *)o->main_ref, .cited = cited, .keep_bench = o->keep_bench};
    if (!d || !cited || cat_prune_plan(&c, &po, d) != CAT_OK) {
        free(cited);
        free(d);
        cat_free(&c);
        return ada_msg(CMD, "out of memory"), ADA_EXIT_INTERNAL;
    }
    int64_t n = 0, bytes = 0;
    int rc = ADA_EXIT_OK;
    for (int64_t i = 0; i < c.n; i++) {
        char dir[4400];
        snprintf(dir, sizeof dir, "%s/%s", o->results, c.run[i].path);
        int64_t b = dir_bytes(dir);
        printf("%-5s  %-56s  %7.2f MB  %s\n", d[i].prune ? "prune" : "keep", c.run[i].path, b / 1e6, d[i].reason);
        if (!d[i].prune) continue;
        n++;
        bytes += b;
        if (o->apply && cat_remove_run(o->results, c.run[i].path, err, sizeof err) != CAT_OK) {
            ada_msg(CMD, "%s", err);
            rc = ADA_EXIT_USAGE;
        }
    }
    cat_free(&c);
    free(d);
    free(cited);
    printf("%s %lld run(s), %.1f MB%s\n", o->apply ? "removed" : "would remove", (long long)n, bytes / 1e6,
           o->apply ? "" : " (a dry run: --apply removes them)");
    if (o->apply && n > 0) {
        int r2 = do_index(o);
        if (rc == ADA_EXIT_OK) rc = r2;
    }
    return rc;
}

int cmd_results(int argc, char **argv)
{
    ropts o = {.main_ref = "main"};
    const cli_opt opts[] = {
        CLI_STR("--results", &o.results, "DIR", "the results folder (default <source tree>/results)"),
        CLI_STR("--kind", &o.kind, "K", "list: only runs of this kind (verify, bench, regression-check, explore, planner, e2e)"),
        CLI_STR("--testbed", &o.testbed, "T", "list: only runs of this testbed"),
        CLI_STR("--since", &o.since, "DATE", "list: only runs at or after DATE (ISO 8601 or a prefix: 2026-11-29)"),
        CLI_STR("--until", &o.until, "DATE", "list: only runs at or before DATE (a prefix counts as the whole period)"),
        CLI_STR("--sha", &o.sha, "S", "list: only runs of commits starting with S"),
        CLI_STR("--hash", &o.hash, "H", "list: only runs of kernel sources whose hash (either scheme) starts with H"),
        CLI_FLAG("--json", &o.json, "list: the index lines (JSON Lines) instead of the table"),
        CLI_FLAG("--apply", &o.apply, "prune: remove the runs (default: only say what would go)"),
        CLI_STR("--main-ref", &o.main_ref, "REF", "prune: the main line's git ref (default main)"),
        CLI_I64("--owner-pid", &o.owner_pid, 1, 2147483647, "PID", "new: the process whose life keeps the staged folder (default: none past this command's)"),
        CLI_STR("--command", &o.command, "TEXT", "new: the command line meta.json records"),
        CLI_I64("--keep-bench", &o.keep_bench, 0, 1000000, "N", "prune: keep only the newest N bench and planner runs per testbed and set (default 0: all from the main line)"),
        CLI_END};
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    int r = cli_parse(CMD, opts, argc, argv, pos, 2, &npos);
    if (r == CLI_HELP) {
        usage(opts);
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    const char *action = npos ? pos[0] : "list";
    const char *dates[2][2] = {{"--since", o.since}, {"--until", o.until}};
    for (int d = 0; d < 2; d++)
        if (dates[d][1] && !cat_is_time_prefix(dates[d][1]))
            return ada_usage_error(CMD, "%s %s: not a UTC date or a prefix of one (2026-11-29, 2026-11-29T21:33:40Z)",
                                   dates[d][0], dates[d][1]);
    if (o.kind && !cat_is_kind(o.kind))
        return ada_usage_error(CMD, "--kind %s: not a kind (verify, bench, regression-check, explore, planner, e2e)", o.kind);
    char def[4200];
    if (!o.results) {
        snprintf(def, sizeof def, "%s/results", ada_source_dir());
        o.results = def;
    }
    struct stat rst; /* a --results that is not a folder is bad input, as for the gate */
    if (strcmp(action, "testbed") && (stat(o.results, &rst) != 0 || !S_ISDIR(rst.st_mode)))
        return ada_usage_error(CMD, "--results %s: not a folder", o.results);
    int want_run = !strcmp(action, "add") || !strcmp(action, "publish") || !strcmp(action, "discard");
    if (want_run && npos != 2) return ada_usage_error(CMD, "%s needs one run folder", action);
    if (!want_run && npos > 1) return ada_usage_error(CMD, "%s takes no further argument", action);
    if (!strcmp(action, "list")) return do_list(&o);
    if (!strcmp(action, "index")) return do_index(&o);
    if (!strcmp(action, "check")) return do_check(&o);
    if (!strcmp(action, "add")) return do_add(&o, pos[1]);
    if (!strcmp(action, "new")) return do_new(&o);
    if (!strcmp(action, "publish")) return do_publish(&o, pos[1]);
    if (!strcmp(action, "discard")) return do_discard(pos[1]);
    if (!strcmp(action, "prune")) return do_prune(&o);
    if (!strcmp(action, "testbed")) {
        char tb[128];
        if (ada_run_testbed(tb, sizeof tb) != 0) return ada_msg(CMD, "no testbed name"), ADA_EXIT_INTERNAL;
        printf("%s\n", tb);
        return ADA_EXIT_OK;
    }
    return ada_usage_error(CMD, "unknown action '%s' (list, index, check, add, prune, testbed, new, publish, discard)",
                           action);
}

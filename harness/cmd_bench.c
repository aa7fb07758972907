/* cmd_bench.c -- `adaload bench`: Google Benchmark timings into a results run folder.
 *
 *   adaload bench [--set quick|wan|sweep] [--variant V ...] [--with-peers] [--repetitions N]
 *                 [--min-time S] [--filter REGEX] [--out DIR] [--no-gpu] [--list-shapes]
 *
 * Writes results/<testbed>/<UTC time>_<sha7>/ (or DIR) with meta.json, bench.json (Google
 * Benchmark JSON: CPU reference and planner benchmarks, copy ceilings, kernel variants),
 * peers.json (PyTorch peers, --with-peers), customSmallerIsBetter.json and
 * customBiggerIsBetter.json (github-action-benchmark: median us and GB/s, never NaN/Inf).
 * The timing method is in bench_gpu.c's manual. Without a CUDA device every GPU benchmark is
 * listed as "skipped (no CUDA device): <name>" and the CPU benchmarks still run (exit 0).
 * Exit: 0 ok, 1 a benchmark or the peers failed, 2 bad usage, 77 nothing could run here.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_cpu.h"
#include "bench_gpu.h"
#include "bench_json.h"
#include "bench_shapes.h"
#include "bench_shim.h"
#include "cli.h"
#include "commands.h"
#include "results.h"

#if defined(__has_include)
#if __has_include("bench_planner.h")
#include "bench_planner.h"
#define ADA_HAVE_PLANNER_HEADER 1
#endif
#endif
#ifndef ADA_HAVE_PLANNER_HEADER
int ada_bench_register_planner(const char *set); /* the planner helper's bench_planner.h */
#endif

extern char **environ;

enum { MAX_VARIANTS = 32 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: adaload bench [--set quick|wan|sweep] [--variant V ...] [--with-peers]\n"
            "                     [--repetitions N] [--min-time S] [--filter REGEX] [--out DIR]\n"
            "                     [--no-gpu] [--list-shapes]\n"
            "  Times the LayerNorm-Modulate variants (and a device-to-device copy of the same\n"
            "  bytes, the ceiling), the float64 reference and the planner on the CPU, with\n"
            "  Google Benchmark, into results/<testbed>/<UTC time>_<sha7>/ (or DIR).\n"
            "  --set S          shape set: wan (default; Wan 2.1/2.2 sizes), sweep (D = 256..16384),\n"
            "                   quick (CI smoke test, seconds)\n"
            "  --variant V      only these kernel variants (repeatable, or comma-separated)\n"
            "  --with-peers     also time PyTorch (eager, torch.compile, Wan's fp32 chain) on the\n"
            "                   same shapes: harness/peers/torch_peers.py, needs python3 + torch\n"
            "  --repetitions N  repetitions per benchmark, median reported (default 9; quick: 3)\n"
            "  --min-time S     minimum measured time per repetition in seconds (default 0.01;\n"
            "                   a graph-timed sample costs K times its measured time in wall time)\n"
            "  --filter REGEX   only benchmarks whose name matches (POSIX extended regex)\n"
            "  --out DIR        write into DIR (created; must not hold a bench.json yet)\n"
            "  --no-gpu         CPU benchmarks only\n"
            "  --list-shapes    print the set's shapes as JSON (the peers script reads it) and exit\n"
            "  Without a CUDA device the GPU benchmarks are skipped by name and the CPU ones run.\n"
            "  exit: 0 ok, 1 a benchmark or the peers failed, 2 bad usage, 77 nothing ran here\n");
}

typedef struct {
    regex_t re;
    int on;
} name_filter;

static int match_name(const char *name, void *arg)
{
    name_filter *f = arg;
    return !f->on || regexec(&f->re, name, 0, NULL, 0) == 0;
}

static char *join_cmdline(int argc, char **argv)
{
    size_t n = strlen("adaload") + 1;
    for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    strcpy(s, "adaload");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* Runs argv (PATH searched) and returns its exit status, or -1 when it could not start. */
static int run_program(char *const argv[])
{
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int python_has_torch(void)
{
    char *argv[] = {"python3", "-c", "import torch", NULL};
    /* Quiet: the import error is expected on machines without torch. */
    pid_t pid;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return 0;
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 0;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* PyTorch peers into <dir>/peers.json: 0 ran, 1 failed, 77 skipped (said why). */
static int run_peers(const char *dir, const ada_shape *shapes, int64_t nshapes, int reps,
                     double min_time, const char *filter)
{
    if (!python_has_torch()) {
        printf("peers skipped: python3 with torch not found\n");
        return ADA_EXIT_SKIP;
    }
    char shapes_path[] = "/tmp/adaload-shapes-XXXXXX";
    int fd = mkstemp(shapes_path);
    if (fd < 0) {
        ada_msg("bench", "peers: cannot create a temporary file: %s", strerror(errno));
        return ADA_EXIT_FAIL;
    }
    close(fd);
    json_t *js = ada_shapes_json(shapes, nshapes);
    int bad = !js || ada_write_json_atomic(shapes_path, js);
    json_decref(js);
    if (bad) {
        remove(shapes_path);
        ada_msg("bench", "peers: cannot write the shape list");
        return ADA_EXIT_FAIL;
    }
    char script[4096], out[4096], reps_s[32], mt_s[32];
    snprintf(script, sizeof script, "%s/harness/peers/torch_peers.py", ada_source_dir());
    snprintf(out, sizeof out, "%s/peers.json", dir);
    snprintf(reps_s, sizeof reps_s, "%d", reps);
    snprintf(mt_s, sizeof mt_s, "%g", min_time);
    char *argv[16];
    int k = 0;
    argv[k++] = "python3";
    argv[k++] = script;
    argv[k++] = "--shapes";
    argv[k++] = shapes_path;
    argv[k++] = "--out";
    argv[k++] = out;
    argv[k++] = "--repetitions";
    argv[k++] = reps_s;
    argv[k++] = "--min-time";
    argv[k++] = mt_s;
    if (filter) {
        argv[k++] = "--filter";
        argv[k++] = (char *)filter;
    }
    argv[k] = NULL;
    printf("peers: python3 %s\n", script);
    fflush(stdout);
    int rc = run_program(argv);
    remove(shapes_path);
    if (rc == ADA_EXIT_SKIP) {
        printf("peers skipped: torch sees no CUDA device\n");
        return ADA_EXIT_SKIP;
    }
    if (rc != 0) {
        ada_msg("bench", "peers: torch_peers.py failed (exit %d); ours are kept", rc);
        return ADA_EXIT_FAIL;
    }
    return ADA_EXIT_OK;
}

/* Moves Google Benchmark's file to bench.json once it parses as strict JSON. */
static int publish_json(const char *tmp, const char *final)
{
    json_error_t je;
    json_t *j = json_load_file(tmp, 0, &je);
    if (!j) {
        ada_msg("bench", "%s:%d: Google Benchmark wrote invalid JSON: %s", tmp, je.line, je.text);
        remove(tmp);
        return -1;
    }
    json_decref(j);
    if (rename(tmp, final) != 0) {
        ada_msg("bench", "cannot rename %s to %s: %s", tmp, final, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* A run folder this command created and could not fill is removed again, so results/
 * never holds a run without its numbers. */
static void discard_run(const char *dir)
{
    static const char *const files[] = {"meta.json", "bench.json", "peers.json",
                                        "customSmallerIsBetter.json", "customBiggerIsBetter.json"};
    char p[4096];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        remove(p);
    }
    if (rmdir(dir) != 0) ada_msg("bench", "left %s behind: %s", dir, strerror(errno));
}

static int dir_is_new_or_fresh(const char *dir)
{
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s/bench.json", dir);
    return stat(p, &st) != 0;
}

int cmd_bench(int argc, char **argv)
{
    const char *set = "wan", *filter = NULL, *out_dir = NULL;
    char *run_filter = NULL; /* filter plus the copy ceilings, for the run and the peers */
    const char *variants[MAX_VARIANTS];
    char *variant_buf[MAX_VARIANTS] = {0};
    int64_t nvariants = 0, reps = -1;
    double min_time = -1;
    int with_peers = 0, no_gpu = 0, list_shapes = 0, rc = ADA_EXIT_OK;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            goto done;
        } else if (!strcmp(a, "--set") && has_next) {
            set = argv[++i];
        } else if (!strcmp(a, "--variant") && has_next) {
            char *copy = strdup(argv[++i]), *save = NULL;
            if (!copy) return ada_usage_error("bench", "out of memory");
            int64_t slot = -1;
            for (int64_t k = 0; k < MAX_VARIANTS; k++)
                if (!variant_buf[k]) {
                    slot = k;
                    break;
                }
            if (slot < 0) {
                free(copy);
                rc = ada_usage_error("bench", "--variant: too many");
                goto done;
            }
            variant_buf[slot] = copy;
            for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (nvariants >= MAX_VARIANTS) {
                    rc = ada_usage_error("bench", "--variant: more than %d variants", MAX_VARIANTS);
                    goto done;
                }
                variants[nvariants++] = t;
            }
        } else if (!strcmp(a, "--repetitions") && has_next) {
            if (ada_parse_i64(argv[++i], 1, 1000, &reps)) {
                rc = ada_usage_error("bench", "--repetitions: '%s' is not an integer in [1, 1000]", argv[i]);
                goto done;
            }
        } else if (!strcmp(a, "--min-time") && has_next) {
            if (ada_parse_double(argv[++i], &min_time) || min_time <= 0 || min_time > 60) {
                rc = ada_usage_error("bench", "--min-time: '%s' is not a number of seconds in (0, 60]", argv[i]);
                goto done;
            }
        } else if (!strcmp(a, "--filter") && has_next) {
            filter = argv[++i];
        } else if (!strcmp(a, "--out") && has_next) {
            out_dir = argv[++i];
        } else if (!strcmp(a, "--with-peers")) {
            with_peers = 1;
        } else if (!strcmp(a, "--no-gpu")) {
            no_gpu = 1;
        } else if (!strcmp(a, "--list-shapes")) {
            list_shapes = 1;
        } else if (!strncmp(a, "--", 2) && !has_next &&
                   (!strcmp(a, "--set") || !strcmp(a, "--variant") || !strcmp(a, "--repetitions") ||
                    !strcmp(a, "--min-time") || !strcmp(a, "--filter") || !strcmp(a, "--out"))) {
            rc = ada_usage_error("bench", "%s needs a value", a);
            goto done;
        } else {
            rc = ada_usage_error("bench", "unknown argument '%s' (adaload bench --help)", a);
            goto done;
        }
    }

    ada_shape shapes[ADA_MAX_SHAPES];
    int64_t nshapes = ada_shape_set(set, shapes, ADA_MAX_SHAPES);
    if (nshapes < 0) {
        rc = ada_usage_error("bench", "--set: unknown set '%s' (quick, wan or sweep)", set);
        goto done;
    }
    int quick = !strcmp(set, "quick");
    if (reps < 0) reps = quick ? 3 : 9;
    /* 0.01 s: a repetition of a 1 ms kernel still averages ~10 samples, and graph-timed
     * shapes (whose wall time is about K + 45 us / t times their measured time) stay quick. */
    if (min_time < 0) min_time = 0.01;

    if (list_shapes) {
        json_t *js = ada_shapes_json(shapes, nshapes);
        char *s = js ? json_dumps(js, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
        if (s) printf("%s\n", s);
        free(s);
        json_decref(js);
        rc = s ? ADA_EXIT_OK : ADA_EXIT_FAIL;
        goto done;
    }

    for (int64_t v = 0; v < nvariants; v++)
        if (!ada_gpu_variant_known(variants[v])) {
            rc = ada_usage_error("bench", "--variant: no kernel variant '%s' (adaload verify --list)", variants[v]);
            goto done;
        }
    if (nvariants == 0) nvariants = ada_gpu_default_variants(variants, MAX_VARIANTS);

    name_filter nf = {.on = 0};
    if (filter) {
        int e = regcomp(&nf.re, filter, REG_EXTENDED | REG_NOSUB);
        if (e) {
            char eb[128];
            regerror(e, &nf.re, eb, sizeof eb);
            rc = ada_usage_error("bench", "--filter: bad regex '%s': %s", filter, eb);
            goto done;
        }
        nf.on = 1;
    }

    /* Register: CPU (reference, planner), then GPU (copy ceilings before variants). */
    ada_cpu_bench *cpu = NULL;
    ada_gpu_bench *gpu = NULL;
    int64_t n_cpu = ada_cpu_bench_setup(set, match_name, &nf, (int)reps, &cpu);
    int pl = ada_bench_register_planner(set);
    int64_t n_gpu = 0;
    int gpu_state = ADA_GPU_NONE;
    char msg[512] = "";
    if (n_cpu < 0 || pl < 0) {
        ada_msg("bench", "cannot set up the CPU benchmarks%s", pl < 0 ? " (planner)" : "");
        rc = ADA_EXIT_FAIL;
        goto cleanup;
    }
    if (no_gpu) {
        printf("GPU benchmarks off (--no-gpu)\n");
    } else {
        gpu_state = ada_gpu_bench_setup(shapes, nshapes, variants, nvariants, match_name, &nf,
                                        (int)reps, &gpu, &n_gpu, msg, sizeof msg);
        if (gpu_state == ADA_GPU_ERROR) {
            ada_msg("bench", "GPU set-up failed: %s", msg);
            rc = ADA_EXIT_FAIL;
            goto cleanup;
        }
    }

    /* The run folder. */
    char dir[3072], testbed[128];
    char *cmdline = join_cmdline(argc, argv);
    int made_dir = 0;
    if (out_dir) {
        if (ada_mkdirs(out_dir) || !dir_is_new_or_fresh(out_dir)) {
            rc = ada_usage_error("bench", "--out %s: cannot create it, or it already holds a bench.json "
                                          "(run folders are never edited)", out_dir);
            free(cmdline);
            goto cleanup;
        }
        snprintf(dir, sizeof dir, "%s", out_dir);
        if (ada_results_write_meta(dir, cmdline)) {
            ada_msg("bench", "%s/meta.json: cannot write: %s", dir, strerror(errno));
            rc = ADA_EXIT_FAIL;
            free(cmdline);
            goto cleanup;
        }
    } else {
        if (ada_results_testbed(testbed, sizeof testbed) ||
            ada_results_new_run(ada_source_dir(), testbed, cmdline, dir, sizeof dir)) {
            ada_msg("bench", "cannot create a run folder under %s/results: %s", ada_source_dir(), strerror(errno));
            rc = ADA_EXIT_FAIL;
            free(cmdline);
            goto cleanup;
        }
        made_dir = 1;
    }
    free(cmdline);

    ada_bench_add_context("adaload_set", set);
    char buf[64];
    snprintf(buf, sizeof buf, "%lld", (long long)reps);
    ada_bench_add_context("adaload_repetitions", buf);
    ada_bench_add_context("adaload_gpu", no_gpu ? "off (--no-gpu)" : gpu_state == ADA_GPU_OK ? "on" : msg);

    char tmp[4200], final[4200];
    snprintf(tmp, sizeof tmp, "%s/bench.json.tmp.%ld", dir, (long)getpid());
    snprintf(final, sizeof final, "%s/bench.json", dir);
    fflush(stdout);
    /* The filter chose the benchmarks at registration, copies included: a kernel benchmark
     * brings the copy ceiling of its bytes along even when the copy's name does not match.
     * The run-time filter (here and in the peers) must let those copies through. */
    if (filter) {
        size_t n = strlen(filter) + 16;
        run_filter = malloc(n);
        if (!run_filter) {
            ada_msg("bench", "out of memory");
            rc = ADA_EXIT_FAIL;
            if (made_dir) discard_run(dir);
            goto cleanup;
        }
        snprintf(run_filter, n, "(%s)|^copy/", filter);
    }
    int ran = ada_bench_run(tmp, run_filter, min_time);
    if (ran < 0 || publish_json(tmp, final)) {
        ada_msg("bench", "the benchmark run failed");
        rc = ADA_EXIT_FAIL;
        if (made_dir) discard_run(dir);
        goto cleanup;
    }

    int peers_rc = ADA_EXIT_SKIP;
    if (with_peers) {
        if (gpu_state != ADA_GPU_OK)
            printf("peers skipped: %s\n", no_gpu ? "--no-gpu" : msg);
        else
            peers_rc = run_peers(dir, shapes, nshapes, (int)reps, min_time, run_filter);
    }

    ada_bench_set results = {0};
    char err[512];
    if (ada_bench_load(dir, &results, err, sizeof err) || ada_bench_write_custom(dir, &results)) {
        ada_msg("bench", "%s", err[0] ? err : "cannot write the custom benchmark files");
        ada_bench_set_free(&results);
        rc = ADA_EXIT_FAIL;
        goto cleanup;
    }
    int64_t errors = 0;
    for (int64_t i = 0; i < results.n; i++)
        if (results.r[i].error) {
            errors++;
            ada_msg("bench", "%s: %s", results.r[i].name,
                    results.r[i].error_message ? results.r[i].error_message : "error");
        }
    ada_bench_set_free(&results);

    printf("run folder: %s\n", dir);
    if (errors > 0 || peers_rc == ADA_EXIT_FAIL)
        rc = ADA_EXIT_FAIL;
    else if (ran == 0)
        rc = ADA_EXIT_SKIP; /* nothing could run here (e.g. only GPU benchmarks selected) */

cleanup:
    ada_gpu_bench_free(gpu);
    ada_cpu_bench_free(cpu);
    if (nf.on) regfree(&nf.re);
done:
    free(run_filter);
    for (int64_t k = 0; k < MAX_VARIANTS; k++) free(variant_buf[k]);
    return rc;
}

/* cmd_gate.c -- `adaload gate`: CI's proof that the kernel sources in this tree were verified
 * on a real GPU. CI machines have no GPU, so the proof is a committed record:
 *
 *   adaload gate [--results DIR] [--hash H] [--hash-v2 H2]
 *
 * judges every DIR/<testbed>/verify/<run>/ record (verify-summary.json, else verify.json;
 * DIR defaults to <source tree>/results) by the rule of gate/gate.h and passes (exit 0) when
 * one is a passing full-grid GPU record (every case passed, every sanitizer clean) of these
 * kernel sources: a record of hash scheme 2 whose hash is H2 (default: this build's scheme-2
 * hash, ADALOAD_KERNEL_HASH_V2 -- comments and layout do not count), or an older record
 * (scheme 1) whose hash is H (default ADALOAD_KERNEL_HASH, the bytes of kernels/). Otherwise
 * exit 1, saying why for each record of these sources, or, when none has them, the hashes
 * and the command that makes one. A record that is not valid JSON or lacks the fields fails
 * the gate too (exit 1, naming the file): a broken record in the tree is a bug. Exit 2 on
 * bad usage or a --results that is not a folder, 3 when memory runs out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_util.h"
#include "build_info.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "gate.h"
#include "kernel_hash_v2.h"

#define CMD "gate"

static int bad_hash(const char *opt, const char *h)
{
    if (strlen(h) == 64 && strspn(h, "0123456789abcdef") == 64) return 0;
    ada_usage_error(CMD, "%s %s: must be 64 lower-case hex digits (a SHA-256)", opt, h);
    return 1;
}

int cmd_gate(int argc, char **argv)
{
    const char *results = NULL, *hash = ADALOAD_KERNEL_HASH, *hash2 = ADALOAD_KERNEL_HASH_V2;
    const cli_opt opts[] = {
        CLI_STR("--results", &results, "DIR", "the results folder (default <source tree>/results)"),
        CLI_STR("--hash", &hash, "H", "scheme-1 kernel source hash, 64 hex digits (default this build's)"),
        CLI_STR("--hash-v2", &hash2, "H2", "scheme-2 kernel source hash (default this build's)"),
        CLI_END};
    int r = cli_parse(CMD, opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload gate [--results DIR] [--hash H] [--hash-v2 H2]\n"
               "  Passes when DIR/<testbed>/verify/<run>/ holds a passing full-grid GPU record (every\n"
               "  case passed, every sanitizer clean) of these kernel sources: scheme-2 hash H2\n"
               "  (comments and layout do not count), or, for older records, scheme-1 hash H; or the\n"
               "  records of shards 1..N of N of the full grid (verify --shard K/N) and a sanitizer\n"
               "  record (verify --grid quick --sanitizers) of those sources, which it joins.\n");
        cli_print_options(stdout, opts);
        printf("exit: 0 a record passes, 1 none does (or a record is malformed), 2 bad usage\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (bad_hash("--hash", hash) || bad_hash("--hash-v2", hash2)) return ADA_EXIT_USAGE;
    char def[4200];
    if (!results) {
        snprintf(def, sizeof def, "%s/results", ada_source_dir());
        results = def;
    }
    struct stat st;
    int e = stat(results, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (e) return ada_usage_error(CMD, "--results %s: %s", results, strerror(e));
    gate_hashes h = {.v1 = hash, .v2 = hash2};
    gate_scan_result g;
    if (gate_scan(results, &h, &g) != GATE_OK) {
        gate_scan_free(&g);
        ada_msg(CMD, "out of memory");
        return ADA_EXIT_INTERNAL;
    }
    /* One message per note line, through ada_msg: control bytes quoted from a broken record
     * never reach the terminal. */
    for (char *save = NULL, *l = g.notes ? strtok_r(g.notes, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
        ada_msg(CMD, "%s", l);
    int rc = ADA_EXIT_FAIL;
    if (g.malformed) {
        ada_msg(CMD, "FAIL: %lld malformed verification record(s) under %s", (long long)g.malformed, results);
    } else if (g.passed) {
        fputs("adaload gate: ok: ", stdout);
        ada_fputs_escaped(g.pass_path, stdout); /* a folder name may hold a newline */
        printf(" is a passing GPU verification of kernel sources %s (scheme 2: %s)\n", hash, hash2);
        rc = ADA_EXIT_OK;
    } else if (g.matching == 0) {
        ada_msg(CMD,
                "FAIL: no verification record for kernel sources %s (scheme 2: %s; %lld record(s) under %s, "
                "none of these sources). Make one on a GPU machine: ./ci/build.sh build && ./build/adaload "
                "verify --grid full --sanitizers (or, where one call must stay short, verify --grid full --shard K/N for "
                "K = 1..N and verify --grid quick --sanitizers), then commit its results/<gpu>/verify/<run>/ folder(s).",
                hash, hash2, (long long)g.records, results);
    } else {
        ada_msg(CMD, "FAIL: %lld record(s) of kernel sources %s, none passing (see above)", (long long)g.matching, hash);
    }
    gate_scan_free(&g);
    return rc;
}

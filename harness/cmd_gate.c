/* cmd_gate.c -- `adaload gate`: CI's proof that the kernel sources in this tree were verified
 * on a real GPU. CI machines have no GPU, so the proof is a committed record:
 *
 *   adaload gate [--results DIR] [--hash H]
 *
 * scans DIR/<testbed>/<run>/verify.json (DIR defaults to <source tree>/results) and passes
 * (exit 0) when one record has kernel_source_hash == H (default: the hash embedded in this
 * build, ADALOAD_KERNEL_HASH, i.e. of kernels/ as configured), backend "cuda", grid "full",
 * all_passed true, a non-empty case list with every case passing, and every sanitizer
 * verdict "clean" (runs/run_gate.h). Otherwise exit 1, saying why for each record of this
 * hash, or, when none has it, the hash and the command that makes one. A record that is not
 * valid JSON or lacks those fields fails the gate too (exit 1, naming the file): a broken
 * record in the tree is a bug. Exit 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "build_info.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "run_gate.h"

#define CMD "gate"

int cmd_gate(int argc, char **argv)
{
    const char *results = NULL, *hash = ADALOAD_KERNEL_HASH;
    const cli_opt opts[] = {
        CLI_STR("--results", &results, "DIR", "the results folder (default <source tree>/results)"),
        CLI_STR("--hash", &hash, "H", "kernel source hash, 64 hex digits (default this build's)"),
        CLI_END};
    int r = cli_parse(CMD, opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload gate [--results DIR] [--hash H]\n"
               "  Passes when DIR/<testbed>/<run>/verify.json holds a passing full-grid GPU record\n"
               "  (every case passed, every sanitizer clean) for kernel source hash H.\n");
        cli_print_options(stdout, opts);
        printf("exit: 0 a record passes, 1 none does (or a record is malformed), 2 bad usage\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    if (strlen(hash) != 64 || strspn(hash, "0123456789abcdef") != 64)
        return ada_usage_error(CMD, "--hash %s: must be 64 lower-case hex digits (a SHA-256)", hash);
    char def[4200];
    if (!results) {
        snprintf(def, sizeof def, "%s/results", ada_source_dir());
        results = def;
    }
    ada_gate_result g;
    ada_gate_scan(results, hash, ada_note_stderr, (void *)CMD, &g);
    if (g.malformed) {
        ada_msg(CMD, "FAIL: %d malformed verification record(s) under %s", g.malformed, results);
        return ADA_EXIT_FAIL;
    }
    if (g.passed) {
        printf("adaload gate: ok: %s is a passing GPU verification of kernel sources %s\n", g.pass_path, hash);
        return ADA_EXIT_OK;
    }
    if (g.nmatch == 0)
        ada_msg(CMD,
                "FAIL: no verification record for kernel sources %s (%d record(s) under %s, none for "
                "this hash). Make one on a GPU machine: ./ci/build.sh build && ./build/adaload verify "
                "--grid full --sanitizers, then commit the new results/<gpu>/<run>/ folder.",
                hash, g.nrec, results);
    else
        ada_msg(CMD, "FAIL: %d record(s) for kernel sources %s, none passing (see above)", g.nmatch, hash);
    return ADA_EXIT_FAIL;
}

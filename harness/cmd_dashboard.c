/* cmd_dashboard.c -- `adaload dashboard`: the static results site (dashboard/dashboard.h).
 *
 *   adaload dashboard [--out DIR] [--results DIR] [--threshold PCT] [--alpha A]
 *
 * builds, from results/ (default <source tree>/results), one folder DIR (default
 * ./adaload-dashboard) holding index.html, app.js, style.css and data.js: open
 * DIR/index.html in a browser (file:// works, nothing is fetched from elsewhere). Per
 * testbed: the history of every benchmark, regressions between consecutive bench runs (the
 * rule of `adaload compare`, --threshold and --alpha as there), the latest run's variants,
 * the sweep, verification records per kernel hash, the planner. DIR is created when
 * missing; an index.html there that is not one of ours, or any of the four names that is not
 * a regular file, is refused with nothing written. Exit 0 ok, 2 bad usage, a results tree
 * that breaks the layout, or an output that cannot be written, 3 out of memory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "build_info.h"
#include "cli.h"
#include "cli_opts.h"
#include "commands.h"
#include "dashboard.h"
#include "kernel_hash_v2.h"

#define CMD "dashboard"

int cmd_dashboard(int argc, char **argv)
{
    const char *out = "adaload-dashboard", *results = NULL;
    double threshold_pct = 5.0, alpha = 0.05;
    const cli_opt opts[] = {
        CLI_STR("--out", &out, "DIR", "the site folder (default ./adaload-dashboard)"),
        CLI_STR("--results", &results, "DIR", "the results folder (default <source tree>/results)"),
        {.name = "--threshold", .kind = CLI_KIND_F64, .dst = &threshold_pct, .flo = 0, .fhi = 99.999999,
         .what = "a percentage in [0, 100)", .meta = "PCT", .help = "regression threshold in percent (default 5)"},
        {.name = "--alpha", .kind = CLI_KIND_F64, .dst = &alpha, .flo = 0, .fhi = 0.999999999, .flo_open = 1,
         .what = "a number in (0, 1)", .meta = "A", .help = "significance level (default 0.05)"},
        CLI_END};
    int r = cli_parse(CMD, opts, argc, argv, NULL, 0, NULL);
    if (r == CLI_HELP) {
        printf("usage: adaload dashboard [--out DIR] [--results DIR] [--threshold PCT] [--alpha A]\n"
               "  Writes the static results site (index.html, app.js, style.css, data.js) into DIR:\n"
               "  per testbed the benchmark history, regressions between consecutive bench runs,\n"
               "  the latest run's variants and sweep, verification records, the planner.\n");
        cli_print_options(stdout, opts);
        printf("exit: 0 ok, 2 bad usage, input or output, 3 out of memory\n");
        return ADA_EXIT_OK;
    }
    if (r != CLI_OK) return ADA_EXIT_USAGE;
    char def[4200];
    if (!results) {
        snprintf(def, sizeof def, "%s/results", ada_source_dir());
        results = def;
    }
    struct stat st;
    int e = stat(results, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (e) return ada_usage_error(CMD, "--results %s: %s", results, strerror(e));
    dash_opts o = {.hash_v1 = ADALOAD_KERNEL_HASH, .hash_v2 = ADALOAD_KERNEL_HASH_V2,
                   .threshold = threshold_pct > 0 ? threshold_pct / 100.0 : 1e-12, .alpha = alpha};
    json_t *data = NULL;
    char err[1024];
    dash_status s = dash_collect(results, &o, &data, err, sizeof err);
    if (s == DASH_OK) s = dash_write_site(out, data, err, sizeof err);
    size_t i, nbad = s == DASH_OK ? json_array_size(json_object_get(data, "bad_runs")) : 0;
    json_t *b;
    json_array_foreach(nbad ? json_object_get(data, "bad_runs") : NULL, i, b)
        ada_msg(CMD, "bad run, shown as such: %s", json_string_value(json_object_get(b, "why")));
    json_decref(data);
    if (s != DASH_OK) {
        ada_msg(CMD, "%s", err);
        return s == DASH_NOMEM ? ADA_EXIT_INTERNAL : ADA_EXIT_USAGE;
    }
    printf("adaload dashboard: %s/index.html (from %s)\n", out, results);
    return ADA_EXIT_OK;
}

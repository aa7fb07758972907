/* cmd_report_sweep.c -- `adaload report --sweep RUN`: the sweep view (runs/run_sweep.h) of a
 * run folder, % of copy against D, and with --out the same as an SVG plot (cmd_report.c has
 * the rules of --out: never into the run folder, never over anything but a regular file). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_output.h"
#include "cli.h"
#include "cmd_report.h"
#include "run_sweep.h"

/* 0 when out may be written: not inside the run folder, and nothing or a regular file there. */
static int check_out(const char *run, const char *out)
{
    struct stat st;
    if (lstat(out, &st) == 0 && !S_ISREG(st.st_mode))
        return ada_usage_error("report", "--out %s: exists and is not a regular file (not replaced)", out);
    char dir[PATH_MAX], rdir[PATH_MAX], rrun[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    if (!realpath(dir, rdir)) return ada_usage_error("report", "--out %s: folder %s: %s", out, dir, strerror(errno));
    if (!realpath(run, rrun)) return ada_usage_error("report", "%s: %s", run, strerror(errno));
    size_t n = strlen(rrun);
    if (!strncmp(rdir, rrun, n) && (rdir[n] == '\0' || rdir[n] == '/'))
        return ada_usage_error("report", "--out %s: inside the run folder; run folders are never edited", out);
    return ADA_EXIT_OK;
}

int report_sweep(const char *run, const cli_list *want, const char *shape, const char *out)
{
    if (out && check_out(run, out)) return ADA_EXIT_USAGE;
    ada_bench_set s = {0};
    int rc = report_load_run(run, &s);
    if (rc) return rc;
    ada_sweep w;
    char err[1024];
    if (ada_sweep_build(&s, want->v, want->n, shape, &w, err, sizeof err)) {
        ada_bench_set_free(&s);
        return ada_usage_error("report", "%s: %s", run, err);
    }
    ada_bench_set_free(&s);
    printf("Run `%s`. Medians of pct_copy_bw over the repetitions (%% of a device-to-device "
           "copy of the same bytes timed in the same run).\n\n", run);
    ada_sweep_print(stdout, &w);
    ada_sweep_bar_print(stdout, &w, "dtile"); /* issue 21's verdict, on the bar's slice only */
    if (out) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        char title[512];
        snprintf(title, sizeof title, "%s: %s", run, w.shape);
        int bad = !m || ada_sweep_svg(m, &w, title);
        if (m) bad = (fclose(m) != 0) || bad;
        if (bad || ada_write_file_atomic(out, buf, len)) {
            rc = ada_usage_error("report", "cannot write %s: %s", out, errno ? strerror(errno) : "I/O error");
        } else {
            printf("\nPlot: %s\n", out);
        }
        free(buf);
    }
    ada_sweep_free(&w);
    return rc;
}

/* dashboard_site.c -- writing the site folder (see dash_write_site in dashboard.h). Its files
 * are one transaction of common/ada_output.h: written to temporaries first and renamed only
 * when every one is ready, so a failed run leaves the previous site as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ada_output.h"
#include "dashboard_internal.h"

/* Every page this generator writes carries this line; an index.html without it is not ours. */
static const char marker[] = "<meta name=\"generator\" content=\"adaload dashboard\">";

enum { NFILES = 8 };

static dash_status check_target(const char *dir, const char *name, char *err, size_t en)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    if (lstat(p, &st) != 0) return DASH_OK;
    if (!S_ISREG(st.st_mode))
        return dash__fail(DASH_BAD_OUTPUT, err, en, "%s exists and is not a regular file: not replaced", p);
    if (strcmp(name, "index.html")) return DASH_OK;
    FILE *f = fopen(p, "r");
    char head[4096] = "";
    size_t k = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f) fclose(f);
    head[k] = '\0';
    if (!strstr(head, marker))
        return dash__fail(DASH_BAD_OUTPUT, err, en,
                          "%s is not a page of adaload dashboard: not replaced (give another --out)", p);
    return DASH_OK;
}

static dash_status write_files(const char *dir, const json_t *data, char *err, size_t en);

dash_status dash_write_site(const char *dir, const json_t *data, char *err, size_t en)
{
    struct stat st;
    int made = 0; /* a folder made here goes again when the site cannot be written */
    if (stat(dir, &st) != 0) {
        if (mkdir(dir, 0777) != 0) return dash__fail(DASH_BAD_OUTPUT, err, en, "%s: %s", dir, strerror(errno));
        made = 1;
    } else if (!S_ISDIR(st.st_mode)) {
        return dash__fail(DASH_BAD_OUTPUT, err, en, "%s exists and is not a folder", dir);
    }
    dash_status s = write_files(dir, data, err, en);
    if (s != DASH_OK && made) (void)rmdir(dir); /* only when empty: the transaction left nothing */
    return s;
}

static dash_status write_files(const char *dir, const json_t *data, char *err, size_t en)
{
    char *js = json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(7));
    if (!js) return dash__fail(DASH_NOMEM, err, en, "out of memory");
    const char *names[NFILES];
    const void *bytes[NFILES];
    size_t sizes[NFILES];
    int n = 0;
    for (const dash_asset *a = dash_assets; a->name && n < NFILES - 1; a++, n++) {
        names[n] = a->name;
        bytes[n] = a->data;
        sizes[n] = a->size;
    }
    static const char pre[] = "window.ADALOAD_DASHBOARD = ";
    size_t jl = strlen(js), dl = sizeof pre - 1 + jl + 2;
    char *datajs = malloc(dl + 1);
    if (!datajs) {
        free(js);
        return dash__fail(DASH_NOMEM, err, en, "out of memory");
    }
    snprintf(datajs, dl + 1, "%s%s;\n", pre, js);
    free(js);
    names[n] = "data.js";
    bytes[n] = datajs;
    sizes[n++] = dl;

    dash_status s = DASH_OK;
    int short_write = 0;
    for (int i = 0; i < n && s == DASH_OK; i++) s = check_target(dir, names[i], err, en);
    /* One transaction of common/ada_output.h: no file replaces its target until all are ready. */
    ada_outset *t = s == DASH_OK ? ada_outset_new("dashboard") : NULL;
    if (s == DASH_OK && !t) s = dash__fail(DASH_NOMEM, err, en, "out of memory");
    for (int i = 0; i < n && s == DASH_OK; i++) {
        char p[PATH_MAX + 32], why[1024] = "";
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        ada_out *o = ada_outset_add(t, p, p, why, sizeof why);
        if (!o)
            s = dash__fail(ada_outset_status(t) == ADA_OUT_ENOMEM ? DASH_NOMEM : DASH_BAD_OUTPUT, err, en, "%s",
                           why[0] ? why : p);
        else if (fwrite(bytes[i], 1, sizes[i], ada_out_file(o)) != sizes[i])
            short_write = 1; /* the commit below fails and says why (no space left ...) */
    }
    if (s == DASH_OK) {
        char why[1024] = "";
        if (ada_outset_commit(t, why, sizeof why) != ADA_OUT_OK) s = dash__fail(DASH_BAD_OUTPUT, err, en, "%s", why);
        else if (short_write) s = dash__fail(DASH_BAD_OUTPUT, err, en, "%s: a write came up short", dir);
    }
    ada_outset_free(t);
    free(datajs);
    return s;
}

/* dashboard_site.c -- writing the site folder (see dash_write_site in dashboard.h). All four
 * files are written to temporaries first and renamed only when every one is ready, so a
 * failed run leaves the previous site as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dashboard_internal.h"

/* Every page this generator writes carries this line; an index.html without it is not ours. */
static const char marker[] = "<meta name=\"generator\" content=\"adaload dashboard\">";

enum { NFILES = 8 };

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

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

dash_status dash_write_site(const char *dir, const json_t *data, char *err, size_t en)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (mkdir(dir, 0777) != 0) return dash__fail(DASH_BAD_OUTPUT, err, en, "%s: %s", dir, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        return dash__fail(DASH_BAD_OUTPUT, err, en, "%s exists and is not a folder", dir);
    }
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
    for (int i = 0; i < n && s == DASH_OK; i++) s = check_target(dir, names[i], err, en);
    char tmp[NFILES][PATH_MAX + 32];
    int made = 0;
    for (int i = 0; i < n && s == DASH_OK; i++, made++) {
        snprintf(tmp[i], sizeof tmp[i], "%s/.%s.tmp.%ld", dir, names[i], (long)getpid());
        int fd = open(tmp[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0 || write_all(fd, bytes[i], sizes[i]) != 0 || fsync(fd) != 0) {
            s = dash__fail(DASH_BAD_OUTPUT, err, en, "%s: %s", tmp[i], strerror(errno));
            if (fd >= 0) close(fd);
            made++;
            break;
        }
        if (close(fd) != 0) s = dash__fail(DASH_BAD_OUTPUT, err, en, "%s: %s", tmp[i], strerror(errno));
    }
    for (int i = 0; i < made; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        if (s == DASH_OK && rename(tmp[i], p) != 0)
            s = dash__fail(DASH_BAD_OUTPUT, err, en, "%s: %s", p, strerror(errno));
        if (s != DASH_OK) unlink(tmp[i]);
    }
    free(datajs);
    return s;
}

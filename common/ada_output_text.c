/* ada_output_text.c -- the helpers of ada_output.h that need no transaction state: the
 * canonical JSON text, one file or one JSON file written atomically, mkdir -p. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ada_output.h"

enum { PATH_CAP = 4096 };

char *ada_json_text(const json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    if (!s) return NULL;
    size_t len = strlen(s);
    char *buf = realloc(s, len + 2);
    if (!buf) {
        free(s);
        return NULL;
    }
    buf[len] = '\n';
    buf[len + 1] = '\0';
    return buf;
}

int ada_write_file_atomic(const char *path, const void *data, size_t len)
{
    ada_outset *t = ada_outset_new("");
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    errno = 0;
    ada_out *o = ada_outset_add(t, path, path, NULL, 0);
    FILE *f = o ? ada_out_file(o) : NULL;
    int rc = f && fwrite(data, 1, len, f) == len && ada_outset_commit(t, NULL, 0) == ADA_OUT_OK ? 0 : -1;
    int e = rc ? (errno ? errno : EIO) : 0; /* the transaction's failures set errno */
    ada_outset_free(t);
    errno = e;
    return rc;
}

int ada_write_json_atomic(const char *path, const json_t *v)
{
    char *s = ada_json_text(v);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    int rc = ada_write_file_atomic(path, s, strlen(s));
    int e = errno;
    free(s);
    errno = e;
    return rc;
}

int ada_mkdirs(const char *path)
{
    char buf[PATH_CAP];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = n ? ENAMETOOLONG : ENOENT;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

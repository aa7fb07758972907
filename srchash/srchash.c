/* srchash.c -- the kernel source hash of a folder under scheme 1 or 2 (see srchash.h). */
#include "srchash.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sh_strerror(sh_status s)
{
    switch (s) {
    case SH_OK: return "ok";
    case SH_IO: return "input/output error";
    case SH_NOMEM: return "out of memory";
    case SH_BAD_ARG: return "bad argument";
    }
    return "unknown status";
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

/* The file set of both schemes (kernels/source_hash.cmake's glob). */
static int hashed(const char *name)
{
    if (!strncmp(name, "test_", 5)) return 0;
    return ends_with(name, ".cu") || ends_with(name, ".cuh") || ends_with(name, ".h") ||
           ends_with(name, ".c") || ends_with(name, ".cmake") || !strcmp(name, "CMakeLists.txt");
}

static int by_bytes(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static sh_status read_file(const char *path, char **data, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return SH_IO;
    size_t cap = 1 << 16, k = 0;
    char *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + k, 1, cap - k, f)) > 0) {
        k += r;
        if (k == cap) {
            char *p = realloc(b, cap * 2);
            if (!p) {
                free(b);
                b = NULL;
                break;
            }
            b = p;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (!b) return SH_NOMEM;
    if (bad) {
        free(b);
        return SH_IO;
    }
    *data = b;
    *n = k;
    return SH_OK;
}

/* The hex hash of one file under the scheme. */
static sh_status file_hash(const char *path, const char *name, int scheme, char hex[SH_HEX])
{
    char *data = NULL, *norm = NULL;
    size_t n = 0, nn = 0;
    sh_status s = read_file(path, &data, &n);
    if (s != SH_OK) return s;
    if (scheme == 1) {
        sh_sha256_hex(data, n, hex);
    } else {
        int cm = ends_with(name, ".cmake") || !strcmp(name, "CMakeLists.txt");
        s = cm ? sh_normalize_cmake(data, n, &norm, &nn) : sh_normalize_c(data, n, &norm, &nn);
        if (s == SH_OK) sh_sha256_hex(norm, nn, hex);
        free(norm);
    }
    free(data);
    return s;
}

sh_status sh_dir_hash(const char *dir, int scheme, char hex[SH_HEX], char **lines, char *err, size_t en)
{
    if (lines) *lines = NULL;
    if (scheme != 1 && scheme != 2) {
        snprintf(err, en, "hash scheme %d: only 1 and 2 exist", scheme);
        return SH_BAD_ARG;
    }
    struct dirent **e = NULL;
    int k = scandir(dir, &e, NULL, by_bytes);
    if (k < 0) {
        snprintf(err, en, "%s: %s", dir, strerror(errno));
        return SH_IO;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    sh_status s = text ? SH_OK : SH_NOMEM;
    for (int i = 0; i < k; i++) {
        const char *name = e[i]->d_name;
        if (s == SH_OK && hashed(name)) {
            char path[4096], h[SH_HEX];
            if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
                snprintf(err, en, "%s/%s: path too long", dir, name);
                s = SH_BAD_ARG;
            } else if ((s = file_hash(path, name, scheme, h)) != SH_OK) {
                snprintf(err, en, "%s: %s", path, s == SH_IO ? strerror(errno) : sh_strerror(s));
            } else {
                size_t need = strlen(name) + 1 + 64 + 2;
                if (len + need >= cap) {
                    while (len + need >= cap) cap *= 2;
                    char *p = realloc(text, cap);
                    if (!p) s = SH_NOMEM;
                    else text = p;
                }
                if (s == SH_OK) len += (size_t)snprintf(text + len, cap - len, "%s %s\n", name, h);
            }
        }
        free(e[i]);
    }
    free(e);
    if (s == SH_NOMEM) snprintf(err, en, "out of memory");
    if (s != SH_OK) {
        free(text);
        return s;
    }
    text[len] = '\0';
    sh_sha256_hex(text, len, hex);
    if (lines) *lines = text;
    else free(text);
    return SH_OK;
}

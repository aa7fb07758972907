/* catalog_internal.h -- helpers shared by the catalog's files (not part of its manual). */
#ifndef ADALOAD_CATALOG_INTERNAL_H
#define ADALOAD_CATALOG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

cat_status cat__fail(cat_status s, char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
char *cat__strdup(const char *s);
int cat__is_dir(const char *p);
/* "a/b" and "a/b/c" into out; -1 (out holds a truncated path) when it does not fit. */
int cat__join(char *out, size_t n, const char *a, const char *b);
int cat__join3(char *out, size_t n, const char *a, const char *b, const char *c);
char **cat__list(const char *dir, int64_t *n);
void cat__list_free(char **l, int64_t n);

/* Sets r->measured (and the verify_* fields of a verify run) from the files in dir. */
cat_status cat__measure(const char *dir, cat_run *r, char *err, size_t en);

#endif

/* test_failalloc.c -- a test-only LD_PRELOAD library: malloc, calloc and realloc fail
 * (return NULL) for any request above $ADALOAD_FAIL_ABOVE bytes, so the exit-code test can
 * drive a subcommand into "out of memory" (exit 3) deterministically. Never linked into
 * adaload; not built under the sanitizers (their runtime must come first). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

static size_t limit(void)
{
    static size_t l;
    if (!l) {
        const char *e = getenv("ADALOAD_FAIL_ABOVE");
        l = e ? (size_t)strtoull(e, NULL, 10) : (size_t)-1;
    }
    return l;
}

void *malloc(size_t n)
{
    static void *(*real)(size_t);
    if (!real) real = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    return n > limit() ? NULL : real(n);
}

void *calloc(size_t a, size_t b)
{
    static void *(*real)(size_t, size_t);
    if (!real) real = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    return (b && a > limit() / b) ? NULL : real(a, b);
}

void *realloc(void *p, size_t n)
{
    static void *(*real)(void *, size_t);
    if (!real) real = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    return n > limit() ? NULL : real(p, n);
}

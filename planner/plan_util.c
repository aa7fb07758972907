/* plan_util.c -- the planner's small shared pieces: status and enum names, the error
 * formatter and the heap accounting (see plan_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

const char *plan_strerror(plan_status s)
{
    switch (s) {
    case PLAN_OK: return "ok";
    case PLAN_ERR_USAGE: return "bad option value";
    case PLAN_ERR_INPUT: return "bad input file";
    case PLAN_ERR_IO: return "cannot read an input";
    case PLAN_ERR_OVERSIZE: return "a sample exceeds the memory budget";
    case PLAN_ERR_WRITE: return "cannot write an output";
    case PLAN_ERR_NOMEM: return "out of memory";
    }
    return "unknown status";
}

const char *plan_policy_name(plan_policy p)
{
    return p == PLAN_POLICY_DUAL ? "dual" : "equal-token";
}

const char *plan_assign_name(plan_assign a)
{
    return a == PLAN_ASSIGN_SAME_BUCKET ? "same-bucket" : "random";
}

const char *plan_binding_name(plan_binding b)
{
    switch (b) {
    case PLAN_BIND_MEMORY: return "memory";
    case PLAN_BIND_COMPUTE: return "compute";
    case PLAN_BIND_FLOOR: return "floor";
    }
    return "?";
}

plan_status plan_fail(plan_error *err, plan_status st, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

static void heap_add(plan_heap *h, size_t n)
{
    h->cur += n;
    if (h->cur > h->peak) h->peak = h->cur;
}

void *plan_heap_alloc(plan_heap *h, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p) heap_add(h, n);
    return p;
}

void *plan_heap_calloc(plan_heap *h, size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p) heap_add(h, n);
    return p;
}

void *plan_heap_realloc(plan_heap *h, void *p, size_t old, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) return NULL;
    /* Counted as old + new for the instant of the copy: realloc may need both. */
    heap_add(h, n);
    h->cur -= old;
    return q;
}

void plan_heap_free(plan_heap *h, void *p, size_t n)
{
    if (!p) return;
    free(p);
    h->cur -= n;
}

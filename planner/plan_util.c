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
    switch (a) {
    case PLAN_ASSIGN_RANDOM: return "random";
    case PLAN_ASSIGN_SAME_BUCKET: return "same-bucket";
    case PLAN_ASSIGN_SORTED_WINDOW: return "sorted-window";
    case PLAN_ASSIGN_LPT: return "lpt";
    case PLAN_ASSIGN_KK: return "kk";
    case PLAN_ASSIGN_VERL_KK: return "verl-kk";
    case PLAN_ASSIGN_SORT_LENGTH: return "sort-by-length";
    }
    return "?";
}

int plan_assign_per_window(plan_assign a)
{
    return a == PLAN_ASSIGN_LPT || a == PLAN_ASSIGN_KK;
}

int plan_assign_windowed(plan_assign a)
{
    return a >= PLAN_ASSIGN_SORTED_WINDOW && a < PLAN_NASSIGN;
}

double plan_verl_workload(int64_t S)
{
    return 24576.0 * (double)S + (double)S * (double)S;
}

const char *plan_parallel_name(plan_parallel p)
{
    switch (p) {
    case PLAN_PARALLEL_MODEL: return "model";
    case PLAN_PARALLEL_DDP: return "ddp";
    case PLAN_PARALLEL_ZERO1: return "zero1";
    case PLAN_PARALLEL_ZERO2: return "zero2";
    case PLAN_PARALLEL_ZERO3: return "zero3";
    }
    return "?";
}

const char *plan_comp_model_name(plan_comp_model c)
{
    return c == PLAN_COMP_POWER ? "power" : "cost";
}

const char *plan_binding_name(plan_binding b)
{
    switch (b) {
    case PLAN_BIND_MEMORY: return "memory";
    case PLAN_BIND_COMPUTE: return "compute";
    case PLAN_BIND_TOKENS: return "tokens";
    case PLAN_BIND_FLOOR: return "floor";
    case PLAN_BIND_RANGE: return "range";
    case PLAN_NBIND: break;
    }
    return "?";
}

const char *plan_warning_text(unsigned bit)
{
    switch (bit) {
    case PLAN_WARN_ONE_SHAPE:
        return "the manifest has one shape: every policy gives the same batch size, and the "
               "plan shows nothing about balancing";
    case PLAN_WARN_P_ZERO_RANGE:
        return "p was fitted over a token range of zero width: it is the local slope dlnC/dlnS "
               "at that one length, not a fit";
    case PLAN_WARN_FORCED_MEM:
        return "--mem-tokens is above what the memory model allows (--force): micro-batches "
               "may run out of memory";
    case PLAN_WARN_UNSHARDED_GRADS:
        return "lpt/kk accumulate gradients over a window without a sync (DDP no_sync): under "
               "zero2/zero3 the gradients are kept unsharded on every rank, and the fixed bytes "
               "count them so (--parallel ddp or zero1 says which layout you run)";
    case PLAN_WARN_RANGE_CLAMPED:
        return "batch sizes clamped to the profile's measured range (batch and tokens per "
               "micro-batch; binding 'range'): measure larger micro-batches, or --extrapolate";
    case PLAN_WARN_EXTRAPOLATED:
        return "micro-batches outside the profile's measured range (--extrapolate, or samples "
               "longer than any measured): their memory is extrapolated, not measured";
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
        /* One line, safe on a terminal: text quoted from inputs or from jansson may carry
         * newlines or control bytes. */
        for (char *c = err->msg; *c; c++)
            if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f) *c = '?';
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

/* Length of the valid UTF-8 character at s (n bytes available), or 0: no overlong forms, no
 * surrogates, nothing above U+10FFFF (RFC 3629). */
size_t plan_utf8_char(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return 0;
    if (u[0] < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF;
    if (u[0] >= 0xC2 && u[0] <= 0xDF) len = 2;
    else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
        len = 3;
        if (u[0] == 0xE0) lo = 0xA0;
        if (u[0] == 0xED) hi = 0x9F;
    } else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
        len = 4;
        if (u[0] == 0xF0) lo = 0x90;
        if (u[0] == 0xF4) hi = 0x8F;
    } else return 0;
    if (n < len) return 0;
    if (u[1] < lo || u[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (u[i] < 0x80 || u[i] > 0xBF) return 0;
    return len;
}

int plan_utf8_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = plan_utf8_char(s + i, n - i);
        if (!k) return 0;
        i += k;
    }
    return 1;
}

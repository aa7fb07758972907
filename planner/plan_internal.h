/* plan_internal.h -- what the planner's translation units share and nobody else sees: the
 * streaming CSV reader, the manifest's layout, the error formatter and the heap accounting
 * used for the bytes-per-sample figure. Not installed, not part of the API (planner.h is).
 */
#ifndef ADALOAD_PLAN_INTERNAL_H
#define ADALOAD_PLAN_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "planner.h"

/* Formats err->msg (printf style); returns st so callers can `return plan_fail(...)`. */
plan_status plan_fail(plan_error *err, plan_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* UTF-8 (RFC 3629): the length of the valid character at s, or 0; whether s[0..n) is valid. */
size_t plan_utf8_char(const char *s, size_t n);
int plan_utf8_valid(const char *s, size_t n);

/* Heap accounting: every large array of a manifest or a result goes through these, so the
 * benchmark can report a deterministic bytes-per-sample figure (the high-water mark). */
typedef struct {
    size_t cur, peak;
} plan_heap;
void *plan_heap_alloc(plan_heap *h, size_t n);                      /* malloc */
void *plan_heap_calloc(plan_heap *h, size_t n);                     /* zeroed */
void *plan_heap_realloc(plan_heap *h, void *p, size_t old, size_t n);
void plan_heap_free(plan_heap *h, void *p, size_t n);

/* ---- streaming CSV (plan_csv.c) ---------------------------------------------------------------------- */
typedef struct {
    const char *s; /* not NUL-terminated; quotes removed, "" unescaped */
    size_t n;
} csv_field;

typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap, beg, end;
    uint64_t line; /* 1-based number of the line last returned */
    int eof;
    plan_heap *heap;
} csv_reader;

plan_status csv_open(csv_reader *r, const char *path, plan_heap *heap, plan_error *err);
void csv_close(csv_reader *r);
/* Next line without its line end (\n or \r\n): 1 got one, 0 end of file, or -(status). The
 * line stays valid (and writable) until the next call. */
int csv_next_line(csv_reader *r, char **line, size_t *len, plan_error *err);
/* Splits a line into fields (RFC 4180 quotes, no newline inside quotes). Stores at most maxf
 * fields and returns how many the line has, or -1 on a quoting error (err says where). */
int64_t csv_split(const csv_reader *r, char *line, size_t len, csv_field *f, size_t maxf,
                  plan_error *err);
/* A field with spaces and tabs trimmed at both ends. */
csv_field csv_trim(csv_field f);
/* 1 if the line holds only spaces and tabs. */
int csv_blank(const char *line, size_t len);

/* ---- the manifest ----------------------------------------------------------------------- */
struct plan_manifest {
    char *path;
    int64_t n;              /* samples */
    uint32_t *bucket;       /* per sample: index into buckets (sorted order) */
    int ids_kept;
    int ids_are_lines;      /* 1: no id column, ids are line numbers (id_off holds them) */
    uint64_t *id_off;       /* per sample: offset into arena, or the line number */
    char *arena;            /* NUL-terminated ids one after another */
    size_t arena_len, arena_cap;
    int64_t nb;
    plan_bucket_shape *buckets;
    size_t cap_samples;
    plan_heap heap;
};

/* ---- stages of plan_build (each fills its part of the result) ------------------------------ */
/* Batch size and binding constraint of every kept bucket (plan_policy.c). */
void plan_size_buckets(plan_result *r);
/* The compute a sample of S tokens counts against M_comp: C(S) or S^p. */
double plan_comp_units(const plan_result *r, int64_t S);
/* floor(x) with a relative slack of 1e-12, clamped at 1e15. */
int64_t plan_floor_ratio(double x);
/* Groups the samples by bucket, shuffles each bucket with the seed, cuts micro-batches, then
 * deals them to ranks step by step (plan_assign.c). */
plan_status plan_make_microbatches(plan_result *r, const plan_manifest *mf, plan_heap *h,
                                   plan_error *err);
plan_status plan_assign_ranks(plan_result *r, plan_heap *h, plan_error *err);
/* Window assignments (plan_window.c): reorders seq (nmicro micro-batch indices in the random
 * order) window by window into r->slots, r->steps and, for lpt and kk, r->group_first. */
plan_status plan_assign_windows(plan_result *r, const uint32_t *seq, plan_heap *h, plan_error *err);
/* Per step and rank loads, memory and the metrics (plan_sim.c). */
plan_status plan_simulate(plan_result *r, plan_error *err);


#endif

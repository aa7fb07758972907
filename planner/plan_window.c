/* plan_window.c -- the cost-aware assignments. The random sequence of micro-batches is cut in
 * windows of W * gpus consecutive micro-batches (the last window may be shorter); each window
 * keeps its micro-batches (so with W-step gradient accumulation an optimizer step sees the
 * same samples as under random) and only their placement changes:
 *   sorted-window  sorted by predicted cost, descending (ties: the earlier in the sequence),
 *                  and dealt gpus per step in that order (odd steps from the last rank to
 *                  the first, so no rank always gets the heaviest): each step's ranks carry
 *                  neighbours in cost. Ranks still synchronize every step (FSDP-safe). A short
 *                  window's last step has idle ranks.
 *   lpt            longest processing time first: sorted as above, each micro-batch goes to
 *                  the rank with the least load so far (ties: the lowest rank).
 *   kk             Karmarkar-Karp largest differencing for gpus-way partitions: every
 *                  micro-batch starts as a partition of its own; the two partitions with the
 *                  largest max - min are merged (heaviest part of one with the lightest of
 *                  the other) until one is left; part k (by load, descending) goes to rank k.
 *   verl-kk        (a baseline: verl's dynamic-batch balancer) each micro-batch weighs its
 *                  samples' 24576 S + S^2 (verl's stock workload, not this planner's cost);
 *                  equal-size Karmarkar-Karp: sorted by weight, cut in groups of gpus
 *                  consecutive items (padded with empty slots), each group a partition of
 *                  one item per part, then merged as kk; each rank's part in weight order,
 *                  step j runs every rank's j-th: equal counts, a sync every step.
 *   sort-by-length (a baseline: length-grouped samplers) sorted by tokens per sample,
 *                  descending, dealt gpus per step left to right.
 *   For lpt and kk the ranks run different numbers of micro-batches in a window and
 *   synchronize once at its end (DDP with no_sync; not FSDP): the window's steps are as many
 *   as the busiest rank's micro-batches, a rank that has run out idles.
 * Loads are t0 + count * C(S) per micro-batch. All ties are broken by index, so the plan is
 * the same on every machine.
 */
#include <stdlib.h>
#include <string.h>

#include "plan_internal.h"

typedef struct {
    double c;
    uint32_t k; /* micro-batch */
    uint32_t pos; /* position in the window, the tie-break */
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->c != y->c) return x->c > y->c ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* ---- Karmarkar-Karp --------------------------------------------------------------------- */
typedef struct {
    double sum;
    int32_t head, tail; /* list of items through next[] */
} part;

typedef struct {
    int64_t R;
    part *parts;   /* n x R: partition p's parts, by sum descending */
    int32_t *next; /* per item */
    int32_t *heap; /* partitions, max-heap by (spread, -index) */
    int64_t nheap;
} kk_state;

static double spread(const kk_state *s, int32_t p)
{
    return s->parts[(int64_t)p * s->R].sum - s->parts[(int64_t)p * s->R + s->R - 1].sum;
}

static int above(const kk_state *s, int32_t a, int32_t b)
{
    double x = spread(s, a), y = spread(s, b);
    return x != y ? x > y : a < b;
}

static void heap_push(kk_state *s, int32_t p)
{
    int64_t i = s->nheap++;
    s->heap[i] = p;
    while (i > 0 && above(s, s->heap[i], s->heap[(i - 1) / 2])) {
        int32_t t = s->heap[i];
        s->heap[i] = s->heap[(i - 1) / 2];
        s->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static int32_t heap_pop(kk_state *s)
{
    int32_t top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    int64_t i = 0;
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && above(s, s->heap[l], s->heap[m])) m = l;
        if (r < s->nheap && above(s, s->heap[r], s->heap[m])) m = r;
        if (m == i) break;
        int32_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
    return top;
}

/* Merges partition b into a: part k of a with part R-1-k of b, then re-sorts a. */
static void merge(kk_state *s, int32_t a, int32_t b)
{
    int64_t R = s->R;
    part *pa = s->parts + (int64_t)a * R, *pb = s->parts + (int64_t)b * R;
    for (int64_t k = 0; k < R; k++) {
        part *x = &pa[k], *y = &pb[R - 1 - k];
        x->sum += y->sum;
        if (y->head < 0) continue;
        if (x->head < 0) {
            x->head = y->head;
        } else {
            s->next[x->tail] = y->head;
        }
        x->tail = y->tail;
    }
    /* Insertion sort, descending by sum; stable, so ties keep their order. */
    for (int64_t i = 1; i < R; i++) {
        part t = pa[i];
        int64_t j = i;
        while (j > 0 && pa[j - 1].sum < t.sum) {
            pa[j] = pa[j - 1];
            j--;
        }
        pa[j] = t;
    }
}

/* Partitions it[0..n) into R rank lists: head[r] through next[] (indices into it). */
static void kk_partition(kk_state *s, const item *it, int64_t n, int32_t *head)
{
    int64_t R = s->R;
    s->nheap = 0;
    for (int64_t i = 0; i < n; i++) {
        part *p = s->parts + i * R;
        p[0].sum = it[i].c;
        p[0].head = p[0].tail = (int32_t)i;
        for (int64_t k = 1; k < R; k++) {
            p[k].sum = 0;
            p[k].head = p[k].tail = -1;
        }
        s->next[i] = -1;
        heap_push(s, (int32_t)i);
    }
    while (s->nheap > 1) {
        int32_t a = heap_pop(s), b = heap_pop(s);
        merge(s, a, b);
        heap_push(s, a);
    }
    const part *fin = s->parts + (int64_t)s->heap[0] * R;
    for (int64_t k = 0; k < R; k++) head[k] = fin[k].head;
}

/* Equal-size KK: it[0..n) sorted by weight descending, n a multiple of R (padding items of
 * weight 0 included); each group of R consecutive items starts as a partition of one item
 * per part. Same rank lists as kk_partition. */
static void kk_partition_equal(kk_state *s, const item *it, int64_t n, int32_t *head)
{
    int64_t R = s->R, ng = n / R;
    s->nheap = 0;
    for (int64_t g = 0; g < ng; g++) {
        part *p = s->parts + g * R;
        for (int64_t k = 0; k < R; k++) {
            int64_t i = g * R + k;
            p[k].sum = it[i].c;
            p[k].head = p[k].tail = (int32_t)i;
            s->next[i] = -1;
        }
        heap_push(s, (int32_t)g);
    }
    while (s->nheap > 1) {
        int32_t a = heap_pop(s), b = heap_pop(s);
        merge(s, a, b);
        heap_push(s, a);
    }
    const part *fin = s->parts + (int64_t)s->heap[0] * R;
    for (int64_t k = 0; k < R; k++) head[k] = fin[k].head;
}

/* ---- LPT -------------------------------------------------------------------------------- */
/* it sorted by cost descending; builds the same rank lists as kk_partition. */
static void lpt_partition(const item *it, int64_t n, int64_t R, double *load, int32_t *head,
                          int32_t *tail, int32_t *next)
{
    for (int64_t k = 0; k < R; k++) {
        load[k] = 0;
        head[k] = tail[k] = -1;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t best = 0;
        for (int64_t k = 1; k < R; k++)
            if (load[k] < load[best]) best = k;
        load[best] += it[i].c;
        next[i] = -1;
        if (head[best] < 0) head[best] = (int32_t)i;
        else next[tail[best]] = (int32_t)i;
        tail[best] = (int32_t)i;
    }
}

/* ---- the driver ------------------------------------------------------------------------- */
static plan_status grow_slots(plan_result *r, size_t *cap, int64_t need_steps, plan_heap *h,
                              plan_error *err)
{
    size_t R = (size_t)r->cfg.gpus, need = (size_t)need_steps * R;
    if (need <= *cap) return PLAN_OK;
    size_t ncap = *cap ? *cap : 1024 * R;
    while (ncap < need) ncap += ncap / 2;
    uint32_t *ns = plan_heap_realloc(h, r->slots, *cap * 4, ncap * 4);
    if (!ns) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld steps", (long long)need_steps);
    r->slots = ns;
    *cap = ncap;
    return PLAN_OK;
}

plan_status plan_assign_windows(plan_result *r, const uint32_t *seq, plan_heap *h, plan_error *err)
{
    int64_t R = r->cfg.gpus, W = r->cfg.window, per = W * R, n_all = r->nmicro;
    int64_t nwin = (n_all + per - 1) / per;
    plan_assign mode = r->cfg.assign;
    int windowed_sync = plan_assign_per_window(mode);
    size_t isz = (size_t)per * sizeof(item), rsz = (size_t)R * (8 + 4 + 4 + 4);
    item *it = plan_heap_alloc(h, isz);
    char *rk = plan_heap_alloc(h, rsz);
    int32_t *next = plan_heap_alloc(h, (size_t)per * 4);
    kk_state kk = {R, NULL, next, NULL, 0};
    int kkmode = mode == PLAN_ASSIGN_KK || mode == PLAN_ASSIGN_VERL_KK;
    size_t kksz = kkmode ? (size_t)per * (size_t)R * sizeof(part) : 0;
    size_t rksz = mode == PLAN_ASSIGN_VERL_KK ? (size_t)W * 4 : 0;
    int32_t *it_rank = rksz ? plan_heap_alloc(h, rksz) : NULL;
    if (kksz) {
        kk.parts = plan_heap_alloc(h, kksz);
        kk.heap = plan_heap_alloc(h, (size_t)per * 4);
    }
    plan_status st = PLAN_OK;
    size_t cap = 0;
    if (!it || !rk || !next || (kksz && (!kk.parts || !kk.heap)) || (rksz && !it_rank)) {
        st = plan_fail(err, PLAN_ERR_NOMEM, "out of memory for a window of %lld micro-batches", (long long)per);
        goto out;
    }
    double *load = (double *)rk;
    int32_t *head = (int32_t *)(rk + (size_t)R * 8), *tail = head + R, *cnt = tail + R;
    if (windowed_sync) {
        r->ngroups = nwin;
        r->group_first = plan_heap_alloc(h, (size_t)(nwin + 1) * 8);
        if (!r->group_first) {
            st = plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    int64_t step = 0;
    for (int64_t w = 0; w < nwin; w++) {
        int64_t base = w * per, n = n_all - base < per ? n_all - base : per;
        for (int64_t i = 0; i < n; i++) {
            it[i].k = seq[base + i];
            it[i].pos = (uint32_t)i;
            const plan_microbatch *mb = &r->micro[it[i].k];
            int64_t S = r->buckets[mb->bucket].shape.tokens;
            it[i].c = mode == PLAN_ASSIGN_VERL_KK ? (double)mb->count * plan_verl_workload(S)
                      : mode == PLAN_ASSIGN_SORT_LENGTH ? (double)S
                                                          : plan_microbatch_cost(r, it[i].k);
        }
        if (mode != PLAN_ASSIGN_KK) qsort(it, (size_t)n, sizeof *it, cmp_item);
        if (mode == PLAN_ASSIGN_SORT_LENGTH) {
            int64_t ns = (n + R - 1) / R;
            if ((st = grow_slots(r, &cap, step + ns, h, err))) goto out;
            for (int64_t i = 0; i < ns * R; i++) r->slots[step * R + i] = i < n ? it[i].k : PLAN_IDLE;
            step += ns;
            continue;
        }
        if (mode == PLAN_ASSIGN_VERL_KK) {
            int64_t ns = (n + R - 1) / R;
            for (int64_t i = n; i < ns * R; i++) it[i] = (item){0, PLAN_IDLE, (uint32_t)i};
            kk_partition_equal(&kk, it, ns * R, head);
            if ((st = grow_slots(r, &cap, step + ns, h, err))) goto out;
            for (int64_t k = 0; k < R; k++) {
                /* the part's items in weight order (they are indices into the sorted it[]) */
                int64_t j = 0;
                for (int32_t i = head[k]; i >= 0; i = next[i]) it_rank[j++] = i;
                qsort(it_rank, (size_t)j, sizeof *it_rank, cmp_i32);
                for (int64_t q = 0; q < ns; q++) r->slots[(step + q) * R + k] = it[it_rank[q]].k;
            }
            step += ns;
            continue;
        }
        if (windowed_sync) r->group_first[w] = (uint64_t)step;
        if (mode == PLAN_ASSIGN_SORTED_WINDOW) {
            int64_t ns = (n + R - 1) / R;
            if ((st = grow_slots(r, &cap, step + ns, h, err))) goto out;
            for (int64_t i = 0; i < ns * R; i++) {
                /* odd steps deal right to left, so no rank always gets the heaviest */
                int64_t j = (i / R) % 2 ? (i / R) * R + (R - 1 - i % R) : i;
                r->slots[step * R + i] = j < n ? it[j].k : PLAN_IDLE;
            }
            step += ns;
            continue;
        }
        if (mode == PLAN_ASSIGN_LPT) lpt_partition(it, n, R, load, head, tail, next);
        else kk_partition(&kk, it, n, head);
        int64_t ns = 0;
        for (int64_t k = 0; k < R; k++) {
            cnt[k] = 0;
            for (int32_t i = head[k]; i >= 0; i = next[i]) cnt[k]++;
            if (cnt[k] > ns) ns = cnt[k];
        }
        if ((st = grow_slots(r, &cap, step + ns, h, err))) goto out;
        for (int64_t i = 0; i < ns * R; i++) r->slots[step * R + i] = PLAN_IDLE;
        for (int64_t k = 0; k < R; k++) {
            int64_t j = 0;
            for (int32_t i = head[k]; i >= 0; i = next[i]) r->slots[(step + j++) * R + k] = it[i].k;
        }
        step += ns;
    }
    if (windowed_sync) r->group_first[nwin] = (uint64_t)step;
    r->steps = step;
out:
    plan_heap_free(h, it, isz);
    plan_heap_free(h, rk, rsz);
    plan_heap_free(h, next, (size_t)per * 4);
    if (kksz) {
        plan_heap_free(h, kk.parts, kksz);
        plan_heap_free(h, kk.heap, (size_t)per * 4);
    }
    if (rksz) plan_heap_free(h, it_rank, rksz);
    return st;
}

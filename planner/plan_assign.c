/* plan_assign.c -- micro-batches and their assignment to ranks.
 *
 * Seeds: the user's seed, and for epoch e > 0 a seed derived from (seed, e), so each epoch
 * reshuffles (epoch 0 is the plan of the seed alone).
 * Micro-batches: the samples of each bucket (manifest order) are shuffled with the seed's
 * first stream, one Fisher-Yates pass per bucket in bucket order, and cut into pieces of B;
 * the last piece holds the rest (a tail, counted, never dropped and never padded).
 * With metrics_only (the baselines) the samples are not ordered: only counts are needed.
 * Assignment, with the seed's second stream, step by step over `gpus` ranks:
 *   random       the sequence of buckets is a uniform shuffle of all micro-batches, so each
 *                rank's next micro-batch comes from a bucket drawn in proportion to the
 *                micro-batches it has left (Open-Sora's sampler shuffles the list of all
 *                micro-batches and deals it out); a bucket's own micro-batches go in order, its
 *                tail last. The last step may leave ranks idle.
 *   same-bucket  each step draws one bucket in proportion to the micro-batches it has left and
 *                every rank takes the bucket's next micro-batch; when fewer than `gpus` are
 *                left the remaining ranks idle for that step (Lhotse/NeMo synchronized buckets).
 *   sorted-window, lpt, kk   the random sequence, reordered window by window (plan_window.c).
 */
#include <stdlib.h>
#include <string.h>

#include "ada_rng.h"
#include "plan_internal.h"

/* Seeds of the two random streams, derived from the user's seed so that the shuffles do not
 * depend on the assignment mode nor the policy. */
static uint64_t stream_seed(uint64_t seed, uint64_t epoch, uint64_t stream)
{
    if (epoch) { /* epoch 0 keeps the seed as it is; every later epoch reshuffles */
        uint64_t e = seed ^ (0xD1B54A32D192ED03ull * epoch);
        seed = ada_splitmix64(&e);
    }
    uint64_t x = seed ^ (0xA5A5A5A5A5A5A5A5ull * (stream + 1));
    return ada_splitmix64(&x);
}

static void shuffle_u32(uint32_t *a, uint64_t n, ada_rng *rng)
{
    for (uint64_t i = n; i > 1; i--) {
        uint64_t j = ada_rng_below(rng, i);
        uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

plan_status plan_make_microbatches(plan_result *r, const plan_manifest *mf, plan_heap *h,
                                   plan_error *err)
{
    int64_t nb = r->nbuckets;
    int with_order = !r->cfg.metrics_only;
    uint64_t *pos = plan_heap_alloc(h, (size_t)nb * 8 + 8);
    r->order = with_order ? plan_heap_alloc(h, (size_t)r->samples_planned * 4) : NULL;
    if (!pos || (with_order && !r->order)) {
        plan_heap_free(h, pos, (size_t)nb * 8 + 8);
        return plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld samples", (long long)r->samples_planned);
    }
    /* Counting sort by bucket: pos[b] = where bucket b's samples start. */
    uint64_t acc = 0;
    r->nmicro = 0;
    for (int64_t b = 0; b < nb; b++) {
        pos[b] = acc;
        if (r->buckets[b].dropped) continue;
        acc += (uint64_t)r->buckets[b].shape.samples;
        r->nmicro += r->buckets[b].microbatches;
    }
    for (int64_t s = 0; with_order && s < mf->n; s++) {
        uint32_t b = mf->bucket[s];
        if (!r->buckets[b].dropped) r->order[pos[b]++] = (uint32_t)s;
    }
    r->micro = plan_heap_alloc(h, (size_t)r->nmicro * sizeof *r->micro);
    if (!r->micro) {
        plan_heap_free(h, pos, (size_t)nb * 8 + 8);
        return plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld micro-batches", (long long)r->nmicro);
    }
    ada_rng rng;
    ada_rng_seed(&rng, stream_seed(r->cfg.seed, r->cfg.epoch, 0));
    uint64_t start = 0;
    int64_t k = 0;
    r->tail_microbatches = 0;
    for (int64_t b = 0; b < nb; b++) {
        plan_bucket *bk = &r->buckets[b];
        if (bk->dropped) continue;
        uint64_t n = (uint64_t)bk->shape.samples;
        if (with_order) shuffle_u32(r->order + start, n, &rng);
        for (uint64_t off = 0; off < n; off += (uint64_t)bk->batch_size) {
            uint64_t left = n - off;
            uint32_t cnt = (uint32_t)(left < (uint64_t)bk->batch_size ? left : (uint64_t)bk->batch_size);
            r->micro[k].bucket = (uint32_t)b;
            r->micro[k].count = cnt;
            r->micro[k].start = start + off;
            r->tail_microbatches += cnt < (uint64_t)bk->batch_size;
            k++;
        }
        start += n;
    }
    plan_heap_free(h, pos, (size_t)nb * 8 + 8);
    return PLAN_OK;
}

/* The random order: a uniform shuffle of all micro-batches gives the bucket sequence; each
 * bucket's own micro-batches go in order (first[] is consumed). */
static void random_sequence(const plan_result *r, uint64_t *first, ada_rng *rng, uint32_t *seq)
{
    for (int64_t i = 0; i < r->nmicro; i++) seq[i] = (uint32_t)i;
    shuffle_u32(seq, (uint64_t)r->nmicro, rng);
    for (int64_t i = 0; i < r->nmicro; i++) seq[i] = (uint32_t)first[r->micro[seq[i]].bucket]++;
}

static plan_status same_bucket(plan_result *r, uint64_t *first, ada_rng *rng, plan_heap *h,
                               plan_error *err)
{
    int64_t nb = r->nbuckets, R = r->cfg.gpus;
    int64_t bound = 0;
    for (int64_t b = 0; b < nb; b++)
        if (!r->buckets[b].dropped) bound += (r->buckets[b].microbatches + R - 1) / R;
    r->slots = plan_heap_alloc(h, (size_t)(bound * R) * 4);
    /* left[b]: micro-batches bucket b has not handed out yet. */
    int64_t *left = plan_heap_alloc(h, (size_t)nb * 8 + 8);
    if (!r->slots || !left) {
        plan_heap_free(h, left, (size_t)nb * 8 + 8);
        return plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld steps", (long long)bound);
    }
    for (int64_t b = 0; b < nb; b++) left[b] = r->buckets[b].dropped ? 0 : r->buckets[b].microbatches;
    uint64_t total = (uint64_t)r->nmicro;
    int64_t s = 0;
    while (total) {
        uint64_t u = ada_rng_below(rng, total);
        int64_t b = 0;
        while (u >= (uint64_t)left[b]) u -= (uint64_t)left[b++];
        int64_t take = left[b] < R ? left[b] : R;
        uint32_t *row = r->slots + s * R;
        for (int64_t i = 0; i < R; i++) row[i] = i < take ? (uint32_t)first[b]++ : PLAN_IDLE;
        left[b] -= take;
        total -= (uint64_t)take;
        s++;
    }
    r->steps = s;
    plan_heap_free(h, left, (size_t)nb * 8 + 8);
    return PLAN_OK;
}

plan_status plan_assign_ranks(plan_result *r, plan_heap *h, plan_error *err)
{
    int64_t nb = r->nbuckets, R = r->cfg.gpus;
    /* first[b]: index of bucket b's first micro-batch (micro-batches are grouped by bucket). */
    uint64_t *first = plan_heap_alloc(h, (size_t)nb * 8 + 8);
    if (!first) return plan_fail(err, PLAN_ERR_NOMEM, "out of memory");
    uint64_t acc = 0;
    for (int64_t b = 0; b < nb; b++) {
        first[b] = acc;
        if (!r->buckets[b].dropped) acc += (uint64_t)r->buckets[b].microbatches;
    }
    ada_rng rng;
    ada_rng_seed(&rng, stream_seed(r->cfg.seed, r->cfg.epoch, 1));
    plan_status st = PLAN_OK;
    if (r->cfg.assign == PLAN_ASSIGN_SAME_BUCKET) {
        st = same_bucket(r, first, &rng, h, err);
    } else if (r->cfg.assign == PLAN_ASSIGN_RANDOM) {
        r->steps = (r->nmicro + R - 1) / R;
        size_t nslots = (size_t)(r->steps * R);
        r->slots = plan_heap_alloc(h, nslots * 4);
        if (!r->slots) {
            st = plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld steps", (long long)r->steps);
        } else {
            random_sequence(r, first, &rng, r->slots);
            for (size_t i = (size_t)r->nmicro; i < nslots; i++) r->slots[i] = PLAN_IDLE;
        }
    } else {
        uint32_t *seq = plan_heap_alloc(h, (size_t)r->nmicro * 4);
        if (!seq) {
            st = plan_fail(err, PLAN_ERR_NOMEM, "out of memory for %lld micro-batches", (long long)r->nmicro);
        } else {
            random_sequence(r, first, &rng, seq);
            st = plan_assign_windows(r, seq, h, err);
            plan_heap_free(h, seq, (size_t)r->nmicro * 4);
        }
    }
    plan_heap_free(h, first, (size_t)nb * 8 + 8);
    return st;
}

// fv2_emu.h -- a host emulation of the few CUDA features the v2 kernels use, so that the very
// kernel source (kernels/lnmod_fwd_v2_kern.cuh, _odd.cuh) runs on a CPU without a GPU (test only; compiled
// with g++ -DFV2_EMU by build.sh, against a copy of kernels/lnmod_common.cuh whose four asm
// helpers -- cp.async, its commit and wait, ld.shared -- call the functions below).
//
// Every CUDA thread is a ucontext coroutine; a cluster's CTAs run together under a round-robin
// scheduler (clusters one after another). Warp shuffles, __syncthreads, named barriers and
// the cluster barrier (arrive / wait phases) are generation-counted barriers that yield until
// complete (mbarriers: phase and parity in their 8 bytes, as the hardware keeps them); a full
// pass of the scheduler in which nothing moves is reported as a deadlock. cp.async is modelled
// per thread as groups of copies, performed either at issue ("eager": a slot refilled too
// early corrupts a row still being read) or only when cp.async.wait_group retires the group
// ("lazy": a row read before its wait reads the old row). Shared memory is per CTA (dynamic,
// then a static area for the odd kernel's parts); mapa-addressed stores go to the same offset
// in the target CTA. Bulk copies (cp.async.bulk, round 5's flat chunk kernel): a load
// global -> shared completes bytes on an mbarrier (expect_tx / complete_tx: a phase completes
// when its arrivals are in and its transaction count is back at 0), performed at issue
// ("eager") or only when a thread waits on that barrier's incomplete phase ("lazy"); a store
// shared -> global joins the issuing thread's bulk group, performed at issue or only when the
// thread's cp.async.bulk.wait_group retires the group (a stage refilled before that makes the
// store carry the new bytes); both check 16-byte alignment and sizes, and the global bytes
// they may touch (bulk_rd / bulk_wr ranges set by the test, and a second pair where a kernel
// has two streams: the fused residual op's chunk kernel). Not modelled: timing, memory
// ordering beyond program order (fence.proxy.async is a no-op), bank conflicts, registers.
#ifndef ADALOAD_FV2_EMU_H
#define ADALOAD_FV2_EMU_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#define __launch_bounds__(...)
using std::fmaxf; // lnmod_common.cuh calls the CUDA math library's float functions
using std::fminf;

namespace emu {

struct copy16 { // one cp.async: 16 bytes, or 4 (cp_async4: the backward's statistics)
    void *dst;
    const void *src;
    size_t n = 16;
};

struct bulk_t { // one bulk copy of n bytes
    void *dst;
    const void *src;
    size_t n;
};
struct mbar_tx_t { // an mbarrier's transaction count and its lazy bulk loads
    long tx = 0;
    std::vector<bulk_t> pending;
};

struct cta_t;
struct thr_t {
    ucontext_t ctx;
    std::vector<char> stack;
    uint3 tid;
    cta_t *cta;
    int lane, warp;
    bool done = false;
    std::vector<copy16> open;
    std::vector<std::vector<copy16>> pending;
    long arrived_phase = -1;
    std::vector<bulk_t> bopen;                       // bulk stores since the last commit
    std::vector<std::vector<bulk_t>> bgroups;        // committed bulk-store groups, oldest first
};
struct warp_t {
    int count = 0;
    long gen = 0;
    uint64_t vals[32];
};
struct cta_t {
    std::vector<uint4> smem, static_smem;
    uint3 bid;
    int rank = 0, alive = 0, bar_count = 0;
    long bar_gen = 0;
    int nb_count[16] = {0};  // named barriers: threads arrived in the current phase
    long nb_gen[16] = {0};   // ... and the phase
    std::vector<warp_t> warps;
};

struct state_t {
    thr_t *cur = nullptr;
    ucontext_t sched;
    uint3 block_dim, grid_dim;
    std::vector<cta_t *> cluster;
    int cl_count = 0, cl_alive = 0;
    long cl_phase = 0;
    long epoch = 0;
    bool eager = false;
    bool bulk_load_eager = true, bulk_store_eager = true;
    bool low_first = false; // the scheduler runs warp 0 as far as it can before the others
    std::map<const void *, mbar_tx_t> tx; // per CTA (cleared by launch between CTAs)
    const char *bulk_rd_lo = nullptr, *bulk_rd_hi = nullptr; // bulk loads may read [lo, hi)
    const char *bulk_wr_lo = nullptr, *bulk_wr_hi = nullptr; // bulk stores may write [lo, hi)
    const char *bulk_rd2_lo = nullptr, *bulk_rd2_hi = nullptr; // ... or a second range (two streams)
    const char *bulk_wr2_lo = nullptr, *bulk_wr2_hi = nullptr;
    const char *fail = nullptr;
};
inline state_t &S()
{
    static state_t s;
    return s;
}
inline thr_t *cur() { return S().cur; }
inline void yield() { swapcontext(&cur()->ctx, &S().sched); }
inline void die(const char *msg)
{
    S().fail = msg;
    std::fprintf(stderr, "fv2 emu: %s\n", msg);
    std::exit(3);
}

inline uint4 *smem() { return cur()->cta->smem.data(); }
inline uint4 *static_smem() { return cur()->cta->static_smem.data(); }

// A barrier over `need` participants: count, release by generation.
inline void bar(int &count, long &gen, int need)
{
    const long g = gen;
    if (++count == need) {
        count = 0;
        gen++;
        S().epoch++;
        return;
    }
    S().epoch++;
    while (gen == g) yield();
}

template <typename T> T exchange(T v, int src)
{
    static_assert(sizeof(T) <= 8, "8-byte lanes");
    warp_t &w = cur()->cta->warps[cur()->warp];
    uint64_t u = 0;
    memcpy(&u, &v, sizeof v);
    w.vals[cur()->lane] = u;
    bar(w.count, w.gen, 32);
    const uint64_t r = w.vals[src & 31];
    bar(w.count, w.gen, 32);
    T o;
    memcpy(&o, &r, sizeof o);
    return o;
}

inline void perform(const std::vector<copy16> &g)
{
    for (const copy16 &c : g) memcpy(c.dst, c.src, c.n);
}
inline void cp_async4(void *dst, const void *src)
{
    if (((uintptr_t)src & 3u) || ((uintptr_t)dst & 3u)) die("cp.async of a misaligned 4-byte word");
    cur()->open.push_back({dst, src, 4});
    if (S().eager) memcpy(dst, src, 4);
}
inline void cp_async16(void *dst, const void *src)
{
    if (((uintptr_t)src & 15u) || ((uintptr_t)dst & 15u)) die("cp.async of a misaligned 16-byte word");
    cur()->open.push_back({dst, src});
    if (S().eager) memcpy(dst, src, 16);
}
inline void cp_commit()
{
    cur()->pending.push_back(cur()->open);
    cur()->open.clear();
}
inline void cp_wait(int n)
{
    auto &p = cur()->pending;
    while ((int)p.size() > n) {
        if (!S().eager) perform(p.front());
        p.erase(p.begin());
    }
}

inline unsigned cluster_rank() { return (unsigned)cur()->cta->rank; }
inline void cluster_arrive()
{
    state_t &s = S();
    if (cur()->arrived_phase == s.cl_phase) die("cluster arrive twice without a wait");
    cur()->arrived_phase = s.cl_phase;
    s.epoch++;
    if (++s.cl_count == s.cl_alive) {
        s.cl_count = 0;
        s.cl_phase++;
    }
}
inline void cluster_wait()
{
    state_t &s = S();
    if (cur()->arrived_phase < 0) die("cluster wait without an arrive");
    while (s.cl_phase == cur()->arrived_phase) yield();
    cur()->arrived_phase = -1;
}
// An mbarrier (CTA scope) in the 8 bytes of shared memory it names: arrivals still due (bits
// 0-19), the count a phase (20-39), the phase (40-63). A waiter yields until the phase of its
// parity has completed, as mbarrier.try_wait.parity.
inline void mbar_init(uint64_t *bar, unsigned count)
{
    if (count == 0 || count >= (1u << 20)) die("mbarrier count out of range");
    *bar = (uint64_t)count | (uint64_t)count << 20;
    S().epoch++;
}
// The phase completes once no arrival is due and no transaction byte is outstanding.
inline void mbar_try_complete(uint64_t *bar)
{
    const uint64_t v = *bar, due = v & 0xfffffu, count = v >> 20 & 0xfffffu, phase = v >> 40;
    auto it = S().tx.find(bar);
    if (due == 0 && (it == S().tx.end() || it->second.tx == 0)) *bar = count | count << 20 | (phase + 1) << 40;
}
inline void mbar_arrive(uint64_t *bar)
{
    uint64_t v = *bar;
    const uint64_t due = v & 0xfffffu, count = v >> 20 & 0xfffffu;
    if (count == 0) die("mbarrier arrive before its init");
    if (due == 0) die("mbarrier arrive with no arrival due (the phase waits for its bytes)");
    *bar = (v & ~(uint64_t)0xfffff) | (due - 1);
    mbar_try_complete(bar);
    S().epoch++;
}
inline void complete_tx(uint64_t *bar, size_t n)
{
    mbar_tx_t &m = S().tx[bar];
    m.tx -= (long)n;
    if (m.tx < 0) die("mbarrier: more bytes completed than expected");
    mbar_try_complete(bar);
    S().epoch++;
}
inline void mbar_wait(uint64_t *bar, unsigned parity)
{
    if ((*bar >> 20 & 0xfffffu) == 0) die("mbarrier wait before its init");
    while (((*bar >> 40) & 1u) == (parity & 1u)) {
        auto it = S().tx.find(bar);
        if (it != S().tx.end() && !it->second.pending.empty()) { // lazy bulk loads land now
            std::vector<bulk_t> g;
            g.swap(it->second.pending);
            for (const bulk_t &c : g) {
                memcpy(c.dst, c.src, c.n);
                complete_tx(bar, c.n);
            }
            continue;
        }
        yield();
    }
}
// atomicAdd(c, 1) of a ticket counter: the old value; then the CTA yields, so that the CTAs of a
// launch that run together (launch's cluster) interleave their claims.
inline int64_t ticket(unsigned long long *c)
{
    const unsigned long long v = (*c)++;
    S().epoch++; // a move (the scheduler's deadlock check counts moves)
    yield();
    return (int64_t)v;
}
// The CTA's end of a launch on its counter c[0] and end count c[1]: the last CTA (the one whose
// count completes the grid) zeroes both, so the next launch finds them at 0.
inline void ticket_end(unsigned long long *c, unsigned ctas)
{
    if (++c[1] == ctas) {
#ifndef FV2_EMU_PLANT_RCRESET
        c[0] = 0;
        c[1] = 0;
#endif
    }
    S().epoch++; // a move (the scheduler's deadlock check counts moves)
    yield();
}
// mbarrier.arrive.expect_tx: n more transaction bytes, then this thread's arrival.
inline void expect_tx(uint64_t *bar, unsigned n)
{
    S().tx[bar].tx += n;
    mbar_arrive(bar);
}
inline void bulk_check(const void *dst, const void *src, size_t n)
{
    if (((uintptr_t)dst & 15u) || ((uintptr_t)src & 15u) || (n & 15u) || n == 0)
        die("bulk copy: address or size not a multiple of 16 bytes");
}
inline bool in_range(const void *p, size_t n, const char *lo, const char *hi)
{
    return !lo || ((const char *)p >= lo && (const char *)p + n <= hi);
}
// cp.async.bulk.shared.global ... complete_tx on bar.
inline void bulk_load(void *dst, const void *src, size_t n, uint64_t *bar)
{
    bulk_check(dst, src, n);
    if (!in_range(src, n, S().bulk_rd_lo, S().bulk_rd_hi) &&
        !(S().bulk_rd2_lo && in_range(src, n, S().bulk_rd2_lo, S().bulk_rd2_hi)))
        die("bulk load outside the bytes it may read");
    if (S().bulk_load_eager) {
        memcpy(dst, src, n);
        complete_tx(bar, n);
    } else {
        S().tx[bar].pending.push_back({dst, src, n});
    }
}
// cp.async.bulk.global.shared::cta.bulk_group, its commit_group and wait_group(.read) n.
inline void bulk_store(void *dst, const void *src, size_t n)
{
    bulk_check(dst, src, n);
    if (!in_range(dst, n, S().bulk_wr_lo, S().bulk_wr_hi) &&
        !(S().bulk_wr2_lo && in_range(dst, n, S().bulk_wr2_lo, S().bulk_wr2_hi)))
        die("bulk store outside the bytes it may write");
    if (S().bulk_store_eager)
        memcpy(dst, src, n);
    else
        cur()->bopen.push_back({dst, src, n});
}
inline void bulk_commit()
{
    cur()->bgroups.push_back(cur()->bopen);
    cur()->bopen.clear();
}
inline void bulk_wait(int n)
{
    auto &g = cur()->bgroups;
    while ((int)g.size() > n) {
        for (const bulk_t &c : g.front()) memcpy(c.dst, c.src, c.n);
        g.erase(g.begin());
    }
}
// Named barriers (bar.arrive / bar.sync id, count): a phase completes when `count` threads
// of the CTA have arrived or synced on it; bar.sync then waits for that. Each emulated thread
// counts one (the hardware counts a warp's 32 at once: the kernels call both warp-uniformly).
inline void nbar_check(int id, int count)
{
    if (id < 1 || id > 15) die("named barrier id outside 1..15 (0 is __syncthreads')");
    if (count <= 0 || count % 32 || count > (int)S().block_dim.x) die("named barrier count not a multiple of 32 within the CTA");
}
inline void nbar_arrive(int id, int count)
{
    nbar_check(id, count);
    cta_t *c = cur()->cta;
    if (++c->nb_count[id] == count) {
        c->nb_count[id] = 0;
        c->nb_gen[id]++;
    }
    S().epoch++;
}
inline void nbar_sync(int id, int count)
{
    nbar_check(id, count);
    cta_t *c = cur()->cta;
    bar(c->nb_count[id], c->nb_gen[id], count);
}
// The same shared-memory offset in CTA `rank` of the cluster.
template <typename T> T *map_rank(T *local, unsigned rank)
{
    cta_t *me = cur()->cta;
    if (rank >= S().cluster.size()) die("mapa rank out of the cluster");
    const char *base = reinterpret_cast<const char *>(me->smem.data());
    const size_t off = (size_t)(reinterpret_cast<const char *>(local) - base);
    if (off >= me->smem.size() * sizeof(uint4)) die("mapa of an address outside dynamic shared memory");
    return reinterpret_cast<T *>(reinterpret_cast<char *>(S().cluster[rank]->smem.data()) + off);
}

inline void entry()
{
    thr_t *t = cur();
    extern std::function<void()> *g_body;
    (*g_body)();
    t->done = true;
    if (!t->bopen.empty()) die("a bulk store never committed");
    for (const auto &g : t->bgroups)
        if (!g.empty()) die("a thread exited with a bulk store not waited for (its shared memory is gone)");
    // an exited thread no longer counts in its CTA's barrier or the cluster's
    cta_t *c = t->cta;
    c->alive--;
    if (c->bar_count && c->bar_count == c->alive) {
        c->bar_count = 0;
        c->bar_gen++;
    }
    state_t &s = S();
    s.cl_alive--;
    if (s.cl_count && s.cl_count == s.cl_alive) {
        s.cl_count = 0;
        s.cl_phase++;
    }
    s.epoch++;
    swapcontext(&t->ctx, &s.sched);
}

// Runs the threads of one launch's CTA or cluster (set up by the test's launch) until all have
// exited: round robin, each thread until it yields; with low_first warp 0 as far as it can go
// before one turn of each other thread. A full pass in which nothing moved is a deadlock; a
// bulk load still owed to a barrier when they are done is an error.
inline void schedule(std::vector<thr_t> &thr)
{
    state_t &s = S();
    for (;;) {
        bool any = false;
        const long e0 = s.epoch;
        auto turn = [&](size_t i0, size_t i1) {
            for (size_t i = i0; i < i1 && i < thr.size(); i++)
                if (!thr[i].done) {
                    any = true;
                    s.cur = &thr[i];
                    swapcontext(&s.sched, &thr[i].ctx);
                }
        };
        if (s.low_first)
            for (long e1 = -1; e1 != s.epoch;) {
                e1 = s.epoch;
                turn(0, 32);
            }
        turn(s.low_first ? 32 : 0, thr.size());
        if (!any) break;
        if (s.epoch == e0) die("deadlock: a full pass of every thread changed nothing");
    }
    for (const auto &b : s.tx)
        if (!b.second.pending.empty() || b.second.tx) die("a CTA exited with a bulk load never waited for");
}

// Runs body on every thread of grid x block (1-D), clusters of `cl` CTAs, `dyn` bytes of
// dynamic and `stat` of static shared memory a CTA.
void launch(unsigned grid, unsigned block, unsigned cl, size_t dyn, size_t stat, std::function<void()> body);

} // namespace emu

#define threadIdx (emu::cur()->tid)
#define blockIdx (emu::cur()->cta->bid)
#define blockDim (emu::S().block_dim)
#define gridDim (emu::S().grid_dim)

inline float __uint_as_float(unsigned u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline unsigned __float_as_uint(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}
template <typename T> T __shfl_xor_sync(unsigned, T v, int o) { return emu::exchange(v, emu::cur()->lane ^ o); }
template <typename T> T __shfl_sync(unsigned, T v, int src) { return emu::exchange(v, src); }
inline int __any_sync(unsigned, int pred) // every lane's predicate through the warp's exchange
{
    emu::warp_t &w = emu::cur()->cta->warps[emu::cur()->warp];
    w.vals[emu::cur()->lane] = pred != 0;
    emu::bar(w.count, w.gen, 32);
    int any = 0;
    for (int i = 0; i < 32; i++) any |= w.vals[i] != 0;
    emu::bar(w.count, w.gen, 32);
    return any;
}
template <typename T> T __ldg(const T *p) { return *p; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s)
{
    return (unsigned)((((uint64_t)hi << 32) | lo) >> (s & 31u));
}
inline void __syncthreads()
{
    emu::cta_t *c = emu::cur()->cta;
    emu::bar(c->bar_count, c->bar_gen, c->alive);
}
inline void __syncwarp()
{
    emu::warp_t &w = emu::cur()->cta->warps[emu::cur()->warp];
    emu::bar(w.count, w.gen, 32);
}

#endif

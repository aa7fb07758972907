// bv3_emu.h -- what round 3's kernels need beyond the forward experiment's host emulation
// (../2026-12-02-fwd-v2/fv2_emu.h: a ucontext coroutine per CUDA thread, warp shuffles,
// __syncthreads, per-CTA shared memory, deadlock detection): named barriers (bar.sync id,
// count), mbarriers (init, arrive.expect_tx, try_wait.parity, the phase and its transaction
// count), 1-D bulk copies that complete bytes on an mbarrier, and 4-byte cp.async with
// cp.async.mbarrier.arrive.noinc. Copies are performed either at issue ("eager": a stage
// refilled too early corrupts a row still being read) or when a thread waits on their
// mbarrier ("lazy": a stage read before its wait reads the old bytes). Test only (g++
// -DBV3_EMU, bv3_emu_test.cc); not modelled: timing, memory ordering, the proxy fence.
#ifndef ADALOAD_BV3_EMU_H
#define ADALOAD_BV3_EMU_H

#include "fv2_emu.h"

#include <map>
#include <utility>

namespace emu {

struct mbar_t {
    int count = 0, arrivals = 0;
    long tx = 0;
    unsigned phase = 0; // completed phases
    struct pend {
        void *dst; // nullptr: landed already (eager)
        const void *src;
        unsigned bytes;
        int kind; // 0 a bulk copy (completes `bytes` of the transaction count), 1 a 4-byte
                  // cp.async (no bytes counted), 2 the arrival of cp.async.mbarrier.arrive.noinc
    };
    std::vector<pend> pending;
};
struct ext_t {
    std::map<const void *, mbar_t> bars;
    std::map<std::pair<const void *, int>, std::pair<int, long>> named; // (cta, id) -> count, gen
    std::vector<std::pair<void *, const void *>> cp4; // 4-byte copies not yet tied to an mbarrier
};
inline ext_t &X()
{
    static ext_t x;
    return x;
}

inline void mbar_complete_if(mbar_t &b)
{
    if (b.arrivals > b.count) die("mbarrier: more arrivals than its count in a phase");
    if (b.tx < 0) die("mbarrier: more bytes completed than expected");
    if (b.arrivals == b.count && b.tx == 0) {
        b.arrivals = 0;
        b.phase++;
        S().epoch++;
    }
}
// The pending copies land, in issue order; arrivals and bytes complete the phase.
inline void mbar_perform(mbar_t &b)
{
    std::vector<mbar_t::pend> p;
    p.swap(b.pending);
    for (const mbar_t::pend &c : p) {
        if (c.dst) memcpy(c.dst, c.src, c.bytes);
        if (c.kind == 0) b.tx -= c.bytes;
        if (c.kind == 2) b.arrivals++;
        mbar_complete_if(b);
    }
}
inline mbar_t &mbar_of(const void *bar)
{
    auto it = X().bars.find(bar);
    if (it == X().bars.end()) die("mbarrier used before its init");
    return it->second;
}
inline void mbar_init(void *bar, int count)
{
    mbar_t b;
    b.count = count;
    X().bars[bar] = b;
}
inline void mbar_expect_tx(void *bar, unsigned bytes)
{
    mbar_t &b = mbar_of(bar);
    b.tx += bytes;
    b.arrivals++;
    mbar_complete_if(b);
}
inline void bulk_copy(void *dst, const void *src, unsigned bytes, void *bar)
{
    if (((uintptr_t)dst & 15u) || ((uintptr_t)src & 15u) || (bytes & 15u) || !bytes)
        die("cp.async.bulk: misaligned, or a size not a multiple of 16");
    mbar_t &b = mbar_of(bar);
    if (S().eager) memcpy(dst, src, bytes);
    b.pending.push_back({S().eager ? nullptr : dst, src, bytes, 0});
}
inline void cp_async4(void *dst, const void *src)
{
    if (S().eager) memcpy(dst, src, 4);
    X().cp4.push_back({S().eager ? nullptr : dst, src});
}
inline void cp_arrive_noinc(void *bar)
{
    mbar_t &b = mbar_of(bar);
    for (auto &c : X().cp4) b.pending.push_back({c.first, c.second, 4, 1});
    X().cp4.clear();
    b.pending.push_back({nullptr, nullptr, 0, 2});
}
// Waits until the phase of parity `parity` has completed (try_wait.parity in a loop).
inline void mbar_wait(void *bar, unsigned parity)
{
    for (;;) {
        mbar_t &b = mbar_of(bar);
        // the copies land at the latest when someone waits (eager: their bytes landed already)
        mbar_perform(b);
        if ((b.phase & 1u) != parity) return; // phase `parity` completed
        yield();
    }
}
// bar.sync id, count: `count` threads of the CTA.
inline void named_sync(int id, int count)
{
    auto &st = X().named[{cur()->cta, id}];
    bar(st.first, st.second, count);
}

} // namespace emu

// The CUDA functions the kernels call that fv2_emu.h does not provide.
inline size_t __cvta_generic_to_shared(const void *p) { return (size_t)p; }
inline void __trap() { emu::die("__trap"); }

#endif

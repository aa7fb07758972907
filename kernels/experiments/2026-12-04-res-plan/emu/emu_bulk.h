// emu_bulk.h -- the bulk-copy ring's PTX helpers (kernels/lnmod_bulk_ptx.cuh, and the fused op's
// rk_bulk / rk_expect_tx / rk_arrive_noinc) on the CUDA emulation of fv2_emu.h; emu_prep.py puts
// it in place of lnmod_bulk_ptx.cuh. An mbarrier (a uint64_t in shared memory) is a record kept
// beside it: the arrivals a phase expects, those still pending, the transaction bytes still due
// and the phases completed. A phase completes when no arrival and no byte is due; waiting on
// parity P returns once the phase of that parity has completed. A bulk copy is performed when it
// is issued and then completes its bytes (eager, as fv2_emu.h's cp.async can be), so a stage
// refilled while still being read would corrupt the row and fail the check. Named barriers
// (bar.sync id, T) count T arrivals a generation per CTA and id. Test only.
#ifndef ADALOAD_EMU_BULK_H
#define ADALOAD_EMU_BULK_H

#include <cstdint>
#include <cstring>
#include <map>
#include <utility>

namespace emu_bulk {

struct mbar {
    int expected = 0, pending = 0;
    long tx = 0, phase = 0;
};

inline std::map<const void *, mbar> &bars()
{
    static std::map<const void *, mbar> m;
    return m;
}

inline mbar &of(const void *bar)
{
    auto it = bars().find(bar);
    if (it == bars().end()) emu::die("mbarrier used before its init");
    return it->second;
}

inline void settle(mbar &b)
{
    if (b.tx < 0) emu::die("mbarrier: more bytes completed than expected");
    if (b.pending == 0 && b.tx == 0) {
        b.phase++;
        b.pending = b.expected;
    }
    emu::S().epoch++;
}

inline void init(void *bar, unsigned count)
{
    mbar b;
    b.expected = b.pending = (int)count;
    bars()[bar] = b;
    emu::S().epoch++;
}

inline void arrive(void *bar)
{
    mbar &b = of(bar);
    if (b.pending <= 0) emu::die("mbarrier: an arrival beyond the expected count");
    b.pending--;
    settle(b);
}

inline void expect_tx(void *bar, unsigned bytes)
{
    of(bar).tx += bytes;
    arrive(bar);
}

inline void bulk(void *dst, const void *src, unsigned bytes, void *bar)
{
    if (((uintptr_t)dst & 15u) || ((uintptr_t)src & 15u) || (bytes & 15u)) emu::die("bulk copy not 16-byte aligned");
    memcpy(dst, src, bytes);
    mbar &b = of(bar);
    b.tx -= bytes;
    settle(b);
}

inline void wait(void *bar, uint32_t parity)
{
    while ((of(bar).phase & 1) == (long)(parity & 1)) emu::yield();
}

inline std::map<std::pair<const void *, int>, std::pair<int, long>> &named()
{
    static std::map<std::pair<const void *, int>, std::pair<int, long>> m;
    return m;
}

// Between launches: no barrier outlives its CTA.
inline void reset()
{
    bars().clear();
    named().clear();
}

} // namespace emu_bulk

namespace lnmod_bulk_ptx {
inline unsigned bk_sa(const void *p) { return (unsigned)(uintptr_t)p; }
inline void bk_mbar_init(uint64_t *bar, unsigned count) { emu_bulk::init(bar, count); }
inline void bk_fence_proxy_async() {}
inline void bk_mbar_wait(uint64_t *bar, uint32_t parity) { emu_bulk::wait(bar, parity); }
inline void bk_group_sync(int gq, int T)
{
    auto &b = emu_bulk::named()[std::make_pair((const void *)emu::cur()->cta, gq + 1)];
    emu::bar(b.first, b.second, T);
}
} // namespace lnmod_bulk_ptx

#endif

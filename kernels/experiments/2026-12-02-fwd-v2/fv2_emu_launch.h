// fv2_emu_launch.h -- fv2_emu.h's launch: runs a kernel body on every thread of grid x block,
// clusters of `cl` CTAs at once (the last group may be smaller), each CTA with `dyn` bytes of
// dynamic and `stat` of static shared memory (both filled with NaN patterns: a read before a
// write shows). Definitions,
// not declarations: include it in exactly one translation unit (an emulation test's). Used by
// fv2_emu_test.cc and ../2026-12-06-bwd-wide/bwd_emu_test.cc.
#ifndef ADALOAD_FV2_EMU_LAUNCH_H
#define ADALOAD_FV2_EMU_LAUNCH_H

#include "fv2_emu.h"

namespace emu {
std::function<void()> *g_body;

void launch(unsigned grid, unsigned block, unsigned cl, size_t dyn, size_t stat, std::function<void()> body)
{
    state_t &s = S();
    s.block_dim = make_uint3(block, 1, 1);
    s.grid_dim = make_uint3(grid, 1, 1);
    g_body = &body;
    for (unsigned c0 = 0; c0 < grid; c0 += cl) {
        const unsigned nc = grid - c0 < cl ? grid - c0 : cl; // a last group of fewer (cl CTAs at once,
        std::vector<cta_t> ctas(nc);                         // not a cluster, may not divide the grid)
        std::vector<thr_t> thr((size_t)nc * block);
        s.cluster.clear();
        s.tx.clear(); // mbarrier transaction state of the CTA (addresses in its shared memory)
        for (unsigned i = 0; i < nc; i++) {
            ctas[i].smem.assign(dyn / 16 + 1, make_uint4(0xffc00001u, 0xffc00001u, 0xffc00001u, 0xffc00001u));
            ctas[i].static_smem.assign(stat / 16 + 1, make_uint4(0x7fc00001u, 0x7fc00001u, 0x7fc00001u, 0x7fc00001u));
            ctas[i].bid = make_uint3(c0 + i, 0, 0);
            ctas[i].rank = (int)i;
            ctas[i].alive = (int)block;
            ctas[i].warps.resize(block / 32);
            s.cluster.push_back(&ctas[i]);
        }
        s.cl_count = 0;
        s.cl_alive = (int)(nc * block);
        s.cl_phase = 0;
        for (size_t i = 0; i < thr.size(); i++) {
            thr_t &t = thr[i];
            t.stack.resize(256 * 1024);
            getcontext(&t.ctx);
            t.ctx.uc_stack.ss_sp = t.stack.data();
            t.ctx.uc_stack.ss_size = t.stack.size();
            t.ctx.uc_link = nullptr;
            makecontext(&t.ctx, entry, 0);
            t.cta = &ctas[i / block];
            t.tid = make_uint3((unsigned)(i % block), 0, 0);
            t.lane = (int)(i % block) & 31;
            t.warp = (int)(i % block) >> 5;
        }
        schedule(thr);
    }
}
} // namespace emu

#endif

// fv2_emu_test.cc -- runs the v2 kernels' own source on the CPU (fv2_emu.h) and checks their
// outputs against the float64 reference with the verifier's tolerances (fv2_check.h), for the
// rule's plans and forced ones that reach every path: a warp per row with G warps a CTA, the
// lag path on one CTA, clusters of 2 and 4, streamed modulation, the odd kernel (odd D,
// unaligned pointers and strides, D 1..9), every dtype family, per-frame and per-token rows,
// groups without rows. Each case runs twice, cp.async modelled eagerly and lazily (fv2_emu.h):
// both must pass and give the same bytes. Built and run by build.sh (g++ -DFV2_EMU). Exit 0
// passed, 1 failed. Planted bugs it must catch: -DFV2_EMU_PLANT_LAG (the lag path merges the
// parts of the row it has just computed, not of the row it outputs), -DFV2_EMU_PLANT_WAIT
// (cp.async.wait_group leaves the row about to be read in flight), -DFV2_EMU_PLANT_NBAR (the
// lag path on one CTA without its __syncthreads a row: warps run rows apart), and in the odd
// kernel with the modulation in registers (fv2_odd2.cuh) -DFV2_EMU_PLANT_ODD2PD (one row more
// in flight: a slot refilled while other threads still read it) and -DFV2_EMU_PLANT_ODD2Y (y
// stored from the staging before the barrier that completes it); in the built flat chunk
// kernel (kernels/lnmod_fwd_v2_chunk.cuh, round 5's kernel, the rule's chunk class; its cases
// run with four models of the copies: all at issue, all late, loads at issue and stores late,
// warp 0 first) -DFV2_EMU_PLANT_CHUNKEDGE (a chunk's whole 16-byte superset bulk-stored, over
// its neighbours' y), -DFV2_EMU_PLANT_CHUNKRING (a stage refilled without waiting for its bulk
// store's read), -DFV2_EMU_PLANT_CHUNKBAR (a chunk stored before the barrier that completes
// its y), -DFV2_EMU_PLANT_CHUNKFAR (no second statistics pass when the pivot is far from the
// mean: the pivot-outlier rows fail) and -DFV2_EMU_PLANT_CHUNKMEAN (the second pass of round
// 5's first version, M2 around lo without rebasing d and lo on the mean: the H100's check
// shapes fail, as they did on the GPU).
#include "fv2_emu.h"
#include "fv2_odd2.cuh"
#include "fv2_odd2_plan.h"

#include <string>

#include "fv2_check.h"
#include "fv2_rows.h"
extern "C" {
#include "ref_lnmod.h"
}

#include "fv2_emu_launch.h"

namespace {

using namespace lnmod_detail;

// The chunk kernel's shapes the cases reach (X(T, K); R = FV2_CHUNK_R(K)), each for the four
// 16-bit dtype triples: K 1 (no full step), K 13 at 64 threads, every T, R 8 down to 1, a last
// step of one column (D 257, 8193), K 32.
#define FV2_EMU_CHUNK_SHAPES(X) \
    X(64, 1) X(64, 4) X(64, 5) X(64, 13) X(128, 8) X(128, 9) X(128, 12) X(128, 13) X(256, 9) X(256, 12) X(256, 20) X(512, 16) X(512, 17) X(512, 32)

template <typename TX, typename TM, typename TY> void run_chunk(const fv2_plan &p, const lnmod_kparams &kp, int grid)
{
    if constexpr (sizeof(TX) == 2 && sizeof(TY) == 2) {
        unsigned long long ticket[2] = {0, 0}; // the launch's counter and its CTAs' end count
        // as the launcher (launch_chunk): the counter where the plan takes the ticket order, else
        // the static walk (T 64 and 128)
        const fv2::chunk_args c = {p.nstage, (int)p.slot_bytes, (int)p.nchunks};
        unsigned long long *tk = p.ticket ? ticket : nullptr;
        std::function<void()> body;
        // the launcher's choice: the grouped kernel where the group is > 1 (2^lg chunks a ticket)
        int lg = 0;
        while ((2 << lg) <= p.group) lg++;
        if (p.group != 1 << lg) emu::die("chunk: a group that is not a power of 2");
#define FV2_EMU_CHUNK(T_, K_)                                                                                   \
    if (p.threads == T_ && p.vpt == K_) {                                                                       \
        if constexpr (T_ >= FV2_CHUNK_TICKET_MIN_T) {                                                           \
            if (lg > 0) body = [&] { fv2::chunk_kernel<TX, TM, TY, T_, K_, FV2_CHUNK_R(K_), int>(kp, c, tk, lg); }; \
        }                                                                                                       \
        if (!body) body = [&] { fv2::chunk_kernel<TX, TM, TY, T_, K_, FV2_CHUNK_R(K_)>(kp, c, tk); };            \
    }
        FV2_EMU_CHUNK_SHAPES(FV2_EMU_CHUNK)
#undef FV2_EMU_CHUNK
        if (!body) emu::die("chunk: a shape FV2_EMU_CHUNK_SHAPES does not list");
        // three CTAs at once: their ticket claims interleave
        emu::launch((unsigned)grid, (unsigned)p.threads, 3u, (size_t)p.smem_bytes, 0, body);
        if (ticket[0] != 0 || ticket[1] != 0) emu::die("chunk: the launch left its ticket counter non-zero");
    } else {
        emu::die("chunk: 16-bit x and y only");
    }
}

template <typename TX, typename TM, typename TY> void run_plan(const fv2_plan &p, const lnmod_kparams &kp, int grid)
{
    fv2::kcfg k;
    k.nv = p.nv;
    k.nvc = p.nvc;
    k.W = p.warps;
    k.C = p.cluster;
    k.G = p.groups;
    k.NS = p.nstage;
    k.vpt = p.vpt;
    k.NB = p.nbar;
    std::function<void()> body;
    const bool ring = p.mode == FV2_MOD_RING;
#define FV2_EMU_VPT(V)                                                                                    \
    case V:                                                                                               \
        body = ring ? std::function<void()>([&] { fv2::tile_kernel<TX, TM, TY, V, true>(kp, k); })        \
                    : std::function<void()>([&] { fv2::tile_kernel<TX, TM, TY, V, false>(kp, k); });      \
        break;
    if (p.cls == FV2_CHUNK) {
        run_chunk<TX, TM, TY>(p, kp, grid);
        return;
    }
    if (p.cls == FV2_ODD && p.mode == FV2_MOD_REG) { // fv2_odd2.cuh
        switch (p.vpt) {
        case 1: body = [&] { fv2::odd2_kernel<TX, TM, TY, 1>(kp, k); }; break;
        case 2: body = [&] { fv2::odd2_kernel<TX, TM, TY, 2>(kp, k); }; break;
        case 3: body = [&] { fv2::odd2_kernel<TX, TM, TY, 3>(kp, k); }; break;
        case 4: body = [&] { fv2::odd2_kernel<TX, TM, TY, 4>(kp, k); }; break;
        case 5: body = [&] { fv2::odd2_kernel<TX, TM, TY, 5>(kp, k); }; break;
        default: emu::die("odd2: VPT outside 1..5");
        }
    } else if (p.cls == FV2_ODD) {
        body = [&] { fv2::odd_kernel<TX, TM, TY>(kp, k); };
    } else {
        switch (p.vpt) {
            FV2_EMU_VPT(1)
            FV2_EMU_VPT(2)
            FV2_EMU_VPT(3)
            FV2_EMU_VPT(4)
            FV2_EMU_VPT(5)
            FV2_EMU_VPT(6)
            FV2_EMU_VPT(7)
            FV2_EMU_VPT(8)
        default: emu::die("VPT outside 1..8");
        }
    }
#undef FV2_EMU_VPT
    emu::launch((unsigned)grid, (unsigned)p.threads, p.cls == FV2_TILE ? (unsigned)p.cluster : 1u, (size_t)p.smem_bytes,
                512, body);
}

// The rule on an H200, and on one SM of it (DEVS[1]: few row groups, so that the test's short
// samples still count as long runs and the rule keeps the modulation in registers).
const fv2_dev DEVS[2] = {{132, 2048, 1024, 233472, 232448, 65536, 32, 8, 4.8e12},
                         {1, 2048, 1024, 233472, 232448, 65536, 32, 8, 4.8e12 / 132}};

struct tcase {
    const char *what;
    lnmod_dtype xt, mt, yt;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    int misalign; // 1: every pointer 4 bytes past 16-byte alignment, strides + 1; 2: y one element more
    int force; // 0 the rule without the chunk class (fv2_tile_odd_plan); 1 the lag path on one CTA (half the VPT, two+ warps); 2 a cluster of 2;
               // 3 the other modulation mode; 4 the rule's plan with the mbarrier for its CTA
               // barrier a row; 5 the rule's plan behind its CTA barrier a row (the rule's own
               // form); 6 the odd class with the modulation in registers (fv2_odd2.cuh); 7 the odd
               // class where the rule picks the chunk class (the launcher's fallback); 8 the
               // rule's plan, which must be the chunk class (ring of `ns` stages if set); 9 a
               // tile plan's fallback (fv2_fallback: not resident), which must be the chunk class
    int ctas;  // CTAs (or clusters) of the grid: few, so that groups take several rows
    int adv;   // fv2_rows.h: 1 for the adversarial rows, 2 for outliers on the pivot
    int dev;   // DEVS[dev]: 0 an H200, 1 one SM of it
    int off;   // x and y this many bytes past 16-byte alignment (0, 2, ..., 14) where misalign is 0
    int ns;    // force 8: ring stages (0: the plan's)
};

// Forced shapes that reach paths the rule picks only at large D (1: the lag path on one CTA,
// 2: a cluster of 2), or the other modulation mode (3: REG <-> RING, as the harness's v2b).
void force(fv2_plan *p, const fv2_problem *q, const fv2_dev *dv, const tcase &c)
{
    const int how = c.force;
    if (how == 9) { // a tile plan not resident: the launcher's fallback, the chunk class
        if (p->cls != FV2_TILE || fv2_fallback(p, q, dv) != 0 || p->cls != FV2_CHUNK)
            emu::die("force 9: no chunk fallback of a tile plan");
        if (fv2_chunk_finish(p, dv, FV2_CHUNK_REGS, 0, c.ns) != 0 || (c.ns && p->nstage != c.ns))
            emu::die("chunk: the stages asked for do not fit");
        return;
    }
    if (how == 8) {
        if (p->cls != FV2_CHUNK) emu::die("force 8: the rule's plan is not of the chunk class");
        if (c.ns && (fv2_chunk_finish(p, dv, FV2_CHUNK_REGS, 0, c.ns) != 0 || p->nstage != c.ns))
            emu::die("chunk: the stages asked for do not fit");
        return;
    }
    if (how == 7 || (how == 6 && p->cls == FV2_CHUNK)) { // the odd class (the chunk plan's fallback)
        if (p->cls != FV2_CHUNK) emu::die("force 7 on a plan that is not of the chunk class");
        if (fv2_fallback(p, q, dv) != 0 || p->cls != FV2_ODD) emu::die("chunk: no odd fallback");
        if (fv2_finish(p, dv, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) != 0) emu::die("odd does not fit");
        if (how == 7) return;
    }
    if (how == 6) {
        if (p->cls != FV2_ODD) emu::die("force 6 on a plan that is not of the odd class");
        if (odd2_plan(p, q) != 0 || fv2_finish(p, dv, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) != 0)
            emu::die("odd2 does not fit");
        if (p->nstage < 3) emu::die("odd2 with fewer than 3 slots");
        return;
    }
    if (p->cls != FV2_TILE || !how) return;
    if (how == 3) {
        fv2_tile_plan(p, q, dv, p->mode == FV2_MOD_RING ? FV2_MOD_REG : FV2_MOD_RING);
        if (!p->vpt || fv2_finish(p, dv, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) != 0)
            emu::die("the other mode does not fit");
        return;
    }
    if (how == 4 || how == 5) { // the rule's plan with the mbarrier (4), its CTA barrier a row (5)
        if (!p->nbar) emu::die("force 4/5 on a plan without the CTA barrier a row");
        p->nbar = how == 4 ? 0 : 1;
        return;
    }
    if (how == 1) {
        p->vpt = p->vpt > 1 ? (p->vpt + 1) / 2 : 1;
        p->cluster = 1;
        p->warps = (int)fv2_ceil(p->nv, 32 * (int64_t)p->vpt);
        if (p->warps < 2) p->warps = 2;
    } else {
        p->cluster = 2;
        p->warps = (int)fv2_ceil(p->nv, 64 * (int64_t)p->vpt);
    }
    p->groups = 1;
    fv2_tile_set(p);
    if (fv2_finish(p, dv, fv2_est_regs(p->cls, p->mode, p->vpt, p->vec)) != 0) emu::die("forced plan does not fit");
}

int run_case(const tcase &c, uint64_t seed, int group = 0)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = c.rows;
    d.D = c.D;
    d.rows_per_sample = c.S;
    d.frame_len = c.L;
    d.x_dtype = c.xt;
    d.mod_dtype = c.mt;
    d.y_dtype = c.yt;
    d.layout = c.lay;
    d.scale_stride = d.shift_stride = (c.lay == LNMOD_PER_TOKEN ? c.D : 6 * c.D) + c.misalign;
    if (lnmod_desc_validate(&d) != LNMOD_OK) emu::die("bad case");
    const size_t sx = lnmod_dtype_size(c.xt), sy = lnmod_dtype_size(c.yt), sm = lnmod_dtype_size(c.mt);
    const size_t n = (size_t)(c.rows * c.D), nm = (size_t)((lnmod_mod_rows(&d) - 1) * d.scale_stride + c.D);
    const int off = c.misalign ? 4 : c.off, offy = c.misalign == 2 ? off + (int)sy : off;
    // 16-byte aligned host buffers (+off), 64 guard bytes after each
    std::vector<uint4> bx(n * sx / 16 + 8), bs(nm * sm / 16 + 8), bh(nm * sm / 16 + 8), by[4];
    char *x = reinterpret_cast<char *>(bx.data()) + off, *sc = reinterpret_cast<char *>(bs.data()) + off,
         *sh = reinterpret_cast<char *>(bh.data()) + off;
    uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
    auto rnd = [&] {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        return (double)(r >> 11) * (1.0 / 9007199254740992.0);
    };
    for (size_t i = 0; i < n; i++) ref_store(c.xt, x, (int64_t)i, fv2_input(c.adv, c.xt == LNMOD_F16 ? 1e4 : 1e15, (int64_t)i / c.D, (int64_t)i % c.D, c.D, rnd()));
    for (size_t i = 0; i < nm; i++) {
        ref_store(c.mt, sc, (int64_t)i, (rnd() - 0.5) * 0.5);
        ref_store(c.mt, sh, (int64_t)i, rnd() - 0.5);
    }
    std::vector<float> mean[4], rstd[4];
    fv2_problem q;
    q.D = c.D;
    q.rows = c.rows;
    q.run = c.lay == LNMOD_PER_TOKEN ? 1 : c.lay == LNMOD_PER_FRAME ? std::min(c.L, c.S) : c.S;
    q.layout = (int)c.lay;
    q.sx = (int)sx;
    q.sm = (int)sm;
    q.sy = (int)sy;
    q.aligned = !c.misalign && !off;
    q.xy16 = (off - offy) % 16 == 0; // the buffers are 16-byte aligned
    fv2_plan p;
    // forces 6-8 start from the rule's plan (the chunk class first where it is eligible); the
    // others from the rule without the chunk class (fv2_tile_odd_plan), so that the tile and
    // odd kernels keep their 16-bit cases now that the rule gives those to the chunk kernel
    const bool whole_rule = c.force >= 6 && c.force <= 8;
    if ((whole_rule ? fv2_make_plan(&q, &DEVS[c.dev], &p) : fv2_tile_odd_plan(&q, &DEVS[c.dev], &p)) != 0)
        emu::die("no plan");
    force(&p, &q, &DEVS[c.dev], c);
    const bool ck = p.cls == FV2_CHUNK;
    const int M = ck ? 4 : 2; // copy models: cp.async eager / lazy (and for the chunk class the bulk copies, below)
    int grid;
    if (ck) {
        grid = (int)std::min<int64_t>(c.ctas, p.nchunks);
        // the ticket order's group: forced (group > 0), else fv2_chunk_group's as the launcher's
        // (group < 0: which must then be -group)
        p.group = group > 0 ? group : fv2_chunk_group(&p, grid);
        if (group < 0 && p.group != -group) emu::die("fv2_chunk_group did not give the case's group");
        if (group > 0 && !p.ticket) emu::die("a forced group needs the ticket order (T >= FV2_CHUNK_TICKET_MIN_T)");
    } else {
        const int64_t groups = p.cls == FV2_TILE && p.warps * p.cluster == 1 ? (c.rows + p.groups - 1) / p.groups : c.rows;
        grid = (int)(std::min<int64_t>(c.ctas, groups) * (p.cls == FV2_TILE ? p.cluster : 1));
    }
    int fails = 0;
    for (int mode = 0; mode < M; mode++) {
        by[mode].assign(n * sy / 16 + 8, make_uint4(0x7f7f7f7fu, 0x7f7f7f7fu, 0x7f7f7f7fu, 0x7f7f7f7fu));
        mean[mode].assign((size_t)c.rows + 4, -1.0f);
        rstd[mode].assign((size_t)c.rows + 4, -1.0f);
        char *y = reinterpret_cast<char *>(by[mode].data()) + offy;
        const lnmod_kparams kp = lnmod_make_params(&d, x, sc, sh, y, mean[mode].data(), rstd[mode].data());
        // models: 0 everything at issue; 1 cp.async at its wait, bulk loads at their mbarrier
        // wait, bulk stores at their wait_group; 2 bulk loads at issue, bulk stores late; 3 all
        // at issue, warp 0 scheduled as far as it can go before the others get a turn (it runs
        // ahead of them as far as the barriers let it)
        emu::S().eager = mode != 1;
        emu::S().bulk_load_eager = mode != 1;
        emu::S().bulk_store_eager = mode == 0 || mode == 3;
        emu::S().low_first = mode == 3;
        if (ck) { // what the bulk copies may touch: x's outer 16-byte words, y
            emu::S().bulk_rd_lo = reinterpret_cast<const char *>((uintptr_t)x & ~(uintptr_t)15);
            emu::S().bulk_rd_hi = reinterpret_cast<const char *>(((uintptr_t)x + n * sx + 15) & ~(uintptr_t)15);
            emu::S().bulk_wr_lo = y;
            emu::S().bulk_wr_hi = y + n * sy;
        }
        lnmod_dispatch_dtypes(&d, [&](auto tx, auto tm, auto ty) {
            run_plan<typename decltype(tx)::type, typename decltype(tm)::type, typename decltype(ty)::type>(p, kp, grid);
            return LNMOD_OK;
        });
        emu::S().bulk_rd_lo = emu::S().bulk_rd_hi = emu::S().bulk_wr_lo = emu::S().bulk_wr_hi = nullptr;
        // guards: the bytes before and after y and the statistics past the rows
        const unsigned char *g = reinterpret_cast<const unsigned char *>(y) + n * sy;
        for (int i = 0; i < 32; i++)
            if (g[i] != 0x7f) {
                fails++;
                std::fprintf(stderr, "fv2_emu_test: %s: y written past its end\n", c.what);
                break;
            }
        for (int i = 0; i < offy; i++)
            if (reinterpret_cast<const unsigned char *>(by[mode].data())[i] != 0x7f) {
                fails++;
                std::fprintf(stderr, "fv2_emu_test: %s: y written before its start\n", c.what);
                break;
            }
        if (mean[mode][c.rows] != -1.0f || rstd[mode][c.rows] != -1.0f) fails++;
    }
    fv2_got got[4];
    for (int m = 0; m < M; m++) {
        got[m] = fv2_got{reinterpret_cast<const char *>(by[m].data()) + offy, mean[m].data(), rstd[m].data(), 0, 0, nullptr};
        if (m && (memcmp(got[0].y, got[m].y, n * sy) || memcmp(mean[0].data(), mean[m].data(), 4 * (size_t)c.rows) ||
                  memcmp(rstd[0].data(), rstd[m].data(), 4 * (size_t)c.rows))) {
            fails++;
            std::fprintf(stderr, "fv2_emu_test: %s: the copy models %d and 0 differ\n", c.what, m);
        }
    }
    if (fv2_check(&d, x, sc, sh, got, M, 2) != 0) emu::die("the reference refused a case");
    for (int k = 0; k < M; k++) fails += got[k].fails > 0;
    if (fails && getenv("FV2_EMU_DEBUG")) { // the rows whose statistics are off
        std::vector<double> ry(n), rm((size_t)c.rows), rr((size_t)c.rows);
        if (ref_lnmod_forward(&d, x, sc, sh, ry.data(), rm.data(), rr.data()) == LNMOD_OK)
            for (int64_t i = 0; i < c.rows; i++) {
                const double var = 1.0 / (rr[i] * rr[i]) - d.eps, sd = var > 0 ? std::sqrt(var) : 0.0;
                const double tol = 1e-5 * std::fabs(rm[i]) + 1e-5 * sd;
                if (std::fabs(mean[0][i] - rm[i]) > tol || std::fabs(rstd[0][i] - rr[i]) > 1e-5 * rr[i] + 1e-5)
                    std::fprintf(stderr, "    row %lld (type %lld): mean %.9g ref %.9g (tol %.3g), rstd %.9g ref %.9g\n",
                                 (long long)i, (long long)(i % 5), mean[0][i], rm[i], tol, rstd[0][i], rr[i]);
            }
    }
    char shape[96];
    if (ck)
        std::snprintf(shape, sizeof shape, "chunk T %d K %d R %d NS %d grid %d group %d", p.threads, p.vpt,
                      p.rows_chunk, p.nstage, grid, p.group);
    else
        std::snprintf(shape, sizeof shape, "%s VPT %d W %d C %d G %d NS %d",
                      p.cls == FV2_ODD ? (p.mode == FV2_MOD_REG ? "odd2" : "odd ") : p.mode == FV2_MOD_RING ? "ring" : "reg ",
                      p.vpt, p.warps, p.cluster, p.groups, p.nstage);
    std::string per = std::to_string(got[0].fails);
    for (int m = 1; m < M; m++) per += "/" + std::to_string(got[m].fails);
    std::printf("  %-44s %s: worst %.3f (%s) fails %s %s\n", c.what, shape, got[0].worst, got[0].worst_of, per.c_str(),
                fails ? "FAIL" : "ok");
    return fails;
}

} // namespace

int main()
{
    const lnmod_dtype BF = LNMOD_BF16, F = LNMOD_F32, H = LNMOD_F16;
    const lnmod_layout SA = LNMOD_PER_SAMPLE, TO = LNMOD_PER_TOKEN, FR = LNMOD_PER_FRAME;
    const tcase cases[] = {
        // the modulation in registers (REG): the rule on one SM, runs of >= 4 x its groups
        {"reg warp/row D256 VPT1, 2 samples", BF, F, BF, SA, 256, 240, 120, 1, 0, 0, 3, 0, 1, 0, 0},
        {"reg warp/row D1000 (masked lanes)", BF, F, BF, SA, 1000, 60, 60, 1, 0, 0, 2, 0, 1, 0, 0},
        {"reg warp/row D1152 G4, groups without rows", BF, F, BF, SA, 1152, 50, 50, 1, 0, 0, 20, 0, 1, 0, 0},
        {"reg warp/row D2048 VPT8", BF, F, BF, SA, 2048, 40, 40, 1, 0, 0, 3, 0, 1, 0, 0},
        {"reg lag, one CTA: D3072", BF, F, BF, SA, 3072, 40, 20, 1, 0, 0, 3, 0, 1, 0, 0},
        {"reg lag, one CTA: fp32 D5120 frames", F, F, F, FR, 5120, 60, 60, 30, 0, 0, 2, 0, 1, 0, 0},
        {"reg lag forced: D1536 W2 VPT3", BF, F, BF, FR, 1536, 120, 120, 60, 0, 1, 4, 0, 1, 0, 0},
        {"reg lag, mbarrier: D3072", BF, F, BF, SA, 3072, 40, 20, 1, 0, 4, 3, 0, 1, 0, 0},
        {"reg lag, mbarrier: f16 D7296 frames", H, H, H, FR, 7296, 36, 36, 18, 0, 4, 2, 0, 1, 0, 0},
        {"reg lag: f16 D7296 frames", H, H, H, FR, 7296, 36, 36, 18, 0, 0, 2, 0, 1, 0, 0},
        {"reg lag: D2304, 16 rows a group", BF, F, BF, SA, 2304, 48, 48, 1, 0, 0, 3, 0, 1, 0, 0},
        {"reg lag: D6144 bf16 mod f32 y", BF, BF, F, SA, 6144, 32, 32, 1, 0, 0, 2, 0, 1, 0, 0},
        {"reg lag, one barrier a row: D3072", BF, F, BF, SA, 3072, 40, 20, 1, 0, 5, 3, 0, 1, 0, 0},
        {"reg lag, one barrier a row: f16 D7296", H, H, H, FR, 7296, 36, 36, 18, 0, 5, 2, 0, 1, 0, 0},
        {"reg lag, 8 warps: fp32 D8192", F, F, F, SA, 8192, 16, 16, 1, 0, 0, 2, 0, 1, 0, 0},
        {"reg lag, 7 warps: D8192", BF, F, BF, SA, 8192, 17, 17, 1, 0, 0, 2, 0, 1, 0, 0},
        {"reg cluster forced: D2304 C2 fp16/f16/f32", H, H, F, SA, 2304, 23, 23, 1, 0, 2, 3, 0, 1, 0, 0},
        {"reg fp32: D1024 warp/row", F, F, F, SA, 1024, 64, 64, 1, 0, 0, 3, 0, 1, 0, 0},
        {"reg bf16 mod, f32 y: D3072 frames", BF, BF, F, FR, 3072, 30, 30, 16, 0, 0, 3, 0, 1, 0, 0},
        {"reg per token (v2b's flip): D3072", BF, F, BF, TO, 3072, 33, 33, 1, 0, 3, 3, 0, 0, 0, 0},
        {"reg per token (v2b's flip): warp/row D1024", H, H, F, TO, 1024, 33, 33, 1, 0, 3, 3, 0, 0, 0, 0},
        // the rule on an H200: few rows -> clusters; short runs -> the modulation streamed (RING)
        {"few rows -> cluster of 4: D3072", BF, F, BF, SA, 3072, 29, 29, 1, 0, 0, 3, 0, 0, 0, 0},
        {"few rows -> cluster of 4: D16384", BF, F, BF, SA, 16384, 9, 9, 1, 0, 0, 2, 0, 0, 0, 0},
        {"ring warp/row: 20-row samples D256", BF, F, BF, SA, 256, 40, 20, 1, 0, 0, 3, 0, 0, 0, 0},
        {"ring: token D1536", BF, F, BF, TO, 1536, 31, 31, 1, 0, 0, 3, 0, 0, 0, 0},
        {"ring: token D512 warp/row", BF, BF, BF, TO, 512, 30, 30, 1, 0, 0, 2, 0, 0, 0, 0},
        {"ring: frames of 5 rows D1024 fp16/fp32 y", H, F, F, FR, 1024, 37, 37, 5, 0, 0, 3, 0, 0, 0, 0},
        {"ring: 40-row frames (run rule) D2048", BF, F, BF, FR, 2048, 150, 150, 40, 0, 0, 3, 0, 0, 0, 0},
        {"ring cluster: token D5120 C2", BF, F, BF, TO, 5120, 13, 13, 1, 0, 0, 2, 0, 0, 0, 0},
        {"ring fp32: D5120 short samples", F, F, F, SA, 5120, 19, 19, 1, 0, 0, 3, 0, 0, 0, 0},
        {"ring flipped to reg: 11-row samples D4096", BF, F, BF, SA, 4096, 33, 11, 1, 0, 3, 3, 0, 0, 0, 0},
        // the odd class
        {"odd D1537 (the chunk plan's fallback)", BF, F, BF, SA, 1537, 37, 37, 1, 0, 7, 3, 0, 0, 0, 0},
        {"odd D255 (the chunk plan's fallback)", BF, F, BF, SA, 255, 50, 25, 1, 0, 7, 4, 0, 0, 0, 0},
        {"odd D1537, y apart from x (the rule)", BF, F, BF, SA, 1537, 23, 23, 1, 2, 0, 3, 0, 0, 0, 0},
        {"odd D1537 per token (the rule)", BF, F, BF, TO, 1537, 23, 23, 1, 0, 0, 3, 0, 0, 0, 0},
        {"odd D5119 fp32", F, F, F, SA, 5119, 11, 11, 1, 0, 0, 3, 0, 0, 0, 0},
        {"odd: misaligned D1536 (fallback)", BF, F, BF, SA, 1536, 21, 21, 1, 1, 7, 3, 0, 0, 0, 0},
        {"odd: misaligned fp32 D4100 token", F, F, F, TO, 4100, 9, 9, 1, 1, 0, 2, 0, 0, 0, 0},
        {"odd D1", BF, F, BF, SA, 1, 67, 67, 1, 0, 0, 3, 0, 0, 0, 0},
        {"odd D3", H, H, H, SA, 3, 67, 67, 1, 0, 0, 3, 0, 0, 0, 0},
        {"odd D7 fp16 f32 y", H, F, F, TO, 7, 20, 20, 1, 0, 0, 3, 0, 0, 0, 0},
        {"tile D8", BF, F, BF, SA, 8, 33, 33, 1, 0, 0, 2, 0, 0, 0, 0},
        {"odd D9", BF, F, BF, SA, 9, 33, 33, 1, 0, 0, 2, 0, 0, 0, 0},
        // the odd class with the modulation in registers (fv2_odd2.cuh; misalign 2: y one element
        // further from 16-byte alignment than x, so y's phase is not x's)
        {"odd2 D1537", BF, F, BF, SA, 1537, 37, 37, 1, 0, 6, 3, 0, 0, 0, 0},
        {"odd2 D255, 2 samples", BF, F, BF, SA, 255, 50, 25, 1, 0, 6, 4, 0, 0, 0, 0},
        {"odd2 D5119 fp32", F, F, F, SA, 5119, 11, 11, 1, 0, 6, 3, 0, 0, 0, 0},
        {"odd2: misaligned D1536", BF, F, BF, SA, 1536, 21, 21, 1, 1, 6, 3, 0, 0, 0, 0},
        {"odd2: y apart from x D1537", BF, F, BF, SA, 1537, 23, 23, 1, 2, 6, 3, 0, 0, 0, 0},
        {"odd2: y apart, bf16 mod f32 y D3001 frames", BF, BF, F, FR, 3001, 24, 24, 7, 2, 6, 3, 0, 0, 0, 0},
        {"odd2: y apart, fp16 f32 y D777", H, F, F, SA, 777, 30, 30, 1, 2, 6, 2, 0, 0, 0, 0},
        {"odd2: misaligned fp32 D4100 token", F, F, F, TO, 4100, 9, 9, 1, 1, 6, 2, 0, 0, 0, 0},
        {"odd2: y apart, fp32 D1001", F, F, F, SA, 1001, 20, 20, 1, 2, 6, 3, 0, 0, 0, 0},
        {"odd2 D1", BF, F, BF, SA, 1, 67, 67, 1, 0, 6, 3, 0, 0, 0, 0},
        {"odd2 D3 fp16", H, H, H, SA, 3, 67, 67, 1, 0, 6, 3, 0, 0, 0, 0},
        {"odd2 D7 fp16 f32 y token", H, F, F, TO, 7, 20, 20, 1, 0, 6, 3, 0, 0, 0, 0},
        {"odd2 D9", BF, F, BF, SA, 9, 33, 33, 1, 0, 6, 2, 0, 0, 0, 0},
        {"odd2: one CTA, 13 rows D1537", BF, F, BF, SA, 1537, 13, 13, 1, 0, 6, 1, 0, 0, 0, 0},
        {"odd2 D16383 (16 warps, VPT 5)", BF, F, BF, SA, 16383, 5, 5, 1, 0, 6, 2, 0, 0, 0, 0},
        // the chunk class (the rule's plans; kernels/lnmod_fwd_v2_chunk.cuh): x and y `off` bytes
        // past 16-byte alignment, a ring of `ns` stages (0: the plan's, up to 8) wrapping on few
        // CTAs, partial last chunks
        {"chunk D1537, 4 CTAs", BF, F, BF, SA, 1537, 37, 37, 1, 0, 8, 4, 0, 0, 0, 0},
        {"chunk D1537, one CTA through 3 stages", BF, F, BF, SA, 1537, 37, 37, 1, 0, 8, 1, 0, 0, 0, 3},
        {"chunk D777 +2 B, last chunk 1 row", BF, F, BF, SA, 777, 41, 41, 1, 0, 8, 2, 0, 0, 2, 3},
        {"chunk D64 K1 +14 B", BF, F, BF, SA, 64, 50, 50, 1, 0, 8, 3, 0, 0, 14, 0},
        {"chunk D255 +6 B, 25-row samples (mid-chunk)", BF, F, BF, SA, 255, 50, 25, 1, 0, 8, 2, 0, 0, 6, 3},
        {"chunk D257 (last step: 1 column) +8 B", BF, BF, BF, SA, 257, 17, 17, 1, 0, 8, 2, 0, 0, 8, 4},
        {"chunk D1111 fp16, 7-row frames +10 B", H, F, H, FR, 1111, 42, 21, 7, 0, 8, 2, 0, 0, 10, 3},
        {"chunk D1536 bf16 mod +4 B", BF, BF, BF, SA, 1536, 23, 23, 1, 0, 8, 2, 0, 0, 4, 3},
        {"chunk D2303 fp16 mod +12 B", H, H, H, SA, 2303, 20, 20, 1, 0, 8, 2, 0, 0, 12, 3},
        {"chunk D3001, 5-row frames, 15 rows", BF, F, BF, FR, 3001, 15, 15, 5, 0, 8, 3, 0, 0, 0, 0},
        {"chunk D5119 +2 B", BF, F, BF, SA, 5119, 9, 9, 1, 0, 8, 2, 0, 0, 2, 3},
        {"chunk D8191 T512 K16 +6 B", BF, F, BF, SA, 8191, 5, 5, 1, 0, 8, 2, 0, 0, 6, 3},
        {"chunk D8193 T512 K17 (last step: 1 col)", H, F, H, SA, 8193, 4, 4, 1, 0, 8, 1, 0, 0, 0, 3},
        {"chunk D16383 T512 K32 +14 B", BF, F, BF, SA, 16383, 5, 5, 1, 0, 8, 2, 0, 0, 14, 3},
        {"chunk D777 3 rows (< R)", BF, F, BF, SA, 777, 3, 3, 1, 0, 8, 1, 0, 0, 6, 0},
        {"chunk D1537 1 row", BF, F, BF, SA, 1537, 1, 1, 1, 0, 8, 1, 0, 0, 10, 0},
        {"chunk D1024 (even) +8 B", BF, F, BF, SA, 1024, 20, 20, 1, 0, 8, 2, 0, 0, 8, 3},
        {"chunk D5120 (even, aligned: a tile plan's fallback)", BF, F, BF, SA, 5120, 7, 7, 1, 0, 9, 2, 0, 0, 0, 3},
        // the adversarial rows through every path
        {"adversarial: reg warp/row D1536", BF, F, BF, SA, 1536, 60, 60, 1, 0, 0, 3, 1, 1, 0, 0},
        {"adversarial: reg warp/row fp32 D1024", F, F, F, SA, 1024, 64, 64, 1, 0, 0, 3, 1, 1, 0, 0},
        {"adversarial: reg lag D3072", BF, F, BF, SA, 3072, 40, 40, 1, 0, 0, 3, 1, 1, 0, 0},
        {"adversarial: reg lag fp32 D5120", F, F, F, SA, 5120, 40, 40, 1, 0, 0, 2, 1, 1, 0, 0},
        {"adversarial: reg cluster D16384", BF, F, BF, SA, 16384, 10, 10, 1, 0, 0, 2, 1, 1, 0, 0},
        {"adversarial: ring cluster D16384", BF, F, BF, SA, 16384, 10, 10, 1, 0, 0, 2, 1, 0, 0, 0},
        {"adversarial: ring token fp16 D2048", H, F, H, TO, 2048, 30, 30, 1, 0, 0, 3, 1, 0, 0, 0},
        {"adversarial: odd D1537 fp32", F, F, F, SA, 1537, 30, 30, 1, 0, 0, 3, 1, 0, 0, 0},
        {"adversarial: odd misaligned bf16 D1536", BF, F, BF, SA, 1536, 30, 30, 1, 1, 7, 3, 1, 0, 0, 0},
        {"adversarial: chunk misaligned bf16 D1536 (rule)", BF, F, BF, SA, 1536, 30, 30, 1, 1, 8, 3, 1, 0, 0, 3},
        {"adversarial: odd2 D1537 fp32", F, F, F, SA, 1537, 30, 30, 1, 0, 6, 3, 1, 0, 0, 0},
        {"adversarial: odd2 y apart bf16 D1536", BF, F, BF, SA, 1536, 30, 30, 1, 2, 6, 3, 1, 0, 0, 0},
        {"adversarial: chunk D1537 +2 B", BF, F, BF, SA, 1537, 30, 30, 1, 0, 8, 3, 1, 0, 2, 3},
        {"adversarial: chunk fp16 D777 +4 B", H, F, H, SA, 777, 30, 30, 1, 0, 8, 2, 1, 0, 4, 3},
        {"adversarial: chunk D5119", BF, BF, BF, SA, 5119, 10, 10, 1, 0, 8, 2, 1, 0, 0, 3},
        {"pivot outliers (second pass): chunk D1537", BF, F, BF, SA, 1537, 21, 21, 1, 0, 8, 2, 2, 0, 6, 3},
        {"pivot outliers (second pass): chunk fp16 D5119", H, H, H, SA, 5119, 9, 9, 1, 0, 8, 2, 2, 0, 0, 3},
        // the harness's check shapes on the H100 (round 5, before the rebased second pass: y
        // 1.29x its allowance, 20 fails at D 5119; 0.69 at D 1537): bf16-f32-bf16 per sample,
        // the H100's plans (T 256 K 20 R 2 NS 5; T 128 K 13 R 4 NS 4)
        {"pivot outliers (GPU check shape): chunk D5119", BF, F, BF, SA, 5119, 400, 400, 1, 0, 8, 4, 2, 0, 0, 5},
        {"pivot outliers (GPU check shape): chunk D1537", BF, F, BF, SA, 1537, 1000, 1000, 1, 0, 8, 4, 2, 0, 0, 4},
    };
    int fails = 0;
    uint64_t seed = 1;
    const char *only = getenv("FV2_EMU_ONLY"); // a substring of the cases to run (all if unset)
    for (const tcase &c : cases) {
        const uint64_t sd = seed++;
        if (!only || std::strstr(c.what, only)) fails += run_case(c, sd) ? 1 : 0;
    }
    // the ticket order's groups (fv2_chunk_group): consecutive chunks a claim, across frames,
    // samples and the last chunk; forced sizes (2, 4, 8: powers of 2, the grouped kernel's) and the
    // rule's own (-2, -1)
    const struct {
        tcase c;
        int group;
    } gcases[] = {
        {{"chunk ticket, groups of 2: D3001, 5-row frames, 60 rows", BF, F, BF, FR, 3001, 60, 60, 5, 0, 8, 4, 0, 0, 0, 0}, 2},
        {{"chunk ticket, groups of 4: D3001, 7-row frames, 57 rows (a last group cut short)", BF, F, BF, FR, 3001, 57, 57, 7, 0, 8, 3, 0, 0, 0, 0}, 4},
        {{"chunk ticket, groups of 8 +6 B: D2100 fp16, 9-row frames, 2 samples", H, F, H, FR, 2100, 90, 45, 9, 0, 8, 3, 0, 0, 6, 0}, 8},
        {{"chunk ticket, the rule's group (2): D2100, 40-row frames, 120 rows, 8 CTAs", BF, F, BF, FR, 2100, 120, 120, 40, 0, 8, 8, 0, 0, 0, 0}, -2},
        // 4 CTAs: claims 20 rows apart change frames at half the chunks, but a reload (2 D x 4 B)
        // is 2/5 of a chunk's bytes (R 5): a fifth in all, so the rule's group is 1
        {{"chunk ticket, the rule's group (1): D2100, 40-row frames, 120 rows, 4 CTAs", BF, F, BF, FR, 2100, 120, 120, 40, 0, 8, 4, 0, 0, 0, 0}, -1},
    };
    for (const auto &g : gcases)
        if (!only || std::strstr(g.c.what, only)) fails += run_case(g.c, seed++, g.group) ? 1 : 0;
    const size_t ncase = sizeof cases / sizeof cases[0] + sizeof gcases / sizeof gcases[0];
    if (fails) {
        std::fprintf(stderr, "fv2_emu_test: %d of %zu cases failed\n", fails, ncase);
        return 1;
    }
    std::printf("fv2_emu_test: ok (%zu cases, each with eager and lazy copies; the chunk class also loads eager / stores lazy, and warp 0 first)\n", ncase);
    return 0;
}

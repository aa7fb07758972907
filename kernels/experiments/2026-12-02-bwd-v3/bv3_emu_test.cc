// bv3_emu_test.cc -- round 3's kernels' own source on the CPU (bv3_emu.h over the forward
// experiment's fv2_emu.h: a coroutine per CUDA thread), against the float64 reference with the
// verifier's allowances (round 2's bv2_check). For each case: half (ring depths 4, 3, 2), k2
// and k2half (4), or tok (4, 3, 2), on a small grid so that CTAs walk several chunks or rows,
// each run twice -- copies landing at issue ("eager": a stage refilled early corrupts a row
// still read) and at the wait ("lazy": a stage read before its wait reads stale bytes). All
// must pass; half, k2 and k2half must give the same bytes (the production's order), and each
// kernel the same bytes under both models -- and the same bytes as the production's own
// bk_kernel ("dtile": kernels/lnmod_bwd_bulk.cu's kernel, emulated the same way). Partials (cpg > 1) are added on the host in chunk
// order (the harness's GPU run checks the built finalize). Built with g++ -DBV3_EMU by
// build.sh against emulation copies of lnmod_common.cuh (asm -> emulation, fv2's rewrite),
// lnmod_bwd_common.cuh (its <<<>>> launchers left out) and the production's namespace (its
// asm helpers -> emulation); build.sh also builds it with -DBV3_PLANT_OWED and
// -DBV3_PLANT_SCAT (bv3_plan.h), which it must catch. Exit 0 passed, 1 failed, 3 emulation
// error (a deadlock, a misaligned copy, an over-arrived mbarrier).
#include "bv3_emu.h"

#define BV3_OPT_HALF 1
#define BV3_OPT_K2 0
#define bv3_bulk_detail bv3_emu_h1k0
#include "bv3_bulk.cu"
#undef bv3_bulk_detail
#undef BV3_OPT_HALF
#undef BV3_OPT_K2
#define BV3_OPT_HALF 0
#define BV3_OPT_K2 1
#define bv3_bulk_detail bv3_emu_h0k1
#include "bv3_bulk.cu"
#undef bv3_bulk_detail
#undef BV3_OPT_HALF
#undef BV3_OPT_K2
#define BV3_OPT_HALF 1
#define BV3_OPT_K2 1
#define bv3_bulk_detail bv3_emu_h1k1
#include "bv3_bulk.cu"
#undef bv3_bulk_detail
#include "bv3_tok.cu"

#include <string>

#include "bv2_check.h"
extern "C" {
#include "ref_lnmod.h"
}

namespace emu {
std::function<void()> *g_body;

// fv2_emu_test.cc's launch (clusters of one CTA): CTAs one after another.
void launch(unsigned grid, unsigned block, unsigned cl, size_t dyn, size_t stat, std::function<void()> body)
{
    state_t &s = S();
    s.block_dim = make_uint3(block, 1, 1);
    s.grid_dim = make_uint3(grid, 1, 1);
    g_body = &body;
    for (unsigned c0 = 0; c0 < grid; c0 += cl) {
        std::vector<cta_t> ctas(cl);
        std::vector<thr_t> thr((size_t)cl * block);
        s.cluster.clear();
        for (unsigned i = 0; i < cl; i++) {
            ctas[i].smem.assign(dyn / 16 + 1, make_uint4(0xffc00001u, 0xffc00001u, 0xffc00001u, 0xffc00001u));
            ctas[i].static_smem.assign(stat / 16 + 1, make_uint4(0, 0, 0, 0));
            ctas[i].bid = make_uint3(c0 + i, 0, 0);
            ctas[i].alive = (int)block;
            ctas[i].warps.resize(block / 32);
            s.cluster.push_back(&ctas[i]);
        }
        s.cl_count = 0;
        s.cl_alive = (int)(cl * block);
        s.cl_phase = 0;
        X().bars.clear();
        X().named.clear();
        for (size_t i = 0; i < thr.size(); i++) {
            thr_t &t = thr[i];
            t.stack.resize(128 * 1024);
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
        for (;;) {
            bool any = false;
            const long e0 = s.epoch;
            for (thr_t &t : thr)
                if (!t.done) {
                    any = true;
                    s.cur = &t;
                    swapcontext(&s.sched, &t.ctx);
                }
            if (!any) break;
            if (s.epoch == e0) die("deadlock: a full pass of every thread changed nothing");
        }
        for (auto &b : X().bars)
            if (!b.second.pending.empty() || b.second.arrivals || b.second.tx)
                die("a CTA ended with copies in flight on an mbarrier");
    }
}
} // namespace emu

namespace {

using namespace lnmod_detail;
using lnmod_bulk_detail::bk_kp;

struct tcase {
    const char *what;
    lnmod_dtype xt, mt, yt;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    unsigned grid;
};
const lnmod_dtype BF = LNMOD_BF16, F32 = LNMOD_F32, H = LNMOD_F16;
const tcase CASES[] = {
    {"bf16 sample D256 S37 (odd shares, one chunk a group)", BF, F32, BF, LNMOD_PER_SAMPLE, 256, 111, 37, 1, 2},
    {"bf16 sample D1536 S150 (partials, 3 CTAs walk 8 chunks)", BF, F32, BF, LNMOD_PER_SAMPLE, 1536, 300, 150, 1, 3},
    {"bf16 sample D5120 S70 (G 2)", BF, F32, BF, LNMOD_PER_SAMPLE, 5120, 140, 70, 1, 3},
    {"f16 frame D2048 L30 S100 (short last frame)", H, H, H, LNMOD_PER_FRAME, 2048, 200, 100, 30, 4},
    {"bf16-bf16-f32 sample D3072 S67", BF, BF, F32, LNMOD_PER_SAMPLE, 3072, 134, 67, 1, 2},
    {"f32 sample D1000 S33", F32, F32, F32, LNMOD_PER_SAMPLE, 1000, 66, 33, 1, 2},
    {"bf16 sample D1536 S3 (rows < G)", BF, F32, BF, LNMOD_PER_SAMPLE, 1536, 6, 3, 1, 2},
    {"bf16 sample D1000 S21 (nv 125 < 2T)", BF, F32, BF, LNMOD_PER_SAMPLE, 1000, 63, 21, 1, 2},
    {"bf16 token D1536 r37", BF, F32, BF, LNMOD_PER_TOKEN, 1536, 37, 37, 1, 3},
    {"f32 token D8 r37", F32, F32, F32, LNMOD_PER_TOKEN, 8, 37, 37, 1, 2},
    {"bf16-bf16-f32 token D1000 r23", BF, BF, F32, LNMOD_PER_TOKEN, 1000, 23, 23, 1, 2},
    {"f16 token D2048 r19", H, H, H, LNMOD_PER_TOKEN, 2048, 19, 19, 1, 2},
    {"bf16 token D5120 r9 (G 2)", BF, F32, BF, LNMOD_PER_TOKEN, 5120, 9, 9, 1, 2},
};

// The dtype triples round 3 compiles (bv3_bulk.cu's bv3_triple, host side).
template <typename TX, typename TM, typename TY> constexpr bool triple_ok()
{
    using B = __nv_bfloat16;
    return (std::is_same_v<TX, B> && std::is_same_v<TM, float> && std::is_same_v<TY, B>) ||
           (std::is_same_v<TX, B> && std::is_same_v<TM, B> && std::is_same_v<TY, float>) ||
           (std::is_same_v<TX, __half> && std::is_same_v<TM, __half> && std::is_same_v<TY, __half>) ||
           (std::is_same_v<TX, float> && std::is_same_v<TM, float> && std::is_same_v<TY, float>);
}

struct bufs {
    std::vector<uint4> x, dy, sc, dx, ds, dh; // uint4: 16-byte aligned
    std::vector<float> mean, rstd, ws;
};
size_t n16(size_t bytes) { return bytes / 16 + 1; }

// One kernel on the case: outputs into b.dx/ds/dh. kern: 0 the production's bk_kernel, 1 half,
// 2 k2, 3 k2half, 4 tok.
template <typename TX, typename TM, typename TY>
void run_one(const lnmod_desc &d, bufs &b, int kern, int ns, unsigned grid)
{
    const int64_t vec = 16 / (int64_t)sizeof(TX);
    int T = 0, G = 0;
    if (!lnmod_bulk_shape(d.D / vec, &T, &G)) emu::die("the case has no bulk row shape");
    std::fill(b.dx.begin(), b.dx.end(), make_uint4(0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu));
    std::fill(b.ds.begin(), b.ds.end(), make_uint4(0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu));
    std::fill(b.dh.begin(), b.dh.end(), make_uint4(0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu, 0x7fbfffffu));
    lnmod_bparams p = lnmod_make_bparams(&d, b.x.data(), b.sc.data(), b.dy.data(), b.mean.data(), b.rstd.data(),
                                         b.dx.data(), b.ds.data(), b.dh.data(), nullptr);
    std::function<void()> body;
    size_t dyn = 0;
    if (kern == 4) {
        bv3_tok_detail::bt_kp k;
        k.p = p;
        k.rows = d.rows;
        k.D = (int32_t)d.D;
        k.nv = (int32_t)(d.D / vec);
        using C = bv3_tok_detail::bt_cfg<TX, TM, TY>;
        dyn = (size_t)bv3_tok_smem(G, ns, T, C::SLOTS);
#define BV3_TOK_NS(N, GG) body = [k] { bv3_tok_detail::bt_kernel<TX, TM, TY, N, GG>(k); };
        if (G == 4) {
            if (ns == 4) BV3_TOK_NS(4, 4) else if (ns == 3) BV3_TOK_NS(3, 4) else BV3_TOK_NS(2, 4)
        } else {
            if (ns == 4) BV3_TOK_NS(4, 2) else if (ns == 3) BV3_TOK_NS(3, 2) else BV3_TOK_NS(2, 2)
        }
#undef BV3_TOK_NS
        emu::launch(grid, (unsigned)(G * T), 1, dyn, 8192, body);
        return;
    }
    bk_kp k;
    k.p = p;
    k.pl = lnmod_bulk_make_plan(d.rows, d.rows_per_sample, d.frame_len, (int)d.layout);
    k.p.cpg = k.pl.cpg;
    k.p.nchunks = k.pl.nchunks;
    b.ws.assign((size_t)(k.pl.nchunks * 2 * d.D), NAN);
    k.p.ws = k.pl.cpg > 1 ? b.ws.data() : nullptr;
    k.D = (int32_t)d.D;
    k.nv = (int32_t)(d.D / vec);
    using C = lnmod_bulk_detail::bk_cfg<TX, TY>;
    dyn = (size_t)bv3_bulk_smem(G, ns, T, C::SLOTS, C::VEC, d.D, C::SPS, kern == 1 || kern == 3);
#define BV3_BULK(NSP, NS_, GG)                                                                                  \
    body = kern == 0   ? std::function<void()>([k] { lnmod_bulk_detail::bk_kernel<TX, TM, TY, NS_, GG>(k); }) \
           : kern == 1 ? std::function<void()>([k] { NSP::bv3_kernel<TX, TM, TY, NS_, GG>(k); })                \
           : kern == 2 ? std::function<void()>([k] { bv3_emu_h0k1::bv3_kernel<TX, TM, TY, 4, GG>(k); })         \
                       : std::function<void()>([k] { bv3_emu_h1k1::bv3_kernel<TX, TM, TY, 4, GG>(k); });
    if (G == 4) {
        if (ns == 4) BV3_BULK(bv3_emu_h1k0, 4, 4) else if (ns == 3) BV3_BULK(bv3_emu_h1k0, 3, 4) else BV3_BULK(bv3_emu_h1k0, 2, 4)
    } else {
        if (ns == 4) BV3_BULK(bv3_emu_h1k0, 4, 2) else if (ns == 3) BV3_BULK(bv3_emu_h1k0, 3, 2) else BV3_BULK(bv3_emu_h1k0, 2, 2)
    }
#undef BV3_BULK
    emu::launch(grid, (unsigned)(G * T), 1, dyn, 8192, body);
    if (k.pl.cpg <= 1) return;
    // the partials of each group added in chunk order (the test's finalize)
    for (int64_t g = 0; g < k.pl.ngroups; g++) {
        int64_t s0, len;
        lnmod_bulk_group_rows(&k.pl, g, &s0, &len);
        const int64_t nk = len < k.pl.cpg ? len : k.pl.cpg;
        for (int64_t c = 0; c < d.D; c++) {
            float a = 0, h = 0;
            for (int64_t q = 0; q < nk; q++) {
                a += b.ws[(size_t)(((g * k.pl.cpg + q) * 2) * d.D + c)];
                h += b.ws[(size_t)(((g * k.pl.cpg + q) * 2 + 1) * d.D + c)];
            }
            reinterpret_cast<TM *>(b.ds.data())[g * d.scale_stride + c] = dt<TM>::from_f(a);
            reinterpret_cast<TM *>(b.dh.data())[g * d.shift_stride + c] = dt<TM>::from_f(h);
        }
    }
}

int run_case(const tcase &t, uint64_t seed)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = t.rows;
    d.D = t.D;
    d.rows_per_sample = t.S;
    d.frame_len = t.L;
    d.x_dtype = t.xt;
    d.mod_dtype = t.mt;
    d.y_dtype = t.yt;
    d.layout = t.lay;
    d.scale_stride = d.shift_stride = t.lay == LNMOD_PER_TOKEN ? t.D : 6 * t.D;
    if (lnmod_desc_validate(&d) != LNMOD_OK) emu::die("bad case");
    const int64_t n = d.rows * d.D, nm = lnmod_mod_rows(&d);
    const size_t xs = lnmod_dtype_size(d.x_dtype), ys = lnmod_dtype_size(d.y_dtype), ms = lnmod_dtype_size(d.mod_dtype);
    const size_t mb = (size_t)((nm - 1) * d.scale_stride + d.D) * ms;
    bufs b;
    b.x.resize(n16((size_t)n * xs));
    b.dy.resize(n16((size_t)n * ys));
    b.sc.resize(n16(mb));
    b.dx.resize(n16((size_t)n * xs));
    b.ds.resize(n16(mb));
    b.dh.resize(n16(mb));
    std::vector<char> sh(mb);
    uint64_t s = seed;
    auto urand = [&s] {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return (double)(s >> 11) * (1.0 / 9007199254740992.0);
    };
    for (int64_t i = 0; i < n; i++) {
        ref_store(d.x_dtype, b.x.data(), i, (urand() - 0.5) * 4.0 + (double)((i / d.D) % 7) * 3.0);
        ref_store(d.y_dtype, b.dy.data(), i, urand() - 0.5);
    }
    for (int64_t i = 0; i < (int64_t)(mb / ms); i++) {
        ref_store(d.mod_dtype, b.sc.data(), i, (urand() - 0.5) * 0.5);
        ref_store(d.mod_dtype, sh.data(), i, urand() - 0.5);
    }
    std::vector<double> y((size_t)n), mean((size_t)d.rows), rstd((size_t)d.rows);
    if (ref_lnmod_forward(&d, b.x.data(), b.sc.data(), sh.data(), y.data(), mean.data(), rstd.data()) != LNMOD_OK)
        emu::die("reference forward");
    b.mean.resize((size_t)d.rows);
    b.rstd.resize((size_t)d.rows);
    for (int64_t r = 0; r < d.rows; r++) {
        b.mean[(size_t)r] = ref_f64_to_f32(mean[(size_t)r]);
        b.rstd[(size_t)r] = ref_f64_to_f32(rstd[(size_t)r]);
    }
    struct out {
        std::string name;
        std::vector<uint4> dx, ds, dh;
    };
    std::vector<out> outs;
    const bool tok = t.lay == LNMOD_PER_TOKEN;
    struct kr {
        int kern, ns;
        const char *name;
    };
    const kr bulk[] = {{0, 4, "dtile ns4"}, {0, 3, "dtile ns3"}, {0, 2, "dtile ns2"}, {1, 4, "half ns4"},
                       {1, 3, "half ns3"},  {1, 2, "half ns2"},  {2, 4, "k2 ns4"},    {3, 4, "k2half ns4"}};
    const kr toks[] = {{4, 4, "tok ns4"}, {4, 3, "tok ns3"}, {4, 2, "tok ns2"}};
    const kr *ks = tok ? toks : bulk;
    const int nk = tok ? 3 : 8;
    for (int i = 0; i < nk; i++)
        for (int eager = 1; eager >= 0; eager--) {
            emu::S().eager = eager != 0;
            lnmod_dispatch_dtypes(&d, [&](auto tx, auto tm, auto ty) {
                using TX = typename decltype(tx)::type;
                using TM = typename decltype(tm)::type;
                using TY = typename decltype(ty)::type;
                if constexpr (triple_ok<TX, TM, TY>())
                    run_one<TX, TM, TY>(d, b, ks[i].kern, ks[i].ns, t.grid);
                else
                    emu::die("a case with a dtype triple round 3 does not compile");
                return LNMOD_OK;
            });
            outs.push_back({std::string(ks[i].name) + (eager ? " eager" : " lazy"), b.dx, b.ds, b.dh});
        }
    std::vector<bv2_got> got;
    for (const out &o : outs) got.push_back(bv2_got{o.dx.data(), o.ds.data(), o.dh.data(), 0, 0, nullptr});
    if (bv2_check(&d, b.x.data(), b.sc.data(), b.dy.data(), b.mean.data(), b.rstd.data(), got.data(),
                  (int)got.size(), 4) != 0)
        emu::die("the reference refused a case");
    int fails = 0;
    auto same = [&](const out &p, const out &q) {
        return !memcmp(p.dx.data(), q.dx.data(), (size_t)n * xs) && !memcmp(p.ds.data(), q.ds.data(), mb) &&
               !memcmp(p.dh.data(), q.dh.data(), mb);
    };
    for (size_t i = 0; i < outs.size(); i++) {
        // every depth, model and (bulk) candidate gives the first one's bytes
        const bool pass = got[i].fails == 0 && same(outs[i], outs[0]);
        fails += pass ? 0 : 1;
        std::printf("  %-16s worst %.3f (%s) fails %lld  same bytes as %s: %s  %s\n", outs[i].name.c_str(),
                    got[i].worst, got[i].worst_of ? got[i].worst_of : "-", (long long)got[i].fails,
                    outs[0].name.c_str(), same(outs[i], outs[0]) ? "yes" : "NO", pass ? "ok" : "FAIL");
    }
    return fails;
}

} // namespace

int main()
{
    int fails = 0;
    uint64_t seed = 88172645463325252ull;
    for (const tcase &t : CASES) {
        std::printf("== %s\n", t.what);
        fails += run_case(t, seed++);
        std::fflush(stdout);
    }
    std::printf("bv3_emu_test: %s (%d failures)\n", fails ? "FAILED" : "passed", fails);
    return fails ? 1 : 0;
}

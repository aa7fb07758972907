// res_emu_test.cc -- dtile_bulk's own kernel source (res_dtile_bulk.cu, -DRES_EMU) on the CPU
// over the bwd-v3 experiment's emulation (bv3_emu.h over fv2_emu.h: a coroutine per CUDA
// thread, warp shuffles, barriers, named barriers, mbarriers, 1-D bulk copies, cp.async with
// arrive.noinc), against the float64 reference with resbench's allowances (res_check.h).
// Each case: resbench's inputs (res_inputs.h), h = fmaf(g, y, r) in fp32 and its mean / rstd on
// the host (the forward's contract), a small grid so that CTAs walk several chunks; every ring
// depth that fits (3, 2) x copies landing at issue ("eager": a stage refilled early corrupts a
// row still read) or at the wait ("lazy": a stage read before its wait reads stale bytes). All
// must pass, and all runs of a case must give the same bytes (the depth and the copy timing
// change no bit). Partials (cpg > 1) are added on the host in chunk order (resbench's GPU run
// checks res_finalize). Built by build.sh (g++ -DRES_EMU) against the emulation copies of
// lnmod_common.cuh and lnmod_bwd_common.cuh that the bwd-v3 build makes the same way; with
// -DRES_BULK_PLANT_SHARE (res_bulk_plan.h) it must fail. Exit 0 passed, 1 failed, 3 emulation
// error (a deadlock, a misaligned copy, an over-arrived mbarrier).
#define RES_EMU 1
#include "res_dtile_bulk.cu"

#include <cmath>
#include <cstring>
#include <string>

#include "res_check.h"
#include "res_inputs.h"

namespace emu {
std::function<void()> *g_body;

// bv3_emu_test.cc's launch (clusters of one CTA): CTAs one after another.
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

using namespace res_bulk_detail;

struct tcase {
    const char *what;
    int gate, dh;
    lnmod_layout lay;
    int64_t D, rows, S, L;
    unsigned grid;
};
const tcase CASES[] = {
    {"site3 sample D1536 S150 (G 4, partials: 10 chunks on 3 CTAs)", 1, 1, LNMOD_PER_SAMPLE, 1536, 300, 150, 1, 3},
    {"site3 frame D264 S142 L70 (G 4, quads past D, a chunk with no rows)", 1, 1, LNMOD_PER_FRAME, 264, 284, 142, 70,
     4},
    {"site2 token D2056 no dh (G 2, cpg 1)", 0, 0, LNMOD_PER_TOKEN, 2056, 7, 7, 1, 3},
    {"site3 sample D5120 S40 in 2 samples (G 1)", 1, 1, LNMOD_PER_SAMPLE, 5120, 80, 40, 1, 2},
};

lnmod_res_desc desc_of(const tcase &c)
{
    lnmod_res_desc d = lnmod_res_desc_default();
    d.rows = c.rows;
    d.D = c.D;
    d.rows_per_sample = c.S;
    d.frame_len = c.L;
    d.layout = c.lay;
    d.gate = c.gate ? LNMOD_RES_GATE : LNMOD_RES_GATE_NONE;
    d.norm = LNMOD_RES_MODULATE;
    d.res_dtype = LNMOD_F32;
    d.branch_dtype = LNMOD_BF16;
    d.mod_dtype = LNMOD_F32;
    d.out_dtype = LNMOD_BF16;
    d.gate_stride = d.scale_stride = d.shift_stride = 6 * c.D;
    return d;
}

int64_t mod_row(const lnmod_res_desc &d, int64_t i)
{
    if (d.layout == LNMOD_PER_TOKEN) return i;
    if (d.layout == LNMOD_PER_SAMPLE) return i / d.rows_per_sample;
    const int64_t F = (d.rows_per_sample + d.frame_len - 1) / d.frame_len;
    return i / d.rows_per_sample * F + i % d.rows_per_sample / d.frame_len;
}

float bf(const char *p, int64_t i)
{
    uint16_t u;
    std::memcpy(&u, p + 2 * i, 2);
    const uint32_t w = (uint32_t)u << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
}

struct outs {
    std::vector<float> dr, ws, wg;
    std::vector<uint16_t> dy;
    std::vector<float> dgate, dscale, dshift;
};

// One run of the kernel at ring depth ns (the emulation's copy model set by the caller).
void run(const lnmod_res_desc &d, const tcase &c, const res_host &hi, const std::vector<float> &h,
         const std::vector<float> &mean, const std::vector<float> &rstd, int ns, outs &o)
{
    int T = 0, G = 0;
    if (!res_bulk_shape(d.D, &T, &G)) emu::die("the case has no row shape");
    const int64_t n = d.rows * d.D;
    rk_kp k;
    std::memset(&k, 0, sizeof k);
    k.p.rows = d.rows;
    k.p.D = d.D;
    k.p.hin = h.data();
    k.p.y = c.gate ? hi.y.data() : nullptr;
    k.p.gate = c.gate ? hi.gate.data() : nullptr;
    k.p.scale = hi.scale.data();
    k.p.dout = hi.dout.data();
    k.p.dh = c.dh ? hi.dh.data() : nullptr;
    k.p.mean_in = mean.data();
    k.p.rstd_in = rstd.data();
    o.dr.assign((size_t)n, NAN);
    o.dy.assign((size_t)n, 0xffffu);
    k.p.dr = o.dr.data();
    k.p.dy = o.dy.data();
    k.p.has_gate = c.gate;
    k.p.gate_stride = d.gate_stride;
    k.p.scale_stride = d.scale_stride;
    lnmod_desc nd = lnmod_desc_default(); // res_common.cu's plan_desc of the norm's plan
    nd.rows = d.rows;
    nd.D = d.D;
    nd.layout = d.layout;
    nd.rows_per_sample = d.rows_per_sample;
    nd.frame_len = d.frame_len;
    nd.x_dtype = nd.y_dtype = nd.mod_dtype = LNMOD_F32;
    nd.scale_stride = d.scale_stride;
    nd.shift_stride = d.shift_stride;
    nd.eps = d.eps;
    k.q = lnmod_make_bparams(&nd, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
    const int64_t nm = lnmod_mod_rows(&nd);
    o.dscale.assign((size_t)(nm * d.scale_stride), NAN);
    o.dshift.assign((size_t)(nm * d.shift_stride), NAN);
    o.dgate.assign((size_t)(nm * d.gate_stride), NAN);
    o.ws.assign((size_t)(k.q.nchunks * 2 * d.D), NAN);
    o.wg.assign((size_t)(k.q.nchunks * d.D), NAN);
    k.on = {{o.dscale.data(), o.dshift.data(), nullptr}, {d.scale_stride, d.shift_stride, 0}};
    k.og = {{o.dgate.data(), nullptr, nullptr}, {d.gate_stride, 0, 0}};
    k.wn = o.ws.data();
    k.wg = o.wg.data();
    k.sg = res_bulk_stage_of(d.D, c.dh, c.gate);
    k.D = (int32_t)d.D;
    k.nq = (int32_t)(d.D / 4);
    std::function<void()> body;
#define RES_EMU_K(N, GG) body = [k] { rk_kernel<N, GG>(k); };
    if (G == 4) {
        if (ns == 3) RES_EMU_K(3, 4) else RES_EMU_K(2, 4)
    } else if (G == 2) {
        if (ns == 3) RES_EMU_K(3, 2) else RES_EMU_K(2, 2)
    } else {
        if (ns == 3) RES_EMU_K(3, 1) else RES_EMU_K(2, 1)
    }
#undef RES_EMU_K
    const size_t dyn = (size_t)res_bulk_smem(G, ns, T, k.sg.bytes);
    emu::launch(c.grid, (unsigned)(G * T), 1, dyn, 4096, body);
    if (k.q.cpg <= 1) return;
    for (int64_t g = 0; g < nm; g++) // the test's finalize: each group's partials in chunk order
        for (int64_t j = 0; j < d.D; j++) {
            float a = 0.0f, b = 0.0f, e = 0.0f;
            for (int64_t q = 0; q < k.q.cpg; q++) {
                int64_t gg, r0, nn;
                const int64_t ch = g * k.q.cpg + q;
                lnmod_chunk_rows(k.q, ch, &gg, &r0, &nn);
                if (nn == 0) continue; // never written
                a += o.ws[(size_t)(ch * 2 * d.D + j)];
                b += o.ws[(size_t)(ch * 2 * d.D + d.D + j)];
                if (c.gate) e += o.wg[(size_t)(ch * d.D + j)];
            }
            o.dscale[(size_t)(g * d.scale_stride + j)] = a;
            o.dshift[(size_t)(g * d.shift_stride + j)] = b;
            if (c.gate) o.dgate[(size_t)(g * d.gate_stride + j)] = e;
        }
}

bool same(const outs &a, const outs &b, const lnmod_res_desc &d, int gate)
{
    const int64_t nm = lnmod_res_mod_rows(&d);
    bool ok = std::memcmp(a.dr.data(), b.dr.data(), a.dr.size() * 4) == 0 &&
              std::memcmp(a.dy.data(), b.dy.data(), a.dy.size() * 2) == 0;
    const size_t row = 4 * (size_t)d.D;
    for (int64_t g = 0; g < nm; g++) {
        const size_t s1 = (size_t)(g * d.scale_stride), s2 = (size_t)(g * d.shift_stride),
                     s3 = (size_t)(g * d.gate_stride);
        ok = ok && !std::memcmp(&a.dscale[s1], &b.dscale[s1], row) && !std::memcmp(&a.dshift[s2], &b.dshift[s2], row);
        if (gate) ok = ok && !std::memcmp(&a.dgate[s3], &b.dgate[s3], row);
    }
    return ok;
}

} // namespace

int main()
{
    int bad = 0;
    for (size_t ci = 0; ci < sizeof CASES / sizeof CASES[0]; ci++) {
        const tcase &c = CASES[ci];
        const lnmod_res_desc d = desc_of(c);
        if (lnmod_res_desc_validate(&d) != LNMOD_OK) emu::die("bad case");
        res_host hi;
        res_make_inputs(&d, 7, (uint64_t)ci, 2, &hi);
        const int64_t D = d.D;
        std::vector<float> h((size_t)(d.rows * D)), mean((size_t)d.rows), rstd((size_t)d.rows);
        for (int64_t i = 0; i < d.rows; i++) { // the forward's h in fp32 and its statistics
            const int64_t m = mod_row(d, i);
            double s = 0.0, s2 = 0.0;
            for (int64_t j = 0; j < D; j++) {
                float r;
                std::memcpy(&r, hi.r.data() + 4 * (i * D + j), 4);
                float g = 1.0f;
                if (c.gate) std::memcpy(&g, hi.gate.data() + 4 * (m * d.gate_stride + j), 4);
                const float v = c.gate ? std::fmaf(g, bf(hi.y.data(), i * D + j), r) : r + bf(hi.y.data(), i * D + j);
                h[(size_t)(i * D + j)] = v;
                s += v;
            }
            const double mu = s / (double)D;
            for (int64_t j = 0; j < D; j++) s2 += (h[(size_t)(i * D + j)] - mu) * (h[(size_t)(i * D + j)] - mu);
            mean[(size_t)i] = (float)mu;
            rstd[(size_t)i] = (float)(1.0 / std::sqrt(s2 / (double)D + d.eps));
        }
        int T = 0, G = 0;
        (void)res_bulk_shape(D, &T, &G);
        const int top = res_bulk_stages(G, T, res_bulk_stage_of(D, c.dh, c.gate).bytes, 232448 - 1024);
        outs first;
        bool have = false;
        for (int ns = top; ns >= 2; ns--)
            for (int eager = 1; eager >= 0; eager--) {
                emu::S().eager = eager != 0;
                outs o;
                run(d, c, hi, h, mean, rstd, ns, o);
                const lnmod_res_bwd_in in = {h.data(),        c.gate ? hi.y.data() : nullptr,
                                             c.gate ? hi.gate.data() : nullptr,
                                             hi.scale.data(), hi.dout.data(),
                                             c.dh ? hi.dh.data() : nullptr,
                                             mean.data(),     rstd.data()};
                const lnmod_res_bwd_out got = {o.dr.data(), o.dy.data(), c.gate ? o.dgate.data() : nullptr,
                                               o.dscale.data(), o.dshift.data()};
                res_verdict v;
                if (res_check_bwd(&d, &in, &got, 2, &v) != 0) emu::die("the reference refused a case");
                const bool bits = !have || same(first, o, d, c.gate);
                const bool ok = res_verdict_fails(&v) == 0 && bits;
                std::printf("%-66s G %d T %3d NS %d %-5s worst %.3f (%s) fails %lld bits %s  %s\n", c.what, G, T, ns,
                            eager ? "eager" : "lazy", v.worst, v.worst_of < 0 ? "-" : res_out_name[v.worst_of],
                            (long long)res_verdict_fails(&v), have ? (bits ? "same" : "DIFFER") : "-",
                            ok ? "ok" : "FAIL");
                bad += ok ? 0 : 1;
                if (!have) {
                    first = o;
                    have = true;
                }
            }
    }
    std::printf("res_emu_test: %s\n", bad ? "FAILED" : "every case passed");
    return bad ? 1 : 0;
}

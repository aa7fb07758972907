// emu_res.cc -- the fused op's new dtile kernels (a tree with res-v3.patch applied) run from
// their own source on the CPU, under the CUDA emulation of the fwd-v2 experiment
// (../../2026-12-02-fwd-v2/fv2_emu.h: a coroutine per CUDA thread, warp shuffles and barriers as
// counted rendezvous) and emu_bulk.h (mbarriers, bulk copies, named barriers), each as a
// verify_res_runner: the verifier's own sets, inputs (adversarial rows included) and allowances
// (verify_res_run, verify_check_res.h) judge them exactly as they judge the GPU.
//   emu_res fwd   the general forward (lnmod_res_fwd_gen.cuh, rg_fwd_kernel); the backward of
//                 each set is the fp32 CPU model's
//   emu_res bwd   the bulk-ring backward (lnmod_res_bwd_bulk.cu's rk_kernel and
//                 lnmod_res_common.cu's res_fin_kernel and plans, via emu_prep.py), at the
//                 modulate and the affine sites; the forward of each set is the CPU model's
// Built and run by emu.sh. Exit 0: every set passed (and enough of them ran); 1: a case failed;
// 2: a set could not run.
#include "fv2_emu.h"

using std::max;
using std::min;

#define LNMOD_RES_SHARED(T, name) T &name = *reinterpret_cast<T *>(emu::static_smem())
#define rg_fwd_kernel rg_fwd_kernel_emu // never the name of the real kernel's host stub
#include "lnmod_res_fwd_gen.cuh"
#include "res_common_emu.inc"
#include "res_bulk_emu.inc"
#define rc_fwd_kernel rc_fwd_kernel_emu
#include "lnmod_res_fwd_chunk.cuh"

#include <string>

extern "C" {
#include "verify_res.h"
}

namespace emu {
std::function<void()> *g_body;

// One CTA at a time (no clusters here), every thread a coroutine, round-robin until all exit.
void launch(unsigned grid, unsigned block, unsigned cl, size_t dyn, size_t stat, std::function<void()> body)
{
    // cl CTAs at once under the round-robin scheduler (the chunk ring's ticket claims interleave
    // across them); cl 0 or 1: one CTA after another.
    if (cl == 0) cl = 1;
    state_t &s = S();
    s.block_dim = make_uint3(block, 1, 1);
    s.grid_dim = make_uint3(grid, 1, 1);
    g_body = &body;
    for (unsigned b0 = 0; b0 < grid; b0 += cl) {
        const unsigned nc = grid - b0 < cl ? grid - b0 : cl;
        std::vector<cta_t> ctas(nc);
        std::vector<thr_t> thr((size_t)nc * block);
        s.cluster.clear();
        s.tx.clear(); // mbarrier transaction state (addresses in the CTAs' shared memory)
        for (unsigned j = 0; j < nc; j++) {
            cta_t &cta = ctas[j];
            cta.smem.assign(dyn / 16 + 1, make_uint4(0xffc00001u, 0xffc00001u, 0xffc00001u, 0xffc00001u));
            cta.static_smem.assign(stat / 16 + 1, make_uint4(0x7fc00001u, 0x7fc00001u, 0x7fc00001u, 0x7fc00001u));
            cta.bid = make_uint3(b0 + j, 0, 0);
            cta.rank = j;
            cta.alive = (int)block;
            cta.warps.resize(block / 32);
            s.cluster.push_back(&cta);
        }
        s.cl_count = 0;
        s.cl_alive = (int)(nc * block);
        s.cl_phase = 0;
        for (size_t i = 0; i < thr.size(); i++) {
            thr_t &t = thr[i];
            const unsigned tid = (unsigned)(i % block);
            t.stack.resize(64 * 1024);
            getcontext(&t.ctx);
            t.ctx.uc_stack.ss_sp = t.stack.data();
            t.ctx.uc_stack.ss_size = t.stack.size();
            t.ctx.uc_link = nullptr;
            makecontext(&t.ctx, entry, 0);
            t.cta = &ctas[i / block];
            t.tid = make_uint3(tid, 0, 0);
            t.lane = (int)tid & 31;
            t.warp = (int)tid >> 5;
        }
        schedule(thr);
    }
}
} // namespace emu

namespace {

using namespace lnmod_res_detail;

bool aligned16(const void *q) { return ((uintptr_t)q & 15u) == 0; }

// The general forward's conditions (res_fwd_dtile_shape / _takes of the patched tree, less the
// three D-specialized widths).
bool gen_takes(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out, int *T, int *V)
{
    if (d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 || d->mod_dtype != LNMOD_F32 ||
        d->out_dtype != LNMOD_BF16 || d->D == 1536 || d->D == 3072 || d->D == 5120 ||
        !lnmod_res_fwd_gen_shape(d->D, T, V))
        return false;
    if (d->gate == LNMOD_RES_GATE && (d->gate_stride % 4 != 0 || !aligned16(in->gate))) return false;
    if (d->norm == LNMOD_RES_MODULATE && (d->scale_stride % 4 != 0 || d->shift_stride % 4 != 0)) return false;
    return aligned16(in->r) && aligned16(in->y) && aligned16(in->scale) && aligned16(in->shift) && aligned16(out->h) &&
           aligned16(out->out);
}

int64_t g_ran;

int emu_fwd(verify_res_runner *, const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
            char *err, size_t errn)
{
    int T = 0, V = 0;
    if (!gen_takes(d, in, out, &T, &V)) {
        snprintf(err, errn, "not dtile's general forward path (D %lld)", (long long)d->D);
        return -1;
    }
    res_params p = res_make_params(d);
    p.r = in->r;
    p.y = in->y;
    p.gate = in->gate;
    p.scale = in->scale;
    p.shift = in->shift;
    p.h = out->h;
    p.out = out->out;
    p.mean = out->mean;
    p.rstd = out->rstd;
    const int U = (int)(d->D / 8);
    const unsigned grid = (unsigned)(d->rows < 3 ? d->rows : 3); // grid-stride and parity reuse
    std::function<void()> body;
    switch (V) {
    case 1: body = [&] { rg_fwd_kernel_emu<1>(p, U); }; break;
    case 2: body = [&] { rg_fwd_kernel_emu<2>(p, U); }; break;
    case 3: body = [&] { rg_fwd_kernel_emu<3>(p, U); }; break;
    case 4: body = [&] { rg_fwd_kernel_emu<4>(p, U); }; break;
    default: body = [&] { rg_fwd_kernel_emu<5>(p, U); }; break;
    }
    emu::launch(grid, (unsigned)T, 1, 0, sizeof(rg_shared), body);
    g_ran++;
    return 0;
}

// res_bwd_bulk (lnmod_res_bwd_bulk.cu) with its two launches emulated: the ring kernel on a few
// CTAs (each walks several chunks), its ring as deep as an H200's 227 KB allow; then the norm's
// and the gate's finalize (res_finalize's kernels, their plans the library's).
using lnmod_res_bulk_detail::rk_kernel;
using lnmod_res_bulk_detail::rk_kp;

template <int NS, int G> void ring(const rk_kp &k, unsigned grid, int T, size_t smem)
{
    emu_bulk::reset();
    emu::launch(grid, (unsigned)(G * T), 1, smem, 4096, [&] { rk_kernel<NS, G>(k); });
}

template <int NS> void fin(const lnmod_bparams &q, const float *ws, const res_fin_out &o)
{
    if (q.cpg <= 1) return; // final values written by the ring kernel
    const int64_t items = q.ngroups * ((q.D + 31) / 32);
    emu::launch((unsigned)(items < 3 ? items : 3), BWD_FIN_WARPS * 32, 1, 0, sizeof(float) * NS * BWD_FIN_WARPS * 32,
                [&] { res_fin_kernel<float, NS>(q, ws, o); });
}

int emu_bwd(verify_res_runner *, const lnmod_res_desc *d, const lnmod_res_bwd_in *in, const lnmod_res_bwd_out *out,
            char *err, size_t errn)
{
    int T = 0, G = 0;
    if (!res_bwd_bulk_takes(d, in, out) || !lnmod_res_bulk_shape(d->D, &T, &G)) {
        snprintf(err, errn, "not the bulk ring's path (D %lld, norm %d, layout %d)", (long long)d->D, (int)d->norm,
                 (int)d->layout);
        return -1;
    }
    rk_kp k;
    k.p = res_make_params(d);
    k.p.hin = in->h;
    k.p.y = in->y;
    k.p.gate = in->gate;
    k.p.scale = in->scale;
    k.p.dout = in->dout;
    k.p.dh = in->dh;
    k.p.mean_in = in->mean;
    k.p.rstd_in = in->rstd;
    k.p.dr = out->dr;
    k.p.dy = out->dy;
    const res_ws_layout w = res_ws_of(d);
    std::vector<uint4> wsv((size_t)(w.total / 16 + 1), make_uint4(0x7fc00001u, 0x7fc00001u, 0x7fc00001u, 0x7fc00001u));
    char *ws = reinterpret_cast<char *>(wsv.data()); // NaN everywhere: a partial read unwritten shows
    k.q = res_bulk_walk(d);
#ifdef EMU_PLANT_AFFINE_FIN
    const lnmod_bparams qn = k.q; // planted (harness): the affine norm's finalize over the walk's own groups
#else
    const lnmod_bparams qn = res_bulk_norm_fin(d, k.q);
#endif
    k.norm_final = qn.cpg == 1;
    k.on = {{out->dscale, out->dshift, nullptr}, {d->scale_stride, d->shift_stride, 0}};
    k.og = {{out->dgate, nullptr, nullptr}, {d->gate_stride, 0, 0}};
    k.wn = reinterpret_cast<float *>(ws + w.norm);
    k.wg = reinterpret_cast<float *>(ws + w.gate);
    k.sg = lnmod_res_bulk_stage_of(d->D, in->dh != nullptr, k.p.has_gate);
    k.D = (int32_t)d->D;
    k.nq = (int32_t)(d->D / 4);
    const int ns = lnmod_res_bulk_stages(G, T, k.sg.bytes, 232448 - 4096);
    if (ns == 0) {
        snprintf(err, errn, "the ring does not fit (D %lld)", (long long)d->D);
        return -1;
    }
    const size_t smem = (size_t)lnmod_res_bulk_smem(G, ns, T, k.sg.bytes);
    const unsigned grid = (unsigned)(k.q.nchunks < 4 ? k.q.nchunks : 4);
    if (ns == 3) G == 4 ? ring<3, 4>(k, grid, T, smem) : G == 2 ? ring<3, 2>(k, grid, T, smem) : ring<3, 1>(k, grid, T, smem);
    else G == 4 ? ring<2, 4>(k, grid, T, smem) : G == 2 ? ring<2, 2>(k, grid, T, smem) : ring<2, 1>(k, grid, T, smem);
    fin<2>(qn, k.wn, k.on);
    if (k.p.has_gate) fin<1>(k.q, k.wg, k.og);
    g_ran++;
    return 0;
}

// ---- the chunk ring's forward (lnmod_res_fwd_chunk.cuh) ------------------------------------
// Each call copies r and y into buffers at a phase the set's index picks (r 0/4/8/12 bytes
// into a 16-byte word, y 0..14; h at r's phase, out at y's: the kernel's condition), everything
// around them poisoned, and runs the kernel on an H200's ring (3 CTAs walking every chunk) in
// five schedules: bulk copies performed at issue; loads only when waited for; stores only when
// their group is waited for; those stores with warp 0 run ahead of the others; and loads and
// stores late on the fewest stages (3). Every schedule must give the same bits (an ordering
// bug shows as a difference), nothing outside h and out may change, and the bulk copies stay
// within r's and y's outer 16-byte words (reads) and h and out (writes). The verifier judges
// the outputs.
constexpr size_t RC_SLACK = 64;

struct rc_buf {
    std::vector<uint4> v;
    char *p;
    rc_buf(size_t n, int phase, unsigned char fill) : v((n + 2 * RC_SLACK) / 16 + 2)
    {
        memset(v.data(), fill, v.size() * 16);
        p = reinterpret_cast<char *>(v.data()) + RC_SLACK + phase;
    }
    // bytes outside [p, p + n) that differ from `fill`
    int64_t outside(size_t n, unsigned char fill) const
    {
        const unsigned char *b = reinterpret_cast<const unsigned char *>(v.data()), *e = b + v.size() * 16;
        int64_t bad = 0;
        for (const unsigned char *q = b; q < e; q++)
            if ((q < (const unsigned char *)p || q >= (const unsigned char *)p + n) && *q != fill) bad++;
        return bad;
    }
};

const char *rlo(const char *p) { return reinterpret_cast<const char *>((uintptr_t)p & ~(uintptr_t)15); }
const char *rhi(const char *p) { return reinterpret_cast<const char *>(((uintptr_t)p + 15) & ~(uintptr_t)15); }

template <int T, int K> std::function<void()> rc_body(const res_params &p, const rc_args &c)
{
    return [p, c] { rc_fwd_kernel_emu<__nv_bfloat16, T, K, LNMOD_RES_CHUNK_R(K)>(p, c); };
}

int emu_chunk(verify_res_runner *, const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
              char *err, size_t errn)
{
    const int64_t n = d->rows * d->D, call = g_ran;
    const bool inplace = out->h == in->r;
    rc_buf r((size_t)(4 * n), 4 * (int)(call % 4), 0xa5), y((size_t)(2 * n), 2 * (int)(call / 4 % 8), 0x5a);
    rc_buf h((size_t)(4 * n), 4 * (int)(call % 4), 0xc3), o((size_t)(2 * n), 2 * (int)(call / 4 % 8), 0x3c);
    char *hp = inplace ? r.p : h.p;
    int T = 0, K = 0, R = 0;
    if (!lnmod_res_chunk_takes(d, (uintptr_t)r.p, (uintptr_t)y.p, (uintptr_t)hp, (uintptr_t)o.p, 9) ||
        !lnmod_res_chunk_shape(d->D, &T, &K, &R)) {
        snprintf(err, errn, "not the chunk ring's path (D %lld, layout %d)", (long long)d->D, (int)d->layout);
        return -1;
    }
    const lnmod_res_chunk_dev dev = {233472, 232448, 65536, 2048, 32}; // an H200's facts
    int ctas = 0, ns = 0;
    int64_t smem = 0, slot_r = 0, slot_y = 0;
    if (lnmod_res_chunk_ring(&dev, T, R, d->D, 128, 0, &ctas, &ns, &smem) != 0) {
        snprintf(err, errn, "the ring does not fit (D %lld)", (long long)d->D);
        return -1;
    }
    lnmod_res_chunk_slots(R, d->D, &slot_r, &slot_y);
    res_params p = res_make_params(d);
    p.r = r.p;
    p.y = y.p;
    p.gate = in->gate;
    p.scale = in->scale;
    p.shift = in->shift;
    p.h = hp;
    p.out = o.p;
    std::vector<float> mean((size_t)d->rows), rstd((size_t)d->rows);
    p.mean = out->mean ? mean.data() : nullptr;
    p.rstd = out->rstd ? rstd.data() : nullptr;
    const int64_t nchunks = (d->rows + R - 1) / R;
    std::vector<char> first_h, first_o;
    std::vector<float> first_m, first_s;
    for (int mode = 0; mode < 5; mode++) {
        memset(r.v.data(), 0xa5, r.v.size() * 16);
        memset(h.v.data(), 0xc3, h.v.size() * 16);
        memset(o.v.data(), 0x3c, o.v.size() * 16);
        memcpy(r.p, in->r, (size_t)(4 * n));
        memcpy(y.p, in->y, (size_t)(2 * n));
        std::fill(mean.begin(), mean.end(), -1.0f);
        std::fill(rstd.begin(), rstd.end(), -1.0f);
        emu::state_t &S = emu::S();
        S.bulk_load_eager = mode == 0 || mode == 2 || mode == 3;
        S.bulk_store_eager = mode <= 1;
        S.low_first = mode == 3;
        S.bulk_rd_lo = rlo(r.p), S.bulk_rd_hi = rhi(r.p + 4 * n);
        S.bulk_rd2_lo = rlo(y.p), S.bulk_rd2_hi = rhi(y.p + 2 * n);
        S.bulk_wr_lo = hp, S.bulk_wr_hi = hp + 4 * n;
        S.bulk_wr2_lo = o.p, S.bulk_wr2_hi = o.p + 2 * n;
        unsigned long long ticket[2] = {0, 0}; // the launch's counter and its CTAs' end count
        const rc_args c = {mode == 4 ? 3 : ns, (int)slot_r, (int)(slot_r + slot_y), (int)nchunks, ticket};
        std::function<void()> body;
#define RC_BODY(T_, K_)                                                                                                \
        if (T == T_ && K == K_) body = rc_body<T_, K_>(p, c);
        LNMOD_RES_CHUNK_SHAPES(RC_BODY)
#undef RC_BODY
        // three CTAs at once: their claims interleave (mode 3, warp 0 first: one CTA runs ahead)
        emu::launch((unsigned)(nchunks < 3 ? nchunks : 3), (unsigned)T, 3, (size_t)smem, 0, body);
        if (ticket[0] != 0 || ticket[1] != 0) { // the launch must leave its counter zeroed
            snprintf(err, errn, "the ticket counter ended at %llu (%llu CTAs ended), not 0", ticket[0], ticket[1]);
            return -1;
        }
        S.bulk_rd_lo = S.bulk_rd_hi = S.bulk_wr_lo = S.bulk_wr_hi = nullptr;
        S.bulk_rd2_lo = S.bulk_rd2_hi = S.bulk_wr2_lo = S.bulk_wr2_hi = nullptr;
        S.bulk_load_eager = S.bulk_store_eager = true;
        S.low_first = false;
        const int64_t bad = (inplace ? r.outside((size_t)(4 * n), 0xa5) : h.outside((size_t)(4 * n), 0xc3)) +
                            o.outside((size_t)(2 * n), 0x3c);
        if (bad) {
            snprintf(err, errn, "schedule %d: %lld bytes written outside h and out", mode, (long long)bad);
            return -1;
        }
        if (mode == 0) {
            first_h.assign(hp, hp + 4 * n);
            first_o.assign(o.p, o.p + 2 * n);
            first_m = mean;
            first_s = rstd;
        } else if (memcmp(first_h.data(), hp, (size_t)(4 * n)) || memcmp(first_o.data(), o.p, (size_t)(2 * n)) ||
                   first_m != mean || first_s != rstd) {
            snprintf(err, errn, "schedule %d gave other bits than schedule 0 (D %lld, rows %lld)", mode,
                     (long long)d->D, (long long)d->rows);
            return -1;
        }
    }
    memcpy(out->h, first_h.data(), (size_t)(4 * n));
    memcpy(out->out, first_o.data(), (size_t)(2 * n));
    if (out->mean) memcpy(out->mean, first_m.data(), (size_t)d->rows * 4);
    if (out->rstd) memcpy(out->rstd, first_s.data(), (size_t)d->rows * 4);
    g_ran++;
    return 0;
}

// The sets of a suite: the verifier's full grid where its sets take the path (Wan's dtypes; rows
// and widths the emulation runs in minutes: a context switch costs ~1 us), then sets it does not
// have.
// The chunk suite's sets: the full grid's at Wan's dtypes where the chunk ring takes them and
// the emulation runs them in minutes, then every shape class (res-chunk-v2's rule: T 64 with R 4
// and 3; T 128, 256 and 512 with R 4 and 3; T 512 with R 2 at K 9 (4100) and K 10 (5119), R 1 at
// K 20; odd D: every phase of a chunk) at the three sites and the per-sample and per-frame maps
// (frames of rows / 5 rows: chunks of 2-4 rows cross them), and two in place.
std::vector<verify_res_set> chunk_sets()
{
    verify_res_set *sets = nullptr;
    int nsets = 0;
    std::vector<verify_res_set> run;
    if (verify_res_grid_sets("full", &sets, &nsets) != VERIFY_OK) return run;
    for (int i = 0; i < nsets; i++) {
        const lnmod_res_desc d = verify_res_set_desc(&sets[i]);
        if (sets[i].combo == 0 && d.rows * d.D <= 400000 && lnmod_res_chunk_takes(&d, 0, 0, 0, 0, 9))
            run.push_back(sets[i]);
    }
    free(sets);
    const int64_t Ds[] = {64, 100, 250, 333, 520, 777, 1000, 1001, 1536, 2050, 3072, 4100, 5119, 10240};
    const int lay[] = {LNMOD_PER_SAMPLE, LNMOD_PER_FRAME};
    for (int64_t D : Ds)
        for (int site = 0; site < VERIFY_RES_NSITES; site++)
            for (int l : lay) run.push_back(verify_res_set{site, l, 0, D, D >= 3072 ? 23 : 97, 0, 0});
    run.push_back(verify_res_set{VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, 333, 97, 1, 0});
    run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 1536, 40, 1, 0});
    return run;
}

std::vector<verify_res_set> sets_of(bool bwd)
{
    verify_res_set *sets = nullptr;
    int nsets = 0;
    std::vector<verify_res_set> run;
    if (verify_res_grid_sets("full", &sets, &nsets) != VERIFY_OK) return run;
    for (int i = 0; i < nsets; i++) {
        const lnmod_res_desc d = verify_res_set_desc(&sets[i]);
        int T, V;
        if (sets[i].combo != 0) continue;
        const bool rd_width = d.D == 1536 || d.D == 3072 || d.D == 5120; // rd_fwd_kernel's, not the general one's
        if (!bwd && d.rows <= 2000 && !rd_width && lnmod_res_fwd_gen_shape(d.D, &T, &V)) run.push_back(sets[i]);
        if (bwd && res_bwd_bulk_shape(&d) && d.rows * d.D <= 1560 * 264) run.push_back(sets[i]);
    }
    free(sets);
    if (!bwd) {
        // one lane (D 8), one warp of 5 slots (1152), 2 warps (1920, 2560), 3 (3840), 8 of 4 and
        // 5 slots (8192, 10240) -- at every site and layout, 160 rows; and two in place
        const int64_t extra_D[] = {8, 1152, 1920, 2560, 3840, 8192, 10240};
        for (int64_t D : extra_D)
            for (int site = 0; site < VERIFY_RES_NSITES; site++)
                for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) run.push_back(verify_res_set{site, l, 0, D, 160, 0, 0});
        run.push_back(verify_res_set{VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, 2056, 160, 1, 0});
        run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 1152, 160, 1, 0});
    } else {
        // the ring's three group shapes (G 4, 2, 1: D 1536, 3072, 5120) at 32 rows, every site and
        // layout; many chunks a sample (D 64 x 1560 rows: ~48 chunks a sample) at the affine site;
        // dr over dh and no dh
        const int64_t wan_D[] = {1536, 3072, 5120};
        for (int64_t D : wan_D)
            for (int site = 0; site < VERIFY_RES_NSITES; site++)
                for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) {
                    const verify_res_set v{site, l, 0, D, 32, 0, 0};
                    const lnmod_res_desc d = verify_res_set_desc(&v);
                    if (res_bwd_bulk_shape(&d)) run.push_back(v);
                }
        run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 64, 1560, 0, 0});
        run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_FRAME, 0, 64, 1560, 0, 0});
        run.push_back(verify_res_set{VERIFY_RES_SITE_FFN, LNMOD_PER_SAMPLE, 0, 264, 160, 1, 0});
        run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 264, 160, 0, 1});
    }
    return run;
}

} // namespace

int main(int argc, char **argv)
{
    const bool bwd = argc == 2 && !strcmp(argv[1], "bwd"), chunk = argc == 2 && !strcmp(argv[1], "chunk");
    if (argc != 2 || (!bwd && !chunk && strcmp(argv[1], "fwd"))) {
        fprintf(stderr, "usage: emu_res fwd|bwd|chunk\n");
        return 2;
    }
    const std::vector<verify_res_set> run = chunk ? chunk_sets() : sets_of(bwd);
    verify_res_runner rn;
    if (run.empty() || verify_res_cpu_runner(0, 1, &rn) != 0) return 2;
    rn.name = bwd ? "dtile-bwd-emu" : chunk ? "dtile-chunk-emu" : "dtile-fwd-emu";
    if (bwd) rn.backward = emu_bwd;
    else rn.forward = chunk ? emu_chunk : emu_fwd;
    json_t *cases = json_array();
    int64_t failed = 0, dir_failed = 0;
    for (size_t i = 0; i < run.size(); i++) {
        char err[200];
        if (verify_res_run(&rn, &run[i], 0x5eed0000u + i, 1, cases, &failed, err, sizeof err) != 0) {
            printf("emu_res: set %zu (site %d layout %d D %lld rows %lld) did not run: %s\n", i, run[i].site,
                   run[i].layout, (long long)run[i].D, (long long)run[i].rows, err);
            json_decref(cases);
            return 2;
        }
    }
    const char *mine = bwd ? "bwd" : "fwd"; // the chunk suite's direction is fwd
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        if (json_is_true(json_object_get(c, "pass"))) continue;
        const char *dir = json_string_value(json_object_get(c, "direction"));
        dir_failed += dir && !strcmp(dir, mine);
        char *t = json_dumps(c, JSON_COMPACT);
        printf("emu_res: FAIL %s\n", t);
        free(t);
    }
    int per_site[VERIFY_RES_NSITES] = {0};
    for (const verify_res_set &v : run) per_site[v.site]++;
    printf("emu_res %s: %zu sets on the emulated kernels (%lld runs; sites attn/cross/ffn %d/%d/%d), %zu cases, %lld "
           "failed (%lld %s)\n",
           argv[1], run.size(), (long long)g_ran, per_site[VERIFY_RES_SITE_ATTN], per_site[VERIFY_RES_SITE_CROSS],
           per_site[VERIFY_RES_SITE_FFN], json_array_size(cases), (long long)failed, (long long)dir_failed, mine);
    json_decref(cases);
    if (run.size() < (bwd || chunk ? 40u : 60u) || g_ran < (int64_t)run.size()) return 2;
    return failed ? 1 : 0;
}

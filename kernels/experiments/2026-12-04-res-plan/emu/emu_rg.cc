// emu_rg.cc -- dtile's general fused forward (kernels/lnmod_res_fwd_gen.cuh, rg_fwd_kernel, in a
// tree with res-v3.patch applied) run from its own source on the CPU, under the CUDA emulation of
// the fwd-v2 experiment (../../2026-12-02-fwd-v2/fv2_emu.h: a coroutine per CUDA thread, warp
// shuffles and barriers as counted rendezvous), as a verify_res_runner: the verifier's own sets,
// inputs (adversarial rows included) and allowances (verify_res_run, verify_check_res.h) judge
// it exactly as they judge the GPU. The backward of each set is the fp32 CPU model's (this
// checks the forward only). Built and run by emu.sh. Exit 0: every set that takes the general
// path passed (and enough of them ran); 1: a case failed; 2: a set could not run.
#include "fv2_emu.h"

using std::max;
using std::min;

#define LNMOD_RES_SHARED(T, name) T &name = *reinterpret_cast<T *>(emu::static_smem())
#define rg_fwd_kernel rg_fwd_kernel_emu // never the name of the real kernel's host stub
#include "lnmod_res_fwd_gen.cuh"

#include <string>

extern "C" {
#include "verify_res.h"
}

namespace emu {
std::function<void()> *g_body;

// One CTA at a time (no clusters here), every thread a coroutine, round-robin until all exit.
void launch(unsigned grid, unsigned block, unsigned cl, size_t dyn, size_t stat, std::function<void()> body)
{
    (void)cl;
    state_t &s = S();
    s.block_dim = make_uint3(block, 1, 1);
    s.grid_dim = make_uint3(grid, 1, 1);
    g_body = &body;
    for (unsigned b = 0; b < grid; b++) {
        cta_t cta;
        std::vector<thr_t> thr(block);
        cta.smem.assign(dyn / 16 + 1, make_uint4(0xffc00001u, 0xffc00001u, 0xffc00001u, 0xffc00001u));
        cta.static_smem.assign(stat / 16 + 1, make_uint4(0x7fc00001u, 0x7fc00001u, 0x7fc00001u, 0x7fc00001u));
        cta.bid = make_uint3(b, 0, 0);
        cta.alive = (int)block;
        cta.warps.resize(block / 32);
        s.cluster.assign(1, &cta);
        s.cl_count = 0;
        s.cl_alive = (int)block;
        s.cl_phase = 0;
        for (unsigned i = 0; i < block; i++) {
            thr_t &t = thr[i];
            t.stack.resize(64 * 1024);
            getcontext(&t.ctx);
            t.ctx.uc_stack.ss_sp = t.stack.data();
            t.ctx.uc_stack.ss_size = t.stack.size();
            t.ctx.uc_link = nullptr;
            makecontext(&t.ctx, entry, 0);
            t.cta = &cta;
            t.tid = make_uint3(i, 0, 0);
            t.lane = (int)i & 31;
            t.warp = (int)i >> 5;
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
    }
}
} // namespace emu

namespace {

using namespace lnmod_res_detail;

bool al16(const void *q) { return ((uintptr_t)q & 15u) == 0; }

// lnmod_res_common.cu's res_make_params (nvcc-compiled there; mirrored field by field here).
res_params params_of(const lnmod_res_desc *d)
{
    res_params p = {};
    p.rows = d->rows;
    p.D = d->D;
    p.S = d->rows_per_sample > 0 ? d->rows_per_sample : 1;
    p.L = d->frame_len > 0 ? d->frame_len : 1;
    const lnmod_desc g = lnmod_res_map_desc(d);
    p.F = d->layout == LNMOD_PER_FRAME ? lnmod_frames_per_sample(&g) : 1;
    p.gate_stride = d->gate_stride;
    p.scale_stride = d->scale_stride;
    p.shift_stride = d->shift_stride;
    p.layout = (int)d->layout;
    p.has_gate = d->gate == LNMOD_RES_GATE;
    p.affine = d->norm == LNMOD_RES_AFFINE;
    if (p.affine) p.scale_stride = p.shift_stride = 0;
    if (!p.has_gate && p.affine) p.layout = LNMOD_PER_TOKEN;
    p.rt = (int)d->res_dtype;
    p.bt = (int)d->branch_dtype;
    p.mt = (int)d->mod_dtype;
    p.ot = (int)d->out_dtype;
    p.eps = (float)d->eps;
    return p;
}

// The general path's conditions (res_fwd_dtile_shape / _takes of the patched tree, less the
// three D-specialized widths).
bool takes(const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out, int *T, int *V)
{
    if (d->res_dtype != LNMOD_F32 || d->branch_dtype != LNMOD_BF16 || d->mod_dtype != LNMOD_F32 ||
        d->out_dtype != LNMOD_BF16 || d->D == 1536 || d->D == 3072 || d->D == 5120 ||
        !lnmod_res_fwd_gen_shape(d->D, T, V))
        return false;
    if (d->gate == LNMOD_RES_GATE && (d->gate_stride % 4 != 0 || !al16(in->gate))) return false;
    if (d->norm == LNMOD_RES_MODULATE && (d->scale_stride % 4 != 0 || d->shift_stride % 4 != 0)) return false;
    return al16(in->r) && al16(in->y) && al16(in->scale) && al16(in->shift) && al16(out->h) && al16(out->out);
}

int64_t g_ran;

int emu_fwd(verify_res_runner *, const lnmod_res_desc *d, const lnmod_res_fwd_in *in, const lnmod_res_fwd_out *out,
            char *err, size_t errn)
{
    int T = 0, V = 0;
    if (!takes(d, in, out, &T, &V)) {
        snprintf(err, errn, "not dtile's general forward path (D %lld)", (long long)d->D);
        return -1;
    }
    res_params p = params_of(d);
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

} // namespace

int main()
{
    // The verifier's full grid, where its sets take the general path (Wan's dtypes at D 264,
    // 1000, 2056; up to 2,000 rows: the emulation runs ~1 us a context switch), then widths it
    // does not have: one lane (D 8), one warp of 5 slots (1152), 2 warps (1920, 2560), 3 (3840),
    // 8 of 4 and 5 slots (8192, 10240) -- at every site and layout, 160 rows; and two in place.
    verify_res_set *sets = nullptr;
    int nsets = 0;
    if (verify_res_grid_sets("full", &sets, &nsets) != VERIFY_OK) return 2;
    std::vector<verify_res_set> run;
    for (int i = 0; i < nsets; i++) {
        const lnmod_res_desc d = verify_res_set_desc(&sets[i]);
        int T, V;
        if (sets[i].combo == 0 && d.rows <= 2000 && d.D != 1536 && lnmod_res_fwd_gen_shape(d.D, &T, &V))
            run.push_back(sets[i]);
    }
    free(sets);
    const int64_t extra_D[] = {8, 1152, 1920, 2560, 3840, 8192, 10240};
    for (int64_t D : extra_D)
        for (int site = 0; site < VERIFY_RES_NSITES; site++)
            for (int l = 0; l < LNMOD_LAYOUT_COUNT; l++) run.push_back(verify_res_set{site, l, 0, D, 160, 0, 0});
    // h written over r (in place) at the two gated sites
    run.push_back(verify_res_set{VERIFY_RES_SITE_FFN, LNMOD_PER_FRAME, 0, 2056, 160, 1, 0});
    run.push_back(verify_res_set{VERIFY_RES_SITE_ATTN, LNMOD_PER_SAMPLE, 0, 1152, 160, 1, 0});
    verify_res_runner rn;
    if (verify_res_cpu_runner(0, 1, &rn) != 0) return 2;
    rn.name = "dtile-emu";
    rn.forward = emu_fwd;
    json_t *cases = json_array();
    int64_t failed = 0, fwd_failed = 0;
    for (size_t i = 0; i < run.size(); i++) {
        char err[200];
        const int64_t before = failed;
        if (verify_res_run(&rn, &run[i], 0x5eed0000u + i, 1, cases, &failed, err, sizeof err) != 0) {
            printf("emu_rg: set %zu (D %lld rows %lld) did not run: %s\n", i, (long long)run[i].D,
                   (long long)run[i].rows, err);
            json_decref(cases);
            return 2;
        }
        (void)before;
    }
    for (size_t i = 0; i < json_array_size(cases); i++) {
        json_t *c = json_array_get(cases, i);
        if (json_is_true(json_object_get(c, "pass"))) continue;
        const char *dir = json_string_value(json_object_get(c, "direction"));
        fwd_failed += dir && !strcmp(dir, "fwd");
        char *t = json_dumps(c, JSON_COMPACT);
        printf("emu_rg: FAIL %s\n", t);
        free(t);
    }
    printf("emu_rg: %zu sets on the emulated general forward (%lld launches), %zu cases, %lld failed (%lld forward)\n",
           run.size(), (long long)g_ran, json_array_size(cases), (long long)failed, (long long)fwd_failed);
    json_decref(cases);
    if (run.size() < 60 || g_ran < (int64_t)run.size()) return 2;
    return failed ? 1 : 0;
}

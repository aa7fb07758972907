// res_plan_test.cu -- resbench --plan-test (host only): the column-sum plans and the workspace
// layout the kernels index with (res_common.cuh), at every shape of the table and a few more:
//   * each plan's chunks cover every token row exactly once, and a chunk's rows all lie in
//     the chunk's group (the modulation row whose sums it holds: the map's under MODULATE and
//     for the gate, the one group of all rows for AFFINE's norm);
//   * under MODULATE the gate's plan is the norm's (dtile's backward keeps all three sums of a
//     chunk together and relies on it);
//   * the workspace: row sums, then the norm's partials [nchunks][2][D], then the gate's
//     [nchunks][1][D] (when a plan has partials), 16-byte aligned, disjoint, total the sum.
// A planted fault (RES_PLANT_PLAN, a build-time define) shifts the gate's region onto the
// norm's: the test must fail then.
#include <cstdio>
#include <vector>

#include "res_bench.h"
#include "res_common.cuh"

using namespace res_detail;

namespace {

// 0 when plan q covers every row once, each in its chunk's group (group_of(row) == g).
template <typename G> int check_plan(const lnmod_bparams &q, int64_t rows, G group_of)
{
    std::vector<unsigned char> seen((size_t)rows, 0);
    for (int64_t c = 0; c < q.nchunks; c++) {
        int64_t g, r0, n;
        lnmod_chunk_rows(q, c, &g, &r0, &n);
        for (int64_t i = 0, r = r0; i < n; i++, r += q.cpg) {
            if (r < 0 || r >= rows || seen[(size_t)r]++ || group_of(r) != g) return 1;
        }
    }
    for (int64_t r = 0; r < rows; r++)
        if (!seen[(size_t)r]) return 1;
    return 0;
}

int one(const lnmod_res_desc *d, const char *name)
{
    int bad = 0;
    const lnmod_desc nd = res_norm_plan_desc(d), gd = res_gate_plan_desc(d);
    const lnmod_bparams qn = lnmod_make_bparams(&nd, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const lnmod_bparams qg = lnmod_make_bparams(&gd, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    bad += check_plan(qn, d->rows, [&](int64_t r) { return lnmod_res_norm_index(d, r); });
    if (d->gate == LNMOD_RES_GATE) bad += check_plan(qg, d->rows, [&](int64_t r) { return lnmod_res_mod_index(d, r); });
    if (d->norm == LNMOD_RES_MODULATE && (qn.nchunks != qg.nchunks || qn.cpg != qg.cpg || qn.ngroups != qg.ngroups))
        bad++;
    res_ws_layout w = res_ws_of(d);
#ifdef RES_PLANT_PLAN
    w.gate = w.norm;
#endif
    const int64_t nb = qn.cpg > 1 ? qn.nchunks * 2 * d->D * 4 : 0;
    const int64_t gb = (d->gate == LNMOD_RES_GATE && qg.cpg > 1) ? qg.nchunks * d->D * 4 : 0;
    if (w.total < 0 || w.rowsum != 0 || w.norm < d->rows * 8 || w.gate < w.norm + nb || w.total < w.gate + gb ||
        w.norm % 16 || w.gate % 16 || w.total % 16)
        bad++;
    std::printf("plan-test %-48s chunks %6lld (cpg %4lld) gate chunks %6lld  workspace %12lld B  %s\n", name,
                (long long)qn.nchunks, (long long)qn.cpg, (long long)(d->gate == LNMOD_RES_GATE ? qg.nchunks : 0),
                (long long)w.total, bad ? "WRONG" : "ok");
    return bad;
}

} // namespace

int res_plan_test(void)
{
    int bad = 0;
    for (int i = 0; i < RES_NSHAPES; i++) {
        const lnmod_res_desc d = res_desc_of(RES_SHAPES[i]);
        bad += one(&d, RES_SHAPES[i].name);
    }
    // 14B 720p rows, per frame with a short last frame, and a per-token AFFINE with a gate.
    res_shape extra[3] = {RES_SHAPES[2], RES_SHAPES[5], RES_SHAPES[13]};
    extra[0].name = "site3 sample D5120 r75600";
    extra[0].rows = extra[0].S = 75600;
    extra[1].name = "site3 frame 81 frames of 1560, B2";
    extra[1].rows = 2 * 32760;
    extra[1].S = 32760;
    extra[1].L = 1560;
    extra[2].name = "site1 affine token D1000 gate";
    for (const res_shape &s : extra) {
        const lnmod_res_desc d = res_desc_of(s);
        if (lnmod_res_desc_validate(&d) != LNMOD_OK) return 1;
        bad += one(&d, s.name);
    }
    std::printf("plan-test: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

// res_model_test.cc -- resbench --model-test (no GPU): the check (res_check.h) on the outputs of
// verify's fp32 CPU models of the op (verify/verify_model_res.h), at every check-only shape of
// up to 8M elements, without the large-mean rows (res_inputs.h says why). The models compute as a kernel does (fp32 statistics, fp32 t, chunked fp32
// column sums), so they exercise the allowances where the --self-test's reference outputs
// (rounded once from float64) cannot: res_model must pass every output; each planted model
// must fail the output it breaks (res_no_gate: h; res_no_h: h, left as NaN poison;
// res_bwd_no_dh: dr; res_bwd_dgate_dh: dgate).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "res_bench.h"
#include "res_check.h"
#include "res_inputs.h"
extern "C" {
#include "verify_model_res.h"
}

namespace {

struct fwd_got {
    std::vector<char> h, out;
    std::vector<float> mean, rstd;
};

int model_fwd(const char *model, const lnmod_res_desc *d, const res_host &hi, int threads, fwd_got *g)
{
    const int64_t n = d->rows * d->D;
    g->h.assign((size_t)n * lnmod_dtype_size(d->res_dtype), (char)0xff); // NaN poison
    g->out.assign((size_t)n * lnmod_dtype_size(d->out_dtype), (char)0xff);
    g->mean.assign((size_t)d->rows, NAN);
    g->rstd.assign((size_t)d->rows, NAN);
    const lnmod_res_fwd_in in = {hi.r.data(), hi.y.data(), hi.gate.empty() ? nullptr : hi.gate.data(),
                                 hi.scale.data(), hi.shift.data()};
    const lnmod_res_fwd_out out = {g->h.data(), g->out.data(), g->mean.data(), g->rstd.data()};
    return verify_res_model_forward(verify_res_model_find(model), d, &in, &out, threads) == LNMOD_OK ? 0 : -1;
}

// One model's verdict against the expectation: want < 0: nothing fails; else output `want` fails.
int judge(const char *shape, const char *model, const res_verdict &v, int want)
{
    const int64_t total = res_verdict_fails(&v);
    const bool ok = want < 0 ? total == 0 : v.fails[want] > 0;
    std::printf("model-test %-44s %-17s fails %8lld  worst %10.3f (%s)  %s\n", shape, model, (long long)total, v.worst,
                v.worst_of < 0 ? "-" : res_out_name[v.worst_of], ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}

int one_shape(const res_shape &s, int no, int threads)
{
    const lnmod_res_desc d = res_desc_of(s);
    if (lnmod_res_desc_validate(&d) != LNMOD_OK) return 1;
    const bool gate = d.gate == LNMOD_RES_GATE;
    res_host hi;
    res_make_inputs(&d, 1, (uint64_t)no, threads, &hi, false); // res_inputs.h: why no large means
    const lnmod_res_fwd_in in = {hi.r.data(), hi.y.data(), gate ? hi.gate.data() : nullptr, hi.scale.data(),
                                 hi.shift.data()};
    int bad = 0;
    res_verdict v;
    fwd_got ok;
    if (model_fwd("res_model", &d, hi, threads, &ok) != 0) return 1;
    const lnmod_res_fwd_out okout = {ok.h.data(), ok.out.data(), ok.mean.data(), ok.rstd.data()};
    if (res_check_fwd(&d, &in, &okout, threads, &v) != 0) return 1;
    bad += judge(s.name, "res_model fwd", v, -1);
    const char *planted[2] = {"res_no_gate", "res_no_h"};
    for (int k = gate ? 0 : 1; k < 2; k++) {
        fwd_got g;
        if (model_fwd(planted[k], &d, hi, threads, &g) != 0) return 1;
        const lnmod_res_fwd_out o = {g.h.data(), g.out.data(), g.mean.data(), g.rstd.data()};
        if (res_check_fwd(&d, &in, &o, threads, &v) != 0) return 1;
        bad += judge(s.name, planted[k], v, RES_H);
    }
    // The backward at res_model's forward.
    const lnmod_res_bwd_in bi = {ok.h.data(), gate ? hi.y.data() : nullptr, in.gate, hi.scale.data(), hi.dout.data(),
                                 s.dh ? hi.dh.data() : nullptr, ok.mean.data(), ok.rstd.data()};
    std::vector<char> ws((size_t)verify_res_model_bwd_workspace(&d) + 16);
    const char *bm[3] = {"res_model", "res_bwd_no_dh", "res_bwd_dgate_dh"};
    const int want[3] = {-1, RES_DR, RES_DGATE};
    for (int k = 0; k < 3; k++) {
        if ((k == 1 && !s.dh) || (k == 2 && !gate)) continue;
        std::vector<char> dr(ok.h.size(), (char)0xff), dy(hi.y.size(), (char)0xff), dg(res_gate_bytes(&d), (char)0xff),
            ds(res_norm_bytes(&d, 0), (char)0xff), dsh(res_norm_bytes(&d, 1), (char)0xff);
        const lnmod_res_bwd_out o = {dr.data(), dy.data(), gate ? dg.data() : nullptr, ds.data(), dsh.data()};
        if (verify_res_model_backward(verify_res_model_find(bm[k]), &d, &bi, &o, ws.data(), threads) != LNMOD_OK)
            return 1;
        if (res_check_bwd(&d, &bi, &o, threads, &v) != 0) return 1;
        char name[32];
        std::snprintf(name, sizeof name, "%s%s", bm[k], k ? "" : " bwd");
        bad += judge(s.name, name, v, want[k]);
    }
    return bad;
}

} // namespace

int res_model_test(int threads)
{
    int bad = 0, n = 0;
    for (int i = 0; i < RES_NSHAPES; i++) {
        const res_shape &s = RES_SHAPES[i];
        if (s.timed || s.rows * s.D > (8 << 20)) continue;
        bad += one_shape(s, i, threads);
        n++;
    }
    std::printf("model-test: %d shapes, %s\n", n, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

// fv2_main_run.cuh -- the per-kernel and per-shape runs, the self-test and main() of
// fv2bench (included by fv2_main.cu inside its anonymous namespace; split for length).

// Kernel k on the shape: a launch with statistics (poison 0xff around y and the statistics,
// read back for the check), a second without them over 0x7f poison (y compared on the GPU),
// then the timing without statistics (graph replays of b.k launches over b.sets sets).
void run_kernel(int k, const lnmod_desc *d, bufs &b, bool timed, const opts &o, void *flush, size_t fb,
                cudaStream_t st, result &res)
{
    const int off = b.off, oy = b.offy;
    CK(cudaMemset(b.y[0], 0xff, b.yb + 32));
    CK(cudaMemset(b.mean, 0xff, (size_t)d->rows * 4 + 16));
    CK(cudaMemset(b.rstd, 0xff, (size_t)d->rows * 4 + 16));
    lnmod_status q = launch(k, d, b.x[0] + off, b.sc + off, b.sh + off, b.y[0] + oy, b.mean, b.rstd, st, &res.info);
    if (q != LNMOD_OK) {
        std::fprintf(stderr, "fv2bench: %s: %s\n", KNAME[k], lnmod_status_name(q));
        std::exit(3);
    }
    CK(cudaStreamSynchronize(st));
    CK(cudaGetLastError());
    std::vector<char> hy(b.yb + 32);
    CK(cudaMemcpy(hy.data(), b.y[0], hy.size(), cudaMemcpyDeviceToHost));
    res.mean.resize((size_t)d->rows + 4);
    res.rstd.resize((size_t)d->rows + 4);
    CK(cudaMemcpy(res.mean.data(), b.mean, (size_t)d->rows * 4 + 16, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(res.rstd.data(), b.rstd, (size_t)d->rows * 4 + 16, cudaMemcpyDeviceToHost));
    const unsigned char *mg = reinterpret_cast<const unsigned char *>(res.mean.data() + d->rows);
    const unsigned char *rg = reinterpret_cast<const unsigned char *>(res.rstd.data() + d->rows);
    bool stats_guard = true;
    for (int i = 0; i < 16; i++) stats_guard = stats_guard && mg[i] == 0xff && rg[i] == 0xff;
    res.guard = stats_guard && poison_kept(hy, 0, (size_t)oy, 0xff) && poison_kept(hy, oy + b.yb, hy.size(), 0xff);
    res.y.swap(hy);
    CK(cudaMemcpy(b.ycopy, b.y[0], b.yb + 32, cudaMemcpyDeviceToDevice));
    CK(cudaMemset(b.y[0], 0x7f, b.yb + 32));
    fv2_info scratch;
    if (launch(k, d, b.x[0] + off, b.sc + off, b.sh + off, b.y[0] + oy, nullptr, nullptr, st, &scratch) != LNMOD_OK)
        std::exit(3);
    CK(cudaMemsetAsync(b.cnt, 0, sizeof *b.cnt, st));
    diff_bytes<<<1024, 256, 0, st>>>(reinterpret_cast<unsigned char *>(b.ycopy) + oy,
                                     reinterpret_cast<unsigned char *>(b.y[0]) + oy, b.yb, b.cnt);
    unsigned long long diff = 1;
    CK(cudaMemcpyAsync(&diff, b.cnt, sizeof diff, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    res.det = diff == 0;
    if (!timed) return;
    auto one = [&](int set) {
        if (launch(k, d, b.x[set] + off, b.sc + off, b.sh + off, b.y[set] + oy, nullptr, nullptr, st, nullptr) != LNMOD_OK)
            std::exit(3);
    };
    if (!b.k) {
        res.us = time_median(o.reps, flush, fb, st, [&](int) { one(0); });
        return;
    }
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
    for (int j = 0; j < b.k; j++) one(j % b.sets);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    res.us = time_median(o.reps, flush, fb, st, [&](int) { CK(cudaGraphLaunch(ge, st)); }) / (float)b.k;
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
}

// The in-run copy of lnmod_fwd_min_bytes (half read, half written), timed like the kernels.
float time_copy(int64_t minb, const bufs &b, const opts &o, void *flush, size_t fb, cudaStream_t st)
{
    const size_t half = (size_t)minb / 2;
    std::vector<char *> src(b.sets), dst(b.sets);
    for (int i = 0; i < b.sets; i++) {
        CK(cudaMalloc(&src[i], half));
        CK(cudaMalloc(&dst[i], half));
        CK(cudaMemset(src[i], 0x5a, half));
    }
    float us;
    if (!b.k) {
        us = time_median(o.reps, flush, fb, st, [&](int) { CK(cudaMemcpyAsync(dst[0], src[0], half, cudaMemcpyDeviceToDevice, st)); });
    } else {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
        for (int j = 0; j < b.k; j++)
            CK(cudaMemcpyAsync(dst[j % b.sets], src[j % b.sets], half, cudaMemcpyDeviceToDevice, st));
        CK(cudaStreamEndCapture(st, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        us = time_median(o.reps, flush, fb, st, [&](int) { CK(cudaGraphLaunch(ge, st)); }) / (float)b.k;
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
    }
    for (int i = 0; i < b.sets; i++) {
        CK(cudaFree(src[i]));
        CK(cudaFree(dst[i]));
    }
    return us;
}

std::string cfg_of(const result &r, int k)
{
    if (k < 2) return "v1";
    if (r.info.fallback) return "fallback=v1";
    char s[160];
    const fv2_plan &p = r.info.plan;
    if (p.cls == FV2_CHUNK) {
        std::snprintf(s, sizeof s, "chunk T %d K %d R %d NS %d stage %lld smem %lld CTAs/SM %d grid %d regs %d local %d%s",
                      p.threads, p.vpt, p.rows_chunk, p.nstage, (long long)p.slot_bytes, (long long)p.smem_bytes,
                      p.ctas_sm, r.info.grid, r.info.regs, r.info.local_bytes, r.info.same_as_rule ? " (=rule)" : "");
        return s;
    }
    std::snprintf(s, sizeof s, "%s VPT %d W %d C %d G %d NS %d T %d grid %d regs %d local %d%s",
                  p.cls == FV2_ODD ? "odd" : p.mode == FV2_MOD_RING ? "tile/ring" : "tile/reg", p.vpt, p.warps,
                  p.cluster, p.groups, p.nstage, p.threads, r.info.grid, r.info.regs, r.info.local_bytes,
                  r.info.same_as_rule ? " (=rule)" : "");
    return s;
}

// One shape: inputs, every kernel, the checks, one table row. Returns the failures.
int run_shape(const shape &s, uint64_t shape_no, const opts &o, void *flush, size_t fb, size_t l2, cudaStream_t st,
              std::vector<std::string> &table)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = s.rows;
    d.D = s.D;
    d.rows_per_sample = s.S;
    d.frame_len = s.L;
    d.x_dtype = s.xt;
    d.mod_dtype = s.mt;
    d.y_dtype = s.yt;
    d.layout = s.lay;
    // Wan's [B, 6, D] modulation (stride 6*D, +1 misaligned); per token a [rows, D] table.
    d.scale_stride = d.shift_stride = s.lay == TOK ? s.D + s.misalign : 6 * s.D + s.misalign;
    if (lnmod_desc_validate(&d) != LNMOD_OK) {
        std::fprintf(stderr, "fv2bench: bad shape %s\n", s.name.c_str());
        std::exit(3);
    }
    bufs b = alloc_bufs(&d, s.misalign, l2);
    std::vector<char> hx(b.xb), hs(b.mb), hh(b.mb);
    make_inputs(&d, shape_no, s.adv, o.threads, hx, hs, hh);
    const int off = b.off;
    CK(cudaMemcpy(b.x[0] + off, hx.data(), b.xb, cudaMemcpyHostToDevice));
    for (int i = 1; i < b.sets; i++) CK(cudaMemcpy(b.x[i], b.x[0], b.xb + 32, cudaMemcpyDeviceToDevice));
    CK(cudaMemcpy(b.sc + off, hs.data(), b.mb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.sh + off, hh.data(), b.mb, cudaMemcpyHostToDevice));
    const int64_t minb = lnmod_fwd_min_bytes(&d, 0);
    const float tc = s.timed ? time_copy(minb, b, o, flush, fb, st) : 0.0f;
    std::vector<result> res(NK);
    for (int k = 0; k < NK; k++) run_kernel(k, &d, b, s.timed, o, flush, fb, st, res[k]);
    std::vector<fv2_got> got(NK);
    for (int k = 0; k < NK; k++)
        got[k] = fv2_got{res[k].y.data() + b.offy, res[k].mean.data(), res[k].rstd.data(), 0, 0, nullptr};
    if (fv2_check(&d, hx.data(), hs.data(), hh.data(), got.data(), NK, o.threads) != 0) {
        std::fprintf(stderr, "fv2bench: the reference refused %s\n", s.name.c_str());
        std::exit(3);
    }
    int fails = 0;
    std::printf("== %s  min bytes %lld", s.name.c_str(), (long long)minb);
    if (s.timed) std::printf("  copy %.2f us (%.2f TB/s)%s", tc, (double)minb / tc / 1e6, b.k ? "  graph" : "");
    std::printf("\n");
    char c0[64];
    std::snprintf(c0, sizeof c0, "%.1f%s", tc, b.k ? " g" : "");
    std::string row = "| " + s.name + " | " + (s.timed ? c0 : "-");
    for (int k = 0; k < NK; k++) {
        const result &r = res[k];
        const bool ok = got[k].fails == 0 && r.det && r.guard;
        fails += ok ? 0 : 1;
        std::printf("  %-4s %9.2f us %6.1f%% of copy  worst %.3f (%s) fails %lld det %s guard %s  %s  [%s]\n", KNAME[k],
                    r.us, s.timed ? 100.0 * tc / r.us : 0.0, got[k].worst, got[k].worst_of, (long long)got[k].fails,
                    r.det ? "yes" : "NO", r.guard ? "ok" : "BAD", ok ? "ok" : "FAIL", cfg_of(r, k).c_str());
        char cell[64];
        const char *tag = k >= 2 && r.info.fallback ? " =v1" : k >= 3 && r.info.same_as_rule ? " =v2" : "";
        if (s.timed)
            std::snprintf(cell, sizeof cell, " | %.1f%s%s", 100.0 * tc / r.us, tag, ok ? "" : " FAIL");
        else
            std::snprintf(cell, sizeof cell, " | %s%s", ok ? "ok" : "FAIL", tag);
        row += cell;
    }
    table.push_back(row + " |");
    std::fflush(stdout);
    free_bufs(b);
    return fails;
}

// --self-test (no GPU): the check must be able to fail. The reference's own outputs (y
// rounded to its dtype, the statistics to fp32) pass; one y element moved by 5% (bf16 allows
// 2^-7 relative), one mean moved by 1e-3 of the row's spread plus 1e-3 of itself, one rstd
// moved by 1e-4 fail once each.
int self_test(int threads)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 96;
    d.D = 136;
    d.rows_per_sample = 32;
    d.frame_len = 10;
    d.layout = LNMOD_PER_FRAME;
    d.scale_stride = d.shift_stride = 6 * d.D;
    const int64_t n = d.rows * d.D, nm = lnmod_mod_rows(&d);
    const size_t mb = (size_t)((nm - 1) * d.scale_stride + d.D) * 4;
    std::vector<char> hx((size_t)n * 2), hs(mb), hh(mb), y((size_t)n * 2);
    make_inputs(&d, 999, 0, threads, hx, hs, hh);
    std::vector<double> ry((size_t)n), rm((size_t)d.rows), rr((size_t)d.rows);
    if (ref_lnmod_forward(&d, hx.data(), hs.data(), hh.data(), ry.data(), rm.data(), rr.data()) != LNMOD_OK) return 3;
    std::vector<float> fm((size_t)d.rows), fr((size_t)d.rows);
    for (int64_t i = 0; i < n; i++) ref_store(d.y_dtype, y.data(), i, ry[i]);
    for (int64_t r = 0; r < d.rows; r++) {
        fm[r] = ref_f64_to_f32(rm[r]);
        fr[r] = ref_f64_to_f32(rr[r]);
    }
    std::vector<char> by = y;
    std::vector<float> bm = fm, br = fr;
    const int64_t iy = 77 * d.D + 5, ir = 41;
    ref_store(d.y_dtype, by.data(), iy, ref_load(d.y_dtype, y.data(), iy) * 1.05 + 0.01);
    bm[ir] = (float)(rm[ir] + 1e-3 / rr[ir] + 1e-3 * std::fabs(rm[ir]));
    br[ir + 1] = (float)(rr[ir + 1] * (1.0 + 1e-4));
    fv2_got got[4] = {{y.data(), fm.data(), fr.data(), 0, 0, nullptr},
                      {by.data(), fm.data(), fr.data(), 0, 0, nullptr},
                      {y.data(), bm.data(), fr.data(), 0, 0, nullptr},
                      {y.data(), fm.data(), br.data(), 0, 0, nullptr}};
    if (fv2_check(&d, hx.data(), hs.data(), hh.data(), got, 4, threads) != 0) return 3;
    const int64_t want[4] = {0, 1, 1, 1};
    int bad = 0;
    for (int k = 0; k < 4; k++) {
        std::printf("self-test %d: fails %lld (want %lld), worst %.3f (%s)\n", k, (long long)got[k].fails,
                    (long long)want[k], got[k].worst, got[k].worst_of);
        bad += got[k].fails != want[k];
    }
    std::printf("self-test: %s\n", bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

int usage(const std::string &msg)
{
    std::fprintf(stderr, "fv2bench: %s\nusage: fv2bench [--reps N>=9] [--seed S] [--threads N] [--group G | --shape NAME] [--list] [--self-test]\n",
                 msg.c_str());
    return 2;
}

int fv2_main(int argc, char **argv)
{
    opts o;
    bool self = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        if (a == "--reps" && has) o.reps = std::atoi(argv[++i]);
        else if (a == "--seed" && has) rng_seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--threads" && has) o.threads = std::atoi(argv[++i]);
        else if (a == "--group" && has) o.group = argv[++i];
        else if (a == "--shape" && has) o.exact = argv[++i];
        else if (a == "--list") o.list = true;
        else if (a == "--self-test") self = true;
        else return usage("unknown or incomplete option '" + a + "'");
    }
    if (o.reps < 9) return usage("--reps must be at least 9 (the method's median of >= 9)");
    if (o.threads < 1 || o.threads > 256) return usage("--threads must be 1..256");
    const std::vector<shape> shapes = all_shapes();
    if (o.group || o.exact) {
        bool known = false;
        for (const shape &s : shapes) known = known || (o.group ? s.group == o.group : s.name == o.exact);
        if (!known) return usage(std::string("no such ") + (o.group ? "group '" : "shape '") + (o.group ? o.group : o.exact) + "' (--list)");
    }
    if (self) return self_test(o.threads);
    if (o.list) { // "group<TAB>timed|check<TAB>name" a line
        for (const shape &s : shapes) std::printf("%s\t%s\t%s\n", s.group.c_str(), s.timed ? "timed" : "check", s.name.c_str());
        return 0;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
        std::printf("fv2bench: no CUDA device: nothing can run here\n");
        return 77;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    fv2_dev dev;
    if (fv2_read_dev(&dev) != 0) return 3;
    std::printf("device %s  SMs %d  L2 %d MB  smem/SM %d  regs/SM %d  clusters %s  memory %.2f TB/s (clock x bus)  seed %llu  reps %d\n",
                prop.name, dev.sms, prop.l2CacheSize >> 20, dev.smem_sm, dev.regs_sm, dev.cluster_max > 1 ? "yes" : "no",
                dev.mem_bw / 1e12, (unsigned long long)rng_seed, o.reps);
    const size_t l2 = (size_t)prop.l2CacheSize, fb = 4 * l2;
    void *flush;
    CK(cudaMalloc(&flush, fb));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    std::vector<std::string> table;
    int fails = 0;
    for (size_t i = 0; i < shapes.size(); i++) {
        const shape &s = shapes[i];
        if (o.group && s.group != o.group) continue;
        if (o.exact && s.name != o.exact) continue;
        fails += run_shape(s, i, o, flush, fb, l2, st, table);
        if (o.exact) break; // a name in two groups (odd3's) runs once
    }
    std::printf("\n%% of copy (median of %d, L2 flushed; ' g': graph-timed; '=v1': v2 fell back to v1; '=v2': the alternative is the rule's)\n", o.reps);
    std::printf("| shape | copy us |");
    for (int k = 0; k < NK; k++) std::printf(" %s |", KNAME[k]);
    std::printf("\n|---|---:|");
    for (int k = 0; k < NK; k++) std::printf("---:|");
    std::printf("\n");
    for (const std::string &r : table) std::printf("%s\n", r.c_str());
    std::printf("FAILS %d\n", fails);
    return fails ? 1 : 0;
}

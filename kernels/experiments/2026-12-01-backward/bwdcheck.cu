// scratch: quick GPU check + timing of the backward variants (not part of the project)
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <string>
extern "C" {
#include "lnmod.h"
}
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(3);} } while (0)
static uint64_t rs_ = 88172645463325252ull;
static double urand() { rs_ ^= rs_ << 13; rs_ ^= rs_ >> 7; rs_ ^= rs_ << 17; return (rs_ >> 11) * (1.0 / 9007199254740992.0); }
static size_t dsz(lnmod_dtype t) { return t == LNMOD_F32 ? 4 : 2; }
static float h2f(lnmod_dtype t, const void *b, int64_t i) {
  if (t == LNMOD_F32) return ((const float *)b)[i];
  uint16_t h = ((const uint16_t *)b)[i];
  if (t == LNMOD_BF16) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
  __half hh; memcpy(&hh, &h, 2); return __half2float(hh);
}
static void f2h(lnmod_dtype t, void *b, int64_t i, float v) {
  if (t == LNMOD_F32) { ((float *)b)[i] = v; return; }
  if (t == LNMOD_BF16) { __nv_bfloat16 x = __float2bfloat16(v); memcpy((uint16_t *)b + i, &x, 2); return; }
  __half x = __float2half(v); memcpy((uint16_t *)b + i, &x, 2);
}
struct Shape { const char *name; lnmod_dtype xt, mt, yt; lnmod_layout lay; int64_t D, rows, S, L; int misalign; bool check; };
int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 15;
  const char *only = argc > 2 ? argv[2] : "";
  std::vector<Shape> sh = {
    {"bf16 sample D1536", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 1536, 32760, 32760, 1, 0, true},
    {"bf16 sample D3072", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 3072, 32760, 32760, 1, 0, true},
    {"bf16 sample D5120", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 5120, 32760, 32760, 1, 0, true},
    {"bf16 sample D5120 75600", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 5120, 75600, 75600, 1, 0, false},
    {"bf16 sample D1536 B4", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 1536, 4*8190, 8190, 1, 0, true},
    {"bf16 token D1536", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_TOKEN, 1536, 32760, 32760, 1, 0, true},
    {"bf16 token D3072", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_TOKEN, 3072, 32760, 32760, 1, 0, false},
    {"bf16 token D5120", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_TOKEN, 5120, 32760, 32760, 1, 0, false},
    {"bf16 frame D1536", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_FRAME, 1536, 32760, 32760, 1560, 0, true},
    {"bf16 frame D5120", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_FRAME, 5120, 32760, 32760, 1560, 0, false},
    {"f32 sample D1536", LNMOD_F32, LNMOD_F32, LNMOD_F32, LNMOD_PER_SAMPLE, 1536, 32760, 32760, 1, 0, true},
    {"f32 sample D5120", LNMOD_F32, LNMOD_F32, LNMOD_F32, LNMOD_PER_SAMPLE, 5120, 32760, 32760, 1, 0, false},
    {"bf16-bf16-f32 sample D3072", LNMOD_BF16, LNMOD_BF16, LNMOD_F32, LNMOD_PER_SAMPLE, 3072, 8192, 4096, 1, 0, true},
    {"f16 frame D2048 short", LNMOD_F16, LNMOD_F16, LNMOD_F16, LNMOD_PER_FRAME, 2048, 3*1000, 1000, 300, 0, true},
    {"bf16 sample D1000 (generic)", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 1000, 4000, 2000, 1, 0, true},
    {"bf16 sample D1536 misaligned", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 1536, 2000, 1000, 1, 1, true},
    {"f32 token D8 tiny", LNMOD_F32, LNMOD_F32, LNMOD_F32, LNMOD_PER_TOKEN, 8, 37, 37, 1, 0, true},
    {"bf16 sample D16384", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 16384, 4096, 4096, 1, 0, true},
    {"bf16 sample D8192", LNMOD_BF16, LNMOD_F32, LNMOD_BF16, LNMOD_PER_SAMPLE, 8192, 16384, 16384, 1, 0, true},
  };
  int dev = 0; cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, dev));
  printf("device %s SMs %d L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  size_t flush_bytes = (size_t)prop.l2CacheSize * 4; void *flush; CK(cudaMalloc(&flush, flush_bytes));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<const char *> vars = {"naive", "row_per_warp", "dtile"};
  if (getenv("ONLY_DTILE")) vars = {"dtile"};
  bool nocheck = getenv("NOCHECK") != nullptr;
  int fails = 0;
  for (auto s : sh) {
    if (*only && !strstr(s.name, only)) continue;
    lnmod_desc d = lnmod_desc_default();
    d.rows = s.rows; d.D = s.D; d.rows_per_sample = s.S; d.frame_len = s.L; d.x_dtype = s.xt; d.mod_dtype = s.mt; d.y_dtype = s.yt; d.layout = s.lay;
    d.scale_stride = d.shift_stride = 6 * s.D + (s.misalign ? 1 : 0);
    if (lnmod_desc_validate(&d) != LNMOD_OK) { printf("bad desc %s\n", s.name); return 2; }
    int64_t n = d.rows * d.D, nm = lnmod_mod_rows(&d);
    size_t xb = n * dsz(s.xt), yb = n * dsz(s.yt), mb = (nm * d.scale_stride + d.D) * dsz(s.mt);
    std::vector<char> hx(xb), hdy(yb), hs(mb), hsh(mb);
    for (int64_t i = 0; i < n; i++) { int64_t r = i / d.D; f2h(s.xt, hx.data(), i, (float)((urand() - 0.5) * 4 + (r % 7) * 3.0)); f2h(s.yt, hdy.data(), i, (float)(urand() - 0.5)); }
    for (int64_t i = 0; i < (int64_t)(mb / dsz(s.mt)); i++) { f2h(s.mt, hs.data(), i, (float)((urand() - 0.5) * 0.5)); f2h(s.mt, hsh.data(), i, (float)(urand() - 0.5)); }
    int off = s.misalign ? 4 : 0;
    char *bx, *bdy, *bs, *bsh, *by, *bdx, *bds, *bdh; float *mean, *rstd;
    CK(cudaMalloc(&bx, xb + 16)); CK(cudaMalloc(&bdy, yb + 16)); CK(cudaMalloc(&bs, mb + 16)); CK(cudaMalloc(&bsh, mb + 16));
    CK(cudaMalloc(&by, yb + 16)); CK(cudaMalloc(&bdx, xb + 16)); CK(cudaMalloc(&bds, mb + 16)); CK(cudaMalloc(&bdh, mb + 16));
    CK(cudaMalloc(&mean, d.rows * 4)); CK(cudaMalloc(&rstd, d.rows * 4));
    char *x = bx + off, *dy = bdy + off, *sc = bs + off, *shf = bsh + off, *y = by + off, *dx = bdx + off, *ds = bds + off, *dh = bdh + off;
    CK(cudaMemcpy(x, hx.data(), xb, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dy, hdy.data(), yb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sc, hs.data(), mb, cudaMemcpyHostToDevice)); CK(cudaMemcpy(shf, hsh.data(), mb, cudaMemcpyHostToDevice));
    if (lnmod_forward("dtile", &d, x, sc, shf, y, mean, rstd, st) != LNMOD_OK) { printf("fwd failed\n"); return 3; }
    CK(cudaStreamSynchronize(st));
    std::vector<float> hm(d.rows), hr(d.rows);
    CK(cudaMemcpy(hm.data(), mean, d.rows * 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hr.data(), rstd, d.rows * 4, cudaMemcpyDeviceToHost));
    // reference (double) with the kernel's fp32 mean/rstd
    std::vector<double> rdx, rds, rdh;
    if (nocheck) s.check = false;
    if (s.check) {
      rdx.assign(n, 0); rds.assign(nm * d.D, 0); rdh.assign(nm * d.D, 0);
      for (int64_t r = 0; r < d.rows; r++) {
        int64_t m = lnmod_mod_index(&d, r); double a = 0, b = 0; double mu = hm[r], rs = hr[r];
        for (int64_t c = 0; c < d.D; c++) { double xh = (h2f(s.xt, hx.data(), r * d.D + c) - mu) * rs, g = h2f(s.yt, hdy.data(), r * d.D + c) * (1.0 + h2f(s.mt, hs.data(), m * d.scale_stride + c)); a += g; b += g * xh;
          rds[m * d.D + c] += h2f(s.yt, hdy.data(), r * d.D + c) * xh; rdh[m * d.D + c] += h2f(s.yt, hdy.data(), r * d.D + c); }
        a /= d.D; b /= d.D;
        for (int64_t c = 0; c < d.D; c++) { double xh = (h2f(s.xt, hx.data(), r * d.D + c) - mu) * rs, g = h2f(s.yt, hdy.data(), r * d.D + c) * (1.0 + h2f(s.mt, hs.data(), m * d.scale_stride + c)); rdx[r * d.D + c] = rs * (g - a - xh * b); }
      }
    }
    int64_t minb = lnmod_bwd_min_bytes(&d);
    // copy ceiling of minb bytes: read minb/2, write minb/2
    char *ca, *cb; size_t half = minb / 2; CK(cudaMalloc(&ca, half)); CK(cudaMalloc(&cb, half));
    auto timeit = [&](auto fn) { std::vector<float> t; for (int i = 0; i < reps + 3; i++) { CK(cudaMemsetAsync(flush, i, flush_bytes, st)); CK(cudaEventRecord(e0, st)); fn(); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (i >= 3) t.push_back(ms * 1000); } std::sort(t.begin(), t.end()); return t[t.size() / 2]; };
    float tc = timeit([&] { CK(cudaMemcpyAsync(cb, ca, half, cudaMemcpyDeviceToDevice, st)); });
    printf("== %s  rows %ld D %ld  minbytes %ld  copy %.1f us (%.2f TB/s)\n", s.name, (long)d.rows, (long)d.D, (long)minb, tc, minb / tc / 1e6);
    for (const char *v : vars) {
      size_t wsb = 0; lnmod_status q = lnmod_backward_workspace(v, &d, &wsb); if (q != LNMOD_OK) { printf("  %s ws: %s\n", v, lnmod_strerror(q)); fails++; continue; }
      void *ws = nullptr; if (wsb) CK(cudaMalloc(&ws, wsb));
      CK(cudaMemset(bds, 0x7f, mb + 16)); CK(cudaMemset(bdh, 0x7f, mb + 16)); CK(cudaMemset(bdx, 0xff, xb + 16));
      if (ws) CK(cudaMemset(ws, 0xff, wsb));
      q = lnmod_backward(v, &d, x, sc, dy, mean, rstd, dx, ds, dh, ws, wsb, st);
      if (q != LNMOD_OK) { printf("  %s: %s\n", v, lnmod_strerror(q)); fails++; continue; }
      CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
      std::vector<char> gdx(xb + 16), gds(mb + 16), gdh(mb + 16);
      CK(cudaMemcpy(gdx.data(), bdx, xb + 16, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(gds.data(), bds, mb + 16, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(gdh.data(), bdh, mb + 16, cudaMemcpyDeviceToHost));
      // second run with different poison: determinism
      CK(cudaMemset(bds, 0x11, mb + 16)); CK(cudaMemset(bdh, 0x11, mb + 16)); if (ws) CK(cudaMemset(ws, 0x3c, wsb));
      CK(cudaMemset(bds, 0x7f, mb + 16)); CK(cudaMemset(bdh, 0x7f, mb + 16));
      q = lnmod_backward(v, &d, x, sc, dy, mean, rstd, dx, ds, dh, ws, wsb, st); CK(cudaStreamSynchronize(st));
      std::vector<char> g2x(xb + 16), g2s(mb + 16), g2h(mb + 16);
      CK(cudaMemcpy(g2x.data(), bdx, xb + 16, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(g2s.data(), bds, mb + 16, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(g2h.data(), bdh, mb + 16, cudaMemcpyDeviceToHost));
      bool det = gdx == g2x && gds == g2s && gdh == g2h;
      double ex = 0, mx = 0, es = 0, msx = 0, eh = 0, mh = 0; int64_t guard_bad = 0;
      if (s.check) {
        for (int64_t i = 0; i < n; i++) { double g = h2f(s.xt, gdx.data() + off, i); ex = std::max(ex, fabs(g - rdx[i])); mx = std::max(mx, fabs(rdx[i])); if (std::isnan(g)) ex = INFINITY; }
        for (int64_t m = 0; m < nm; m++) for (int64_t c = 0; c < d.D; c++) { double g = h2f(s.mt, gds.data() + off, m * d.scale_stride + c), h = h2f(s.mt, gdh.data() + off, m * d.shift_stride + c);
          es = std::max(es, fabs(g - rds[m * d.D + c])); msx = std::max(msx, fabs(rds[m * d.D + c])); eh = std::max(eh, fabs(h - rdh[m * d.D + c])); mh = std::max(mh, fabs(rdh[m * d.D + c])); if (std::isnan(g) || std::isnan(h)) es = INFINITY; }
        // gaps between modulation rows untouched (0x7f bytes)
        for (int64_t m = 0; m < nm; m++) for (int64_t c = d.D; c < d.scale_stride && m * d.scale_stride + c < (int64_t)(mb / dsz(s.mt)); c++) { int64_t bi = (m * d.scale_stride + c) * dsz(s.mt) + off; for (size_t k = 0; k < dsz(s.mt); k++) if ((unsigned char)gds[bi + k] != 0x7f) guard_bad++; }
        for (int k = 0; k < off; k++) if ((unsigned char)gds[k] != 0x7f) guard_bad++;
      }
      void *wsp = ws;
      float t = timeit([&] { lnmod_backward(v, &d, x, sc, dy, mean, rstd, dx, ds, dh, wsp, wsb, st); });
      double tol = (s.xt == LNMOD_F32 ? 1e-5 : 1.6e-2);
      double tm = s.mt == LNMOD_F32 ? 1e-3 : 8e-3; bool ok = !s.check || (ex <= tol * mx + 1e-6 && es <= tm * msx + 1e-4 && eh <= tm * mh + 1e-4 && guard_bad == 0);
      if (!ok || !det) fails++;
      printf("  %-13s %8.1f us  %5.1f%% of copy  ws %zu  det %s  err dx %.2e/%.2e ds %.2e/%.2e dh %.2e/%.2e guard %ld %s\n", v, t, 100.0 * tc / t, wsb, det ? "yes" : "NO", ex, mx, es, msx, eh, mh, (long)guard_bad, ok ? "ok" : "FAIL");
      if (ws) CK(cudaFree(ws));
    }
    // fwd + bwd of dtile vs copy, and fwd alone
    float tf = timeit([&] { lnmod_forward("dtile", &d, x, sc, shf, y, mean, rstd, st); });
    printf("  dtile fwd %.1f us (fwd minbytes %ld: %.1f%% of its own copy est)\n", tf, (long)lnmod_fwd_min_bytes(&d, 1), 100.0 * tc * ((double)lnmod_fwd_min_bytes(&d, 1) / minb) / tf);
    cudaFree(ca); cudaFree(cb); cudaFree(bx); cudaFree(bdy); cudaFree(bs); cudaFree(bsh); cudaFree(by); cudaFree(bdx); cudaFree(bds); cudaFree(bdh); cudaFree(mean); cudaFree(rstd);
  }
  printf("FAILS %d\n", fails);
  return fails ? 1 : 0;
}

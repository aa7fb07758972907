/* verify_backend.c -- the GPU or the CPU models as the verifier's backend (verify_backend.h). */
#include "verify_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ada_cuda.h"
#include "ada_plugin.h"
#include "verify.h"
#include "verify_check.h"
#include "verify_model.h"
#include "verify_par.h"

#if ADALOAD_HAVE_CUDA
#include "lnmod.h"
#include "verify_span_cuda.h"
#endif

void *verify_host_get(verify_buf *b, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (b->cap < bytes) {
        verify_host_free(b);
        b->p = malloc(bytes);
        b->cap = b->p ? bytes : 0;
    }
    return b->p;
}

void verify_host_free(verify_buf *b)
{
#if ADALOAD_HAVE_CUDA
    if (b->pinned) {
        cudaFreeHost(b->p);
        b->p = NULL;
        b->cap = 0;
        b->pinned = 0;
        return;
    }
#endif
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

/* Page-locked on the GPU backend (the full grid moves a few hundred GB each way), plain
 * memory otherwise or if pinning fails. */
void *verify_host_get_xfer(verify_backend *bk, verify_buf *b, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    if (b->cap >= bytes) return b->p;
    const double t0 = ada_now_s();
    void *p = NULL;
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        verify_host_free(b);
        if (cudaMallocHost(&b->p, bytes) == cudaSuccess) {
            b->cap = bytes;
            b->pinned = 1;
            bk->t_alloc += ada_now_s() - t0;
            return b->p;
        }
        (void)cudaGetLastError();
        b->p = NULL;
    }
#endif
    p = verify_host_get(b, bytes);
    bk->t_alloc += ada_now_s() - t0;
    return p;
}

void verify_dev_free(verify_backend *bk, verify_buf *b)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        if (b->p) cudaFree(b->p);
        b->p = NULL;
        b->cap = 0;
        return;
    }
#endif
    (void)bk;
    verify_host_free(b);
}

/* Never a larger leftover, so an access beyond the guard bands falls outside the
 * allocation, where compute-sanitizer's memcheck (or ASan, for a model) reports it -- unless
 * bk->reuse_dev (--reuse-buffers, for runs outside compute-sanitizer): then a buffer only
 * grows, and the ~10 cudaFree/cudaMalloc pairs of every input set are gone. */
void *verify_dev_get(verify_backend *bk, verify_buf *b, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        if (bk->reuse_dev ? b->cap < bytes : b->cap != bytes) {
            const double t0 = ada_now_s();
            if (b->p) cudaFree(b->p);
            b->p = NULL;
            b->cap = 0;
            const int ok = cudaMalloc(&b->p, bytes) == cudaSuccess;
            bk->t_alloc += ada_now_s() - t0;
            if (!ok) {
                (void)cudaGetLastError();
                b->p = NULL;
                return NULL;
            }
            b->cap = bytes;
        }
        return b->p;
    }
#endif
    if (!bk->reuse_dev && b->cap != bytes) verify_host_free(b); /* verify_host_get grows it otherwise */
    return verify_host_get(b, bytes);
}

int verify_dev_poison(verify_backend *bk, void *p, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemset(p, VERIFY_POISON_BYTE, bytes) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memset(p, VERIFY_POISON_BYTE, bytes);
    return 0;
}

int verify_dev_fill(verify_backend *bk, void *p, unsigned char byte, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemset(p, byte, bytes) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memset(p, byte, bytes);
    return 0;
}

int verify_dev_upload(verify_backend *bk, void *dst, const void *src, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memcpy(dst, src, bytes);
    return 0;
}

int verify_dev_download(verify_backend *bk, void *dst, const void *src, size_t bytes)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
#endif
    (void)bk;
    memcpy(dst, src, bytes);
    return 0;
}

int verify_dev_span_check(verify_backend *bk, const verify_span *sp, const unsigned char *buf,
                          const unsigned char *ref, unsigned char poison, void *dcount, int *outside_ok, int *same)
{
#if ADALOAD_HAVE_CUDA
    if (!bk->model) {
        unsigned long long bad[2];
        if (verify_cuda_span_check(sp, buf, ref, poison, (unsigned long long *)dcount, bad) != 0) {
            (void)cudaGetLastError();
            return -1;
        }
        *outside_ok = bad[0] == 0;
        *same = bad[1] == 0;
        return 0;
    }
#endif
    (void)dcount;
    *outside_ok = verify_span_outside_ok(sp, buf, poison, bk->threads);
    *same = ref ? verify_span_same(sp, buf, ref, bk->threads) : 1;
    return 0;
}

long long verify_backend_free_device_bytes(const verify_backend *bk)
{
#if ADALOAD_HAVE_CUDA
    size_t fr = 0, tot = 0;
    if (!bk->model && cudaMemGetInfo(&fr, &tot) == cudaSuccess) return (long long)fr;
#endif
    (void)bk;
    return -1;
}

typedef struct {
    int which;
    const lnmod_desc *d;
    const void *x, *scale, *shift;
    void *y;
    float *mean, *rstd;
} model_ctx;

static void model_range(void *c, int64_t lo, int64_t hi, int tid)
{
    (void)tid;
    model_ctx *m = c;
    verify_model_rows(m->which, m->d, lo, hi, m->x, m->scale, m->shift, m->y, m->mean, m->rstd);
}

#if ADALOAD_HAVE_CUDA
/* After a launch that returned st: waits for the device; 0 when both went well, else -1 with
 * err set (and the context marked lost after a sticky error). */
static int finish_launch(verify_backend *bk, const char *what, lnmod_status st, char *err, size_t errn)
{
    if (st != LNMOD_OK) {
        /* The launch error stays with this case's message; a launch error leaves the
         * context usable, a sticky one shows up at the synchronization below. */
        cudaError_t le = cudaGetLastError();
        snprintf(err, errn, "%s returned %s%s%s", what, lnmod_status_name(st), le != cudaSuccess ? ": " : "",
                 le != cudaSuccess ? cudaGetErrorString(le) : "");
    }
    if (ADA_CUDA_CHECK(cudaDeviceSynchronize(), "kernel failed", err, errn) != cudaSuccess) {
        /* Clear the error; if the context is still broken (a sticky error such as an
         * illegal address), the next synchronization fails again and nothing more can run. */
        (void)cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess) {
            bk->context_lost = 1;
            snprintf(bk->lost_why, sizeof bk->lost_why, "%s", err);
        }
        return -1;
    }
    return st == LNMOD_OK ? 0 : -1;
}

/* finish_launch for a plug-in's call, which may return a value no lnmod_status has. */
static int finish_plugin(verify_backend *bk, const char *variant, const char *what, int raw, char *err, size_t errn)
{
    if (ada_plugin_status_known(raw)) {
        char w[160];
        snprintf(w, sizeof w, "%s's %s", variant, what);
        return finish_launch(bk, w, (lnmod_status)raw, err, errn);
    }
    char text[200];
    ada_plugin_status_text(raw, text, sizeof text);
    int rc = finish_launch(bk, what, LNMOD_OK, err, errn);
    if (rc == 0) snprintf(err, errn, "%s's %s returned %s", variant, what, text);
    return -1;
}
#endif

int verify_has_backward(int cpu_model, const char *variant)
{
    if (cpu_model) return verify_model_find(variant) >= 0;
    if (ada_plugin_is_name(variant)) return ada_plugin_has_backward(ada_plugin_find(variant));
#if ADALOAD_HAVE_CUDA && ADALOAD_KERNEL_BACKWARD
    const lnmod_variant *v = lnmod_find_variant(variant);
    return v && v->backward != NULL;
#else
    (void)variant;
    return 0;
#endif
}

int verify_backend_bwd_workspace(const verify_backend *bk, const char *variant, const lnmod_desc *d,
                                 size_t *bytes, char *err, size_t errn)
{
    *bytes = 0;
    if (bk->model) {
        int which = verify_model_find(variant);
        if (which < 0) {
            snprintf(err, errn, "no CPU model '%s'", variant);
            return -1;
        }
        *bytes = (size_t)verify_model_bwd_workspace(which, d);
        return 0;
    }
#if ADALOAD_HAVE_CUDA
    if (ada_plugin_is_name(variant)) {
        int raw = ada_plugin_backward_workspace(ada_plugin_find(variant), d, bytes);
        if (raw == LNMOD_OK) return 0;
        char text[200];
        ada_plugin_status_text(raw, text, sizeof text);
        snprintf(err, errn, "%s's backward_workspace returned %s", variant, text);
        return -1;
    }
#endif
#if ADALOAD_HAVE_CUDA && ADALOAD_KERNEL_BACKWARD
    lnmod_status st = lnmod_backward_workspace(variant, d, bytes);
    if (st == LNMOD_OK) return 0;
    snprintf(err, errn, "lnmod_backward_workspace returned %s", lnmod_status_name(st));
#else
    (void)d;
    snprintf(err, errn, "GPU kernels with a backward not built");
#endif
    return -1;
}

int verify_backend_run_bwd(verify_backend *bk, const char *variant, const lnmod_desc *d, const void *x,
                           const void *scale, const void *dy, const float *mean, const float *rstd, void *dx,
                           void *dscale, void *dshift, void *ws, size_t ws_bytes, char *err, size_t errn)
{
    if (bk->model) {
        int which = verify_model_find(variant);
        if (which < 0) {
            snprintf(err, errn, "no CPU model '%s'", variant);
            return -1;
        }
        verify_model_backward(which, d, x, scale, dy, mean, rstd, dx, dscale, dshift, ws, bk->threads);
        return 0;
    }
#if ADALOAD_HAVE_CUDA
    if (ada_plugin_is_name(variant)) {
        int raw = ada_plugin_backward(ada_plugin_find(variant), d, x, scale, dy, mean, rstd, dx, dscale, dshift, ws,
                                      ws_bytes, 0);
        return finish_plugin(bk, variant, "backward", raw, err, errn);
    }
#endif
#if ADALOAD_HAVE_CUDA && ADALOAD_KERNEL_BACKWARD
    lnmod_status st = lnmod_backward(variant, d, x, scale, dy, mean, rstd, dx, dscale, dshift, ws, ws_bytes, 0);
    return finish_launch(bk, "lnmod_backward", st, err, errn);
#else
    (void)variant, (void)d, (void)x, (void)scale, (void)dy, (void)mean, (void)rstd, (void)dx, (void)dscale;
    (void)dshift, (void)ws, (void)ws_bytes;
    snprintf(err, errn, "GPU kernels not built");
    return -1;
#endif
}

int verify_backend_run(verify_backend *bk, const char *variant, const lnmod_desc *d, const void *x,
                       const void *scale, const void *shift, void *y, float *mean, float *rstd,
                       char *err, size_t errn)
{
    if (bk->model) {
        model_ctx m = {verify_model_find(variant), d, x, scale, shift, y, mean, rstd};
        if (m.which < 0) {
            snprintf(err, errn, "no CPU model '%s'", variant);
            return -1;
        }
        verify_parallel(d->rows, d->D * 4, bk->threads, model_range, &m);
        return 0;
    }
#if ADALOAD_HAVE_CUDA
    if (ada_plugin_is_name(variant)) {
        int raw = ada_plugin_forward(ada_plugin_find(variant), d, x, scale, shift, y, mean, rstd, 0);
        return finish_plugin(bk, variant, "forward", raw, err, errn);
    }
    /* The forward workspace (state: zero on entry, left zero; lnmod.h): a zeroed one a call,
     * checked zero again after it. */
    size_t fwb = 0;
    unsigned char *fw = NULL, left[256];
    if (lnmod_forward_workspace(variant, d, &fwb) != LNMOD_OK) fwb = 0; /* lnmod_forward says why */
    if (fwb > sizeof left) {
        snprintf(err, errn, "lnmod_forward_workspace(%s): %zu bytes, more than verify keeps", variant, fwb);
        return -1;
    }
    if (fwb && (ADA_CUDA_CHECK(cudaMalloc((void **)&fw, fwb), "cudaMalloc (forward workspace)", err, errn) != cudaSuccess ||
                ADA_CUDA_CHECK(cudaMemset(fw, 0, fwb), "cudaMemset (forward workspace)", err, errn) != cudaSuccess)) {
        if (fw) cudaFree(fw);
        return -1;
    }
    lnmod_status st = lnmod_forward(variant, d, x, scale, shift, y, mean, rstd, fw, fwb, 0);
    int rc = finish_launch(bk, "lnmod_forward", st, err, errn);
    if (rc == 0 && fwb) {
        if (ADA_CUDA_CHECK(cudaMemcpy(left, fw, fwb, cudaMemcpyDeviceToHost), "download (forward workspace)", err,
                           errn) != cudaSuccess)
            rc = -1;
        for (size_t i = 0; rc == 0 && i < fwb; i++)
            if (left[i]) {
                snprintf(err, errn, "lnmod_forward(%s) left its workspace non-zero (byte %zu of %zu)", variant, i, fwb);
                rc = -1;
            }
    }
    if (fw) cudaFree(fw);
    return rc;
#else
    (void)variant, (void)d, (void)x, (void)scale, (void)shift, (void)y, (void)mean, (void)rstd;
    snprintf(err, errn, "GPU kernels not built");
    return -1;
#endif
}

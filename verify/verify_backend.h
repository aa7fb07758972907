/* verify_backend.h -- where `adaload verify` runs a kernel: the GPU (CUDA runtime, device
 * memory) or the CPU models of verify_model.h (host memory laid out as the device buffers
 * would be). Internal to the verify library (verify_session.c uses it).
 *
 *   verify_backend bk = {.model = 0, .threads = 8};
 *   verify_buf dx = {0};
 *   unsigned char *p = verify_dev_get(&bk, &dx, bytes);     // exact size: memcheck sees overruns
 *   verify_dev_poison(&bk, p, bytes); verify_dev_upload(&bk, p, host, bytes);
 *   verify_backend_run(&bk, "dtile", &d, x, scale, shift, y, mean, rstd, err, sizeof err);
 *   verify_dev_free(&bk, &dx);
 *
 * A sticky CUDA error (the context is lost) sets bk.context_lost and lost_why; nothing more
 * can run on the GPU after it.
 */
#ifndef ADALOAD_VERIFY_BACKEND_H
#define ADALOAD_VERIFY_BACKEND_H

#include <stddef.h>

#include "lnmod_desc.h"
#include "verify_span.h"

typedef struct {
    int model;          /* 1: CPU models, memory is host memory */
    int threads;
    int context_lost;   /* a sticky CUDA error: nothing more can run */
    char lost_why[256];
    double t_alloc;     /* seconds spent (re)allocating buffers (pinned host, device) */
    int reuse_dev;      /* device buffers grow-only (verify_config.reuse_buffers), else exact size */
} verify_backend;

/* A grow-only host buffer, or an exact-size device buffer. */
typedef struct {
    void *p;
    size_t cap;
    int pinned; /* page-locked (cudaMallocHost) */
} verify_buf;

/* Host memory of at least bytes (reused when big enough); NULL when out of memory. */
void *verify_host_get(verify_buf *b, size_t bytes);
/* Host memory that travels to or from the device: page-locked on the GPU backend. */
void *verify_host_get_xfer(verify_backend *bk, verify_buf *b, size_t bytes);
void verify_host_free(verify_buf *b);

/* Device buffer of exactly bytes (guards + data), or of at least bytes with bk->reuse_dev;
 * NULL when out of device memory. */
void *verify_dev_get(verify_backend *bk, verify_buf *b, size_t bytes);
void verify_dev_free(verify_backend *bk, verify_buf *b);
/* 0 on success, -1 on a CUDA error. */
int verify_dev_poison(verify_backend *bk, void *p, size_t bytes);
/* Every byte := byte (verify_dev_poison is byte VERIFY_POISON_BYTE). */
int verify_dev_fill(verify_backend *bk, void *p, unsigned char byte, size_t bytes);
int verify_dev_upload(verify_backend *bk, void *dst, const void *src, size_t bytes);
int verify_dev_download(verify_backend *bk, void *dst, const void *src, size_t bytes);

/* The checks of verify_span.h where the buffer lives: on the GPU (verify_span_cuda.h; only
 * two counters cross the bus) or, on the model backend, over bk->threads on the host.
 * outside_ok: the front band, every gap and the rest hold poison; same: the rows equal ref's
 * bit for bit (1 when ref is NULL). dcount: 16 bytes of device memory the GPU check may use
 * (unused by the model). 0, or -1 on a CUDA error. */
int verify_dev_span_check(verify_backend *bk, const verify_span *sp, const unsigned char *buf,
                          const unsigned char *ref, unsigned char poison, void *dcount, int *outside_ok, int *same);

/* Runs variant (a kernel name, or a CPU model name on the model backend) and waits for it.
 * 0 on success; otherwise err says why. */
int verify_backend_run(verify_backend *bk, const char *variant, const lnmod_desc *d, const void *x,
                       const void *scale, const void *shift, void *y, float *mean, float *rstd,
                       char *err, size_t errn);

/* The backward: the workspace bytes of variant for d, and one run of it (waits for it).
 * 0 on success; otherwise err says why. */
int verify_backend_bwd_workspace(const verify_backend *bk, const char *variant, const lnmod_desc *d,
                                 size_t *bytes, char *err, size_t errn);
int verify_backend_run_bwd(verify_backend *bk, const char *variant, const lnmod_desc *d, const void *x,
                           const void *scale, const void *dy, const float *mean, const float *rstd, void *dx,
                           void *dscale, void *dshift, void *ws, size_t ws_bytes, char *err, size_t errn);

/* Free device memory in bytes, or -1 when unknown (model backend: -1). */
long long verify_backend_free_device_bytes(const verify_backend *bk);

#endif

/* fuzz_lnmod_desc.c -- libFuzzer target: lnmod_desc_validate on descriptors made of
 * arbitrary bytes, and, for the ones it accepts, the helpers that index and count with them
 * (lnmod_mod_rows, lnmod_frames_per_sample, lnmod_mod_index at the last row).
 *
 * With the backward's patch applied (ADALOAD_KERNEL_BACKWARD, kernels/pending/), the byte
 * counts saturate at INT64_MAX, and lnmod_fwd_min_bytes, lnmod_fwd_reread_bytes and
 * lnmod_bwd_min_bytes are called on every accepted descriptor (rows*D goes up to 2^61 here).
 * Without it kernels/lnmod_desc.c still has the int64 overflow of issue 9 (its fix is part of
 * that patch: a kernel source, it lands with the patch's GPU record), so the forward's two
 * counts are called only for rows*D below 2^56. Seeds: corpus/lnmod_desc/ (the Wan shapes of
 * the bench sets, as bytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lnmod_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lnmod_desc d;
    if (size < sizeof d) return 0;
    memcpy(&d, data, sizeof d);
    if (lnmod_desc_validate(&d) != LNMOD_OK) return 0;
    int64_t m = lnmod_mod_rows(&d), f = lnmod_frames_per_sample(&d);
    int64_t k = lnmod_mod_index(&d, d.rows - 1);
    if (m < 1 || f < 1 || k < 0 || k >= m) abort(); /* the last row's modulation row exists */
#if ADALOAD_KERNEL_BACKWARD
    int64_t c = lnmod_bwd_min_bytes(&d);
    if (c <= 0) abort();
#else
    if (d.rows > ((int64_t)1 << 56) / d.D) return 0;
#endif
    int64_t a = lnmod_fwd_min_bytes(&d, (int)(data[0] & 1));
    int64_t b = lnmod_fwd_reread_bytes(&d, (int)(data[0] & 1));
    if (a <= 0 || b < a) abort(); /* re-reading never moves fewer bytes */
    return 0;
}

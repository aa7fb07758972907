/* test_lnmod_desc.c -- Criterion tests of descriptor validation (CPU only). */
#include <criterion/criterion.h>
#include <stdint.h>

#include "lnmod_desc.h"

static lnmod_desc wan14b(void)
{
    lnmod_desc d = lnmod_desc_default();
    d.rows = 2 * 32760;
    d.D = 5120;
    d.rows_per_sample = 32760;
    d.scale_stride = d.shift_stride = 6 * 5120;
    return d;
}

Test(lnmod_desc, valid_wan_descriptor) { cr_assert_eq(lnmod_desc_validate(&(lnmod_desc){0}), LNMOD_ERR_ZERO_DIM); lnmod_desc d = wan14b(); cr_assert_eq(lnmod_desc_validate(&d), LNMOD_OK); }

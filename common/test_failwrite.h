/* test_failwrite.h -- a fault-injecting write shim for tests and fuzz targets (never linked
 * into adaload): a program linked with test_failwrite.c and -Wl,--wrap=write,--wrap=fsync
 * (the CMake function ada_failwrite(target) adds both) has every write() and fsync() of its
 * statically linked code -- common/ada_output.c's writer among them -- go through here:
 *
 *   test_failwrite_budget(1000);   // the next 1000 bytes are written, then ENOSPC
 *   test_failwrite_budget(-1);     // writes go through again (the default)
 *
 * A write that would pass the budget writes what still fits and then fails with ENOSPC, as
 * a filling disk does; fsync fails with ENOSPC once the budget is spent. Calls from shared
 * libraries (stdio's own buffers, Criterion) are not affected. */
#ifndef ADALOAD_TEST_FAILWRITE_H
#define ADALOAD_TEST_FAILWRITE_H

void test_failwrite_budget(long long bytes);
/* Bytes written through the shim since the last test_failwrite_budget. */
long long test_failwrite_written(void);

#endif

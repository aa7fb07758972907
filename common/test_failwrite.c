/* test_failwrite.c -- the write shim of test_failwrite.h (-Wl,--wrap=write,--wrap=fsync). */
#include "test_failwrite.h"

#include <errno.h>
#include <unistd.h>

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
int __real_fsync(int fd);
int __wrap_fsync(int fd);

static long long budget = -1, written;

void test_failwrite_budget(long long bytes)
{
    budget = bytes;
    written = 0;
}

long long test_failwrite_written(void) { return written; }

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
    if (budget >= 0 && fd > 2) {
        long long left = budget - written;
        if (left <= 0) {
            errno = ENOSPC;
            return -1;
        }
        if ((long long)n > left) n = (size_t)left;
    }
    ssize_t w = __real_write(fd, buf, n);
    if (w > 0) written += w;
    return w;
}

int __wrap_fsync(int fd)
{
    if (budget >= 0 && written >= budget) {
        errno = ENOSPC;
        return -1;
    }
    return __real_fsync(fd);
}

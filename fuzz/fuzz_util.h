/* fuzz_util.h -- what the libFuzzer targets share: the input as a file (the parsers take a
 * path), through a memfd so nothing touches the disk. Header-only, fuzz targets only. */
#ifndef ADALOAD_FUZZ_UTIL_H
#define ADALOAD_FUZZ_UTIL_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memfd; its path goes to path. Returns the fd (close it), or -1. */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

/* A scratch folder for the whole fuzzing process (made once, under /dev/shm when it exists):
 * for targets whose readers take a tree of files. */
static inline const char *fuzz_scratch(void)
{
    static char dir[64];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/adaload-fuzz-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        if (!mkdtemp(dir)) abort();
    }
    return dir;
}

/* Writes n bytes to path (created or truncated); aborts when it cannot (a harness bug). */
static inline void fuzz_put(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) abort();
}

#endif

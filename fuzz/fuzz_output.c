/* fuzz_output.c -- libFuzzer target: the output writer (common/ada_output.h) on a disk that
 * fills up, through the fault-injecting write shim (common/test_failwrite.h: write() and
 * fsync() fail with ENOSPC once a byte budget is spent). The input decides the budget, how
 * many outputs one transaction has (1-40, so that some are past the ADA_OUT_OPEN_FILES that
 * keep their descriptor from the start; each target a new file or an existing one), the
 * writes (fwrites of up to 3 MB, past the stream buffer) and early ada_out_close's (an
 * operation byte with its top 3 bits set). Checked after every transaction: fwrite never
 * reports more than it was given; a closed output has no stream; a commit after a failed
 * close fails; a commit that fails says why and leaves every existing target with its old
 * content and no new one; a commit that succeeds leaves exactly the bytes written; no
 * temporary is ever left. Seeds: corpus/output/ (full_disk_one_3mb_write: one output, a
 * budget of 0 bytes, one 3 MB write past the stream buffer -- the SEGV of the writer before
 * its cookie stopped returning -1, d3b64f3). */
#include "fuzz_util.h"

#include <dirent.h>
#include <string.h>

#include "ada_output.h"
#include "test_failwrite.h"

enum { MAXW = 3 << 20, MAXO = 40 };
static char *buf, *got;

static size_t slurp(const char *p, char *into, size_t cap)
{
    FILE *f = fopen(p, "rb");
    if (!f) return (size_t)-1;
    size_t n = fread(into, 1, cap, f);
    fclose(f);
    return n;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) abort();
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    if (!buf) {
        buf = malloc(MAXW);
        got = malloc(MAXW + 1);
        if (!buf || !got) abort();
        for (size_t i = 0; i < MAXW; i++) buf[i] = (char)('a' + i % 26);
    }
    const char *dir = fuzz_scratch();
    char p[MAXO][200];
    int nout = 1 + data[0] % MAXO, old[MAXO], closed[MAXO] = {0}, close_failed = 0;
    long long budget = (long long)(data[1] | data[2] << 8) << (data[3] % 8);
    data += 4, size -= 4;
    for (int i = 0; i < MAXO; i++) { /* the folder holds this transaction's targets only */
        snprintf(p[i], sizeof p[i], "%s/out%d", dir, i);
        remove(p[i]);
    }
    for (int i = 0; i < nout; i++) {
        old[i] = size > (size_t)i && (data[i] & 1);
        if (old[i]) fuzz_put(p[i], "old\n", 4);
        else remove(p[i]);
    }
    ada_outset *t = ada_outset_new("fuzz");
    ada_out *o[MAXO];
    size_t wrote[MAXO] = {0};
    char err[512] = "";
    for (int i = 0; i < nout; i++)
        if (!(o[i] = ada_outset_add(t, p[i], "out", err, sizeof err))) abort();
    test_failwrite_budget(budget);
    for (size_t k = 0; k + 3 <= size; k += 3) {
        int i = data[k] % nout;
        if (closed[i]) {
            if (ada_out_file(o[i])) abort(); /* closed: no stream */
            continue;
        }
        if (data[k] >> 5 == 7) { /* done with it: complete it now */
            closed[i] = 1;
            close_failed |= ada_out_close(o[i], err, sizeof err) != ADA_OUT_OK;
            continue;
        }
        size_t n = ((size_t)data[k + 1] << 8 | data[k + 2]) << (data[k] >> 5);
        if (n > MAXW - wrote[i]) n = MAXW - wrote[i];
        FILE *f = ada_out_file(o[i]);
        if (!f) abort(); /* an open output always has a stream (ENOSPC takes no descriptor) */
        size_t w = fwrite(buf + wrote[i], 1, n, f);
        if (w > n) abort(); /* more than it was given: the bug this target was made for */
        wrote[i] += n;
    }
    ada_out_status st = ada_outset_commit(t, err, sizeof err);
    if (close_failed && st == ADA_OUT_OK) abort(); /* a failed close must stop the commit */
    test_failwrite_budget(-1);
    ada_outset_free(t);
    for (int i = 0; i < nout; i++) {
        size_t n = slurp(p[i], got, MAXW + 1);
        if (st == ADA_OUT_OK) {
            if (n != wrote[i] || memcmp(got, buf, n)) abort(); /* committed: exactly what was written */
        } else if (old[i]) {
            if (n != 4 || memcmp(got, "old\n", 4)) abort(); /* failed: the old content stays */
        } else if (n != (size_t)-1) {
            abort(); /* failed: no new target appears */
        }
    }
    if (st != ADA_OUT_OK && !strstr(err, "No space left")) abort();
    int exist = 0;
    for (int i = 0; i < nout; i++) exist += st == ADA_OUT_OK || old[i];
    if (entries(dir) != exist) abort(); /* a temporary left behind (the folder holds only the targets) */
    return 0;
}

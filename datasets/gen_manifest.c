/* gen_manifest.c -- writes one of the planner's manifests (see manifest_gen.h).
 *
 *   gen_manifest --kind default|longtail|tiny [--rows N] [--seed N] [--out FILE]
 *
 * Without --rows/--seed it writes exactly the committed datasets/<kind>.csv (a test checks
 * that they match). --out goes through a temporary name and a rename, so a failure never
 * leaves a partial file; without --out the manifest goes to stdout.
 * Exit codes: 0 ok, 1 write error, 2 bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest_gen.h"

static int usage(const char *msg)
{
    fprintf(stderr, "gen_manifest: %s\nusage: gen_manifest --kind default|longtail|tiny "
                    "[--rows N] [--seed N] [--out FILE]\n", msg);
    return 2;
}

static int parse_u64(const char *s, unsigned long long *out)
{
    if (!s || !*s || *s == '-') return -1;
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return (errno || *end) ? -1 : 0;
}

int main(int argc, char **argv)
{
    const char *kind = NULL, *out = NULL;
    unsigned long long rows = 0, seed = 0;
    int have_seed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: gen_manifest --kind default|longtail|tiny [--rows N] [--seed N] [--out FILE]\n");
            return 0;
        }
        if (i + 1 >= argc) return usage("an option is missing its value");
        const char *v = argv[++i];
        if (!strcmp(a, "--kind")) kind = v;
        else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--rows")) {
            if (parse_u64(v, &rows) || rows == 0 || rows > 4000000000ull) return usage("--rows: a whole number in [1, 4e9]");
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64(v, &seed)) return usage("--seed: a whole number");
            have_seed = 1;
        } else {
            return usage("unknown option");
        }
    }
    if (!kind) return usage("--kind is required");
    if (ada_gen_default_rows(kind) == 0) return usage("--kind: default, longtail or tiny");
    if (!have_seed) seed = ada_gen_default_seed(kind);

    if (!out) return ada_gen_manifest(stdout, kind, (int64_t)rows, seed) ? 1 : 0;
    size_t n = strlen(out) + 32;
    char *tmp = malloc(n);
    if (!tmp) return 1;
    snprintf(tmp, n, "%s.tmp.%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "gen_manifest: %s: %s\n", tmp, strerror(errno));
        free(tmp);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(f, buf, _IOFBF, sizeof buf);
    int rc = ada_gen_manifest(f, kind, (int64_t)rows, seed);
    if (fclose(f) != 0) rc = -2;
    if (rc || rename(tmp, out) != 0) {
        fprintf(stderr, "gen_manifest: cannot write %s\n", out);
        remove(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}

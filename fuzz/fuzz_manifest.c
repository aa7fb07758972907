/* fuzz_manifest.c -- libFuzzer target: the planner's manifest reader (plan_manifest_read) on
 * arbitrary bytes, with and without sample ids kept, under the Wan 2.1 14B model. Seeds:
 * corpus/manifest/ (shipped manifests and the bad-input test files). */
#include "fuzz_util.h"

#include <stdlib.h>

#include "build_info.h"
#include "planner.h"

static plan_model model;
static int have_model;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!have_model) {
        plan_error err;
        if (plan_model_load(ADALOAD_SOURCE_DIR "/datasets/models/wan2.1-14b.json", &model, &err)) abort();
        have_model = 1;
    }
    char path[64];
    int fd = fuzz_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    for (int keep = 0; keep < 2; keep++) {
        plan_manifest *mf = NULL;
        plan_error err;
        if (plan_manifest_read(path, &model, keep, &mf, &err) == PLAN_OK) plan_manifest_free(mf);
    }
    close(fd);
    return 0;
}

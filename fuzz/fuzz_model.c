/* fuzz_model.c -- libFuzzer target: the model preset parser (plan_model_load) and the
 * measured-profile reader (plan_cost_from_profile) on arbitrary bytes: the first byte picks
 * which. Seeds: corpus/model/ (the shipped presets and profiles). */
#include "fuzz_util.h"

#include "planner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char path[64];
    int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
    if (fd < 0) return 0;
    plan_error err;
    if (data[0] & 1) {
        plan_cost c;
        (void)plan_cost_from_profile(path, &c, &err);
    } else {
        plan_model m;
        (void)plan_model_load(path, &m, &err);
    }
    close(fd);
    return 0;
}

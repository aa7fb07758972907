/* bench_clock.c -- the SM clock through NVML or the device's maximum (bench_clock.h). */
#include "bench_clock.h"

#include <dlfcn.h>
#include <string.h>

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_bus_fn)(const char *bus_id, void **device);

void ada_sm_clock_open(ada_sm_clock *c, const char *bus_id, double max_mhz)
{
    memset(c, 0, sizeof *c);
    c->max_mhz = max_mhz;
    if (!bus_id) return;
    c->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) return;
    nvml_init_fn init = (nvml_init_fn)dlsym(c->lib, "nvmlInit_v2");
    nvml_by_bus_fn by_bus = (nvml_by_bus_fn)dlsym(c->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    c->clock = (int (*)(void *, int, unsigned int *))dlsym(c->lib, "nvmlDeviceGetClockInfo");
    c->shutdown = (int (*)(void))dlsym(c->lib, "nvmlShutdown");
    int inited = 0;
    if (!init || !by_bus || !c->clock || !c->shutdown || !(inited = init() == 0) ||
        by_bus(bus_id, &c->dev) != 0) {
        if (inited) c->shutdown();
        dlclose(c->lib);
        c->lib = NULL;
        c->dev = NULL;
    }
}

double ada_sm_clock_mhz(const ada_sm_clock *c)
{
    unsigned int mhz = 0;
    if (c->dev && c->clock(c->dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0) return mhz;
    return c->max_mhz;
}

int ada_sm_clock_measured(const ada_sm_clock *c) { return c->dev != NULL; }

void ada_sm_clock_close(ada_sm_clock *c)
{
    if (c->lib) {
        c->shutdown();
        dlclose(c->lib);
    }
    memset(c, 0, sizeof *c);
}

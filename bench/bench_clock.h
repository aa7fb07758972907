/* bench_clock.h -- the SM clock beside each GPU benchmark: NVML, loaded with dlopen at run
 * time (CI machines have no driver, so it is never linked), else the device's maximum clock.
 *
 *   ada_sm_clock c;
 *   ada_sm_clock_open(&c, pci_bus_id, max_mhz);   // NVML found or not: c works either way
 *   double mhz = ada_sm_clock_mhz(&c);            // measured (NVML) or the maximum
 *   ada_sm_clock_measured(&c)                      // 1 when NVML answers
 *   ada_sm_clock_close(&c);
 */
#ifndef ADALOAD_BENCH_CLOCK_H
#define ADALOAD_BENCH_CLOCK_H

typedef struct {
    void *lib, *dev;
    int (*clock)(void *device, int type, unsigned int *mhz);
    int (*shutdown)(void);
    double max_mhz;
} ada_sm_clock;

/* bus_id: the CUDA device's PCI bus id (maps it to its NVML handle even when
 * CUDA_VISIBLE_DEVICES renumbers devices); NULL: NVML is not tried. */
void ada_sm_clock_open(ada_sm_clock *c, const char *bus_id, double max_mhz);
double ada_sm_clock_mhz(const ada_sm_clock *c);
int ada_sm_clock_measured(const ada_sm_clock *c);
void ada_sm_clock_close(ada_sm_clock *c);

#endif

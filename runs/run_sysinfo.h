/* run_sysinfo.h -- what this machine has, as `adaload env` shows it and every run's
 * meta.json embeds it: CUDA devices (name, SMs, L2, memory, clocks, driver and runtime
 * versions) or "no CUDA device", OpenBLAS config and core, library versions, the build.
 *
 *   json_t *info = ada_sysinfo();  ...  json_decref(info);
 */
#ifndef ADALOAD_RUN_SYSINFO_H
#define ADALOAD_RUN_SYSINFO_H

#include <jansson.h>

/* A new JSON object owned by the caller. */
json_t *ada_sysinfo(void);

#endif

/* dashboard_internal.h -- shared by the dashboard's files (not part of its manual). */
#ifndef ADALOAD_DASHBOARD_INTERNAL_H
#define ADALOAD_DASHBOARD_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "catalog.h"
#include "dashboard.h"

dash_status dash__fail(dash_status s, char *err, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Appends r's planner figures (cpu/planner/ benchmarks, plan summaries) to the array; adds
 * nothing for a bench run without planner benchmarks. */
dash_status dash__add_planner(const char *results, const cat_run *r, json_t *planner, char *err, size_t en);

/* The site's files, embedded at build time (embed.cmake). */
typedef struct {
    const char *name;
    const unsigned char *data;
    size_t size;
} dash_asset;
extern const dash_asset dash_assets[]; /* ends with {NULL, NULL, 0} */

#endif

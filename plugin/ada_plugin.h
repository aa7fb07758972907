/* ada_plugin.h -- the plug-in loader: researchers' kernel libraries (ABI and its manual:
 * kernels/plugin/adaload_variant.h) loaded into this process, and their variants called by
 * name, for verify and bench. A library: it never prints or exits; ada_plugin_status codes,
 * messages into the caller's buffer.
 *
 *   char err[512];
 *   if (ada_plugin_load("my.so", err, sizeof err) != ADA_PLUGIN_OK) -> err names file and why
 *   int i = ada_plugin_find("plugin:mine");              // -1: not a loaded variant
 *   int raw = ada_plugin_forward(i, &d, x, scale, shift, y, mean, rstd, stream);
 *   if (raw != LNMOD_OK) ada_plugin_status_text(raw, msg, sizeof msg);   // "LNMOD_ERR_CUDA",
 *                                                   // "unknown status 1234 (not an lnmod_status)"
 *   json_t *p = ada_plugin_json();                       // for meta.json and the record
 *   ada_plugin_unload_all();
 *
 * Loading reads the file once through one descriptor: its bytes are hashed (SHA-256,
 * srchash.h) and the same open file is what the dynamic loader maps (/proc/self/fd), so the
 * hash is of the code that runs. The library is opened RTLD_NOW | RTLD_LOCAL (an undefined
 * symbol is a load error, not a crash later), its one query symbol called with
 * ADALOAD_VARIANT_ABI_VERSION, and the table checked (adaload_variant.h lists what is
 * refused). A refused library is closed again and changes nothing. Loaded variants are
 * named "plugin:<name>" and kept in load order, at most ADA_PLUGIN_MAX_LIBS libraries and
 * ADALOAD_PLUGIN_MAX_VARIANTS variants in all. The set is process-wide (one run loads its
 * plug-ins once, before any thread starts); the query and call functions only read it.
 *
 * Calls check what lnmod_forward / lnmod_backward check on the host before they reach the
 * plug-in (descriptor, pointers, supports, the workspace's size and alignment) and return
 * the status as an int: an lnmod_status from those checks, or whatever the plug-in
 * returned, which may be a value no lnmod_status has (ada_plugin_status_known says so).
 */
#ifndef ADALOAD_ADA_PLUGIN_H
#define ADALOAD_ADA_PLUGIN_H

#include <stddef.h>

#include <jansson.h>

#include "adaload_variant.h"
#include "lnmod_desc.h"

#define ADA_PLUGIN_PREFIX "plugin:"
enum { ADA_PLUGIN_MAX_LIBS = 8 };

typedef enum {
    ADA_PLUGIN_OK = 0,
    ADA_PLUGIN_ERR_ARG,     /* no path, or an empty one */
    ADA_PLUGIN_ERR_OPEN,    /* the file cannot be opened or read, or is not a loadable library */
    ADA_PLUGIN_ERR_SYMBOL,  /* the library has no adaload_plugin_query */
    ADA_PLUGIN_ERR_ABI,     /* built for another ABI version (or header), or no table for ours */
    ADA_PLUGIN_ERR_VARIANT, /* a variant without a name, a bad or duplicate name, no forward, half a backward */
    ADA_PLUGIN_ERR_FULL,    /* more libraries or variants than the limits */
    ADA_PLUGIN_ERR_NOMEM,
} ada_plugin_status;

const char *ada_plugin_strerror(ada_plugin_status st);

/* Loads the library at path into the process's set (see above). err: "<path>: why". */
ada_plugin_status ada_plugin_load(const char *path, char *err, size_t errn);
/* Closes every loaded library (nothing may run their code afterwards). */
void ada_plugin_unload_all(void);

/* 1 when name starts with "plugin:" (loaded or not). */
int ada_plugin_is_name(const char *name);
/* Variants loaded, in load order; name of variant i ("plugin:<name>"), its description
 * ("" when none), whether it has a backward, the index of a name or -1. */
int ada_plugin_count(void);
const char *ada_plugin_name(int i);
const char *ada_plugin_description(int i);
int ada_plugin_has_backward(int i);
int ada_plugin_find(const char *name);
/* Libraries loaded, and the path and file SHA-256 (hex) of library k. */
int ada_plugin_lib_count(void);
const char *ada_plugin_lib_path(int k);
const char *ada_plugin_lib_sha256(int k);

/* [{"path", "file_sha256", "abi_version", "library", "variants": ["plugin:..."]}] in load
 * order (an empty array when none is loaded); NULL when out of memory. The one writer of
 * these names: meta.json and verification records carry this array as "plugins". */
json_t *ada_plugin_json(void);

/* 1 when raw is an lnmod_status of this build (0 <= raw < LNMOD_STATUS_COUNT). */
int ada_plugin_status_known(int raw);
/* "LNMOD_ERR_CUDA (a CUDA runtime call ...)" or "unknown status N (not an lnmod_status of
 * this build)" into buf. */
void ada_plugin_status_text(int raw, char *buf, size_t n);

/* 1 when variant i handles d (d valid and its supports, if any, says so). */
int ada_plugin_supports(int i, const lnmod_desc *d);
/* The calls (see above). i out of range: LNMOD_ERR_UNKNOWN_VARIANT; a variant without a
 * backward: LNMOD_ERR_UNSUPPORTED. */
int ada_plugin_forward(int i, const lnmod_desc *d, const void *x, const void *scale, const void *shift, void *y,
                       float *mean, float *rstd, cudaStream_t stream);
int ada_plugin_backward_workspace(int i, const lnmod_desc *d, size_t *bytes);
int ada_plugin_backward(int i, const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                        const float *mean, const float *rstd, void *dx, void *dscale, void *dshift, void *workspace,
                        size_t workspace_bytes, cudaStream_t stream);

#endif

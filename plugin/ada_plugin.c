/* ada_plugin.c -- loading researchers' kernel libraries and calling their variants
 * (ada_plugin.h; the ABI: kernels/plugin/adaload_variant.h). */
#include "ada_plugin.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srchash.h"

typedef struct {
    char *path;
    char sha[SH_HEX];
    void *handle;
    const adaload_plugin *table;
} plugin_lib;

typedef struct {
    char name[sizeof ADA_PLUGIN_PREFIX + ADALOAD_PLUGIN_NAME_MAX];
    const adaload_variant *v;
    int lib;
} plugin_variant;

static plugin_lib libs[ADA_PLUGIN_MAX_LIBS];
static int nlibs;
static plugin_variant vars[ADALOAD_PLUGIN_MAX_VARIANTS];
static int nvars;

const char *ada_plugin_strerror(ada_plugin_status st)
{
    switch (st) {
    case ADA_PLUGIN_OK: return "ok";
    case ADA_PLUGIN_ERR_ARG: return "no library path";
    case ADA_PLUGIN_ERR_OPEN: return "cannot open or load the library";
    case ADA_PLUGIN_ERR_SYMBOL: return "the library exports no " ADALOAD_PLUGIN_QUERY_SYMBOL;
    case ADA_PLUGIN_ERR_ABI: return "the library was built for another plug-in ABI";
    case ADA_PLUGIN_ERR_VARIANT: return "a variant of the library is malformed";
    case ADA_PLUGIN_ERR_FULL: return "too many plug-in libraries or variants";
    case ADA_PLUGIN_ERR_NOMEM: return "out of memory";
    }
    return "unknown plug-in status";
}

/* err := "<path>: <why>"; returns st. */
__attribute__((format(printf, 5, 6))) static ada_plugin_status fail(ada_plugin_status st, char *err, size_t n,
                                                                     const char *path, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(err, n, "%s: %s", path, why);
    return st;
}

/* The whole file of fd into a new buffer (*len bytes); NULL with errno on failure. */
static unsigned char *read_all(int fd, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return NULL;
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    unsigned char *b = malloc(cap);
    while (b) {
        ssize_t r = pread(fd, b + n, cap - n, (off_t)n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (r == 0) {
            *len = n;
            return b;
        }
        n += (size_t)r;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap *= 2);
            if (!nb) break;
            b = nb;
        }
    }
    free(b);
    return NULL;
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > ADALOAD_PLUGIN_NAME_MAX) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/* The table's checks (adaload_variant.h): ADA_PLUGIN_OK or the refusal with err. */
static ada_plugin_status check_table(const adaload_plugin *t, const char *path, char *err, size_t n)
{
    if (!t)
        return fail(ADA_PLUGIN_ERR_ABI, err, n, path, "%s returned no table for plug-in ABI version %u",
                    ADALOAD_PLUGIN_QUERY_SYMBOL, ADALOAD_VARIANT_ABI_VERSION);
    if (t->abi_version != ADALOAD_VARIANT_ABI_VERSION)
        return fail(ADA_PLUGIN_ERR_ABI, err, n, path,
                    "built for plug-in ABI version %u, this adaload speaks version %u (rebuild it against "
                    "kernels/plugin/adaload_variant.h)",
                    (unsigned)t->abi_version, ADALOAD_VARIANT_ABI_VERSION);
    if (t->variant_size != sizeof(adaload_variant) || t->desc_size != sizeof(lnmod_desc))
        return fail(ADA_PLUGIN_ERR_ABI, err, n, path,
                    "its adaload_variant is %u bytes and its lnmod_desc %u (here %zu and %zu): built against other "
                    "headers of the same ABI version",
                    (unsigned)t->variant_size, (unsigned)t->desc_size, sizeof(adaload_variant), sizeof(lnmod_desc));
    if (t->nvariants < 1 || t->nvariants > ADALOAD_PLUGIN_MAX_VARIANTS || !t->variants)
        return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path, "%d variants (1 to %d allowed)", (int)t->nvariants,
                    ADALOAD_PLUGIN_MAX_VARIANTS);
    if (nvars + t->nvariants > ADALOAD_PLUGIN_MAX_VARIANTS)
        return fail(ADA_PLUGIN_ERR_FULL, err, n, path, "more than %d plug-in variants in all",
                    ADALOAD_PLUGIN_MAX_VARIANTS);
    for (int32_t i = 0; i < t->nvariants; i++) {
        const adaload_variant *v = &t->variants[i];
        if (!v->name || !v->name[0]) return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path, "variant %d has no name", (int)i);
        if (!name_ok(v->name))
            return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path,
                        "variant \"%.60s\": a name is 1 to %d characters of A-Z a-z 0-9 _ . -", v->name,
                        ADALOAD_PLUGIN_NAME_MAX);
        if (!v->forward) return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path, "variant %s has no forward", v->name);
        if (!v->backward != !v->backward_workspace)
            return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path,
                        "variant %s has only half a backward (backward and backward_workspace go together)",
                        v->name);
        for (int32_t j = 0; j < i; j++)
            if (!strcmp(t->variants[j].name, v->name))
                return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path, "two variants are called %s", v->name);
        char q[sizeof vars[0].name];
        snprintf(q, sizeof q, "%s%s", ADA_PLUGIN_PREFIX, v->name);
        int k = ada_plugin_find(q);
        if (k >= 0)
            return fail(ADA_PLUGIN_ERR_VARIANT, err, n, path, "variant %s is already loaded from %s", v->name,
                        libs[vars[k].lib].path);
    }
    return ADA_PLUGIN_OK;
}

/* dlopen of the open file fd (the bytes that were hashed); NULL with err. */
static void *open_fd(int fd, const char *path, char *err, size_t n)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    dlerror();
    void *h = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        /* The loader's message names /proc/self/fd/N: say the user's path instead. */
        const char *tail = e ? strstr(e, proc) : NULL;
        if (tail) e = tail + strlen(proc);
        while (e && (*e == ':' || *e == ' ')) e++;
        fail(ADA_PLUGIN_ERR_OPEN, err, n, path, "not a loadable library: %.300s", e ? e : "dlopen failed");
    }
    return h;
}

ada_plugin_status ada_plugin_load(const char *path, char *err, size_t errn)
{
    if (!path || !*path) return fail(ADA_PLUGIN_ERR_ARG, err, errn, "--plugin", "no library path given");
    if (nlibs >= ADA_PLUGIN_MAX_LIBS)
        return fail(ADA_PLUGIN_ERR_FULL, err, errn, path, "more than %d plug-in libraries", ADA_PLUGIN_MAX_LIBS);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(ADA_PLUGIN_ERR_OPEN, err, errn, path, "cannot open it: %s", strerror(errno));
    size_t len = 0;
    unsigned char *bytes = read_all(fd, &len);
    if (!bytes) {
        int e = errno;
        close(fd);
        return fail(e == ENOMEM ? ADA_PLUGIN_ERR_NOMEM : ADA_PLUGIN_ERR_OPEN, err, errn, path, "cannot read it: %s",
                    e == EINVAL ? "not a regular file" : strerror(e));
    }
    plugin_lib L = {0};
    sh_sha256_hex(bytes, len, L.sha);
    free(bytes);
    L.handle = open_fd(fd, path, err, errn);
    close(fd);
    if (!L.handle) return ADA_PLUGIN_ERR_OPEN;
    void *sym = dlsym(L.handle, ADALOAD_PLUGIN_QUERY_SYMBOL);
    ada_plugin_status st = ADA_PLUGIN_OK;
    if (!sym) {
        st = fail(ADA_PLUGIN_ERR_SYMBOL, err, errn, path, "exports no %s (kernels/plugin/adaload_variant.h)",
                  ADALOAD_PLUGIN_QUERY_SYMBOL);
    } else {
        adaload_plugin_query_fn q;
        memcpy(&q, &sym, sizeof q); /* object pointer to function pointer, as POSIX allows */
        L.table = q(ADALOAD_VARIANT_ABI_VERSION);
        st = check_table(L.table, path, err, errn);
    }
    if (st == ADA_PLUGIN_OK && !(L.path = strdup(path))) st = ADA_PLUGIN_ERR_NOMEM;
    if (st != ADA_PLUGIN_OK) {
        if (st == ADA_PLUGIN_ERR_NOMEM) snprintf(err, errn, "%s: out of memory", path);
        dlclose(L.handle);
        return st;
    }
    libs[nlibs] = L;
    for (int32_t i = 0; i < L.table->nvariants; i++) {
        plugin_variant *pv = &vars[nvars++];
        snprintf(pv->name, sizeof pv->name, "%s%s", ADA_PLUGIN_PREFIX, L.table->variants[i].name);
        pv->v = &L.table->variants[i];
        pv->lib = nlibs;
    }
    nlibs++;
    return ADA_PLUGIN_OK;
}

void ada_plugin_unload_all(void)
{
    for (int k = 0; k < nlibs; k++) {
        dlclose(libs[k].handle);
        free(libs[k].path);
    }
    memset(libs, 0, sizeof libs);
    memset(vars, 0, sizeof vars);
    nlibs = nvars = 0;
}

int ada_plugin_is_name(const char *name)
{
    return name && !strncmp(name, ADA_PLUGIN_PREFIX, sizeof ADA_PLUGIN_PREFIX - 1);
}

int ada_plugin_count(void) { return nvars; }
static int valid(int i) { return i >= 0 && i < nvars; }
const char *ada_plugin_name(int i) { return valid(i) ? vars[i].name : NULL; }
const char *ada_plugin_description(int i)
{
    return valid(i) && vars[i].v->description ? vars[i].v->description : "";
}
int ada_plugin_has_backward(int i) { return valid(i) && vars[i].v->backward != NULL; }

int ada_plugin_find(const char *name)
{
    for (int i = 0; name && i < nvars; i++)
        if (!strcmp(vars[i].name, name)) return i;
    return -1;
}

int ada_plugin_lib_count(void) { return nlibs; }
const char *ada_plugin_lib_path(int k) { return k >= 0 && k < nlibs ? libs[k].path : NULL; }
const char *ada_plugin_lib_sha256(int k) { return k >= 0 && k < nlibs ? libs[k].sha : NULL; }

json_t *ada_plugin_json(void)
{
    json_t *a = json_array();
    for (int k = 0; a && k < nlibs; k++) {
        json_t *vs = json_array();
        for (int i = 0; vs && i < nvars; i++)
            if (vars[i].lib == k && json_array_append_new(vs, json_string(vars[i].name))) {
                json_decref(vs);
                vs = NULL;
            }
        json_t *o = vs ? json_pack("{s:s, s:s, s:i, s:s, s:o}", "path", libs[k].path, "file_sha256", libs[k].sha,
                                   "abi_version", (int)libs[k].table->abi_version, "library",
                                   libs[k].table->library ? libs[k].table->library : "", "variants", vs)
                       : NULL;
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int ada_plugin_status_known(int raw) { return raw >= 0 && raw < (int)LNMOD_STATUS_COUNT; }

void ada_plugin_status_text(int raw, char *buf, size_t n)
{
    if (ada_plugin_status_known(raw))
        snprintf(buf, n, "%s (%s)", lnmod_status_name((lnmod_status)raw), lnmod_strerror((lnmod_status)raw));
    else
        snprintf(buf, n, "unknown status %d (not an lnmod_status of this build: a bug in the plug-in)", raw);
}

int ada_plugin_supports(int i, const lnmod_desc *d)
{
    if (!valid(i) || lnmod_desc_validate(d) != LNMOD_OK) return 0;
    return !vars[i].v->supports || vars[i].v->supports(d);
}

/* What lnmod_forward/lnmod_backward check before the launch: LNMOD_OK or the status. */
static int precheck(int i, const lnmod_desc *d, int bwd)
{
    if (!valid(i)) return LNMOD_ERR_UNKNOWN_VARIANT;
    if (!d) return LNMOD_ERR_NULL_POINTER;
    lnmod_status st = lnmod_desc_validate(d);
    if (st != LNMOD_OK) return st;
    if (bwd && !vars[i].v->backward) return LNMOD_ERR_UNSUPPORTED;
    return ada_plugin_supports(i, d) ? LNMOD_OK : LNMOD_ERR_UNSUPPORTED;
}

/* The name a plug-in's entry points are given: its own, without "plugin:". */
static const char *own_name(int i) { return vars[i].name + sizeof ADA_PLUGIN_PREFIX - 1; }

int ada_plugin_forward(int i, const lnmod_desc *d, const void *x, const void *scale, const void *shift, void *y,
                       float *mean, float *rstd, cudaStream_t stream)
{
    int st = precheck(i, d, 0);
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !shift || !y) return LNMOD_ERR_NULL_POINTER;
    return (int)vars[i].v->forward(own_name(i), d, x, scale, shift, y, mean, rstd, stream);
}

int ada_plugin_backward_workspace(int i, const lnmod_desc *d, size_t *bytes)
{
    if (!bytes) return LNMOD_ERR_NULL_POINTER;
    int st = precheck(i, d, 1);
    if (st != LNMOD_OK) return st;
    *bytes = 0;
    return (int)vars[i].v->backward_workspace(own_name(i), d, bytes);
}

/* The status of a workspace smaller than asked or misaligned: the backward's own where
 * kernels/lnmod.h has it. */
#if ADALOAD_KERNEL_BACKWARD
#define WORKSPACE_STATUS LNMOD_ERR_WORKSPACE
#else
#define WORKSPACE_STATUS LNMOD_ERR_UNSUPPORTED
#endif

int ada_plugin_backward(int i, const lnmod_desc *d, const void *x, const void *scale, const void *dy,
                        const float *mean, const float *rstd, void *dx, void *dscale, void *dshift, void *workspace,
                        size_t workspace_bytes, cudaStream_t stream)
{
    size_t need = 0;
    int st = ada_plugin_backward_workspace(i, d, &need);
    if (st != LNMOD_OK) return st;
    if (!x || !scale || !dy || !mean || !rstd || !dx || !dscale || !dshift) return LNMOD_ERR_NULL_POINTER;
    if (need > 0) {
        if (!workspace) return LNMOD_ERR_NULL_POINTER;
        if (workspace_bytes < need || ((uintptr_t)workspace & 15u) != 0) return WORKSPACE_STATUS;
    }
    return (int)vars[i].v->backward(own_name(i), d, x, scale, dy, mean, rstd, dx, dscale, dshift, workspace,
                                    workspace_bytes, stream);
}

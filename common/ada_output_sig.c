/* ada_output_sig.c -- the signal handler of ada_output.h and its list (ada_output_sig.h). */
#include "ada_output_sig.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ada_output.h"

enum { SLOTS = 64, MAX_DIRS = 4, PATH_CAP = 4096 };

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the signal handler reads the list through lock-free pointers");

/* SLOTS entries; more entries link a new block (blocks are never freed: the handler may be
 * walking them). */
typedef struct temp_block {
    ada_temp_slot path[SLOTS]; /* a malloc'd copy of the temporary's name, or NULL */
    struct temp_block *_Atomic next;
} temp_block;

static temp_block g_temps;
static char g_dirs[MAX_DIRS][PATH_CAP], g_dir_meta[MAX_DIRS][PATH_CAP];
static volatile sig_atomic_t g_dir_used[MAX_DIRS];
static volatile sig_atomic_t g_installed;

static void on_signal(int sig)
{
    for (temp_block *b = &g_temps; b; b = atomic_load(&b->next))
        for (int i = 0; i < SLOTS; i++) {
            char *p = atomic_load(&b->path[i]);
            if (p) unlink(p);
        }
    for (int i = 0; i < MAX_DIRS; i++)
        if (g_dir_used[i]) {
            unlink(g_dir_meta[i]);
            rmdir(g_dirs[i]);
        }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_handlers(void)
{
    if (g_installed) return;
    g_installed = 1;
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue; /* keep SIG_IGN */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* The free entries (main-line state only; the handler never looks here): room for every
 * entry of every block is made when a block is added, so an untrack never needs memory. */
static ada_temp_slot **g_free;
static size_t g_nfree, g_free_cap;
static temp_block *g_last; /* NULL: not even the first block is in use yet */

/* Adds a block (the static first one the first time) and makes its entries free. */
static int add_block(void)
{
    temp_block *b = g_last ? calloc(1, sizeof *b) : &g_temps;
    ada_temp_slot **f = b ? realloc(g_free, (g_free_cap + SLOTS) * sizeof *g_free) : NULL;
    if (!f) {
        if (b != &g_temps) free(b);
        return -1;
    }
    g_free = f;
    g_free_cap += SLOTS;
    for (int i = SLOTS - 1; i >= 0; i--) g_free[g_nfree++] = &b->path[i];
    if (g_last) atomic_store(&g_last->next, b);
    g_last = b;
    return 0;
}

ada_temp_slot *ada_temp_track(const char *path)
{
    install_handlers();
    char *copy = strdup(path);
    if (!copy || (!g_nfree && add_block() != 0)) {
        free(copy);
        return NULL;
    }
    ada_temp_slot *slot = g_free[--g_nfree];
    atomic_store(slot, copy); /* the copy is complete before the handler can see it */
    return slot;
}

void ada_temp_untrack(ada_temp_slot *slot)
{
    char *p = slot ? atomic_exchange(slot, NULL) : NULL;
    if (!p) return; /* not in use: already free */
    free(p);
    g_free[g_nfree++] = slot;
}

void ada_output_own_dir(const char *dir)
{
    install_handlers();
    if (strlen(dir) + 16 >= PATH_CAP) return;
    for (int i = 0; i < MAX_DIRS; i++)
        if (!g_dir_used[i]) {
            snprintf(g_dirs[i], PATH_CAP, "%s", dir);
            snprintf(g_dir_meta[i], PATH_CAP, "%s/meta.json", dir);
            g_dir_used[i] = 1;
            return;
        }
}

void ada_output_disown_dir(const char *dir)
{
    for (int i = 0; i < MAX_DIRS; i++)
        if (g_dir_used[i] && !strcmp(g_dirs[i], dir)) g_dir_used[i] = 0;
}

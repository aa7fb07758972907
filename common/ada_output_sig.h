/* ada_output_sig.h -- internal to common/ada_output*.c: the signal handler of ada_output.h
 * and the one process-wide state it reaches (the temporaries that exist now, the run folders
 * not yet finished). The list of temporaries grows in blocks as needed, so a transaction
 * may hold any number of outputs; the handler reads it through lock-free atomics only (what
 * C11 allows a signal handler). One thread at a time changes the list, as with every
 * transaction. */
#ifndef ADALOAD_ADA_OUTPUT_SIG_H
#define ADALOAD_ADA_OUTPUT_SIG_H

#include <stdatomic.h>

/* A place in the handler's list; NULL stands for "not tracked". */
typedef char *_Atomic ada_temp_slot;

/* Tracks a copy of path (a signal removes it); NULL when out of memory. Installs the
 * handlers on the first call. */
ada_temp_slot *ada_temp_track(const char *path);
/* Forgets the entry (the file itself is not touched); NULL is accepted. */
void ada_temp_untrack(ada_temp_slot *slot);

#endif

/* run_gate.h -- the gate's reading of verification records: is there a passing full-grid
 * GPU record (every case passed, every sanitizer clean) for these kernel sources?
 *
 *   ada_gate_result r;
 *   ada_gate_scan("results", ADALOAD_KERNEL_HASH, note, arg, &r);
 *   // r.malformed > 0: a broken record is in the tree (a bug: the gate fails);
 *   // r.passed > 0: r.pass_path is the first passing record; else r.nmatch records had the
 *   // hash and none passed (note got a line for each, saying why), r.nrec were read.
 *
 * Records are DIR/<testbed>/<run>/verify.json, visited in sorted order. A record that is not
 * valid JSON, or lacks schema, kernel_source_hash, cases (each with a pass boolean),
 * sanitizers, all_passed, grid or backend, is malformed. Never prints: lines go to note.
 */
#ifndef ADALOAD_RUN_GATE_H
#define ADALOAD_RUN_GATE_H

#include <stddef.h>

#include <jansson.h>

#include "ada_util.h"

typedef struct {
    int nrec;      /* records read */
    int nmatch;    /* well-formed records of this hash */
    int passed;    /* ... that pass */
    int malformed; /* records that are not well-formed (any hash) */
    char pass_path[8704];
} ada_gate_result;

typedef enum { ADA_GATE_OTHER_HASH = -1, ADA_GATE_JUDGED = 0, ADA_GATE_MALFORMED = 1 } ada_gate_verdict;

/* Judges one parsed record: ADA_GATE_MALFORMED (why in msg), ADA_GATE_OTHER_HASH, or
 * ADA_GATE_JUDGED with *pass set (and why not in msg). */
ada_gate_verdict ada_gate_judge(const json_t *rec, const char *hash, int *pass, char *msg, size_t n);

/* Scans results (a missing folder holds no records). */
void ada_gate_scan(const char *results, const char *hash, ada_note_fn note, void *arg, ada_gate_result *r);

#endif

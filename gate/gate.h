/* gate.h -- GPU verification records and the rule of CI's gate. A library: it never prints
 * or exits; calls return a gate_status, messages go into caller buffers.
 *
 *   gate_hashes h = {.v1 = ADALOAD_KERNEL_HASH, .v2 = ADALOAD_KERNEL_HASH_V2};
 *   gate_scan_result r;
 *   gate_scan("results", &h, &r);           // every results/<testbed>/verify/<run>/
 *   r.passed ? ok : print r.notes            // one line per record that did not count
 *   gate_scan_free(&r);
 *
 *   json_t *compact = gate_summary(full);   // the committed record, from verify's full one
 *
 * Two record formats, both read by the gate:
 * - the full record, verify.json (schema "adaload.verify/1"): every case with its errors;
 *   3.7 MB for the full grid;
 * - the compact record, verify-summary.json (schema "adaload.verify-summary/1"): the same
 *   top-level fields without "cases", plus "groups" -- one per op x variant x dtype combination
 *   (x-mod-y; the fused op's: res-branch-mod-out) x layout x direction (x site, the fused op's)
 *   with "op", cases, passed, failed, not_run, worst_ratio (the largest error over tolerance of
 *   any output: <= 1 passes), the shape where it occurred and the shapes of all its cases
 *   ([D, rows]; the fused op's [D, rows, inplace, dh]) -- and "failures", every case that did
 *   not pass, in full. A group without "op" (older records) is lnmod's. This is what gets
 *   committed; verify.json stays where it was made.
 * When a run folder holds both, the gate reads the compact one.
 *
 * Which hash a record names: kernel_hash_v2 (new records; kernel_hash_v1 beside it) is the
 * scheme-2 hash (srchash.h: comments and layout do not count). Records made before the names
 * were unified hold kernel_source_hash: the scheme-2 hash with "hash_scheme": 2, else (no
 * "hash_scheme", or 1) the scheme-1 hash of kernels/source_hash.cmake. A record counts for
 * this tree when its hash equals the tree's hash of its scheme.
 *
 * This library is the one reader of verification records (gate_read_record) and the one
 * owner of the pass rule: the catalog and the dashboard ask gate_record_passes / gate_judge.
 *
 * A record passes when it has backend "cuda", grid "full", every case passed, all_passed
 * true, and its content is the grid's:
 * - its cases are exactly the cases verify runs for that grid and the kernel registry's
 *   variants -- the same multiset of identities "variant x-mod-y layout direction D rows",
 *   and the fused residual op's "lnmod_res variant site dtypes layout direction D rows inplace
 *   dh" for the variants with it (verify.h: verify_grid_keys, verify_case_key; verify_res.h:
 *   verify_res_case_key; one owner, so a new kind of case in verify's grid is demanded here
 *   at once). The compact record lists each group's shapes ("shapes": [[D, rows], ...]) for
 *   this; a compact record without them does not count;
 * - every sanitizer verdict (memcheck, racecheck, initcheck, synccheck) is "clean", and
 *   each sanitizer run says it ran over verify's sanitizer grid (verify_sanitizer_grid:
 *   "quick") for every registry variant, and over the fused op's ("res_grid":
 *   verify_res_sanitizer_grid, "sanitizer"), the two grids' case count
 *   (verify_sanitizer_registry_ncases), exit code 0.
 * Shards: a grid longer than one device call is recorded in parts (verify --shard K/N: the
 * record holds "shard": {index K, count N}, 2 <= N <= 64, and the cases of the input sets
 * verify_set_in_shard gives it). Such a record passes as a part (GATE_PART) by the rule
 * above with its shard's cases (verify_grid_keys_shard) in place of the grid's, and may
 * leave the sanitizers out (every verdict "not run ..."; whatever it ran must pass). A
 * sanitizer record is one of another grid (quick) whose cases all passed and equal that
 * grid's, with the sanitizer runs a full-grid record would hold (GATE_SANITIZERS). The scan
 * passes when one record passes, or when passing parts 1..N of one N and a sanitizer
 * record (or a part that ran the sanitizers) are all of these sources and of one testbed
 * (results/<testbed>/: the full grid on one kind of machine).
 * A record that checked plug-in variants (a non-empty "plugins" array, or a variant named
 * "plugin:<name>": a researcher's library, plugin/ada_plugin.h) never passes, whatever else
 * it holds: the gate is about adaload's own kernel sources.
 * Older records: a record without "ops" (made before the fused residual op was verified) of
 * other kernel sources is judged on lnmod's cases and sanitizer runs alone, as when it was
 * made (gate_record_passes: the catalog's "passed"); a record of these sources, or one that
 * lists "ops", must hold both ops' cases. A case without "op" is lnmod's; a case without
 * "direction" is a forward case (records made before the backward existed); a record of hash scheme 1 (made before sanitizer runs named their
 * grid, when they always ran the quick grid) is judged on its four verdicts alone; its cases
 * are checked like any other's. A record that is not valid JSON or lacks the fields read
 * above is malformed: the gate fails on it whatever else passes (a broken record in the
 * tree is a bug).
 * Every message (msg, notes) has its control bytes written as \xNN: a string quoted from
 * a record never starts a line of its own.
 */
#ifndef ADALOAD_GATE_H
#define ADALOAD_GATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef enum { GATE_OK = 0, GATE_MALFORMED = 1, GATE_NOMEM = 2 } gate_status;

typedef struct {
    const char *v1; /* this tree's scheme-1 hash (NULL: no scheme-1 record can count) */
    const char *v2; /* this tree's scheme-2 hash (NULL: no scheme-2 record can count) */
} gate_hashes;

typedef enum {
    GATE_OTHER_SOURCES = 0, /* the record is of other kernel sources */
    GATE_PASS = 1,          /* of these sources, and it passes */
    GATE_NOT_COUNTED = 2,   /* of these sources, but it does not pass (why in msg) */
    GATE_PART = 3,          /* of these sources, a passing shard: passes once joined (below) */
    GATE_SANITIZERS = 4,    /* of these sources, a passing sanitizer record for a join */
} gate_verdict;

/* What gate_judge_ex says of a record: the verdict, its shard (0/0: the whole grid) and
 * whether it ran the sanitizers and they passed the rule above. */
typedef struct {
    gate_verdict verdict;
    int shard, nshards;
    int sanitizers_clean;
} gate_judgement;

/* Judges one parsed record (either format). GATE_MALFORMED with why in msg. */
gate_status gate_judge(const json_t *rec, const gate_hashes *h, gate_verdict *v, char *msg, size_t n);
gate_status gate_judge_ex(const json_t *rec, const gate_hashes *h, gate_judgement *j, char *msg, size_t n);

/* The pass rule alone, whatever kernel sources the record names (what the catalog lists as
 * "passed"): *passes = 1 when it passes (a shard: as a part). GATE_MALFORMED as for gate_judge. */
gate_status gate_record_passes(const json_t *rec, int *passes, char *msg, size_t n);

/* The record's shard (0, 0: the whole grid) into *shard, *nshards; -1 when "shard" is not
 * a valid {index, count} (then 0, 0). */
int gate_record_shard(const json_t *rec, int *shard, int *nshards);

/* 1 when rec checked plug-in variants (see above): never a gate record. */
int gate_record_has_plugins(const json_t *rec);

/* The record of run folder dir: verify-summary.json when present, else verify.json (its
 * path into path). NULL with why in msg when neither exists or it is not JSON. */
json_t *gate_read_record(const char *dir, char *path, size_t pn, char *msg, size_t n);

/* The compact record of a full one (a new object), or NULL when full is not a full record
 * or memory ran out. */
json_t *gate_summary(const json_t *full);

typedef struct {
    int64_t records, matching, passed, malformed;
    int joined;           /* the pass is the join of this many shards (0: one record) */
    char pass_path[4200]; /* the first passing record (for a join: its parts, said in words) */
    char *notes;          /* "path: why" lines of records that did not count or are malformed */
} gate_scan_result;

/* Judges results/<testbed>/verify/<run>/ (verify-summary.json, else verify.json) for every
 * testbed. GATE_NOMEM is the only failure; malformed records are counted in r. */
gate_status gate_scan(const char *results, const gate_hashes *h, gate_scan_result *r);
void gate_scan_free(gate_scan_result *r);

#endif

/* verify_record.c -- the verify.json record (verify.h): what was checked, how, and the
 * result of every case; the gate (gate/gate.h) reads it back, or the compact record made
 * from it. The record names the kernel sources by hash scheme 2 (kernel_hash_v2,
 * srchash/srchash.h: comments and layout do not count), and keeps the scheme-1 hash (the
 * bytes, kernel_hash_v1) beside it. */
#include "build_info.h"
#include "kernel_hash_v2.h"
#include "verify.h"
#include "verify_check.h"

json_t *verify_record_new(const verify_config *c, const verify_totals *t, json_t *gpu,
                          json_t *cases, json_t *verdicts, json_t *details, const char *date,
                          const char *cmdline, const json_t *meta)
{
    json_t *rec = json_object();
    if (!rec) {
        json_decref(gpu), json_decref(cases), json_decref(verdicts), json_decref(details);
        return NULL;
    }
    json_object_set_new(rec, "schema", json_string("adaload.verify/1"));
    json_object_set_new(rec, "kernel_hash_v2", json_string(ADALOAD_KERNEL_HASH_V2));
    json_object_set_new(rec, "kernel_hash_v1", json_string(ADALOAD_KERNEL_HASH));
    json_object_set_new(rec, "backend", json_string(c->cpu_model ? "cpu-model" : "cuda"));
    json_object_set_new(rec, "gpu", gpu);
    json_object_set_new(rec, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(rec, "grid", json_string(c->grid));
    if (c->nshards > 1)
        json_object_set_new(rec, "shard", json_pack("{s:i, s:i}", "index", c->shard, "count", c->nshards));
    json_object_set_new(rec, "date", json_string(date));
    json_t *sha = meta ? json_object_get(meta, "git_sha") : NULL;
    json_object_set_new(rec, "git_sha", sha ? json_incref(sha) : json_string("unknown"));
    json_t *dirty = meta ? json_object_get(meta, "git_dirty") : NULL;
    json_object_set_new(rec, "git_dirty", dirty ? json_incref(dirty) : json_null());
    json_object_set_new(rec, "command_line", json_string(cmdline));
    json_object_set_new(rec, "threads", json_integer(c->threads));
    json_object_set_new(rec, "reuse_buffers", json_boolean(c->reuse_buffers));
    json_t *vs = json_array();
    for (int v = 0; v < c->nvariants; v++) json_array_append_new(vs, json_string(c->variants[v]));
    json_object_set_new(rec, "variants", vs);
    /* What the case set is made of (verify_grid_cases): directions and the variants with a
     * backward. */
    const int dirs = c->directions ? c->directions : VERIFY_DIR_BOTH;
    json_t *ds = json_array(), *bv = json_array();
    for (int dir = VERIFY_DIR_FWD; dir <= VERIFY_DIR_BWD; dir <<= 1)
        if (dirs & dir) json_array_append_new(ds, json_string(verify_direction_name(dir)));
    for (int v = 0; v < c->nvariants; v++)
        if (verify_has_backward(c->cpu_model, c->variants[v])) json_array_append_new(bv, json_string(c->variants[v]));
    json_object_set_new(rec, "directions", ds);
    /* The ops whose cases it holds (verify.h): the gate judges a record without "ops" (made
     * before the fused op was verified) on lnmod's cases alone. */
    json_t *ops = json_array(), *rv = json_array();
    json_array_append_new(ops, json_string("lnmod"));
    if (c->nres_variants > 0) json_array_append_new(ops, json_string("lnmod_res"));
    for (int v = 0; v < c->nres_variants; v++) json_array_append_new(rv, json_string(c->res_variants[v]));
    json_object_set_new(rec, "ops", ops);
    json_object_set_new(rec, "res_variants", rv);
    if (c->nres_variants > 0) json_object_set_new(rec, "res_grid", json_string(c->res_grid ? c->res_grid : c->grid));
    json_object_set_new(rec, "backward_variants", bv);
    json_object_set_new(rec, "tolerances", verify_tol_json());
    json_object_set_new(rec, "elapsed_s", json_real(t->elapsed));
    json_object_set_new(rec, "phase_seconds",
                        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "inputs", t->t_inputs, "device", t->t_device,
                                  "forward_check", t->t_fwd_check, "backward_check", t->t_bwd_check,
                                  "allocation", t->t_alloc, "lnmod_res", t->t_res));
    json_object_set_new(rec, "cpu_seconds",
                        json_pack("{s:f, s:f, s:f, s:f}", "inputs", t->c_inputs, "forward_check", t->c_fwd_check,
                                  "backward_check", t->c_bwd_check, "lnmod_res", t->c_res));
    json_object_set_new(rec, "cases", cases);
    json_object_set_new(rec, "sanitizers", verdicts);
    json_object_set_new(rec, "sanitizer_runs", details);
    json_object_set_new(rec, "summary", json_pack("{s:I, s:I, s:I, s:I}", "cases", (json_int_t)t->ncases_done,
                                                  "passed", (json_int_t)t->passed, "failed", (json_int_t)t->failed,
                                                  "not_run", (json_int_t)t->not_run));
    json_object_set_new(rec, "all_passed", json_boolean(t->failed == 0 && t->not_run == 0));
    return rec;
}

/* bench_peers.c -- running peers/torch_peers.py on our shapes (bench_peers.h). */
#include "bench_peers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ada_output.h"
#include "ada_spawn.h"

json_t *ada_peers_shapes_json(const ada_shape *shapes, int64_t nshapes, const ada_peer_ceiling *ceil)
{
    json_t *js = ada_shapes_json(shapes, nshapes);
    for (int64_t i = 0; js && ceil && i < nshapes; i++) {
        json_t *o = json_array_get(js, (size_t)i);
        if ((ceil[i].fwd > 0 && json_object_set_new(o, "copy_bytes_per_second", json_real(ceil[i].fwd))) ||
            (ceil[i].bwd > 0 && json_object_set_new(o, "bwd_copy_bytes_per_second", json_real(ceil[i].bwd)))) {
            json_decref(js);
            return NULL;
        }
    }
    return js;
}

ada_bench_status ada_bench_run_peers(const char *script, const char *out_json, const ada_peer_ceiling *ceil,
                                     const ada_shape *shapes,
                                     int64_t nshapes, int reps, double min_time, const char *filter,
                                     const char *const *user_peers, int nuser,
                                     ada_note_fn note, void *note_arg, char *msg, size_t msg_n)
{
    enum { MAX_USER = 16 };
    if (nuser < 0 || nuser > MAX_USER) {
        snprintf(msg, msg_n, "peers: more than %d --peer", MAX_USER);
        return ADA_BENCH_ERR_ARG;
    }
    if (!ada_python_has_module("torch")) {
        ada_note(note, note_arg, "peers skipped: python3 with torch not found");
        return ADA_BENCH_SKIPPED;
    }
    char shapes_path[] = "/tmp/adaload-shapes-XXXXXX";
    int fd = mkstemp(shapes_path);
    if (fd < 0) {
        snprintf(msg, msg_n, "peers: cannot create a temporary file: %s", strerror(errno));
        return ADA_BENCH_ERR_IO;
    }
    close(fd);
    json_t *js = ada_peers_shapes_json(shapes, nshapes, ceil);
    int bad = !js || ada_write_json_atomic(shapes_path, js);
    json_decref(js);
    if (bad) {
        remove(shapes_path);
        snprintf(msg, msg_n, "peers: cannot write the shape list");
        return ADA_BENCH_ERR_IO;
    }
    char reps_s[32], mt_s[32];
    snprintf(reps_s, sizeof reps_s, "%d", reps);
    snprintf(mt_s, sizeof mt_s, "%g", min_time);
    char *argv[20 + 2 * MAX_USER];
    int k = 0;
    argv[k++] = "python3";
    argv[k++] = (char *)script;
    argv[k++] = "--shapes";
    argv[k++] = shapes_path;
    argv[k++] = "--out";
    argv[k++] = (char *)out_json;
    argv[k++] = "--repetitions";
    argv[k++] = reps_s;
    argv[k++] = "--min-time";
    argv[k++] = mt_s;
    if (filter) {
        argv[k++] = "--filter";
        argv[k++] = (char *)filter;
    }
    for (int i = 0; i < nuser; i++) {
        argv[k++] = "--peer";
        argv[k++] = (char *)user_peers[i];
    }
    argv[k] = NULL;
    ada_note(note, note_arg, "peers: python3 %s", script);
    fflush(stdout);
    int rc = ada_spawn_wait(argv, 0);
    remove(shapes_path);
    if (rc == 77) {
        ada_note(note, note_arg, "peers skipped: torch sees no CUDA device");
        return ADA_BENCH_SKIPPED;
    }
    if (rc != 0) {
        snprintf(msg, msg_n, "peers: torch_peers.py failed (exit %d); ours are kept", rc);
        return ADA_BENCH_ERR_RUN;
    }
    return ADA_BENCH_OK;
}

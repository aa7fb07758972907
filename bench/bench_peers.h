/* bench_peers.h -- the PyTorch peers of `adaload bench --with-peers`: eager PyTorch and
 * torch.compile on exactly the shapes and names of our benchmarks (peers/torch_peers.py),
 * into peers.json of the run folder. Every peer is checked against float64 at each shape
 * before it is timed (a wrong one is written as "wrong result: ...", without a time), and
 * its pct_copy_bw is against our copy of the same bytes timed in the same run: the caller
 * gives those bandwidths per shape (ceil[i], from bench.json through runfiles/run_bench.h's
 * ada_bench_copy_ceiling, the one reader of bench.json), and they travel to the script in
 * the shape list it is given (copy_bytes_per_second, bwd_copy_bytes_per_second); the script
 * never reads a bench.json. ceil NULL, or a 0 in it: no ceiling, pct_copy_bw 0 (shown as
 * missing; never torch's own copy, which stays a labelled extra, pct_torch_copy_bw).
 *
 *   ada_peer_ceiling ceil[n];  // ceil[i].fwd = ada_bench_copy_ceiling(&ours, copy name of shape i) ...
 *   ada_bench_status st = ada_bench_run_peers(script, "run/peers.json", ceil,
 *                                             shapes, n, 9, 0.01, run_filter, note, arg,
 *                                             msg, sizeof msg);
 *   // ADA_BENCH_OK ran; ADA_BENCH_SKIPPED: no python3 with torch, or torch sees no GPU
 *   // (note said why); ADA_BENCH_ERR_RUN / _IO: msg says why (our results are kept).
 */
#ifndef ADALOAD_BENCH_PEERS_H
#define ADALOAD_BENCH_PEERS_H

#include <stddef.h>
#include <stdint.h>

#include "ada_util.h"
#include "bench.h"
#include "bench_shapes.h"

/* Bytes per second of our copies of a shape's forward and backward minimal bytes (0: none). */
typedef struct {
    double fwd, bwd;
} ada_peer_ceiling;

/* The shape list the script reads: ada_shapes_json plus, where ceil[i] has them (ceil may be
 * NULL), copy_bytes_per_second and bwd_copy_bytes_per_second. NULL when out of memory. */
json_t *ada_peers_shapes_json(const ada_shape *shapes, int64_t nshapes, const ada_peer_ceiling *ceil);

/* user_peers[0..nuser): `--peer MODULE:FUNCTION` specs passed on to the script (its
 * peer_user.py: your own callable, checked and timed as peer:<name>). */
ada_bench_status ada_bench_run_peers(const char *script, const char *out_json, const ada_peer_ceiling *ceil,
                                     const ada_shape *shapes,
                                     int64_t nshapes, int reps, double min_time, const char *filter,
                                     const char *const *user_peers, int nuser,
                                     ada_note_fn note, void *note_arg, char *msg, size_t msg_n);

#endif

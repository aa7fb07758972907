/* bench_peers.h -- the PyTorch peers of `adaload bench --with-peers`: eager PyTorch and
 * torch.compile on exactly the shapes and names of our benchmarks (peers/torch_peers.py),
 * into peers.json of the run folder. Every peer is checked against float64 at each shape
 * before it is timed (a wrong one is written as "wrong result: ...", without a time), and
 * its pct_copy_bw is against our copy of the same bytes in our bench.json of the same run
 * (ceiling_json; NULL: no ceiling, pct_copy_bw 0).
 *
 *   ada_bench_status st = ada_bench_run_peers(script, "run/peers.json", "run/bench.json",
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

ada_bench_status ada_bench_run_peers(const char *script, const char *out_json, const char *ceiling_json,
                                     const ada_shape *shapes,
                                     int64_t nshapes, int reps, double min_time, const char *filter,
                                     ada_note_fn note, void *note_arg, char *msg, size_t msg_n);

#endif

/* bench_shim_stub_planner.c -- TEMPORARY weak stand-ins for the Google Benchmark shim
 * (harness/bench_shim.cc, the bench helper's), so the planner branch links on its own.
 * Delete on merge: the shim's strong definitions replace these without a link error.
 * Registration fails here (-1): without the shim nothing can be timed. */
#include "bench_shim.h"

__attribute__((weak)) int ada_bench_register(const char *name, ada_bench_fn fn, void *arg, int repetitions)
{
    (void)name;
    (void)fn;
    (void)arg;
    (void)repetitions;
    return -1;
}
__attribute__((weak)) int ada_bench_keep_running(ada_bench_state *st)
{
    (void)st;
    return 0;
}
__attribute__((weak)) void ada_bench_set_iteration_time(ada_bench_state *st, double seconds)
{
    (void)st;
    (void)seconds;
}
__attribute__((weak)) void ada_bench_counter(ada_bench_state *st, const char *name, double value)
{
    (void)st;
    (void)name;
    (void)value;
}
__attribute__((weak)) void ada_bench_skip(ada_bench_state *st, const char *message)
{
    (void)st;
    (void)message;
}

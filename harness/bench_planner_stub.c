/* bench_planner_stub.c -- TEMPORARY weak stand-in for the planner helper's
 * harness/bench_planner.c, so the bench branch links on its own. Delete on merge; the real
 * (strong) definition replaces this one without a link error. Registers nothing. */
int ada_bench_register_planner(const char *set);

__attribute__((weak)) int ada_bench_register_planner(const char *set)
{
    (void)set;
    return 0;
}

#!/usr/bin/env bash
# deps_check.sh LIB LINKFILE -- the planner library's dependencies (test planner_deps):
#   1. LINKFILE (the library's link libraries, written by CMake) does not name ada_mangen:
#      the planner does not link the manifest generator;
#   2. no cycle between the library's objects: object A depends on B when A uses a symbol B
#      defines (nm); the graph must be acyclic (each file builds on earlier ones only).
set -euo pipefail
lib=$1 linkfile=$2
fail=0
if grep -q 'ada_mangen' "$linkfile"; then
    echo "planner_deps: ada_planner links the manifest generator: $(tr '\n' ' ' < "$linkfile")"
    fail=1
fi
# "object defined|undefined symbol" lines, then Kahn's algorithm in awk.
nm -A -g "$lib" 2>/dev/null | awk '
{
    n1 = split($1, a, ":"); obj = a[n1 - 1];
    if (NF == 3) { t = $2; s = $3 } else if (NF == 4) { t = $3; s = $4 } else next;
    if (t == "U") use[obj, s] = 1; else if (t ~ /[TDBRC]/) def[s] = obj;
    objs[obj] = 1
}
END {
    for (k in use) {
        split(k, p, SUBSEP); o = p[1]; s = p[2];
        if ((s in def) && def[s] != o && !((o, def[s]) in edge)) { edge[o, def[s]] = 1; out[o]++ }
    }
    n = 0; for (o in objs) n++;
    removed = 0; changed = 1;
    while (changed) {
        changed = 0;
        for (o in objs) if (!(o in gone) && out[o] + 0 == 0) {
            gone[o] = 1; removed++; changed = 1;
            for (k in edge) { split(k, p, SUBSEP); if (p[2] == o && !(p[1] in gone)) { delete edge[k]; out[p[1]]-- } }
        }
    }
    if (removed < n) {
        printf "planner_deps: import cycle among:";
        for (o in objs) if (!(o in gone)) printf " %s", o;
        for (k in edge) { split(k, p, SUBSEP); if (!(p[1] in gone) && !(p[2] in gone)) printf "\n  %s uses %s", p[1], p[2] }
        printf "\n"; exit 1
    }
    printf "planner_deps: %d objects, no cycle\n", n
}' || fail=1
exit $fail

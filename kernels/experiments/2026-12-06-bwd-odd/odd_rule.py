# odd_rule.py DIR: bwd-odd's landing rule (README, "Rule to land"): dtile's backward % of copy
# (median of both rounds of ci/device_explore.sh, tags main and base) at the sweep's odd widths
# the element path takes, each against its bar; then every timed width's base / main time.
import json, os, re, statistics, sys
d = sys.argv[1]
pc, tm = {}, {}
for r in (1, 2):
    for tag in ('main', 'base'):
        for x in json.load(open(os.path.join(d, f'exp-{r}-{tag}', 'bench.json')))['benchmarks']:
            if x.get('run_type') == 'iteration' and x['name'].startswith('lnmod_bwd/dtile/'):
                pc.setdefault((tag, x['name']), []).append(x['pct_copy_bw'])
                tm.setdefault((tag, r, x['name']), []).append(x['real_time'])
ok = True
for w in (255, 777, 1537, 3001, 5119):
    n = [k[1] for k in pc if k[0] == 'base' and re.search(rf'/D{w}/rows32760(/graph\d+)?$', k[1])]
    if not n:
        print(f'D{w}: not timed'); ok = False; continue
    b, m = statistics.median(pc[('base', n[0])]), statistics.median(pc.get(('main', n[0]), [float('nan')]))
    print(f'D{w:6d} main {m:5.1f}%  patch {b:5.1f}%  bar 60%  {"ok" if b >= 60 else "MISS"}')
    ok &= b >= 60
worst = 0.0
odd = re.compile(r'/D(255|777|1537|3001|5119)/')
for k in sorted({k[2] for k in tm}):
    rs = [statistics.median(tm[('base', r, k)]) / statistics.median(tm[('main', r, k)]) for r in (1, 2)
          if ('base', r, k) in tm and ('main', r, k) in tm]
    if rs and not odd.search(k):
        worst = max(worst, sum(rs) / len(rs))
print(f'every other width: worst base/main {worst:.3f} (want <= 1.01)')
ok &= worst <= 1.01
print('odd widths', 'PASS' if ok else 'FAIL')

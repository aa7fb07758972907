# wide_rule.py DIR: bwd-wide's landing rule (README, "Rule to land"): dtile's backward % of copy (median of both rounds) of main and this build (tag base) at the six 24-element and five 32-element sweep widths; PASS when each meets its bar
import json,sys,os,statistics,re
d=sys.argv[1]; pc={}
for r in (1,2):
    for tag in ('main','base'):
        f=os.path.join(d,f'exp-{r}-{tag}','bench.json')
        for x in json.load(open(f))['benchmarks']:
            if x.get('run_type')=='iteration' and x['name'].startswith('lnmod_bwd/dtile'):
                pc.setdefault((tag,x['name']),[]).append(x['pct_copy_bw'])
w24=[8256,9000,9280,10240,11328,12288]; w32=[13824,14336,14400,16320,16384]
ok=True
for ws,bar in ((w24,80),(w32,70)):
    for w in ws:
        n=f'lnmod_bwd/dtile/bf16-f32-bf16/sample/D{w}/rows32760'
        b=statistics.median(pc.get(('base',n),[float('nan')])); m=statistics.median(pc.get(('main',n),[float('nan')]))
        p=b>=bar; ok&=p
        print(f'D{w:6d} main {m:5.1f}%  patch {b:5.1f}%  bar {bar}%  {"ok" if p else "MISS"}')
print('wide widths', 'PASS' if ok else 'FAIL')

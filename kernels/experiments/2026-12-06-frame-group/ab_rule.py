# ab_rule.py DIR... : each DIR holds exp-<r>-<tag>/bench.json (ci/device_explore.sh, tags main and base); prints base/main per benchmark (median over reps, mean of the rounds' ratios) and the landing rules of round 3 (README)
import json,sys,glob,os,statistics,re
PREFIX=os.environ.get('PREFIX','lnmod_fwd')  # PREFIX=lnmod_bwd for backward A/Bs
rows={}
for d in sys.argv[1:]:
    for r in (1,2):
        t={}
        for tag in ('main','base'):
            f=os.path.join(d,f'exp-{r}-{tag}','bench.json')
            if not os.path.exists(f): continue
            b=json.load(open(f))['benchmarks']
            m={}
            for x in b:
                if x.get('run_type')=='iteration' and x['name'].startswith(PREFIX):
                    m.setdefault(x['name'],[]).append(x['real_time'])
            t[tag]={k:statistics.median(v) for k,v in m.items()}
        if len(t)<2: continue
        for k in t['main']:
            if k in t['base']: rows.setdefault(k,[]).append((t['main'][k],t['base'][k]))
bad=0; fr=[]
for k,v in sorted(rows.items()):
    rs=[b/a for a,b in v]; r=sum(rs)/len(rs)
    print(f"{k:70s} main {v[0][0]:9.2f} r3 {v[0][1]:9.2f}  {r:.3f}  rounds {' '.join('%.3f'%x for x in rs)}")
    if r>1.01: bad+=1
    if re.search(r'/frame/D(2048|3072|4096|5120)/rows32760$',k): fr.append(r)
print('per-frame 32760 ratios', ['%.3f'%x for x in fr], 'n<=0.95:', sum(x<=0.95 for x in fr), 'above 1.01:', bad)
print('OLD RULE', 'PASS' if sum(x<=0.95 for x in fr)>=3 and bad==0 and len(fr)==4 else 'FAIL')
print('NEW RULE', 'PASS' if sum(x<=0.95 for x in fr)>=2 and all(x<=1.00 for x in fr) and bad==0 and len(fr)==4 else 'FAIL')

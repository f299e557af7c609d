#!/usr/bin/env python3
# compare-diffs.py STORE_A STORE_B: see docs/pipeline.md ("Same diffs as before the new catalogs").
# Compare the stored diffs of two stores: every diff file of A must exist in B with,
# for each of A's categories, the same bytes as B's (canonical compact JSON of the
# parsed value, which is what the renderer writes: gen types, alphabetical keys);
# B's summary minus its new categories' counts must equal A's summary.
import json, os, sys
A, B = sys.argv[1], sys.argv[2]
new = ["agents", "bundles", "contracts", "playercards", "sprays", "sprays/levels"]
def load(p):
    b = open(p, 'rb').read()
    head, body = b.split(b'\n', 1)
    return json.loads(body)
ok = True
names = sorted(os.listdir(A + '/diffs'))
for n in names:
    a, b = load(A + '/diffs/' + n)['data'], load(B + '/diffs/' + n)['data']
    same = True
    for k in ('fromVersion', 'toVersion'):
        same &= a[k] == b[k]
    for cat, v in a['categories'].items():
        same &= json.dumps(v, separators=(',', ':'), ensure_ascii=False) == json.dumps(b['categories'][cat], separators=(',', ':'), ensure_ascii=False)
    extra = set(b['categories']) - set(a['categories'])
    same &= extra == set(new)
    adj = {k: b['summary'][k] for k in b['summary']}
    counts = {c: (len(b['categories'][c]['added']), len(b['categories'][c]['removed']), len(b['categories'][c]['changed'])) for c in new}
    adj['totalAdded'] -= sum(x[0] for x in counts.values())
    adj['totalRemoved'] -= sum(x[1] for x in counts.values())
    adj['totalChanged'] -= sum(x[2] for x in counts.values())
    same &= adj == a['summary']
    ok &= same
    print(n, 'same' if same else 'DIFFERENT', ' '.join(f"{c}:+{x[0]}-{x[1]}~{x[2]}" for c, x in counts.items() if any(x)))
print('ALL OLD CATALOGS IDENTICAL' if ok else 'MISMATCH', len(names), 'diffs')

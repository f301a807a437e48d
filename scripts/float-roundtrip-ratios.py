#!/usr/bin/env python3
"""serde_json with float_roundtrip (layout 0) against without (layout 1), from the samples.csv
of a `run --profile full --layout WITH --layout WITHOUT` (docs/formats.md): each serde_json arm's
time over simd-json's arm of the same payload, framing and mode (simd-json parses floats itself,
untouched by the feature), per worker; the change of that ratio between the builds, with a
Welch interval."""
import csv, math, sys, statistics as st, collections
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['status'] == 'ok' and r['mean_ns']]
by = collections.defaultdict(dict)
for r in rows:
    by[int(r['pass'])][(r['backend'], r['variant'], r['payload'], r['framing'], r['operation'], r['mode'])] = (int(r['layout']), float(r['mean_ns']))
ratios = collections.defaultdict(lambda: ([], []))
for p, arms in by.items():
    for (backend, variant, payload, framing, op, mode), (layout, mean) in arms.items():
        if backend != 'serde_json' or variant:
            continue
        ref = arms.get(('simd-json', '', payload, framing, op, mode))
        if ref:
            ratios[(payload, framing, op, mode)][layout].append(math.log(mean / ref[1]))
print("arm (serde_json / simd-json)                   with/without float_roundtrip  95% interval  workers")
changes = []
for key in sorted(ratios):
    a, b = ratios[key]
    if len(a) < 2 or len(b) < 2:
        continue
    d = st.mean(a) - st.mean(b)
    se = math.sqrt(st.variance(a) / len(a) + st.variance(b) / len(b))
    changes.append(d)
    print(f"{' '.join(key):45} {math.exp(d):8.3f}x  [{math.exp(d - 2 * se):.3f}, {math.exp(d + 2 * se):.3f}]  {len(a)}+{len(b)}")
print(f"median over {len(changes)} arms: {math.exp(st.median(changes)):.3f}x")

#!/usr/bin/env python3
# Usage: scripts/build-ratios-time.py DIR/samples.csv, for a `run --profile full --layout A --layout B`
# (docs/measurement.md#the-build-profile).
"""Per-arm ratio to its section's reference, per worker, compared between the two layouts
(fat = layout 0, thin = layout 1) of one `--layout` run, and an A/A split of layout 0."""
import csv, math, sys, statistics as st, collections
path = sys.argv[1]
rows = [r for r in csv.DictReader(open(path)) if r['status'] == 'ok' and r['mean_ns']]
key = lambda r: (r['format'], r['backend'], r['variant'], r['payload'], r['framing'], r['operation'], r['mode'])
section = lambda r: (r['payload'], r['operation'])
ref = {section(r): key(r) for r in rows if r['twin_mean_ns']}
by = collections.defaultdict(dict)  # (section, pass) -> arm -> (layout, mean)
for r in rows:
    by[(section(r), int(r['pass']))][key(r)] = (int(r['layout']), float(r['mean_ns']))
logr = collections.defaultdict(lambda: collections.defaultdict(list))  # arm -> group -> [log ratio]
absl = collections.defaultdict(lambda: collections.defaultdict(list))
for (sec, p), arms in by.items():
    if ref.get(sec) not in arms: continue
    layout, refmean = arms[ref[sec]]
    for arm, (l, m) in arms.items():
        absl[arm][l].append(math.log(m))
        if arm == ref[sec]: continue
        logr[arm][l].append(math.log(m / refmean))
        if l == 0: logr[arm]['aa%d' % (p // 2 % 2)].append(math.log(m / refmean))
def welch(a, b):
    if len(a) < 2 or len(b) < 2: return None
    d = st.mean(b) - st.mean(a)
    se = math.sqrt(st.variance(a) / len(a) + st.variance(b) / len(b))
    return d, se
def summary(g1, g2, label, data):
    ds, out = [], 0
    for arm, groups in data.items():
        w = welch(groups[g1], groups[g2])
        if not w: continue
        d, se = w
        ds.append(abs(math.exp(d) - 1)); out += abs(d) > 2.0 * se
    ds.sort()
    print(f"{label}: {len(ds)} arms; |change| median {100*st.median(ds):.2f}%, 90th pct {100*ds[int(.9*len(ds))]:.2f}%, max {100*ds[-1]:.2f}%; outside ±2 s.e.: {out}")
    return ds
summary(0, 1, 'ratio to section reference, fat vs thin workers', logr)
summary('aa0', 'aa1', 'A/A: same ratio, fat workers of passes 0,1 (mod 4) vs 2,3', logr)
summary(0, 1, 'absolute time per arm, fat vs thin (not paired)', absl)
# the biggest ratio changes
big = []
for arm, g in logr.items():
    w = welch(g[0], g[1])
    if w: big.append((abs(w[0]) / w[1], math.exp(w[0]) - 1, w[1], arm))
big.sort(reverse=True)
for z, d, se, arm in big[:8]:
    print(f"  {'/'.join(x for x in arm[:3] if x)} {arm[3]} {arm[5]} {arm[6]}: thin/fat ratio change {100*d:+.1f}% (s.e. {100*se:.1f}%)")

#!/usr/bin/env python3
"""agree.py [--alone] [--from RUN] TSV...: per pair, agreement over all pairs of invocations,
half-widths, times. --alone scores each invocation's interval without the spread between
sessions (the levels line's "this session alone"); --from RUN leaves out the runs before RUN."""
import itertools, math, re, statistics, sys
args = sys.argv[1:]
alone = "--alone" in args
args = [a for a in args if a != "--alone"]
first = 1
if "--from" in args:
    i = args.index("--from"); first = int(args[i + 1]); del args[i:i + 2]
label = "this session alone" if alone else "time ratio"
rows = {}
for path in args:
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if int(f[1]) < first:
            continue
        m = re.search(label + r" ([\d.]+) \[([\d.]+), ([\d.]+)\]", f[4] if len(f) > 4 else "")
        m2 = re.search(r"([\d.]+) ± ([\d.]+) times (slower|faster)", f[3])
        m3 = re.search(r"time ratio ([\d.]+) \[([\d.]+), ([\d.]+)\]", f[3])
        if m:
            r, lo, hi = map(float, m.groups())
        elif m3:
            r, lo, hi = map(float, m3.groups())
        elif m2:
            x, y = float(m2.group(1)), float(m2.group(2))
            r, lo, hi = (x, x - y, x + y) if m2.group(3) == "slower" else (1 / x, 1 / (x + y), 1 / (x - y))
        else:
            print("unparsed:", line.strip()[:200]); continue
        procs = re.search(r"(\d+) processes (?:over (\d+) layouts|of one layout)", f[3])
        rows.setdefault(f[0] + ' ' + ' '.join(sorted(re.findall(r'`([^`]+/[^`]+)`', f[3])[:2])), []).append((math.log(r), (math.log(hi) - math.log(lo)) / 2, float(f[2]), r, procs.groups() if procs else None))
tot_agree = tot = 0
halves = []
for pair, xs in rows.items():
    agree = sum(abs(a[0] - b[0]) <= math.hypot(a[1], b[1]) for a, b in itertools.combinations(xs, 2))
    n = len(xs) * (len(xs) - 1) // 2
    tot_agree += agree; tot += n
    hw = [math.expm1(x[1]) * 100 for x in xs]
    halves += hw
    logs = [x[0] for x in xs]
    sd = statistics.stdev(logs) * 100 if len(logs) > 1 else float("nan")
    print(f"{pair:70} n={len(xs):2} agree {agree}/{n}  ratios {min(x[3] for x in xs):.4f}-{max(x[3] for x in xs):.4f}  "
          f"sd between {sd:.2f}%  median ±{statistics.median(hw):.2f}%  max time {max(x[2] for x in xs):.1f}s  procs {xs[0][4]}")
print(f"all: {tot_agree}/{tot} = {100*tot_agree/max(tot,1):.1f}% agree; median half-width ±{statistics.median(halves):.2f}%")

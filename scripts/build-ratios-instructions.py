#!/usr/bin/env python3
"""Instruction counts of the same arms in two builds (two instructions.csv files): per arm,
per ratio to the section's median arm, and pairs whose order flips
(docs/measurement.md#the-build-profile). Usage: A/instructions.csv B/instructions.csv"""
import csv, math, sys, statistics as st
def load(p):
    return {(r['format'],r['backend'],r['variant'],r['payload'],r['framing'],r['operation'],r['mode']): r for r in csv.DictReader(open(p)) if r['status']=='ok'}
fat=load(sys.argv[1]); thin=load(sys.argv[2])
common=sorted(fat.keys()&thin.keys())
for metric in ['instructions_per_op','estimated_cycles_per_op']:
    ch=[float(thin[k][metric])/float(fat[k][metric])-1 for k in common]
    a=sorted(abs(x) for x in ch)
    print(f"{metric}: {len(common)} arms; thin/fat per arm: median |change| {100*st.median(a):.1f}%, max {100*a[-1]:.1f}%; thin higher in {sum(x>0.005 for x in ch)}, lower in {sum(x<-0.005 for x in ch)}")
    # ratios within (payload, op): each arm against the section's median arm
    secs={}
    for k in common: secs.setdefault((k[3],k[5]),[]).append(k)
    rc=[]
    for sec,ks in secs.items():
        ref=sorted(ks,key=lambda k:float(fat[k][metric]))[len(ks)//2]
        for k in ks:
            if k==ref: continue
            rf=float(fat[k][metric])/float(fat[ref][metric]); rt=float(thin[k][metric])/float(thin[ref][metric])
            rc.append(abs(rt/rf-1))
    rc.sort()
    print(f"  ratio to the section's median arm: {len(rc)} ratios, median |change| {100*st.median(rc):.1f}%, 90th pct {100*rc[int(.9*len(rc))]:.1f}%, changed by over 5%: {sum(x>0.05 for x in rc)}")
    # rank changes
    flips=0; pairs=0
    for sec,ks in secs.items():
        for i in range(len(ks)):
            for j in range(i+1,len(ks)):
                a,b=ks[i],ks[j]; pairs+=1
                if (float(fat[a][metric])-float(fat[b][metric]))*(float(thin[a][metric])-float(thin[b][metric]))<0: flips+=1
    print(f"  pairs of one section whose order flips: {flips} of {pairs}")

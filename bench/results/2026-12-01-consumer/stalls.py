import csv, sys, collections
def load(path):
    rows = list(csv.reader(open(path)))
    hi = [i for i, r in enumerate(rows) if r and r[0] == "Address"][0]
    h = rows[hi]; data = [dict(zip(h, r)) for r in rows[hi+1:] if len(r) == len(h)]
    return h, data
for path in sys.argv[1:]:
    h, data = load(path)
    stall_cols = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
    tot = collections.Counter(); n = 0
    for d in data:
        for c in stall_cols:
            try: tot[c] += int(d[c] or 0)
            except: pass
        try: n += int(d["Warp Stall Sampling (All Samples)"] or 0)
        except: pass
    print(path, "samples", n)
    print("  ", ", ".join(f"{k[6:]} {100*v/max(n,1):.1f}%" for k, v in tot.most_common(8)))
    top = sorted(data, key=lambda d: -int(d["Warp Stall Sampling (All Samples)"] or 0))[:12]
    for d in top:
        s = int(d["Warp Stall Sampling (All Samples)"] or 0)
        reasons = sorted(((int(d[c] or 0), c[6:]) for c in stall_cols), reverse=True)[:2]
        print(f"   {100*s/n:5.1f}% {d['Instructions Executed']:>8} {d['Source'][:60]:60} {reasons}")

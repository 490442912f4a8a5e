# Run from the repository root on the device: python3 bench/results/2026-12-01-cluster/clus_ptx_edits.py
# (mtc in .device/bin, libmtc_runtime.so in .device/lib; see bench/README.md).
# Cluster variants of the wgmma kernel, timed through python/mtc (PTX edits).
import sys, torch
sys.path.insert(0, "bench/results/2026-12-01-cluster")  # dbg.py, beside this file
from dbg import build, run
from mtc.runtime import Artifact

def time_it(tag, m, n, k, sched, edits=(), iters=60):
    path = build(tag, m, n, k, "bf16", sched, edits)
    if not path: return
    art = Artifact(path)
    x = (torch.rand(m, k, device="cuda") * 2 - 1).bfloat16()
    ws = [torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8) for _ in range(3)]
    s = (torch.rand(n, device="cuda") * 0.01).bfloat16()
    o = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    st = torch.cuda.current_stream().cuda_stream
    def go(i):
        art.launch(m if art.symbol else 0, st, [x.data_ptr(), ws[i % 3].data_ptr(), s.data_ptr()], [o.data_ptr()])
    for i in range(5): go(i)
    ts = []
    for i in range(iters):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); go(i); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1000)
    ts.sort()
    print(f"{tag:28s} M={m} {n}x{k} [{sched}] {' | '.join(x for x, _ in edits)}: median {ts[len(ts)//2]:.1f} us, min {ts[0]:.1f}")
    art.close()

REL = [("mbarrier.arrive.release.cluster.shared::cluster.b64", "mbarrier.arrive.shared::cluster.b64")]
for m, sched in ((128, "wgmma w8 r1 mt128 st6"), (4096, "wgmma w12 r2 mt192 st4")):
    time_it("cl1", m, 8192, 8192, sched)
    for cl in (2, 4):
        if m == 4096 and cl == 4: continue
        time_it(f"cl{cl}", m, 8192, 8192, sched + f" cl{cl}")
        time_it(f"cl{cl}_norelease", m, 8192, 8192, sched + f" cl{cl}", REL)
run("cl2_norelease_check", 128, 4097, 4096, "bf16", "wgmma w8 r1 mt128 st6 cl2", REL, cpb=64, mt=128)

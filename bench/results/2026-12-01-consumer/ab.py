# A/B of wgmma consumer variants: artifacts compiled locally (.device/ab/<variant>/<graph>), run through python/mtc,
# CUDA-graph replays of 8 launches over 4 rotated weight copies (cold L2), median of 15 replays, 3 interleaved rounds;
# outputs checked against an fp64 reference and poisoned (NaN) first.
import os, sys, glob
sys.path.insert(0, "python")
os.environ.setdefault("MTC_RUNTIME_LIBRARY", os.path.abspath(".device/lib/libmtc_runtime.so"))
import torch
torch.zeros(1, device="cuda")
from mtc.runtime import Artifact
variants = sys.argv[1:]
graphs = sorted(os.path.basename(p) for p in glob.glob(f".device/ab/{variants[0]}/*"))
res = {}
for g in graphs:
    m, nk = g.split("_")[1][1:], g.split("_")[2]
    m = int(m); n, k = map(int, nk.split("x"))
    x = (torch.rand(m, k, device="cuda") * 2 - 1).bfloat16()
    ws = [torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8) for _ in range(4)]
    s = (torch.rand(n, device="cuda") * 0.01).bfloat16()
    ref = (x.double() @ ws[0].double().T) * s.double()
    arts = {v: Artifact(f".device/ab/{v}/{g}/{g}.json") for v in variants}
    for rnd in range(3):
        for v in variants:
            art = arts[v]
            o = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            st = torch.cuda.Stream()
            def go(i):
                art.launch(0, st.cuda_stream, [x.data_ptr(), ws[i % 4].data_ptr(), s.data_ptr()], [o.data_ptr()])
            with torch.cuda.stream(st):
                go(0); st.synchronize()
                err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
                gr = torch.cuda.CUDAGraph()
                with torch.cuda.graph(gr, stream=st):
                    for i in range(8): go(i)
                gr.replay(); st.synchronize()
                ts = []
                for _ in range(15):
                    a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
                    a.record(st); gr.replay(); b.record(st); b.synchronize(); ts.append(a.elapsed_time(b) * 1000 / 8)
            ts.sort()
            res.setdefault((g, v), []).append(ts[len(ts) // 2])
            if rnd == 0:
                print(f"{g} {v}: err {err:.2e}", flush=True)
    for v in variants: arts[v].close()
print()
print("graph | " + " | ".join(variants) + "  (us, best of 3 rounds' medians)")
for g in graphs:
    print(g + " | " + " | ".join(f"{min(res[(g, v)]):.1f}" for v in variants))

# Debug harness for the wgmma kind: compile an artifact, optionally edit its
# PTX, run it through python/mtc with torch tensors, show where it is wrong.
import os, sys, subprocess, json, re, shutil
sys.path.insert(0, "python")
os.environ.setdefault("MTC_RUNTIME_LIBRARY", os.path.abspath(".device/lib/libmtc_runtime.so"))
import torch
torch.zeros(1, device="cuda")  # a current CUDA context for the runtime
from mtc.compiler import linear_graph
from mtc.runtime import Artifact
MTC = ".device/bin/mtc"
OUT = os.environ.get("OUT", "/tmp")
work = "/tmp/dbg"; os.makedirs(work, exist_ok=True)

def build(tag, m, n, k, dt, sched, edits=()):
    d = f"{work}/{tag}"; shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    open(f"{d}/g.graph", "w").write(linear_graph("g", n, k, dtype=dt))
    p = subprocess.run([MTC, "compile", f"{d}/g.graph", "-o", f"{d}/a", "--arch", "sm_90a",
                        "--bind", f"M={m}", "--schedule", f"0={sched}"], capture_output=True, text=True)
    if p.returncode: print(tag, "COMPILE FAIL", p.stderr); return None
    ptx = open(f"{d}/a/g.ptx").read()
    for a, b in edits:
        n0 = ptx.count(a); ptx = ptx.replace(a, b)
        if not n0: print(tag, "edit not found:", a)
    open(f"{d}/a/g.ptx", "w").write(ptx)
    return f"{d}/a/g.json"

def bins(mask, dim, width, nb):
    # fraction bad per bin of (index % width) // (width // nb) along dim
    idx = torch.arange(mask.shape[dim], device=mask.device)
    b = (idx % width) // max(1, width // nb)
    r = []
    for i in range(nb):
        sel = b == i
        if sel.sum() == 0: r.append("-"); continue
        mm = mask.index_select(dim, sel.nonzero().flatten())
        r.append(f"{mm.float().mean().item():.2f}")
    return " ".join(r)

def run(tag, m, n, k, dt, sched, edits=(), reps=2, cpb=64, mt=64):
    path = build(tag, m, n, k, dt, sched, edits)
    if not path: return
    art = Artifact(path)
    tdt = torch.bfloat16 if dt == "bf16" else torch.float16
    g = torch.Generator(device="cuda").manual_seed(1)
    x = (torch.rand(m, k, device="cuda", generator=g) * 2 - 1).to(tdt)
    w = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8, generator=g)
    s = (torch.rand(n, device="cuda", generator=g) * 0.01 + 0.001).to(tdt)
    ref = (x.double() @ w.double().T) * s.double()
    outs = []
    for r in range(reps):
        o = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
        art.launch(m if art.symbol else 0, torch.cuda.current_stream().cuda_stream,
                   [x.data_ptr(), w.data_ptr(), s.data_ptr()], [o.data_ptr()])
        torch.cuda.synchronize(); outs.append(o)
    o = outs[0]
    err = (o.double() - ref).abs() / ref.abs().max()
    bad = ~(err < 2e-2)
    same = all(torch.equal(outs[0].nan_to_num(7), q.nan_to_num(7)) for q in outs[1:])
    print(f"{tag}: M={m} N={n} K={k} {dt} [{sched}] {' '.join(a for a,_ in edits)}: bad {bad.float().mean().item():.4f} "
          f"nonfinite {(~o.isfinite()).sum().item()} maxerr {err.nan_to_num(1e9).max().item():.3g} deterministic {same}")
    if bad.any():
        print("   by n%cpb/8:", bins(bad, 1, cpb, cpb // 8))
        print("   by m%mt/8: ", bins(bad, 0, mt, max(1, mt // 8)))
        print("   by n%8:    ", bins(bad, 1, 8, 8), " by m%8:", bins(bad, 0, 8, 8))
        nb = (n + cpb - 1) // cpb
        blk = [f"{bad[:, i*cpb:(i+1)*cpb].float().mean().item():.2f}" for i in range(min(nb, 12))]
        print("   by block:  ", " ".join(blk))
        mb = [f"{bad[i*mt:(i+1)*mt].float().mean().item():.2f}" for i in range((m + mt - 1)//mt)][:12]
        print("   by m tile: ", " ".join(mb))
    art.close()

if __name__ == "__main__":
    W0 = [("wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 0;")]
    for edits, sfx in (((), ""),):
        run("r1_k64" + sfx, 64, 4096, 64, "bf16", "wgmma w8 r1 mt64 st4", edits)
        run("r1_k256" + sfx, 64, 4096, 256, "bf16", "wgmma w8 r1 mt64 st4", edits)
        run("r1_k4096" + sfx, 64, 4096, 4096, "bf16", "wgmma w8 r1 mt64 st4", edits)
        run("r1_mt256" + sfx, 256, 4096, 1024, "bf16", "wgmma w8 r1 mt256 st4", edits, mt=256)
        run("r2_k64" + sfx, 128, 4096, 64, "bf16", "wgmma w12 r2 mt128 st4", edits, cpb=128, mt=128)
        run("r2_k512" + sfx, 128, 4096, 512, "bf16", "wgmma w12 r2 mt128 st4", edits, cpb=128, mt=128)
        run("r2_k4096" + sfx, 128, 4096, 4096, "bf16", "wgmma w12 r2 mt128 st4", edits, cpb=128, mt=128)
        run("r2_mt64_k4096" + sfx, 64, 4096, 4096, "bf16", "wgmma w12 r2 mt64 st4", edits, cpb=128, mt=64)

"""compare.py's PyTorch side for the int8 layer: the systems of
compare_report.SYSTEMS but mtc (eager, bf16 cuBLAS, Inductor's modes), each
timed like mtc and checked against fp64 (a module; compare_int4.py has the
int4 layer's)."""
import os
import time

from compare_int4 import weights_fields
from compare_report import log
from graph_timing import poisoned_call, time_rotated

def setup_torch(args, rec):
    # Every mode compiles from scratch: with Inductor's caches on, the
    # coordinate-descent compile can reuse the default compile's graph (seen
    # on 2026-11-29: "Inductor + CD" then ran the unfused default kernels).
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    import torch
    rec.meta["torch"] = torch.__version__
    try:
        import triton
        rec.meta["triton"] = triton.__version__
    except Exception:
        pass
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = True
    return torch


def measure(torch, args, rec, system, fn, inputs, per_copy_bytes, compile_s,
            key, ref):
    """Check fn(*inputs) (its output poisoned first) against the fp64 `ref`,
    time it, and record a row for key = (m, n, k)."""
    m, n, k = key
    refmax = ref.abs().max().item()
    try:
        out, poisoned = poisoned_call(torch, fn, inputs, (m, n),
                                      torch.bfloat16)
        if not torch.isfinite(out).all():
            err = float("inf")
        else:
            err = ((out.double() - ref).abs().max().item() /
                   max(refmax, 1e-30))
        del out
        us = time_rotated(torch, fn, inputs, per_copy_bytes, args.calls,
                          args.replays)
    except Exception as e:
        log(f"  {system} M={m} {n}x{k}: failed: {e}")
        rec.add(system=system, m=m, n=n, k=k, us=None, err=None,
                ok=False, error=str(e)[:500], **weights_fields(args))
        return
    rec.add(system=system, m=m, n=n, k=k, us=us, err=err,
            ok=err <= 1e-2, compile_s=compile_s, poisoned=poisoned,
            **weights_fields(args))
    log(f"  {system:<12} M={m:<3} {n}x{k}: {us:8.2f} us  err "
        f"{err:.2e}" + ("" if poisoned else " (output not poisoned)") +
        (f"  compile {compile_s:.1f} s" if compile_s else ""))


def seeded_points(torch, ms, shapes, deadline):
    """(m, n, k, gen, x) for every point until `deadline`: a generator
    seeded by the point, and x, bf16 [m, k], drawn from it first (the int8
    and int4 systems see the same x at the same point)."""
    dev = torch.device("cuda")
    for m in ms:
        for n, k in shapes:
            if time.time() > deadline:
                log("torch: out of time budget")
                return
            gen = torch.Generator(device=dev).manual_seed(1000 * m + n + k)
            x = torch.randn(m, k, device=dev, dtype=torch.bfloat16,
                            generator=gen)
            yield m, n, k, gen, x


def bench_torch(args, rec, ms, shapes, deadline):
    torch = setup_torch(args, rec)
    import torch.nn.functional as F

    dev = torch.device("cuda")

    def woq(x, w, s):
        return F.linear(x, w.to(x.dtype)) * s

    for m, n, k, gen, x in seeded_points(torch, ms, shapes, deadline):
        w = torch.randint(-128, 128, (n, k), device=dev,
                          dtype=torch.int8, generator=gen)
        s = (torch.rand(n, device=dev, generator=gen) + 0.5).to(
            torch.bfloat16) / 64
        ref = (x.double() @ w.double().T) * s.double()
        key = (m, n, k)

        if "eager" in args.systems:
            measure(torch, args, rec, "eager", woq, (x, w, s),
                    n * k + m * k * 2 + n * 2, 0.0, key, ref)
        if "cublas_bf16" in args.systems:
            wb = w.to(torch.bfloat16)
            measure(torch, args, rec, "cublas_bf16",
                    lambda x, wb, s: F.linear(x, wb) * s, (x, wb, s),
                    2 * n * k + m * k * 2 + n * 2, 0.0, key, ref)
            del wb
        # Each compiled mode is timed right after its compile: a later
        # torch._dynamo.reset() drops compiled code, and calling it again
        # would recompile under the then-current config.
        for system, mode, cd in (("inductor", "default", False),
                                 ("inductor_cd", "default", True),
                                 ("max_autotune",
                                  "max-autotune-no-cudagraphs", False)):
            if system not in args.systems:
                continue
            if system == "max_autotune" and m not in args.max_autotune_ms:
                continue
            if system in ("inductor", "inductor_cd") and \
                    m not in args.inductor_ms and \
                    (n, k) != (8192, 8192):
                continue
            import torch._dynamo
            import torch._inductor.config as icfg
            torch._dynamo.reset()
            icfg.coordinate_descent_tuning = cd
            fn = torch.compile(woq, mode=mode, dynamic=False)
            start = time.time()
            try:
                fn(x, w, s)
                torch.cuda.synchronize()
            except Exception as e:  # record, keep going
                log(f"  {system} M={m} {n}x{k}: compile failed: {e}")
                rec.add(system=system, m=m, n=n, k=k, us=None,
                        err=None, ok=False, error=str(e)[:500])
                continue
            measure(torch, args, rec, system, fn, (x, w, s),
                    n * k + m * k * 2 + n * 2, time.time() - start, key,
                    ref)
        if any(sy in args.systems for sy in
               ("inductor", "inductor_cd", "max_autotune")):
            torch._inductor.config.coordinate_descent_tuning = False
        del x, w, s, ref
        torch.cuda.empty_cache()

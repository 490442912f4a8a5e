#!/usr/bin/env python3
"""gpt-fast's int8 (or int4) Llama decoding, as shipped and on mtc kernels, in one run.

The client is the unmodified gpt-fast (its model.py, quantize.py and
generate.py, imported from --gpt-fast). The model is built from its config
(`Transformer.from_name`) with random bf16 weights, quantized to int8 per
channel by gpt-fast's WeightOnlyInt8QuantHandler (or, with --mode int4,
to int4 in groups of --groupsize by WeightOnlyInt4QuantHandler(model,
groupsize).create_quantized_state_dict(), below) and loaded as gpt-fast's
_load_model does (convert_for_runtime on the meta device, then
load_state_dict(assign=True)); decoding uses generate.py's own prefill, decode_n_tokens
and sampling (temperature 0.8, top-k 200), with decode_one_token compiled as
generate.py compiles it (coordinate_descent_tuning, which importing
generate.py sets, mode="reduce-overhead", fullgraph=True). Each batch size
starts from a reset of Dynamo, as a fresh generate.py process would.

Systems, measured in the same process:
  gpt-fast   the model as gpt-fast builds it (int4: aten._weight_int4pack_mm,
             "tinygemm")
  mtc        the same model after mtc.torch.swap(model): every
             WeightOnlyInt8Linear becomes an mtc WoqLinear sharing its
             tensors; every WeightOnlyInt4Linear an mtc Int4Linear with its
             tensors repacked (mtc's i4 [N, K/2], scales and zeros [N, K/G])
  mtc-fused  last: swap, then mtc.torch.fuse_blocks(model): each
             TransformerBlock's feed-forward half (RMSNorm, w1/w3, SwiGLU,
             w2, residual) is one mtc graph (mtc.torch.fused_ffn, or
             fused_ffn_int4 over the swapped int4 layers), for steps of up
             to --fuse-max-rows rows (fuse_blocks' max_rows); the
             attention reads the KV cache without gpt-fast's copy of it
             per query head (--no-grouped-attention: with it)

int4 on PyTorch >= 2.5: gpt-fast as shipped hands
aten._convert_weight_to_int4pack an int32 [N, K] tensor, where that op now
takes uint8 [N, K/2] (even k in the high nibble) and raises. The script
tries the shipped path first; if it raises, it runs the same
create_quantized_state_dict with one function swapped for the call:
quantize.prepare_int4_weight_and_scales_and_zeros becomes gpt-fast's own
group_quantize_tensor followed by the uint8 packing and the same op
(prepare_int4_uint8 in gpt_fast_int4.py; nothing else of gpt-fast
changes). The rows' `int4_pack` says which path ran ("shipped" or
"uint8"), and the build checks one layer against its dequantised weights
before going on. The int4 reference for max_rel_err is the model with
every int4 layer an fp32 nn.Linear holding gpt-fast's
group_dequantize_tensor of its quantization.

Per system and batch B, one JSON line in OUT/results.jsonl:
  ms_per_step, tokens_per_s   wall time of decode_n_tokens over `steps`
                              steps (median of 3 runs) and B * 1000 / ms
  max_rel_err                 logits, teacher-forced for --check-steps steps
                              in eager mode, against an fp32 eager copy of
                              the quantized model: max |l - ref| / max |ref|
  floor_ms, read_ceiling_gbs  the weights' bytes (int4: nibbles, scales and
                              zeros) at the streaming-read rate that mtc
                              bench measures on `gpu`, the GPU at hand
  launches_per_step           CUDA kernels launched per step (profiler)
  compile_s                   first-call time of the compiled step, plus
                              swap() (compile + tune) for mtc
  profile                     kernel time per step by kernel (torch.profiler
                              over 5 compiled steps); for mtc the sum of its
                              linear kernels (woq_*, woq4_*) against the
                              weight-read floor (int4: nibbles, scales and
                              zeros); "breakdown": ms and launches per step
                              by report.py's kernel_category,
                              launches_per_layer, and "kernels": every
                              kernel's ms and launches per step
                              (report.py's step_profile); gpu_span_ms_per_step
                              and gpu_idle_ms_per_step: first to last kernel,
                              and the gaps (report.py's gpu_timeline)
  mode, groupsize, int4_pack  int8 or int4; int4's group size and packing
Prefill rows (phase "prefill") time generate.py's prefill of --prefill tokens
at B = 1; it is not compiled, as in generate.py's default. Rows with phase
"recompile" time a second compile with warm caches.

    python3 bench/e2e/gpt_fast.py --gpt-fast DIR --out OUT [--batches 1,8]
    python3 bench/e2e/gpt_fast.py --gpt-fast DIR --out OUT --mode int4 \
        --groupsize 128 --batches 1,8 --no-tune
    python3 bench/e2e/gpt_fast.py --report OUT   # table and plot from rows
"""
import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gpt_fast_int4 import build_int4_model  # noqa: E402
from ceiling import read_ceiling  # noqa: E402
from report import profiler_summary  # noqa: E402

TEMPERATURE, TOP_K = 0.8, 200


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Rows:
    def __init__(self, out, tags=None):
        self.path = Path(out) / "results.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tags = dict(tags or {})  # fields of every row (mode, ...)

    def add(self, **row):
        row = {**row, **self.tags}
        with open(self.path, "a") as f:
            f.write(json.dumps(row) + "\n")
        log("ROW", json.dumps({k: v for k, v in row.items()
                               if k != "profile"}))


#===----------------------------------------------------------------------===#
# The model, as gpt-fast builds it
#===----------------------------------------------------------------------===#

def build_model(torch, name):
    from model import Transformer
    from quantize import WeightOnlyInt8QuantHandler
    torch.manual_seed(0)
    t0 = time.time()
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        dense = Transformer.from_name(name)
    torch.set_default_dtype(torch.float32)
    state = WeightOnlyInt8QuantHandler(dense).create_quantized_state_dict()
    del dense
    # generate.py's _load_model: build on meta, convert, assign the weights.
    with torch.device("meta"):
        model = Transformer.from_name(name)
        model = WeightOnlyInt8QuantHandler(model).convert_for_runtime()
    model.load_state_dict(state, assign=True)
    model = model.to(device="cuda", dtype=torch.bfloat16).eval()
    del state
    torch.cuda.synchronize()
    log(f"model {name}: built and quantized in {time.time() - t0:.1f} s")
    return model


def weight_bytes(torch, model):
    """Bytes of the quantized linears' weights: int8 weights, or int4
    nibbles (tinygemm's int32 words) plus scales_and_zeros."""
    total = 0
    for m in model.modules():
        w = getattr(m, "weight", None)
        if not isinstance(w, torch.Tensor):
            continue
        if w.dtype == torch.int8:
            total += w.numel()
        elif hasattr(m, "scales_and_zeros"):
            total += (w.numel() * w.element_size() +
                      m.scales_and_zeros.numel() *
                      m.scales_and_zeros.element_size())
    return total


def setup_caches(torch, model, batch, seq):
    model.max_batch_size = model.max_seq_length = -1  # exactly this batch
    with torch.device("cuda"):
        model.setup_caches(max_batch_size=batch, max_seq_length=seq)


#===----------------------------------------------------------------------===#
# Measurements
#===----------------------------------------------------------------------===#

class Bench:
    def __init__(self, torch, gen, args, model, reference):
        self.torch, self.gen, self.args = torch, gen, args
        self.model, self.ref = model, reference
        self.n_layers = len(model.layers)
        self.decode_one_token = gen.decode_one_token  # uncompiled original
        self.ref_logits = {}
        self.weight_bytes = weight_bytes(torch, model)
        self.read_bw = None  # bytes/s, measured on this GPU (read_ceiling)

    @property
    def floor_ms(self):  # the weights' read time at the measured rate
        return self.weight_bytes / self.read_bw * 1e3

    def prompt(self, batch):
        g = self.torch.Generator(device="cuda").manual_seed(1234)
        p = self.torch.randint(0, 1024, (self.args.prompt,), device="cuda",
                               generator=g, dtype=self.torch.int64)
        return p.view(1, -1).repeat(batch, 1)

    def forced_tokens(self, batch):
        g = self.torch.Generator(device="cuda").manual_seed(99)
        return self.torch.randint(0, 1024, (batch, self.args.check_steps),
                                  device="cuda", generator=g,
                                  dtype=self.torch.int64)

    @staticmethod
    def rel_err(a, ref):
        return ((a.float() - ref).abs().max() / ref.abs().max()).item()

    def eager_logits(self, model, batch):
        """Prefill, then check_steps teacher-forced steps: the logits."""
        torch = self.torch
        T = self.args.prompt
        setup_caches(torch, model, batch, T + self.args.check_steps + 8)
        with torch.no_grad():
            model(self.prompt(batch), torch.arange(0, T, device="cuda"))
            toks = self.forced_tokens(batch)
            out = []
            for s in range(self.args.check_steps):
                pos = torch.tensor([T + s], device="cuda", dtype=torch.int)
                out.append(model(toks[:, s:s + 1], pos)[:, -1].float())
        return out

    def check(self, batch):
        """max_rel_err of the model's eager logits against the fp32 copy."""
        if batch not in self.ref_logits:
            self.ref_logits[batch] = self.eager_logits(self.ref, batch)
        got = self.eager_logits(self.model, batch)
        return max(self.rel_err(g, r)
                   for g, r in zip(got, self.ref_logits[batch]))

    def decode(self, batch, steps):
        """generate.py's decode loop after an eager prefill: per-step ms
        (median of 3 runs of `steps`) and the first call's seconds."""
        torch, gen, T = self.torch, self.gen, self.args.prompt
        setup_caches(torch, self.model, batch, T + 3 * steps + 32)
        with torch.no_grad():
            tok = gen.prefill(self.model, self.prompt(batch),
                              torch.arange(0, T, device="cuda"),
                              temperature=TEMPERATURE, top_k=TOP_K).clone()
            pos = torch.tensor([T], device="cuda", dtype=torch.int)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            toks, _ = gen.decode_n_tokens(self.model, tok.view(batch, -1),
                                          pos, 3, temperature=TEMPERATURE,
                                          top_k=TOP_K)
            torch.cuda.synchronize()
            first = time.perf_counter() - t0
            cur = toks[-1]
            # As many steps as fit about a second (slow baselines get fewer).
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            toks, _ = gen.decode_n_tokens(self.model, cur, pos, 1,
                                          temperature=TEMPERATURE,
                                          top_k=TOP_K)
            torch.cuda.synchronize()
            steps = max(3, min(steps, int(1.0 / (time.perf_counter() - t0))))
            cur = toks[-1]
            runs = []
            for _ in range(3):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                toks, _ = gen.decode_n_tokens(self.model, cur, pos, steps,
                                              temperature=TEMPERATURE,
                                              top_k=TOP_K)
                torch.cuda.synchronize()
                runs.append((time.perf_counter() - t0) * 1e3 / steps)
                cur = toks[-1]
            prof = self.profile(batch, cur, pos, min(5, steps))
        return statistics.median(runs), runs, first, prof, steps

    def profile(self, batch, cur, pos, steps):
        torch, gen = self.torch, self.gen
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            gen.decode_n_tokens(self.model, cur, pos, steps,
                                temperature=TEMPERATURE, top_k=TOP_K)
            torch.cuda.synchronize()
        return profiler_summary(p, steps, self.n_layers)

    def compile_fresh(self):
        """A fresh compile of decode_one_token, as a new generate.py run."""
        torch = self.torch
        torch._dynamo.reset()
        self.gen.decode_one_token = torch.compile(
            self.decode_one_token, mode="reduce-overhead", fullgraph=True)

    def prefill_ms(self, tokens, reps=5):
        torch, gen = self.torch, self.gen
        setup_caches(torch, self.model, 1, tokens + 16)
        g = torch.Generator(device="cuda").manual_seed(7)
        x = torch.randint(0, 1024, (1, tokens), device="cuda", generator=g)
        pos = torch.arange(0, tokens, device="cuda")
        times = []
        with torch.no_grad():
            for i in range(reps + 1):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                gen.prefill(self.model, x, pos, temperature=TEMPERATURE,
                            top_k=TOP_K)
                torch.cuda.synchronize()
                if i:
                    times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times), times


def run_system(bench, rows, system, batches, args, extra_compile_s=0.0,
               extra=None):
    for i, b in enumerate(batches):
        err = bench.check(b)
        bench.compile_fresh()
        ms, runs, first, prof, steps = bench.decode(b, args.steps)
        inductor_s = first - 3 * ms / 1e3
        row = dict(system=system, phase="decode", B=b, ms_per_step=ms,
                   tokens_per_s=b * 1e3 / ms, max_rel_err=err,
                   compile_s=inductor_s + (extra_compile_s if i == 0 else 0),
                   inductor_compile_s=inductor_s,
                   steps=steps, runs_ms=runs, floor_ms=bench.floor_ms,
                   read_ceiling_gbs=bench.read_bw / 1e9,
                   profile=prof, model=args.model, run=args.run)
        if i == 0:  # what happened once, before the first batch size
            row.update(extra or {})
        rows.add(**row)
    if args.prefill:
        ms, times = bench.prefill_ms(args.prefill)
        rows.add(system=system, phase="prefill", B=1, tokens=args.prefill,
                 ms=ms, times_ms=times, model=args.model, run=args.run)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--gpt-fast", help="gpt-fast's folder (model.py, ...)")
    ap.add_argument("--out", help="results folder")
    ap.add_argument("--model", default="llama-3-8b")
    ap.add_argument("--mode", choices=("int8", "int4"), default="int8",
                    help="gpt-fast's quantization: int8 per channel, or int4 "
                         "in groups of --groupsize")
    ap.add_argument("--groupsize", type=int, default=128,
                    choices=(32, 64, 128, 256),
                    help="int4 group size (WeightOnlyInt4QuantHandler's "
                         "default, 128)")
    ap.add_argument("--batches", default="1,2,4,8,16,32")
    ap.add_argument("--systems", default="gpt-fast,mtc",
                    help="measured in this order")
    ap.add_argument("--baseline-batches", default=None,
                    help="batch sizes for gpt-fast (default: --batches)")
    ap.add_argument("--prefill", type=int, default=512,
                    help="prefill tokens at B = 1 (0: none)")
    ap.add_argument("--prompt", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--check-steps", type=int, default=3)
    ap.add_argument("--max-probes", type=int, default=None,
                    help="mtc tuning budget per kernel (default: swap's)")
    ap.add_argument("--no-tune", action="store_true")
    ap.add_argument("--fuse-max-rows", type=int,
                    help="mtc-fused: fuse_blocks' max_rows (unset: its own)")
    ap.add_argument("--no-grouped-attention", action="store_true",
                    help="mtc-fused: fuse_blocks(grouped_attention=False), "
                         "gpt-fast's attention with its copy of the cache")
    ap.add_argument("--recompile", action="store_true",
                    help="also time a second compile with warm caches")
    ap.add_argument("--run", default="", help="a label for this run's rows")
    ap.add_argument("--report", metavar="OUT",
                    help="only write OUT/results.md and OUT/plot.png")
    ap.add_argument("--check-args", action="store_true",
                    help="check the arguments and exit (bench/device.sh -n)")
    args = ap.parse_args()
    if args.report:
        sys.path.insert(0, str(HERE))
        import report
        report.write(Path(args.report))
        return
    if not args.gpt_fast or not args.out:
        ap.error("--gpt-fast and --out are needed")
    try:
        for opt in ("batches", "baseline_batches"):
            [int(b) for b in (getattr(args, opt) or "").split(",") if b]
    except ValueError as e:
        ap.error(f"--batches or --baseline-batches: {e}")
    systems_given = args.systems.split(",")
    for system in systems_given:
        if system not in ("gpt-fast", "mtc", "mtc-fused"):
            ap.error(f"--systems: unknown system '{system}' (gpt-fast, mtc, "
                     f"mtc-fused)")
    if "mtc-fused" in systems_given and (systems_given[-1] != "mtc-fused" or
                                         args.recompile):
        ap.error("--systems: mtc-fused changes the model's blocks: it comes "
                 "last, without --recompile")
    if args.check_args:
        return
    sys.path.insert(0, str(Path(args.gpt_fast).resolve()))
    sys.path.insert(0, str(HERE.parent.parent / "python"))
    import torch
    import generate as gen  # generate.py's inductor settings, as it runs
    import mtc.torch as mt

    batches = [int(b) for b in args.batches.split(",") if b]
    systems = args.systems.split(",")
    tags = {"mode": args.mode, "gpu": torch.cuda.get_device_name()}
    if args.mode == "int4":
        import quantize
        tags["groupsize"] = args.groupsize
        model, reference, info = build_int4_model(torch, args.model,
                                                  args.groupsize)
        tags["int4_pack"] = info["int4_pack"]

        def is_quantized(m):
            return isinstance(m, quantize.WeightOnlyInt4Linear)
    else:
        model = build_model(torch, args.model)
        reference = copy.deepcopy(model).float()
        info = {}
        is_quantized = mt.is_woq_module
    rows = Rows(args.out, tags)
    bench = Bench(torch, gen, args, model, reference)
    from mtc._tools import find_binary
    bench.read_bw = read_ceiling(find_binary())
    originals = [(parent, name, child)
                 for parent in model.modules()
                 for name, child in parent.named_children()
                 if is_quantized(child)]
    log(f"{len(originals)} {args.mode} linears, "
        f"{bench.weight_bytes / 1e9:.2f} GB of weights: a {bench.floor_ms:.3f} "
        f"ms read floor per step at this GPU's {bench.read_bw / 1e9:.0f} GB/s")

    probes = {} if args.max_probes is None else {"max_probes": args.max_probes}
    baseline = ([int(b) for b in args.baseline_batches.split(",") if b]
                if args.baseline_batches is not None else batches)
    failed = []
    for system in systems:  # in the order given
        # One system's failure (a compile error, say) is a row, not the end
        # of the run: the other system still runs (the exit status is 1).
        try:
            if system == "gpt-fast":
                for parent, name, child in originals:
                    setattr(parent, name, child)
                run_system(bench, rows, "gpt-fast", baseline, args,
                           extra=info)
            elif system == "mtc":
                t0 = time.time()
                mt.swap(model, tune=not args.no_tune, **probes)
                torch.cuda.synchronize()
                swap_s = time.time() - t0
                left = sum(1 for m in model.modules() if is_quantized(m))
                if left:
                    log(f"mtc: swap left {left} of {len(originals)} "
                        f"{args.mode} linears in place")
                if left == len(originals):
                    raise RuntimeError(f"mtc.torch.swap replaced none of the "
                                       f"{len(originals)} {args.mode} linears")
                run_system(bench, rows, "mtc", batches, args,
                           extra_compile_s=swap_s,
                           extra={"swap_s": swap_s, "unswapped": left})
            elif system == "mtc-fused":
                t0 = time.time()
                mt.swap(model, tune=not args.no_tune, **probes)
                fused, unfused = mt.fuse_blocks(
                    model,
                    grouped_attention=not args.no_grouped_attention,
                    **({"max_rows": args.fuse_max_rows}
                       if args.fuse_max_rows else {}))
                if not fused:
                    raise RuntimeError(f"mtc.torch.fuse_blocks fused no "
                                       f"block: {unfused[:3]}")
                torch.cuda.synchronize()
                swap_s = time.time() - t0
                run_system(bench, rows, "mtc-fused", batches, args,
                           extra_compile_s=swap_s,
                           extra={"swap_s": swap_s, "fused_blocks": fused,
                                  "unfused_blocks": len(unfused),
                                  "unfused_first": [list(u)
                                                    for u in unfused[:2]],
                                  "fuse_max_rows": args.fuse_max_rows,
                                  "grouped_attention":
                                      not args.no_grouped_attention})
        except Exception as e:
            import traceback
            traceback.print_exc()
            failed.append(system)
            rows.add(system=system, phase="error", B=0,
                     error=f"{type(e).__name__}: {e}"[:1000],
                     model=args.model, run=args.run)
    if args.recompile:
        b = batches[0]
        for system in systems:
            for parent, name, child in originals:
                setattr(parent, name, child)
            swap_s = 0.0
            if system == "mtc":
                mt.kernels = mt.Kernels()  # nothing loaded: from the caches
                t0 = time.time()
                mt.swap(model, tune=not args.no_tune, **probes)
                swap_s = time.time() - t0
            bench.compile_fresh()
            ms, _, first, _, _ = bench.decode(b, args.steps)
            rows.add(system=system, phase="recompile", B=b,
                     compile_s=first - 3 * ms / 1e3 + swap_s, swap_s=swap_s,
                     ms_per_step=ms, model=args.model, run=args.run)
    sys.path.insert(0, str(HERE))
    import report
    report.write(Path(args.out))
    if failed:
        log(f"failed: {', '.join(failed)} (rows of phase 'error')")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

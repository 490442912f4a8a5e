#!/usr/bin/env python3
"""Hugging Face Llama `generate()` in bf16, PyTorch's int8 and mtc's int8/int4, in one run.

The client is transformers' own LlamaForCausalLM, built from a config with
random weights (no hub access): Llama-3-8B's widths (vocab 128256, hidden
4096, intermediate 14336, 32 heads, 8 KV heads) and --layers decoder layers
(--tiny: a small config for a smoke run). Decoding is `model.generate()`
with a static cache (`cache_implementation="static"`), greedy, which
transformers compiles itself (its decode step under torch.compile with
CUDA graphs, mode "reduce-overhead"; here with fullgraph=True, which
transformers 5.17 leaves off by default, so a graph break fails the system
instead of running eagerly), while the prefill runs eagerly. A system that
fails gets a row with its `error` and the run goes on.

Systems (each a copy of the same bf16 model):
  bf16            the model as built
  torch-int8      every nn.Linear an int8 per-channel layer computing
                  F.linear(x, w.to(x.dtype)) * scales in PyTorch (what
                  Inductor compiles for gpt-fast's WeightOnlyInt8Linear),
                  with the same quantized tensors as mtc-int8
  mtc-int8        mtc.torch.quantize_(model, "int8")
  mtc-int8-fused  quantize_, then mtc.torch.fuse_blocks(model): each decoder
                  layer's post-attention RMSNorm, SwiGLU and int8 linears
                  are one mtc graph
  mtc-int4        mtc.torch.quantize_(model, "int4", group_size=--group)
All linears are quantized, lm_head included.

Per system and batch B, one JSON line in OUT/hf.jsonl:
  ms_per_step, tokens_per_s  decode steps of generate(): a stopping
                             criterion records the time of each step (the
                             loop synchronizes every step); the median step
                             after the first --skip, and B * 1000 / it
  e2e_tokens_per_s           B * new tokens / the whole generate() call
  compile_s                  the first generate() call (quantize_, mtc's
                             compile and transformers' torch.compile)
  max_rel_err, top1          last-position logits of a 2 x --prompt batch,
                             eager, against the fp32 model of the original
                             weights: max |l - ref| / max |ref| (quantization
                             included), and how often the argmax agrees
  kernel_rel_err             mtc systems: the same logits against PyTorch
                             computing the same quantized weights (eager
                             bf16, the int8 formula or the dequantized int4
                             weight): the kernels' error alone
  quant_err                  quantize_'s layer report: max output error
A table goes to OUT/hf.md.

    python3 bench/e2e/hf_llama.py --out OUT [--systems LIST] [--batches 1,8,32]
        [--layers 32] [--prompt 32] [--new-tokens 64] [--budget-s S] [--tiny]
"""
import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "python"))

SYSTEMS = ("bf16", "torch-int8", "mtc-int8", "mtc-int8-fused", "mtc-int4")


def log(*a):
    print(*a, flush=True)


def config(args):
    from transformers import LlamaConfig
    if args.tiny:
        dims = dict(vocab_size=1024, hidden_size=512, intermediate_size=1536,
                    num_attention_heads=8, num_key_value_heads=2)
    else:
        dims = dict(vocab_size=128256, hidden_size=4096,
                    intermediate_size=14336, num_attention_heads=32,
                    num_key_value_heads=8)
    return LlamaConfig(num_hidden_layers=args.layers, rms_norm_eps=1e-5,
                       rope_theta=500000.0, tie_word_embeddings=False,
                       max_position_embeddings=4096, **dims)


def torch_quantized(torch, F, model, kind, group):
    """Every nn.Linear -> PyTorch's formula of mtc's int8 (or int4)
    quantization of it: F.linear(x, q.to(x.dtype)) * scales, or F.linear
    of the dequantized int4 weight, rounded as mtc's graph rounds it."""
    from mtc.torch import dequantize_int4, quantize_int4, quantize_int8

    class TorchInt8Linear(torch.nn.Module):
        def __init__(self, w, s):
            super().__init__()
            self.register_buffer("weight", w)
            self.register_buffer("scales", s)

        def forward(self, x):
            return F.linear(x, self.weight.to(x.dtype)) * self.scales

    class TorchInt4Linear(torch.nn.Module):
        def __init__(self, w, s, z):
            super().__init__()
            self.register_buffer("weight", dequantize_int4(w, s, z, group))

        def forward(self, x):
            return F.linear(x, self.weight)

    for _, parent in list(model.named_modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                assert child.bias is None
                setattr(parent, name, TorchInt8Linear(
                    *quantize_int8(child.weight)) if kind == "int8" else
                    TorchInt4Linear(*quantize_int4(child.weight, group)))


def make(torch, F, base, system, args, row):
    import mtc.torch as mt
    model = copy.deepcopy(base)
    if system == "torch-int8":
        torch_quantized(torch, F, model, "int8", args.group)
    elif system.startswith("mtc-"):
        kind = "int4" if system == "mtc-int4" else "int8"
        report = mt.quantize_(model, kind, group_size=args.group,
                              progress=False)
        row["quant_err"] = report.max_error
        row["left"] = report.left
        if system == "mtc-int8-fused":
            fused, left = mt.fuse_blocks(model)
            row["fused_layers"], row["fuse_left"] = fused, left
            if not fused:
                raise RuntimeError(f"fuse_blocks fused nothing: {left}")
    return model


class StepClock:
    """A stopping criterion that stops nothing and records when each
    decode step ends."""

    def __init__(self, torch):
        self.torch, self.times = torch, []

    def __call__(self, input_ids, scores, **kwargs):
        self.torch.cuda.synchronize()
        self.times.append(time.perf_counter())
        return self.torch.zeros(input_ids.shape[0], dtype=self.torch.bool,
                                device=input_ids.device)


def generate(torch, model, ids, args):
    from transformers import CompileConfig, StoppingCriteriaList
    clock = StepClock(torch)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = model.generate(
        ids, attention_mask=torch.ones_like(ids), do_sample=False,
        max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens,
        cache_implementation="static", pad_token_id=0,
        compile_config=CompileConfig(fullgraph=True),
        stopping_criteria=StoppingCriteriaList([clock]))
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    steps = [b - a for a, b in zip(clock.times, clock.times[1:])]
    return out, total, steps[args.skip:]


def last_logits(torch, model, ids):
    with torch.no_grad():
        return model(ids).logits[:, -1].float()


def compare(out, ref):
    """(max |out - ref| / max |ref|, how often the argmax agrees)."""
    err = (out - ref).abs().max().item() / ref.abs().max().item()
    top1 = (out.argmax(-1) == ref.argmax(-1)).float().mean().item()
    return err, top1


def fail(path, row, e):
    row = dict(row, error=f"{type(e).__name__}: {str(e)[:2000]}")
    log(f"{row['system']} failed: {row['error']}")
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--batches", default="1,8,32")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--skip", type=int, default=8,
                    help="decode steps not timed at the start")
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--budget-s", type=float, default=0,
                    help="start no (system, B) after this many seconds")
    ap.add_argument("--tiny", action="store_true")
    args = ap.parse_args()
    systems = args.systems.split(",")
    bad = [s for s in systems if s not in SYSTEMS]
    if bad:
        ap.error(f"--systems: unknown {bad}; known: {', '.join(SYSTEMS)}")
    batches = [int(b) for b in args.batches.split(",")]
    if args.new_tokens <= args.skip + 2:
        ap.error("--new-tokens must exceed --skip + 2")

    import torch
    import torch.nn.functional as F
    import transformers
    from transformers import LlamaForCausalLM
    torch._dynamo.config.cache_size_limit = 64
    start = time.monotonic()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    log(f"transformers {transformers.__version__}, torch {torch.__version__}"
        f", {torch.cuda.get_device_name()}")

    torch.manual_seed(0)
    cfg = config(args)
    with torch.device("cuda"):
        base = LlamaForCausalLM(cfg).to(torch.bfloat16).eval()
    gen = torch.Generator(device="cuda").manual_seed(1)
    check_ids = torch.randint(0, cfg.vocab_size, (2, args.prompt),
                              generator=gen, device="cuda")
    with torch.no_grad():
        ref_model = copy.deepcopy(base).float()
        ref = last_logits(torch, ref_model, check_ids)
        del ref_model
    # PyTorch on mtc's quantized weights: the reference of each mtc system's
    # kernels.
    quant_ref = {}
    for kind in ("int8", "int4"):
        if any(s.startswith("mtc-") and (s == "mtc-int4") == (kind == "int4")
               for s in systems):
            with torch.no_grad():
                q = copy.deepcopy(base)
                torch_quantized(torch, F, q, kind, args.group)
                quant_ref[kind] = last_logits(torch, q, check_ids)
                del q
    torch.cuda.empty_cache()

    rows = []
    path = out_dir / "hf.jsonl"
    for system in systems:
        if args.budget_s and time.monotonic() - start > args.budget_s:
            log(f"budget: {system} not started")
            break
        torch._dynamo.reset()
        row0 = {"system": system, "layers": args.layers,
                "tiny": args.tiny, "prompt": args.prompt,
                "new_tokens": args.new_tokens,
                "transformers": transformers.__version__}
        t0 = time.monotonic()
        try:
            model = make(torch, F, base, system, args, row0)
            make_s = time.monotonic() - t0
            out = last_logits(torch, model, check_ids)
            row0["max_rel_err"], row0["top1"] = compare(out, ref)
            kind = "int4" if system == "mtc-int4" else "int8"
            if system.startswith("mtc-"):
                row0["kernel_rel_err"], _ = compare(out, quant_ref[kind])
        except Exception as e:  # a failed system is a result too
            fail(path, row0, e)
            continue
        log(f"{system}: made in {make_s:.1f} s, logits max rel err "
            f"{row0['max_rel_err']:.3e}, top-1 {row0['top1']:.2f}, kernels "
            f"vs PyTorch on the same weights {row0.get('kernel_rel_err')}")
        for b in batches:
            if args.budget_s and time.monotonic() - start > args.budget_s:
                log(f"budget: {system} B={b} not started")
                break
            ids = torch.randint(0, cfg.vocab_size, (b, args.prompt),
                                generator=gen, device="cuda")
            t0 = time.monotonic()
            try:
                generate(torch, model, ids, args)
                compile_s = time.monotonic() - t0 + make_s
                _, total, steps = generate(torch, model, ids, args)
            except Exception as e:
                fail(path, dict(row0, batch=b), e)
                break
            ms = 1000 * statistics.median(steps)
            row = dict(row0, batch=b, ms_per_step=ms,
                       tokens_per_s=b * 1000 / ms,
                       e2e_tokens_per_s=b * args.new_tokens / total,
                       compile_s=compile_s,
                       step_ms_min=1000 * min(steps),
                       step_ms_max=1000 * max(steps))
            rows.append(row)
            with open(path, "a") as f:
                f.write(json.dumps(row) + "\n")
            log(f"{system} B={b}: {ms:.3f} ms/step, "
                f"{row['tokens_per_s']:.0f} tok/s (generate() end to end "
                f"{row['e2e_tokens_per_s']:.0f}), first call {compile_s:.0f} s")
        del model
        torch.cuda.empty_cache()
    write_table(rows, out_dir / "hf.md")


def write_table(rows, path):
    lines = ["| system | B | ms/step | tokens/s | generate() tokens/s | "
             "first call s | logits max rel err vs fp32 | top-1 agree | "
             "vs PyTorch on the same weights |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        k = r.get("kernel_rel_err")
        lines.append(
            f"| {r['system']} | {r['batch']} | {r['ms_per_step']:.3f} | "
            f"{r['tokens_per_s']:.0f} | {r['e2e_tokens_per_s']:.0f} | "
            f"{r['compile_s']:.0f} | {r['max_rel_err']:.2e} | "
            f"{r['top1']:.2f} | {'-' if k is None else f'{k:.2e}'} |")
    path.write_text("\n".join(lines) + "\n")
    log("\n".join(lines))


if __name__ == "__main__":
    main()

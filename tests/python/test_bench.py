"""The benchmark tools' parts that run without a GPU: compare.py's report
rebuilt from published rows, device.sh's command-line check (--dry-run),
the arguments it gives mtc (through a fake mtc) and the GPU matrix's case
selection."""
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = ROOT / "bench" / "results" / "2026-12-01-wgmma" / "results.jsonl"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kw)


def test_compare_report_from_published_rows(tmp_path):
    p = run([sys.executable, "bench/compare.py", "--mtc", "none", "--out",
             str(tmp_path), "--report-only", "--merge", str(ROWS), "--ms",
             "64,128,256", "--shapes", "all", "--systems", "mtc,cublas_bf16"])
    assert p.returncode == 0, p.stderr
    md = (tmp_path / "results.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 3 * 7, md  # the header, 7 shapes at 3 M's
    assert "| 8192x8192 | 128 | 15.4 | 48.1 | 41.6 |" in md
    assert "- M = 128: bf16 cuBLAS 0.90x (7 shapes)" in md
    assert (tmp_path / "results.json").is_file()


def test_device_sh_checks_every_line_before_running(tmp_path):
    ok = run(["bench/device.sh", "-n", "--out", str(tmp_path), "matrix",
              "--only", "wgmma", "ncu", "--ms", "128", "--schedule",
              "wgmma w8 r1 mt128 st6"])
    assert ok.returncode == 0, ok.stderr
    assert "ncu --ms 128 --schedule 'wgmma w8 r1 mt128 st6'" in ok.stdout
    bad = run(["bench/device.sh", "-n", "--out", str(tmp_path), "matrix",
               "ncu", "--shape", "8192x8192"])
    assert bad.returncode == 2
    assert "ncu needs --ms LIST" in bad.stderr + bad.stdout


def test_gpu_matrix_only_selects_cases(tmp_path):
    # A selection that matches nothing, or a bad pattern, is a usage error
    # before any GPU work.
    for pattern, why in (("no_such_case", "no case matches"),
                         ("wgmma(", "--only")):
        p = run([sys.executable, "tests/gpu/gpu_tests.py", "--mtc",
                 "/bin/false", "--only", pattern])
        assert p.returncode == 2
        assert why in p.stderr


FAKE_MTC = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/args.txt"
case $2 in *.graph) cat "$2" >> "$(dirname "$0")/graphs.txt" ;; esac
echo '{"device": "fake", "read_ceiling_gbs": 1, "launch_floor_us": 1,
  "graphs": [{"graph": "g", "kernels": [{"schedule": "s", "median_us": 1.0,
  "gbs": 1, "pct_of_read_ceiling": 1, "registers": 1, "local_bytes": 0}]}]}'
"""


def fake_mtc(tmp_path):
    """FAKE_MTC as an executable `mtc` in tmp_path (it logs there)."""
    mtc = tmp_path / "mtc"
    mtc.write_text(FAKE_MTC)
    mtc.chmod(0o755)
    return mtc


def test_device_sh_passes_arch_to_mtc(tmp_path):
    # The heuristic's kernel for sm_90a (the wgmma kind from M = 64) is only
    # what mtc compiles with --arch sm_90a: points, bench and tune pass it
    # on; a wgmma schedule gets it without asking.
    mtc = fake_mtc(tmp_path)
    points = tmp_path / "points.in"
    points.write_text("64 8192x8192 heuristic  # a trailing comment\n"
                      "64 8192x8192 wgmma w8 r1 mt64 st8  # another\n")
    p = run(["bench/device.sh", "--out", str(tmp_path / "out"), "--mtc",
             str(mtc), "points", "--arch", "sm_90a", str(points), "bench",
             "--ms", "64", "--shape", "8192x8192", "--arch", "sm_90a",
             "tune", "--ms", "64", "--arch", "sm_90a", "points", str(points)])
    assert p.returncode == 0, p.stdout + p.stderr
    calls = (tmp_path / "args.txt").read_text().splitlines()
    assert len(calls) == 6, calls
    # points (both lines), bench, tune: all with --arch sm_90a
    assert all("--arch sm_90a" in c for c in calls[:4]), calls
    assert calls[3].startswith("tune "), calls
    # a trailing comment is not part of the schedule
    assert "--schedule" not in calls[0], calls
    assert "--schedule 0=wgmma w8 r1 mt64 st8 " in calls[1] + " ", calls
    # points without --arch: mtc's default for the heuristic line, sm_90a
    # for the wgmma schedule
    assert "--arch" not in calls[4], calls
    assert "--schedule 0=wgmma" in calls[5] and "--arch sm_90a" in calls[5]
    bad = run(["bench/device.sh", "-n", "bench", "--ms", "64", "--arch",
               "90a"])
    assert bad.returncode == 2
    assert "--arch needs an mtc --arch value" in bad.stderr + bad.stdout


def test_points_take_any_shape(tmp_path):
    # points times the suite's int8 layer at any M and N x K (the zoo's
    # shapes included); a line that is not "M NxK SCHEDULE" is refused
    # before anything runs.
    good = tmp_path / "good.txt"
    good.write_text("# a comment\n3 2240x8704 heuristic\n"
                    "128 10624x22016 wgmma w8 r1 kw1 v16 u1 mt128 sk2 st4\n")
    ok = run(["bench/device.sh", "-n", "--out", str(tmp_path), "points",
              str(good)])
    assert ok.returncode == 0, ok.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("0 4096x4096 heuristic\n")
    p = run(["bench/device.sh", "-n", "--out", str(tmp_path), "points",
             str(bad)])
    assert p.returncode == 2
    assert "bad.txt:1: expected 'M NxK SCHEDULE'" in p.stderr + p.stdout


def test_points_check_outputs_first(tmp_path, monkeypatch):
    # --check runs each point through `mtc run --check` (without --replays)
    # before `mtc bench`, and marks the times it checked...
    mtc = fake_mtc(tmp_path)
    points = tmp_path / "points.in"
    points.write_text("32 4096x4096 tiled w2 r1 kw1 v64 u1 mt16 sk1 st4\n")
    p = run(["bench/device.sh", "--out", str(tmp_path / "out"), "--mtc",
             str(mtc), "points", "--check", "--replays", "7", str(points)])
    assert p.returncode == 0, p.stdout + p.stderr
    calls = (tmp_path / "args.txt").read_text().splitlines()
    assert calls[0].startswith("run ") and " --check " in calls[0] + " "
    assert "--replays" not in calls[0], calls
    assert calls[1].startswith("bench ") and "--replays 7" in calls[1]
    assert "--schedule 0=tiled w2 r1" in calls[0] and "mt16" in calls[1]
    assert p.stdout.rstrip().endswith("0 local, checked"), p.stdout
    # ...and does not time a point whose outputs differ: the real mtc on the
    # runtime's fake driver, whose kernels never write them.
    from conftest import FAKE_CUDA
    if not Path(FAKE_CUDA).is_file():
        return
    monkeypatch.setenv("MTC_CUDA_LIBRARY", FAKE_CUDA)
    small = tmp_path / "small.in"  # a small fp64 reference, even under ASan
    small.write_text("2 256x256 heuristic\n")
    bad = run(["bench/device.sh", "--out", str(tmp_path / "out2"), "--mtc",
               os.environ["MTC_BINARY"], "points", "--check", str(small)])
    assert bad.returncode == 0, bad.stdout + bad.stderr
    assert ("check failed: mtc: error: outputs differ from the fp64 "
            "reference") in bad.stdout, bad.stdout
    assert " us " not in bad.stdout.splitlines()[-1]


def test_points_int4(tmp_path):
    # --weights int4 times gpt-fast's int4 layer (groups of 128) instead of
    # the int8 one; anything else is refused.
    mtc = fake_mtc(tmp_path)
    points = tmp_path / "points.in"
    points.write_text("1 4096x4096 heuristic\n")
    p = run(["bench/device.sh", "--out", str(tmp_path / "out"), "--mtc",
             str(mtc), "points", "--weights", "int4", str(points)])
    assert p.returncode == 0, p.stdout + p.stderr
    graphs = (tmp_path / "graphs.txt").read_text()
    assert "w: i4[4096, 4096]" in graphs and "bf16[4096, 32]" in graphs
    bad = run(["bench/device.sh", "-n", "points", "--weights", "int2",
               str(points)])
    assert bad.returncode == 2
    assert "--weights takes int8 or int4" in bad.stderr + bad.stdout


def test_tune_int4_and_its_summary(tmp_path):
    # tune --weights int4 tunes gpt-fast's int4 layer at the --shape given
    # (not the suite's int8 graph) into its own log, and the summary line is
    # mtc tune's result line, not the last probe of --verbose; int4 with
    # --shape all is refused before anything runs.
    mtc = tmp_path / "mtc"
    mtc.write_text("""#!/bin/sh
echo "$@" >> "$(dirname "$0")/args.txt"
cat "$2" >> "$(dirname "$0")/graphs.txt"
echo "  k0 probe 2: mma w4 r1 kw4 v64 u2 mt8 sk1 5.00 us  best 4.00 us"
echo "k0: mma w8 r1 kw8 v64 u2 mt8 sk1 4.00 us (heuristic mma w4 r1 kw4 \
v64 u2 mt8 sk1 5.00 us, 1.25x), 2 probes, 0.1 s"
echo "target: sm_90a, schedules sized for fake"
""")
    mtc.chmod(0o755)
    out = tmp_path / "out"
    p = run(["bench/device.sh", "--out", str(out), "--mtc", str(mtc), "tune",
             "--ms", "1", "--weights", "int4", "--shape", "2048x2048",
             "--max-probes", "2"])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "M=1: k0: mma w8 r1 kw8 v64 u2 mt8 sk1 4.00 us (heuristic" in \
        p.stdout
    assert (out / "tune_m1_2048x2048_int4.txt").is_file()
    graphs = (tmp_path / "graphs.txt").read_text()
    assert "w: i4[2048, 2048]" in graphs and "bf16[2048, 16]" in graphs
    args = (tmp_path / "args.txt").read_text()
    assert args.startswith("tune ") and "--max-probes 2" in args
    assert "woq_m1.graph" not in args
    bad = run(["bench/device.sh", "-n", "tune", "--ms", "1", "--weights",
               "int4", "--shape", "all"])
    assert bad.returncode == 2
    assert "takes one --shape NxK" in bad.stderr + bad.stdout
    bad = run(["bench/device.sh", "-n", "tune", "--ms", "1", "--weights",
               "int2"])
    assert bad.returncode == 2
    assert "--weights takes int8 or int4" in bad.stderr + bad.stdout


def test_step_profile_counts_launches_by_kernel():
    """bench/e2e/report.py's step_profile: per-step time and launches from
    the profiler's events, copies not counted as launches, each kernel's
    census and its category."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from report import step_profile
    events = [("ffn_4096x14336_bf16_k0", 2000.0, 64),
              ("woq_128256x4096_bf16_k0", 250.0, 2),
              ("cudnn_generated_fort_native_sdpa_sm80_flash", 400.0, 64),
              ("triton_poi_fused_add_mul_rope", 100.0, 128),
              ("Memcpy DtoD (Device -> Device)", 10.0, 6),
              ("never ran", 0.0, 3)]
    p = step_profile(events, steps=2, n_layers=32)
    assert p["launches_per_step"] == (64 + 2 + 64 + 128) / 2
    assert p["launches_per_layer"] == p["launches_per_step"] / 32
    assert abs(p["kernel_ms_per_step"] - 2.76 / 2) < 1e-9
    assert p["mtc_ffn_ms_per_step"] == 1.0
    assert p["mtc_linear_ms_per_step"] == 0.125
    assert p["breakdown"] == {"attention": [0.2, 32.0],
                              "mtc fused graphs": [1.0, 32.0],
                              "mtc linears": [0.125, 1.0],
                              "other": [0.05, 64.0]}
    # The census: most launches first; no copy, nothing that did not run.
    assert list(p["kernels"])[0] == "triton_poi_fused_add_mul_rope"
    assert p["kernels"]["triton_poi_fused_add_mul_rope"] == [0.05, 64.0]
    assert "Memcpy DtoD (Device -> Device)" not in p["kernels"]
    assert "never ran" not in p["kernels"]
    assert p["top"][0] == ["ffn_4096x14336_bf16_k0", 1.0]


def test_gpu_timeline_span_and_gaps():
    """report.py's gpu_timeline: the span from the first kernel to the last
    and the time inside it that no kernel ran, per step; overlapping
    kernels (two streams) count once."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from report import gpu_timeline
    t = gpu_timeline([(100.0, 200.0), (150.0, 250.0), (300.0, 400.0),
                      (390.0, 395.0), (500.0, 500.0)], steps=2)
    # Span 100..400 = 300 µs; busy 150 + 100; gap 50 µs. Per step: / 2.
    assert t == {"gpu_span_ms_per_step": 0.15, "gpu_idle_ms_per_step": 0.025}
    assert gpu_timeline([], steps=1) == {}


def test_profiler_summary_with_and_without_the_events_fields():
    """report.py's profiler_summary: the census from key_averages, the
    timeline from the events; a profiler whose events lack the fields
    costs the summary its timeline only."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from types import SimpleNamespace as NS

    import torch
    from report import profiler_summary
    cuda = torch.autograd.DeviceType.CUDA

    class Prof:
        def __init__(self, events):
            self._events = events

        def key_averages(self):
            return [NS(key="nlin_6144x4096_bf16_k0", self_cuda_time_total=30.0,
                       count=2)]

        def events(self):
            return self._events

    kernel = NS(name="nlin_6144x4096_bf16_k0", device_type=cuda,
                time_range=NS(start=0.0, end=10.0))
    copy = NS(name="Memcpy DtoD", device_type=cuda,
              time_range=NS(start=20.0, end=30.0))
    later = NS(name="nlin_6144x4096_bf16_k0", device_type=cuda,
               time_range=NS(start=40.0, end=60.0))
    p = profiler_summary(Prof([kernel, copy, later]), steps=2, n_layers=1)
    assert p["launches_per_step"] == 1.0
    assert p["gpu_span_ms_per_step"] == 0.03
    assert p["gpu_idle_ms_per_step"] == 0.015
    bare = profiler_summary(Prof([NS(name="x")]), steps=2, n_layers=1)
    assert bare["launches_per_step"] == 1.0
    assert "gpu_span_ms_per_step" not in bare


def test_census_table_per_layer():
    """report.py's census table: launches per layer by kernel for each
    decode row, kernels launched less than every other layer left out."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from report import census_table, step_profile
    swap = step_profile([("woq_6144x4096_bf16_k0", 300.0, 64),
                         ("triton_red_fused_mean_rsqrt", 100.0, 128),
                         ("triton_poi_sample", 50.0, 2)], steps=2,
                        n_layers=32)
    fused = step_profile([("nlin_6144x4096_bf16_k0", 300.0, 64),
                          ("triton_poi_sample", 50.0, 2)], steps=2,
                         n_layers=32)
    rows = {("mtc", "decode", 1): {"profile": swap},
            ("mtc-fused", "decode", 1): {"profile": fused},
            ("mtc", "prefill", 1): {"ms": 30.0}}
    lines = census_table(rows).splitlines()
    assert lines[0] == "| kernel | mtc B=1 | mtc-fused B=1 |"
    assert "| `triton_red_fused_mean_rsqrt` | 2.00 | - |" in lines
    assert "| `nlin_6144x4096_bf16_k0` | - | 1.00 |" in lines
    assert not any("triton_poi_sample" in line for line in lines)
    assert lines[-2] == \
        "| kernels launched at least once a layer | 3.00 | 1.00 |"
    assert lines[-1] == "| all kernels | 3.03 | 1.03 |"
    assert census_table({("mtc", "prefill", 1): {"ms": 30.0}}) == ""


def test_read_ceiling_is_the_gpu_at_hands(tmp_path):
    """bench/e2e/ceiling.py: the e2e floors' read rate is what `mtc bench`
    measures where the run is (a fake mtc here), and a failed measurement
    ends the run with mtc's message instead of a constant's floor."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from ceiling import read_ceiling
    fake = tmp_path / "mtc"
    fake.write_text("#!/bin/sh\n"
                    "case \"$1 $3 $4 $5\" in\n"
                    "'bench --json --replays 5') "
                    "echo '{\"read_ceiling_gbs\": 3012.5, \"graphs\": []}' ;;\n"
                    "*) echo \"mtc: error: unexpected $*\" >&2; exit 1 ;;\n"
                    "esac\n")
    fake.chmod(0o755)
    assert read_ceiling(str(fake)) == 3012.5e9
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'mtc: error: no CUDA driver' >&2\n"
                      "exit 2\n")
    broken.chmod(0o755)
    try:
        read_ceiling(str(broken))
    except SystemExit as e:
        assert "(exit 2): mtc: error: no CUDA driver" in str(e)
    else:
        raise AssertionError("a failed measurement must end the run")


def test_step_targets_are_the_h200s():
    """report.py's issue-24 targets: a line per system (mtc and mtc-fused)
    and batch size; met/MISSED on an H200, and said not to apply elsewhere
    rather than MISSED."""
    sys.path.insert(0, str(ROOT / "bench" / "e2e"))
    from report import INT4_TARGETS_MS, TARGETS_MS, step_targets
    h200, h100 = "NVIDIA H200", "NVIDIA H100 80GB HBM3"
    rows = {("mtc", "decode", 1): {"ms_per_step": 3.1, "gpu": h200},
            ("mtc-fused", "decode", 1): {"ms_per_step": 2.2, "gpu": h200},
            ("mtc-fused", "decode", 8): {"ms_per_step": 2.0, "gpu": h100},
            ("gpt-fast", "decode", 1): {"ms_per_step": 5.0, "gpu": h200}}
    lines = step_targets(rows, TARGETS_MS)
    assert lines == [
        "- mtc B=1: 3.100 ms per step (target <= 2.3): MISSED",
        "- mtc-fused B=1: 2.200 ms per step (target <= 2.3): met",
        "- mtc-fused B=8: 2.000 ms per step (target <= 2.8): not comparable "
        f"(H200 target; ran on {h100})"]
    assert step_targets({("mtc-fused", "decode", 1):
                         {"ms_per_step": 1.7}}, INT4_TARGETS_MS) == [
        "- mtc-fused B=1: 1.700 ms per step (target <= 1.6): MISSED"]

"""The benchmark tools' parts that run without a GPU: compare.py's report
rebuilt from published rows, device.sh's command-line check (--dry-run) and
the GPU matrix's case selection."""
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

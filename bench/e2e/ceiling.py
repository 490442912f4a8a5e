"""The streaming-read rate of the GPU at hand, as `mtc bench` measures it
(its read kernel over 1 GiB, CUDA-graph replays): the e2e scripts' weight-read
floors are the weights' bytes at this rate, on whichever GPU the run has, not
at one GPU's constant."""
import json
import subprocess
import tempfile
from pathlib import Path

# The smallest graph `mtc bench` runs: its kernel takes microseconds; the
# measurement is the read kernel's, which `mtc bench` runs before any graph.
_GRAPH = """graph ceiling(x: bf16[1, 256], w: i8[256, 256]) -> bf16[1, 256] {
  wf = convert(w, bf16)
  y = linear(x, wf)
  return y
}
"""


def read_ceiling(binary: str) -> float:
    """Bytes per second. A failure raises SystemExit with mtc's message: a
    floor from another GPU's rate would mislead."""
    with tempfile.TemporaryDirectory() as tmp:
        graph = Path(tmp) / "ceiling.graph"
        graph.write_text(_GRAPH)
        r = subprocess.run([binary, "bench", str(graph), "--json",
                            "--replays", "5"], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"mtc bench could not measure the read ceiling "
                         f"(exit {r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout)["read_ceiling_gbs"] * 1e9

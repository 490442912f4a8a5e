#!/usr/bin/env bash
# One-off: ncu of int4 kernels (see bench/results notes).
set -u
M=.device/bin/mtc; D=$(mktemp -d); R=$1
gen() { python3 - "$@" <<'PY'
import sys
m, n, k, G = map(int, sys.argv[1:5])
print(f"graph w4_m{m}(x: bf16[{m}, {k}], w: i4[{n}, {k}], scales: bf16[{n}, {k//G}], zeros: bf16[{n}, {k//G}]) -> bf16[{m}, {n}] {{\n  wf = convert(w, bf16)\n  s = repeat(scales, {G})\n  z = repeat(zeros, {G})\n  ws = mul(wf, s)\n  wd = add(ws, z)\n  y = linear(x, wd)\n  return y\n}}")
PY
}
i=0
while IFS='|' read -r m sched; do
  i=$((i+1)); gen $m 8192 8192 128 > $D/g$i.graph
  echo "== M=$m $sched" >> $R/ncu.txt
  timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats --section MemoryWorkloadAnalysis -c 1 $M run $D/g$i.graph --arch sm_90a --schedule "0=$sched" >> $R/ncu.txt 2>&1
done <<'LIST'
1|mma w4 r1 kw4 v64 u2 mt8 sk1
1|simt w4 r4 kw1 v16 u2 mt1 sk1
16|mma w16 r1 kw8 v16 u2 mt16 sk1
LIST

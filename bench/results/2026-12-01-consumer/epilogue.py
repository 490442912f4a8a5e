# Epilogue cost, scale alone vs scale + bias + silu, for each mtc binary given (argv[1:]).
import json, os, subprocess, sys
sys.path.insert(0, "tests/gpu")
from gpu_tests import woq
os.makedirs(".device/epi", exist_ok=True)
for mtc in sys.argv[1:]:
    for m, n, k in ((128, 4096, 4096), (2048, 4096, 4096), (33, 11008, 4096), (48, 4096, 4096), (1024, 8192, 8192)):
        res = {}
        for epi in ("scale", "scale_bias_silu"):
            name = f"epi_{epi}_m{m}_{n}x{k}"
            path = f".device/epi/{name}.graph"
            open(path, "w").write(woq(name, m, n, k, epilogue=epi))
            p = subprocess.run([mtc, "bench", path, "--arch", "sm_90a", "--json"], capture_output=True, text=True)
            if p.returncode:
                print(mtc, name, "FAILED", p.stderr[-400:]); continue
            k0 = json.loads(p.stdout)["graphs"][0]["kernels"]
            res[epi] = (sum(x["median_us"] for x in k0), " + ".join(x["schedule"] for x in k0))
        if len(res) == 2:
            a, b = res["scale"], res["scale_bias_silu"]
            print(f"{mtc}: M={m} {n}x{k}: scale {a[0]:.1f} us [{a[1]}], scale+bias+silu {b[0]:.1f} us [{b[1]}]: +{100 * (b[0] / a[0] - 1):.1f}%", flush=True)

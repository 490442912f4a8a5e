# -*- Python -*-
# lit configuration for mtc: FileCheck tests of the dialects, passes, the PTX
# and the command line.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "mtc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".graph", ".test"]
config.excludes = ["inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mtc_obj_root, "tests", "lit")

# Captures cannot leak across CHECK-LABELs.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope --dump-input=fail"

llvm_config.with_system_environment(
    ["HOME", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%mtc-opt", os.path.join(config.mtc_tools_dir, "mtc-opt")))
config.substitutions.append(("%mtc", os.path.join(config.mtc_tools_dir, "mtc")))
config.substitutions.append(("%examples", os.path.join(config.mtc_src_root, "examples")))

# The fake CUDA driver of the runtime's unit tests: lets the tuner and the
# cache be tested end to end on machines without a GPU.
if os.path.exists(config.fakecuda):
    config.available_features.add("fakecuda")
    config.substitutions.append(("%fakecuda", config.fakecuda))

# PTX checks that need NVIDIA's assembler run where the CUDA toolkit is.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))

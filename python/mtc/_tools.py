"""Where the mtc binary and libmtc_runtime.so are, and mtc's errors."""
import os
import shutil
from pathlib import Path

# A wheel's binaries (python/setup.py puts them there).
_PACKAGE = Path(__file__).resolve().parent
# python/mtc/_tools.py -> the repository root, when running from a checkout.
_REPO = _PACKAGE.parent.parent
_BUILD_DIRS = ("build", "build-static")


class MtcError(RuntimeError):
    """mtc failed: the compiler, the runtime library or the CUDA driver."""


class MtcNotFoundError(MtcError, FileNotFoundError):
    """The mtc binary or libmtc_runtime.so is not where mtc looked."""


def _search(what, env, candidates):
    looked = []
    value = os.environ.get(env)
    if value:
        if Path(value).is_file():
            return str(Path(value))
        looked.append(f"${env}={value} (no such file)")
    else:
        looked.append(f"${env} (unset)")
    for c in candidates:
        if isinstance(c, tuple):  # ("PATH", name)
            found = shutil.which(c[1])
            if found:
                return found
            looked.append(f"{c[1]} on $PATH")
            continue
        if c.is_file():
            return str(c)
        looked.append(str(c))
    raise MtcNotFoundError(
        f"cannot find {what}; looked in: " + ", ".join(looked) +
        f". Build mtc (README.md, Quick start) or set ${env}")


def find_binary():
    """The mtc compiler: $MTC_BINARY, then the one installed with this
    package (a wheel's mtc/bin/mtc), then `mtc` on $PATH, then the build
    folders of the checkout this package lives in."""
    return _search("the mtc binary", "MTC_BINARY",
                   [_PACKAGE / "bin" / "mtc", ("PATH", "mtc")] +
                   [_REPO / d / "bin" / "mtc" for d in _BUILD_DIRS])


def find_runtime_library():
    """libmtc_runtime.so: $MTC_RUNTIME_LIBRARY, then the one installed with
    this package (mtc/lib), then next to the mtc binary (../lib), then the
    build folders of the checkout."""
    candidates = [_PACKAGE / "lib" / "libmtc_runtime.so"]
    binary = os.environ.get("MTC_BINARY") or shutil.which("mtc")
    if binary:
        candidates.append(Path(binary).resolve().parent.parent / "lib" /
                          "libmtc_runtime.so")
    candidates += [_REPO / d / "lib" / "libmtc_runtime.so" for d in _BUILD_DIRS]
    return _search("libmtc_runtime.so", "MTC_RUNTIME_LIBRARY", candidates)

"""python/ as a package: a wheel built from a copy of it (pip wheel
--no-build-isolation, Debian's setuptools) holds the mtc binary and
libmtc_runtime.so of the build under test, tagged for this platform;
installed elsewhere, `import mtc` finds both inside the package; a build
without a CMake build folder fails with a message that says what to do."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import BUILD, ROOT

PIP = [sys.executable, "-m", "pip"]


def _have_pip():
    try:
        import setuptools  # noqa: F401
        import wheel  # noqa: F401
    except ImportError:
        return False
    return subprocess.run(PIP + ["--version"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(
    not _have_pip(), reason="pip, setuptools or wheel is missing (Debian: "
    "python3-pip python3-setuptools python3-wheel)")


def _source(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "python", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                  "__pycache__"))
    return src


def _wheel(src, out, build_dir):
    env = dict(os.environ, MTC_BUILD_DIR=str(build_dir))
    return subprocess.run(
        PIP + ["wheel", "--no-build-isolation", "--no-deps", "--no-index",
               "-q", str(src), "-w", str(out)],
        capture_output=True, text=True, env=env, cwd=out.parent)


def test_wheel_ships_the_binaries(tmp_path):
    if not (BUILD / "bin" / "mtc").is_file():
        pytest.skip(f"no mtc build at {BUILD}")
    out = tmp_path / "wheels"
    out.mkdir()
    r = _wheel(_source(tmp_path), out, BUILD)
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("mtc-0.1.0-*.whl")
    assert not whl.name.endswith("-none-any.whl")  # a platform wheel
    names = zipfile.ZipFile(whl).namelist()
    assert {"mtc/bin/mtc", "mtc/lib/libmtc_runtime.so", "mtc/torch.py",
            "mtc/_quantize.py"} <= set(names)
    site = tmp_path / "site"
    r = subprocess.run(PIP + ["install", "-q", "--no-deps", "--no-index",
                              "--target", str(site), str(whl)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = {k: v for k, v in os.environ.items()
           if k not in ("MTC_BINARY", "MTC_RUNTIME_LIBRARY")}
    env["PYTHONPATH"] = str(site)
    env["PATH"] = "/usr/bin:/bin"
    r = subprocess.run(
        [sys.executable, "-c", "import mtc; print(mtc.find_binary()); "
         "print(mtc.find_runtime_library()); print(mtc.__file__)"],
        capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    binary, library, init = r.stdout.split()
    assert Path(init).parent == site / "mtc"
    assert binary == str(site / "mtc" / "bin" / "mtc")
    assert library == str(site / "mtc" / "lib" / "libmtc_runtime.so")
    assert os.access(binary, os.X_OK)
    version = subprocess.run([binary, "--version"], capture_output=True,
                             text=True)
    assert version.returncode == 0 and "mtc" in version.stdout


def test_wheel_needs_a_build(tmp_path):
    out = tmp_path / "wheels"
    out.mkdir()
    r = _wheel(_source(tmp_path), out, tmp_path / "nobuild")
    assert r.returncode != 0
    assert "mtc: cannot put mtc's binaries in the package: no " in \
        r.stdout + r.stderr
    assert "Build mtc first" in r.stdout + r.stderr

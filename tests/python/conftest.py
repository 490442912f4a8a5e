"""Shared set-up of the Python package's tests: the package from this
checkout, the mtc binary and libmtc_runtime.so of the build under test, and
the runtime's fake CUDA driver (tests/unit/FakeCuda.cpp), which lets the C ABI
run without a GPU. tests/CMakeLists.txt passes the paths in the environment;
run by hand, they default to the build folder `build`."""
import ctypes
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
BUILD = Path(os.environ.get("MTC_TEST_BUILD", ROOT / "build"))
os.environ.setdefault("MTC_BINARY", str(BUILD / "bin" / "mtc"))
os.environ.setdefault("MTC_RUNTIME_LIBRARY",
                      str(BUILD / "lib" / "libmtc_runtime.so"))
FAKE_CUDA = os.environ.get("MTC_FAKE_CUDA",
                           str(BUILD / "tests" / "unit" / "libFakeCuda.so"))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private artifact and tuning cache."""
    d = tmp_path / "cache"
    monkeypatch.setenv("MTC_CACHE_DIR", str(d))
    return d


@pytest.fixture
def fake_cuda(monkeypatch):
    """The fake driver, loaded, with its device's context current (as
    PyTorch would have it)."""
    if not Path(FAKE_CUDA).is_file():
        pytest.skip(f"the fake CUDA driver is not built ({FAKE_CUDA})")
    monkeypatch.setenv("MTC_CUDA_LIBRARY", FAKE_CUDA)
    monkeypatch.setenv("FAKE_CUDA_MODE", "ok")
    lib = ctypes.CDLL(FAKE_CUDA)
    lib.fakeCudaSetCurrentContext(1)
    lib.fakeCudaResetStats()
    yield lib
    lib.fakeCudaSetCurrentContext(0)

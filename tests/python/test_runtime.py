"""mtc.Artifact: libmtc_runtime.so through ctypes, on the runtime's fake CUDA
driver (no GPU): loading what the mtc binary compiled, buckets, tensors,
launches and errors."""
import ctypes

import pytest

import mtc
from mtc import runtime


@pytest.fixture
def artifact_path(cache_dir):
    graphs = {"woq": mtc.linear_graph("woq", 64, 32, "bf16", bias=True)}
    return mtc.compile_graphs(graphs, [1, 4, 16])["woq"]


def alloc(lib, nbytes):
    p = ctypes.c_ulonglong()
    assert lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(nbytes)) == 0
    return p.value


def test_load_and_describe(fake_cuda, artifact_path):
    a = mtc.Artifact(artifact_path)
    assert a.graph == "woq" and a.symbol == "M"
    assert a.buckets == (1, 4, 16)
    assert [a.select(m) for m in (1, 2, 4, 5, 16)] == [0, 1, 1, 2, 2]
    assert [a.bucket_for(m) for m in (1, 3, 16, 17)] == [1, 4, 16, None]
    x, w, s, b = a.inputs(bucket=1)
    assert x == mtc.TensorInfo("x", "bf16", (4, 32), 4 * 32 * 2, 0)
    assert w == mtc.TensorInfo("w", "i8", (64, 32), 64 * 32, None)
    assert (s.name, s.shape, b.name, b.shape) == ("scales", (64,), "bias",
                                                  (64,))
    assert a.outputs(bucket=2) == [mtc.TensorInfo("res", "bf16", (16, 64),
                                                  16 * 64 * 2, 0)]
    assert "buckets=(1, 4, 16)" in repr(a)
    a.close()
    a.close()
    with pytest.raises(ValueError, match="is closed"):
        a.select(1)


def test_launch(fake_cuda, artifact_path):
    a = mtc.Artifact(artifact_path)
    ins = [alloc(fake_cuda, n) for n in (16 * 32 * 2, 64 * 32, 128, 128)]
    out = alloc(fake_cuda, 16 * 64 * 2)
    before = fake_cuda.fakeCudaLaunchCalls()
    a.launch(9, 0, ins, [out])
    assert fake_cuda.fakeCudaLaunchCalls() == before + 1
    with pytest.raises(ValueError, match="takes 4 inputs and 1 outputs, "
                                         "got 3 and 1"):
        a.launch(9, 0, ins[:3], [out])
    with pytest.raises(runtime.RuntimeLibraryError) as e:
        a.launch(17, 0, ins, [out])
    assert e.value.status == "MTC_ERROR_OUT_OF_RANGE"
    assert str(e.value) == ("M = 17 exceeds the largest bucket of graph "
                            "'woq' (16)")
    with pytest.raises(runtime.RuntimeLibraryError,
                       match=r"input 0 \('x'\) is not 16-byte aligned"):
        a.launch(9, 0, [ins[0] + 2] + ins[1:], [out])
    with pytest.raises(runtime.RuntimeLibraryError,
                       match=r"output 0 \('res'\) is a null pointer"):
        a.launch(9, 0, ins, [0])
    assert fake_cuda.fakeCudaLaunchCalls() == before + 1
    a.close()


def test_load_errors(fake_cuda, tmp_path, artifact_path):
    with pytest.raises(runtime.RuntimeLibraryError) as e:
        mtc.Artifact(tmp_path / "missing.json")
    assert e.value.status == "MTC_ERROR_IO"
    assert "cannot read" in str(e.value)
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(runtime.RuntimeLibraryError) as e:
        mtc.Artifact(tmp_path / "junk.json")
    assert e.value.status == "MTC_ERROR_MALFORMED"
    # No GPU context: what PyTorch would have made is missing.
    fake_cuda.fakeCudaSetCurrentContext(0)
    with pytest.raises(runtime.RuntimeLibraryError) as e:
        mtc.Artifact(artifact_path)
    assert e.value.status == "MTC_ERROR_CUDA"
    assert "no CUDA context is current on this thread" in str(e.value)


def test_no_driver(monkeypatch, artifact_path):
    monkeypatch.setenv("MTC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1")
    with pytest.raises(runtime.RuntimeLibraryError) as e:
        mtc.Artifact(artifact_path)
    assert e.value.status == "MTC_ERROR_CUDA"
    assert "cannot load the CUDA driver (/nonexistent/libcuda.so.1)" in \
        str(e.value)


def test_missing_library_says_where_it_looked(monkeypatch, tmp_path):
    monkeypatch.setenv("MTC_RUNTIME_LIBRARY", str(tmp_path / "lib.so"))
    monkeypatch.setenv("MTC_BINARY", str(tmp_path / "bin" / "mtc"))
    monkeypatch.setattr(mtc._tools, "_REPO", tmp_path / "repo")
    monkeypatch.setattr(mtc._tools, "_PACKAGE", tmp_path / "pkg")
    with pytest.raises(mtc.MtcNotFoundError) as e:
        mtc.find_runtime_library()
    assert str(e.value).startswith(
        f"cannot find libmtc_runtime.so; looked in: $MTC_RUNTIME_LIBRARY="
        f"{tmp_path}/lib.so (no such file), {tmp_path}/pkg/lib/"
        f"libmtc_runtime.so, {tmp_path}/lib/libmtc_runtime.so,")

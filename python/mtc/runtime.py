"""Graphs compiled by mtc, run through libmtc_runtime.so (runtime/mtc_runtime.h).

An Artifact is one loaded ``mtc compile`` output: for a graph compiled with
``--bind M=1,2,4,...`` every bucket, JIT-compiled into the CUDA context that
is current on the calling thread. ``launch`` takes device pointers and a
stream as integers (``tensor.data_ptr()``, ``torch.cuda.current_stream()
.cuda_stream``), allocates nothing and never synchronises, so CUDA graphs can
capture it.
"""
import ctypes
import threading
from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

from ._tools import MtcError, find_runtime_library

ABI_VERSION = 1  # MTC_RUNTIME_ABI_VERSION of the header this binding follows
MAX_RANK = 8

_STATUS = {
    0: "MTC_SUCCESS",
    1: "MTC_ERROR_INVALID_ARGUMENT",
    2: "MTC_ERROR_IO",
    3: "MTC_ERROR_MALFORMED",
    4: "MTC_ERROR_OUT_OF_RANGE",
    5: "MTC_ERROR_CUDA",
}


class RuntimeLibraryError(MtcError):
    """A call into libmtc_runtime.so failed; ``status`` is its mtc_status
    name (e.g. "MTC_ERROR_CUDA")."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_char_p),
                ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * MAX_RANK),
                ("bytes", ctypes.c_int64), ("symbolic_dim", ctypes.c_int)]


@dataclass(frozen=True)
class TensorInfo:
    """An input or output as one bucket lays it out (row-major, dense)."""
    name: str
    dtype: str  # "i4" (two a byte), "i8", "f16", "bf16", "f32"
    shape: Tuple[int, ...]
    bytes: int
    symbolic_dim: Optional[int]  # the dimension that carries the symbol


_lib = None
_lib_lock = threading.Lock()


def library():
    """libmtc_runtime.so, loaded once (see mtc.find_runtime_library)."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = find_runtime_library()
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise MtcError(f"cannot load {path}: {e}") from None
            _declare(lib)
            version = lib.mtc_runtime_abi_version()
            if version != ABI_VERSION:
                raise MtcError(
                    f"{path} has C ABI version {version}; this mtc package "
                    f"needs {ABI_VERSION}: rebuild mtc")
            _lib = lib
        return _lib


def _declare(lib):
    c = ctypes
    p = c.c_void_p
    sigs = {
        "mtc_runtime_abi_version": (c.c_int, []),
        "mtc_status_name": (c.c_char_p, [c.c_int]),
        "mtc_last_error": (c.c_char_p, []),
        "mtc_artifact_load": (c.c_int, [c.c_char_p, c.POINTER(p)]),
        "mtc_artifact_free": (None, [p]),
        "mtc_artifact_graph": (c.c_char_p, [p]),
        "mtc_artifact_symbol": (c.c_char_p, [p]),
        "mtc_artifact_num_buckets": (c.c_size_t, [p]),
        "mtc_artifact_bucket_value": (c.c_int64, [p, c.c_size_t]),
        "mtc_artifact_select": (c.c_int, [p, c.c_int64,
                                          c.POINTER(c.c_size_t)]),
        "mtc_artifact_num_inputs": (c.c_size_t, [p]),
        "mtc_artifact_num_outputs": (c.c_size_t, [p]),
        "mtc_artifact_tensor": (c.c_int, [p, c.c_size_t, c.c_int, c.c_size_t,
                                          c.POINTER(_TensorInfo)]),
        "mtc_artifact_launch": (c.c_int, [p, c.c_int64, p,
                                          c.POINTER(c.c_uint64), c.c_size_t,
                                          c.POINTER(c.c_uint64), c.c_size_t]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


def _check(lib, status):
    if status != 0:
        raise RuntimeLibraryError(_STATUS.get(status, f"status {status}"),
                                  lib.mtc_last_error().decode())


class Artifact:
    """A compiled graph loaded into the current CUDA context.

    ``path`` is the ``<graph>.json`` that ``mtc compile`` wrote (a dispatch
    manifest with buckets, or a single manifest). Make the right device
    current first (PyTorch: ``torch.cuda.device(i)`` and any CUDA operation).
    Launches of one Artifact share its workspaces: run them on one stream at
    a time.
    """

    def __init__(self, path):
        self._handle = None
        self._lib = library()
        handle = ctypes.c_void_p()
        _check(self._lib, self._lib.mtc_artifact_load(
            str(path).encode(), ctypes.byref(handle)))
        self._handle = handle.value
        lib, h = self._lib, self._handle
        self.path = str(path)
        self.graph = lib.mtc_artifact_graph(h).decode()
        self.symbol = lib.mtc_artifact_symbol(h).decode() or None
        self.buckets = tuple(
            lib.mtc_artifact_bucket_value(h, i)
            for i in range(lib.mtc_artifact_num_buckets(h)))
        self.num_inputs = lib.mtc_artifact_num_inputs(h)
        self.num_outputs = lib.mtc_artifact_num_outputs(h)
        # Launch arguments, made once: a launch only fills them in.
        self._inputs = (ctypes.c_uint64 * self.num_inputs)()
        self._outputs = (ctypes.c_uint64 * self.num_outputs)()
        self._lock = threading.Lock()

    def select(self, value):
        """The index of the bucket that runs ``value`` of the symbol (0 for a
        graph without one); raises RuntimeLibraryError with status
        "MTC_ERROR_OUT_OF_RANGE" beyond the largest bucket."""
        b = ctypes.c_size_t()
        _check(self._lib, self._lib.mtc_artifact_select(
            self._live(), int(value), ctypes.byref(b)))
        return b.value

    def bucket_for(self, value):
        """The bucket value that runs ``value``, or None if none does."""
        if self.symbol is None:
            return None
        for b in self.buckets:
            if b >= value:
                return b
        return None

    def tensor(self, bucket, index, output=False):
        """Input (or output) ``index`` as bucket index ``bucket`` lays it
        out."""
        info = _TensorInfo()
        _check(self._lib, self._lib.mtc_artifact_tensor(
            self._live(), bucket, 1 if output else 0, index,
            ctypes.byref(info)))
        return TensorInfo(
            info.name.decode(), info.dtype.decode(),
            tuple(info.shape[d] for d in range(info.rank)), info.bytes,
            None if info.symbolic_dim < 0 else info.symbolic_dim)

    def inputs(self, bucket=0):
        return [self.tensor(bucket, i) for i in range(self.num_inputs)]

    def outputs(self, bucket=0):
        return [self.tensor(bucket, i, output=True)
                for i in range(self.num_outputs)]

    def launch(self, value: int, stream: int, inputs: Sequence[int],
               outputs: Sequence[int]):
        """Runs the bucket of ``value`` on ``stream`` (an integer CUstream;
        0 is the default stream) with device pointers for every input and
        output, laid out as ``tensor()`` says for that bucket. Asynchronous."""
        if len(inputs) != self.num_inputs or len(outputs) != self.num_outputs:
            raise ValueError(
                f"graph '{self.graph}' takes {self.num_inputs} inputs and "
                f"{self.num_outputs} outputs, got {len(inputs)} and "
                f"{len(outputs)}")
        with self._lock:
            for i, p in enumerate(inputs):
                self._inputs[i] = p
            for i, p in enumerate(outputs):
                self._outputs[i] = p
            _check(self._lib, self._lib.mtc_artifact_launch(
                self._live(), value, stream, self._inputs, self.num_inputs,
                self._outputs, self.num_outputs))

    def close(self):
        """Frees the artifact (after its context's work); idempotent."""
        if getattr(self, "_handle", None) is not None:
            handle, self._handle = self._handle, None
            self._lib.mtc_artifact_free(handle)

    def _live(self):
        if self._handle is None:
            raise ValueError(f"artifact '{self.path}' is closed")
        return self._handle

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __repr__(self):
        return (f"Artifact(graph={self.graph!r}, symbol={self.symbol!r}, "
                f"buckets={self.buckets})")

"""mtc from Python.

- ``mtc.Artifact`` runs a graph that ``mtc compile`` wrote, through the C ABI
  of ``libmtc_runtime.so`` (ctypes; no build step).
- ``mtc.compile_graphs`` runs the ``mtc`` compiler, with an on-disk cache of
  compiled artifacts.
- ``mtc.linear_graph`` and ``mtc.int4_linear_graph`` write the graphs of
  weight-only int8 and int4 linear layers.
- ``mtc.torch`` (imported on its own, it needs PyTorch) provides the
  ``woq_linear`` and ``woq_int4_linear`` custom ops and ``swap(model)``,
  which puts mtc kernels under gpt-fast's ``WeightOnlyInt8Linear`` (and
  every module like it) and ``WeightOnlyInt4Linear``.

Nothing here imports torch.
"""
from ._tools import MtcError, MtcNotFoundError, find_binary, find_runtime_library
from .compiler import (CompileError, compile_graphs, int4_linear_graph,
                       linear_graph)
from .runtime import Artifact, TensorInfo

__version__ = "0.1.0"

__all__ = [
    "Artifact",
    "CompileError",
    "MtcError",
    "MtcNotFoundError",
    "TensorInfo",
    "compile_graphs",
    "find_binary",
    "find_runtime_library",
    "int4_linear_graph",
    "linear_graph",
]

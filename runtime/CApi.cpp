//===- CApi.cpp - mtc's runtime as a C library ----------------------------===//
//
// Implements mtc_runtime.h on top of Program: one Program per bucket, the
// buffers the caller does not own allocated at load, and launches that only
// gather pointers on the stack and call cuLaunchKernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/mtc_runtime.h"

#include "runtime/Program.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <array>
#include <string>
#include <vector>

using namespace llvm;
using namespace mtc;

namespace {

/// The most buffers one bucket may have (launches gather their pointers on
/// the stack).
constexpr size_t kMaxBuffers = 1024;

thread_local std::string lastError;

mtc_status failure(mtc_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

/// A failure from an llvm::Error: RuntimeErrors are CUDA failures, anything
/// else (manifest parsing) is a malformed artifact.
mtc_status failure(Error err, const Twine &context = "") {
  mtc_status status = MTC_ERROR_MALFORMED;
  std::string message;
  handleAllErrors(
      std::move(err),
      [&](const RuntimeError &e) {
        // The runtime checks manifests against each other too.
        message = e.getMessage();
        status = StringRef(message).starts_with("malformed manifest")
                     ? MTC_ERROR_MALFORMED
                     : MTC_ERROR_CUDA;
      },
      [&](const ErrorInfoBase &e) { message = e.message(); });
  std::string prefix = context.str();
  return failure(status, prefix.empty() ? message : prefix + ": " + message);
}

/// One input or output of the graph, the same in every bucket but for the
/// symbolic dimension.
struct TensorDesc {
  std::string name, dtype;
  int symbolicDim = -1;
};

struct Bucket {
  int64_t value = 0;
  Manifest manifest;
  std::unique_ptr<Program> program; // refers to `manifest`
  std::vector<DeviceBuffer> owned;  // intermediates and workspaces
  /// One pointer per manifest buffer: the owned ones filled in at load,
  /// inputs and outputs 0 (each launch puts the caller's there).
  std::vector<cu::CUdeviceptr> slots;
  std::vector<unsigned> inputs, outputs; // manifest buffer indices
};

Expected<std::string> readFile(StringRef path, mtc_status &status) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buf = MemoryBuffer::getFile(path);
  if (!buf) {
    status = MTC_ERROR_IO;
    return createStringError(buf.getError(), "cannot read '" + path + "': " +
                                                 buf.getError().message());
  }
  return (*buf)->getBuffer().str();
}

} // namespace

struct mtc_artifact {
  std::unique_ptr<Device> device;
  std::string graph, symbol;
  std::vector<TensorDesc> inputs, outputs;
  /// Ascending values. Programs refer to their bucket's manifest, so
  /// buckets never move.
  std::vector<std::unique_ptr<Bucket>> buckets;
};

namespace {

/// Reads `path` as JSON; sets `status` on failure.
Expected<json::Value> readJSON(StringRef path, mtc_status &status) {
  Expected<std::string> text = readFile(path, status);
  if (!text)
    return text.takeError();
  Expected<json::Value> v = json::parse(*text);
  if (!v) {
    status = MTC_ERROR_MALFORMED;
    return createStringError(inconvertibleErrorCode(),
                             "'" + path +
                                 "' is not JSON: " + toString(v.takeError()));
  }
  return v;
}

/// Reads the manifest at `path` and its PTX, and loads them.
mtc_status loadBucket(mtc_artifact &a, StringRef path, int64_t value) {
  mtc_status status = MTC_ERROR_MALFORMED;
  Expected<json::Value> json = readJSON(path, status);
  if (!json)
    return failure(status, toString(json.takeError()));
  Expected<Manifest> m = Manifest::fromJSON(*json);
  if (!m)
    return failure(MTC_ERROR_MALFORMED,
                   "'" + path.str() + "': " + toString(m.takeError()));
  SmallString<256> ptxPath = sys::path::parent_path(path);
  sys::path::append(ptxPath, m->ptxFile);
  Expected<std::string> ptx = readFile(ptxPath, status);
  if (!ptx)
    return failure(status, toString(ptx.takeError()));
  if (m->buffers.size() > kMaxBuffers)
    return failure(MTC_ERROR_MALFORMED,
                   fmt::format("'{}' has {} buffers; at most {} are supported",
                               path.str(), m->buffers.size(), kMaxBuffers));

  a.buckets.push_back(std::make_unique<Bucket>());
  Bucket &b = *a.buckets.back();
  b.value = value;
  b.manifest = std::move(*m);
  Expected<std::unique_ptr<Program>> program =
      Program::load(*a.device, b.manifest, *ptx);
  if (!program)
    return failure(program.takeError(), "'" + path + "'");
  b.program = std::move(*program);

  b.slots.assign(b.manifest.buffers.size(), 0);
  for (unsigned i = 0; i < b.manifest.buffers.size(); ++i) {
    const BufferInfo &info = b.manifest.buffers[i];
    switch (info.role) {
    case BufferInfo::Role::Input:
      b.inputs.push_back(i);
      continue;
    case BufferInfo::Role::Output:
      continue;
    case BufferInfo::Role::Intermediate:
    case BufferInfo::Role::Workspace:
      break;
    }
    Expected<DeviceBuffer> buf =
        DeviceBuffer::allocate(*a.device, info.bytes(), info.name);
    if (!buf)
      return failure(buf.takeError(), "'" + path + "'");
    // Intermediates need no initialisation; zeroing them too costs nothing
    // that matters and leaves no stale data behind.
    if (Error e = buf->fill(0))
      return failure(std::move(e), "'" + path + "'");
    b.slots[i] = buf->ptr();
    b.owned.push_back(std::move(*buf));
  }
  for (const std::string &name : b.manifest.outputs)
    b.outputs.push_back(unsigned(b.program->findBuffer(name)));
  if (Error e = a.device->synchronize())
    return failure(std::move(e), "'" + path + "'");
  return MTC_SUCCESS;
}

/// Fills the artifact's signature from its buckets, checking that they
/// agree: the same tensors, and shapes that differ only where the symbol is.
mtc_status describeSignature(mtc_artifact &a) {
  const Bucket &first = *a.buckets.front();
  auto describe = [&](ArrayRef<unsigned> firstIdx,
                      std::vector<unsigned> Bucket::*which,
                      std::vector<TensorDesc> &out) -> mtc_status {
    for (size_t i = 0; i < firstIdx.size(); ++i) {
      const BufferInfo &b0 = first.manifest.buffers[firstIdx[i]];
      TensorDesc t;
      t.name = b0.name;
      t.dtype = dtypeName(b0.dtype).str();
      for (const auto &bk : a.buckets) {
        const std::vector<unsigned> &idx = (*bk).*which;
        if (idx.size() != firstIdx.size())
          return failure(MTC_ERROR_MALFORMED,
                         fmt::format("the buckets of '{}' disagree on the "
                                     "number of inputs or outputs",
                                     a.graph));
        const BufferInfo &b = bk->manifest.buffers[idx[i]];
        if (b.name != b0.name || b.dtype != b0.dtype ||
            b.shape.size() != b0.shape.size())
          return failure(MTC_ERROR_MALFORMED,
                         fmt::format("the buckets of '{}' disagree on tensor "
                                     "'{}'",
                                     a.graph, b0.name));
      }
      if (b0.shape.size() > MTC_MAX_RANK)
        return failure(MTC_ERROR_MALFORMED,
                       fmt::format("tensor '{}' has rank {}; at most {} is "
                                   "supported",
                                   b0.name, b0.shape.size(), MTC_MAX_RANK));
      // A dimension carries the symbol if it equals the bucket's value in
      // every bucket (buckets have distinct values, so it varies); every
      // other dimension must be the same in all buckets.
      for (size_t d = 0; d < b0.shape.size(); ++d) {
        bool symbolic = a.buckets.size() > 1, fixed = true;
        for (const auto &bk : a.buckets) {
          int64_t v = bk->manifest.buffers[((*bk).*which)[i]].shape[d];
          symbolic &= v == bk->value;
          fixed &= v == b0.shape[d];
        }
        if (symbolic && t.symbolicDim < 0)
          t.symbolicDim = int(d);
        else if (!fixed)
          return failure(MTC_ERROR_MALFORMED,
                         fmt::format("dimension {} of tensor '{}' differs "
                                     "between buckets but is not '{}'",
                                     d, b0.name, a.symbol));
      }
      out.push_back(std::move(t));
    }
    return MTC_SUCCESS;
  };
  if (mtc_status s = describe(first.inputs, &Bucket::inputs, a.inputs))
    return s;
  return describe(first.outputs, &Bucket::outputs, a.outputs);
}

mtc_status load(const char *path, mtc_artifact &a) {
  mtc_status status = MTC_ERROR_MALFORMED;
  Expected<json::Value> json = readJSON(path, status);
  if (!json)
    return failure(status, toString(json.takeError()));
  const json::Object *o = json->getAsObject();
  if (!o)
    return failure(MTC_ERROR_MALFORMED,
                   fmt::format("'{}' is not an mtc manifest", path));

  Expected<std::unique_ptr<Device>> device = Device::attachCurrent();
  if (!device)
    return failure(device.takeError());
  a.device = std::move(*device);

  if (!o->get("buckets")) {
    if (mtc_status s = loadBucket(a, path, 0))
      return s;
    a.graph = a.buckets.front()->manifest.graph;
    return describeSignature(a);
  }
  Expected<DispatchManifest> d = DispatchManifest::fromJSON(*json);
  if (!d)
    return failure(MTC_ERROR_MALFORMED,
                   fmt::format("'{}': {}", path, toString(d.takeError())));
  if (d->buckets.size() < 2)
    return failure(MTC_ERROR_MALFORMED,
                   fmt::format("'{}' has fewer than two buckets", path));
  a.graph = d->graph;
  a.symbol = d->symbol;
  for (const DispatchManifest::Bucket &bk : d->buckets) {
    SmallString<256> p = sys::path::parent_path(path);
    sys::path::append(p, bk.manifest);
    if (mtc_status s = loadBucket(a, p, bk.value))
      return s;
  }
  return describeSignature(a);
}

} // namespace

//===----------------------------------------------------------------------===//
// The C functions
//===----------------------------------------------------------------------===//

extern "C" {

int mtc_runtime_abi_version(void) { return MTC_RUNTIME_ABI_VERSION; }

const char *mtc_status_name(mtc_status status) {
  switch (status) {
  case MTC_SUCCESS:
    return "MTC_SUCCESS";
  case MTC_ERROR_INVALID_ARGUMENT:
    return "MTC_ERROR_INVALID_ARGUMENT";
  case MTC_ERROR_IO:
    return "MTC_ERROR_IO";
  case MTC_ERROR_MALFORMED:
    return "MTC_ERROR_MALFORMED";
  case MTC_ERROR_OUT_OF_RANGE:
    return "MTC_ERROR_OUT_OF_RANGE";
  case MTC_ERROR_CUDA:
    return "MTC_ERROR_CUDA";
  }
  return "MTC_ERROR_UNKNOWN";
}

const char *mtc_last_error(void) { return lastError.c_str(); }

mtc_status mtc_artifact_load(const char *path, mtc_artifact **out) {
  if (!out)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   "mtc_artifact_load: out is null");
  *out = nullptr;
  if (!path || !*path)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   "mtc_artifact_load: path is null or empty");
  auto a = std::make_unique<mtc_artifact>();
  if (mtc_status s = load(path, *a))
    return s;
  *out = a.release();
  return MTC_SUCCESS;
}

void mtc_artifact_free(mtc_artifact *artifact) {
  if (!artifact)
    return;
  if (artifact->device) {
    // Buffers and modules go first, in the artifact's context (they make it
    // current; the scope restores the caller's), then the borrowed device.
    const Device &dev = *artifact->device;
    Expected<ContextScope> scope =
        ContextScope::enter(dev.driver(), dev.context());
    if (!scope)
      consumeError(scope.takeError());
    // Launches on any stream may still be using the owned buffers.
    consumeError(dev.driver().synchronizeContext());
    artifact->buckets.clear();
  }
  delete artifact;
}

const char *mtc_artifact_graph(const mtc_artifact *artifact) {
  return artifact ? artifact->graph.c_str() : "";
}

const char *mtc_artifact_symbol(const mtc_artifact *artifact) {
  return artifact ? artifact->symbol.c_str() : "";
}

size_t mtc_artifact_num_buckets(const mtc_artifact *artifact) {
  return artifact ? artifact->buckets.size() : 0;
}

int64_t mtc_artifact_bucket_value(const mtc_artifact *artifact, size_t bucket) {
  if (!artifact || bucket >= artifact->buckets.size())
    return -1;
  return artifact->buckets[bucket]->value;
}

mtc_status mtc_artifact_select(const mtc_artifact *artifact, int64_t value,
                               size_t *bucket) {
  if (!artifact || !bucket)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   "mtc_artifact_select: artifact or bucket is null");
  if (artifact->symbol.empty()) {
    if (value != 0)
      return failure(MTC_ERROR_INVALID_ARGUMENT,
                     fmt::format("graph '{}' has no symbolic dimension; pass "
                                 "0, not {}",
                                 artifact->graph, value));
    *bucket = 0;
    return MTC_SUCCESS;
  }
  if (value < 1)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   fmt::format("{} = {}: the value must be at least 1",
                               artifact->symbol, value));
  for (size_t i = 0; i < artifact->buckets.size(); ++i)
    if (artifact->buckets[i]->value >= value) {
      *bucket = i;
      return MTC_SUCCESS;
    }
  return failure(MTC_ERROR_OUT_OF_RANGE,
                 fmt::format("{} = {} exceeds the largest bucket of graph "
                             "'{}' ({})",
                             artifact->symbol, value, artifact->graph,
                             artifact->buckets.back()->value));
}

size_t mtc_artifact_num_inputs(const mtc_artifact *artifact) {
  return artifact ? artifact->inputs.size() : 0;
}

size_t mtc_artifact_num_outputs(const mtc_artifact *artifact) {
  return artifact ? artifact->outputs.size() : 0;
}

mtc_status mtc_artifact_tensor(const mtc_artifact *artifact, size_t bucket,
                               mtc_tensor_kind kind, size_t index,
                               mtc_tensor_info *info) {
  if (!artifact || !info)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   "mtc_artifact_tensor: artifact or info is null");
  if (bucket >= artifact->buckets.size())
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   fmt::format("bucket {} does not exist ({} buckets)", bucket,
                               artifact->buckets.size()));
  if (kind != MTC_INPUT && kind != MTC_OUTPUT)
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   fmt::format("tensor kind {} is neither MTC_INPUT nor "
                               "MTC_OUTPUT",
                               int(kind)));
  bool input = kind == MTC_INPUT;
  const std::vector<TensorDesc> &descs =
      input ? artifact->inputs : artifact->outputs;
  if (index >= descs.size())
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   fmt::format("graph '{}' has no {} {} ({} in all)",
                               artifact->graph, input ? "input" : "output",
                               index, descs.size()));
  const Bucket &b = *artifact->buckets[bucket];
  const BufferInfo &buf =
      b.manifest.buffers[(input ? b.inputs : b.outputs)[index]];
  const TensorDesc &t = descs[index];
  info->name = t.name.c_str();
  info->dtype = t.dtype.c_str();
  info->rank = int(buf.shape.size());
  for (int d = 0; d < MTC_MAX_RANK; ++d)
    info->shape[d] = d < info->rank ? buf.shape[d] : 0;
  info->bytes = buf.bytes();
  info->symbolic_dim = t.symbolicDim;
  return MTC_SUCCESS;
}

mtc_status mtc_artifact_launch(mtc_artifact *artifact, int64_t value,
                               mtc_stream stream, const mtc_deviceptr *inputs,
                               size_t num_inputs, const mtc_deviceptr *outputs,
                               size_t num_outputs) {
  size_t index = 0;
  if (mtc_status s = mtc_artifact_select(artifact, value, &index))
    return s;
  const Bucket &b = *artifact->buckets[index];
  if (num_inputs != b.inputs.size() || num_outputs != b.outputs.size())
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   fmt::format("graph '{}' takes {} inputs and {} outputs; "
                               "the launch passes {} and {}",
                               artifact->graph, b.inputs.size(),
                               b.outputs.size(), num_inputs, num_outputs));
  if ((num_inputs && !inputs) || (num_outputs && !outputs))
    return failure(MTC_ERROR_INVALID_ARGUMENT,
                   "mtc_artifact_launch: inputs or outputs is null");
  std::array<cu::CUdeviceptr, kMaxBuffers> ptrs;
  std::copy(b.slots.begin(), b.slots.end(), ptrs.begin());
  // Kernels assume 16-byte aligned, non-null parameters.
  auto place = [&](const char *what, size_t i, mtc_deviceptr p,
                   const TensorDesc &t, unsigned slot) -> mtc_status {
    if (!p || p % 16)
      return failure(MTC_ERROR_INVALID_ARGUMENT,
                     fmt::format("{} {} ('{}') is {}", what, i, t.name,
                                 p ? "not 16-byte aligned" : "a null pointer"));
    ptrs[slot] = p;
    return MTC_SUCCESS;
  };
  for (size_t i = 0; i < num_inputs; ++i)
    if (mtc_status s =
            place("input", i, inputs[i], artifact->inputs[i], b.inputs[i]))
      return s;
  for (size_t i = 0; i < num_outputs; ++i)
    if (mtc_status s =
            place("output", i, outputs[i], artifact->outputs[i], b.outputs[i]))
      return s;
  const Device &dev = *artifact->device;
  Expected<ContextScope> scope =
      ContextScope::enter(dev.driver(), dev.context());
  if (!scope)
    return failure(scope.takeError(),
                   "cannot make the artifact's CUDA context current");
  ArrayRef<cu::CUdeviceptr> all(ptrs.data(), b.slots.size());
  for (unsigned k = 0; k < b.program->numKernels(); ++k)
    if (Error e = b.program->launch(k, all, stream))
      return failure(std::move(e));
  return MTC_SUCCESS;
}

} // extern "C"

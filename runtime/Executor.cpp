//===- Executor.cpp - Runs a compiled graph on the GPU --------------------===//
//
// See Executor.h. Timing is in Timing.cpp, the read-bandwidth ceiling in
// ReadBandwidth.cpp.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"

#include <fmt/format.h>

using namespace llvm;

namespace mtc {

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Executor>>
Executor::create(Device &device, const Manifest &manifest, StringRef ptx) {
  std::unique_ptr<Executor> ex(new Executor(device, manifest));
  const Manifest &m = ex->man;
  Expected<std::unique_ptr<Program>> programOr = Program::load(device, m, ptx);
  if (!programOr)
    return programOr.takeError();
  ex->program = std::move(*programOr);

  for (const BufferInfo &b : m.buffers) {
    if (!numElements(b.shape))
      return runtimeError(fmt::format(
          "malformed manifest: buffer '{}' of shape {} is too large", b.name,
          formatShape(b.shape)));
    Expected<DeviceBuffer> bufOr =
        DeviceBuffer::allocate(device, b.bytes(), b.name);
    if (!bufOr)
      return bufOr.takeError();
    ex->buffers.push_back(std::move(*bufOr));
    if (Error e = ex->buffers.back().fill(0))
      return std::move(e);
  }
  ex->inputSet.assign(m.buffers.size(), false);
  if (Error e = device.synchronize())
    return std::move(e);
  return std::move(ex);
}

Executor::~Executor() {
  // Nothing may still be running on the buffers when they are freed.
  (void)dev.makeCurrent();
  (void)dev.synchronize();
}

StringRef Executor::jitInfoLog() const { return program->jitInfoLog(); }

const FunctionAttributes &Executor::kernelAttributes(unsigned k) const {
  return program->kernelAttributes(k);
}

static std::string namesWithRole(const Manifest &m, BufferInfo::Role role) {
  std::string out;
  for (const BufferInfo &b : m.buffers)
    if (b.role == role)
      out += (out.empty() ? "" : ", ") + b.name;
  return out.empty() ? "none" : out;
}

Error Executor::setInput(StringRef name, const HostTensor &t) {
  int i = findBuffer(name);
  if (i < 0 || man.buffers[i].role != BufferInfo::Role::Input)
    return runtimeError(fmt::format(
        "'{}' is not an input of graph '{}' "
        "(inputs: {})",
        name.str(), man.graph, namesWithRole(man, BufferInfo::Role::Input)));
  const BufferInfo &b = man.buffers[i];
  if (t.dtype != b.dtype)
    return runtimeError(fmt::format("input '{}' is {} but the tensor is {}",
                                    b.name, dtypeName(b.dtype).str(),
                                    dtypeName(t.dtype).str()));
  if (ArrayRef<int64_t>(t.shape) != ArrayRef<int64_t>(b.shape))
    return runtimeError(
        fmt::format("input '{}' has shape {} but the tensor has shape {}",
                    b.name, formatShape(b.shape), formatShape(t.shape)));
  if (int64_t(t.bytes()) != b.bytes())
    return runtimeError(
        fmt::format("input '{}' needs {} bytes but the tensor holds {}", b.name,
                    b.bytes(), t.bytes()));
  if (Error e = dev.makeCurrent())
    return e;
  // Nothing launched earlier may still be reading the buffer.
  if (Error e = dev.synchronize())
    return e;
  if (Error e = buffers[i].copyFromHost(t.data.data(), int64_t(t.bytes())))
    return e;
  inputSet[i] = true;
  return Error::success();
}

Error Executor::poison() {
  if (Error e = dev.makeCurrent())
    return e;
  for (unsigned i = 0; i < buffers.size(); ++i) {
    BufferInfo::Role r = man.buffers[i].role;
    if (r == BufferInfo::Role::Output || r == BufferInfo::Role::Intermediate)
      if (Error e = buffers[i].fill(0xFF))
        return e;
  }
  return dev.synchronize();
}

Error Executor::checkInputsSet(StringRef what) const {
  for (unsigned i = 0; i < man.buffers.size(); ++i)
    if (man.buffers[i].role == BufferInfo::Role::Input && !inputSet[i])
      return runtimeError(
          fmt::format("input '{}' has not been set; {} would compute on zeros",
                      man.buffers[i].name, what.str()));
  return Error::success();
}

Error Executor::run() {
  if (Error e = checkInputsSet("running the graph"))
    return e;
  if (Error e = dev.makeCurrent())
    return e;
  std::vector<cu::CUdeviceptr> ptrs;
  for (const DeviceBuffer &b : buffers)
    ptrs.push_back(b.ptr());
  // Waiting after each kernel costs little outside timing and pins a fault
  // on the kernel that caused it.
  for (unsigned k = 0; k < program->numKernels(); ++k) {
    if (Error e = program->launch(k, ptrs, dev.stream()))
      return e;
    if (Error e = dev.synchronize())
      return withContext(
          std::move(e), fmt::format("kernel '{}' failed", man.kernels[k].name));
  }
  return Error::success();
}

Expected<HostTensor> Executor::getOutput(StringRef name) {
  int i = findBuffer(name);
  if (i < 0)
    return runtimeError(
        fmt::format("graph '{}' has no buffer '{}' (outputs: {})", man.graph,
                    name.str(), namesWithRole(man, BufferInfo::Role::Output)));
  const BufferInfo &b = man.buffers[i];
  if (Error e = dev.makeCurrent())
    return std::move(e);
  if (Error e = dev.synchronize())
    return std::move(e);
  HostTensor t(b.dtype, b.shape);
  if (int64_t(t.bytes()) != buffers[i].bytes())
    return runtimeError(fmt::format("buffer '{}' has {} bytes, expected {}",
                                    b.name, buffers[i].bytes(), t.bytes()));
  if (Error e = buffers[i].copyToHost(t.data.data(), int64_t(t.bytes())))
    return std::move(e);
  return std::move(t);
}

Expected<Timing> Executor::time(const TimingOptions &o) {
  if (program->numKernels() == 0)
    return runtimeError(
        fmt::format("graph '{}' has no kernels to time", man.graph));
  if (o.kernel && *o.kernel >= program->numKernels())
    return runtimeError(fmt::format("there is no kernel {} ({} kernels)",
                                    *o.kernel, program->numKernels()));
  if (o.callsPerGraph == 0 || o.replays == 0)
    return runtimeError("timing needs at least one call and one replay");
  std::string what =
      o.kernel ? fmt::format("kernel '{}'", man.kernels[*o.kernel].name)
               : fmt::format("graph '{}'", man.graph);
  if (Error e = checkInputsSet("timing"))
    return std::move(e);
  // One plain run: faults are pinned on a kernel, and the intermediates a
  // single kernel reads hold real values.
  if (Error e = run())
    return std::move(e);

  return timeProgram(dev, *program, buffers, o, what);
}

} // namespace mtc

//===- Executor.cpp - Runs a compiled graph on the GPU --------------------===//
//
// See Executor.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

using namespace llvm;

namespace mtc {

//===----------------------------------------------------------------------===//
// Graph capture and replay
//===----------------------------------------------------------------------===//

namespace {

/// CUDA graphs captured on the device's stream, replayed between events.
/// Everything is destroyed (after the stream drains) with the object.
class GraphReplayer {
public:
  explicit GraphReplayer(Device &dev) : dev(dev) {}
  ~GraphReplayer();

  /// Captures what `enqueue` launches on the stream into a new graph.
  Error capture(function_ref<Error()> enqueue);
  /// Launches max(warmup, graphs) untimed replays, then `replays` timed ones,
  /// cycling through the graphs in capture order; returns the milliseconds of
  /// each timed replay.
  Expected<std::vector<double>> replay(unsigned warmup, unsigned replays);

  unsigned numGraphs() const { return unsigned(graphs.size()); }

private:
  Device &dev;
  std::vector<Graph> graphs;
  std::vector<Event> events;
  unsigned launched = 0; // replays so far, for cycling through the graphs
};

} // namespace

GraphReplayer::~GraphReplayer() {
  // Nothing captured may still run when the graphs go.
  consumeError(dev.makeCurrent());
  consumeError(dev.synchronize());
}

Error GraphReplayer::capture(function_ref<Error()> enqueue) {
  Expected<Graph> graph = Graph::capture(dev.driver(), dev.stream(), enqueue);
  if (!graph)
    return graph.takeError();
  graphs.push_back(std::move(*graph));
  return Error::success();
}

Expected<std::vector<double>> GraphReplayer::replay(unsigned warmup,
                                                    unsigned replays) {
  if (graphs.empty())
    return runtimeError("no graph was captured");
  auto launchNext = [&]() -> Error {
    return graphs[launched++ % graphs.size()].launch(dev.stream());
  };
  unsigned warm = std::max<unsigned>(warmup, numGraphs());
  for (unsigned i = 0; i < warm; ++i)
    if (Error e = launchNext())
      return std::move(e);
  if (Error e = dev.synchronize())
    return std::move(e);

  // Replays go back to back; event i + 1 ends replay i and starts replay
  // i + 1, so the host never leaves the GPU idle inside a measurement.
  while (events.size() < size_t(replays) + 1) {
    Expected<Event> ev = Event::create(dev.driver());
    if (!ev)
      return ev.takeError();
    events.push_back(std::move(*ev));
  }
  if (Error e = events[0].record(dev.stream()))
    return std::move(e);
  for (unsigned i = 0; i < replays; ++i) {
    if (Error e = launchNext())
      return std::move(e);
    if (Error e = events[i + 1].record(dev.stream()))
      return std::move(e);
  }
  if (Error e = events[replays].synchronize())
    return std::move(e);
  std::vector<double> ms;
  for (unsigned i = 0; i < replays; ++i) {
    Expected<float> t = Event::elapsedMillis(events[i], events[i + 1]);
    if (!t)
      return t.takeError();
    ms.push_back(double(*t));
  }
  return ms;
}

/// Median, min and max of per-call times.
static void summarize(Timing &t) {
  std::vector<double> s = t.samplesMicros;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  if (n == 0)
    return;
  t.minMicros = s.front();
  t.maxMicros = s.back();
  t.medianMicros = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<Executor>>
Executor::create(Device &device, const Manifest &manifest, StringRef ptx) {
  std::unique_ptr<Executor> ex(new Executor(device, manifest));
  const Manifest &m = ex->man;
  Expected<std::unique_ptr<Program>> programOr =
      Program::load(device, m, ptx);
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
    if (Error e = launch(k, ptrs))
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

  unsigned first = o.kernel ? *o.kernel : 0;
  unsigned last = o.kernel ? *o.kernel + 1 : unsigned(program->numKernels());

  // The buffers that get a copy per call: for the program its inputs, for one
  // kernel the inputs and intermediates it reads (those an earlier kernel
  // produced). Outputs, other intermediates and workspaces are shared.
  std::vector<bool> earlier(buffers.size(), false), rotate(buffers.size());
  for (unsigned k = 0; k < first; ++k)
    for (unsigned b : program->kernelParams(k))
      earlier[b] = true;
  std::vector<unsigned> rotated;
  for (unsigned k = first; k < last; ++k)
    for (unsigned b : program->kernelParams(k)) {
      BufferInfo::Role r = man.buffers[b].role;
      bool reads =
          r == BufferInfo::Role::Input ||
          (o.kernel && r == BufferInfo::Role::Intermediate && earlier[b]);
      if (reads && !rotate[b]) {
        rotate[b] = true;
        rotated.push_back(b);
      }
    }
  // Copies of the rotated buffers live in one pool, copy after copy, each
  // buffer 256-byte aligned like a cuMemAlloc.
  int64_t rotatedBytes = 0, stride = 0;
  std::vector<int64_t> offsets;
  for (unsigned b : rotated) {
    rotatedBytes += buffers[b].bytes();
    offsets.push_back(stride);
    stride += int64_t(alignTo(uint64_t(buffers[b].bytes()), 256));
  }

  Timing t;
  t.rotatedBytes = rotatedBytes;
  int64_t copies = 1, maxCopies = 1;
  if (rotatedBytes > 0) {
    int64_t footprint =
        o.minFootprintBytes > 0 ? o.minFootprintBytes : 4 * dev.l2Bytes();
    Expected<int64_t> freeOr = dev.freeMemory();
    if (!freeOr)
      return freeOr.takeError();
    int64_t margin =
        std::max<int64_t>(int64_t(256) << 20, dev.totalMemory() / 20);
    maxCopies = 1 + std::max<int64_t>(0, *freeOr - margin) / stride;
    copies = std::min(
        {int64_t(divideCeil(uint64_t(footprint), uint64_t(rotatedBytes))),
         std::max<int64_t>(o.maxCopies, 1), maxCopies});
    copies = std::max<int64_t>(copies, 1);
  }
  // Call i of the sequence reads copy i mod copies, and the sequence runs on
  // across replays; so every graph holds whole rounds of copies or a copy
  // count is a whole number of graphs.
  unsigned calls = o.callsPerGraph, graphs = 1;
  if (copies <= calls) {
    calls = unsigned(divideCeil(calls, uint64_t(copies)) * copies);
  } else {
    int64_t up = int64_t(divideCeil(uint64_t(copies), calls)) * calls;
    copies = up <= maxCopies ? up : copies / calls * calls;
    graphs = unsigned(copies / calls);
  }
  t.copies = copies;
  t.footprintBytes = copies * rotatedBytes;
  t.graphs = graphs;
  t.callsPerGraph = calls;

  // Copy 0 is the executor's own buffers; copies 1.. are filled from them,
  // the first directly and the rest by doubling.
  DeviceBuffer pool;
  std::vector<std::vector<cu::CUdeviceptr>> tables(static_cast<size_t>(copies));
  for (const DeviceBuffer &b : buffers)
    tables[0].push_back(b.ptr());
  if (copies > 1) {
    Expected<DeviceBuffer> poolOr = DeviceBuffer::allocate(
        dev, (copies - 1) * stride,
        fmt::format("{} copies of the timed inputs", copies - 1));
    if (!poolOr)
      return withContext(poolOr.takeError(), fmt::format("timing {}", what));
    pool = std::move(*poolOr);
    std::string copying = fmt::format("copying the inputs to time {}", what);
    for (size_t j = 0; j < rotated.size(); ++j)
      if (Error e = pool.copyFrom(buffers[rotated[j]], offsets[j]))
        return withContext(std::move(e), copying);
    if (Error e = pool.repeatPrefix(stride))
      return withContext(std::move(e), copying);
    for (int64_t c = 1; c < copies; ++c) {
      tables[c] = tables[0];
      for (size_t j = 0; j < rotated.size(); ++j)
        tables[c][rotated[j]] = pool.ptr() + (c - 1) * stride + offsets[j];
    }
  }
  if (Error e = dev.synchronize())
    return std::move(e);

  // Declared after `pool`: destroyed (and the stream drained) first.
  GraphReplayer replayer(dev);
  for (unsigned g = 0; g < graphs; ++g) {
    auto enqueue = [&]() -> Error {
      for (unsigned i = 0; i < calls; ++i) {
        const std::vector<cu::CUdeviceptr> &ptrs =
            tables[size_t((int64_t(g) * calls + i) % copies)];
        for (unsigned k = first; k < last; ++k)
          if (Error e = launch(k, ptrs))
            return e;
      }
      return Error::success();
    };
    if (Error e = replayer.capture(enqueue))
      return withContext(std::move(e),
                         fmt::format("capturing a graph to time {}", what));
  }
  Expected<std::vector<double>> msOr = replayer.replay(o.warmup, o.replays);
  if (!msOr)
    return withContext(msOr.takeError(), fmt::format("timing {}", what));
  for (double ms : *msOr)
    t.samplesMicros.push_back(ms * 1000.0 / calls);
  summarize(t);
  return t;
}

//===----------------------------------------------------------------------===//
// Streaming-read ceiling
//===----------------------------------------------------------------------===//

StringRef readBandwidthPTX() {
  // Grid-stride loop, four independent 16-byte non-coherent loads per thread
  // per step (then one per step for the rest), all xor-reduced; the result
  // is stored only if it equals an impossible magic, so the loads stay and
  // nothing is written. 30 registers on sm_90: 2048 threads per SM.
  static const char *const ptx = R"PTX(//
// mtc_read_bw(src, vectors, sink): reads `vectors` 16-byte vectors at `src`.
//
.version 8.0
.target sm_80
.address_size 64

.visible .entry mtc_read_bw(
	.param .u64 mtc_read_bw_src,
	.param .u64 mtc_read_bw_vectors,
	.param .u64 mtc_read_bw_sink
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<24>;
	.reg .b64 	%rd<16>;

	ld.param.u64 	%rd1, [mtc_read_bw_src];
	ld.param.u64 	%rd2, [mtc_read_bw_vectors];
	ld.param.u64 	%rd3, [mtc_read_bw_sink];
	cvta.to.global.u64 	%rd1, %rd1;
	cvta.to.global.u64 	%rd3, %rd3;
	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mov.u32 	%r4, %nctaid.x;
	// %rd4: this thread's next vector; %rd5: threads in the grid (stride).
	mul.wide.u32 	%rd4, %r1, %r2;
	cvt.u64.u32 	%rd6, %r3;
	add.s64 	%rd4, %rd4, %rd6;
	mul.wide.u32 	%rd5, %r4, %r2;
	// %rd7: the stride in bytes; %rd8: three strides in vectors.
	shl.b64 	%rd7, %rd5, 4;
	mul.lo.s64 	%rd8, %rd5, 3;
	mov.b32 	%r5, 0;

$L__main:
	// Four loads while vector i + 3 * stride is in range.
	add.s64 	%rd9, %rd4, %rd8;
	setp.ge.u64 	%p1, %rd9, %rd2;
	@%p1 bra 	$L__tail;
	shl.b64 	%rd10, %rd4, 4;
	add.s64 	%rd10, %rd1, %rd10;
	add.s64 	%rd11, %rd10, %rd7;
	add.s64 	%rd12, %rd11, %rd7;
	add.s64 	%rd13, %rd12, %rd7;
	ld.global.nc.v4.u32 	{%r6, %r7, %r8, %r9}, [%rd10];
	ld.global.nc.v4.u32 	{%r10, %r11, %r12, %r13}, [%rd11];
	ld.global.nc.v4.u32 	{%r14, %r15, %r16, %r17}, [%rd12];
	ld.global.nc.v4.u32 	{%r18, %r19, %r20, %r21}, [%rd13];
	xor.b32 	%r6, %r6, %r7;
	xor.b32 	%r8, %r8, %r9;
	xor.b32 	%r10, %r10, %r11;
	xor.b32 	%r12, %r12, %r13;
	xor.b32 	%r14, %r14, %r15;
	xor.b32 	%r16, %r16, %r17;
	xor.b32 	%r18, %r18, %r19;
	xor.b32 	%r20, %r20, %r21;
	xor.b32 	%r6, %r6, %r8;
	xor.b32 	%r10, %r10, %r12;
	xor.b32 	%r14, %r14, %r16;
	xor.b32 	%r18, %r18, %r20;
	xor.b32 	%r6, %r6, %r10;
	xor.b32 	%r14, %r14, %r18;
	xor.b32 	%r6, %r6, %r14;
	xor.b32 	%r5, %r5, %r6;
	// i += 4 * stride
	add.s64 	%rd4, %rd9, %rd5;
	bra.uni 	$L__main;

$L__tail:
	// One load per step for the rest.
	setp.ge.u64 	%p1, %rd4, %rd2;
	@%p1 bra 	$L__done;
	shl.b64 	%rd10, %rd4, 4;
	add.s64 	%rd10, %rd1, %rd10;
	ld.global.nc.v4.u32 	{%r6, %r7, %r8, %r9}, [%rd10];
	xor.b32 	%r6, %r6, %r7;
	xor.b32 	%r8, %r8, %r9;
	xor.b32 	%r6, %r6, %r8;
	xor.b32 	%r5, %r5, %r6;
	add.s64 	%rd4, %rd4, %rd5;
	bra.uni 	$L__tail;

$L__done:
	setp.ne.u32 	%p2, %r5, 0x6D7463A5;
	@%p2 bra 	$L__exit;
	st.global.u32 	[%rd3], %r5;

$L__exit:
	ret;
}
)PTX";
  return ptx;
}

Expected<double> measureReadBandwidth(Device &dev, int64_t bytes) {
  static constexpr unsigned kThreads = 256, kCalls = 10, kReplays = 10,
                            kWarmup = 2;
  int64_t vectors = bytes / 16;
  if (vectors < 1)
    return runtimeError("the read-bandwidth buffer needs at least 16 bytes");
  bytes = vectors * 16;
  const CudaDriver &drv = dev.driver();
  if (Error e = dev.makeCurrent())
    return std::move(e);

  Expected<std::unique_ptr<Module>> modOr =
      Module::load(dev, readBandwidthPTX());
  if (!modOr)
    return withContext(modOr.takeError(), "mtc's read-bandwidth kernel");
  Expected<Function> fnOr = (*modOr)->getFunction("mtc_read_bw");
  if (!fnOr)
    return fnOr.takeError();
  Expected<int> perSM = drv.maxActiveBlocksPerSM(fnOr->handle, int(kThreads),
                                                 /*dynamicShared=*/0);
  if (!perSM)
    return perSM.takeError();
  unsigned grid = unsigned(std::max(1, dev.smCount()) * std::max(1, *perSM));

  Expected<DeviceBuffer> srcOr =
      DeviceBuffer::allocate(dev, bytes, "read-bandwidth source");
  if (!srcOr)
    return srcOr.takeError();
  Expected<DeviceBuffer> sinkOr =
      DeviceBuffer::allocate(dev, 4, "read-bandwidth sink");
  if (!sinkOr)
    return sinkOr.takeError();
  if (Error e = sinkOr->fill(0))
    return std::move(e);
  // Random bytes: a 16 MiB block from the host, then doubled on the device.
  {
    int64_t chunk = std::min<int64_t>(bytes, int64_t(16) << 20);
    std::vector<uint64_t> host(size_t(divideCeil(uint64_t(chunk), 8)));
    std::mt19937_64 rng(0x6d7463);
    for (uint64_t &w : host)
      w = rng();
    if (Error e = srcOr->copyFromHost(host.data(), chunk))
      return std::move(e);
    if (Error e = srcOr->repeatPrefix(chunk))
      return withContext(std::move(e), "filling the read-bandwidth buffer");
  }
  if (Error e = dev.synchronize())
    return std::move(e);

  cu::CUdeviceptr src = srcOr->ptr(), sink = sinkOr->ptr();
  unsigned long long count = (unsigned long long)vectors;
  void *params[] = {&src, &count, &sink};
  CudaDriver::LaunchConfig config;
  config.grid[0] = grid;
  config.block[0] = kThreads;
  auto launch = [&]() -> Error {
    return withContext(
        drv.launchKernel(fnOr->handle, config, dev.stream(), params),
        "mtc's read-bandwidth kernel failed");
  };
  if (Error e = launch())
    return std::move(e);
  if (Error e = dev.synchronize())
    return withContext(std::move(e), "mtc's read-bandwidth kernel failed");

  GraphReplayer replayer(dev);
  if (Error e = replayer.capture([&]() -> Error {
        for (unsigned i = 0; i < kCalls; ++i)
          if (Error e = launch())
            return e;
        return Error::success();
      }))
    return std::move(e);
  Expected<std::vector<double>> msOr = replayer.replay(kWarmup, kReplays);
  if (!msOr)
    return withContext(msOr.takeError(), "timing mtc's read-bandwidth kernel");
  Timing t;
  for (double ms : *msOr)
    t.samplesMicros.push_back(ms * 1000.0 / kCalls);
  summarize(t);
  if (!(t.medianMicros > 0))
    return runtimeError("the read-bandwidth kernel took no measurable time");
  return double(bytes) / (t.medianMicros * 1e-6);
}

} // namespace mtc

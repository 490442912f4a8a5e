//===- ReadBandwidth.cpp - The device's streaming-read ceiling ------------===//
//
// See ReadBandwidth.h. The kernel's PTX is runtime/ReadBandwidth.ptx, turned
// into the array kReadBandwidthPtx at build time (cmake/EmbedFile.cmake).
//
//===----------------------------------------------------------------------===//
#include "runtime/ReadBandwidth.h"

#include "runtime/Timing.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <random>

using namespace llvm;

namespace mtc {

/// ReadBandwidth.ptx, NUL-terminated (generated ReadBandwidthPtx.cpp).
extern const char kReadBandwidthPtx[];

StringRef readBandwidthPTX() { return kReadBandwidthPtx; }

namespace {

/// Median microseconds per call of mtc's read kernel over `bytes` (a
/// multiple of 16), each call of a replay reading the next of `copies`
/// copies of them.
Expected<double> timeReads(Device &dev, int64_t bytes, int64_t copies) {
  static constexpr unsigned kThreads = 256, kMinCalls = 10, kReplays = 10,
                            kWarmup = 2;
  int64_t vectors = bytes / 16;
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
      DeviceBuffer::allocate(dev, bytes * copies, "read-bandwidth source");
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
    int64_t chunk = std::min<int64_t>(bytes * copies, int64_t(16) << 20);
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
  // The driver copies the parameters at each launch: `src` may move on.
  auto launch = [&](int64_t copy) -> Error {
    src = srcOr->ptr() + cu::CUdeviceptr(copy * bytes);
    return withContext(
        drv.launchKernel(fnOr->handle, config, dev.stream(), params),
        "mtc's read-bandwidth kernel failed");
  };
  if (Error e = launch(0))
    return std::move(e);
  if (Error e = dev.synchronize())
    return withContext(std::move(e), "mtc's read-bandwidth kernel failed");

  // Whole rounds of the copies, at least kMinCalls calls.
  int64_t calls = alignTo(std::max<int64_t>(kMinCalls, copies), copies);
  GraphReplayer replayer(dev);
  if (Error e = replayer.capture([&]() -> Error {
        for (int64_t i = 0; i < calls; ++i)
          if (Error e = launch(i % copies))
            return e;
        return Error::success();
      }))
    return std::move(e);
  Expected<std::vector<double>> msOr = replayer.replay(kWarmup, kReplays);
  if (!msOr)
    return withContext(msOr.takeError(), "timing mtc's read-bandwidth kernel");
  Timing t;
  for (double ms : *msOr)
    t.samplesMicros.push_back(ms * 1000.0 / double(calls));
  summarize(t);
  if (!(t.medianMicros > 0))
    return runtimeError("the read-bandwidth kernel took no measurable time");
  return t.medianMicros;
}

} // namespace

Expected<double> measureReadBandwidth(Device &dev, int64_t bytes) {
  int64_t vectors = bytes / 16;
  if (vectors < 1)
    return runtimeError("the read-bandwidth buffer needs at least 16 bytes");
  Expected<double> us = timeReads(dev, vectors * 16, /*copies=*/1);
  if (!us)
    return us.takeError();
  return double(vectors * 16) / (*us * 1e-6);
}

Expected<double> measureReadTime(Device &dev, int64_t bytes) {
  int64_t vectors = std::max<int64_t>(1, divideCeil(uint64_t(bytes), 16));
  int64_t size = vectors * 16;
  int64_t footprint = 4 * std::max<int64_t>(dev.l2Bytes(), 1);
  int64_t copies =
      std::clamp<int64_t>(divideCeil(footprint, size), 1, kMaxReadCopies);
  return timeReads(dev, size, copies);
}

} // namespace mtc

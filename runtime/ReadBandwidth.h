//===- ReadBandwidth.h - The device's streaming-read ceiling ----*- C++ -*-===//
//
// `mtc bench` compares every kernel with the bandwidth of mtc's own
// streaming-read kernel (runtime/ReadBandwidth.ptx, embedded at build time).
//
//===----------------------------------------------------------------------===//
#ifndef MTC_RUNTIME_READBANDWIDTH_H
#define MTC_RUNTIME_READBANDWIDTH_H

#include "runtime/Device.h"

namespace mtc {

/// The PTX of mtc's streaming-read kernel (sm_80+): `mtc_read_bw(src,
/// vectors, sink)` reads `vectors` 16-byte vectors from `src`.
llvm::StringRef readBandwidthPTX();

/// The device's streaming-read ceiling in bytes per second: mtc's read kernel
/// over a random-filled buffer of `bytes` (1 GiB: far beyond L2), timed with
/// graphs and replays like Executor::time, median of the replays.
llvm::Expected<double> measureReadBandwidth(Device &device,
                                            int64_t bytes = int64_t(1) << 30);

/// Most copies measureReadTime rotates over.
constexpr int64_t kMaxReadCopies = 64;

/// The least time, in microseconds, that a kernel reading `bytes` once takes
/// in `mtc bench`'s harness: mtc's read kernel over `bytes` (rounded up to
/// 16), timed with graphs and replays like Executor::time (the median), each
/// call reading the next of enough copies that 4 x the device's L2 lies
/// between two reads of one copy (at most kMaxReadCopies copies). Unlike the
/// ceiling, it holds the launch gap, the first loads' latency and the grid's
/// ramp, which dominate small layers.
llvm::Expected<double> measureReadTime(Device &device, int64_t bytes);

} // namespace mtc

#endif // MTC_RUNTIME_READBANDWIDTH_H

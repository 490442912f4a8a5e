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

} // namespace mtc

#endif // MTC_RUNTIME_READBANDWIDTH_H

//===- RuntimeTest.cpp - The CUDA driver layer on the fake ----------------===//
//
// Runs the runtime against FakeCuda (tests/unit/FakeCuda.cpp), a stand-in for
// libcuda.so.1 loaded through MTC_CUDA_LIBRARY, so that every error path and
// the whole create/setInput/run/getOutput/time cycle run without a GPU.
// With the CUDA toolkit installed, mtc's driver declarations are also checked
// against cuda.h at compile time and ptxas must accept mtc's own PTX.
//
// This file loads the driver, opens the device, checks runtime errors and
// measures the streaming-read ceiling; RuntimeLaunchTest.cpp covers modules,
// memory and launches, RuntimeExecutorTest.cpp the executor (RuntimeFixture.h
// holds what they share).
//
//===----------------------------------------------------------------------===//
#include "runtime/CudaDriver.h"
#include "runtime/ReadBandwidth.h"

#include "RuntimeFixture.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>
#include <type_traits>

// After every mtc header (cuda.h's #defines rename cuX to cuX_v2).
#ifdef MTC_CUDA_H
#include MTC_CUDA_H
#endif

using namespace mtc;
using namespace llvm;

#ifdef MTC_CUDA_H
//===----------------------------------------------------------------------===//
// mtc's declarations against cuda.h (compile time)
//===----------------------------------------------------------------------===//

namespace {
template <typename A, typename B> constexpr bool sameKind() {
  return sizeof(A) == sizeof(B) && std::is_pointer_v<A> == std::is_pointer_v<B>;
}
template <typename... A, typename... B, size_t... I>
constexpr bool sameParams(std::tuple<A...> *, std::tuple<B...> *,
                          std::index_sequence<I...>) {
  return (sameKind<std::tuple_element_t<I, std::tuple<A...>>,
                   std::tuple_element_t<I, std::tuple<B...>>>() &&
          ...);
}
/// Same return size and the same number, sizes and pointer-ness of
/// parameters (mtc's enums are distinct types from cuda.h's).
template <typename RA, typename... A, typename RB, typename... B>
constexpr bool sameSignature(RA (*)(A...), RB (*)(B...)) {
  if constexpr (sizeof...(A) != sizeof...(B))
    return false;
  else
    return sizeof(RA) == sizeof(RB) &&
           sameParams((std::tuple<A...> *)nullptr, (std::tuple<B...> *)nullptr,
                      std::index_sequence_for<A...>());
}
} // namespace

// `&::name` expands cuda.h's version macros, so cuEventElapsedTime is checked
// against cuEventElapsedTime_v2 (the same signature).
#define MTC_CHECK_SIGNATURE(name, ...)                                         \
  static_assert(sameSignature(CudaDriver::name##_fn(), &::name),               \
                #name " differs from cuda.h");
MTC_CUDA_REQUIRED_FUNCTIONS(MTC_CHECK_SIGNATURE)
MTC_CUDA_OPTIONAL_FUNCTIONS(MTC_CHECK_SIGNATURE)
#undef MTC_CHECK_SIGNATURE

static_assert(std::is_same_v<cu::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<cu::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<cu::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<cu::CUstream, ::CUstream>);
static_assert(std::is_same_v<cu::CUevent, ::CUevent>);
static_assert(std::is_same_v<cu::CUgraph, ::CUgraph>);
static_assert(std::is_same_v<cu::CUgraphExec, ::CUgraphExec>);
static_assert(std::is_same_v<cu::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<cu::CUdevice, ::CUdevice>);
static_assert(sizeof(cu::CUresult) == sizeof(::CUresult));
static_assert(sizeof(cu::CUjit_option) == sizeof(::CUjit_option));
static_assert(sizeof(cu::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(cu::CUfunction_attribute) ==
              sizeof(::CUfunction_attribute));
static_assert(sizeof(cu::CUstreamCaptureMode) == sizeof(::CUstreamCaptureMode));

#define MTC_CHECK_VALUE(name)                                                  \
  static_assert(int(cu::name) == int(::name), #name " differs from cuda.h");
MTC_CHECK_VALUE(CUDA_SUCCESS)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_VALUE)
MTC_CHECK_VALUE(CUDA_ERROR_OUT_OF_MEMORY)
MTC_CHECK_VALUE(CUDA_ERROR_NOT_INITIALIZED)
MTC_CHECK_VALUE(CUDA_ERROR_NO_DEVICE)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_DEVICE)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_CONTEXT)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_PTX)
MTC_CHECK_VALUE(CUDA_ERROR_INVALID_HANDLE)
MTC_CHECK_VALUE(CUDA_ERROR_NOT_FOUND)
MTC_CHECK_VALUE(CUDA_ERROR_ILLEGAL_ADDRESS)
MTC_CHECK_VALUE(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
MTC_CHECK_VALUE(CUDA_ERROR_LAUNCH_FAILED)
MTC_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
MTC_CHECK_VALUE(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
MTC_CHECK_VALUE(CU_JIT_MAX_REGISTERS)
MTC_CHECK_VALUE(CU_JIT_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_JIT_WALL_TIME)
MTC_CHECK_VALUE(CU_JIT_INFO_LOG_BUFFER)
MTC_CHECK_VALUE(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES)
MTC_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER)
MTC_CHECK_VALUE(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
MTC_CHECK_VALUE(CU_JIT_OPTIMIZATION_LEVEL)
MTC_CHECK_VALUE(CU_JIT_LOG_VERBOSE)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
MTC_CHECK_VALUE(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_NUM_REGS)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_PTX_VERSION)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_BINARY_VERSION)
MTC_CHECK_VALUE(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_GLOBAL)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
MTC_CHECK_VALUE(CU_STREAM_CAPTURE_MODE_RELAXED)
MTC_CHECK_VALUE(CU_STREAM_DEFAULT)
MTC_CHECK_VALUE(CU_STREAM_NON_BLOCKING)
MTC_CHECK_VALUE(CU_EVENT_DEFAULT)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_UINT8)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_FLOAT32)
MTC_CHECK_VALUE(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16)
MTC_CHECK_VALUE(CU_TENSOR_MAP_INTERLEAVE_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_SWIZZLE_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_SWIZZLE_128B)
MTC_CHECK_VALUE(CU_TENSOR_MAP_L2_PROMOTION_NONE)
MTC_CHECK_VALUE(CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
MTC_CHECK_VALUE(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
#undef MTC_CHECK_VALUE
static_assert(sizeof(cu::CUtensorMap) == sizeof(::CUtensorMap) &&
              alignof(cu::CUtensorMap) == alignof(::CUtensorMap));
static_assert(sizeof(cu::CUtensorMapDataType) == sizeof(::CUtensorMapDataType));
static_assert(sizeof(cu::CUtensorMapSwizzle) == sizeof(::CUtensorMapSwizzle));

TEST(CudaHeader, DeclarationsMatch) {
  SUCCEED() << "checked at compile time against " << MTC_CUDA_H;
}
#endif // MTC_CUDA_H

using namespace mtc::test;

namespace {

//===----------------------------------------------------------------------===//
// Loading the driver and opening the device
//===----------------------------------------------------------------------===//

TEST_F(Runtime, MissingLibrary) {
  ::setenv("MTC_CUDA_LIBRARY", "/nonexistent/dir/libcuda.so.1", 1);
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  std::string msg = runtimeMessage(d);
  EXPECT_NE(msg.find("cannot load the CUDA driver "
                     "(/nonexistent/dir/libcuda.so.1): "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("/nonexistent/dir/libcuda.so.1: cannot open shared "
                     "object file"),
            std::string::npos)
      << "dlerror() text expected: " << msg;
  EXPECT_NE(msg.find("; mtc run/tune/bench need an NVIDIA GPU and driver "
                     "(mtc compile does not)"),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, DefaultLibraryName) {
  ::unsetenv("MTC_CUDA_LIBRARY");
  Expected<std::unique_ptr<Device>> d = Device::open();
  if (d)
    GTEST_SKIP() << "this machine has a CUDA driver and a device";
  std::string msg = runtimeMessage(d);
  if (msg.find("cannot load the CUDA driver") == std::string::npos)
    GTEST_SKIP() << "this machine has a CUDA driver: " << msg;
  EXPECT_NE(msg.find("cannot load the CUDA driver (libcuda.so.1): "),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, LibraryThatIsNotADriver) {
  ::setenv("MTC_CUDA_LIBRARY", "libm.so.6", 1);
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  std::string msg = runtimeMessage(d);
  EXPECT_NE(msg.find("cannot use the CUDA driver (libm.so.6): it lacks "
                     "cuGetErrorName, cuGetErrorString, cuInit, "
                     "cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet and "
                     "39 more; mtc needs a driver for CUDA 12.0 or newer"),
            std::string::npos)
      << msg;
}

TEST_F(Runtime, NoDevice) {
  setMode("no_device");
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d),
            "no CUDA device found: cuInit failed: CUDA_ERROR_NO_DEVICE (no "
            "CUDA-capable device is detected)");
}

TEST_F(Runtime, ZeroDevices) {
  setMode("zero_devices");
  Expected<std::unique_ptr<Device>> d = Device::open();
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d), "no CUDA device found");
  Expected<std::unique_ptr<Device>> d1 = Device::open(1);
  ASSERT_FALSE(d1);
  EXPECT_EQ(runtimeMessage(d1), "no CUDA device found");
}

TEST_F(Runtime, DeviceOrdinalOutOfRange) {
  Expected<std::unique_ptr<Device>> d = Device::open(3);
  ASSERT_FALSE(d);
  EXPECT_EQ(runtimeMessage(d), "there is no CUDA device 3 (1 found)");
}

TEST_F(Runtime, DeviceProperties) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  EXPECT_EQ(d->name(), "Fake NVIDIA H200");
  EXPECT_EQ(d->computeMajor(), 9);
  EXPECT_EQ(d->computeMinor(), 0);
  EXPECT_EQ(d->arch(), "sm_90");
  EXPECT_EQ(d->driverVersion(), 13000);
  EXPECT_EQ(d->driverVersionString(), "13.0");
  EXPECT_EQ(d->smCount(), 132);
  EXPECT_EQ(d->l2Bytes(), 50 << 20);
  EXPECT_EQ(d->totalMemory(), int64_t(140) << 30);
  Expected<int64_t> freeMem = d->freeMemory();
  ASSERT_TRUE(bool(freeMem));
  EXPECT_EQ(*freeMem, int64_t(140) << 30);
  EXPECT_EQ(d->maxThreadsPerBlock(), 1024);
  EXPECT_EQ(d->maxSharedPerBlock(), 48 * 1024);
  EXPECT_EQ(d->maxSharedPerBlockOptin(), 227 * 1024);
  EXPECT_EQ(d->maxGridDim(0), 2147483647);
  EXPECT_NE(d->stream(), nullptr);
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "stream or context not released";
}

TEST_F(Runtime, IdentityHasTheBandwidth) {
  // Two transfers per memory clock over the bus: the fake's 3201 MHz on
  // 6144 bits, an H200's as its driver reports them.
  Expected<DeviceIdentity> id = identifyDevice();
  ASSERT_TRUE(bool(id)) << toString(id.takeError());
  EXPECT_EQ(id->sms, 132);
  EXPECT_EQ(id->memBandwidth, int64_t(3201000) * 1000 * 2 * 6144 / 8);
}

TEST(RuntimeErrors, FormatBytes) {
  EXPECT_EQ(formatBytes(100), "100 B");
  EXPECT_EQ(formatBytes(12 * 1024), "12.0 KiB");
  EXPECT_EQ(formatBytes(int64_t(512) << 20), "512.0 MiB");
  EXPECT_EQ(formatBytes(int64_t(2) << 30), "2.0 GiB");
  EXPECT_EQ(formatBytes(int64_t(1.2 * double(int64_t(1) << 30))), "1.2 GiB");
}

TEST(RuntimeErrors, ContextKeepsTheKind) {
  Error e = withContext(runtimeError("inner", 719), "outer");
  ASSERT_TRUE(e.isA<RuntimeError>());
  handleAllErrors(std::move(e), [](const RuntimeError &r) {
    EXPECT_EQ(r.getMessage(), "outer: inner");
    EXPECT_EQ(r.getResult(), 719);
  });
  Error plain = withContext(
      createStringError(inconvertibleErrorCode(), "plain"), "outer");
  EXPECT_TRUE(plain.isA<RuntimeError>());
  EXPECT_EQ(toString(std::move(plain)), "outer: plain");
  EXPECT_FALSE(bool(withContext(Error::success(), "outer")));
}

//===----------------------------------------------------------------------===//
// The streaming-read ceiling
//===----------------------------------------------------------------------===//

TEST(ReadBandwidth, PtxAssembles) {
#ifndef MTC_PTXAS
  GTEST_SKIP() << "ptxas was not found at configure time";
#else
  if (!sys::fs::can_execute(MTC_PTXAS))
    GTEST_SKIP() << MTC_PTXAS << " is not executable";
  SmallString<128> path;
  ASSERT_FALSE(sys::fs::createTemporaryFile("mtc-read-bw", "ptx", path));
  {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << readBandwidthPTX();
  }
  for (const char *arch : {"-arch=sm_90", "-arch=sm_80"}) {
    std::string errMsg;
    StringRef args[] = {MTC_PTXAS, arch, path, "-o", "/dev/null"};
    int rc =
        sys::ExecuteAndWait(MTC_PTXAS, args, std::nullopt, {}, 60, 0, &errMsg);
    EXPECT_EQ(rc, 0) << "ptxas " << arch << " rejected the read kernel "
                     << errMsg;
  }
  sys::fs::remove(path);
#endif
}

TEST_F(Runtime, ReadBandwidthWithTheFake) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  resetStats();
  int64_t bytes = int64_t(64) << 20;
  Expected<double> bw = measureReadBandwidth(*d, bytes);
  ASSERT_TRUE(bool(bw)) << toString(bw.takeError());
  // One simulated microsecond per call.
  EXPECT_NEAR(*bw, double(bytes) * 1e6, double(bytes) * 1e6 * 1e-4);
  unsigned grid[3], block[3], shared;
  fakeFn<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
      grid, block, &shared);
  EXPECT_EQ(grid[0], 132u * 8); // 8 blocks of 256 threads per SM
  EXPECT_EQ(block[0], 256u);
  d.reset();
  EXPECT_EQ(liveObjects(), 0);
}

TEST_F(Runtime, ReadTimeRotatesCopiesPastL2WithTheFake) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  // The fake has 50 MiB of L2: 8 MiB reads rotate over 25 copies (200 MiB),
  // 3 bytes round up to one vector and stop at kMaxReadCopies, and past
  // 200 MiB one copy is enough.
  for (auto [bytes, copies] : {std::pair<int64_t, long>{int64_t(8) << 20, 25},
                               {3, kMaxReadCopies},
                               {(int64_t(200) << 20) + 16, 1}}) {
    resetStats();
    Expected<double> us = measureReadTime(*d, bytes);
    ASSERT_TRUE(bool(us)) << toString(us.takeError());
    EXPECT_NEAR(*us, 1.0, 1e-4); // one simulated microsecond per call
    EXPECT_EQ(distinctFirstArgs(), copies) << bytes << " bytes";
  }
  d.reset();
  EXPECT_EQ(liveObjects(), 0);
}

} // namespace

//===- RuntimeExecutorTest.cpp - The executor on the fake driver ----------===//
//
// The executor on FakeCuda: the create/setInput/run/getOutput cycle, poison,
// the checks on inputs, and timing with rotated input copies, whole-program
// and per kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/Executor.h"

#include "RuntimeFixture.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

using namespace mtc;
using namespace mtc::test;
using namespace llvm;

namespace {

TEST_F(Runtime, FullCycle) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  {
    Expected<std::unique_ptr<Executor>> exOr =
        Executor::create(*d, copyManifest(), kCopyPtx);
    ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
    Executor &ex = **exOr;
    EXPECT_NE(ex.jitInfoLog().find("k1_copy"), StringRef::npos);
    EXPECT_EQ(ex.kernelAttributes(0).registers, 32);

    // Everything starts zeroed.
    Expected<HostTensor> y0 = ex.getOutput("y");
    ASSERT_TRUE(bool(y0)) << toString(y0.takeError());
    EXPECT_EQ(y0->data, std::vector<uint8_t>(4096, 0));
    Expected<HostTensor> ws = ex.getOutput("ws");
    ASSERT_TRUE(bool(ws));
    EXPECT_EQ(ws->data, std::vector<uint8_t>(512, 0));

    HostTensor x = randomInput();
    ASSERT_FALSE(bool(ex.setInput("x", x)));
    ASSERT_FALSE(bool(ex.poison()));
    Expected<HostTensor> poisoned = ex.getOutput("y");
    ASSERT_TRUE(bool(poisoned));
    EXPECT_EQ(poisoned->data, std::vector<uint8_t>(4096, 0xFF));
    EXPECT_TRUE(std::isnan(poisoned->get(0)));
    Expected<HostTensor> t = ex.getOutput("t");
    ASSERT_TRUE(bool(t));
    EXPECT_EQ(t->data, std::vector<uint8_t>(4096, 0xFF));
    // Poison leaves inputs and workspaces alone.
    Expected<HostTensor> xBack = ex.getOutput("x");
    ASSERT_TRUE(bool(xBack));
    EXPECT_EQ(xBack->data, x.data);
    ws = ex.getOutput("ws");
    ASSERT_TRUE(bool(ws));
    EXPECT_EQ(ws->data, std::vector<uint8_t>(512, 0));

    resetStats();
    ASSERT_FALSE(bool(ex.run()));
    EXPECT_EQ(executedKernels(), 2);
    unsigned grid[3], block[3], shared;
    fakeFn<void (*)(unsigned *, unsigned *, unsigned *)>("fakeCudaLastLaunch")(
        grid, block, &shared);
    EXPECT_EQ(grid[0], 8u);
    EXPECT_EQ(grid[1], 1u);
    EXPECT_EQ(block[0], 256u);
    EXPECT_EQ(shared, 0u);

    Expected<HostTensor> y = ex.getOutput("y");
    ASSERT_TRUE(bool(y)) << toString(y.takeError());
    EXPECT_EQ(y->dtype, DType::F32);
    EXPECT_EQ(ArrayRef<int64_t>(y->shape), ArrayRef<int64_t>({4, 256}));
    EXPECT_EQ(y->data, x.data);

    Expected<HostTensor> nope = ex.getOutput("nope");
    ASSERT_FALSE(nope);
    EXPECT_EQ(runtimeMessage(nope),
              "graph 'copies' has no buffer 'nope' (outputs: y)");
  }
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "device objects leaked";
}

TEST_F(Runtime, SetInputChecks) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  Executor &ex = **exOr;
  EXPECT_EQ(runtimeMessage(ex.setInput("x", HostTensor(DType::F32, {256, 4}))),
            "input 'x' has shape [4, 256] but the tensor has shape [256, 4]");
  EXPECT_EQ(runtimeMessage(ex.setInput("x", HostTensor(DType::BF16, {4, 256}))),
            "input 'x' is f32 but the tensor is bf16");
  HostTensor truncated(DType::F32, {4, 256});
  truncated.data.resize(100);
  EXPECT_EQ(runtimeMessage(ex.setInput("x", truncated)),
            "input 'x' needs 4096 bytes but the tensor holds 100");
  EXPECT_EQ(runtimeMessage(ex.setInput("y", randomInput())),
            "'y' is not an input of graph 'copies' (inputs: x)");
  EXPECT_EQ(runtimeMessage(ex.setInput("zz", randomInput())),
            "'zz' is not an input of graph 'copies' (inputs: x)");
}

TEST_F(Runtime, RunRefusesUnsetInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  EXPECT_EQ(runtimeMessage((*ex)->run()),
            "input 'x' has not been set; running the graph would compute on "
            "zeros");
}

TEST_F(Runtime, TimingRefusesUnsetInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> ex =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
  resetStats();
  Expected<Timing> t = (*ex)->time();
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t),
            "input 'x' has not been set; timing would compute on zeros");
  EXPECT_EQ(executedKernels(), 0);
}

TEST_F(Runtime, TimingWholeProgramRotatesInputs) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  {
    Expected<std::unique_ptr<Executor>> exOr =
        Executor::create(*d, copyManifest(), kCopyPtx);
    ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
    Executor &ex = **exOr;
    ASSERT_FALSE(bool(ex.setInput("x", randomInput())));

    // Default footprint: 4 x 50 MiB of L2 over 4 KiB of input wants 51200
    // copies; capped at 16384, rounded up to whole graphs of 40 calls.
    resetStats();
    Expected<Timing> t = ex.time();
    ASSERT_TRUE(bool(t)) << toString(t.takeError());
    EXPECT_EQ(t->rotatedBytes, 4096);
    EXPECT_EQ(t->copies, 16400);
    EXPECT_EQ(t->footprintBytes, 16400 * 4096);
    EXPECT_EQ(t->graphs, 410u);
    EXPECT_EQ(t->callsPerGraph, 40u);
    ASSERT_EQ(t->samplesMicros.size(), 15u);
    // Two kernels of one simulated microsecond each per call.
    EXPECT_NEAR(t->medianMicros, 2.0, 1e-4);
    EXPECT_NEAR(t->minMicros, 2.0, 1e-4);
    EXPECT_NEAR(t->maxMicros, 2.0, 1e-4);
    // One plain run, 410 warm-up replays (every graph once), 15 timed ones.
    EXPECT_EQ(executedKernels(), 2 + (410 + 15) * 40 * 2);
    // k0 read every copy of x, k1 always the one t.
    EXPECT_EQ(distinctFirstArgs(), 16400 + 1);
    // Every copy of x held x.
    EXPECT_EQ(copyMismatches(), 0);
    Expected<HostTensor> y = ex.getOutput("y");
    ASSERT_TRUE(bool(y));
    EXPECT_EQ(y->data, randomInput().data);

    // A small footprint: 3 copies, 42 calls in one graph.
    TimingOptions o;
    o.minFootprintBytes = 3 * 4096;
    o.replays = 5;
    o.warmup = 1;
    resetStats();
    t = ex.time(o);
    ASSERT_TRUE(bool(t)) << toString(t.takeError());
    EXPECT_EQ(t->copies, 3);
    EXPECT_EQ(t->graphs, 1u);
    EXPECT_EQ(t->callsPerGraph, 42u);
    EXPECT_EQ(t->samplesMicros.size(), 5u);
    EXPECT_NEAR(t->medianMicros, 2.0, 1e-4);
    EXPECT_EQ(distinctFirstArgs(), 3 + 1);
    EXPECT_EQ(copyMismatches(), 0);
  }
  d.reset();
  EXPECT_EQ(liveObjects(), 0) << "timing leaked graphs, events or copies";
}

TEST_F(Runtime, TimingOneKernelRotatesWhatItReads) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  Executor &ex = **exOr;
  ASSERT_FALSE(bool(ex.setInput("x", randomInput())));
  TimingOptions o;
  o.kernel = 1;
  o.minFootprintBytes = 4 * 4096;
  resetStats();
  Expected<Timing> t = ex.time(o);
  ASSERT_TRUE(bool(t)) << toString(t.takeError());
  // k1 reads t, which k0 produced.
  EXPECT_EQ(t->rotatedBytes, 4096);
  EXPECT_EQ(t->copies, 4);
  EXPECT_EQ(t->callsPerGraph, 40u);
  EXPECT_NEAR(t->medianMicros, 1.0, 1e-4);
  // Every copy of t (and x, in the plain run first) held k0's result.
  EXPECT_EQ(distinctFirstArgs(), 4 + 1);
  EXPECT_EQ(copyMismatches(), 0);
  Expected<HostTensor> y = ex.getOutput("y");
  ASSERT_TRUE(bool(y));
  EXPECT_EQ(y->data, randomInput().data);

  o.kernel = 2;
  t = ex.time(o);
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t), "there is no kernel 2 (2 kernels)");
}

TEST_F(Runtime, TimingFaultIsReported) {
  std::unique_ptr<Device> d = openDevice();
  ASSERT_TRUE(d);
  Expected<std::unique_ptr<Executor>> exOr =
      Executor::create(*d, copyManifest(), kCopyPtx);
  ASSERT_TRUE(bool(exOr)) << toString(exOr.takeError());
  ASSERT_FALSE(bool((*exOr)->setInput("x", randomInput())));
  setMode("launch_fail");
  Expected<Timing> t = (*exOr)->time();
  ASSERT_FALSE(t);
  EXPECT_EQ(runtimeMessage(t),
            "kernel 'k0_copy' failed: cuLaunchKernel failed: "
            "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
}

} // namespace

//===- GraphRunnerTest.cpp - Seeded inputs, padding and checks ------------===//
//
// The library half of `mtc run` and `mtc bench` (runtime/GraphRunner.h):
// seeded inputs, zero-padding to a bucket's shapes and cutting outputs back,
// run on FakeCuda (tests/unit/FakeCuda.cpp), whose *copy kernels copy their
// first parameter into their second.
//
//===----------------------------------------------------------------------===//
#include "runtime/GraphRunner.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "ManifestParts.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mtc;
using namespace llvm;
using test::buffer;

namespace {

/// y = x at bucket M=4: x and y are f32[4, 8]; `w` is a second input.
Manifest copyManifest() {
  Manifest m;
  m.mtcVersion = "test";
  m.graph = "g";
  m.arch = "sm_90";
  m.ptxFile = "g.M4.ptx";
  m.buffers = {buffer("x", BufferInfo::Role::Input, DType::F32, {4, 8}),
               buffer("w", BufferInfo::Role::Input, DType::BF16, {4, 8}),
               buffer("y", BufferInfo::Role::Output, DType::F32, {4, 8})};
  m.outputs = {"y"};
  m.kernels = {test::kernel("k0_copy", {"x", "y"}, 1, 32)};
  return m;
}

const char *kCopyPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry k0_copy(.param .u64 a, .param .u64 b) { ret; }
)";

HostTensor filled(DType t, ArrayRef<int64_t> shape, double first) {
  HostTensor h(t, shape);
  for (int64_t i = 0; i < h.numElements(); ++i)
    h.set(i, first + double(i));
  return h;
}

//===----------------------------------------------------------------------===//
// Seeded inputs and shapes (no device)
//===----------------------------------------------------------------------===//

TEST(RandomInputs, SameSeedSameTensors) {
  Manifest m = copyManifest();
  std::vector<HostTensor> a = randomInputs(m, 5), b = randomInputs(m, 5);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].data, b[i].data) << "input " << i;
    EXPECT_EQ(a[i].dtype, m.inputs()[i]->dtype);
    EXPECT_EQ(a[i].shape, m.inputs()[i]->shape);
  }
  // Another seed gives other tensors.
  std::vector<HostTensor> c = randomInputs(m, 6);
  EXPECT_NE(a[0].data, c[0].data);
  EXPECT_NE(a[1].data, c[1].data);
}

TEST(RandomInputs, InputIGetsItsOwnSeed) {
  // The seeds of mtc run, bench and tune: a seed names the same tensors
  // everywhere, and equal inputs do not get equal contents.
  EXPECT_EQ(inputSeed(0, 0), 0u);
  EXPECT_EQ(inputSeed(2, 1), 2u * 1000003 + 1);
  Manifest m = copyManifest();
  std::vector<HostTensor> in = randomInputs(m, 7);
  for (unsigned i = 0; i < in.size(); ++i) {
    const BufferInfo &b = *m.inputs()[i];
    HostTensor want(b.dtype, b.shape);
    fillRandom(want, inputSeed(7, i), b.name);
    EXPECT_EQ(in[i].data, want.data) << b.name;
  }
}

TEST(RandomInputs, AtGivenShapes) {
  Manifest m = copyManifest();
  std::vector<HostTensor> in = randomInputs(m, 1, {{3, 8}, {2, 8}});
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].shape, Shape({3, 8}));
  EXPECT_EQ(in[0].dtype, DType::F32);
  EXPECT_EQ(in[1].shape, Shape({2, 8}));
  EXPECT_EQ(in[1].dtype, DType::BF16);
}

TEST(FitToShape, PadsWithZerosAndCuts) {
  HostTensor t = filled(DType::F32, {2, 3}, 1); // 1 2 3 / 4 5 6
  HostTensor padded = fitToShape(t, {3, 4});
  ASSERT_EQ(padded.shape, Shape({3, 4}));
  std::vector<double> want = {1, 2, 3, 0, 4, 5, 6, 0, 0, 0, 0, 0};
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(padded.get(i), want[size_t(i)]) << i;
  HostTensor cut = fitToShape(padded, {2, 3});
  EXPECT_EQ(cut.shape, t.shape);
  EXPECT_EQ(cut.data, t.data);
  HostTensor same = fitToShape(t, {2, 3});
  EXPECT_EQ(same.data, t.data);
}

//===----------------------------------------------------------------------===//
// On FakeCuda
//===----------------------------------------------------------------------===//

class OnFakeCuda : public ::testing::Test {
protected:
  void SetUp() override {
    ::setenv("MTC_CUDA_LIBRARY", MTC_FAKE_CUDA, 1);
    ::setenv("FAKE_CUDA_MODE", "ok", 1);
    Expected<std::unique_ptr<Device>> d = Device::open();
    ASSERT_TRUE(bool(d)) << toString(d.takeError());
    device = std::move(*d);
    Expected<std::unique_ptr<Executor>> ex =
        Executor::create(*device, copyManifest(), kCopyPtx);
    ASSERT_TRUE(bool(ex)) << toString(ex.takeError());
    exec = std::move(*ex);
  }
  void TearDown() override {
    exec.reset();
    device.reset();
  }

  std::unique_ptr<Device> device;
  std::unique_ptr<Executor> exec;
};

TEST_F(OnFakeCuda, PadsInputsToTheBucketAndCutsOutputsBack) {
  // The graph runs at M=3 on the kernels compiled for M=4.
  Expected<GraphRun> run =
      runOnRandomInputs(*exec, 3, {{3, 8}, {3, 8}}, {{3, 8}});
  ASSERT_TRUE(bool(run)) << toString(run.takeError());
  ASSERT_EQ(run->inputs.size(), 2u);
  EXPECT_EQ(run->inputs[0].shape, Shape({3, 8}));
  EXPECT_EQ(run->inputs[0].data,
            randomInputs(exec->manifest(), 3, {{3, 8}, {3, 8}})[0].data);
  ASSERT_EQ(run->outputs.size(), 1u);
  EXPECT_EQ(run->outputs[0].shape, Shape({3, 8}));
  EXPECT_EQ(run->outputs[0].data, run->inputs[0].data);

  // On the device: the input zero-padded, so the copy's last row is zero.
  Expected<std::vector<HostTensor>> full = getOutputs(*exec);
  ASSERT_TRUE(bool(full)) << toString(full.takeError());
  ASSERT_EQ((*full)[0].shape, Shape({4, 8}));
  for (int64_t i = 0; i < 32; ++i)
    EXPECT_EQ((*full)[0].get(i), i < 24 ? run->inputs[0].get(i) : 0.0) << i;
}

TEST_F(OnFakeCuda, RunsAtTheCompiledShapes) {
  Expected<GraphRun> run = runOnRandomInputs(*exec, 9, {}, {});
  ASSERT_TRUE(bool(run)) << toString(run.takeError());
  EXPECT_EQ(run->inputs[0].shape, Shape({4, 8}));
  EXPECT_EQ(run->outputs[0].shape, Shape({4, 8}));
  EXPECT_EQ(run->outputs[0].data, run->inputs[0].data);
}

TEST_F(OnFakeCuda, SetInputsPadsEachInput) {
  std::vector<HostTensor> in = {filled(DType::F32, {1, 8}, 1),
                                filled(DType::BF16, {4, 8}, 0)};
  ASSERT_FALSE(bool(setInputs(*exec, in)));
  Expected<HostTensor> x = exec->getOutput("x");
  ASSERT_TRUE(bool(x)) << toString(x.takeError());
  EXPECT_EQ(x->shape, Shape({4, 8}));
  EXPECT_EQ(x->get(7), 8.0);
  EXPECT_EQ(x->get(8), 0.0);
  // A tensor of the wrong dtype is still refused by the executor.
  in[1] = filled(DType::F32, {4, 8}, 0);
  Error e = setInputs(*exec, in);
  ASSERT_TRUE(bool(e));
  EXPECT_EQ(toString(std::move(e)), "input 'w' is bf16 but the tensor is f32");
}

class CheckOutputs : public OnFakeCuda {
protected:
  graph::FuncOp parse(StringRef text) {
    ctx.loadDialect<graph::GraphDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    if (!module)
      return nullptr;
    return *module->getOps<graph::FuncOp>().begin();
  }
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(CheckOutputs, AgainstTheReference) {
  // Two transposes: the identity that the copy kernel computes.
  graph::FuncOp g = parse(R"(
    graph.func @g(%x: tensor<3x8xf32>, %w: tensor<3x8xbf16>)
        -> tensor<3x8xf32> {
      %t = graph.transpose %x : tensor<3x8xf32> -> tensor<8x3xf32>
      %y = graph.transpose %t : tensor<8x3xf32> -> tensor<3x8xf32>
      graph.return %y : tensor<3x8xf32>
    })");
  ASSERT_TRUE(g);
  EXPECT_EQ(argumentShapes(g), std::vector<Shape>({{3, 8}, {3, 8}}));
  EXPECT_EQ(resultShapes(g), std::vector<Shape>({{3, 8}}));
  Expected<GraphRun> run =
      runOnRandomInputs(*exec, 1, argumentShapes(g), resultShapes(g));
  ASSERT_TRUE(bool(run)) << toString(run.takeError());
  Expected<std::vector<OutputCheck>> checks =
      checkOutputs(g, *run, exec->manifest(), 1.0);
  ASSERT_TRUE(bool(checks)) << toString(checks.takeError());
  ASSERT_EQ(checks->size(), 1u);
  EXPECT_EQ((*checks)[0].name, "y");
  EXPECT_TRUE((*checks)[0].passed);
  EXPECT_EQ((*checks)[0].comparison.maxAbsErr, 0.0);
}

TEST_F(CheckOutputs, MismatchIsReported) {
  // relu differs from the copy wherever an input is negative.
  graph::FuncOp g = parse(R"(
    graph.func @g(%x: tensor<4x8xf32>, %w: tensor<4x8xbf16>)
        -> tensor<4x8xf32> {
      %y = graph.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
      graph.return %y : tensor<4x8xf32>
    })");
  ASSERT_TRUE(g);
  Expected<GraphRun> run =
      runOnRandomInputs(*exec, 1, argumentShapes(g), resultShapes(g));
  ASSERT_TRUE(bool(run)) << toString(run.takeError());
  Expected<std::vector<OutputCheck>> checks =
      checkOutputs(g, *run, exec->manifest());
  ASSERT_TRUE(bool(checks)) << toString(checks.takeError());
  ASSERT_EQ(checks->size(), 1u);
  EXPECT_FALSE((*checks)[0].passed);
  EXPECT_EQ((*checks)[0].tolerance, defaultCheckUlps(DType::F32, false));
  EXPECT_GT((*checks)[0].comparison.maxUlps, (*checks)[0].tolerance);
}

} // namespace

// RUN: %mtc-opt %s --mtc-lower-to-nvvm | FileCheck %s
// RUN: %mtc-opt %s --mtc-lower-to-nvvm=fast-dequant=false | FileCheck %s --check-prefix=CVT

// Each scheduled kernel op becomes an llvm.func GPU kernel named
// <graph>_k<index>: one 16-byte aligned, non-aliasing global pointer per
// buffer (inputs read-only, the output last), launch geometry and
// provenance as mtc.* attributes, and the graph.funcs are gone.

#row = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0) -> (d0)>

// CHECK-NOT: graph.func

// A SIMT contraction with an int8 weight: 16-byte weight loads in a K loop,
// the int8 -> float conversion by byte permutes against a magic exponent
// (only a remainder loop, for K not a multiple of the vector, converts single
// bytes with sitofp), and a warp-shuffle reduction.
// CHECK-LABEL: llvm.func @small_k0(
// CHECK-SAME:      !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias, llvm.readonly}
// CHECK-SAME:      !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias, llvm.readonly}
// CHECK-SAME:      !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias, llvm.readonly}
// CHECK-SAME:      !llvm.ptr<1> {llvm.align = 16 : i64, llvm.noalias})
// CHECK-SAME:      mtc.block = array<i64: 128, 1, 1>, mtc.grid = array<i64: 8, 1, 1>, mtc.nodes = ["wf", "y", "out"], mtc.schedule = "simt w4 r1 kw1 v16 u4 mt1 sk1", nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK:         scf.for
// CHECK:         llvm.load %{{.*}} invariant {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK:         nvvm.prmt
// CHECK:         nvvm.shfl.sync  bfly
// CHECK:         llvm.store %{{.*}} : bf16, !llvm.ptr<1>

// With fast-dequant=false the weight goes through sitofp instead.
// CVT-LABEL:   llvm.func @small_k0(
// CVT-NOT:       nvvm.prmt
// CVT:           arith.sitofp %{{.*}} : i8 to f32
// CVT-LABEL:   llvm.func @act_k0(
graph.func @small(%x: tensor<1x64xbf16>, %w: tensor<32x64xi8>, %scales: tensor<32xbf16>) -> tensor<1x32xbf16> {
  %out = kernel.contract %x, %w epilogue(%scales : tensor<32xbf16>) {epilogue_maps = [#row], nodes = ["wf", "y", "out"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 4, mtile = 1, splitk = 1>} : tensor<1x64xbf16>, tensor<32x64xi8> -> tensor<1x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc: f32, %e0: bf16):
    %0 = arith.truncf %acc : f32 to bf16
    %1 = arith.extf %0 : bf16 to f32
    %2 = arith.extf %e0 : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.truncf %3 : f32 to bf16
    kernel.yield %4 : bf16
  }
  graph.return %out : tensor<1x32xbf16>
}

// An elementwise kernel: its body is inlined per element.
// CHECK-LABEL: llvm.func @act_k0(
// CHECK-SAME:      mtc.nodes = ["s", "r"], mtc.schedule = "elementwise w4 r1 kw1 v4 u1 mt1 sk1"
// CHECK:         arith.addf
// CHECK:         arith.maximumf
graph.func @act(%a: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<256xf32> {
  %r = kernel.elementwise %a, %b : tensor<256xf32>, tensor<256xf32> {indexing_maps = [#id, #id], nodes = ["s", "r"], schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>} -> tensor<256xf32> {
  ^bb0(%in0: f32, %in1: f32):
    %cst = arith.constant 0.000000e+00 : f32
    %0 = arith.addf %in0, %in1 : f32
    %1 = arith.maximumf %0, %cst : f32
    kernel.yield %1 : f32
  }
  graph.return %r : tensor<256xf32>
}

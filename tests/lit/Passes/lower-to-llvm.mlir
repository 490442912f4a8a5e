// RUN: %mtc-opt %s --mtc-lower-to-nvvm --mtc-lower-to-llvm | FileCheck %s

// After mtc-lower-to-nvvm, mtc-lower-to-llvm leaves only the LLVM and NVVM
// dialects: scf loops become branches, arith becomes llvm ops; the kernel's
// signature and attributes are unchanged.

// CHECK-LABEL: llvm.func @act_k0(
// CHECK-SAME:      mtc.nodes = ["r"], mtc.schedule = "elementwise w4 r1 kw1 v4 u1 mt1 sk1", nvvm.kernel
// CHECK-NOT:     scf.
// CHECK-NOT:     arith.
// CHECK:         nvvm.read.ptx.sreg.tid.x
// CHECK:         llvm.cond_br
// CHECK:         llvm.intr.maximum
// CHECK:         llvm.return
#id = affine_map<(d0) -> (d0)>
graph.func @act(%a: tensor<256xf32>) -> tensor<256xf32> {
  %r = kernel.elementwise %a : tensor<256xf32> {indexing_maps = [#id], nodes = ["r"], schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>} -> tensor<256xf32> {
  ^bb0(%in0: f32):
    %cst = arith.constant 0.000000e+00 : f32
    %0 = arith.maximumf %in0, %cst : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<256xf32>
}

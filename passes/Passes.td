//===- Passes.td - mtc passes ------------------------------*- tablegen -*-===//
//
// The pipeline, in order (compiler/Pipeline.cpp owns it; `mtc-opt
// --mtc-pipeline` replays it): canonicalize, mtc-fuse, mtc-assign-schedules,
// mtc-lower-to-nvvm, mtc-lower-to-llvm; then translation to LLVM IR and the
// NVPTX backend.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES
#define MTC_PASSES

include "mlir/Pass/PassBase.td"

def FuseKernels : Pass<"mtc-fuse", "::mtc::graph::FuncOp"> {
  let summary = "Turn graph nodes into fused kernel ops";
  let description = [{
    Every graph node becomes a kernel op, then kernels merge:

    1. An elementwise kernel that only converts and/or transposes a value
       feeding a `kernel.contract` operand folds into the contraction body
       (on either operand): the int8 weight is converted inside the
       reduction loop and no converted copy of it is ever written.
    2. An elementwise kernel that is the only user of a contraction's result,
       over the same iteration space, becomes its epilogue.
    3. An elementwise kernel whose only user is another elementwise kernel (or
       a contraction epilogue) is inlined into it, indexing maps composed.
    4. Row reductions take their producers and their per-row epilogue
       (`mean`, `+ eps`, `rsqrt`); then activation prologues, sibling
       contractions of the same activations, the row statistics those
       prologues read, and last each remaining reduction joins the one
       elementwise kernel that scales its rows (`apply`: a norm in one
       kernel). FuseKernels.cpp's header has the order and the reasons.

    Fusion never changes numerics beyond the order of the f32 summation: each
    node still rounds its result to its element type. Values returned by the
    graph that are inputs, or returned twice, get a copy kernel so every
    output has its own buffer.

    Before (`wf`, `y`, `out` from the graph file):
    ```mlir
    %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
    %y = graph.linear %x, %wf : ... -> tensor<1x8192xbf16>
    %out = graph.mul %y, %scales : ... -> tensor<1x8192xbf16>
    ```
    After: one `kernel.contract %x, %w epilogue(%scales ...)` whose body does
    `arith.sitofp %b : i8 to f32` and whose epilogue multiplies by the scale.
  }];
  let dependentDialects = ["::mtc::kernel::KernelDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per kernel (its nodes) and per value written "
           "between kernels (why it was not fused)">
  ];
  let statistics = [
    Statistic<"numContractions", "contractions", "Contraction kernels formed">,
    Statistic<"numFusedConverts", "fused-operand-conversions",
              "Operand conversions folded into contraction bodies">,
    Statistic<"numEpilogues", "fused-epilogue-nodes",
              "Elementwise nodes folded into epilogues">,
    Statistic<"numElementwiseFusions", "fused-elementwise-nodes",
              "Elementwise nodes inlined into other kernels">,
    Statistic<"numPrologues", "fused-activation-prologues",
              "Activation kernels folded into contractions as prologues">,
    Statistic<"numSiblings", "fused-sibling-contractions",
              "Contractions joined to another of the same activations">,
    Statistic<"numStatistics", "fused-row-statistics",
              "Row reductions derived inside the contractions that read them">,
    Statistic<"numApplied", "fused-applied-statistics",
              "Row reductions joined to the kernel that scales their rows">
  ];
}

def AssignSchedules : Pass<"mtc-assign-schedules", "::mtc::graph::FuncOp"> {
  let summary = "Give every kernel without a schedule the heuristic one";
  let description = [{
    Kernels that already carry a `#kernel.schedule` (set by the autotuner or
    written in the input) keep it. With `explain=true` each kernel gets a
    remark: its schedule and each heuristic rule that shaped it, or, for a
    kernel that kept its own, the heuristic's schedule beside it. With `wgmma=true` (an sm_90a target) the
    heuristic may pick the wgmma kind. The other options describe the target
    GPU (defaults: an H100/H200's); `mtc` sets them from `--target`.
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "The target has wgmma and TMA (sm_90a)">,
    Option<"numSMs", "num-sms", "int64_t", /*default=*/"132",
           "The target's multiprocessors">,
    Option<"l2Bytes", "l2-bytes", "int64_t", /*default=*/"50 << 20",
           "The target's L2 cache in bytes">,
    Option<"maxSharedPerBlock", "max-shared-per-block", "int64_t",
           /*default=*/"227 * 1024",
           "Shared memory one block may use (opted in), in bytes">,
    Option<"memBandwidth", "mem-bandwidth", "int64_t", /*default=*/"0",
           "The target's memory bandwidth in bytes/s (0: unknown, taken as "
           "an H200's per multiprocessor)">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per kernel: its schedule, and the rules that chose "
           "it (mtc compile --explain-schedule)">
  ];
  let dependentDialects = ["::mtc::kernel::KernelDialect"];
}

def LowerToNVVM : Pass<"mtc-lower-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower scheduled kernel ops to llvm.func GPU kernels";
  let description = [{
    Every kernel op of every graph.func becomes an `llvm.func` marked
    `nvvm.kernel`, named `<graph>_k<index>`, with one `!llvm.ptr<1>`
    parameter per buffer (inputs, epilogue inputs, output, then the
    workspace if the schedule splits K across blocks). The code uses `scf`,
    `arith`, `llvm` and `nvvm`: thread indices, 16-byte vector loads, the
    conversion chains (int8 is dequantized with byte permutes against a magic
    exponent, never a per-element cvt), f32 FMAs, warp-shuffle reductions,
    shared-memory reductions across warps and the epilogue. The graph.funcs
    are erased; `mtc.nodes`, `mtc.grid` and `mtc.block` attributes on each
    kernel say where it came from and how to launch it.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"fastDequant", "fast-dequant", "bool", /*default=*/"true",
           "Dequantize int8 with byte permutes instead of cvt instructions">,
    Option<"gridDependency", "grid-dependency", "bool", /*default=*/"false",
           "Start every kernel with griddepcontrol.wait and end it with "
           "griddepcontrol.launch_dependents (sm_90+, programmatic dependent "
           "launch)">
  ];
}

def LowerToLLVM : Pass<"mtc-lower-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower scf/arith/cf inside GPU kernels to the LLVM dialect";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // MTC_PASSES

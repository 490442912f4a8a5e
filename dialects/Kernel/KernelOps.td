//===- KernelOps.td - mtc kernel dialect -------------------*- tablegen -*-===//
//
// One op per GPU kernel. A `kernel.contract` is a matmul/linear with its
// operand conversions folded into the per-element body and its elementwise
// consumers folded into the epilogue; a `kernel.elementwise` is a fused group
// of elementwise nodes. Both keep value semantics (tensors in, tensor out);
// the lowering to NVVM turns each into one `llvm.func` kernel, scheduled by its
// `#kernel.schedule`.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_KERNEL_OPS
#define MTC_KERNEL_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Kernel_Dialect : Dialect {
  let name = "kernel";
  let cppNamespace = "::mtc::kernel";
  let summary = "Fused GPU kernels over tensors";
  let description = [{
    Each op is one GPU kernel. Scalar computation inside kernel regions uses
    `arith` (and `math.exp`); the regions are isolated from above and end in
    `kernel.yield`. Indexing of epilogue and elementwise inputs is given by
    affine maps from the output's iteration space, as in `linalg.generic`;
    a map result is either a dimension or the constant 0 (a broadcast dim of
    size 1). See docs/dialects/kernel.md.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let useDefaultAttributePrinterParser = 1;
  // The attribute is registered where its storage is defined
  // (KernelAttrs.cpp), so that the ops need not see the dialect.
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Kernel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kernel_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

def Kernel_ScheduleKind : I32EnumAttr<"ScheduleKind", "how a kernel is mapped to the GPU", [
    I32EnumAttrCase<"simt", 0>,
    I32EnumAttrCase<"mma", 1>,
    I32EnumAttrCase<"elementwise", 2>,
    I32EnumAttrCase<"tiled", 3>,
    I32EnumAttrCase<"wgmma", 4>,
    I32EnumAttrCase<"reduce", 5>]> {
  let cppNamespace = "::mtc::kernel";
  let genSpecializedAttr = 0;
}

def Kernel_ScheduleAttr : AttrDef<Kernel_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "How a kernel is mapped to threads: the autotuner's search space";
  let description = [{
    - `kind`: `simt` (CUDA cores: every warp streams rows of the weight with
      16-byte loads, accumulates in f32 and reduces with warp shuffles),
      `mma` (tensor cores, operands straight from global memory into
      registers), `tiled` (tensor cores on block tiles of the weight and the
      activations staged in shared memory through a `cp.async` pipeline),
      `wgmma` (Hopper, sm_90a only: TMA loads into a shared-memory ring
      guarded by mbarriers, one producer warpgroup and `rows` consumer
      warpgroups of 64 weight rows each, the int8 weight converted in
      registers and fed to wgmma as its register operand; experimental),
      `elementwise`, or `reduce` (a row reduction: each warp sums rows,
      `rows` of them, `vec` elements per lane and load).
    - `warps`: warps per thread block.
    - `rows`: weight rows (output columns) each warp owns; for a weight stored
      [K, N], vectors along N each lane owns.
    - `kwarps`: warps of one block that split the reduction (K); partial sums
      meet in shared memory.
    - `vec`: bytes each lane loads from the weight at once (4, 8 or 16); for
      elementwise kernels, elements per thread.
    - `unroll`: K steps whose loads are issued before the first is used.
    - `mtile`: activation rows (M) one block handles.
    - `mwarps` (tiled): warps of a block along M; the other warps/mwarps
      split the block's weight rows. Each warp owns mtile/mwarps rows of M.
    - `stages` (tiled, wgmma): K tiles in flight in the shared-memory ring
      (2 to 8); a wgmma K tile is 64 wide. mma: 1, or 2 to load the next
      `unroll` steps' weights while the current ones are summed.
    - `splitk`: thread blocks that split K; partial sums are reduced in f32
      and the last block to finish runs the epilogue.
    - `regs`: the most registers a thread may use (`.maxnreg`); 0 leaves it
      to ptxas, which may trade loads in flight for occupancy.
    - `cluster` (wgmma): thread blocks per cluster (1, 2 or 4). The blocks
      of a cluster take neighbouring weight rows and the same activation
      rows; each copies mtile/cluster of those rows and TMA multicasts them
      into every block's ring, so L2 serves the activations once per
      cluster instead of once per block.
  }];
  // One C++ parameter holds the kind and every field; the fields are the
  // rows of kScheduleFields (Schedule.h). The parser, printer and builder
  // are written once against that table (ScheduleFormat.cpp), so a new row
  // needs nothing here. The syntax is that of a struct(params) format over
  // the fields: `kind = simt, warps = 4, ...` in any order, where fields not
  // shown at their default (`regs`, `mwarps`, `stages`, `cluster`) are
  // optional and printed only when set.
  let parameters = (ins
    AttrParameter<"::mtc::kernel::ScheduleParams",
                  "the kind and the fields of kScheduleFields">:$params);
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

def Kernel_YieldOp : Kernel_Op<"yield", [Pure, Terminator,
    ParentOneOf<["ContractOp", "ElementwiseOp", "ReduceOp"]>]> {
  let summary = "Yields a kernel region's scalar result";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Kernel_PartnerOp : Kernel_Op<"partner", [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A value of the output element's partner column (n xor 1)";
  let description = [{
    In an elementwise kernel's body or a contraction's epilogue (a region
    computed once per output element `[..., n]`): what `value` is at the
    element `[..., n xor 1]` of the same row, the other column of its pair.
    Its region's results have an even last dimension. A rotary embedding
    rotates each pair (graph.rope):

    ```mlir
    %p = kernel.partner %x : f32
    ```
  }];
  let arguments = (ins AnyType:$value);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Kernel_ColumnOp : Kernel_Op<"column", [Pure]> {
  let summary = "The output element's index along the last dimension";
  let description = [{
    In an elementwise kernel's body or a contraction's epilogue: `n` of the
    output element `[..., n]` being computed, as an i32.

    ```mlir
    %n = kernel.column : i32
    ```
  }];
  let results = (outs I32:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Kernel_ContractOp : Kernel_Op<"contract", [Pure, IsolatedFromAbove,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmResultNames", "getAsmBlockArgumentNames"]>]> {
  let summary = "A matmul with its operand conversions and epilogue fused in";
  let description = [{
    Computes, for every output element (m..., n):

        acc = sum over k of body(A[m..., k], B[n, k], W0[wmap0(n, k)], ...)
        result[m..., n] = epilogue(acc, E0[map0(m..., n)], ...)

    `A` is `[..., K]` (its leading dims flattened into M), or `[K, M]` with
    `a_transposed`. `B` is `[N, K]`, or `[K, N]` with `b_transposed`. The
    body converts one element of each operand to f32 through a chain of
    conversions (exactly what the graph did to the operands: the int8 weight's
    convert lives here, so no converted copy of the weight is ever written)
    and yields their product:

        ^bb0(%a: bf16, %b: i8):
          %0 = arith.extf %a : bf16 to f32
          %1 = arith.sitofp %b : i8 to f32
          %2 = arith.mulf %0, %1 : f32
          kernel.yield %2 : f32

    The weight's side of the product may also read `b_inputs` (`W0`, ...):
    the scales and zeros of a group-wise quantized weight, each indexed by a
    map `b_maps` from (n, k) whose results are `d0`, `d1 floordiv G` (one
    value per group of G consecutive k's; every map has the same G, which
    divides K) or 0. The weight side is then an expression of `arith`
    conversions, `addf`, `subf` and `mulf` over `%b` and those inputs (the
    graph's dequantization, with its roundings):

        ^bb0(%a: bf16, %b: i4, %s: bf16, %z: bf16):
          %0 = arith.extf %a : bf16 to f32
          %1 = arith.sitofp %b : i4 to bf16
          ... (%1 * %s + %z, each step rounded to bf16)
          %9 = arith.extf %8 : bf16 to f32
          %10 = arith.mulf %0, %9 : f32
          kernel.yield %10 : f32

    The epilogue receives the f32 sum and one element of each epilogue input,
    computes in f32 and yields the stored element.

    The activations' side may read `a_inputs` too (a prologue: a norm's
    scaling, fused in), each indexed by a map `a_maps` from (m, k) over a
    2-D `A` `[M, K]`. The body's arguments are then `a, b, b_inputs...,
    a_inputs...`; ops over `%a` and the a inputs compute a value of A's
    element type (the graph's activation, with its roundings), which a chain
    of conversions takes to the f32 factor:

        ^bb0(%a: bf16, %b: i8, %g: bf16, %r: f32):
          (%a converted to f32, times %r, rounded to bf16, times %g)
          %5 = arith.extf %4 : bf16 to f32
          %6 = arith.sitofp %b : i8 to f32
          %7 = arith.mulf %5, %6 : f32
          kernel.yield %7 : f32

    Horizontal fusion: `siblings` are more weights, each of B's type, read
    with the same body and activations (gate and up projections of one
    activation). Every output then has one sum per weight, B's first, and
    the epilogue receives all of them before its inputs:

        result[m..., n] = epilogue(acc_B, acc_S0, ..., E0[map0(m..., n)], ...)

    so the intermediate results of all but the last contraction are never
    written (`silu(acc_B * s1) * (acc_S0 * s3)`). Siblings need a weight
    stored [N, K], and run on the kinds that hold their sums in registers
    (simt, mma) without split-K. Where the body reads b_inputs (an int4
    weight's group-wise scales and zeros), each sibling has its own, of the
    same types, read through the same b_maps: `sibling_b_inputs` holds them
    sibling by sibling (`S0`'s b_inputs, then `S1`'s, ...).

    A row statistic derived in the kernel: where the prologue scales each
    row of A by a statistic of that row (an RMSNorm's `rsqrt(mean(x^2) +
    eps)`), the contraction may compute it itself instead of reading it from
    a separate reduction. `statistic` holds a reduction's two regions over
    the row A[m, :] (every block sums the rows it reads before its first
    step):

        stat[m] = stat_epilogue(sum over k of stat_body(A[m, k]))

    `stat_body` takes an element of A and yields an f32 term, `stat_epilogue`
    the f32 sum and yields the f32 statistic, and the body gets it as one
    more argument, after the a inputs:
    `^bb0(%a, %b, b_inputs..., a_inputs..., %stat: f32)`. It needs a 2-D A
    `[M, K]` and a weight stored `[N, K]`, and runs on the simt kind.
  }];
  let arguments = (ins
    AnyRankedTensor:$a,
    AnyRankedTensor:$b,
    Variadic<AnyRankedTensor>:$b_inputs,
    Variadic<AnyRankedTensor>:$epilogue_inputs,
    Variadic<AnyRankedTensor>:$a_inputs,
    Variadic<AnyRankedTensor>:$siblings,
    Variadic<AnyRankedTensor>:$sibling_b_inputs,
    UnitAttr:$a_transposed,
    UnitAttr:$b_transposed,
    OptionalAttr<AffineMapArrayAttr>:$b_maps,
    OptionalAttr<AffineMapArrayAttr>:$a_maps,
    AffineMapArrayAttr:$epilogue_maps,
    StrArrayAttr:$nodes,
    OptionalAttr<Kernel_ScheduleAttr>:$schedule);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body, SizedRegion<1>:$epilogue,
                 AnyRegion:$stat_body, AnyRegion:$stat_epilogue);
  let assemblyFormat = [{
    $a `,` $b (`b_inputs` `(` $b_inputs^ `:` type($b_inputs) `)`)?
    (`siblings` `(` $siblings^ `:` type($siblings) `)`)?
    (`sibling_b_inputs` `(` $sibling_b_inputs^ `:` type($sibling_b_inputs) `)`)?
    (`a_inputs` `(` $a_inputs^ `:` type($a_inputs) `)`)?
    (`epilogue` `(` $epilogue_inputs^ `:` type($epilogue_inputs) `)`)?
    attr-dict `:` type($a) `,` type($b) `->` type($result)
    `body` $body `epilogue` $epilogue
    (`statistic` $stat_body^ `then` $stat_epilogue)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the kernel derives its rows' statistic (stat_body and
    /// stat_epilogue hold a block each): the body's last argument.
    bool hasRowStatistic() { return !getStatBody().empty(); }
    /// Whether the activations' side has a prologue: a inputs, or a row
    /// statistic.
    bool hasPrologue() { return !getAInputs().empty() || hasRowStatistic(); }
    /// Problem size: M (flattened rows of A), N and K.
    int64_t getM();
    int64_t getN();
    int64_t getK();
    /// The body's conversion chains, from the block argument to the f32 value
    /// multiplied (empty when the argument is already f32). B's is empty
    /// when its side is more than a chain (getBOps).
    ::llvm::SmallVector<::mlir::Operation *> getAChain();
    ::llvm::SmallVector<::mlir::Operation *> getBChain();
    /// The ops of the weight's side of the body, in block order: its
    /// conversion chain, or the expression over %b and the b_inputs.
    ::llvm::SmallVector<::mlir::Operation *> getBOps();
    /// The activation the A chain converts: %a, or with a_inputs the
    /// prologue's value (of A's element type), computed by getAOps.
    ::mlir::Value getAPrologueValue();
    /// The prologue's ops, in block order (empty without a_inputs).
    ::llvm::SmallVector<::mlir::Operation *> getAOps();
    /// The group size G of the b_maps (`d1 floordiv G`), K where they read
    /// per row only, 0 without b_inputs.
    int64_t getGroupSize();
  }];
}

def Kernel_ElementwiseOp : Kernel_Op<"elementwise", [Pure, IsolatedFromAbove,
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmResultNames", "getAsmBlockArgumentNames"]>]> {
  let summary = "A fused group of elementwise nodes";
  let description = [{
    `result[i...] = body(in0[map0(i...)], in1[map1(i...)], ...)`, one thread
    per `vec` output elements. Maps express broadcasting and transposition.
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$inputs,
    AffineMapArrayAttr:$indexing_maps,
    StrArrayAttr:$nodes,
    OptionalAttr<Kernel_ScheduleAttr>:$schedule);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    ($inputs^ `:` type($inputs))? attr-dict `->` type($result) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Kernel_ReduceOp : Kernel_Op<"reduce", [Pure, IsolatedFromAbove,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmResultNames", "getAsmBlockArgumentNames"]>]> {
  let summary = "A row reduction: a sum over the last dimension, then an epilogue";
  let description = [{
    For a result `[..., 1]` and `extent` K, over the iteration space
    `[..., K]`:

        sum = sum over k of body(in0[map0(r..., k)], ...)      (in f32)
        result[r..., 0] = epilogue(sum, E0[emap0(r..., 0)], ...)

    The body computes one f32 term from one element of each input (what a
    norm sums: `x * x` of `x` converted to f32), the epilogue the row's
    statistic from the sum (`mean`, `+ eps`, `rsqrt`). Both are scalar
    `arith` (and `math`) regions; every node keeps its rounding. Input maps
    index the iteration space, epilogue maps the result's.

    With an `apply` region, the statistic is not stored: it is applied to
    the row it was reduced from, and the result is the iteration space
    `[..., K]` (a norm's scaling, in the same kernel as its statistic):

        stat = epilogue(sum, E0[emap0(r..., 0)], ...)
        result[r..., k] = apply(A0[amap0(r..., k)], ..., stat)

    `apply_inputs` are read through `apply_maps`, which index the iteration
    space; the region's last argument is the statistic (of the type the
    epilogue yields) and it yields the stored element.

    ```mlir
    %r = kernel.reduce %x : tensor<1x4096xbf16> epilogue()
        {extent = 4096, indexing_maps = [(d0, d1) -> (d0, d1)], ...}
        -> tensor<1x1xf32> body {
    ^bb0(%in0: bf16):
      %0 = arith.extf %in0 : bf16 to f32
      %1 = arith.mulf %0, %0 : f32
      kernel.yield %1 : f32
    } epilogue {
    ^bb0(%sum: f32):
      ... (divide by K, add eps, rsqrt)
      kernel.yield %5 : f32
    }
    ```
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$inputs,
    Variadic<AnyRankedTensor>:$epilogue_inputs,
    Variadic<AnyRankedTensor>:$apply_inputs,
    AffineMapArrayAttr:$indexing_maps,
    AffineMapArrayAttr:$epilogue_maps,
    OptionalAttr<AffineMapArrayAttr>:$apply_maps,
    ConfinedAttr<I64Attr, [IntPositive]>:$extent,
    StrArrayAttr:$nodes,
    OptionalAttr<Kernel_ScheduleAttr>:$schedule);
  let results = (outs AnyRankedTensor:$result);
  let regions = (region SizedRegion<1>:$body, SizedRegion<1>:$epilogue,
                 AnyRegion:$apply);
  let assemblyFormat = [{
    ($inputs^ `:` type($inputs))?
    `epilogue` `(` ($epilogue_inputs^ `:` type($epilogue_inputs))? `)`
    (`apply_inputs` `(` $apply_inputs^ `:` type($apply_inputs) `)`)?
    attr-dict `->` type($result) `body` $body `epilogue` $epilogue
    (`apply` $apply^)?
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the statistic is applied to its rows (`apply` holds a
    /// block): the result is then the iteration space.
    bool hasApply() { return !getApply().empty(); }
    /// The iteration space of the inputs: the result's shape with its last
    /// dimension replaced by `extent`.
    ::llvm::SmallVector<int64_t> getIterationShape();
    /// The statistic's space: the iteration space with a last dimension of
    /// 1 (the result's shape without `apply`).
    ::llvm::SmallVector<int64_t> getStatisticShape();
    /// Rows reduced: the elements of the statistic's space.
    int64_t getNumRows();
  }];
}

#endif // MTC_KERNEL_OPS

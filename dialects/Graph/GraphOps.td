//===- GraphOps.td - mtc graph dialect ---------------------*- tablegen -*-===//
//
// The tensor-level dialect that graph files are parsed into: value semantics,
// static shapes, one op per graph node. Shapes and dtypes are verified with the
// rules in ShapeRules.h, the same ones the graph-file front end applies.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_GRAPH_OPS
#define MTC_GRAPH_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinTypes.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::mtc::graph";
  let summary = "Tensor graphs as written in .graph files";
  let description = [{
    One op per node of a graph file. Tensors are statically shaped and hold
    `i4`, `i8`, `f16`, `bf16` or `f32` (`i4`, two to a byte, only as graph
    inputs that are converted: packed weights). Binary ops broadcast like numpy; matmul and
    linear accumulate in f32 and produce their operands' element type; only
    `graph.convert` changes an element type. Each op's location is a `NameLoc`
    carrying the node's name from the graph file, and the printer uses it as
    the SSA name, so `%wf = graph.convert ...` reads like the source.

    See docs/dialects/graph.md for the rationale (what is deliberately
    missing, the canonical form).
  }];
}

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

def Graph_I4 : I<4>;
def Graph_ElementType : AnyTypeOf<[Graph_I4, I8, F16, BF16, F32]>;

def Graph_Tensor : Type<
    And<[RankedTensorOf<[Graph_I4, I8, F16, BF16, F32]>.predicate, HasStaticShapePred,
         CPred<"::llvm::cast<::mlir::ShapedType>($_self).getRank() >= 1">]>,
    "statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32",
    "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// graph.func / graph.return
//===----------------------------------------------------------------------===//

def Graph_FuncOp : Graph_Op<"func", [
    FunctionOpInterface, IsolatedFromAbove,
    DeclareOpInterfaceMethods<OpAsmOpInterface,
                              ["getAsmBlockArgumentNames"]>]> {
  let summary = "A named graph: tensor inputs, a body of nodes, tensor outputs";
  let description = [{
    A graph from a graph file. Its arguments are the graph's inputs; their
    names survive in the argument locations (`NameLoc`) and are printed as the
    SSA names. The body is a single block ending in `graph.return`; it may hold
    graph ops and, after fusion, kernel ops.

    ```mlir
    graph.func @woq_linear(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>,
                           %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
      ...
      graph.return %out : tensor<1x8192xbf16>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type)>];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    bool isDeclaration() { return false; }
    /// The graph-file name of input `i` ("arg<i>" when it has none).
    std::string getInputName(unsigned i);
    /// The graph.return terminator.
    ::mlir::Operation *getReturn();
  }];
}

def Graph_ReturnOp : Graph_Op<"return", [Pure, Terminator,
                                         HasParent<"FuncOp">]> {
  let summary = "The graph's outputs";
  let arguments = (ins Variadic<Graph_Tensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

// Every node prints as `%name = graph.op %a, %b : type(a), type(b) -> type(r)`.
class Graph_NodeOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>])> {
  let results = (outs Graph_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() { return verifyNode(*this); }
    ::mlir::ParseResult $cppClass::parse(::mlir::OpAsmParser &parser,
                                         ::mlir::OperationState &result) {
      return parseNode(parser, result, getOperationName());
    }
    void $cppClass::print(::mlir::OpAsmPrinter &p) { printNode(p, *this); }
    void $cppClass::getAsmResultNames(
        ::mlir::OpAsmSetValueNameFn setNameFn) {
      setNodeResultName(*this, setNameFn);
    }
  }];
}

class Graph_InferredNodeOp<string mnemonic, list<Trait> traits = []>
    : Graph_NodeOp<mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<InferTypeOpInterface>])>;

def Graph_ConvertOp : Graph_NodeOp<"convert"> {
  let summary = "Element type conversion";
  let description = [{
    Converts every element to the result's element type; the shape is kept.
    Integer to float is exact for i4 and i8, i4 to i8 too. Float to float rounds to nearest even.
    Float to i8 truncates toward zero and saturates to [-128, 127]; NaN gives 0.

    ```mlir
    %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Graph_LinearOp : Graph_InferredNodeOp<"linear"> {
  let summary = "x @ w^T, like torch.nn.functional.linear";
  let description = [{
    `x: [..., K]`, `w: [N, K]` -> `[..., N]`. Products accumulate in f32; the
    result has the operands' (equal, floating-point) element type.
  }];
  let arguments = (ins Graph_Tensor:$x, Graph_Tensor:$w);
  let hasCanonicalizer = 1;
}

def Graph_MatmulOp : Graph_InferredNodeOp<"matmul"> {
  let summary = "a @ b";
  let description = [{
    `a: [..., M, K]`, `b: [K, N]` -> `[..., M, N]`. Products accumulate in f32;
    the result has the operands' (equal, floating-point) element type.
  }];
  let arguments = (ins Graph_Tensor:$a, Graph_Tensor:$b);
  let hasCanonicalizer = 1;
}

def Graph_RepeatOp : Graph_NodeOp<"repeat"> {
  let summary = "Repeats every element of the last dimension `group` times";
  let description = [{
    `t: [..., G]` -> `[..., G * group]`, `result[..., j] = t[..., j / group]`:
    `torch.repeat_interleave(t, group, dim=-1)`. Group-wise quantization
    writes its scales and zeros `[N, K / group]` as `[N, K]` so, and fusion
    reads them per group inside the contraction instead.

    ```mlir
    %s = graph.repeat %scales {group = 128 : i64}
        : tensor<8192x32xbf16> -> tensor<8192x4096xbf16>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$group);
}

def Graph_TransposeOp : Graph_InferredNodeOp<"transpose"> {
  let summary = "Swaps the last two dimensions";
  let arguments = (ins Graph_Tensor:$input);
  let hasFolder = 1;
}

def Graph_RopeOp : Graph_NodeOp<"rope"> {
  let summary = "Rotates pairs of columns by a table's angles (rotary embedding)";
  let description = [{
    `x: f32[M, N]`, `table: [R, D]` (a float type; R = 1 or M, D even),
    `cols` a multiple of D, at most N -> `f32[M, N]`. The first `cols`
    columns are heads of D; pair i of each head (columns 2i and 2i + 1) is
    rotated by the angle whose cosine is `table[r, 2i]` and sine
    `table[r, 2i + 1]` (r = m, or 0 when R = 1):

        result[m, h D + 2i]     = x[m, h D + 2i] c - x[m, h D + 2i + 1] s
        result[m, h D + 2i + 1] = x[m, h D + 2i + 1] c + x[m, h D + 2i] s

    and the other columns are x's. gpt-fast's `apply_rotary_emb` over a
    fused q, k, v projection (its `freqs_cis[input_pos]` is the table, one
    row per token). The table's elements convert to f32 exactly; the
    kernels compute each result in f32 as gpt-fast's eager form does (two
    products and their sum, each rounded), the fp64 reference exactly,
    rounded once.

    ```mlir
    %r = graph.rope %yf, %f {cols = 5120 : i64}
        : tensor<1x6144xf32>, tensor<1x128xbf16> -> tensor<1x6144xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$x, Graph_Tensor:$table,
                       ConfinedAttr<I64Attr, [IntPositive]>:$cols);
}

class Graph_BinaryOp<string mnemonic, string what>
    : Graph_InferredNodeOp<mnemonic> {
  let summary = "Elementwise " # what # " with numpy broadcasting";
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
}

def Graph_AddOp : Graph_BinaryOp<"add", "addition">;
def Graph_SubOp : Graph_BinaryOp<"sub", "subtraction">;
def Graph_MulOp : Graph_BinaryOp<"mul", "multiplication">;

class Graph_UnaryOp<string mnemonic, string what>
    : Graph_InferredNodeOp<mnemonic> {
  let summary = what;
  let arguments = (ins Graph_Tensor:$input);
}

def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0); NaN stays NaN">;
def Graph_SiluOp : Graph_UnaryOp<"silu", "x * sigmoid(x)">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "1 / sqrt(x)">;

class Graph_RowReductionOp<string mnemonic, string what>
    : Graph_InferredNodeOp<mnemonic> {
  let summary = what # " over the last dimension, kept as a dimension of 1";
  let description = [{
    `t: [..., K]` -> `[..., 1]`, like `torch.}] # mnemonic # [{(t, dim=-1,
    keepdim=True)`: the result broadcasts against `t` (a row's statistic,
    as a norm uses it). The sum is exact and rounded once to the result's
    (t's, floating-point) element type; the kernels sum in f32.

    ```mlir
    %ms = graph.}] # mnemonic # [{ %sq : tensor<1x4096xf32> -> tensor<1x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
}

def Graph_SumOp : Graph_RowReductionOp<"sum", "The sum">;
def Graph_MeanOp : Graph_RowReductionOp<"mean", "The mean">;

def Graph_ConstantOp : Graph_Op<"constant", [Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "A number, as a tensor of one element";
  let description = [{
    The number literal of a graph file (`add(ms, 1e-05)`): `value` rounded
    to the result's element type, a `[1]` tensor that broadcasts against
    anything. It is what the other operand of the literal's node has as its
    element type.

    ```mlir
    %eps = graph.constant 9.9999997473787516E-6 : tensor<1xf32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs Graph_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // MTC_GRAPH_OPS

// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of kernel.contract's regions: the body (a
// product of %a and %b, each converted to f32 by a chain of arith
// conversions) and the epilogue. Every case starts from a valid op and
// breaks one thing; invalid.mlir has the operands and maps.

graph.func @body_arg_count(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body takes 1 argument, expected 2}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32):
    %1 = arith.mulf %a, %a : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_arg_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body argument #1 has type 'bf16', expected 'i8'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @body_yield_type(%x: tensor<1x64xf16>, %w: tensor<8x64xf16>) -> tensor<1x8xf16> {
  // expected-error @+1 {{'kernel.contract' op body yields 'f16', expected 'f32'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf16>, tensor<8x64xf16> -> tensor<1x8xf16>
  body {
  ^bb0(%a: f16, %b: f16):
    %1 = arith.mulf %a, %b : f16
    kernel.yield %1 : f16
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to f16
    kernel.yield %1 : f16
  }
  graph.return %0 : tensor<1x8xf16>
}

// -----

graph.func @body_not_a_product(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must yield the arith.mulf of its two converted operands}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.addf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

// %b's chain must start at %b, not at %a.
graph.func @body_wrong_chain(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %a : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

// A constant is not a conversion of %b.
graph.func @body_constant_operand(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 2.0 : f32
    %1 = arith.mulf %a, %c : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

// Arithmetic between the conversion and the product is not a conversion.
graph.func @body_scaled_chain(%x: tensor<1x64xf32>, %w: tensor<8x64xi8>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xi8> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: i8):
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.negf %1 : f32
    %3 = arith.mulf %a, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_extra_op(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body may only hold the two conversion chains, the product and the yield}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %unused = arith.addf %a, %b : f32
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_integer_op(%x: tensor<1x64xi8>, %w: tensor<8x64xi8>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xi8>, tensor<8x64xi8> -> tensor<1x8xf32>
  body {
  ^bb0(%a: i8, %b: i8):
    // expected-error @+1 {{'arith.addi' op is not supported inside a kernel body (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %s = arith.addi %a, %b : i8
    %1 = arith.sitofp %s : i8 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

//===----------------------------------------------------------------------===//
// kernel.contract: the epilogue
//===----------------------------------------------------------------------===//

// -----

graph.func @epilogue_yield_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue yields 'f32', expected 'bf16'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_acc_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue argument #0 has type 'bf16', expected 'f32'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: bf16):
    kernel.yield %acc : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_input_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue argument #1 has type 'f32', expected 'bf16'}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xbf16>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    %2 = arith.truncf %1 : f32 to bf16
    kernel.yield %2 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_arg_count(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue takes 1 argument, expected 2}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xbf16>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

llvm.func @external(f32) -> f32

graph.func @epilogue_call(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'llvm.call' op is not supported inside a kernel epilogue (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %1 = llvm.call @external(%acc) : (f32) -> f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @epilogue_sqrt(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'math.sqrt' op is not supported inside a kernel epilogue (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %1 = math.sqrt %acc : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

//===- Contract.h - What the contraction emitters share ---------*- C++ -*-===//
//
// A kernel.contract becomes one kernel whose code depends on its schedule's
// kind. `ContractEmitter` is what every kind shares: the kernel's parameters
// and thread indices, the A operand's addressing, the K pieces, the
// epilogue, the sum over the warps that split K, split-K across blocks, and
// the integer weight's conversion and dequantization (Dequant.cpp).
// `TensorCoreEmitter` adds what the tensor-core kinds (mma and tiled) share:
// mma.sync, the weight fragments and the int8 dequantization into them, and
// the accumulators' layout. Each kind is a subclass in a file of its own,
// created by the factory that ContractKinds.def registers for it.
//
//===----------------------------------------------------------------------===//
#ifndef MTC_PASSES_EMIT_CONTRACT_H
#define MTC_PASSES_EMIT_CONTRACT_H

#include "passes/emit/Emitter.h"

#include "dialects/Kernel/KernelOps.h"
#include "dialects/Kernel/Schedule.h"
#include "dialects/Kernel/WeightSide.h"

#include <memory>

namespace mtc::emit {

/// The base of the contraction kinds: a subclass writes the kind's K loop
/// (emitBody) with the state and helpers here, and delivers its outputs
/// through deliverAll (or deliver and splitKFinish).
class ContractEmitter : public Emitter {
public:
  ContractEmitter(mlir::OpBuilder &b, kernel::ContractOp op,
                  llvm::StringRef name, const EmitOptions &opts);
  virtual ~ContractEmitter();

  /// Emits the kernel: its parameters and thread indices, then emitBody().
  mlir::LogicalResult emit();

protected:
  /// Sets `piece`, the K piece of this thread's warp, from the block's
  /// split-K index `bz`. By default each block has kwarps pieces, one per
  /// warp along K (`wk`); kinds that split their warps further override it.
  virtual void assignPiece(mlir::Value bz);
  /// The kind's code: its K loop, and the delivery of its outputs.
  virtual void emitBody() = 0;
  /// How many of the first parameters (A, then B) the kind takes as TMA
  /// tensor maps (LaunchConfig::tmaOperands says how they are encoded).
  virtual unsigned tensorMapParams() const { return 0; }

  kernel::ContractOp op;
  kernel::ContractShape c;
  kernel::ScheduleParams s;
  kernel::ContractGeometry geo;
  mlir::Type aElem, bElem, outElem;
  /// Bytes of an element of A and of the output; eb, of B's (1 for i4, of
  /// which a byte holds two: address B with weightOffset).
  unsigned ea, eb, eo;
  llvm::SmallVector<mlir::Operation *> aChain, bChain;
  /// Parameters: A, B, the b inputs, the epilogue inputs, the a inputs,
  /// the siblings' weights, the siblings' b inputs, the output, the
  /// workspace.
  mlir::Value A, B, Out, WS;
  llvm::SmallVector<mlir::Value> E, AI;
  /// B, then each sibling's weight (c.weights of them): every output has
  /// one sum per weight, in this order; BI[w] are weight w's b inputs.
  llvm::SmallVector<mlir::Value> weights;
  llvm::SmallVector<llvm::SmallVector<mlir::Value>> BI;
  /// The activations' prologue (a_inputs): its ops in block order, and the
  /// value of A's element type they compute (the A chain converts it).
  llvm::SmallVector<mlir::Operation *> aOps;
  mlir::Value aPrologue;
  /// A derived row statistic (the op's `statistic`): each row's value, by
  /// the Value of the row index the prologue is applied with
  /// (deriveRowStatistics).
  llvm::DenseMap<mlir::Value, mlir::Value> rowStats;
  /// The weight's side computes on pairs of A's 16-bit type (an integer
  /// weight whose conversion and dequantization WeightSide.h accepts).
  bool weightPairs = false;
  /// An integer weight's side in the factored form (WeightSide.h): the mma
  /// kind converts the weight without dequantizing it and applies the b
  /// inputs to each step's sums (Mma.cpp).
  std::optional<kernel::FactoredWeight> factors;
  /// preloadChannels' values: (epilogue input, column) -> the value.
  llvm::DenseMap<std::pair<unsigned, mlir::Value>, mlir::Value> channels;
  /// Thread, lane, warp along N and along K, block, block along N, first
  /// output row of the block, K piece.
  mlir::Value tid, lane, wn, wk, bid, bx, m0, piece;

  int64_t M() const { return c.m; }
  int64_t N() const { return c.n; }
  int64_t K() const { return c.k; }

  /// The `count` elements of A in `raw` (row `m`, i32, from element `k`,
  /// i64; k a multiple of count) through the prologue, packed like `raw`;
  /// `raw` itself without a prologue.
  Raw applyPrologue(const Raw &raw, mlir::Value m, mlir::Value k,
                    int64_t count);
  /// Element (m, k) of a input `j` as its map reads it.
  mlir::Value aInputElement(unsigned j, mlir::Value m, mlir::Value k);
  /// Sums the block's rows of A through the op's stat_body, all threads of
  /// the block together (16-byte loads of each thread's elements issued
  /// before any is summed, warps meeting in shared memory, a fixed order),
  /// and sets rowStats[rowIdx[i]] to stat_epilogue of row i's sum. `rows`
  /// are the rows' pointers (aBase).
  void deriveRowStatistics(llvm::ArrayRef<mlir::Value> rows,
                           llvm::ArrayRef<mlir::Value> rowIdx);

  /// Pointer to A's row `mi` (non-transposed) or column (transposed).
  mlir::Value aBase(mlir::Value mi);
  /// Byte offset of element k (i64) from aBase.
  mlir::Value aOffset(mlir::Value k);
  /// A row index clamped into range (out-of-range rows compute garbage that
  /// is never stored).
  mlir::Value clampedRow(int64_t i);
  /// K range [begin, end) of this thread's piece, out of `total` units of K
  /// (elements, chunks or tiles, as the kind steps through K).
  std::pair<mlir::Value, mlir::Value> pieceRange(int64_t total);
  /// The steps loaded at once: the schedule's `unroll`, but no more than the
  /// shortest piece of `total` steps has. With more, the unrolled loop would
  /// never run and every step would go through its one-step remainder
  /// (4096 x 4096 at M = 1, `simt w4 r2 kw2 v16 u8`: 9.9 us against 6.0 with
  /// u4; bench/results/2026-12-04-rules).
  int64_t stepsInFlight(int64_t total) const;

  /// Unflattens output row `m` and column `n` into the result's index and
  /// returns the element offset of epilogue input `j` (i64).
  mlir::Value epilogueOffset(unsigned j, mlir::Value m, mlir::Value n);
  /// Applies the epilogue to `acc` for output (m, n) and stores it, if the
  /// output exists. With `hoist` the epilogue runs whether or not it does
  /// (its loads clamped into range) and only the store is guarded: a guard
  /// around all of it makes each output a branch of its own, whose chain of
  /// latencies (loads, ex2, division) the next output cannot overlap
  /// (11008 x 4096, M = 33, tiled: bias + SiLU cost +49% over the scale
  /// alone, +5.6% with div.full and this). Without, the guard holds it all,
  /// which keeps fewer values live (split-K's finish, which has loaded
  /// every total first). `sums` holds one sum per weight.
  /// Where the epilogue reads each output's partner column (c.pairs:
  /// kernel.partner), `partner` holds the partner's sums.
  void writeOutput(mlir::Value m, mlir::Value n,
                   llvm::ArrayRef<mlir::Value> sums, bool hoist = true,
                   llvm::ArrayRef<mlir::Value> partner = {});
  /// Loads the per-channel epilogue inputs (those that vary with the
  /// output's column only: scales, biases) of each column in `ns` once, at
  /// the insertion point (unconditionally: columns past N read column
  /// N - 1); writeOutput then takes them from here for those exact Values
  /// of n instead of loading them for every output, until
  /// forgetChannels(). The insertion point must dominate those calls.
  void preloadChannels(llvm::ArrayRef<mlir::Value> ns);
  void forgetChannels() { channels.clear(); }
  /// Workspace element for output (m, n).
  mlir::Value workspaceElem(mlir::Value m, mlir::Value n);
  /// What the owner of output (m, n) does with its block's sums (one per
  /// weight): store them through the epilogue, or add the sum into the
  /// split-K workspace (one weight only).
  /// Where the epilogue reads each output's partner column (c.pairs), the
  /// partner's sums are `partner`, or, where that is empty, those of lane
  /// `lane xor partnerLaneXor` (every lane of the warp must deliver then).
  void deliver(mlir::Value m, mlir::Value n, llvm::ArrayRef<mlir::Value> sums,
               llvm::ArrayRef<mlir::Value> partner = {});
  /// The lane holding the partner column's sums of this lane's outputs,
  /// lane xor this, for the kinds whose lanes hold one column of each pair
  /// (mma, tiled and wgmma's fragments: 4); 0 where the kind passes the
  /// partner's sums to deliver itself (simt).
  int64_t partnerLaneXor = 0;

  /// Split-K: after every block added its sums, the last block to arrive
  /// takes the totals (re-zeroing the workspace) and runs the epilogue.
  /// Output j (of `count`) is (mOf(j), nOf(j)), delivered by the threads
  /// where ownerOf(j) holds. All totals are loaded first, unconditionally
  /// (clamped addresses), so the loads overlap instead of each waiting for
  /// the epilogue of the one before.
  void splitKFinish(int64_t count,
                    llvm::function_ref<mlir::Value(int64_t)> ownerOf,
                    llvm::function_ref<mlir::Value(int64_t)> mOf,
                    llvm::function_ref<mlir::Value(int64_t)> nOf);

  //===--------------------------------------------------------------------===//
  // The integer weight (Dequant.cpp)
  //===--------------------------------------------------------------------===//

  /// Byte offset (i64) of weight element k (i64) from the start of its row.
  mlir::Value weightOffset(mlir::Value k);
  /// The b inputs' values for row `n` (i32, in range) of weight `w` (0: B)
  /// and the group holding k (i64): with `asPairs` each value in both
  /// halves of an i32 (for dequantPair), else as its element type (for
  /// dequantScalar).
  llvm::SmallVector<mlir::Value> loadBInputs(mlir::Value n, mlir::Value k,
                                             bool asPairs, unsigned w = 0);
  /// The k's of a lane's `span` consecutive weight elements that one set of
  /// b inputs covers: a group, or the whole span where it lies in one
  /// (checkSchedule: the span and the group size divide one another).
  int64_t bInputPiece(int64_t span) const {
    return c.group ? std::min(span, c.group) : span;
  }
  /// loadBInputs for row `n` of weight `w` and each piece (bInputPiece) of
  /// the `span` k's from k (i64), in order; empty without b inputs.
  llvm::SmallVector<llvm::SmallVector<mlir::Value>>
  loadBInputSpan(mlir::Value n, mlir::Value k, int64_t span, bool asPairs,
                 unsigned w = 0);
  /// Pair p of the integer weight elements in `word`, converted to A's
  /// 16-bit type, low half first; exact, without cvt. int8: bytes 2 p and
  /// 2 p + 1; i4: elements p and p + 4 (nibbles; Dequant.cpp says why).
  mlir::Value intPair(mlir::Value word, unsigned p);
  /// The two i4 elements of the byte in bits 0-7 of `byte` (its other bits
  /// zero), low nibble in the low half, as intPair converts them.
  mlir::Value intPairOfByte(mlir::Value byte);
  /// The i4 elements in bits 0-3 and 16-19 of `bits` as a pair.
  mlir::Value nibblePair(mlir::Value bits);
  /// {lo, hi} bf16x2 / f16x2 words for the four int8 of `word`.
  std::pair<mlir::Value, mlir::Value> dequantPairs(mlir::Value word, bool f16);
  /// The bf16x2 word of the int8 bytes `lo` (low half) and `hi` (high half)
  /// of `src`, whose other bytes are ignored.
  mlir::Value bf16Pair(mlir::Value src, unsigned lo, unsigned hi);
  /// The weight's side on a pair of elements: `converted` from intPair,
  /// `inputs` from loadBInputs(asPairs) for their row and group. Without
  /// inputs (none, or the factored form's), `converted` itself.
  mlir::Value dequantPair(mlir::Value converted,
                          llvm::ArrayRef<mlir::Value> inputs);
  /// Integer weight element e (0-7 for i4, 0-3 for int8) of `word` as an
  /// f32, exact, without cvt.
  mlir::Value intScalar(mlir::Value word, unsigned e);
  /// The weight's side on one element: `value` from intScalar, `inputs`
  /// from loadBInputs for its row and group (f32 arithmetic with the
  /// body's roundings).
  mlir::Value dequantScalar(mlir::Value value,
                            llvm::ArrayRef<mlir::Value> inputs);
  /// The two halves of a 16-bit pair as f32.
  std::pair<mlir::Value, mlir::Value> unpackPair(mlir::Value pair);

  /// For schedules where every thread owns `count` outputs: sums the partial
  /// results of the warps splitting K through shared memory (`slot(w, j)`
  /// is output j's place for K piece w; none when kwarps is 1), delivers
  /// each output from the threads of piece 0, and finishes split-K. With
  /// several weights, `acc` holds each weight's `count / c.weights` sums in
  /// turn, and sum j of every weight is output j's (mOf(j), nOf(j)).
  void deliverAll(int64_t count, llvm::ArrayRef<mlir::Value> acc,
                  llvm::function_ref<mlir::Value(mlir::Value, int64_t)> slot,
                  llvm::function_ref<mlir::Value(int64_t)> mOf,
                  llvm::function_ref<mlir::Value(int64_t)> nOf);
};

//===----------------------------------------------------------------------===//
// Tensor cores: mma.sync m16n8k16, weight stored [N, K]
//===----------------------------------------------------------------------===//
//
// The product is computed transposed, out^T = W x^T: the weight is mma's
// A operand (16 rows of N by 16 of K) and the activations its B operand
// (16 of K by 8 rows of M), so a batch of 1 to 8 rows wastes nothing of a
// weight tile. The order of the 16 k's inside one mma is free as long as A
// and B agree, so lane (g = lane / 4, t = lane % 4) takes physical k =
// 16 t + 4 j + {0..3} for step j of a 64-wide K chunk: each lane loads 16
// contiguous k of its weight rows g and g + 8 and of its activation row g,
// and the fragments are consecutive words of those loads. int8 becomes
// bf16 pairs by a byte permute under the exponent of 128, two masks and one
// bf16x2 fma (bf16Pair); f16 pairs by permutes against 1024 and one f16x2
// subtraction.

/// The base of the tensor-core kinds (Mma.cpp, Tiled.cpp).
class TensorCoreEmitter : public ContractEmitter {
protected:
  using ContractEmitter::ContractEmitter;

  /// D = A B + C for one m16n8k16 tile (accumulators in f32).
  void mma(llvm::ArrayRef<mlir::Value> a, llvm::ArrayRef<mlir::Value> bw,
           llvm::MutableArrayRef<mlir::Value> acc, bool f16);
  /// mma's A fragment for k-step j (the lane's k's 4 j .. 4 j + 3) from a
  /// lane's words of weight rows g (`lo`) and g + 8 (`hi`): integer words
  /// are converted (int8: one word per step; i4: half a word) and
  /// dequantized with the b inputs of each row's group (`loIn`, `hiIn`,
  /// from loadBInputs as pairs), 16-bit words are used as they are (two
  /// words per step).
  llvm::SmallVector<mlir::Value, 4>
  weightFragment(llvm::ArrayRef<mlir::Value> lo, llvm::ArrayRef<mlir::Value> hi,
                 int64_t j, llvm::ArrayRef<mlir::Value> loIn = {},
                 llvm::ArrayRef<mlir::Value> hiIn = {});
  /// Whether B is an integer weight the fragments convert.
  bool quantized() const { return isInteger(c.b); }
  /// mma's B fragment for k-step j from a lane's activation words `x` (two
  /// 16-bit k's each, in order): words 2 j and 2 j + 1, paired as the
  /// weight's k's are (weightFragment: an i4 weight's pairs are k's p and
  /// p + 4 of each eight).
  llvm::SmallVector<mlir::Value, 2>
  activationPairs(llvm::ArrayRef<mlir::Value> x, int64_t j);

  /// Output row (m) and column (n) of accumulator j = (r * mt + i) * 4 + c of
  /// a warp whose tiles start at weight row `nWarp` and activation row
  /// `mWarp`: weight row g (+8 for c >= 2) of 16-row tile r, activation row
  /// 2t (+1 for odd c) of 8-row tile i.
  mlir::Value mmaOutputN(mlir::Value nWarp, int64_t j, int64_t mt);
  mlir::Value mmaOutputM(mlir::Value mWarp, int64_t j, int64_t mt);

  /// Sums the accumulators of the kwarps warps that split K (each of the
  /// `slice` warps of K piece w parks them at [w][its index][j][lane] in
  /// shared memory) and delivers them, accumulator j as output
  /// (mmaOutputM(mWarp, j, mt), mmaOutputN(nWarp, j, mt)); with one K
  /// piece, delivers directly. Without split-K the per-channel epilogue
  /// inputs of the thread's columns (two per 16-row tile) are loaded once,
  /// first, so their loads overlap the sums instead of each output's
  /// waiting for its own.
  void deliverMma(llvm::ArrayRef<mlir::Value> acc, int64_t slice,
                  mlir::Value warpInSlice, mlir::Value mWarp, mlir::Value nWarp,
                  int64_t mt);
};

//===----------------------------------------------------------------------===//
// The contraction kinds
//===----------------------------------------------------------------------===//

/// One factory per kind: the emitter of `op` with a schedule of that kind.
#define MTC_CONTRACT_KIND(KIND, CREATE)                                        \
  std::unique_ptr<ContractEmitter> CREATE(                                     \
      mlir::OpBuilder &b, kernel::ContractOp op, llvm::StringRef name,         \
      const EmitOptions &opts);
#include "passes/emit/ContractKinds.def"

} // namespace mtc::emit

#endif // MTC_PASSES_EMIT_CONTRACT_H

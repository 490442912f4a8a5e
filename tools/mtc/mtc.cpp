//===- mtc.cpp - The mtc command line -------------------------------------===//
//
//   mtc compile FILE [-o DIR] [--dump-dir DIR] [--emit=STAGE] [--arch sm_90a]
//               [--target h200]
//   mtc run FILE [--check] [--seed N]
//   mtc tune FILE / mtc bench FILE [--json]
//
// Exit codes: 0 success; 1 the user's input is wrong (a located diagnostic,
// nothing written); 2 the environment or mtc failed (no driver, out of
// memory, a JIT or internal error), with a message saying which.
//
// This file defines the flags, parses them and dispatches to the commands
// (Commands.cpp); Cli.h is what they share.
//
//===----------------------------------------------------------------------===//
#include "Cli.h"

#include <cmath>
#include <csignal>

using namespace mtc::cli;

namespace mtc::cli {

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

cl::SubCommand compileCmd("compile",
                          "Compile graph files to PTX and kernel manifests");
cl::SubCommand runCmd("run", "Compile and run graphs on the GPU");
cl::SubCommand tuneCmd("tune", "Autotune every kernel's schedule on the GPU "
                               "(coordinate descent; results cached)");
cl::SubCommand benchCmd("bench",
                        "Time every kernel on the GPU with cold L2 and compare "
                        "with the streaming-read ceiling");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<graph file>"),
                               cl::Required, cl::sub(compileCmd),
                               cl::sub(runCmd), cl::sub(benchCmd),
                               cl::sub(tuneCmd));
cl::opt<std::string> outDir("o", cl::desc("Output folder (default mtc-out)"),
                            cl::value_desc("dir"), cl::init("mtc-out"),
                            cl::sub(compileCmd));
cl::opt<std::string> dumpDir("dump-dir",
                             cl::desc("Also write every stage of every graph "
                                      "there"),
                             cl::value_desc("dir"), cl::sub(compileCmd));
cl::opt<std::string>
    emitStage("emit",
              cl::desc("Print one stage to stdout instead of writing files: "
                       "graph, kernel, nvvm, llvm-dialect, llvm, ptx, "
                       "manifest"),
              cl::value_desc("stage"), cl::sub(compileCmd));
cl::opt<std::string>
    arch("arch",
         cl::desc("GPU architecture: sm_80, sm_89, sm_90, sm_90a (Hopper with "
                  "wgmma and TMA). Default: compile, the --target's, else "
                  "sm_90; run, bench, tune and compile --tune, the GPU's "
                  "(sm_90a on compute capability 9.0)"),
         cl::value_desc("sm_XX"), cl::sub(compileCmd), cl::sub(runCmd),
         cl::sub(benchCmd), cl::sub(tuneCmd));
cl::opt<std::string> targetSpec(
    "target",
    cl::desc("The GPU the heuristic schedules are sized for (multiprocessors, "
             "L2, shared memory, bandwidth): a100, h100, h200, l40s, rtx4090; "
             "gpu (the one at hand, the default of run, bench, tune and "
             "compile --tune); or sms=N,l2=BYTES,smem=BYTES[,bw=GB/s]. "
             "compile's default follows --arch"),
    cl::value_desc("name"), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(benchCmd), cl::sub(tuneCmd));
cl::list<std::string> graphNames("graph",
                                 cl::desc("Only this graph (repeatable)"),
                                 cl::value_desc("name"), cl::sub(compileCmd),
                                 cl::sub(runCmd), cl::sub(benchCmd),
                                 cl::sub(tuneCmd));
cl::list<std::string> binds("bind",
                            cl::desc("Value of a symbolic dimension: M=4"),
                            cl::value_desc("NAME=N"), cl::CommaSeparated,
                            cl::sub(compileCmd), cl::sub(runCmd),
                            cl::sub(benchCmd), cl::sub(tuneCmd));
cl::opt<bool> explainFusion(
    "explain-fusion",
    cl::desc("Print a remark per kernel (the graph nodes it computes) and "
             "per value written between kernels (why it was not fused)"),
    cl::sub(compileCmd));
cl::opt<bool> explainSchedule(
    "explain-schedule",
    cl::desc("Print a remark per kernel: its schedule and each heuristic "
             "rule that chose it (or the heuristic's beside a given one)"),
    cl::sub(compileCmd));
cl::opt<bool> noFastDequant(
    "no-fast-dequant",
    cl::desc("Convert int8 with cvt instructions instead of byte permutes"),
    cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd), cl::sub(tuneCmd));
cl::list<std::string> scheduleFlags(
    "schedule",
    cl::desc("Use this schedule for kernel K instead of the heuristic one, "
             "e.g. --schedule '0=simt w8 r1 kw4 v16 u2 mt1 sk2' (repeatable)"),
    cl::value_desc("K=SCHEDULE"), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(benchCmd));
cl::opt<bool> check("check",
                    cl::desc("Compare every output with the fp64 reference "
                             "interpreter"),
                    cl::sub(runCmd));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                       cl::init(0), cl::sub(runCmd), cl::sub(benchCmd),
                       cl::sub(tuneCmd));
cl::opt<bool> jsonOutput("json", cl::desc("Print the results as JSON"),
                         cl::sub(benchCmd), cl::sub(tuneCmd));
cl::opt<bool> tuneFlag("tune",
                       cl::desc("Use autotuned schedules: from the cache, or "
                                "tuned now on the GPU"),
                       cl::sub(compileCmd), cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<bool> forceTune("force",
                        cl::desc("Tune again even where the cache has a "
                                 "result"),
                        cl::sub(tuneCmd));
cl::opt<unsigned> maxProbes(
    "max-probes",
    cl::desc("Compile and measure at most this many schedules per kernel "
             "when tuning (illegal ones do not count; a cached result is "
             "reused whatever budget found it, --force tunes again)"),
    cl::init(150), cl::value_desc("n"), cl::sub(tuneCmd), cl::sub(compileCmd),
    cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<double> tuneSeconds(
    "tune-seconds",
    cl::desc("Tune a kernel for at most this many seconds (0: no limit): no "
             "probe starts that would end later at the pace of the slowest "
             "so far; the search keeps the best"),
    cl::init(30), cl::value_desc("s"), cl::sub(tuneCmd), cl::sub(compileCmd),
    cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<bool> verbose("verbose", cl::desc("Print every probe of the search"),
                      cl::sub(tuneCmd), cl::sub(compileCmd), cl::sub(runCmd),
                      cl::sub(benchCmd));
cl::opt<std::string>
    cacheDir("cache-dir",
             cl::desc("Tuning cache folder (default $MTC_CACHE_DIR, else "
                      "~/.cache/mtc)"),
             cl::value_desc("dir"), cl::sub(tuneCmd), cl::sub(compileCmd),
             cl::sub(runCmd), cl::sub(benchCmd));
cl::opt<unsigned> replays("replays", cl::desc("Timed CUDA-graph replays"),
                          cl::init(15), cl::sub(benchCmd));
cl::opt<int64_t> batch(
    "batch",
    cl::desc("With --bind NAME=V1,V2,...: run at this value of the symbol, "
             "on the smallest bucket >= it (inputs zero-padded)"),
    cl::init(0), cl::sub(runCmd));
cl::opt<double> tolerance(
    "tol",
    cl::desc("Largest accepted error, in ulps of the output's type at its "
             "largest reference magnitude (default: 2 for 16-bit outputs, "
             "32 for f32; 64 for f32 where the kernels split K)"),
    cl::value_desc("ulps"), cl::sub(runCmd));

} // namespace mtc::cli

int main(int argc, char **argv) {
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  // A full disk or a file-size limit must fail the write (EFBIG), which mtc
  // reports, instead of killing the process with half-written files.
  signal(SIGXFSZ, SIG_IGN);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "mtc " << MTC_VERSION << " (LLVM/MLIR " << MTC_LLVM_VERSION_STRING
       << ")\n";
  });
  cl::HideUnrelatedOptions({});
  cl::ParseCommandLineOptions(argc, argv,
                              "mtc: graph files to fused GPU kernels\n");
  if (maxProbes == 0) {
    llvm::errs() << "mtc: error: --max-probes must be at least 1\n";
    return kUserError;
  }
  if (!(tuneSeconds >= 0) || std::isinf(tuneSeconds)) {
    llvm::errs() << "mtc: error: --tune-seconds must be a number of seconds "
                    ">= 0 (0: no limit)\n";
    return kUserError;
  }
  // Errors of rounded outputs are whole ulps or none: a tolerance below one
  // is most likely a relative one (the default was 1e-2 before mtc counted
  // ulps).
  if (tolerance.getNumOccurrences() &&
      (!(tolerance >= 1) || std::isinf(tolerance))) {
    llvm::errs() << "mtc: error: --tol counts ulps of the output's type "
                    "(e.g. --tol 2), at least 1\n";
    return kUserError;
  }
  int rc = -1;
  if (compileCmd)
    rc = compileMain();
  else if (runCmd)
    rc = runMain();
  else if (benchCmd)
    rc = benchMain();
  else if (tuneCmd)
    rc = tuneMain();
  if (rc >= 0) {
    // A full disk or a closed pipe on stdout is the environment's failure,
    // reported like any other (LLVM would otherwise abort on exit).
    llvm::outs().flush();
    if (std::error_code ec = llvm::outs().error()) {
      llvm::outs().clear_error();
      llvm::errs() << "mtc: error: cannot write to standard output: "
                   << ec.message() << "\n";
      return kInternalError;
    }
    return rc;
  }
  llvm::errs() << "mtc: error: expected a command: compile, run, tune, bench "
                  "(see mtc --help)\n";
  return kUserError;
}

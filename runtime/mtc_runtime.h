/*===- mtc_runtime.h - mtc's runtime as a C library ---------------*- C -*-===*
 *
 * Runs graphs compiled by `mtc compile` from any language that can call C:
 * libmtc_runtime.so loads an artifact into the CUDA context current on the
 * calling thread and launches its kernels on a stream the caller gives, with
 * device pointers the caller owns. It links LLVM's support library and the
 * C++ runtime statically and opens libcuda.so.1 at run time, so it needs no
 * LLVM, no CUDA toolkit and no CUDA runtime library.
 *
 * An artifact is what one `mtc compile` of a graph wrote: either
 *   - the dispatch manifest of a `--bind M=1,2,4,...` compile (<graph>.json
 *     with "buckets"), with each bucket's manifest and PTX beside it; or
 *   - a single manifest (<graph>.json with "kernels") and its PTX.
 *
 * Buckets. A bound graph was compiled once per value of its symbolic
 * dimension (say M, the rows of the activations). A runtime value v runs
 * the bucket of the smallest value >= v. Every tensor whose shape contains
 * the symbol is then laid out with the *bucket's* value: the caller passes
 * buffers of the bucket's size, rows v.. of the inputs may hold anything
 * (rows of a linear layer are independent), and rows v.. of the outputs are
 * written with values that mean nothing. mtc_artifact_tensor() gives every
 * shape per bucket.
 *
 * Loading allocates what the caller does not own: buffers between kernels
 * and the zeroed workspaces of split-K kernels (see "init" in the manifest).
 * Launching allocates nothing, never synchronises, and touches no host
 * memory beyond its arguments, so it can be captured into a CUDA graph.
 * (Kernels that take a buffer as a TMA tensor map get a copy of the map
 * encoded at load, pointed at the caller's buffer on the stack.)
 * Launches of one artifact share its workspaces: they must not run at the
 * same time on different streams (load the artifact once per stream that
 * runs concurrently).
 *
 * Errors. Every function that can fail returns an mtc_status; on failure
 * mtc_last_error() holds a message for the calling thread until its next
 * failing call. No function aborts the process.
 *
 *===----------------------------------------------------------------------===*/
#ifndef MTC_RUNTIME_H
#define MTC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MTC_API __attribute__((visibility("default")))
#else
#define MTC_API
#endif

/* Bumped whenever a declaration below changes meaning. */
#define MTC_RUNTIME_ABI_VERSION 1

typedef enum mtc_status {
  MTC_SUCCESS = 0,
  /* A null pointer, an index out of range, a wrong number of buffers. */
  MTC_ERROR_INVALID_ARGUMENT = 1,
  /* A file of the artifact cannot be read. */
  MTC_ERROR_IO = 2,
  /* A manifest is not what this version of mtc writes. */
  MTC_ERROR_MALFORMED = 3,
  /* A runtime value beyond the artifact's largest bucket. */
  MTC_ERROR_OUT_OF_RANGE = 4,
  /* No CUDA driver, no device or no current context, a GPU the PTX does not
     target, out of device memory, a JIT or launch failure. */
  MTC_ERROR_CUDA = 5
} mtc_status;

/* The CUDA driver's handle types, as cuda.h declares them. */
typedef struct CUstream_st *mtc_stream;
typedef unsigned long long mtc_deviceptr;

typedef struct mtc_artifact mtc_artifact;

/* MTC_RUNTIME_ABI_VERSION of the library (compare with the header's). */
MTC_API int mtc_runtime_abi_version(void);
/* "MTC_ERROR_OUT_OF_RANGE" */
MTC_API const char *mtc_status_name(mtc_status status);
/* The message of the calling thread's last failure ("" if none). */
MTC_API const char *mtc_last_error(void);

/* Loads the artifact at `path` (a dispatch manifest or a manifest) into the
   CUDA context current on the calling thread: reads every bucket's manifest
   and PTX, JIT-compiles them, checks every kernel against the device, and
   allocates and zeroes the buffers the caller does not own. Do not call it
   while a stream of this process is being captured. */
MTC_API mtc_status mtc_artifact_load(const char *path, mtc_artifact **out);
/* Frees what mtc_artifact_load made (after waiting for the context's work);
   null is allowed. */
MTC_API void mtc_artifact_free(mtc_artifact *artifact);

/* The graph's name, and the symbolic dimension's ("" for an unbound
   graph). The strings live as long as the artifact. */
MTC_API const char *mtc_artifact_graph(const mtc_artifact *artifact);
MTC_API const char *mtc_artifact_symbol(const mtc_artifact *artifact);

/* Buckets, ascending: an unbound graph has one, of value 0. */
MTC_API size_t mtc_artifact_num_buckets(const mtc_artifact *artifact);
MTC_API int64_t mtc_artifact_bucket_value(const mtc_artifact *artifact,
                                          size_t bucket);
/* The bucket that runs runtime value `value` (>= 1; 0 for an unbound
   graph). */
MTC_API mtc_status mtc_artifact_select(const mtc_artifact *artifact,
                                       int64_t value, size_t *bucket);

/* The graph's inputs and outputs, in signature and return order. */
MTC_API size_t mtc_artifact_num_inputs(const mtc_artifact *artifact);
MTC_API size_t mtc_artifact_num_outputs(const mtc_artifact *artifact);

#define MTC_MAX_RANK 8
typedef enum mtc_tensor_kind { MTC_INPUT = 0, MTC_OUTPUT = 1 } mtc_tensor_kind;
typedef struct mtc_tensor_info {
  const char *name;  /* lives as long as the artifact */
  const char *dtype; /* "i4" (two a byte), "i8", "f16", "bf16", "f32" */
  int rank;
  int64_t shape[MTC_MAX_RANK]; /* in bucket `bucket`; row-major, dense */
  int64_t bytes;
  /* The dimension that carries the symbol, or -1. */
  int symbolic_dim;
} mtc_tensor_info;
/* Input or output `index` as bucket `bucket` lays it out. */
MTC_API mtc_status mtc_artifact_tensor(const mtc_artifact *artifact,
                                       size_t bucket, mtc_tensor_kind kind,
                                       size_t index, mtc_tensor_info *info);

/* Runs the graph for runtime value `value` (see mtc_artifact_select): every
   kernel of the bucket, in order, on `stream` (0: the context's default
   stream), with the caller's buffers: `inputs[i]` for input i and
   `outputs[i]` for output i, each laid out as mtc_artifact_tensor says for
   that bucket, 16-byte aligned, and no output overlapping any other buffer
   (kernels assume both). Null or misaligned pointers are refused.
   Asynchronous: a kernel that faults is reported by the next synchronising
   call on the stream. */
MTC_API mtc_status mtc_artifact_launch(mtc_artifact *artifact, int64_t value,
                                       mtc_stream stream,
                                       const mtc_deviceptr *inputs,
                                       size_t num_inputs,
                                       const mtc_deviceptr *outputs,
                                       size_t num_outputs);

#ifdef __cplusplus
}
#endif

#endif /* MTC_RUNTIME_H */

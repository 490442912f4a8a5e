"""Timing PyTorch work the way ANCHORS.md measures it, for bench/ scripts:
a CUDA graph of `calls` calls cycling through enough copies of the inputs
that together they exceed 4x L2 (so every call reads them from DRAM),
replayed `replays` times; the median microseconds per call. And
poisoned_call, which runs a function once with its output on NaN-filled
memory, for the checks before the timing."""
import math
import statistics


def poisoned_call(torch, fn, inputs, out_shape, out_dtype):
    """fn(*inputs) with its output, where it is fn's first allocation of
    that size, on memory filled with NaN just before: (output, poisoned).

    A warm-up call first makes any lazy allocation (cuBLAS workspaces,
    autotuning). Then a tensor of the output's shape is filled with NaN and
    freed; the caching allocator's best fit hands the same block to the
    next allocation of that size on this stream, so a kernel that skips
    part of its output leaves NaN there. `poisoned` says whether the output
    really landed on that block (same address); functions that allocate a
    temporary of that size first do not."""
    fn(*inputs)
    torch.cuda.synchronize()
    junk = torch.full(out_shape, float("nan"), dtype=out_dtype,
                      device="cuda")
    ptr = junk.data_ptr()
    del junk
    out = fn(*inputs)
    torch.cuda.synchronize()
    return out, out.data_ptr() == ptr


def time_rotated(torch, fn, inputs, per_copy_bytes, calls=40, replays=15,
                 max_copies=64):
    """fn(*inputs) timed over rotated copies of `inputs` (a tuple of
    tensors; the first copy is `inputs` itself)."""
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    copies = min(max(1, math.ceil(4 * l2 / per_copy_bytes)), max_copies)
    sets = [inputs] + [tuple(t.clone() for t in inputs)
                       for _ in range(copies - 1)]
    calls = max(calls, copies)
    calls = int(math.ceil(calls / copies) * copies)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for st in sets:  # warm every copy (compiles, autotunes)
            fn(*st)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for c in range(calls):
            fn(*sets[c % copies])
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000 / calls)
    del graph, sets
    return statistics.median(times)

"""Timing and comparison helpers for the Python GPU benchmarks
(torch_compare.py, sweep.py): CUDA-event timing, and comparisons of large
tensors in batch slices (never a second full copy of a tensor of 2^32
elements)."""
import math

import torch

INT_VIEW = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16,
            torch.float64: torch.int64}


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def time_events(fn, reps, warmup=3):
    """Median of reps launches of fn, each between its own pair of CUDA
    events, after warmup launches. For a launch shorter than the host's
    cost of issuing it, this measures the host."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record()
        ts.append((a, b))
    torch.cuda.synchronize()
    return median([a.elapsed_time(b) for a, b in ts])


# GPU clock cycles the stream is held per queued launch (about 60 us at
# 2 GHz: more than the host takes to issue one launch through Python).
_HOLD_CYCLES_PER_LAUNCH = 120_000
_HOLD_CYCLES_BASE = 200_000


def time_queued(fn, reps=7, batch_ms=2.0, max_launches=50, warmup=2):
    """Device time of one launch of fn, in ms: the median over reps of
    (events around a batch of back-to-back launches) / launches. The stream
    is held by a sleeping kernel while the host queues each batch, so the
    launches run back to back and the host's cost of issuing them (ctypes,
    PyTorch's dispatcher) is not timed. The batch holds enough launches to
    last about batch_ms (at most max_launches)."""
    for _ in range(warmup):
        fn()
    a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(_HOLD_CYCLES_BASE + _HOLD_CYCLES_PER_LAUNCH)
    a.record(); fn(); b.record()
    b.synchronize()
    launches = max(1, min(max_launches, math.ceil(batch_ms / max(a.elapsed_time(b), 1e-3))))
    pairs = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(_HOLD_CYCLES_BASE + _HOLD_CYCLES_PER_LAUNCH * launches)
        a.record()
        for _ in range(launches):
            fn()
        b.record()
        pairs.append((a, b))
    torch.cuda.synchronize()
    return median([a.elapsed_time(b) / launches for a, b in pairs])


def batch_chunks(t):
    """Slices of t along the batch dimension of at most 2^26 elements each (at
    least one item), so that comparisons never hold a second copy of a
    tensor of 2^32 elements."""
    per_item = max(1, t[0].numel())
    step = max(1, (1 << 26) // per_item)
    for i in range(0, t.shape[0], step):
        yield slice(i, min(i + step, t.shape[0]))


def bitwise_equal(a, b):
    """Same bits in every element (whatever the two tensors' memory formats)."""
    iv = INT_VIEW[a.dtype]
    for s in batch_chunks(a):
        if not torch.equal(a[s].contiguous().view(iv), b[s].contiguous().view(iv)):
            return False
    return True


def max_abs_diff(a, b):
    m = 0.0
    for s in batch_chunks(a):
        m = max(m, float((a[s].contiguous().double() - b[s].contiguous().double()).abs().max()))
    return m

#!/usr/bin/env python3
"""Large windows: avgpool against PyTorch on the device, in one process.

For each case of docs/performance.md's large-window table, times avgpool in
both numerics (through ctypes on the same tensors and stream),
torch.nn.functional.avg_pool2d and, where the window is the whole plane,
adaptive_avg_pool2d(x, 1) (the same result), with CUDA events, median of
REPS runs after warm-up; reports each time's fraction of the copy roofline
(src + dst bytes at the speed of a large device-to-device copy, measured
here) and checks pytorch numerics bitwise against avg_pool2d, fast numerics
within the float32 summation bound.

--queued times every launch (ours and PyTorch's) back to back behind a
held stream (torch_util.time_queued): device time without the host's cost
of issuing a launch, which events around one launch include (about 0.04 ms
through ctypes: more than the bf16 column's kernel). --impls A,B also times
those implementations, forced by name, on every case they accept.

usage: torch_compare_large.py LIBAVGPOOL.so [--json FILE] [--reps N] [--queued] [--impls A,B]
"""
import json, os, sys, time
import torch
import torch.nn.functional as F

from torch_util import time_events, time_queued

lib_path = sys.argv[1]
json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 20
queued = "--queued" in sys.argv
forced = sys.argv[sys.argv.index("--impls") + 1].split(",") if "--impls" in sys.argv else []
# The Python package's plans, on the library under test.
os.environ["AVGPOOL_LIBRARY"] = lib_path
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from avgpool._lib import AvgpoolError  # noqa: E402
from gpu_measure import copy_bandwidth, cuda_plan, plan_runner  # noqa: E402


def time_fn(fn, n=None):
    if queued:
        return time_queued(fn, reps=min(n or reps, 9))
    return time_events(fn, n or reps, warmup=2)


# (name, shape, kernel, stride, dtype, channels_last)
cases = [
    ("global1024", (64, 3, 1024, 1024), (1024, 1024), (1024, 1024), torch.float32, False),
    ("global256", (16, 64, 256, 256), (256, 256), (256, 256), torch.float32, False),
    ("global64", (32, 512, 64, 64), (64, 64), (64, 64), torch.float32, False),
    ("k32s16", (8, 64, 512, 512), (32, 32), (16, 16), torch.float32, False),
    ("k64s32", (8, 64, 512, 512), (64, 64), (32, 32), torch.float32, False),
    ("col4096", (1, 1, 4096, 4096), (4096, 1), (1, 1), torch.bfloat16, False),
    ("global64", (32, 512, 64, 64), (64, 64), (64, 64), torch.float32, True),
    ("k32s16", (8, 64, 512, 512), (32, 32), (16, 16), torch.float32, True),
]


def main():
    gbps = copy_bandwidth() / 1e9
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, copy {gbps:.0f} GB/s")
    print(f"{'case':11} {'dtype':8} {'lay':4} {'roof_ms':>8} {'fast_ms':>8} {'f/roof':>6} {'pyt_ms':>8} "
          f"{'p/roof':>6} {'torch_ms':>9} {'adapt_ms':>8} {'t/fast':>7} {'t/pyt':>6} {'bitwise':>7} {'fast_ok':>7}  impls")
    rows = []
    for name, shape, k, s, dt, cl in cases:
        torch.cuda.empty_cache()
        x = torch.rand(shape, device="cuda", dtype=dt) * 2 - 1
        if cl:
            x = x.contiguous(memory_format=torch.channels_last)
        ref = F.avg_pool2d(x, k, s)
        refd = F.avg_pool2d(x.double(), k, s)
        out = torch.empty_like(ref)
        if cl:
            out = torch.empty(ref.shape, device="cuda", dtype=dt).contiguous(memory_format=torch.channels_last)
        roof = (x.numel() + ref.numel()) * x.element_size() / (gbps * 1e9) * 1e3
        res = {}
        forced_rows = []
        for numerics in (0, 1):
            for impl_name in [None] + forced:
                try:
                    plan = cuda_plan(shape, k, s, (0, 0), False, True, dt, cl, numerics, impl=impl_name)
                except AvgpoolError as e:
                    if impl_name is None:
                        print(name, "plan failed:", e)
                        res[numerics] = (float("nan"), None, "none")
                    continue
                run = plan_runner(plan, x, out)
                out.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                if numerics == 1:
                    ok = bool(torch.equal(out, ref))
                else:
                    # 1 ulp of the dtype + the float32 summation bound (|x| < 1)
                    ulp = {torch.float32: 2.0 ** -23, torch.bfloat16: 2.0 ** -7}[dt]
                    bound = ulp * refd.abs() + k[0] * k[1] * 2.0 ** -24
                    ok = bool(((out.double() - refd).abs() <= bound).all())
                ms = time_fn(run)
                if impl_name is None:
                    res[numerics] = (ms, ok, plan.impl_name)
                else:
                    forced_rows.append(dict(impl=impl_name, numerics=["fast", "pytorch"][numerics], ms=ms, ok=ok))
                    print(f"  forced {impl_name:26} {['fast', 'pytorch'][numerics]:8} {ms:8.3f} ms  "
                          f"{roof / ms:5.2f} roof  ok={ok}")
        slow = name == "global1024"  # avg_pool2d takes ~0.1 s there
        t_torch = time_fn(lambda: F.avg_pool2d(x, k, s), 5 if slow else None)
        t_adapt = float("nan")
        if k == tuple(shape[2:]):
            t_adapt = time_fn(lambda: F.adaptive_avg_pool2d(x, 1))
        fast, pyt = res[0], res[1]
        row = dict(case=name, shape=list(shape), kernel=list(k), stride=list(s), dtype=str(dt).replace("torch.", ""),
                   layout="nhwc" if cl else "nchw", copy_roofline_ms=roof, fast_ms=fast[0], fast_impl=fast[2],
                   fast_ok=fast[1], pytorch_ms=pyt[0], pytorch_impl=pyt[2], bitwise_equal_pytorch=pyt[1],
                   torch_avg_pool2d_ms=t_torch, torch_adaptive_ms=t_adapt, copy_gbps=gbps,
                   timing="queued" if queued else "events", forced=forced_rows)
        rows.append(row)
        print(f"{name:11} {row['dtype']:8} {row['layout']:4} {roof:8.3f} {fast[0]:8.3f} {roof / fast[0]:6.2f} "
              f"{pyt[0]:8.3f} {roof / pyt[0]:6.2f} {t_torch:9.3f} {t_adapt:8.3f} {t_torch / fast[0]:7.2f} "
              f"{t_torch / pyt[0]:6.2f} {str(pyt[1]):>7} {str(fast[1]):>7}  {fast[2]} / {pyt[2]}")
        del x, ref, refd, out
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           date=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), rows=rows), f, indent=1)


main()

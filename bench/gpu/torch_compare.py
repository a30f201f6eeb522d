#!/usr/bin/env python3
"""PyTorch against avgpool on the device, in one process.

For each GPU benchmark case (docs/performance.md), times torch.nn.functional.avg_pool2d
and avgpool (through ctypes on the same tensors and the same stream) with
CUDA events, median of REPS runs after warm-up, and checks that avgpool's
pytorch numerics are bitwise equal to PyTorch's CUDA output.

With --backward: times PyTorch's avg_pool2d backward
(torch.ops.aten.avg_pool2d_backward) and avgpool_plan_backward on the same
grad_output, and checks avgpool's pytorch numerics bitwise against
PyTorch's NCHW result (also for channels_last: PyTorch's own channels_last
backward is wrong with padding up to 2.11, and an NHWC grad_input must equal
the NCHW one). Where PyTorch fails on the whole tensor (the seed's
grad_input has 2^32 elements), its reference and time are per batch item.

usage: torch_compare.py LIBAVGPOOL.so [--backward] [--json FILE] [--reps N]
"""
import json, os, sys, time
import torch
import torch.nn.functional as F

from torch_util import bitwise_equal, max_abs_diff, time_events

lib_path = sys.argv[1]
# The Python package's plans, on the library under test.
os.environ["AVGPOOL_LIBRARY"] = lib_path
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from avgpool._lib import AvgpoolError  # noqa: E402
from gpu_measure import cuda_plan, plan_runner  # noqa: E402
json_path = sys.argv[sys.argv.index("--json") + 1] if "--json" in sys.argv else None
reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 30


def time_fn(fn):
    return time_events(fn, reps)

cases = []
for dt in (torch.float32, torch.float16, torch.bfloat16):
    cases.append(("seed", (16, 64, 2048, 2048), 11, 11, 0, False, True, dt, False))
cases.append(("seed", (16, 64, 2048, 2048), 11, 11, 0, False, True, torch.float32, True))
for cl in (False, True):
    cases += [("k3s1p1", (32, 256, 56, 56), 3, 1, 1, False, True, torch.float32, cl),
              ("k3s1p1_excl", (32, 256, 56, 56), 3, 1, 1, False, False, torch.float32, cl),
              ("k2s2", (64, 128, 112, 112), 2, 2, 0, False, True, torch.float32, cl),
              ("k3s2p1_ceil", (64, 64, 112, 112), 3, 2, 1, True, True, torch.float32, cl),
              ("global_k7", (256, 2048, 7, 7), 7, 7, 0, False, True, torch.float32, cl),
              ("k11s4", (16, 64, 1024, 1024), 11, 4, 0, False, True, torch.float32, cl),
              ("k5s1p2", (8, 64, 1024, 1024), 5, 1, 2, False, True, torch.float32, cl)]


def timed_plan(shape, k, s, pad, ceil, incl, dt, cl, numerics, src, dst, backward, notes):
    """(ms, impl) of the library's plan from src into dst; (nan, "none") and
    a note when the plan or its direction is refused."""
    try:
        plan = cuda_plan(shape, (k, k), (s, s), (pad, pad), ceil, incl, dt, cl, numerics)
        impl = plan.backward_impl_name if backward else plan.impl_name
        ms = time_fn(plan_runner(plan, src, dst, backward))
    except AvgpoolError as e:
        notes.append(f"plan failed: {e}")
        return float("nan"), "none"
    torch.cuda.synchronize()
    return ms, impl


def backward_main():
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, backward, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'case':12} {'dtype':9} {'layout':6} {'torch_ms':>9} {'fast_ms':>9} {'pyt_ms':>9} "
          f"{'torch/fast':>10} {'torch/pyt':>9} {'bitwise':>8} {'torch_cl_ok':>11}  impl / notes")
    rows = []
    for name, shape, k, s, pad, ceil, incl, dt, cl in cases:
        torch.cuda.empty_cache()
        fmt = torch.channels_last if cl else torch.contiguous_format
        x = torch.empty(shape, device="cuda", dtype=dt).contiguous(memory_format=fmt)
        out_shape = F.avg_pool2d(torch.empty(shape, device="meta"), k, s, pad, ceil, incl).shape
        gout = (torch.rand(out_shape, device="cuda", dtype=dt) * 2 - 1).contiguous(memory_format=fmt)
        args = ([k, k], [s, s], [pad, pad], ceil, incl, None)
        bwd = torch.ops.aten.avg_pool2d_backward
        notes = []

        # PyTorch's NCHW result: the reference (per batch item where the whole tensor fails).
        g_nchw, x_nchw = gout.contiguous(), x.contiguous()
        try:
            ref = bwd(g_nchw, x_nchw, *args)
            torch.cuda.synchronize()
        except RuntimeError as e:
            notes.append(f"torch NCHW fails on the whole tensor ({str(e).splitlines()[0][:60]}): reference per batch item")
            torch.cuda.empty_cache()
            ref = torch.empty(shape, device="cuda", dtype=dt)
            for i in range(shape[0]):
                ref[i:i + 1] = bwd(g_nchw[i:i + 1], x_nchw[i:i + 1], *args)
            torch.cuda.synchronize()
        del g_nchw, x_nchw

        # PyTorch's time in the case's layout (per batch item if the whole tensor fails).
        def torch_whole():
            return bwd(gout, x, *args)

        def torch_items():
            for i in range(shape[0]):
                bwd(gout[i:i + 1], x[i:i + 1], *args)
        torch_cl_ok = None
        try:
            t_out = torch_whole()
            torch.cuda.synchronize()
            if cl:
                torch_cl_ok = bitwise_equal(t_out, ref)
            del t_out
            torch.cuda.empty_cache()
            t_torch = time_fn(torch_whole)
        except RuntimeError as e:
            notes.append(f"torch fails on the whole tensor ({str(e).splitlines()[0][:60]}): timed per batch item")
            t_torch = time_fn(torch_items)

        gin = torch.empty(shape, device="cuda", dtype=dt).contiguous(memory_format=fmt)
        res = {}
        for numerics in (0, 1):
            ms, impl = timed_plan(shape, k, s, pad, ceil, incl, dt, cl, numerics, gout, gin, True, notes)
            bitwise = bitwise_equal(gin, ref) if numerics == 1 else None
            maxdiff = max_abs_diff(gin, ref) if numerics == 0 else 0.0
            res[numerics] = (ms, bitwise, impl, maxdiff)
        fast, pyt = res[0], res[1]
        row = dict(case=name, dtype=str(dt).replace("torch.", ""), layout="nhwc" if cl else "nchw",
                   torch_ms=t_torch, fast_ms=fast[0], pytorch_ms=pyt[0], bitwise_equal_pytorch=pyt[1],
                   fast_max_abs_diff=fast[3], impl=fast[2], torch_channels_last_equals_nchw=torch_cl_ok,
                   notes=notes)
        rows.append(row)
        print(f"{name:12} {row['dtype']:9} {row['layout']:6} {t_torch:9.3f} {fast[0]:9.3f} {pyt[0]:9.3f} "
              f"{t_torch / fast[0]:10.2f} {t_torch / pyt[0]:9.2f} {str(pyt[1]):>8} {str(torch_cl_ok):>11}  "
              f"{fast[2]}{'; ' + '; '.join(notes) if notes else ''}")
        del x, gout, ref, gin
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__, direction="backward",
                           date=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), rows=rows), f, indent=1)


def forward_main():
    x = None
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{'case':12} {'dtype':9} {'layout':6} {'torch_ms':>9} {'fast_ms':>9} {'pyt_ms':>9} "
          f"{'torch/fast':>10} {'torch/pyt':>9} {'bitwise':>8}  impl")
    rows = []
    x = None
    for name, shape, k, s, pad, ceil, incl, dt, cl in cases:
        del x
        torch.cuda.empty_cache()
        x = torch.rand(shape, device="cuda", dtype=dt) * 2 - 1
        if cl:
            x = x.contiguous(memory_format=torch.channels_last)
        ref = F.avg_pool2d(x, k, s, pad, ceil, incl)
        out = torch.empty_like(ref)  # same memory format as PyTorch's output
        if cl:
            out = torch.empty(ref.shape, device="cuda", dtype=dt).contiguous(memory_format=torch.channels_last)
        res = {}
        notes = []
        for numerics in (0, 1):
            ms, impl = timed_plan(shape, k, s, pad, ceil, incl, dt, cl, numerics, x, out, False, notes)
            bitwise = bool(torch.equal(out, ref)) if numerics == 1 else None
            maxdiff = float((out.double() - ref.double()).abs().max()) if numerics == 0 else 0.0
            res[numerics] = (ms, bitwise, impl, maxdiff)
        if notes:
            print(name, "; ".join(notes))
        t_torch = time_fn(lambda: F.avg_pool2d(x, k, s, pad, ceil, incl))
        fast, pyt = res[0], res[1]
        row = dict(case=name, dtype=str(dt).replace("torch.", ""), layout="nhwc" if cl else "nchw",
                   torch_ms=t_torch, fast_ms=fast[0], pytorch_ms=pyt[0], bitwise_equal_pytorch=pyt[1],
                   fast_max_abs_diff=fast[3], impl=fast[2])
        rows.append(row)
        print(f"{name:12} {row['dtype']:9} {row['layout']:6} {t_torch:9.3f} {fast[0]:9.3f} {pyt[0]:9.3f} "
              f"{t_torch / fast[0]:10.2f} {t_torch / pyt[0]:9.2f} {str(pyt[1]):>8}  {fast[2]}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                           date=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), rows=rows), f, indent=1)

if "--backward" in sys.argv:
    backward_main()
else:
    forward_main()

#!/usr/bin/env python3
"""Per-call overhead of the Python layer: avgpool.avg_pool2d on a tiny input
against the raw ctypes call of the C API on the same buffers.

numpy (always): a 1x1x4x4 float32 array, kernel 2, CPU backend. Rows:
  ctypes floor        avgpool_version_number() through ctypes: the cost of any ctypes call
  raw execute         avgpool_plan_execute(plan, src, dst, NULL) through ctypes, plan made once
  avg_pool2d(out=)    avgpool.avg_pool2d(x, 2, out=y): argument handling, cache hit, execute
  avg_pool2d          the same allocating the result
  plan cache miss     avg_pool2d with the cache cleared before every call (plan creation)
torch (when importable), CPU and, with a usable device, CUDA: a 1x1x8x8 float32
tensor, kernel 2:
  F.avg_pool2d        torch.nn.functional.avg_pool2d
  raw execute         avgpool_plan_execute on the tensors' pointers (CUDA: current stream)
  avgpool.torch       avgpool.torch.avg_pool2d (the custom operator)
  module              avgpool.torch.AvgPool2d(2)
CPU time (time.process_time) per call, median of --rounds rounds of --calls
calls; CUDA rows also give wall time per call with a synchronization after
each round (the launch queue does not hide the host cost at this size).

usage: overhead.py [--calls N] [--rounds R] [--json FILE]
"""
import argparse
import ctypes
import json
import platform
import statistics
import sys
import time

import numpy as np

import avgpool
from avgpool import _lib


def per_call(fn, calls, rounds, sync=None):
    cpu, wall = [], []
    for _ in range(3 * calls // 10 + 1):
        fn()
    if sync:
        sync()
    for _ in range(rounds):
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        cpu.append((time.process_time() - c0) / calls * 1e6)
        wall.append((time.perf_counter() - w0) / calls * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def raw_plan(in_dims, backend, device_guard=None):
    p = _lib.make_params(in_dims, (2, 2), (2, 2), (0, 0), False, True, None, _lib.DTYPE_F32, _lib.LAYOUT_NCHW,
                         backend, _lib.NUMERICS_FAST)
    handle = ctypes.c_void_p()
    if device_guard is None:
        _lib.check(_lib.avgpool_plan_create(ctypes.byref(p), ctypes.byref(handle)))
    else:
        with device_guard():
            _lib.check(_lib.avgpool_plan_create(ctypes.byref(p), ctypes.byref(handle)))
    return handle


def numpy_rows(calls, rounds):
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y = np.empty((1, 1, 2, 2), np.float32)
    handle = raw_plan((1, 1, 4, 4), _lib.BACKEND_CPU)
    src, dst = x.ctypes.data, y.ctypes.data
    execute, version = _lib.avgpool_plan_execute, _lib.avgpool_version_number

    def miss():
        avgpool.clear_plan_cache()
        avgpool.avg_pool2d(x, 2, out=y)

    rows = [("numpy", "ctypes floor", per_call(version, calls, rounds)),
            ("numpy", "raw execute", per_call(lambda: execute(handle, src, dst, None), calls, rounds)),
            ("numpy", "avg_pool2d(out=)", per_call(lambda: avgpool.avg_pool2d(x, 2, out=y), calls, rounds)),
            ("numpy", "avg_pool2d", per_call(lambda: avgpool.avg_pool2d(x, 2), calls, rounds)),
            ("numpy", "plan cache miss", per_call(miss, max(calls // 10, 10), rounds))]
    _lib.avgpool_plan_destroy(handle)
    assert np.array_equal(avgpool.avg_pool2d(x, 2), [[[[2.5, 4.5], [10.5, 12.5]]]])
    return rows


def torch_rows(calls, rounds):
    try:
        import torch
        import torch.nn.functional as F

        import avgpool.torch as apt
    except ImportError:
        return [], None
    rows = []
    devices = ["cpu"]
    if torch.cuda.is_available() and "cuda" in avgpool.backends():
        devices.append("cuda")
    for dev in devices:
        x = torch.arange(64, dtype=torch.float32, device=dev).reshape(1, 1, 8, 8)
        y = torch.empty(1, 1, 4, 4, device=dev)
        cuda = dev == "cuda"
        sync = torch.cuda.synchronize if cuda else None
        backend = _lib.BACKEND_CUDA if cuda else _lib.BACKEND_CPU
        handle = raw_plan((1, 1, 8, 8), backend, (lambda: torch.cuda.device(x.device)) if cuda else None)
        src, dst = x.data_ptr(), y.data_ptr()
        execute = _lib.avgpool_plan_execute
        if cuda:
            stream = torch.cuda.current_stream().cuda_stream
            raw = lambda: execute(handle, src, dst, stream)  # noqa: E731
        else:
            raw = lambda: execute(handle, src, dst, None)  # noqa: E731
        module = apt.AvgPool2d(2)
        rows += [(f"torch {dev}", "F.avg_pool2d", per_call(lambda: F.avg_pool2d(x, 2), calls, rounds, sync)),
                 (f"torch {dev}", "raw execute", per_call(raw, calls, rounds, sync)),
                 (f"torch {dev}", "avgpool.torch", per_call(lambda: apt.avg_pool2d(x, 2), calls, rounds, sync)),
                 (f"torch {dev}", "module", per_call(lambda: module(x), calls, rounds, sync))]
        if sync:
            sync()
        _lib.avgpool_plan_destroy(handle)
        assert torch.equal(apt.avg_pool2d(x, 2, numerics="pytorch"), F.avg_pool2d(x, 2))
    name = torch.cuda.get_device_name() if "cuda" in devices else None
    return rows, f"torch {torch.__version__}" + (f", {name}" if name else ", no CUDA device")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = numpy_rows(args.calls, args.rounds)
    more, torch_info = torch_rows(args.calls // 4, args.rounds)
    rows += more
    header = (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {platform.python_version()}, "
              f"numpy {np.__version__}, avgpool {avgpool.__version__} ({avgpool.library_path}), "
              f"{torch_info or 'torch not installed'}, {platform.processor() or platform.machine()}")
    print(header)
    print(f"{'input':12} {'call':18} {'cpu_us':>8} {'wall_us':>8}")
    for group, name, (cpu, wall) in rows:
        print(f"{group:12} {name:18} {cpu:8.2f} {wall:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(header=header, rows=[dict(input=g, call=n, cpu_us=c, wall_us=w) for g, n, (c, w) in rows]),
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

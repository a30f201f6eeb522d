#!/usr/bin/env python3
"""Forced implementations against AUTO on the sweep generator's
configurations, fast numerics (NUMERICS=pytorch: pytorch numerics, checked
bitwise): the data behind a policy rule.

For every configuration of seeds FIRST..LAST (100 each, 1 MB to 2 GB, as
sweep.py draws them) that FILTER accepts (a Python expression over `c`, a
bench/sweeplib Config; default: rows overlapping down the plane), times
AUTO's plan, each named implementation forced (those that decline are left
out of the row) and torch.nn.functional.avg_pool2d on the same input, in
device time (sweep.py's queued launches, best of two); checks every output
against PyTorch's within the fast numerics' bound. Writes the rows to
OUT.json as it goes (AUTO's choice in "auto_impl", times in "ms", checks
in "ok") and prints one line per configuration.

usage: AVGPOOL_LIBRARY=<build>/libavgpool.so [FILTER='c.sh == 1 and c.kh >= 8'] [NUMERICS=pytorch] \\
       python3 bench/gpu/impl_vs_auto.py OUT.json FIRST LAST [impl ...]
       (default impls: cuda:any_column_walk cuda:any_direct)
"""
import json
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_HERE, ".."), _HERE]
sys.path.append(os.path.join(_HERE, "..", "..", "python"))  # the avgpool package, after PYTHONPATH

from avgpool import _lib  # noqa: E402
from sweeplib import configs  # noqa: E402


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    import torch
    import torch.nn.functional as F
    from gpu_measure import TORCH_DTYPES, copy_bandwidth
    from sweep import fast_tolerance
    from torch_util import max_abs_diff, time_queued

    out_path, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    impls = sys.argv[4:] or ["cuda:any_column_walk", "cuda:any_direct"]
    accept = os.environ.get("FILTER", "c.sh < c.kh and c.oh > 1")
    exact = os.environ.get("NUMERICS", "fast") == "pytorch"
    numerics = _lib.NUMERICS_PYTORCH if exact else _lib.NUMERICS_FAST
    bw = copy_bandwidth()
    rows, t0 = [], time.time()
    for seed in range(first, last + 1):
        for c in configs.generate(seed, 100, 1 << 20, 2 << 30):
            if not eval(accept, {}, {"c": c}):
                continue
            dt = TORCH_DTYPES[c.dtype]
            fmt = torch.channels_last if c.layout == "nhwc" else torch.contiguous_format
            x = torch.empty((c.n, c.c, c.h, c.w), dtype=dt, device="cuda", memory_format=fmt).uniform_(-1, 1)
            pool = ((c.kh, c.kw), (c.sh, c.sw), (c.ph, c.pw), c.ceil, c.include_pad, c.divisor or None)
            ref = F.avg_pool2d(x.contiguous(), *pool)
            out = torch.empty((c.n, c.c, c.oh, c.ow), dtype=dt, device="cuda", memory_format=fmt)
            src, dst, stream = x.data_ptr(), out.data_ptr(), torch.cuda.current_stream().cuda_stream
            row = dict(label=c.label(), config=c.to_dict(), seed=seed, in_bytes=c.in_bytes, out_bytes=c.out_bytes,
                       roof_ms=(c.in_bytes + c.out_bytes) / bw * 1e3, ms={}, ok={})
            for name in ["auto"] + impls:
                try:
                    plan = _lib.Plan(c.params(_lib.BACKEND_CUDA, numerics),
                                     forward_impl=None if name == "auto" else name)
                except _lib.AvgpoolError:
                    continue  # declined
                if name == "auto":
                    row["auto_impl"] = plan.impl_name
                out.fill_(float("nan"))
                plan.execute(src, dst, stream)
                row["ok"][name] = bool(max_abs_diff(out, ref) <= (0 if exact else fast_tolerance(c)))
                run = plan.execute
                row["ms"][name] = min(time_queued(lambda: run(src, dst, stream)) for _ in range(2))
            row["ms"]["torch"] = min(time_queued(lambda: F.avg_pool2d(x, *pool)) for _ in range(2))
            rows.append(row)
            ms = row["ms"]
            forced = " ".join(f"{k} {ms[k]:.4f}" if k in ms else f"{k} -" for k in impls)
            bad = "" if all(row["ok"].values()) else f" OUT OF BOUND {row['ok']}"
            print(f"{row['label']:<58} {row['auto_impl']:<24} auto {ms['auto']:.4f} {forced} "
                  f"torch {ms['torch']:.4f} roof {row['roof_ms']:.4f}{bad}", flush=True)
            del x, ref, out
            torch.cuda.empty_cache()
            with open(out_path, "w") as f:
                json.dump(dict(copy_GBps=bw / 1e9, rows=rows), f)
    print(f"{len(rows)} configurations in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()

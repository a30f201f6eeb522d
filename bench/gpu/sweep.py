#!/usr/bin/env python3
"""Random-configuration sweep on the GPU: avgpool against PyTorch and the
copy roofline, in one process, on the same tensors.

For each seeded configuration (bench/sweeplib/configs.py: kernels 1-11,
strides 1 to beyond the kernel, paddings, ceil_mode, count_include_pad,
divisor_override, planes 7 to 2048 per side, 1-1024 channels, f32, f16,
bf16, f64, NCHW and NHWC, inputs log-uniform from --min-bytes to
--max-bytes), times avgpool's CUDA backend under its AUTO policy in fast
and in pytorch numerics (avgpool_plan_execute on a plan made beforehand)
and torch.nn.functional.avg_pool2d on the same input, in the same layout.
Times are device times (CUDA events around back-to-back launches queued
behind a sleeping kernel, median of 7 batches): the host's cost of a call
is not in them. The copy roofline is (bytes in + bytes out) / the
bandwidth of a device-to-device copy of 2 GiB measured at the start of the
run; inputs below the 60 MB L2 stay there between launches and can pass it.

Checks: pytorch numerics bitwise equal to PyTorch's result on the
NCHW-contiguous input (PyTorch's own channels_last kernel is not the
reference); fast numerics within the float32 summation bound.

Prints a row per configuration and, for each numerics, the geomean ratio
to PyTorch, the worst ratio with its configuration and implementation, the
count below 1.0x, and the count reaching 0.6 of the copy roofline; then
the configurations slower than PyTorch.

The library is libavgpool through the avgpool Python package:
AVGPOOL_LIBRARY names the built libavgpool.so; the package is imported
from PYTHONPATH or else from this repository's python/ folder.

usage: sweep.py [--seed S] [--count N] [--max-bytes 2G] [--json FILE] [--forced]
       sweep.py --dry-run ...           the configurations only (no GPU, no torch)
       sweep.py --summarize FILE.json   the table and summary of a saved run
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, ".."))  # bench/: sweeplib
sys.path.append(os.path.join(_HERE, "..", "..", "python"))  # the avgpool package, after PYTHONPATH

from avgpool import _lib  # noqa: E402
from sweeplib import driver, report  # noqa: E402

COLUMNS = report.columns(".4f", [
    ("torch ms", "torch_ms", ".4f", 9), ("vs torch f", "fast_vs_torch", ".2f", 10),
    ("vs torch p", "pytorch_vs_torch", ".2f", 10), ("roof f", "fast_of_roof", ".2f", 6),
    ("roof p", "pytorch_of_roof", ".2f", 6)])

# One unit in the last place at 1.0 for each dtype.
_ULP = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f64": 2.0 ** -52}


def fast_tolerance(cfg):
    """The fast numerics' bound for inputs in [-1, 1): one ulp of the dtype
    at the largest possible output plus the float32 summation error of a
    window (kh * kw terms)."""
    scale = cfg.kh * cfg.kw / cfg.divisor if cfg.divisor else 1.0
    return (_ULP[cfg.dtype] + cfg.kh * cfg.kw * 2.0 ** -24) * scale


def summary_lines(rows):
    ok = [r for r in rows if not r.get("error")]
    lines = [report.ratio_summary(ok, num, "torch", "PyTorch", "copy roofline") for num in report.NUMERICS]
    lines.append(f"checks: pytorch numerics bitwise equal to PyTorch in "
                 f"{sum(1 for r in ok if r['pytorch_bitwise'])}/{len(ok)}; fast numerics within the bound in "
                 f"{sum(1 for r in ok if r['fast_ok'])}/{len(ok)}"
                 + (f"; {len(rows) - len(ok)} configurations not measured" if len(rows) > len(ok) else ""))
    return lines


def print_summary(rows):
    """Prints the summary lines, then the configurations slower than
    PyTorch; returns the summary lines."""
    print()
    lines = summary_lines(rows)
    for line in lines:
        print(line)
    for num in report.NUMERICS:
        for line in report.loser_lines([r for r in rows if not r.get("error")], num, "torch", "PyTorch"):
            print(line)
    return lines


def main():
    parser = driver.parser(__doc__, 2 << 30, ("f32", "f16", "bf16", "f64"))
    parser.add_argument("--forced", action="store_true",
                        help="also time every CUDA implementation that accepts each configuration (the data "
                             "behind the AUTO policy; several times slower)")
    args = parser.parse_args()
    cfgs = driver.configurations_to_measure(args, COLUMNS, print_summary)
    if cfgs is None:
        return

    import torch
    from gpu_measure import copy_bandwidth, measure

    props = torch.cuda.get_device_properties(0)
    bw = copy_bandwidth()
    print(f"device: {props.name}, {props.multi_processor_count} SMs; torch {torch.__version__}; "
          f"library {_lib.library_path}; seed {args.seed}, {len(cfgs)} configurations; "
          f"copy {bw / 1e9:.0f} GB/s (read + write)", flush=True)
    print(report.table_header(COLUMNS), flush=True)
    meta = dict(device=props.name, torch=torch.__version__, seed=args.seed, count=len(cfgs), copy_GBps=bw / 1e9)
    rows = []
    for cfg in cfgs:
        row = measure(cfg, bw, fast_tolerance(cfg), args.forced)
        rows.append(row)
        print(report.row_line(row, COLUMNS), flush=True)
        if args.json:  # a run cut short keeps its rows
            driver.save(args.json, meta, rows, [])
    lines = print_summary(rows)
    if args.json:
        driver.save(args.json, meta, rows, lines)


if __name__ == "__main__":
    main()

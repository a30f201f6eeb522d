#!/usr/bin/env python3
"""Random-configuration sweep on the CPU: avgpool against oneDNN in the same
layout, the plain OpenMP loop, and the memory roofline, in one process.

The configurations are the GPU sweep's generator (bench/sweeplib/configs.py)
scaled to the CPU: inputs log-uniform from --min-bytes to --max-bytes
(default 1 MB to 256 MB), f32, f64, f16 and bf16, NCHW and NHWC. The
measuring program avgpool_sweep_cpu (bench/cpu/sweep_cpu.cpp) times, round
after round on the same input: a read pass, a copy, avgpool's CPU backend
under its AUTO policy in fast and pytorch numerics, oneDNN (where it has
the configuration: no divisor_override, no f64) and the plain loop.

Roofline: the input read at the same run's read-pass speed plus the output
written at the rate the copy writes: read_ms + (out_bytes / in_bytes) *
max(0, copy_ms - read_ms).

Prints a row per configuration and, for each numerics, the geomean ratio
to oneDNN, the worst ratio, the count below 1.0x and the count reaching
0.6 of the roofline; the same against the plain loop; then the
configurations slower than oneDNN.

AVGPOOL_LIBRARY names the built libavgpool.so; the measuring program is
looked for beside it (BUILD/bench/cpu/avgpool_sweep_cpu) unless --bin names it.

usage: sweep.py [--seed S] [--count N] [--max-bytes 256M] [--json FILE] [--bin PROGRAM]
       sweep.py --dry-run ...           the configurations only
       sweep.py --summarize FILE.json   the table and summary of a saved run
"""
import collections
import json
import os
import platform
import subprocess
import sys
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, ".."))  # bench/: sweeplib
sys.path.append(os.path.join(_HERE, "..", "..", "python"))  # the avgpool package, after PYTHONPATH

from avgpool import _lib  # noqa: E402
from sweeplib import driver, report  # noqa: E402

COLUMNS = report.columns(".3f", [
    ("dnnl ms", "dnnl_ms", ".3f", 9), ("loop ms", "loop_ms", ".3f", 9), ("vs dnnl f", "fast_vs_dnnl", ".2f", 9),
    ("vs dnnl p", "pytorch_vs_dnnl", ".2f", 9), ("vs loop f", "fast_vs_loop", ".2f", 9),
    ("roof f", "fast_of_roof", ".2f", 6), ("roof p", "pytorch_of_roof", ".2f", 6)])


def complete(row, result):
    """row (the configuration's) with the program's result and the ratios."""
    row.update(result)
    if row.get("error"):
        row["check"] = "error"
        return row
    row["roof_ms"] = row["read_ms"] + row["out_bytes"] / row["in_bytes"] * max(0.0, row["copy_ms"] - row["read_ms"])
    for num in report.NUMERICS:
        ms = row[f"{num}_ms"]
        row[f"{num}_vs_dnnl"] = row["dnnl_ms"] / ms if row.get("dnnl_ms") else None
        row[f"{num}_vs_loop"] = row["loop_ms"] / ms
        row[f"{num}_of_roof"] = row["roof_ms"] / ms
    row["check"] = "ok" if row["check_err"] <= row["check_tol"] else "DIFF"
    fast, exact = row["fast_impl"], row["pytorch_impl"]
    row["impls"] = fast if fast == exact else f"{fast} / {exact}"
    return row


def print_summary(rows):
    """Prints the summary lines, then the configurations slower than oneDNN;
    returns the summary lines."""
    ok = [r for r in rows if not r.get("error")]
    lines = []
    for num in report.NUMERICS:
        lines.append(report.ratio_summary(ok, num, "dnnl", "oneDNN", "memory roofline"))
        lines.append(report.ratio_summary(ok, num, "loop", "the plain loop", None))
    refusals = collections.Counter(r["dnnl_refusal"] for r in ok if r.get("dnnl_refusal"))
    if refusals:
        lines.append("without oneDNN: " + "; ".join(f"{n} {why}" for why, n in refusals.most_common()))
    lines.append(f"checks: fast numerics and the plain loop within the bound of pytorch numerics in "
                 f"{sum(1 for r in ok if r['check'] == 'ok')}/{len(ok)}"
                 + (f"; {len(rows) - len(ok)} configurations not measured" if len(rows) > len(ok) else ""))
    print()
    for line in lines:
        print(line)
    for num in report.NUMERICS:
        for line in report.loser_lines(ok, num, "dnnl", "oneDNN"):
            print(line)
    return lines


def main():
    p = driver.parser(__doc__, 256 << 20, ("f32", "f64", "f16", "bf16"))
    p.add_argument("--bin", help="the measuring program (default: beside the library)")
    p.add_argument("--budget-ms", type=float, default=600, help="time per contender per configuration")
    args = p.parse_args()
    cfgs = driver.configurations_to_measure(args, COLUMNS, print_summary)
    if cfgs is None:
        return
    program = args.bin or os.path.join(os.path.dirname(os.path.realpath(_lib.library_path)), "bench", "cpu",
                                       "avgpool_sweep_cpu")
    print(f"host: {platform.node()}, {os.cpu_count()} CPUs; library {_lib.library_path}; program {program}; "
          f"seed {args.seed}, {len(cfgs)} configurations", flush=True)
    print(report.table_header(COLUMNS), flush=True)
    proc = subprocess.Popen([program, "--budget-ms", str(args.budget_ms)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)

    def feed():  # from a thread: the program's output must be read while it reads
        proc.stdin.write("".join(c.line() + "\n" for c in cfgs))
        proc.stdin.close()
    threading.Thread(target=feed, daemon=True).start()
    rows = []
    for cfg, line in zip(cfgs, proc.stdout):
        row = dict(label=cfg.label(), config=cfg.to_dict(), in_bytes=cfg.in_bytes, out_bytes=cfg.out_bytes,
                   in_mb=cfg.in_bytes / (1 << 20))
        rows.append(complete(row, json.loads(line)))
        print(report.row_line(row, COLUMNS), flush=True)
    if proc.wait() != 0 or len(rows) != len(cfgs):
        raise SystemExit(f"{program} stopped after {len(rows)} of {len(cfgs)} configurations (exit {proc.returncode})")
    lines = print_summary(rows)
    if args.json:
        driver.save(args.json, dict(host=platform.node(), cpus=os.cpu_count(), seed=args.seed, count=len(cfgs)),
                    rows, lines)


if __name__ == "__main__":
    main()

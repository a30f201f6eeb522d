"""The command line both sweeps share: options, --dry-run (the
configurations, no measurement), --summarize (the summary of a saved JSON),
and the JSON file."""
import argparse
import json
import re
import time

from . import configs, report

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text):
    """"256M", "2G", "1048576" -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 256M, 2G)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def parser(doc, default_max_bytes, default_dtypes):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    p.add_argument("--count", type=int, default=100, help="configurations (default 100)")
    p.add_argument("--min-bytes", type=byte_size, default=1 << 20, help="smallest input tensor (default 1M)")
    p.add_argument("--max-bytes", type=byte_size, default=default_max_bytes,
                   help=f"largest input tensor (default {default_max_bytes >> 20}M)")
    p.add_argument("--dtypes", default=",".join(default_dtypes),
                   help=f"comma-separated, of {','.join(configs.DTYPES)} (default {','.join(default_dtypes)})")
    p.add_argument("--json", metavar="FILE", help="write every row and the summary to FILE")
    p.add_argument("--dry-run", action="store_true", help="print the configurations only")
    p.add_argument("--summarize", metavar="FILE", help="print the table and summary of a saved JSON and exit")
    return p


def generate(args):
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    unknown = [d for d in dtypes if d not in configs.DTYPES]
    if unknown:
        raise SystemExit(f"unknown dtypes {unknown}: choose from {list(configs.DTYPES)}")
    return configs.generate(args.seed, args.count, args.min_bytes, args.max_bytes, dtypes)


def print_configs(cfgs):
    print(f"{'#':>4} {'configuration':52} {'MB in':>9} {'out plane':>11}")
    for i, c in enumerate(cfgs):
        print(f"{i:4d} {c.label():52} {c.in_bytes / (1 << 20):9.2f} {f'{c.oh}x{c.ow}':>11}")


def load(path):
    with open(path) as f:
        return json.load(f)


def save(path, meta, rows, summary):
    with open(path, "w") as f:
        json.dump(dict(meta, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), summary=summary,
                       rows=rows), f, indent=1)


def configurations_to_measure(args, columns, print_summary):
    """The configurations to measure, or None when the command was
    --summarize (the saved run's table and summary printed) or --dry-run
    (the configurations printed)."""
    if args.summarize:
        rows = load(args.summarize)["rows"]
        print(report.table_header(columns))
        for r in rows:
            print(report.row_line(r, columns))
        print_summary(rows)
        return None
    cfgs = generate(args)
    if args.dry_run:
        print_configs(cfgs)
        return None
    return cfgs

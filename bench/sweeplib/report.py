"""Rows of a sweep: the per-configuration table and the summary lines.

A row is a dict holding the configuration's label and bytes, and for each
numerics ("fast", "pytorch") the keys NUM_impl, NUM_ms, NUM_vs_ANCHOR
(anchor_ms / NUM_ms: above 1 is faster than the anchor) and NUM_of_roof
(roofline_ms / NUM_ms). A value of None is a measurement that could not be
made (the anchor refuses the configuration, say); such rows are left out of
that figure and counted.
"""
import math

NUMERICS = ("fast", "pytorch")
BIG_BYTES = 64 << 20  # "large" tensors: beyond the H200's 60 MB L2


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _fmt(value, spec):
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return format(value, spec)


def columns(ms_spec, anchors):
    """A sweep's table: the configuration, its size, ours in each numerics
    (ms, ms_spec), then anchors (header, key, format spec, width; negative
    widths left-align), then the check and the implementations."""
    return ([("configuration", "label", "", -50), ("MB", "in_mb", ".1f", 7),
             ("fast ms", "fast_ms", ms_spec, 9), ("pyt ms", "pytorch_ms", ms_spec, 9)] + list(anchors)
            + [("check", "check", "", 5), (" impl (fast / pytorch when different)", "impls", "", -30)])


def table_header(columns):
    """columns: (header, key, format spec, width) tuples."""
    return " ".join(h.rjust(w) if w > 0 else h.ljust(-w) for h, _, _, w in columns)


def table_line(row, columns):
    cells = []
    for _, key, spec, w in columns:
        s = _fmt(row.get(key), spec)
        cells.append(s.rjust(w) if w > 0 else s.ljust(-w))
    return " ".join(cells)


def row_line(row, columns):
    """The table line of row, its error (if any) after it."""
    return table_line(row, columns) + (f"  ERROR {row['error']}" if row.get("error") else "")


def ratio_summary(rows, numerics, anchor, anchor_name, roof_name, roof_threshold=0.6):
    """The summary line of one numerics against one anchor: geomean, the
    worst ratio with its configuration and implementation, how many are
    below 1.0x, and (unless roof_name is None) how many reach roof_threshold
    of the roofline (all, and those of BIG_BYTES or more)."""
    key = f"{numerics}_vs_{anchor}"
    measured = [r for r in rows if r.get(key) is not None]
    missing = len(rows) - len(measured)
    if not measured:
        return f"{numerics} numerics vs {anchor_name}: no configuration measured"
    ratios = [r[key] for r in measured]
    worst = min(measured, key=lambda r: r[key])
    below = sum(1 for v in ratios if v < 1.0)
    line = (f"{numerics} numerics vs {anchor_name}: geomean {geomean(ratios):.2f}x over {len(measured)} configs"
            f"{f' ({missing} without {anchor_name})' if missing else ''}; worst {worst[key]:.2f}x "
            f"({worst['label']}, {worst[f'{numerics}_impl']}); {below} below 1.0x")
    if roof_name is None:
        return line
    roof = [r for r in rows if r.get(f"{numerics}_of_roof") is not None]
    big = [r for r in roof if r["in_bytes"] >= BIG_BYTES]

    def reach(rs):
        return sum(1 for r in rs if r[f"{numerics}_of_roof"] >= roof_threshold)
    line += (f"; {reach(roof)}/{len(roof)} reach {roof_threshold} of the {roof_name}"
             f" ({reach(big)}/{len(big)} of those of {BIG_BYTES >> 20} MB or more)")
    return line


def losers(rows, numerics, anchor, limit=1.0):
    """Rows slower than the anchor (ratio below limit), worst first."""
    key = f"{numerics}_vs_{anchor}"
    return sorted((r for r in rows if r.get(key) is not None and r[key] < limit), key=lambda r: r[key])


def loser_lines(rows, numerics, anchor, anchor_name, worst_count=5):
    """One line per configuration below 1.0x the anchor (or, when there is
    none, the worst_count slowest), with its implementation."""
    key = f"{numerics}_vs_{anchor}"
    chosen = losers(rows, numerics, anchor)
    title = f"{numerics} numerics, below 1.0x {anchor_name}"
    if not chosen:
        chosen = sorted((r for r in rows if r.get(key) is not None), key=lambda r: r[key])[:worst_count]
        title = f"{numerics} numerics, none below 1.0x {anchor_name}; the {len(chosen)} slowest"
    out = [title + ":"]
    for r in chosen:
        out.append(f"  {r[key]:5.2f}x  {r['label']}  ({r['in_bytes'] / (1 << 20):.1f} MB)  {r[f'{numerics}_impl']}")
    return out

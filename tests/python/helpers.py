"""Shared by the Python tests: PyTorch's golden files (tests/data/README.md
gives the format), an independent numpy model of PyTorch's forward rule, and
the comparison rules of the two numerics."""
import functools
import math
import pathlib

import numpy as np

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
FORWARD_GOLDEN = DATA / "pytorch_avgpool2d.golden"
BACKWARD_GOLDEN = DATA / "pytorch_avgpool2d_backward.golden"

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 numpy arrays need ml_dtypes
    ml_dtypes = None
    BF16 = None


class Case:
    """One golden case; params are PyTorch's arguments as the library reads them."""

    def __init__(self, name):
        self.name = name
        self.arrays = {}

    def kwargs(self):
        kh, kw, sh, sw, ph, pw, ceil, incl, div = self.params
        return dict(kernel_size=(kh, kw), stride=(sh, sw), padding=(ph, pw), ceil_mode=bool(ceil),
                    count_include_pad=bool(incl), divisor_override=div or None)

    def __repr__(self):
        return f"Case({self.name}, shape={self.shape}, params={self.params})"


def _parse(path, value_keys):
    tokens = path.read_text().split("\n")
    words = []
    for line in tokens:
        if not line.startswith("#"):
            words.extend(line.split())
    cases, rejected = [], []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "case":
            case = Case(words[i + 1])
            i += 2
            while words[i] != "end":
                key = words[i]
                if key == "shape":
                    case.shape = tuple(int(v) for v in words[i + 1:i + 5])
                    i += 5
                elif key == "params":
                    case.params = tuple(int(v) for v in words[i + 1:i + 10])
                    i += 10
                elif key in ("in", "gout"):
                    count = int(words[i + 1])
                    case.arrays[key] = np.array(words[i + 2:i + 2 + count], dtype=np.float64).astype(np.float32)
                    i += 2 + count
                elif key in ("out", "gin"):
                    dims = tuple(int(v) for v in words[i + 1:i + 5])
                    count = math.prod(dims)
                    setattr(case, key + "_dims", dims)
                    case.arrays[key] = np.array(words[i + 5:i + 5 + count], dtype=np.float64).reshape(dims)
                    i += 5 + count
                elif key in value_keys:
                    count = case.arrays[value_keys[key]].size
                    case.arrays[key] = np.array(words[i + 1:i + 1 + count], dtype=np.float64)
                    i += 1 + count
                else:
                    raise ValueError(f"{path}: unexpected token {key!r} in case {case.name}")
            cases.append(case)
            i += 1
        elif w == "rejected":
            rejected.append(tuple(int(v) for v in words[i + 1:i + 12]))
            i += 12
        else:
            raise ValueError(f"{path}: unexpected token {w!r}")
    return cases, rejected


@functools.lru_cache(maxsize=None)
def forward_golden():
    cases, rejected = _parse(FORWARD_GOLDEN, {"out32": "out"})
    for c in cases:
        c.input = c.arrays["in"].reshape(c.shape)
        c.out = c.arrays["out"]
        c.out32 = c.arrays["out32"].astype(np.float32).reshape(c.out_dims)
    return cases, rejected


@functools.lru_cache(maxsize=None)
def backward_golden():
    cases, _ = _parse(BACKWARD_GOLDEN, {"gin32": "gin", "gin16": "gin", "ginbf16": "gin"})
    for c in cases:
        c.gin = c.arrays["gin"]
        c.gin32 = c.arrays["gin32"].astype(np.float32).reshape(c.shape)
        c.gin16 = c.arrays["gin16"].astype(np.float16).reshape(c.shape)
        c.ginbf16 = c.arrays["ginbf16"].reshape(c.shape)
        kh, kw, sh, sw, ph, pw, ceil = c.params[:7]
        c.out_dims = c.shape[:2] + (_axis(c.shape[2], kh, sh, ph, ceil)[0], _axis(c.shape[3], kw, sw, pw, ceil)[0])
    return cases


# ---- an independent model of PyTorch's forward ------------------------------------------
def _axis(size, k, s, p, ceil):
    if ceil:
        o = (size + 2 * p - k + s - 1) // s + 1
        if (o - 1) * s >= size + p:
            o -= 1
    else:
        o = (size + 2 * p - k) // s + 1
    start = np.arange(o) * s - p
    end = np.minimum(start + k, size + p)
    pool = end - start
    lo, hi = np.maximum(start, 0), np.minimum(end, size)
    return o, start, lo, hi, pool


def pool_model(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, acc=np.float32):
    """PyTorch's average pooling of x (N, C, H, W), summed in acc in
    PyTorch's order (window rows, then columns, in order) with one true
    division: float32 for float32/float16/bfloat16 inputs gives PyTorch's
    values once rounded to the input's type; float64 the float64 result."""
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    with np.errstate(all="ignore"):
        return _pool_model(x, kh, kw, sh, sw, ph, pw, ceil_mode, count_include_pad, divisor_override, acc)


def _pool_model(x, kh, kw, sh, sw, ph, pw, ceil_mode, count_include_pad, divisor_override, acc):
    _, _, h, w = x.shape
    oh, hs, hlo, hhi, hpool = _axis(h, kh, sh, ph, ceil_mode)
    ow, ws, wlo, whi, wpool = _axis(w, kw, sw, pw, ceil_mode)
    xa = x.astype(acc)
    total = np.zeros(x.shape[:2] + (oh, ow), dtype=acc)
    for i in range(kh):
        rows = hs + i
        rmask = (rows >= hlo) & (rows < hhi)
        ridx = np.clip(rows, 0, h - 1)
        for j in range(kw):
            cols = ws + j
            cmask = (cols >= wlo) & (cols < whi)
            cidx = np.clip(cols, 0, w - 1)
            mask = rmask[:, None] & cmask[None, :]
            if mask.any():
                vals = xa[:, :, ridx[:, None], cidx[None, :]]
                total = np.where(mask, total + vals, total).astype(acc)
    if divisor_override:
        div = np.full((oh, ow), divisor_override)
    elif count_include_pad:
        div = hpool[:, None] * wpool[None, :]
    else:
        div = (hhi - hlo)[:, None] * (whi - wlo)[None, :]
    return (total / div.astype(acc)).astype(acc)


# ---- comparisons -------------------------------------------------------------------------------
_DIGITS = {np.dtype(np.float64): (53, -1022), np.dtype(np.float32): (24, -126), np.dtype(np.float16): (11, -14)}


def ulp(dtype, v):
    """The spacing of dtype's numbers at |v| (elementwise, as float64)."""
    digits, min_exp = _DIGITS.get(np.dtype(dtype), (8, -126))  # bfloat16
    _, e = np.frexp(np.abs(np.asarray(v, dtype=np.float64)))
    e = np.maximum(e, min_exp + 1)
    return np.ldexp(1.0, e - digits)


def bitwise_mismatches(got, want):
    """Positions where got and want (same dtype) differ bitwise; NaN matches NaN."""
    got = np.ascontiguousarray(got)
    want = np.ascontiguousarray(want).astype(got.dtype)
    gb = got.view(np.uint8).reshape(got.shape + (-1,))
    wb = want.view(np.uint8).reshape(want.shape + (-1,))
    differ = (gb != wb).any(axis=-1)
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    return np.argwhere(differ & ~both_nan)


def within_bound(got, exact, terms, scale, dtype):
    """|got - exact| <= ulp(dtype, exact) + terms * 2^-24 * scale elementwise
    (the float32 summation bound for any order of `terms` terms whose
    absolute values sum to scale); NaN and Inf exactly where exact has
    them. Returns the failing positions."""
    g = np.asarray(got, dtype=np.float64)
    e = np.asarray(exact, dtype=np.float64)
    special = ~np.isfinite(e) | ~np.isfinite(g)
    special_bad = special & ~((g == e) | (np.isnan(g) & np.isnan(e)))
    bound = ulp(dtype, e) + terms * 2.0 ** -24 * np.asarray(scale, dtype=np.float64) * 1.0001
    with np.errstate(invalid="ignore"):
        finite_bad = ~special & ~(np.abs(g - e) <= bound)
    return np.argwhere(special_bad | finite_bad)


def nhwc(a):
    """The same values in a dense NHWC buffer, seen as N, C, H, W."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)

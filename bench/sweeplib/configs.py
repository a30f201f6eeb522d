"""Seeded random pooling configurations, legal for PyTorch.

Each draw picks a tensor size log-uniform between min_bytes and max_bytes,
a plane of 7 to 2048 per side (log-uniform, square or not, odd sizes
included), 1 to 1024 channels (log-uniform) and the batch that brings the
tensor to the drawn size; kernels 1 to 11 per side (square or not), strides
1 to kernel + 2 per side (often equal to the kernel), paddings 0 to
kernel / 2, ceil_mode, count_include_pad, sometimes a divisor_override;
a dtype and a layout. Legality is the library's: a draw whose plan the
library refuses as an invalid argument (output below 1, PyTorch's ceil_mode
last-window rule, padding above kernel / 2, ...) is drawn again. The same
seed gives the same configurations on every machine.
"""
import dataclasses
import math
import random

from avgpool import _lib

DTYPES = {"f32": _lib.DTYPE_F32, "f16": _lib.DTYPE_F16, "bf16": _lib.DTYPE_BF16, "f64": _lib.DTYPE_F64}
LAYOUTS = {"nchw": _lib.LAYOUT_NCHW, "nhwc": _lib.LAYOUT_NHWC}
MB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Config:
    n: int
    c: int
    h: int
    w: int
    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    ceil: bool
    include_pad: bool
    divisor: int  # 0: none
    dtype: str  # a key of DTYPES
    layout: str  # a key of LAYOUTS
    oh: int = 0  # output plane, from the library
    ow: int = 0

    @property
    def element_size(self):
        return _lib.ELEMENT_SIZE[DTYPES[self.dtype]]

    @property
    def in_bytes(self):
        return self.n * self.c * self.h * self.w * self.element_size

    @property
    def out_bytes(self):
        return self.n * self.c * self.oh * self.ow * self.element_size

    def params(self, backend, numerics):
        """The library's avgpool_params for this configuration."""
        return _lib.make_params((self.n, self.c, self.h, self.w), (self.kh, self.kw), (self.sh, self.sw),
                                (self.ph, self.pw), self.ceil, self.include_pad, self.divisor or None,
                                DTYPES[self.dtype], LAYOUTS[self.layout], backend, numerics)

    def label(self):
        """E.g. "32x16x127x128 k5x3 s5 p2x1 ceil excl d7 f32 nchw"."""
        def pair(a, b):
            return str(a) if a == b else f"{a}x{b}"
        parts = [f"{self.n}x{self.c}x{self.h}x{self.w}", "k" + pair(self.kh, self.kw),
                 "s" + pair(self.sh, self.sw), "p" + pair(self.ph, self.pw)]
        if self.ceil:
            parts.append("ceil")
        if not self.include_pad:
            parts.append("excl")
        if self.divisor:
            parts.append(f"d{self.divisor}")
        return " ".join(parts + [self.dtype, self.layout])

    def line(self):
        """One line of key=value fields: the CPU sweep program's input."""
        return " ".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in dataclasses.asdict(self).items())

    def to_dict(self):
        return dataclasses.asdict(self)


def _log_uniform_int(rng, lo, hi):
    return min(hi, max(lo, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))))


def _draw(rng, min_bytes, max_bytes, dtypes, layouts):
    dtype = rng.choice(dtypes)
    esize = _lib.ELEMENT_SIZE[DTYPES[dtype]]
    target = math.exp(rng.uniform(math.log(min_bytes), math.log(max_bytes)))
    h = _log_uniform_int(rng, 7, 2048)
    w = h if rng.random() < 0.4 else _log_uniform_int(rng, 7, 2048)
    c = _log_uniform_int(rng, 1, 1024)
    if c * h * w * esize > target:  # one item is already too large: fewer channels
        c = max(1, int(target // (h * w * esize)))
    n = max(1, int(round(target / (c * h * w * esize))))
    kh = rng.randint(1, 11)
    kw = kh if rng.random() < 0.6 else rng.randint(1, 11)

    def stride(k):
        return k if rng.random() < 0.35 else rng.randint(1, k + 2)
    sh = stride(kh)
    sw = sh if kh == kw and rng.random() < 0.6 else stride(kw)
    if rng.random() < 0.45:
        ph = pw = 0
    else:
        ph = rng.randint(0, kh // 2)
        pw = min(ph, kw // 2) if rng.random() < 0.5 else rng.randint(0, kw // 2)
    divisor = rng.randint(1, kh * kw) if rng.random() < 0.15 else 0
    return Config(n=n, c=c, h=h, w=w, kh=kh, kw=kw, sh=sh, sw=sw, ph=ph, pw=pw, ceil=rng.random() < 0.35,
                  include_pad=rng.random() < 0.5, divisor=divisor, dtype=dtype, layout=rng.choice(layouts))


def legal(cfg):
    """cfg with its output plane filled in when the library accepts it (the
    reference backend: every valid problem), None when it refuses it as an
    invalid argument."""
    try:
        plan = _lib.Plan(cfg.params(_lib.BACKEND_REFERENCE, _lib.NUMERICS_PYTORCH))
    except _lib.InvalidArgumentError:
        return None
    return dataclasses.replace(cfg, oh=plan.out_dims[2], ow=plan.out_dims[3])


def generate(seed, count, min_bytes, max_bytes, dtypes=tuple(DTYPES), layouts=tuple(LAYOUTS)):
    """count legal configurations from seed, input tensors within
    [min_bytes, max_bytes]."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        cfg = _draw(rng, min_bytes, max_bytes, list(dtypes), list(layouts))
        if not min_bytes <= cfg.in_bytes <= max_bytes:
            continue
        cfg = legal(cfg)
        if cfg is not None:
            out.append(cfg)
    return out

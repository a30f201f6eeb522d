"""One sweep configuration on the GPU: avgpool (CUDA backend, AUTO, fast and
pytorch numerics) and torch.nn.functional.avg_pool2d on the same input,
checked and timed in the same process; and the copy bandwidth behind the
roofline."""
import torch
import torch.nn.functional as F

from avgpool import _lib
from torch_util import bitwise_equal, max_abs_diff, time_queued

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64}
_NUMERICS = (("fast", _lib.NUMERICS_FAST), ("pytorch", _lib.NUMERICS_PYTORCH))


_DTYPE_CODES = {torch.float32: _lib.DTYPE_F32, torch.float16: _lib.DTYPE_F16, torch.bfloat16: _lib.DTYPE_BF16,
                torch.float64: _lib.DTYPE_F64}


def cuda_plan(shape, kernel, stride, padding, ceil_mode, count_include_pad, dtype, channels_last, numerics,
              impl=None):
    """The library's CUDA plan for a problem given as avg_pool2d takes it
    (kernel, stride, padding as pairs; a torch dtype), its forward forced to
    implementation `impl` if given; raises the package's AvgpoolError when
    the library refuses it."""
    return _lib.Plan(_lib.make_params(shape, kernel, stride, padding, ceil_mode, count_include_pad, None,
                                      _DTYPE_CODES[dtype], _lib.LAYOUT_NHWC if channels_last else _lib.LAYOUT_NCHW,
                                      _lib.BACKEND_CUDA, numerics), forward_impl=impl)


def plan_runner(plan, src, dst, backward=False):
    """A function that runs plan (forward, or backward) from tensor src into
    tensor dst on the current stream."""
    run = plan.backward if backward else plan.execute
    s, d, stream = src.data_ptr(), dst.data_ptr(), torch.cuda.current_stream().cuda_stream
    return lambda: run(s, d, stream)


def copy_bandwidth(nbytes=2 << 30):
    """Bytes read + written per second by a device-to-device copy of nbytes."""
    x = torch.empty(nbytes // 4, dtype=torch.float32, device="cuda").uniform_()
    y = torch.empty_like(x)
    ms = time_queued(lambda: y.copy_(x), reps=5)
    del x, y
    torch.cuda.empty_cache()
    return 2 * nbytes / (ms * 1e-3)


def measure(cfg, copy_bw, fast_tolerance, forced=False):
    """The row of cfg (see bench/sweeplib/report.py); a failure of PyTorch or
    of the library (out of memory, a refused plan) is the row's "error".
    With forced, also every CUDA forward implementation that accepts the
    problem, in each numerics, checked and timed: row["forced"][numerics]
    maps its name to ms (or "DIFF" when its output failed the check)."""
    row = dict(label=cfg.label(), config=cfg.to_dict(), in_bytes=cfg.in_bytes, out_bytes=cfg.out_bytes,
               in_mb=cfg.in_bytes / (1 << 20), roof_ms=(cfg.in_bytes + cfg.out_bytes) / copy_bw * 1e3)
    try:
        _measure(cfg, row, fast_tolerance, forced)
    except (RuntimeError, ValueError) as e:
        row["error"] = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        row["check"] = "error"
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return row


def _cuda_forward_impls():
    return [name for name in _lib.impl_names("forward") if name.startswith("cuda:")]


def _run(plan, out, src, dst, stream):
    """One execution of plan into out, pre-filled with NaN so that an element
    left unwritten fails the check."""
    out.fill_(float("nan"))
    plan.execute(src, dst, stream)


def _time(plan, src, dst, stream):
    execute = plan.execute
    return time_queued(lambda: execute(src, dst, stream))


def _measure_forced(cfg, row, fast_tolerance, src, dst, out, ref, stream):
    row["forced"] = {}
    for name, numerics in _NUMERICS:
        times = row["forced"][name] = {}
        for impl in _cuda_forward_impls():
            try:
                plan = _lib.Plan(cfg.params(_lib.BACKEND_CUDA, numerics), forward_impl=impl)
            except _lib.AvgpoolError:
                continue  # declined
            _run(plan, out, src, dst, stream)
            ok = bitwise_equal(out, ref) if name == "pytorch" else max_abs_diff(out, ref) <= fast_tolerance
            times[impl] = _time(plan, src, dst, stream) if ok else "DIFF"


def _measure(cfg, row, fast_tolerance, forced=False):
    dt = TORCH_DTYPES[cfg.dtype]
    fmt = torch.channels_last if cfg.layout == "nhwc" else torch.contiguous_format
    x = torch.empty((cfg.n, cfg.c, cfg.h, cfg.w), dtype=dt, device="cuda", memory_format=fmt).uniform_(-1, 1)
    pool = ((cfg.kh, cfg.kw), (cfg.sh, cfg.sw), (cfg.ph, cfg.pw), cfg.ceil, cfg.include_pad, cfg.divisor or None)
    # The reference: PyTorch on the NCHW-contiguous input (its channels_last
    # kernel has been wrong with padding).
    ref = F.avg_pool2d(x.contiguous(), *pool)
    out_dims = (cfg.n, cfg.c, cfg.oh, cfg.ow)
    if tuple(ref.shape) != out_dims:
        raise RuntimeError(f"PyTorch's output is {tuple(ref.shape)}, the library's {out_dims}")
    out = torch.empty(out_dims, dtype=dt, device="cuda", memory_format=fmt)
    src, dst, stream = x.data_ptr(), out.data_ptr(), torch.cuda.current_stream().cuda_stream
    for name, numerics in _NUMERICS:
        plan = _lib.Plan(cfg.params(_lib.BACKEND_CUDA, numerics))
        row[f"{name}_impl"] = plan.impl_name
        _run(plan, out, src, dst, stream)
        if name == "pytorch":
            row["pytorch_bitwise"] = bitwise_equal(out, ref)
        else:
            row["fast_max_err"] = max_abs_diff(out, ref)
            row["fast_ok"] = row["fast_max_err"] <= fast_tolerance
        row[f"{name}_ms"] = _time(plan, src, dst, stream)
    row["torch_ms"] = time_queued(lambda: F.avg_pool2d(x, *pool))
    if forced:
        _measure_forced(cfg, row, fast_tolerance, src, dst, out, ref, stream)
    for name, _ in _NUMERICS:
        row[f"{name}_vs_torch"] = row["torch_ms"] / row[f"{name}_ms"]
        row[f"{name}_of_roof"] = row["roof_ms"] / row[f"{name}_ms"]
    row["check"] = "ok" if row["pytorch_bitwise"] and row["fast_ok"] else "DIFF"
    fast, exact = row["fast_impl"], row["pytorch_impl"]
    row["impls"] = fast if fast == exact else f"{fast} / {exact}"

"""avgpool: 2-D average pooling with PyTorch's exact nn.AvgPool2d semantics.

``avg_pool2d`` and ``avg_pool2d_backward`` take numpy arrays (host memory:
the CPU backend, or the reference) and torch tensors (CPU or CUDA, on the
tensor's device and torch's current stream), and return the same kind of
array. ``avgpool.torch`` has the ``AvgPool2d`` module and the custom
operator behind it (imported on first use: ``import avgpool`` does not
import torch).

The library is libavgpool, called through its stable C API with ctypes;
the package holds its own copy, and $AVGPOOL_LIBRARY names another.
"""
import sys as _sys

from . import _core, _lib, _numpy
from ._lib import (AvgpoolError, BackendUnavailableError, DeviceError, InternalError, InvalidArgumentError,
                   OutOfMemoryError, UnsupportedError, library_path, library_version)

__version__ = _lib.avgpool_version_string().decode()

__all__ = [
    "avg_pool2d", "avg_pool2d_backward", "AvgpoolError", "InvalidArgumentError", "UnsupportedError",
    "OutOfMemoryError", "BackendUnavailableError", "DeviceError", "InternalError", "library_path",
    "library_version", "backends", "impl_names", "plan_cache_info", "clear_plan_cache",
    "set_plan_cache_capacity", "__version__",
]


def _torch_api(x):
    """avgpool.torch when x is a torch tensor (torch is then imported)."""
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        from . import torch as api
        return api
    return None


def avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, numerics="fast", backend="auto", out=None):
    """2-D average pooling, as ``torch.nn.functional.avg_pool2d``.

    x: a numpy array or a torch tensor, (N, C, H, W) or unbatched (C, H, W);
    float32, float64, float16 or bfloat16. NCHW-contiguous and channels-last
    (dense NHWC seen as N, C, H, W) inputs are used as they are and give a
    result of the same layout; other strides are copied first.
    kernel_size, stride, padding: an int or a pair (stride None = kernel).
    divisor_override: None, or the divisor of every window.
    numerics: "fast" (the fastest result within the float32 summation
    bound) or "pytorch" (bitwise what PyTorch returns).
    backend: "auto" (CPU for host memory, CUDA for CUDA tensors), "cpu",
    "reference" (the spec in code, host memory) or "cuda".
    out: a numpy array to write the result into (same shape, dtype and
    layout as the result); left untouched when the call fails.

    Bad arguments raise ValueError (InvalidArgumentError carries the
    library's message, e.g. "padding_h (2) must be at most kernel_h / 2
    (1)") or TypeError; other failures raise RuntimeError subclasses.
    """
    args = _core.pool_args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    api = _torch_api(x)
    if api is not None:
        return api._avg_pool2d_normalized(x, args, numerics, backend, out)
    return _numpy.avg_pool2d(x, args, numerics, backend, out)


def avg_pool2d_backward(grad_output, input_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
                        count_include_pad=True, divisor_override=None, *, numerics="fast", backend="auto",
                        out=None):
    """The gradient of ``avg_pool2d`` with respect to its input: grad_input
    of shape ``input_shape`` from grad_output (the pooling's output shape),
    same parameters and conventions as ``avg_pool2d``. Elements no window
    covers are 0. In "pytorch" numerics the result is bitwise PyTorch's
    (float16/bfloat16: PyTorch's CUDA kernel, on every device)."""
    args = _core.pool_args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    api = _torch_api(grad_output)
    if api is not None:
        return api._avg_pool2d_backward_normalized(grad_output, input_shape, args, numerics, backend, out)
    return _numpy.avg_pool2d_backward(grad_output, input_shape, args, numerics, backend, out)


def __getattr__(name):
    # avgpool.torch on first use, as if imported: torch is imported only then.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'avgpool' has no attribute {name!r}")


def backends():
    """The backends compiled into the loaded library: a subset of
    ("cuda", "cpu", "reference"). "cuda" being there says nothing about a
    usable device."""
    found = []
    for name in _lib.impl_names():
        b = name.split(":", 1)[0] if ":" in name else "reference"
        if b not in found:
            found.append(b)
    return tuple(found)


def impl_names(direction=None):
    """Every implementation compiled in, in dispatch order; direction
    "forward" or "backward" filters. Names are for diagnostics and tests."""
    return _lib.impl_names(direction)


def plan_cache_info():
    """(hits, misses, size, capacity) of the plan cache."""
    return _core.cache.info()


def clear_plan_cache():
    """Drops every cached plan (each is destroyed once no call uses it)."""
    _core.cache.clear()


def set_plan_cache_capacity(capacity):
    """At most ``capacity`` plans are kept (least recently used dropped
    first); 0 turns caching off. The default is 256."""
    _core.cache.set_capacity(capacity)

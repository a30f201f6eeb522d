"""PyTorch integration: ``AvgPool2d`` (torch.nn.AvgPool2d's constructor
plus ``numerics=``), the functional ``avg_pool2d`` and
``avg_pool2d_backward``, and the custom operators behind them,
``torch.ops.avgpool.avg_pool2d`` and ``torch.ops.avgpool.avg_pool2d_backward``.

The operators have fake (meta) implementations, so torch.compile traces
them without graph breaks, and autograd formulas: the forward's gradient is
the backward operator, whose own gradient is the forward (average pooling
is linear), so gradients of any order work.

CPU tensors run on the CPU backend (or the reference), CUDA tensors on the
CUDA backend, on the tensor's device and torch's current stream there.
Outputs follow PyTorch's memory format rule: channels_last when the input's
strides are channels_last-like (``suggest_memory_format``), else
contiguous; other inputs are made contiguous in that format first.
"""
from typing import List, Optional

import torch

from . import _core, _lib

__all__ = ["AvgPool2d", "avg_pool2d", "avg_pool2d_backward"]

_DTYPES = {torch.float32: _lib.DTYPE_F32, torch.float16: _lib.DTYPE_F16, torch.bfloat16: _lib.DTYPE_BF16,
           torch.float64: _lib.DTYPE_F64}


def _dtype_code(dtype):
    code = _DTYPES.get(dtype)
    if code is None:
        raise TypeError(f"avg_pool2d: unsupported dtype {dtype}: float32, float64, float16 and bfloat16 "
                        "tensors are supported")
    return code


def _memory_format(t):
    if t.dim() == 4 and _core.channels_last_strides(t.shape, t.stride()):
        return torch.channels_last
    return torch.contiguous_format


def _device_backend(device, backend, what="input"):
    """(backend code, device index or -1) for a tensor on device."""
    code = _core.backend_code(backend)
    if device.type == "cuda":
        if code in (_lib.BACKEND_AUTO, _lib.BACKEND_CUDA):
            return _lib.BACKEND_CUDA, device.index
        raise ValueError(f"avg_pool2d: backend {backend!r} runs on host memory, but the {what} is on {device}")
    if device.type in ("cpu", "meta"):
        if code == _lib.BACKEND_CUDA:
            raise ValueError(f"avg_pool2d: backend 'cuda' needs a CUDA tensor, but the {what} is on {device}")
        return (_lib.BACKEND_CPU if code == _lib.BACKEND_AUTO else code), -1
    raise ValueError(f"avg_pool2d: avgpool runs on CPU and CUDA tensors, not on {device}")


def _check_input(t, what="input"):
    if t.dim() not in (3, 4):
        raise ValueError(f"avg_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) {what}, "
                         f"got shape {tuple(t.shape)}")
    return _dtype_code(t.dtype)


if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _raw_stream = torch._C._cuda_getCurrentRawStream  # the cudaStream_t as an int, no Stream object
else:
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _device_guard(index):
    # A CUDA plan binds to the device current when it is created.
    if index < 0:
        return None
    return lambda: torch.cuda.device(index)


def _plan(in_dims, args, dtype, layout, backend, numerics, index):
    return _core.get_plan(in_dims, args, dtype, layout, backend, numerics, index, _device_guard(index))


def _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    return (tuple(kernel_size), tuple(stride), tuple(padding), ceil_mode, count_include_pad, divisor_override)


def _is_concrete(values):
    return all(isinstance(v, int) for v in values)


def _output_dims(in_dims, args, dtype, layout, numerics):
    """Output (N, C, Ho, Wo) for the fake implementations: the library's
    answer (with its validation) when sizes and parameters are numbers,
    PyTorch's formula when any is symbolic (torch.compile's dynamic shapes)."""
    kernel, stride, padding, ceil_mode, _, divisor = args
    pool_ints = kernel + stride + padding + (() if divisor is None else (divisor,))
    if _is_concrete(pool_ints):
        if _is_concrete(in_dims):
            params = _lib.make_params(in_dims, *args, dtype, layout, _lib.BACKEND_REFERENCE, numerics)
            return _lib.Plan(params).out_dims
        # The parameters alone (not the sizes) are checked by the library on
        # a problem that holds one window.
        probe = _lib.make_params((1, 1, max(kernel[0], 1), max(kernel[1], 1)), *args, dtype, layout,
                                 _lib.BACKEND_REFERENCE, numerics)
        _lib.Plan(probe)
    n, c, h, w = in_dims
    return (n, c, _core.output_size(h, kernel[0], stride[0], padding[0], ceil_mode),
            _core.output_size(w, kernel[1], stride[1], padding[1], ceil_mode))


# ---- the forward operator -----------------------------------------------------------------
def _forward_plan(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, numerics,
                  backend):
    """What a forward on x runs: (the input as the plan reads it, the plan,
    the output's shape, its memory format, the CUDA device index or -1)."""
    dtype = _check_input(x)
    numerics_code = _core.numerics_code(numerics)
    backend_code, index = _device_backend(x.device, backend)
    args = _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    fmt = _memory_format(x)
    layout = _lib.LAYOUT_NHWC if fmt is torch.channels_last else _lib.LAYOUT_NCHW
    batched = x.dim() == 4
    src = (x if batched else x.unsqueeze(0)).contiguous(memory_format=fmt)
    plan = _plan(tuple(src.shape), args, dtype, layout, backend_code, numerics_code, index)
    dims = plan.out_dims
    return src, plan, (dims if batched else dims[1:]), fmt, index


def _run_forward(src, plan, out_shape, fmt, index, like):
    out = torch.empty(out_shape, dtype=like.dtype, device=like.device, memory_format=fmt)
    if plan.dst_elements:
        plan.execute(src.data_ptr(), out.data_ptr(), _raw_stream(index) if index >= 0 else None)
    return out


def _avg_pool2d_impl(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, numerics,
                     backend):
    """The forward on real tensors: the operator's implementation, and the
    eager path's (_eager_call)."""
    src, plan, out_shape, fmt, index = _forward_plan(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                                     divisor_override, numerics, backend)
    return _run_forward(src, plan, out_shape, fmt, index, x)


@torch.library.custom_op("avgpool::avg_pool2d", mutates_args=())
def _avg_pool2d_op(x: torch.Tensor, kernel_size: List[int], stride: List[int], padding: List[int],
                   ceil_mode: bool, count_include_pad: bool, divisor_override: Optional[int], numerics: str,
                   backend: str) -> torch.Tensor:
    return _avg_pool2d_impl(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                            numerics, backend)


@_avg_pool2d_op.register_fake
def _avg_pool2d_fake(x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, numerics,
                     backend):
    dtype = _check_input(x)
    numerics_code = _core.numerics_code(numerics)
    _device_backend(x.device, backend)
    args = _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    fmt = _memory_format(x)
    layout = _lib.LAYOUT_NHWC if fmt is torch.channels_last else _lib.LAYOUT_NCHW
    in_dims = tuple(x.shape) if x.dim() == 4 else (1,) + tuple(x.shape)
    dims = _output_dims(in_dims, args, dtype, layout, numerics_code)
    return torch.empty(dims if x.dim() == 4 else dims[1:], dtype=x.dtype, device=x.device, memory_format=fmt)


# ---- the backward operator ----------------------------------------------------------------
def _avg_pool2d_backward_impl(grad_output, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override, channels_last, numerics, backend):
    """The backward on real tensors: the operator's implementation, and the
    eager path's."""
    g = grad_output
    dtype = _check_input(g, "grad_output")
    in_dims = _backward_in_dims(g, input_size)
    numerics_code = _core.numerics_code(numerics)
    backend_code, index = _device_backend(g.device, backend, "grad_output")
    args = _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    batched = len(input_size) == 4
    fmt = torch.channels_last if batched and channels_last else torch.contiguous_format
    layout = _lib.LAYOUT_NHWC if fmt is torch.channels_last else _lib.LAYOUT_NCHW
    src = (g if batched else g.unsqueeze(0)).contiguous(memory_format=fmt)
    plan = _plan(in_dims, args, dtype, layout, backend_code, numerics_code, index)
    _check_grad_output_shape(tuple(g.shape), plan.out_dims, input_size)
    out = torch.empty(tuple(input_size), dtype=g.dtype, device=g.device, memory_format=fmt)
    if plan.src_elements:
        plan.backward(src.data_ptr(), out.data_ptr(), _raw_stream(index) if index >= 0 else None)
    return out


@torch.library.custom_op("avgpool::avg_pool2d_backward", mutates_args=())
def _avg_pool2d_backward_op(grad_output: torch.Tensor, input_size: List[int], kernel_size: List[int],
                            stride: List[int], padding: List[int], ceil_mode: bool, count_include_pad: bool,
                            divisor_override: Optional[int], channels_last: bool, numerics: str,
                            backend: str) -> torch.Tensor:
    return _avg_pool2d_backward_impl(grad_output, input_size, kernel_size, stride, padding, ceil_mode,
                                     count_include_pad, divisor_override, channels_last, numerics, backend)


def _backward_in_dims(g, input_size):
    if len(input_size) not in (3, 4):
        raise ValueError(f"avg_pool2d_backward: input_size must have 3 (C, H, W) or 4 (N, C, H, W) "
                         f"dimensions, got {list(input_size)}")
    if g.dim() != len(input_size):
        raise ValueError(f"avg_pool2d_backward: grad_output is {g.dim()}-D, input_size "
                         f"{list(input_size)} is {len(input_size)}-D")
    return tuple(input_size) if len(input_size) == 4 else (1,) + tuple(input_size)


def _check_grad_output_shape(shape, out_dims, input_size):
    want = tuple(out_dims) if len(input_size) == 4 else tuple(out_dims[1:])
    if _is_concrete(shape) and _is_concrete(want) and shape != want:
        raise ValueError(f"avg_pool2d_backward: grad_output has shape {shape}, but pooling an input of "
                         f"shape {tuple(input_size)} gives {want}")


@_avg_pool2d_backward_op.register_fake
def _avg_pool2d_backward_fake(grad_output, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
                              divisor_override, channels_last, numerics, backend):
    g = grad_output
    dtype = _check_input(g, "grad_output")
    in_dims = _backward_in_dims(g, input_size)
    numerics_code = _core.numerics_code(numerics)
    _device_backend(g.device, backend, "grad_output")
    args = _args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    batched = len(input_size) == 4
    fmt = torch.channels_last if batched and channels_last else torch.contiguous_format
    layout = _lib.LAYOUT_NHWC if fmt is torch.channels_last else _lib.LAYOUT_NCHW
    dims = _output_dims(in_dims, args, dtype, layout, numerics_code)
    _check_grad_output_shape(tuple(g.shape), dims, input_size)
    return torch.empty(tuple(input_size), dtype=g.dtype, device=g.device, memory_format=fmt)


# ---- autograd ----------------------------------------------------------------------------------
def _forward_setup_context(ctx, inputs, output):
    x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, numerics, backend = inputs
    ctx.input_size = list(x.shape)
    # PyTorch's grad_input takes the input's memory format.
    ctx.channels_last = _memory_format(x) is torch.channels_last
    ctx.pool = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ctx.numerics, ctx.backend = numerics, backend


def _forward_backward(ctx, grad):
    grad_input = None
    if ctx.needs_input_grad[0]:
        grad_input = _avg_pool2d_backward_op(grad, ctx.input_size, *ctx.pool, ctx.channels_last, ctx.numerics,
                                             ctx.backend)
    return (grad_input,) + (None,) * 8


_avg_pool2d_op.register_autograd(_forward_backward, setup_context=_forward_setup_context)


def _backward_setup_context(ctx, inputs, output):
    (grad_output, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
     channels_last, numerics, backend) = inputs
    ctx.pool = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    ctx.numerics, ctx.backend = numerics, backend


def _backward_backward(ctx, grad):
    # grad_input is linear in grad_output with the transpose of the pooling:
    # its gradient is the pooling of grad, divisor for divisor.
    grad_grad_output = None
    if ctx.needs_input_grad[0]:
        grad_grad_output = _avg_pool2d_op(grad, *ctx.pool, ctx.numerics, ctx.backend)
    return (grad_grad_output,) + (None,) * 10


_avg_pool2d_backward_op.register_autograd(_backward_backward, setup_context=_backward_setup_context)


# ---- the eager path -------------------------------------------------------------------------------
# Calling a custom operator from Python costs about 40 us of dispatch per call
# (H200 host, torch 2.11: avgpool.torch.avg_pool2d 45.5 us against 5.2 us for
# the plan's execute through ctypes). Outside torch.compile and without
# dispatch modes or functorch transforms, which need the operator's fake and
# registered autograd, a call runs the implementation directly, through an
# autograd.Function when the input needs a gradient. The values are the same:
# both paths run _avg_pool2d_impl / _avg_pool2d_backward_impl.
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", None)


def _eager_call(t):
    """True when a call on tensor t can take the eager path (checked first:
    torch.compile traces the operator, with nothing else looked at)."""
    if torch.compiler.is_compiling():
        return False
    if type(t) is not torch.Tensor or _functorch_active is None:
        return False
    return not (torch._C._len_torch_dispatch_stack() > 0 or torch._C._is_torch_function_mode_enabled()
                or _functorch_active())


def _eager_forward(x, pool, numerics, backend):
    if torch.is_grad_enabled() and x.requires_grad:
        return _AvgPool2dFunction.apply(x, pool, numerics, backend)
    return _avg_pool2d_impl(x, *pool, numerics, backend)


def _eager_backward(grad, input_size, pool, channels_last, numerics, backend):
    if torch.is_grad_enabled() and grad.requires_grad:
        return _AvgPool2dBackwardFunction.apply(grad, input_size, pool, channels_last, numerics, backend)
    return _avg_pool2d_backward_impl(grad, input_size, *pool, channels_last, numerics, backend)


class _AvgPool2dFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, pool, numerics, backend):
        ctx.input_size = list(x.shape)
        ctx.channels_last = _memory_format(x) is torch.channels_last  # grad_input takes the input's format
        ctx.pool, ctx.numerics, ctx.backend = pool, numerics, backend
        return _avg_pool2d_impl(x, *pool, numerics, backend)

    @staticmethod
    def backward(ctx, grad):
        return (_eager_backward(grad, ctx.input_size, ctx.pool, ctx.channels_last, ctx.numerics, ctx.backend),
                None, None, None)


class _AvgPool2dBackwardFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, grad_output, input_size, pool, channels_last, numerics, backend):
        ctx.pool, ctx.numerics, ctx.backend = pool, numerics, backend
        return _avg_pool2d_backward_impl(grad_output, input_size, *pool, channels_last, numerics, backend)

    @staticmethod
    def backward(ctx, grad):
        # Linear in grad_output: the gradient is the pooling of grad.
        return (_eager_forward(grad, ctx.pool, ctx.numerics, ctx.backend),) + (None,) * 5


# ---- the Python API --------------------------------------------------------------------------------
def _avg_pool2d_normalized(x, args, numerics, backend, out):
    if out is not None:
        raise TypeError("avg_pool2d: out= is for numpy arrays; with torch tensors the result is a new tensor")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"avg_pool2d: input must be a torch tensor, not {type(x).__name__}")
    kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = args
    pool = (list(kernel), list(stride), list(padding), ceil_mode, count_include_pad, divisor_override)
    if _eager_call(x):
        return _eager_forward(x, pool, numerics, backend)
    return _avg_pool2d_op(x, *pool, numerics, backend)


def _avg_pool2d_backward_normalized(grad_output, input_shape, args, numerics, backend, out):
    if out is not None:
        raise TypeError("avg_pool2d_backward: out= is for numpy arrays; with torch tensors the result is a "
                        "new tensor")
    if not isinstance(grad_output, torch.Tensor):
        raise TypeError(f"avg_pool2d_backward: grad_output must be a torch tensor, not {type(grad_output).__name__}")
    kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = args
    input_size = [_core._int("input_shape", v) if not isinstance(v, torch.SymInt) else v for v in input_shape]
    channels_last = _memory_format(grad_output) is torch.channels_last
    pool = (list(kernel), list(stride), list(padding), ceil_mode, count_include_pad, divisor_override)
    if _eager_call(grad_output):
        return _eager_backward(grad_output, input_size, pool, channels_last, numerics, backend)
    return _avg_pool2d_backward_op(grad_output, input_size, *pool, channels_last, numerics, backend)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None, *, numerics="fast", backend="auto"):
    """torch.nn.functional.avg_pool2d on avgpool: same arguments and
    result (shape, dtype, device, memory format), plus numerics ("fast", or
    "pytorch": bitwise PyTorch's values) and backend ("auto": the tensor's
    device; "cpu", "reference" for CPU tensors; "cuda"). Differentiable."""
    # Eager calls without autograd repeat (the same arguments on inputs of the
    # same shape, strides, dtype and device): the plan cache keeps what such a
    # call runs, so a repeat does one lookup, allocates the output and
    # executes. Only calls whose input the plan reads in place are kept.
    key = None
    if _eager_call(input) and not (input.requires_grad and torch.is_grad_enabled()):
        key = (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, numerics, backend,
               input.shape, input.stride(), input.dtype, input.device)
        try:
            hit = _core.cache.call_get(key)
        except TypeError:  # unhashable arguments (lists): no shortcut
            hit = key = None
        if hit is not None:
            plan, out_shape, fmt, index = hit
            return _run_forward(input, plan, out_shape, fmt, index, input)
    args = _core.pool_args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    if key is None:
        return _avg_pool2d_normalized(input, args, numerics, backend, None)
    kernel, stride_pair, padding_pair, ceil_mode, count_include_pad, divisor_override = args
    src, plan, out_shape, fmt, index = _forward_plan(input, list(kernel), list(stride_pair), list(padding_pair),
                                                     ceil_mode, count_include_pad, divisor_override, numerics,
                                                     backend)
    if src.data_ptr() == input.data_ptr():  # read in place: a repeat can skip all of the above
        _core.cache.call_put(key, (plan, out_shape, fmt, index))
    return _run_forward(src, plan, out_shape, fmt, index, input)


def avg_pool2d_backward(grad_output, input_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
                        count_include_pad=True, divisor_override=None, *, numerics="fast", backend="auto"):
    """The gradient of avg_pool2d with respect to its input, of shape
    input_shape, in grad_output's memory format. Differentiable."""
    args = _core.pool_args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool2d_backward_normalized(grad_output, input_shape, args, numerics, backend, None)


class AvgPool2d(torch.nn.Module):
    """torch.nn.AvgPool2d on avgpool: the same constructor arguments, and
    ``numerics``: "fast" (the fastest result within the float32 summation
    bound) or "pytorch" (bitwise torch.nn.AvgPool2d's outputs and
    gradients)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override",
                     "numerics"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, *, numerics="fast"):
        super().__init__()
        _core.numerics_code(numerics)  # a bad name fails here, not at the first call
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override
        self.numerics = numerics

    @classmethod
    def from_torch(cls, module, *, numerics="fast"):
        """The avgpool equivalent of a torch.nn.AvgPool2d."""
        return cls(module.kernel_size, module.stride, module.padding, module.ceil_mode, module.count_include_pad,
                   module.divisor_override, numerics=numerics)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"numerics={self.numerics!r}")

    def forward(self, input):
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override, numerics=self.numerics)

"""numpy arrays: host memory, so the CPU backend (or the reference)."""
import ctypes

import numpy as np

from . import _core, _lib

_DTYPES = {np.dtype(np.float32): _lib.DTYPE_F32, np.dtype(np.float16): _lib.DTYPE_F16,
           np.dtype(np.float64): _lib.DTYPE_F64}
_HOST_BACKENDS = {"auto": _lib.BACKEND_CPU, "cpu": _lib.BACKEND_CPU, "reference": _lib.BACKEND_REFERENCE}
_addressof = ctypes.addressof
_char_at = ctypes.c_char.from_buffer


def dtype_code(dtype):
    code = _DTYPES.get(dtype)
    if code is not None:
        return code
    # bfloat16 comes from an extension type (ml_dtypes), recognized by name
    # so that numpy alone needs no extra import.
    if dtype.name == "bfloat16" and dtype.itemsize == 2:
        return _lib.DTYPE_BF16
    if dtype.kind == "f" and dtype.newbyteorder("=") in _DTYPES:
        return None  # byte-swapped: converted by the caller
    raise TypeError(f"avg_pool2d: unsupported dtype {dtype}: float32, float64, float16 and bfloat16 "
                    "(ml_dtypes) arrays are supported")


def host_backend(backend):
    code = _HOST_BACKENDS.get(backend) if isinstance(backend, str) else None
    if code is not None:
        return code
    if _core.backend_code(backend) == _lib.BACKEND_CUDA:
        raise ValueError("backend 'cuda' needs device memory: numpy arrays live on the host "
                         "(use 'auto', 'cpu' or 'reference', or pass a CUDA torch tensor)")
    raise AssertionError(backend)  # backend_code raised for any other name


def _address(a):
    """The address of a dense array's first element (ctypes' buffer view
    where numpy allows one: several times cheaper than a.ctypes.data)."""
    flags = a.flags
    if flags.c_contiguous and flags.writeable and a.size and a.dtype.isbuiltin:
        try:
            return _addressof(_char_at(a))
        except (BufferError, TypeError, ValueError):
            pass
    return a.ctypes.data


def _is_nhwc_dense(a):
    """Whether a 4-D array is a dense NHWC buffer seen as N, C, H, W (what
    a channels_last tensor's numpy view, or x.transpose(0, 3, 1, 2) of a
    C-contiguous NHWC array, looks like)."""
    n, c, h, w = a.shape
    s = a.itemsize
    st = a.strides
    return ((c == 1 or st[1] == s) and (w == 1 or st[3] == c * s) and (h == 1 or st[2] == w * c * s)
            and (n == 1 or st[0] == h * w * c * s))


def _prepare(x, what):
    """x as a dense array in a layout the library takes: (array, layout,
    dtype code). C-contiguous arrays are NCHW; 4-D arrays whose strides are
    a dense NHWC buffer's are NHWC; anything else is copied to C order."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"avg_pool2d: {what} must be a numpy array or a torch tensor, not {type(x).__name__}")
    code = _DTYPES.get(x.dtype)
    if code is None:
        code = dtype_code(x.dtype)
        if code is None:
            x = x.astype(x.dtype.newbyteorder("="))
            code = _DTYPES[x.dtype]
    flags = x.flags
    if flags.c_contiguous and flags.aligned:
        return x, _lib.LAYOUT_NCHW, code
    if x.ndim == 4 and flags.aligned and _is_nhwc_dense(x):
        return x, _lib.LAYOUT_NHWC, code
    x = np.ascontiguousarray(x)
    if not x.flags.aligned:
        x = x.copy()
    return x, _lib.LAYOUT_NCHW, code


def _empty(dims, dtype, layout):
    """A new result: (the array as N, C, H, W, its address)."""
    if layout == _lib.LAYOUT_NHWC:
        n, c, h, w = dims
        base = np.empty((n, h, w, c), dtype=dtype)
        return base.transpose(0, 3, 1, 2), _address(base)
    a = np.empty(dims, dtype=dtype)
    return a, _address(a)


def _check_out(out, shape, dtype, layout, src):
    if not isinstance(out, np.ndarray):
        raise TypeError(f"avg_pool2d: out must be a numpy array, not {type(out).__name__}")
    if out.shape != shape:
        raise ValueError(f"avg_pool2d: out has shape {out.shape}, the result has shape {shape}")
    if out.dtype != dtype:
        raise TypeError(f"avg_pool2d: out has dtype {out.dtype}, the result has dtype {dtype}")
    if not out.flags.writeable:
        raise ValueError("avg_pool2d: out is read-only")
    if layout == _lib.LAYOUT_NHWC:
        ok = out.ndim == 4 and out.flags.aligned and _is_nhwc_dense(out)
        want = "a dense NHWC (channels-last) array, as the input is"
    else:
        ok = out.flags.c_contiguous and out.flags.aligned
        want = "C-contiguous, as the input is"
    if not ok:
        raise ValueError(f"avg_pool2d: out must be {want}")
    if np.may_share_memory(out, src):
        raise ValueError("avg_pool2d: out overlaps the input")
    return _address(out) if layout == _lib.LAYOUT_NCHW else out.ctypes.data


def _in_dims(shape, where):
    if len(shape) == 4:
        return shape
    return _core.in_dims_of(shape, where)


def avg_pool2d(x, args, numerics, backend, out):
    x, layout, dtype = _prepare(x, "input")
    shape = x.shape
    in_dims = _in_dims(shape, "input")
    numerics = _core.NUMERICS_FAST if numerics == "fast" else _core.numerics_code(numerics)
    plan = _core.get_plan(in_dims, args, dtype, layout, host_backend(backend), numerics)
    dims = plan.out_dims
    batched = len(shape) == 4
    if out is None:
        result, dst = _empty(dims, x.dtype, layout)
        if not batched:
            result = result[0]
    else:
        dst = _check_out(out, dims if batched else dims[1:], x.dtype, layout, x)
        result = out
    if plan.dst_elements:
        plan.execute(_address(x) if layout == _lib.LAYOUT_NCHW else x.ctypes.data, dst)
    return result


def avg_pool2d_backward(grad_output, input_shape, args, numerics, backend, out):
    if not isinstance(grad_output, np.ndarray):
        raise TypeError(f"avg_pool2d_backward: grad_output must be a numpy array or a torch tensor, "
                        f"not {type(grad_output).__name__}")
    input_shape = tuple(_core._int("input_shape", v) for v in input_shape)
    in_dims = _core.in_dims_of(input_shape, "input_shape")
    batched = len(input_shape) == 4
    if grad_output.ndim != len(input_shape):
        raise ValueError(f"avg_pool2d_backward: grad_output is {grad_output.ndim}-D, input_shape "
                         f"{input_shape} is {len(input_shape)}-D")
    g, layout, dtype = _prepare(grad_output, "grad_output")
    plan = _core.get_plan(in_dims, args, dtype, layout, host_backend(backend), _core.numerics_code(numerics))
    want = plan.out_dims if batched else plan.out_dims[1:]
    if g.shape != want:
        raise ValueError(f"avg_pool2d_backward: grad_output has shape {g.shape}, but pooling input_shape "
                         f"{input_shape} gives an output of shape {want}")
    if out is None:
        result, dst = _empty(in_dims, g.dtype, layout)
        if not batched:
            result = result[0]
    else:
        dst = _check_out(out, input_shape, g.dtype, layout, g)
        result = out
    if plan.src_elements:
        plan.backward(_address(g) if layout == _lib.LAYOUT_NCHW else g.ctypes.data, dst)
    return result

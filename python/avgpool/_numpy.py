"""numpy arrays: host memory, so the CPU backend (or the reference)."""
import numpy as np

from . import _core, _lib

_DTYPES = {np.dtype(np.float32): _lib.DTYPE_F32, np.dtype(np.float16): _lib.DTYPE_F16,
           np.dtype(np.float64): _lib.DTYPE_F64}


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
    code = _core.backend_code(backend)
    if code == _lib.BACKEND_AUTO:
        return _lib.BACKEND_CPU
    if code == _lib.BACKEND_CUDA:
        raise ValueError("backend 'cuda' needs device memory: numpy arrays live on the host "
                         "(use 'auto', 'cpu' or 'reference', or pass a CUDA torch tensor)")
    return code


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
    code = dtype_code(x.dtype)
    if code is None:
        x = x.astype(x.dtype.newbyteorder("="))
        code = _DTYPES[x.dtype]
    if x.ndim == 4 and not x.flags.c_contiguous and x.flags.aligned and _is_nhwc_dense(x):
        return x, _lib.LAYOUT_NHWC, code
    if not (x.flags.c_contiguous and x.flags.aligned):
        x = np.ascontiguousarray(x)
        if not x.flags.aligned:
            x = x.copy()
    return x, _lib.LAYOUT_NCHW, code


def _empty(dims, dtype, layout):
    if layout == _lib.LAYOUT_NHWC:
        n, c, h, w = dims
        return np.empty((n, h, w, c), dtype=dtype).transpose(0, 3, 1, 2)
    return np.empty(dims, dtype=dtype)


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


def avg_pool2d(x, args, numerics, backend, out):
    batched = x.ndim == 4 if isinstance(x, np.ndarray) else True
    x, layout, dtype = _prepare(x, "input")
    in_dims = _core.in_dims_of(x.shape)
    plan = _core.get_plan(in_dims, args, dtype, layout, host_backend(backend), _core.numerics_code(numerics))
    dims = plan.out_dims
    shape = dims if batched else dims[1:]
    if out is None:
        result = _empty(dims, x.dtype, layout)
    else:
        _check_out(out, shape, x.dtype, layout, x)
        result = out if batched else out[np.newaxis]
    if plan.dst_elements:
        plan.execute(x.ctypes.data, result.ctypes.data)
    return out if out is not None else (result if batched else result[0])


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
        result = _empty(in_dims, g.dtype, layout)
    else:
        _check_out(out, input_shape, g.dtype, layout, g)
        result = out if batched else out[np.newaxis]
    if plan.src_elements:
        plan.backward(g.ctypes.data, result.ctypes.data)
    return out if out is not None else (result if batched else result[0])

"""libavgpool through ctypes: loading, the C API's signatures, statuses as
exceptions, and plans.

The C API (lib/include/avgpool/avgpool.h) is the ABI: this module declares
its functions and the versioned ``avgpool_params`` struct as they are, and
refuses a library whose struct differs from the one declared here.
"""
import ctypes
import os
import sys

__all__ = [
    "AvgpoolError", "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError",
    "BackendUnavailableError", "DeviceError", "InternalError",
    "Params", "Plan", "lib", "library_path", "library_version",
]

# ---- statuses and enums (pinned values of the C API) ------------------------
SUCCESS = 0
INVALID_ARGUMENT = 1
UNSUPPORTED = 2
OUT_OF_MEMORY = 3
BACKEND_UNAVAILABLE = 4
DEVICE = 5
INTERNAL = 6

DTYPE_F32, DTYPE_F16, DTYPE_BF16, DTYPE_F64 = 0, 1, 2, 3
LAYOUT_NCHW, LAYOUT_NHWC = 0, 1
BACKEND_AUTO, BACKEND_REFERENCE, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2, 3
NUMERICS_FAST, NUMERICS_PYTORCH = 0, 1

BACKENDS = {"auto": BACKEND_AUTO, "reference": BACKEND_REFERENCE, "cpu": BACKEND_CPU, "cuda": BACKEND_CUDA}
NUMERICS = {"fast": NUMERICS_FAST, "pytorch": NUMERICS_PYTORCH}
DTYPE_NAMES = {DTYPE_F32: "float32", DTYPE_F16: "float16", DTYPE_BF16: "bfloat16", DTYPE_F64: "float64"}
ELEMENT_SIZE = {DTYPE_F32: 4, DTYPE_F16: 2, DTYPE_BF16: 2, DTYPE_F64: 8}

# The oldest library version whose C API this binding speaks (major, minor).
_MIN_VERSION = (0, 1)


# ---- exceptions ----------------------------------------------------------------
class AvgpoolError(Exception):
    """A failed libavgpool call. ``status`` is the C API's status value,
    ``status_name`` its name ("invalid argument", ...), and the message is
    the library's own (``avgpool_last_error_message``)."""

    def __init__(self, message, status, status_name):
        super().__init__(message)
        self.status = status
        self.status_name = status_name


class InvalidArgumentError(AvgpoolError, ValueError):
    """AVGPOOL_ERROR_INVALID_ARGUMENT: the message names the parameter and its value."""


class UnsupportedError(AvgpoolError, RuntimeError):
    """AVGPOOL_ERROR_UNSUPPORTED: valid, but no implementation takes it."""


class OutOfMemoryError(AvgpoolError, RuntimeError):
    """AVGPOOL_ERROR_OUT_OF_MEMORY."""


class BackendUnavailableError(AvgpoolError, RuntimeError):
    """AVGPOOL_ERROR_BACKEND_UNAVAILABLE: not compiled in, or no usable device."""


class DeviceError(AvgpoolError, RuntimeError):
    """AVGPOOL_ERROR_DEVICE: the device reported an error."""


class InternalError(AvgpoolError, RuntimeError):
    """AVGPOOL_ERROR_INTERNAL: a bug in libavgpool."""


_ERRORS = {
    INVALID_ARGUMENT: InvalidArgumentError,
    UNSUPPORTED: UnsupportedError,
    OUT_OF_MEMORY: OutOfMemoryError,
    BACKEND_UNAVAILABLE: BackendUnavailableError,
    DEVICE: DeviceError,
    INTERNAL: InternalError,
}


# ---- the parameter struct ----------------------------------------------------------
class Params(ctypes.Structure):
    """avgpool_params, field for field (enums are C ints)."""
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("n", ctypes.c_int64), ("c", ctypes.c_int64), ("h", ctypes.c_int64), ("w", ctypes.c_int64),
        ("kernel_h", ctypes.c_int64), ("kernel_w", ctypes.c_int64),
        ("stride_h", ctypes.c_int64), ("stride_w", ctypes.c_int64),
        ("padding_h", ctypes.c_int64), ("padding_w", ctypes.c_int64),
        ("ceil_mode", ctypes.c_int32), ("count_include_pad", ctypes.c_int32),
        ("divisor_override", ctypes.c_int64),
        ("dtype", ctypes.c_int), ("layout", ctypes.c_int), ("backend", ctypes.c_int),
        ("numerics", ctypes.c_int),
    ]


# ---- loading -------------------------------------------------------------------------
def _candidates():
    """Where libavgpool is looked for, in order: $AVGPOOL_LIBRARY (a path to
    the shared library, e.g. a build folder's libavgpool.so), the copy
    inside this package (what a wheel installs), then the system's dynamic
    loader (an installed libavgpool.so.0.1)."""
    env = os.environ.get("AVGPOOL_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.platform == "win32":
        names = ["avgpool.dll"]
    elif sys.platform == "darwin":
        names = ["libavgpool.dylib"]
    else:
        names = ["libavgpool.so"]
    return [os.path.join(here, n) for n in names] + ["libavgpool.so.0.1"], False


def _load():
    paths, from_env = _candidates()
    errors = []
    for path in paths:
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    where = "AVGPOOL_LIBRARY" if from_env else "the package folder and the dynamic loader's path"
    raise ImportError(
        "libavgpool could not be loaded from " + where + " (" + "; ".join(errors) + "). "
        "Install the avgpool package (pip install .) or set AVGPOOL_LIBRARY to a built libavgpool.so.")


lib, library_path = _load()

_i64p = ctypes.POINTER(ctypes.c_int64)
_charpp = ctypes.POINTER(ctypes.c_char_p)
_vp = ctypes.c_void_p


def _declare(name, argtypes, restype=ctypes.c_int):
    f = getattr(lib, name)
    f.argtypes = argtypes
    f.restype = restype
    return f


avgpool_version_number = _declare("avgpool_version_number", [], ctypes.c_uint)
avgpool_version_string = _declare("avgpool_version_string", [], ctypes.c_char_p)
avgpool_status_string = _declare("avgpool_status_string", [ctypes.c_int], ctypes.c_char_p)
avgpool_last_error_message = _declare("avgpool_last_error_message", [], ctypes.c_char_p)
avgpool_params_init = _declare("avgpool_params_init", [_vp])
avgpool_plan_create = _declare("avgpool_plan_create", [ctypes.POINTER(Params), ctypes.POINTER(_vp)])
avgpool_plan_create_with_impls = _declare(
    "avgpool_plan_create_with_impls", [ctypes.POINTER(Params), ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_vp)])
avgpool_plan_destroy = _declare("avgpool_plan_destroy", [_vp])
avgpool_plan_output_dims = _declare("avgpool_plan_output_dims", [_vp, _i64p])
avgpool_plan_sizes = _declare("avgpool_plan_sizes", [_vp, _i64p, _i64p])
avgpool_plan_impl_name = _declare("avgpool_plan_impl_name", [_vp, _charpp])
avgpool_plan_backward_impl_name = _declare("avgpool_plan_backward_impl_name", [_vp, _charpp])
avgpool_plan_execute = _declare("avgpool_plan_execute", [_vp, _vp, _vp, _vp])
avgpool_plan_backward = _declare("avgpool_plan_backward", [_vp, _vp, _vp, _vp])
avgpool_impl_count = _declare("avgpool_impl_count", [_i64p])
avgpool_impl_name = _declare("avgpool_impl_name", [ctypes.c_int64, _charpp])
avgpool_impl_is_backward = _declare("avgpool_impl_is_backward", [ctypes.c_int64, ctypes.POINTER(ctypes.c_int)])


def _version_tuple(number):
    return number // 10000, number // 100 % 100, number % 100


def library_version():
    """The loaded library's version as (major, minor, patch)."""
    return _version_tuple(avgpool_version_number())


def _check_library():
    v = library_version()
    if v[0] != _MIN_VERSION[0] or v[:2] < _MIN_VERSION:
        raise ImportError(f"{library_path} is libavgpool {'.'.join(map(str, v))}; this binding needs "
                          f"{_MIN_VERSION[0]}.{_MIN_VERSION[1]} or a later {_MIN_VERSION[0]}.x")
    # avgpool_params_init writes the library's sizeof(avgpool_params): into a
    # buffer larger than any plausible struct, so a different library cannot
    # write past the end of ours.
    probe = (ctypes.c_ubyte * 4096)()
    status = avgpool_params_init(ctypes.cast(probe, _vp))
    size = ctypes.c_size_t.from_buffer(probe).value
    if status != SUCCESS or size != ctypes.sizeof(Params):
        raise ImportError(f"{library_path}: avgpool_params is {size} bytes there, {ctypes.sizeof(Params)} "
                          "bytes in this binding: the library and the Python package do not match")
    defaults = Params.from_buffer_copy(bytes(probe[:ctypes.sizeof(Params)]))
    return defaults


_DEFAULT_PARAMS = _check_library()


# ---- errors ------------------------------------------------------------------------
def status_name(status):
    return avgpool_status_string(status).decode()


def error_for(status, context=None):
    """The exception for a failed call's status, carrying the calling
    thread's library message (read right after the call, on its thread)."""
    message = avgpool_last_error_message().decode(errors="replace")
    name = status_name(status)
    if not message:
        message = name
    if status != INVALID_ARGUMENT:
        message = f"{name}: {message}"
    if context:
        message = f"{context}: {message}"
    return _ERRORS.get(status, InternalError)(message, status, name)


def check(status, context=None):
    if status != SUCCESS:
        raise error_for(status, context)


# ---- implementations ---------------------------------------------------------------------
def impl_names(direction=None):
    """Every implementation compiled into the library, in dispatch order
    (CUDA, CPU, reference); direction "forward" or "backward" filters."""
    count = ctypes.c_int64()
    check(avgpool_impl_count(ctypes.byref(count)))
    names = []
    name = ctypes.c_char_p()
    flag = ctypes.c_int()
    for i in range(count.value):
        check(avgpool_impl_name(i, ctypes.byref(name)))
        check(avgpool_impl_is_backward(i, ctypes.byref(flag)))
        if direction is None or (direction == "backward") == bool(flag.value):
            names.append(name.value.decode())
    return names


# ---- plans ------------------------------------------------------------------------------
class Plan:
    """An ``avgpool_plan``: created once for a problem (validation, output
    size, the implementation of each direction), executed many times,
    destroyed when the last reference goes away. Immutable, so one plan may
    be executed by several threads at once."""

    __slots__ = ("_handle", "in_dims", "out_dims", "dtype", "layout", "backend", "numerics",
                 "src_elements", "dst_elements", "__weakref__")

    def __init__(self, params, forward_impl=None, backward_impl=None):
        self._handle = None
        handle = _vp()
        if forward_impl is None and backward_impl is None:
            status = avgpool_plan_create(ctypes.byref(params), ctypes.byref(handle))
        else:
            status = avgpool_plan_create_with_impls(
                ctypes.byref(params),
                None if forward_impl is None else forward_impl.encode(),
                None if backward_impl is None else backward_impl.encode(),
                ctypes.byref(handle))
        check(status)
        self._handle = handle.value
        dims = (ctypes.c_int64 * 4)()
        check(avgpool_plan_output_dims(self._handle, dims))
        src, dst = ctypes.c_int64(), ctypes.c_int64()
        check(avgpool_plan_sizes(self._handle, ctypes.byref(src), ctypes.byref(dst)))
        self.in_dims = (params.n, params.c, params.h, params.w)
        self.out_dims = tuple(dims)
        self.src_elements, self.dst_elements = src.value, dst.value
        self.dtype, self.layout = params.dtype, params.layout
        self.backend, self.numerics = params.backend, params.numerics

    def __del__(self, _destroy=avgpool_plan_destroy):
        handle, self._handle = self._handle, None
        if handle is not None:
            _destroy(handle)

    @property
    def impl_name(self):
        name = ctypes.c_char_p()
        check(avgpool_plan_impl_name(self._handle, ctypes.byref(name)))
        return name.value.decode()

    @property
    def backward_impl_name(self):
        """The backward implementation's name; raises UnsupportedError with
        the reason when no backward implementation takes the problem."""
        name = ctypes.c_char_p()
        check(avgpool_plan_backward_impl_name(self._handle, ctypes.byref(name)))
        return name.value.decode()

    def execute(self, src, dst, stream=None):
        """Runs the forward on raw addresses (ints); stream a cudaStream_t as
        an int (None or 0: the default stream)."""
        status = avgpool_plan_execute(self._handle, src, dst, stream)
        if status != SUCCESS:
            raise error_for(status)

    def backward(self, grad_output, grad_input, stream=None):
        status = avgpool_plan_backward(self._handle, grad_output, grad_input, stream)
        if status != SUCCESS:
            raise error_for(status)


def make_params(in_dims, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
                dtype, layout, backend, numerics):
    p = Params.from_buffer_copy(_DEFAULT_PARAMS)
    p.n, p.c, p.h, p.w = in_dims
    p.kernel_h, p.kernel_w = kernel
    p.stride_h, p.stride_w = stride
    p.padding_h, p.padding_w = padding
    p.ceil_mode = 1 if ceil_mode else 0
    p.count_include_pad = 1 if count_include_pad else 0
    p.divisor_override = divisor_override or 0
    p.dtype, p.layout, p.backend, p.numerics = dtype, layout, backend, numerics
    return p

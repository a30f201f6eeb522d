"""What the numpy and torch front ends share: PyTorch's argument
conventions, option names, and the plan cache."""
import collections
import threading

from . import _lib

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _int(name, v):
    # Plain isinstance tests first: torch.compile traces these functions, and
    # ints and tuples are all it sees there. bool is an int in Python but never
    # a size (PyTorch refuses it too); numpy integers convert through __index__.
    if isinstance(v, bool):
        raise TypeError(f"avg_pool2d: {name} must be an int, not bool")
    if not isinstance(v, int):
        if not hasattr(v, "__index__"):
            raise TypeError(f"avg_pool2d: {name} must be an int, not {type(v).__name__}")
        v = v.__index__()
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError(f"avg_pool2d: {name} ({v}) does not fit in a 64-bit integer")
    return v


def _pair(name, v, what):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            a = _int(name, v[0])
            return (a, a)
        if len(v) == 2:
            return (_int(name, v[0]), _int(name, v[1]))
        raise TypeError(f"avg_pool2d: {name} must be {what}, got {v!r}")
    v = _int(name, v)
    return (v, v)


def pool_args(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """PyTorch's conventions, normalized: kernel_size an int or a pair (a
    1-sequence counts as both); stride None or empty = the kernel; padding
    an int or a pair; divisor_override None or a non-zero int. Returns a
    hashable (kernel, stride, padding, ceil_mode, count_include_pad,
    divisor_override) with pairs as tuples; the library validates values."""
    kernel = _pair("kernel_size", kernel_size, "a single int, or a tuple of two ints")
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        stride = kernel
    else:
        stride = _pair("stride", stride, "omitted, a single int, or a tuple of two ints")
        if stride == (0, 0):  # the C API reads (0, 0) as "the kernel"; PyTorch refuses it
            raise ValueError("avg_pool2d: stride (0, 0) must be at least 1 (None means stride = kernel_size)")
    padding = _pair("padding", padding, "a single int, or a tuple of two ints")
    if divisor_override is not None:
        divisor_override = _int("divisor_override", divisor_override)
        if divisor_override == 0:
            raise ValueError("avg_pool2d: divisor_override must be non-zero (None means no override)")
    return kernel, stride, padding, bool(ceil_mode), bool(count_include_pad), divisor_override


NUMERICS_FAST = _lib.NUMERICS_FAST


def numerics_code(numerics):
    try:
        return _lib.NUMERICS[numerics]
    except (KeyError, TypeError):
        raise ValueError(f"numerics must be one of {sorted(_lib.NUMERICS)}, got {numerics!r}") from None


def backend_code(backend):
    try:
        return _lib.BACKENDS[backend]
    except (KeyError, TypeError):
        raise ValueError(f"backend must be one of {sorted(_lib.BACKENDS)}, got {backend!r}") from None


def in_dims_of(shape, where="input"):
    """(N, C, H, W) of a 3-D (C, H, W) or 4-D (N, C, H, W) shape."""
    if len(shape) == 4:
        return tuple(shape)
    if len(shape) == 3:
        return (1,) + tuple(shape)
    raise ValueError(f"avg_pool2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) {where}, "
                     f"got shape {tuple(shape)}")


# ---- the plan cache -----------------------------------------------------------------------
CacheInfo = collections.namedtuple("CacheInfo", "hits misses size capacity")


class PlanCache:
    """A bounded LRU of plans keyed by (input dims, pooling arguments, dtype,
    layout, backend, numerics, device). Thread-safe: lookups hold a lock;
    a plan is created outside it (two threads missing the same key at once
    may both create one; the first inserted is kept). An evicted plan is
    destroyed once no caller still holds it: a thread executing it keeps it
    alive."""

    def __init__(self, capacity=256):
        self._lock = threading.Lock()
        self._plans = collections.OrderedDict()
        self._calls = {}
        self._capacity = capacity
        self._hits = 0
        self._misses = 0

    def get(self, key):
        """The plan for key (now the most recently used), or None."""
        with self._lock:
            plan = self._plans.get(key)
            if plan is None:
                self._misses += 1
                return None
            self._plans.move_to_end(key)
            self._hits += 1
            return plan

    def put(self, key, plan):
        """Inserts plan unless another thread inserted one for key first;
        returns the plan to use."""
        with self._lock:
            existing = self._plans.get(key)
            if existing is not None:
                return existing
            if self._capacity > 0:
                self._plans[key] = plan
                while len(self._plans) > self._capacity:
                    self._plans.popitem(last=False)
        return plan

    # Repeated eager calls (avgpool.torch): a call's raw arguments -> what it
    # runs (its plan among them), so a repeat skips the argument handling.
    # Emptied with the plans, bounded by the same capacity, off at 0.
    def call_get(self, key):
        return self._calls.get(key)  # one dict lookup: atomic, no lock needed

    def call_put(self, key, entry):
        with self._lock:
            if self._capacity == 0:
                return
            if len(self._calls) >= self._capacity:
                self._calls.clear()
            self._calls[key] = entry

    def info(self):
        with self._lock:
            return CacheInfo(self._hits, self._misses, len(self._plans), self._capacity)

    def clear(self):
        with self._lock:
            self._plans.clear()
            self._calls.clear()
            self._hits = self._misses = 0

    def set_capacity(self, capacity):
        capacity = _int("capacity", capacity)
        if capacity < 0:
            raise ValueError(f"plan cache capacity must be >= 0, got {capacity}")
        with self._lock:
            self._capacity = capacity
            while len(self._plans) > capacity:
                self._plans.popitem(last=False)
            if len(self._calls) > capacity:
                self._calls.clear()


cache = PlanCache()


def get_plan(in_dims, args, dtype, layout, backend, numerics, device=-1, guard=None):
    """The cached plan for a problem; created (inside ``guard``, a context
    manager making the device current, for CUDA) on a miss."""
    key = (in_dims, args, dtype, layout, backend, numerics, device)
    plan = cache.get(key)
    if plan is not None:
        return plan
    kernel, stride, padding, ceil_mode, include_pad, divisor = args
    params = _lib.make_params(in_dims, kernel, stride, padding, ceil_mode, include_pad, divisor,
                              dtype, layout, backend, numerics)
    if guard is None:
        plan = _lib.Plan(params)
    else:
        with guard():
            plan = _lib.Plan(params)
    return cache.put(key, plan)


def output_size(size, kernel, stride, padding, ceil_mode):
    """One output dimension, PyTorch's pooling_output_shape (dilation 1):
    floor((size + 2p - k) / s) + 1, or with ceil_mode the ceiling, less one
    when the last window would start at or past size + p. The library
    computes output sizes itself; this formula serves shapes that are not
    numbers yet (torch.compile's symbolic sizes) and is checked against the
    library in the tests."""
    if ceil_mode:
        out = (size + 2 * padding - kernel + (stride - 1)) // stride + 1
        if (out - 1) * stride >= size + padding:
            out = out - 1
        return out
    return (size + 2 * padding - kernel) // stride + 1


def channels_last_strides(sizes, strides):
    """PyTorch's is_channels_last_strides_2d for a 4-D tensor, what
    suggest_memory_format reads: whether the strides order the dimensions
    C, W, H, N from the fastest (a dimension of size 1 does not grow the
    next stride). Ambiguous cases resolve as PyTorch resolves them: a zero
    channel stride, or an N stride equal to the channel stride (N111
    tensors) mean NCHW. Works on torch.compile's symbolic sizes."""
    if strides[1] == 0:
        return False
    smallest = 0
    for d in (1, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d]
        if sizes[d] > 1:
            smallest = smallest * sizes[d]
    return True

"""avgpool.avg_pool2d and avg_pool2d_backward on numpy arrays: PyTorch's
argument conventions, layouts, dtypes, errors (the library's messages, and
outputs left untouched), the plan cache, and how the library is found."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import avgpool
from avgpool import _lib
from helpers import BF16, bitwise_mismatches, nhwc, pool_model

RNG = np.random.default_rng(20261130)


def rand(*shape, dtype=np.float32):
    return (RNG.random(shape) * 2 - 1).astype(dtype)


def model(x, k, s=None, p=0, ceil=False, incl=True, div=None):
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)
    return pool_model(x, pair(k), pair(s if s is not None else k), pair(p), ceil, incl, div)


# ---- PyTorch's argument conventions -------------------------------------------------------------
def test_int_pair_and_one_element_forms_agree():
    x = rand(2, 3, 9, 11)
    want = avgpool.avg_pool2d(x, (3, 3), (2, 2), (1, 1), numerics="pytorch")
    for k, s, p in [(3, 2, 1), ([3], [2], [1]), ((3, 3), 2, (1,)), (np.int64(3), np.int32(2), np.int8(1))]:
        got = avgpool.avg_pool2d(x, k, s, p, numerics="pytorch")
        assert len(bitwise_mismatches(got, want)) == 0, (k, s, p)
    assert len(bitwise_mismatches(want, model(x, 3, 2, 1))) == 0


def test_stride_defaults_to_kernel():
    x = rand(1, 2, 12, 10)
    want = avgpool.avg_pool2d(x, (3, 2), (3, 2), numerics="pytorch")
    for stride in (None, [], ()):
        assert np.array_equal(avgpool.avg_pool2d(x, (3, 2), stride, numerics="pytorch"), want)
    assert want.shape == (1, 2, 4, 5)


def test_asymmetric_parameters_and_modes_match_the_model():
    x = rand(2, 3, 13, 17)
    for args in [((2, 3), (1, 2), (1, 0), False, True, None), ((3, 5), (2, 3), (1, 2), True, False, None),
                 ((4, 2), (3, 1), (2, 1), True, True, 7), ((1, 1), (2, 3), 0, False, True, None)]:
        got = avgpool.avg_pool2d(x, *args, numerics="pytorch")
        assert len(bitwise_mismatches(got, model(x, *args))) == 0, args


def test_unbatched_input():
    x = rand(3, 10, 12)
    got = avgpool.avg_pool2d(x, 3, 2, 1, numerics="pytorch")
    assert got.shape == (3, 5, 6)
    assert np.array_equal(got, avgpool.avg_pool2d(x[None], 3, 2, 1, numerics="pytorch")[0])
    g = rand(3, 5, 6)
    gin = avgpool.avg_pool2d_backward(g, x.shape, 3, 2, 1)
    assert gin.shape == x.shape
    assert np.array_equal(gin, avgpool.avg_pool2d_backward(g[None], (1,) + x.shape, 3, 2, 1)[0])


def test_empty_batch():
    x = np.zeros((0, 4, 8, 8), dtype=np.float32)
    assert avgpool.avg_pool2d(x, 2).shape == (0, 4, 4, 4)
    assert avgpool.avg_pool2d_backward(np.zeros((0, 4, 4, 4), np.float32), x.shape, 2).shape == x.shape


@pytest.mark.parametrize("bad, error", [
    (dict(kernel_size=2.0), TypeError), (dict(kernel_size=True), TypeError),
    (dict(kernel_size=(2, 2, 2)), TypeError), (dict(kernel_size="2"), TypeError),
    (dict(kernel_size=2, stride=(1, 1, 1)), TypeError), (dict(kernel_size=2, padding=0.5), TypeError),
    (dict(kernel_size=2, divisor_override=0), ValueError), (dict(kernel_size=2, stride=0), ValueError),
    (dict(kernel_size=1 << 63), ValueError), (dict(kernel_size=2, numerics="exact"), ValueError),
    (dict(kernel_size=2, backend="gpu"), ValueError), (dict(kernel_size=2, backend="cuda"), ValueError),
])
def test_python_side_argument_errors(bad, error):
    with pytest.raises(error):
        avgpool.avg_pool2d(rand(1, 1, 4, 4), **bad)


# ---- errors: the library's messages, outputs untouched -------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    (dict(kernel_size=3, padding=2), "padding_h (2) must be at most kernel_h / 2 (1)"),
    (dict(kernel_size=0), "kernel_h (0) must be at least 1"),
    (dict(kernel_size=(2, 3), padding=(0, -1)), "padding_w (-1) must be at least 0"),
    (dict(kernel_size=5), "output height (0) is less than 1: kernel_h (5) does not fit h + 2 * padding_h (4)"),
    (dict(kernel_size=2, divisor_override=-3), "divisor_override (-3) must be 0 (none) or positive"),
])
def test_invalid_arguments_raise_the_library_message_and_leave_out_untouched(kwargs, message):
    x = rand(1, 2, 4, 4)
    out = np.full((1, 2, 2, 2), 7.0, dtype=np.float32)
    with pytest.raises(ValueError) as info:
        avgpool.avg_pool2d(x, **kwargs, out=out)
    assert str(info.value) == message
    assert isinstance(info.value, avgpool.InvalidArgumentError)
    assert isinstance(info.value, avgpool.AvgpoolError) and not isinstance(info.value, RuntimeError)
    assert info.value.status == 1 and info.value.status_name == "invalid argument"
    assert (out == 7.0).all()
    grad_in = np.full(x.shape, 7.0, dtype=np.float32)
    with pytest.raises(ValueError) as info:
        avgpool.avg_pool2d_backward(np.ones((1, 2, 2, 2), np.float32), x.shape, **kwargs, out=grad_in)
    assert str(info.value) == message
    assert (grad_in == 7.0).all()


def test_zero_channels_is_refused_by_the_library():
    with pytest.raises(avgpool.InvalidArgumentError, match=r"^c \(0\) must be at least 1$"):
        avgpool.avg_pool2d(np.zeros((1, 0, 4, 4), np.float32), 2)


@pytest.mark.parametrize("make_out, error", [
    (lambda: np.zeros((1, 2, 3, 3), np.float32), ValueError),        # wrong shape
    (lambda: np.zeros((1, 2, 2, 2), np.float64), TypeError),         # wrong dtype
    (lambda: np.zeros((1, 2, 2, 4), np.float32)[..., ::2], ValueError),  # not contiguous
    (lambda: np.zeros((1, 2, 2, 2), np.float32).tolist(), TypeError),
])
def test_bad_out_raises_and_is_untouched(make_out, error):
    out = make_out()
    before = np.array(out, copy=True)
    with pytest.raises(error):
        avgpool.avg_pool2d(rand(1, 2, 4, 4), 2, out=out)
    assert np.array_equal(np.asarray(out), before)


def test_read_only_and_overlapping_out_are_refused():
    x = rand(1, 1, 4, 4)
    out = np.zeros((1, 1, 2, 2), np.float32)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        avgpool.avg_pool2d(x, 2, out=out)
    buf = rand(1, 1, 4, 4)
    before = buf.copy()
    with pytest.raises(ValueError, match="overlaps"):
        avgpool.avg_pool2d(buf, 2, out=buf.reshape(-1)[:4].reshape(1, 1, 2, 2))
    assert np.array_equal(buf, before)


def test_out_is_written_and_returned():
    x = rand(2, 3, 8, 8)
    out = np.empty((2, 3, 4, 4), np.float32)
    assert avgpool.avg_pool2d(x, 2, out=out) is out
    assert np.array_equal(out, avgpool.avg_pool2d(x, 2))
    out3 = np.empty((3, 4, 4), np.float32)
    assert avgpool.avg_pool2d(x[0], 2, out=out3) is out3
    assert np.array_equal(out3, out[0])
    out_nhwc = nhwc(np.empty((2, 3, 4, 4), np.float32))
    assert avgpool.avg_pool2d(nhwc(x), 2, numerics="pytorch", out=out_nhwc) is out_nhwc
    assert np.array_equal(out_nhwc, avgpool.avg_pool2d(x, 2, numerics="pytorch"))
    with pytest.raises(ValueError, match="NHWC"):
        avgpool.avg_pool2d(nhwc(x), 2, out=np.empty((2, 3, 4, 4), np.float32))


def test_bad_inputs():
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        avgpool.avg_pool2d([[[[1.0]]]], 1)
    with pytest.raises(ValueError, match="3-D"):
        avgpool.avg_pool2d(rand(4, 4), 2)
    with pytest.raises(ValueError, match="3-D"):
        avgpool.avg_pool2d(rand(1, 1, 1, 4, 4), 2)
    for dtype in (np.int32, np.int64, np.complex64, np.bool_):
        with pytest.raises(TypeError, match="unsupported dtype"):
            avgpool.avg_pool2d(np.zeros((1, 1, 4, 4), dtype), 2)
    with pytest.raises(ValueError, match=r"grad_output has shape \(1, 1, 3, 3\)"):
        avgpool.avg_pool2d_backward(np.zeros((1, 1, 3, 3), np.float32), (1, 1, 4, 4), 2)
    with pytest.raises(ValueError, match="4-D"):
        avgpool.avg_pool2d_backward(np.zeros((1, 1, 2, 2), np.float32), (1, 4, 4), 2)
    with pytest.raises(ValueError, match="3-D"):
        avgpool.avg_pool2d_backward(np.zeros((2, 2), np.float32), (4, 4), 2)


def test_runtime_failures_are_runtime_errors():
    p = _lib.make_params((1, 1, 4, 4), (2, 2), (1, 1), (0, 0), False, True, None, _lib.DTYPE_F32,
                         _lib.LAYOUT_NCHW, _lib.BACKEND_CPU, _lib.NUMERICS_FAST)
    with pytest.raises(RuntimeError) as info:
        _lib.Plan(p, backward_impl="cpu:backward_broadcast")  # overlapping windows: only the gather takes them
    assert isinstance(info.value, avgpool.UnsupportedError) and not isinstance(info.value, ValueError)
    assert str(info.value).startswith("unsupported: cpu:backward_broadcast needs stride >= kernel")


# ---- layouts and dtypes ------------------------------------------------------------------------------
def test_nhwc_input_gives_nhwc_output_with_the_same_values():
    x = rand(2, 5, 9, 7)
    xl = nhwc(x)
    assert not xl.flags.c_contiguous
    for numerics in ("fast", "pytorch"):
        got = avgpool.avg_pool2d(xl, 3, 2, 1, True, False, numerics=numerics)
        want = avgpool.avg_pool2d(x, 3, 2, 1, True, False, numerics=numerics)
        assert got.strides[1] == 4 and got.strides[3] == 5 * 4, "the result is channels-last too"
        g = rand(*want.shape)
        gin = avgpool.avg_pool2d_backward(nhwc(g), x.shape, 3, 2, 1, True, False, numerics=numerics)
        gin_want = avgpool.avg_pool2d_backward(g, x.shape, 3, 2, 1, True, False, numerics=numerics)
        assert gin.strides[1] == 4
        if numerics == "pytorch":  # one summation order in both layouts
            assert len(bitwise_mismatches(got, want)) == 0
            assert len(bitwise_mismatches(gin, gin_want)) == 0
        else:
            assert np.allclose(got, want, rtol=1e-6, atol=1e-7)
            assert np.allclose(gin, gin_want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("make", [
    lambda x: x[:, :, ::-1, :][:, :, ::-1, :].copy(order="F"),     # Fortran order
    lambda x: np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 3)))[..., :x.shape[3]],  # padded rows
    lambda x: x.astype(x.dtype.newbyteorder(">")),                 # byte-swapped
    lambda x: np.frombuffer(b"\0" + x.tobytes(), dtype=x.dtype, offset=1).reshape(x.shape),  # unaligned
])
def test_other_strides_and_byte_orders_are_copied(make):
    x = rand(2, 3, 8, 9)
    y = make(x)
    assert np.array_equal(y, x)
    got = avgpool.avg_pool2d(y, 3, 2, 1, numerics="pytorch")
    assert got.dtype == np.float32 and got.flags.c_contiguous
    assert len(bitwise_mismatches(got, avgpool.avg_pool2d(x, 3, 2, 1, numerics="pytorch"))) == 0


def test_bfloat16_with_ml_dtypes():
    if BF16 is None:
        pytest.skip("ml_dtypes is not installed: no bfloat16 numpy arrays")
    x = rand(2, 3, 8, 8).astype(BF16)
    got = avgpool.avg_pool2d(x, 3, 1, 1, numerics="pytorch")
    assert got.dtype == BF16
    want = model(x, 3, 1, 1).astype(BF16)
    assert len(bitwise_mismatches(got, want)) == 0


# ---- the plan cache --------------------------------------------------------------------------------
@pytest.fixture
def fresh_cache():
    before = avgpool.plan_cache_info().capacity
    avgpool.clear_plan_cache()
    yield
    avgpool.set_plan_cache_capacity(before)
    avgpool.clear_plan_cache()


def test_plan_cache_hits_misses_and_lru(fresh_cache):
    avgpool.set_plan_cache_capacity(2)
    a, b, c = rand(1, 1, 4, 4), rand(1, 1, 6, 6), rand(1, 1, 8, 8)
    avgpool.avg_pool2d(a, 2)
    avgpool.avg_pool2d(a, 2)
    assert avgpool.plan_cache_info()[:3] == (1, 1, 1)
    avgpool.avg_pool2d(b, 2)
    avgpool.avg_pool2d(a, 2)  # a is now the most recent
    avgpool.avg_pool2d(c, 2)  # evicts b
    assert avgpool.plan_cache_info().size == 2
    hits = avgpool.plan_cache_info().hits
    avgpool.avg_pool2d(a, 2)
    assert avgpool.plan_cache_info().hits == hits + 1
    avgpool.avg_pool2d(b, 2)
    assert avgpool.plan_cache_info().hits == hits + 1  # b was evicted: a miss
    # Every key part tells plans apart: dtype, layout, numerics, backend, parameters.
    avgpool.set_plan_cache_capacity(100)
    avgpool.clear_plan_cache()
    for x in (a, a.astype(np.float64), nhwc(rand(1, 2, 4, 4))):
        for numerics in ("fast", "pytorch"):
            for backend in ("cpu", "reference"):
                avgpool.avg_pool2d(x, 2, numerics=numerics, backend=backend)
                avgpool.avg_pool2d(x, 2, 1, numerics=numerics, backend=backend)
    assert avgpool.plan_cache_info().size == 3 * 2 * 2 * 2
    avgpool.clear_plan_cache()
    assert avgpool.plan_cache_info() == (0, 0, 0, 100)


def test_plan_cache_capacity_zero_still_works(fresh_cache):
    avgpool.set_plan_cache_capacity(0)
    x = rand(1, 2, 6, 6)
    assert np.array_equal(avgpool.avg_pool2d(x, 3, numerics="pytorch"), model(x, 3))
    assert avgpool.plan_cache_info().size == 0
    with pytest.raises(ValueError):
        avgpool.set_plan_cache_capacity(-1)


def test_plan_cache_under_threads(fresh_cache):
    """Threads share a cache small enough that plans are evicted while other
    threads execute them; every result must still be right."""
    avgpool.set_plan_cache_capacity(3)
    shapes = [(2, 3, h, w) for h, w in [(8, 8), (9, 7), (16, 5), (6, 12), (11, 11), (7, 9)]]
    inputs = [rand(*s) for s in shapes]
    configs = [(2, None, 0), (3, 2, 1), (3, 1, 1)]
    expected = {(i, j, n): avgpool.avg_pool2d(x, *cfg, numerics=n)
                for i, x in enumerate(inputs) for j, cfg in enumerate(configs) for n in ("fast", "pytorch")}
    errors = []
    barrier = threading.Barrier(8)

    def work(seed):
        rng = np.random.default_rng(seed)
        barrier.wait()
        try:
            for _ in range(300):
                i, j = rng.integers(len(inputs)), rng.integers(len(configs))
                n = ("fast", "pytorch")[rng.integers(2)]
                got = avgpool.avg_pool2d(inputs[i], *configs[j], numerics=n)
                if not np.array_equal(got, expected[(i, j, n)]):
                    errors.append(f"thread {seed}: wrong result for input {i}, config {j}, {n}")
                if rng.integers(10) == 0:
                    g = avgpool.avg_pool2d_backward(got, inputs[i].shape, *configs[j], numerics=n)
                    if g.shape != inputs[i].shape:
                        errors.append(f"thread {seed}: backward shape {g.shape}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"thread {seed}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, "\n".join(errors[:10])
    info = avgpool.plan_cache_info()
    assert info.size <= 3 and info.hits + info.misses >= 8 * 300


def test_plan_cache_thread_errors_stay_per_thread(fresh_cache):
    """Each thread reads its own library message."""
    messages = {}

    def bad(i):
        try:
            if i % 2:
                avgpool.avg_pool2d(rand(1, 1, 8, 8), 3, padding=2)
            else:
                avgpool.avg_pool2d(rand(1, 1, 8, 8), 3, divisor_override=-i - 1)
        except ValueError as e:
            messages[i] = str(e)

    threads = [threading.Thread(target=bad, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, m in messages.items():
        want = ("padding_h (2) must be at most kernel_h / 2 (1)" if i % 2
                else f"divisor_override ({-i - 1}) must be 0 (none) or positive")
        assert m == want
    assert len(messages) == 16


# ---- the library, the package, imports ---------------------------------------------------------------
def test_library_information():
    assert avgpool.__version__ == "%d.%d.%d" % avgpool.library_version()
    assert {"cpu", "reference"} <= set(avgpool.backends())
    forward, backward = avgpool.impl_names("forward"), avgpool.impl_names("backward")
    assert "reference" in forward and "reference_backward" in backward
    assert sorted(forward + backward) == sorted(avgpool.impl_names())
    assert os.path.exists(avgpool.library_path)


def _python(code, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)


def test_import_does_not_import_torch():
    r = _python("import sys, avgpool, numpy as np; avgpool.avg_pool2d(np.ones((1, 1, 2, 2), np.float32), 2); "
                "print('torch' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_avgpool_library_variable_is_honoured():
    r = _python("import avgpool; print(avgpool.library_path)", AVGPOOL_LIBRARY=avgpool.library_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == avgpool.library_path
    r = _python("import avgpool", AVGPOOL_LIBRARY="/nonexistent/libavgpool.so")
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "AVGPOOL_LIBRARY" in r.stderr and "/nonexistent/libavgpool.so" in r.stderr


@pytest.mark.parametrize("sizes, strides, channels_last", [
    ((2, 3, 4, 5), (60, 20, 5, 1), False),    # contiguous
    ((2, 3, 4, 5), (60, 1, 15, 3), True),     # channels_last
    ((2, 1, 4, 5), (20, 20, 5, 1), False),    # C == 1, contiguous
    ((2, 1, 4, 5), (20, 1, 5, 1), True),      # C == 1, channels_last strides
    ((3, 1, 1, 1), (1, 1, 1, 1), False),      # N111 contiguous
    ((3, 4, 1, 1), (4, 1, 1, 1), False),      # N C 1 1 contiguous
    ((3, 4, 1, 1), (4, 1, 4, 4), True),       # N C 1 1 channels_last
    ((4, 1, 6, 1), (6, 1, 1, 1), True),       # N1H1 with channels_last strides
    ((4, 1, 6, 1), (6, 6, 1, 1), False),      # N1H1 contiguous
    ((1, 5, 1, 7), (35, 7, 7, 1), False),     # 1C1W contiguous
    ((1, 7, 1, 5), (35, 1, 7, 7), False),     # 1C1W transposed (1, 3): not channels_last
    ((2, 3, 4, 5), (60, 0, 5, 1), False),     # zero channel stride
    ((0, 3, 4, 5), (60, 1, 15, 3), False),    # an empty dimension
    ((2, 3, 4, 5), (1, 2, 30, 6), False),     # N fastest
])
def test_channels_last_rule(sizes, strides, channels_last):
    """PyTorch's rule for channels_last-like strides (the memory format of
    avgpool.torch's outputs)."""
    from avgpool import _core
    assert _core.channels_last_strides(sizes, strides) is channels_last

"""PyTorch's golden outputs through avgpool.avg_pool2d on numpy arrays: every
case, both numerics, every dtype, both layouts, the CPU backend and the
reference."""
import numpy as np
import pytest

import avgpool
from avgpool import _core
from helpers import BF16, bitwise_mismatches, forward_golden, nhwc, pool_model, within_bound

CASES, REJECTED = forward_golden()
BACKENDS = ("cpu", "reference")


def test_golden_file_loaded():
    assert len(CASES) == 163
    assert len(REJECTED) == 6
    assert CASES[0].name == "seedlike_k11_s11"


def _layouts(x):
    yield "nchw", x
    yield "nhwc", nhwc(x)


def _window_terms(case):
    kh, kw = case.params[0], case.params[1]
    return min(kh, case.shape[2]) * min(kw, case.shape[3])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_forward_golden_float32_float64(case):
    kw = case.kwargs()
    terms = _window_terms(case)
    mean_abs = pool_model(np.abs(case.input.astype(np.float64)), **kw, acc=np.float64)
    for backend in BACKENDS:
        for layout, x32 in _layouts(case.input):
            where = f"{backend} {layout}"
            got = avgpool.avg_pool2d(x32, **kw, numerics="pytorch", backend=backend)
            assert got.shape == case.out_dims and got.dtype == np.float32
            bad = bitwise_mismatches(got, case.out32)
            assert len(bad) == 0, f"{where} pytorch f32: {len(bad)} differ from PyTorch, first at {bad[0]}"

            got = avgpool.avg_pool2d(x32, **kw, numerics="fast", backend=backend)
            bad = within_bound(got, case.out, terms, mean_abs, np.float32)
            assert len(bad) == 0, f"{where} fast f32: {len(bad)} outside the bound, first at {bad[0]}"

            x64 = x32.astype(np.float64)
            got = avgpool.avg_pool2d(x64, **kw, numerics="pytorch", backend=backend)
            assert got.dtype == np.float64
            bad = bitwise_mismatches(got, case.out)
            assert len(bad) == 0, f"{where} pytorch f64: {len(bad)} differ from PyTorch, first at {bad[0]}"

            got = avgpool.avg_pool2d(x64, **kw, numerics="fast", backend=backend)
            with np.errstate(invalid="ignore"):
                close = np.isclose(got, case.out, rtol=1e-12, atol=1e-300, equal_nan=True)
            assert close.all(), f"{where} fast f64: {np.count_nonzero(~close)} not within 1e-12"


HALF_TYPES = [np.dtype(np.float16)] + ([BF16] if BF16 is not None else [])


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
def test_forward_golden_half(dtype):
    """float16/bfloat16: pytorch numerics bitwise equal to PyTorch's rule (a
    float accumulator, one division, one rounding) as modelled in numpy;
    fast numerics within the bound of the exact average of the same inputs."""
    failures = []
    for case in CASES:
        kw = case.kwargs()
        with np.errstate(over="ignore"):  # large_magnitude cases overflow float16 to Inf
            xh = case.input.astype(dtype)
        want = pool_model(xh, **kw, acc=np.float32).astype(dtype)
        exact = pool_model(xh.astype(np.float64), **kw, acc=np.float64)
        mean_abs = pool_model(np.abs(xh.astype(np.float64)), **kw, acc=np.float64)
        for backend in BACKENDS:
            for layout, x in _layouts(xh):
                got = avgpool.avg_pool2d(x, **kw, numerics="pytorch", backend=backend)
                assert got.dtype == dtype
                bad = bitwise_mismatches(got, want)
                if len(bad):
                    failures.append(f"{case.name} {backend} {layout} pytorch: {len(bad)} differ")
                got = avgpool.avg_pool2d(x, **kw, numerics="fast", backend=backend)
                bad = within_bound(got, exact, _window_terms(case), mean_abs, dtype)
                if len(bad):
                    failures.append(f"{case.name} {backend} {layout} fast: {len(bad)} outside the bound")
    assert not failures, "\n".join(failures[:20])


def test_model_matches_golden():
    """The numpy model itself reproduces PyTorch's float32 and float64
    outputs bit for bit (so it can stand in for PyTorch on half types)."""
    for case in CASES:
        kw = case.kwargs()
        assert len(bitwise_mismatches(pool_model(case.input, **kw), case.out32)) == 0, case.name
        assert len(bitwise_mismatches(pool_model(case.input.astype(np.float64), **kw, acc=np.float64),
                                      case.out)) == 0, case.name


@pytest.mark.parametrize("rejected", REJECTED, ids=str)
def test_rejected_configurations_raise(rejected):
    n, c, h, w, kh, kw, sh, sw, ph, pw, ceil = rejected
    x = np.zeros((n, c, h, w), dtype=np.float32)
    for backend in BACKENDS:
        with pytest.raises(ValueError) as info:
            avgpool.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw), bool(ceil), backend=backend)
        assert isinstance(info.value, avgpool.InvalidArgumentError)
        assert str(info.value), "the library's message is empty"


def test_output_size_formula_matches_library():
    """The formula the torch fake implementations use for symbolic sizes
    agrees with the library on every golden case and a sweep of sizes."""
    for case in CASES:
        kh, kw, sh, sw, ph, pw, ceil = case.params[:7]
        h, w = case.shape[2:]
        assert (_core.output_size(h, kh, sh, ph, ceil), _core.output_size(w, kw, sw, pw, ceil)) == \
            case.out_dims[2:], case.name
    for k in range(1, 6):
        for s in range(1, 5):
            for p in range(0, k // 2 + 1):
                for ceil in (False, True):
                    for size in range(max(1, k - 2 * p), 14):
                        x = np.zeros((1, 1, size, 1), dtype=np.float32)
                        got = avgpool.avg_pool2d(x, (k, 1), (s, 1), (p, 0), ceil, backend="reference")
                        assert got.shape[2] == _core.output_size(size, k, s, p, ceil), (size, k, s, p, ceil)

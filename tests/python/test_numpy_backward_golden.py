"""PyTorch's golden gradients through avgpool.avg_pool2d_backward on numpy
arrays: every case, both numerics, every dtype, both layouts, the CPU
backend and the reference."""
import numpy as np
import pytest

import avgpool
from helpers import BF16, backward_golden, bitwise_mismatches, nhwc, within_bound

CASES = backward_golden()
BACKENDS = ("cpu", "reference")


def test_backward_golden_file_loaded():
    assert len(CASES) == 176
    assert CASES[0].name == "seedlike_k11_s11"


def _dtypes(case):
    yield np.dtype(np.float64), case.gin
    yield np.dtype(np.float32), case.gin32
    yield np.dtype(np.float16), case.gin16
    if BF16 is not None:
        yield BF16, case.ginbf16.astype(BF16)


def _terms(case):
    kh, kw, sh, sw = case.params[:4]
    oh, ow = case.out_dims[2:]
    return min(-(-kh // sh), oh) * min(-(-kw // sw), ow)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backward_golden(case):
    kw = case.kwargs()
    gout = case.arrays["gout"].reshape(case.out_dims)
    # sum |g / d| over the windows holding each element: the bound's scale.
    scale = avgpool.avg_pool2d_backward(np.abs(gout.astype(np.float64)), case.shape, **kw,
                                        numerics="fast", backend="reference")
    for dtype, want in _dtypes(case):
        with np.errstate(over="ignore"):  # large_magnitude cases overflow float16 to Inf
            g = gout.astype(dtype)  # float16/bfloat16: nearest even, as PyTorch's .half()/.bfloat16()
        for backend in BACKENDS:
            for layout, gl in (("nchw", g), ("nhwc", nhwc(g))):
                where = f"{backend} {layout} {dtype}"
                got = avgpool.avg_pool2d_backward(gl, case.shape, **kw, numerics="pytorch", backend=backend)
                assert got.shape == case.shape and got.dtype == dtype
                if layout == "nhwc" and not gl.flags.c_contiguous:
                    assert got.strides[1] == dtype.itemsize, "grad_input takes grad_output's layout"
                bad = bitwise_mismatches(got, want)
                assert len(bad) == 0, f"{where} pytorch: {len(bad)} differ from PyTorch, first at {bad[0]}"

                got = avgpool.avg_pool2d_backward(gl, case.shape, **kw, numerics="fast", backend=backend)
                exact = case.gin
                if dtype.itemsize == 2:  # the exact gradient of the rounded grad_output
                    exact = avgpool.avg_pool2d_backward(g.astype(np.float64), case.shape, **kw,
                                                        numerics="fast", backend="reference")
                bad = within_bound(got, exact, _terms(case) + 2, scale, np.float32 if dtype.itemsize > 2 else dtype)
                assert len(bad) == 0, f"{where} fast: {len(bad)} outside the bound, first at {bad[0]}"

"""avgpool.torch against torch.nn.AvgPool2d: bitwise forward and backward in
pytorch numerics on CPU and CUDA tensors, both memory formats, every dtype;
gradcheck, opcheck, torch.compile without graph breaks, CUDA streams and a
second device. Skipped, with the reason shown, where torch is not installed."""
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the PyTorch tests need it")
import torch.nn.functional as F  # noqa: E402

import avgpool  # noqa: E402
import avgpool.torch as apt  # noqa: E402

CUDA = torch.cuda.is_available() and "cuda" in avgpool.backends()
DEVICES = ["cpu"] + (["cuda"] if CUDA else [])
needs_cuda = pytest.mark.skipif(not CUDA, reason="no usable CUDA device (or libavgpool without its CUDA backend)")
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
FORMATS = {"nchw": torch.contiguous_format, "channels_last": torch.channels_last}
INT_VIEW = {torch.float32: torch.int32, torch.float64: torch.int64, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}
# (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
CONFIGS = [
    (11, None, 0, False, True, None),            # the seed problem's pooling
    (3, 2, 1, True, True, None),
    (3, 1, 1, False, False, None),
    ((2, 3), (1, 2), (1, 0), False, True, None),
    ((4, 2), (3, 1), (2, 1), True, False, None),
    (3, 2, 1, True, True, 5),
    (2, 2, 0, False, True, None),
]
SHAPE = (2, 5, 23, 29)


def cfg_id(cfg):
    return "k{}_s{}_p{}_{}{}{}".format(*(str(v).replace(" ", "") for v in cfg[:3]), "ceil" if cfg[3] else "floor",
                                       "" if cfg[4] else "_excl", f"_div{cfg[5]}" if cfg[5] else "")


def assert_bitwise(got, want, what=""):
    assert got.shape == want.shape and got.dtype == want.dtype, what
    a = got.detach().contiguous().view(INT_VIEW[got.dtype]).cpu()
    b = want.detach().contiguous().view(INT_VIEW[want.dtype]).cpu()
    differ = a != b
    if differ.any():
        first = tuple(int(i) for i in differ.nonzero()[0])
        raise AssertionError(f"{what}: {int(differ.sum())} of {differ.numel()} elements differ bitwise; first at "
                             f"{first}: {got.detach()[first].item()!r} vs PyTorch {want.detach()[first].item()!r}")


def make_input(device, dtype, fmt, shape=SHAPE, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    return x.to(device).contiguous(memory_format=fmt)


def torch_forward(x, cfg):
    return F.avg_pool2d(x, *cfg)


def torch_grad(x, g, cfg):
    """PyTorch's grad_input, from the kernel avgpool's pytorch numerics
    follow: PyTorch's CUDA channels_last backward misplaces windows when
    there is padding (PyTorch 2.5-2.11), so CUDA uses the NCHW kernel; PyTorch's
    CPU float16/bfloat16 backward rounds after every addition where its CUDA
    kernel (and avgpool, on every device) sums in float, so CPU half types
    compare with the CUDA kernel too. None when that needs CUDA and there is none."""
    device = x.device
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.bfloat16):
        if not torch.cuda.is_available():
            return None
        x, g = x.cuda(), g.cuda()
    if x.device.type == "cuda":
        x = x.contiguous()
    xr = x.detach().clone().requires_grad_()
    F.avg_pool2d(xr, *cfg).backward(g)
    return xr.grad.to(device)


def our_grad(x, g, cfg, numerics="pytorch", module=True):
    xr = x.detach().clone().requires_grad_()
    if module:
        pool = apt.AvgPool2d(*cfg, numerics=numerics)
        y = pool(xr)
    else:
        y = apt.avg_pool2d(xr, *cfg, numerics=numerics)
    y.backward(g)
    return y, xr.grad


# ---- bitwise against torch.nn.AvgPool2d ---------------------------------------------------------------
@pytest.mark.parametrize("cfg", CONFIGS, ids=cfg_id)
@pytest.mark.parametrize("fmt", list(FORMATS), ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("device", DEVICES)
def test_bitwise_forward_and_backward(device, dtype, fmt, cfg):
    x = make_input(device, dtype, FORMATS[fmt])
    want = torch_forward(x, cfg)
    g = make_input(device, dtype, torch.contiguous_format, tuple(want.shape), seed=1)
    got, grad = our_grad(x, g, cfg)
    assert got.device == x.device
    assert_bitwise(got, want, "forward")
    assert got.stride() == want.stride(), "the output's memory format is PyTorch's"
    assert_bitwise(apt.avg_pool2d(x, *cfg, numerics="pytorch"), want, "functional forward")
    assert grad.stride() == x.stride(), "grad_input takes the input's memory format"
    want_grad = torch_grad(x, g, cfg)
    if want_grad is None:
        # Without CUDA, PyTorch's CPU half-type kernel (rounding after each
        # addition) is the only one at hand: close, not bitwise.
        torch.testing.assert_close(grad.float(), torch_grad(x.float(), g.float(), cfg), rtol=1e-2, atol=1e-3)
        return
    assert_bitwise(grad, want_grad, "backward")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).replace("torch.", ""))
@pytest.mark.parametrize("device", DEVICES)
def test_fast_numerics_within_the_float32_bound(device, dtype):
    for cfg in CONFIGS:
        for fmt in FORMATS.values():
            x = make_input(device, dtype, fmt)
            got = apt.avg_pool2d(x, *cfg)  # numerics="fast" is the default
            exact = torch_forward(x.double(), cfg)
            bound = torch_forward(x.double().abs(), cfg) * cfg_terms(cfg) * 2.0 ** -24 + ulp(exact, dtype)
            assert ((got.double() - exact).abs() <= bound).all(), (cfg, fmt)
            assert got.stride() == exact.stride()


def cfg_terms(cfg):
    k = cfg[0] if isinstance(cfg[0], tuple) else (cfg[0], cfg[0])
    return k[0] * k[1]


_DIGITS = {torch.float32: (24, -126), torch.float64: (53, -1022), torch.float16: (11, -14),
           torch.bfloat16: (8, -126)}


def ulp(v, dtype):
    """The spacing of dtype's numbers at |v| (v float64)."""
    digits, min_exp = _DIGITS[dtype]
    e = torch.frexp(v.abs()).exponent.clamp(min=min_exp + 1)
    return torch.ldexp(torch.ones_like(v), e - digits)


@pytest.mark.parametrize("device", DEVICES)
def test_unbatched_empty_and_strided_inputs(device):
    cfg = (3, 2, 1, True, False, None)
    x3 = make_input(device, torch.float32, torch.contiguous_format, (5, 17, 19))
    got, grad = our_grad(x3, torch.ones(5, 9, 10, device=device), cfg)
    assert got.shape == (5, 9, 10) and got.is_contiguous()
    assert_bitwise(got, torch_forward(x3, cfg), "3-D forward")
    assert_bitwise(grad, torch_grad(x3, torch.ones(5, 9, 10, device=device), cfg), "3-D backward")

    empty = torch.zeros(0, 5, 17, 19, device=device)
    assert apt.avg_pool2d(empty, *cfg).shape == torch_forward(empty, cfg).shape

    base = make_input(device, torch.float32, torch.contiguous_format, (2, 5, 34, 40))
    strided = base[:, :, ::2, 1::2]  # neither contiguous nor channels_last: copied, as PyTorch does
    want = torch_forward(strided, cfg)
    got = apt.avg_pool2d(strided, *cfg, numerics="pytorch")
    assert_bitwise(got, want, "strided forward")
    assert got.stride() == want.stride()

    # Ambiguous strides (C == 1; 1x1 planes) resolve as PyTorch resolves them.
    for shape in [(3, 1, 8, 8), (3, 4, 1, 1)]:
        for fmt in FORMATS.values():
            x = make_input(device, torch.float32, fmt, shape)
            k = 1 if shape[2] == 1 else 2
            assert apt.avg_pool2d(x, k).stride() == F.avg_pool2d(x, k).stride(), (shape, fmt)


def test_top_level_function_takes_tensors():
    x = make_input("cpu", torch.float32, torch.channels_last).requires_grad_()
    y = avgpool.avg_pool2d(x, 3, 2, 1, numerics="pytorch")
    assert isinstance(y, torch.Tensor)
    assert_bitwise(y, F.avg_pool2d(x, 3, 2, 1), "avgpool.avg_pool2d")
    y.sum().backward()
    g = avgpool.avg_pool2d_backward(torch.ones_like(y), x.shape, 3, 2, 1, numerics="pytorch")
    assert_bitwise(x.grad, g, "avgpool.avg_pool2d_backward")
    with pytest.raises(TypeError, match="out= is for numpy arrays"):
        avgpool.avg_pool2d(x, 3, out=torch.empty(1))


# ---- autograd -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("numerics", ["fast", "pytorch"])
def test_gradcheck_and_gradgradcheck_float64(device, numerics):
    for cfg in [(3, 2, 1, True, False, None), ((2, 3), (1, 2), (1, 0), False, True, None),
                (3, 2, 1, False, True, 4)]:
        for fmt in FORMATS.values():
            x = make_input(device, torch.float64, fmt, (2, 3, 7, 8)).requires_grad_()
            fn = lambda t: apt.avg_pool2d(t, *cfg, numerics=numerics)  # noqa: E731
            assert torch.autograd.gradcheck(fn, (x,))
            assert torch.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("device", DEVICES)
def test_backward_function_gradient_is_the_forward(device):
    cfg = (3, 2, 1, True, True, None)
    g = make_input(device, torch.float64, torch.contiguous_format, (2, 3, 4, 5)).requires_grad_()
    gin = apt.avg_pool2d_backward(g, (2, 3, 7, 9), *cfg)
    assert gin.shape == (2, 3, 7, 9)
    v = make_input(device, torch.float64, torch.contiguous_format, (2, 3, 7, 9), seed=3)
    (gin * v).sum().backward()
    torch.testing.assert_close(g.grad, F.avg_pool2d(v, *cfg), rtol=1e-12, atol=1e-12)


# ---- the custom operators -------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_opcheck(device):
    for fmt in FORMATS.values():
        for dtype in (torch.float32, torch.float16):
            for numerics in ("fast", "pytorch"):
                x = make_input(device, dtype, fmt, (2, 3, 9, 10)).requires_grad_()
                args = (x, [3, 3], [2, 2], [1, 1], True, False, None, numerics, "auto")
                torch.library.opcheck(torch.ops.avgpool.avg_pool2d.default, args)
                out = torch.ops.avgpool.avg_pool2d.default(*args)
                g = make_input(device, dtype, torch.contiguous_format, tuple(out.shape), seed=2).requires_grad_()
                bargs = (g, [2, 3, 9, 10], [3, 3], [2, 2], [1, 1], True, False, None, fmt is torch.channels_last,
                         numerics, "auto")
                torch.library.opcheck(torch.ops.avgpool.avg_pool2d_backward.default, bargs)
    x3 = make_input(device, torch.float32, torch.contiguous_format, (3, 9, 10)).requires_grad_()
    torch.library.opcheck(torch.ops.avgpool.avg_pool2d.default,
                          (x3, [2, 3], [1, 2], [1, 0], False, True, 3, "pytorch", "auto"))


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = apt.AvgPool2d(3, 2, 1, ceil_mode=True, numerics="pytorch")

    def forward(self, x):
        y = torch.relu(self.pool(self.conv(x)))
        return apt.avg_pool2d(y, 2, numerics="pytorch").flatten(1)


def _compile_backends(device):
    # aot_eager runs the fake implementations and the autograd formulas
    # through AOTAutograd without needing a compiler; inductor on CUDA.
    return ["aot_eager"] + (["inductor"] if device == "cuda" else [])


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_fullgraph(device):
    torch.manual_seed(0)
    net = SmallNet().to(device)
    for backend in _compile_backends(device):
        for dynamic in (False, True):
            torch._dynamo.reset()
            compiled = torch.compile(net, fullgraph=True, backend=backend, dynamic=dynamic)
            for shape in [(4, 3, 16, 16), (2, 3, 21, 18)]:
                x = torch.randn(shape, device=device, requires_grad=True)
                want = net(x)
                (gx_want,) = torch.autograd.grad(want.sum(), x)
                got = compiled(x)
                (gx,) = torch.autograd.grad(got.sum(), x)
                torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
                torch.testing.assert_close(gx, gx_want, rtol=1e-5, atol=1e-5)


def test_torch_compile_counts_no_graph_break():
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(SmallNet())(torch.randn(2, 3, 12, 12))
    assert explanation.graph_break_count == 0
    assert explanation.graph_count == 1


# ---- CUDA: streams and devices --------------------------------------------------------------------------------
@needs_cuda
def test_runs_on_the_current_stream():
    """The input is written on a side stream behind a long sleep; avgpool
    called on that stream must wait for it (the legacy default stream would
    not: PyTorch's side streams do not synchronize with it)."""
    cfg = (3, 2, 1, False, True, None)
    src = make_input("cuda", torch.float32, torch.contiguous_format)
    want = torch_forward(src, cfg)
    x = torch.zeros_like(src)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        x.copy_(src)
        got = apt.avg_pool2d(x, *cfg, numerics="pytorch")
        y = x.detach().clone().requires_grad_()
        apt.avg_pool2d(y, *cfg, numerics="pytorch").sum().backward()
    side.synchronize()
    assert_bitwise(got, want, "forward on a side stream")
    assert_bitwise(y.grad, torch_grad(src, torch.ones_like(want), cfg), "backward on a side stream")


@pytest.mark.skipif(not CUDA or torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_second_device():
    cfg = (3, 2, 1, True, False, None)
    for other, current in [(1, 0), (0, 1)]:
        with torch.cuda.device(current):
            x = make_input(f"cuda:{other}", torch.float32, torch.channels_last).requires_grad_()
            got = apt.avg_pool2d(x, *cfg, numerics="pytorch")
            got.sum().backward()
            assert torch.cuda.current_device() == current, "the caller's device is restored"
        assert got.device == x.device
        assert_bitwise(got, torch_forward(x.detach(), cfg), f"forward on cuda:{other}")
        assert_bitwise(x.grad, torch_grad(x.detach(), torch.ones_like(got), cfg), f"backward on cuda:{other}")
    # A side stream of device 1 while device 0 is current.
    x = make_input("cuda:1", torch.float32, torch.contiguous_format)
    side = torch.cuda.Stream(device=1)
    with torch.cuda.device(0), torch.cuda.stream(side):
        got = apt.avg_pool2d(x, *cfg, numerics="pytorch")
    side.synchronize()
    assert_bitwise(got, torch_forward(x, cfg), "forward on a device 1 side stream")


# ---- the module and errors ----------------------------------------------------------------------------------
def test_module_mirrors_torch_nn_avgpool2d():
    ours = inspect.signature(apt.AvgPool2d.__init__).parameters
    theirs = inspect.signature(torch.nn.AvgPool2d.__init__).parameters
    assert list(ours)[:len(theirs)] == list(theirs)
    for name, p in theirs.items():
        assert ours[name].default == p.default, name
    assert ours["numerics"].kind is inspect.Parameter.KEYWORD_ONLY
    m = apt.AvgPool2d(3, padding=1, numerics="pytorch")
    assert (m.kernel_size, m.stride, m.padding) == (3, 3, 1)
    assert "kernel_size=3, stride=3, padding=1" in repr(m) and "pytorch" in repr(m)
    assert m.state_dict() == {}
    t = torch.nn.AvgPool2d((3, 2), (1, 2), 1, True, False, 4)
    c = apt.AvgPool2d.from_torch(t, numerics="pytorch")
    x = make_input("cpu", torch.float32, torch.contiguous_format)
    assert_bitwise(c(x), t(x), "from_torch")
    with pytest.raises(ValueError, match="numerics"):
        apt.AvgPool2d(3, numerics="exact")


@pytest.mark.parametrize("device", DEVICES)
def test_errors(device):
    x = make_input(device, torch.float32, torch.contiguous_format)
    with pytest.raises(ValueError) as info:
        apt.avg_pool2d(x, 3, padding=2)
    assert str(info.value) == "padding_h (2) must be at most kernel_h / 2 (1)"
    assert isinstance(info.value, avgpool.InvalidArgumentError)
    with pytest.raises(ValueError, match="divisor_override must be non-zero"):
        apt.avg_pool2d(x, 3, divisor_override=0)
    with pytest.raises(TypeError, match="unsupported dtype"):
        apt.avg_pool2d(x.to(torch.int32), 3)
    with pytest.raises(ValueError, match="3-D"):
        apt.avg_pool2d(x[0, 0], 3)
    wrong = "cpu" if device == "cuda" else "cuda"
    with pytest.raises(ValueError, match="backend"):
        apt.avg_pool2d(x, 3, backend=wrong)
    with pytest.raises(ValueError, match="grad_output has shape"):
        apt.avg_pool2d_backward(torch.ones(2, 5, 3, 3, device=device), SHAPE, 3)
    if device == "cpu":
        assert_bitwise(apt.avg_pool2d(x, 3, numerics="pytorch", backend="reference"), torch_forward(x, (3,)),
                       "reference backend")


# ---- the KernelBench example -------------------------------------------------------------------------------------
def test_kernelbench_example_runs_small():
    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "kernelbench_level1_45.py"
    device = "cuda" if CUDA else "cpu"
    r = subprocess.run([sys.executable, str(example), "--batch", "2", "--channels", "3", "--size", "64",
                        "--device", device, "--repeat", "2"], capture_output=True, text=True,
                       env=dict(os.environ), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "outputs equal: True" in r.stdout
    assert "speedup" in r.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_repeated_calls_stay_exact(device):
    """Repeats take the plan cache's shortcut: each reads its own input, and
    inputs the plan cannot read in place (strided views) are made contiguous
    as on the first call; clearing the cache or capacity 0 drops it."""
    torch.manual_seed(5)
    avgpool.clear_plan_cache()
    try:
        for _ in range(2):
            for x in (torch.randn(2, 3, 9, 10, device=device),
                      torch.randn(2, 3, 9, 20, device=device)[..., ::2],
                      torch.randn(3, 9, 10, device=device),
                      torch.randn(2, 3, 9, 10, device=device).contiguous(memory_format=torch.channels_last)):
                for _ in range(3):
                    got = apt.avg_pool2d(x, 3, 2, 1, numerics="pytorch")
                    assert torch.equal(got, F.avg_pool2d(x, 3, 2, 1))
                    if x.dim() == 4:  # the input's memory format, as PyTorch's result has
                        cl = x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous()
                        assert got.is_contiguous(memory_format=torch.channels_last if cl else torch.contiguous_format)
            avgpool.set_plan_cache_capacity(0)
    finally:
        avgpool.set_plan_cache_capacity(256)
        avgpool.clear_plan_cache()

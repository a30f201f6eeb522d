#!/usr/bin/env python3
"""KernelBench level 1, problem 45 (2-D average pooling) with avgpool.

``Model``, ``get_inputs`` and ``get_init_inputs`` are the problem as
KernelBench states it: torch.nn.AvgPool2d(kernel_size=11) on a
16x64x2048x2048 float32 tensor. ``ModelNew`` is the same model on avgpool's
drop-in module. Run as a script, it checks that both give equal outputs
(bitwise in avgpool's "pytorch" numerics, within the float32 bound in
"fast") and prints the speedup, timed with CUDA events (the median of
--repeat runs after warm-up; wall-clock time on the CPU).

    python examples/kernelbench_level1_45.py                      # the seed problem, on the GPU
    python examples/kernelbench_level1_45.py --numerics fast
    python examples/kernelbench_level1_45.py --device cpu --batch 1 --channels 4 --size 512
"""
import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn

import avgpool.torch


class Model(nn.Module):
    """Simple model that performs 2D Average Pooling."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super(Model, self).__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11


def get_inputs():
    x = torch.randn(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size]


class ModelNew(nn.Module):
    """Model on avgpool: the same arguments, and avgpool's numerics."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, numerics: str = "pytorch"):
        super(ModelNew, self).__init__()
        self.avg_pool = avgpool.torch.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding,
                                                numerics=numerics)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.avg_pool(x)


def time_ms(fn, x, device, repeat):
    for _ in range(3):
        fn(x)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        pairs = []
        for _ in range(repeat):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(x)
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize(device)
        return statistics.median(s.elapsed_time(e) for s, e in pairs)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv=None):
    global batch_size, channels, height, width, kernel_size
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--batch", type=int, default=batch_size)
    ap.add_argument("--channels", type=int, default=channels)
    ap.add_argument("--size", type=int, default=None, help="height and width (default %d)" % height)
    ap.add_argument("--kernel", type=int, default=kernel_size)
    ap.add_argument("--numerics", choices=["pytorch", "fast"], default="pytorch")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    batch_size, channels, kernel_size = args.batch, args.channels, args.kernel
    if args.size is not None:
        height = width = args.size
    device = torch.device(args.device)

    torch.manual_seed(0)
    model = Model(*get_init_inputs()).to(device)
    model_new = ModelNew(*get_init_inputs(), numerics=args.numerics).to(device)
    with device:  # the inputs made on the device itself (17 GB for the seed problem)
        x = get_inputs()[0]
    with torch.no_grad():
        want = model(x)
        got = model_new(x)
        if args.numerics == "pytorch":
            equal = torch.equal(got, want)
        else:  # any summation order: within the float32 bound of a k*k sum
            bound = kernel_size ** 2 * 2.0 ** -24 * model(x.abs()) + torch.finfo(x.dtype).eps * want.abs()
            equal = bool(((got - want).abs() <= bound).all())
        t_torch = time_ms(model, x, device, args.repeat)
        t_new = time_ms(model_new, x, device, args.repeat)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"input {tuple(x.shape)} {x.dtype}, kernel {kernel_size}, on {name}; avgpool numerics {args.numerics}")
    print(f"outputs equal: {equal}" + (" (bitwise)" if args.numerics == "pytorch" else " (within the float32 bound)"))
    print(f"torch.nn.AvgPool2d {t_torch:.3f} ms, avgpool {t_new:.3f} ms: speedup {t_torch / t_new:.2f}x "
          f"(median of {args.repeat})")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())

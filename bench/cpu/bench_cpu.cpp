// CPU benchmarks: the CPU cases of docs/performance.md (CPU section), float32.
//
// Absolute times drift with the host; only ratios measured in the same run
// mean anything. So each `alternate/<case>/<layout>` benchmark runs, in every
// round, a STREAM-style read of the input, a copy of it, avgpool (fast and
// pytorch numerics) and oneDNN in the same layout, one after the other, and
// reports medians of each and the ratios:
//   of_read  = read_ms / avgpool_ms   (fraction of the read ceiling)
//   vs_copy  = avgpool_ms / copy_ms
//   vs_dnnl  = dnnl_ms / avgpool_ms   (speed-up over oneDNN)
// The iteration time Google Benchmark prints is avgpool's (fast numerics).
// `plain_loop/<case>` is the obvious OpenMP loop (NCHW), run on its own.
//
// The backward: each `backward/<case>/<layout>` benchmark runs, every
// round and in a rotating order, a write pass over grad_input (memset, in
// parallel: the write ceiling), avgpool's backward (fast and pytorch
// numerics) and oneDNN's pooling backward (a forward_training descriptor
// as its hint, the same layout), and reports medians and the ratios
//   of_write = write_ms / avgpool_ms   (fraction of the write ceiling)
//   vs_dnnl  = dnnl_ms / avgpool_ms    (speed-up over oneDNN)
//
// Full runs take minutes and several GB: run by hand, e.g.
//   build-cpu/bench/cpu/avgpool_bench_cpu --benchmark_filter=seed
#include <benchmark/benchmark.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "dnnl_pool.h"
#include "memory_passes.h"
#include "plain_loop.h"
#include "tensor_util.h"

namespace {

using avgpool_bench::Buffer;
using avgpool_bench::median;
using avgpool_bench::now_ms;

struct Case {
  const char* name;
  int64_t n, c, h, w, k, s, p;
  int ceil_mode, include_pad;
  int rounds;
  int64_t kw = 0, sw = 0;  // when the window is not square: kernel_w, stride_w (0: k, s)
};

const Case kCases[] = {
    {"seed_like_2x64x2048x2048_k11", 2, 64, 2048, 2048, 11, 11, 0, 0, 1, 7},
    {"k3s1p1_32x256x56x56", 32, 256, 56, 56, 3, 1, 1, 0, 1, 15},
    {"k3s1p1_exclude_pad", 32, 256, 56, 56, 3, 1, 1, 0, 0, 15},
    {"k2s2_64x128x112x112", 64, 128, 112, 112, 2, 2, 0, 0, 1, 11},
    {"k3s2p1_ceil_64x64x112x112", 64, 64, 112, 112, 3, 2, 1, 1, 1, 15},
    {"global_k7_256x2048x7x7", 256, 2048, 7, 7, 7, 7, 0, 0, 1, 21},
    {"k5s1p2_4x64x1024x1024", 4, 64, 1024, 1024, 5, 1, 2, 0, 1, 3},
};

// Large windows (forward only, alternate/large/...): global pooling of big
// planes, few outputs (fewer than cores), windows much larger than the
// stride, and a tall column window. No padding, padding counted.
struct LargeCase {
  const char* name;
  int64_t n, c, h, w, kh, kw, sh, sw;
  int rounds;
  Case as_case() const { return Case{name, n, c, h, w, kh, sh, 0, 0, 1, rounds, kw, sw}; }
};

const LargeCase kLargeCases[] = {
    {"global_16x64x256x256", 16, 64, 256, 256, 256, 256, 256, 256, 9},
    {"global_64x3x1024x1024", 64, 3, 1024, 1024, 1024, 1024, 1024, 1024, 5},
    {"global_1x1x4096x4096", 1, 1, 4096, 4096, 4096, 4096, 4096, 4096, 15},
    {"global_1x3x2048x2048", 1, 3, 2048, 2048, 2048, 2048, 2048, 2048, 15},
    {"global_32x512x64x64", 32, 512, 64, 64, 64, 64, 64, 64, 9},
    {"k32s16_8x64x512x512", 8, 64, 512, 512, 32, 32, 16, 16, 5},
    {"k64s32_8x64x512x512", 8, 64, 512, 512, 64, 64, 32, 32, 5},
    {"k4096x1s1_1x1x4096x4096", 1, 1, 4096, 4096, 4096, 1, 1, 1, 15},
};

avgpool_params params_of(const Case& c, avgpool_layout layout, avgpool_numerics numerics) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = c.n; p.c = c.c; p.h = c.h; p.w = c.w;
  p.kernel_h = c.k;
  p.kernel_w = c.kw > 0 ? c.kw : c.k;
  p.stride_h = c.s;
  p.stride_w = c.sw > 0 ? c.sw : c.s;
  p.padding_h = p.padding_w = c.p;
  p.ceil_mode = c.ceil_mode;
  p.count_include_pad = c.include_pad;
  p.layout = layout;
  p.numerics = numerics;
  p.backend = AVGPOOL_BACKEND_CPU;
  return p;
}

// One case in one direction: its plans in fast and pytorch numerics, their
// implementations (label: "fast (pytorch: other)" when they differ), its
// sizes, a random float32 input (src, or grad_output for the backward) and,
// when built with oneDNN, oneDNN's primitive on that input (warmed up).
// open() is false, and the benchmark skipped with the message, when any of
// it fails.
struct CaseRun {
  avgpool_plan *fast = nullptr, *exact = nullptr;
  int64_t ns = 0, nd = 0, dims[4] = {0, 0, 0, 0};
  std::string label;
  std::unique_ptr<Buffer> input, dnnl_out;
  std::unique_ptr<avgpool_bench::DnnlPool> dnnl;

  CaseRun(const Case& c, avgpool_layout layout, bool backward) {
    const avgpool_params fast_params = params_of(c, layout, AVGPOOL_NUMERICS_FAST);
    const avgpool_params exact_params = params_of(c, layout, AVGPOOL_NUMERICS_PYTORCH);
    auto impl_of = backward ? avgpool_plan_backward_impl_name : avgpool_plan_impl_name;
    const char *impl = nullptr, *impl_exact = nullptr;
    if (avgpool_plan_create(&fast_params, &fast) != AVGPOOL_SUCCESS ||
        avgpool_plan_create(&exact_params, &exact) != AVGPOOL_SUCCESS || impl_of(fast, &impl) != AVGPOOL_SUCCESS ||
        impl_of(exact, &impl_exact) != AVGPOOL_SUCCESS) {
      error = avgpool_last_error_message();
      return;
    }
    avgpool_plan_sizes(fast, &ns, &nd);
    avgpool_plan_output_dims(fast, dims);
    label = impl;
    if (strcmp(impl, impl_exact) != 0) label += std::string(" (pytorch: ") + impl_exact + ")";
    const int64_t in_n = backward ? nd : ns;
    input = std::make_unique<Buffer>(in_n * 4);
    avgpool_support::fill_random(AVGPOOL_DTYPE_F32, input->data(), in_n, backward ? 2 : 1, -1.0, 1.0);
#if defined(AVGPOOL_BENCH_WITH_DNNL)
    dnnl_out = std::make_unique<Buffer>((backward ? ns : nd) * 4);
    if (backward)
      dnnl = std::make_unique<avgpool_bench::DnnlBackward>(fast_params, dims[2], dims[3], input->data(), dnnl_out->data());
    else
      dnnl = std::make_unique<avgpool_bench::DnnlForward>(fast_params, dims[2], dims[3], input->data(), dnnl_out->data());
    dnnl->run();  // warm-up (JIT)
#endif
  }
  ~CaseRun() {
    avgpool_plan_destroy(fast);
    avgpool_plan_destroy(exact);
  }
  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;
  bool open(benchmark::State& state) const {
    if (error.empty()) return true;
    state.SkipWithError(error.c_str());
    return false;
  }
  // The label with oneDNN's implementation; counters dnnl_ms and vs_dnnl
  // (oneDNN's time over ours) when oneDNN ran.
  void finish(benchmark::State& state, double ours_ms, const std::vector<double>& dnnl_ms) const {
    std::string text = label;
    if (dnnl) {
      state.counters["dnnl_ms"] = median(dnnl_ms);
      state.counters["vs_dnnl"] = median(dnnl_ms) / ours_ms;
      text += " | dnnl " + dnnl->impl();
    }
    state.SetLabel(text);
  }

 private:
  std::string error;
};

void BM_backward(benchmark::State& state, Case c, avgpool_layout layout) {
  const CaseRun run(c, layout, true);
  if (!run.open(state)) return;
  const int64_t ns = run.ns;
  const void* g = run.input->data();
  Buffer gin(ns * 4), gin_exact(ns * 4), written(ns * 4);
  avgpool_plan_backward(run.fast, g, gin.data(), nullptr);  // warm-up
  avgpool_plan_backward(run.exact, g, gin_exact.data(), nullptr);
  std::vector<double> t_write, t_ours, t_exact, t_dnnl;
  // The contenders in a different order each round: whatever runs first
  // after another big write pays for that one's write-backs.
  std::vector<std::pair<std::vector<double>*, std::function<void()>>> contenders = {
      {&t_write, [&] { avgpool_bench::write_pass(written.data(), ns * 4); }},
      {&t_ours, [&] { avgpool_plan_backward(run.fast, g, gin.data(), nullptr); }},
      {&t_exact, [&] { avgpool_plan_backward(run.exact, g, gin_exact.data(), nullptr); }},
  };
  if (run.dnnl) contenders.push_back({&t_dnnl, [&] { run.dnnl->run(); }});
  size_t round = 0;
  for (auto _ : state) {
    for (size_t k = 0; k < contenders.size(); ++k) {
      const auto& c = contenders[(round + k) % contenders.size()];
      const double t0 = now_ms();
      c.second();
      c.first->push_back(now_ms() - t0);
    }
    ++round;
    state.SetIterationTime(t_ours.back() / 1000.0);
  }
  const double ours = median(t_ours), write = median(t_write);
  state.counters["avgpool_ms"] = ours;
  state.counters["pytorch_num_ms"] = median(t_exact);
  state.counters["write_ms"] = write;
  state.counters["of_write"] = write / ours;
  state.counters["write_GBps"] = (double)ns * 4 / (write * 1e6);
  if (run.dnnl) state.counters["pt_vs_dnnl"] = median(t_dnnl) / median(t_exact);
  run.finish(state, ours, t_dnnl);
}

void BM_alternate(benchmark::State& state, Case c, avgpool_layout layout) {
  const CaseRun run(c, layout, false);
  if (!run.open(state)) return;
  const int64_t ns = run.ns, nd = run.nd;
  const void* x = run.input->data();
  Buffer y(nd * 4), copy(ns * 4);
  avgpool_plan_execute(run.fast, x, y.data(), nullptr);  // warm-up
  std::vector<double> t_read, t_copy, t_ours, t_exact, t_dnnl;
  float sink = 0;
  for (auto _ : state) {
    double t0 = now_ms();
    sink += avgpool_bench::read_pass(x, ns * 4);
    double t1 = now_ms();
    avgpool_plan_execute(run.fast, x, y.data(), nullptr);
    double t2 = now_ms();
    avgpool_bench::copy_pass(x, copy.data(), ns * 4);
    double t3 = now_ms();
    avgpool_plan_execute(run.exact, x, y.data(), nullptr);
    double t4 = now_ms();
    t_read.push_back(t1 - t0);
    t_ours.push_back(t2 - t1);
    t_copy.push_back(t3 - t2);
    t_exact.push_back(t4 - t3);
    if (run.dnnl) {
      const double t5 = now_ms();
      run.dnnl->run();
      t_dnnl.push_back(now_ms() - t5);
    }
    state.SetIterationTime((t2 - t1) / 1000.0);
  }
  benchmark::DoNotOptimize(sink);
  const double ours = median(t_ours), read = median(t_read);
  state.counters["avgpool_ms"] = ours;
  state.counters["pytorch_num_ms"] = median(t_exact);
  state.counters["read_ms"] = read;
  state.counters["copy_ms"] = median(t_copy);
  state.counters["of_read"] = read / ours;
  state.counters["vs_copy"] = ours / median(t_copy);
  state.counters["read_GBps"] = (double)ns * 4 / (read * 1e6);
  run.finish(state, ours, t_dnnl);
}

void BM_plain_loop(benchmark::State& state, Case c) {
  avgpool_params p = params_of(c, AVGPOOL_LAYOUT_NCHW, AVGPOOL_NUMERICS_PYTORCH);
  avgpool_plan* plan = nullptr;
  if (avgpool_plan_create(&p, &plan) != AVGPOOL_SUCCESS) {
    state.SkipWithError(avgpool_last_error_message());
    return;
  }
  int64_t ns = 0, nd = 0, dims[4];
  avgpool_plan_sizes(plan, &ns, &nd);
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_destroy(plan);
  Buffer x(ns * 4), y(nd * 4);
  avgpool_support::fill_random(AVGPOOL_DTYPE_F32, x.data(), ns, 1, -1.0, 1.0);
  for (auto _ : state) {
    const double t0 = now_ms();
    avgpool_bench::plain_loop(p, dims[2], dims[3], x.data(), y.data());
    state.SetIterationTime((now_ms() - t0) / 1000.0);
  }
}

// One benchmark per layout: <prefix><case>/nchw and /nhwc.
void register_layouts(const std::string& prefix, const Case& c,
                      void (*fn)(benchmark::State&, Case, avgpool_layout)) {
  for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
    const std::string name = prefix + c.name + "/" + avgpool_layout_name(layout);
    benchmark::RegisterBenchmark(name.c_str(), fn, c, layout)
        ->Iterations(c.rounds)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

const int kRegistered = [] {
  for (const Case& c : kCases) {
    register_layouts("alternate/", c, BM_alternate);
    register_layouts("backward/", c, BM_backward);
    benchmark::RegisterBenchmark((std::string("plain_loop/") + c.name).c_str(), BM_plain_loop, c)
        ->Iterations(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const LargeCase& c : kLargeCases) register_layouts("alternate/large/", c.as_case(), BM_alternate);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();

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

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <omp.h>

#include "avgpool/avgpool.h"
#include "tensor_util.h"

#if defined(AVGPOOL_BENCH_WITH_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

struct Case {
  const char* name;
  int64_t n, c, h, w, k, s, p;
  int ceil_mode, include_pad;
  int rounds;
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

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// 64-byte aligned, first touched in parallel (pages spread like the work).
struct Buffer {
  float* data = nullptr;
  int64_t count = 0;
  explicit Buffer(int64_t n) : count(n) {
    data = static_cast<float*>(aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64)));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) data[i] = 0.0f;
  }
  ~Buffer() { free(data); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// STREAM-style read: every element once, the widest loads the CPU has
// (target_clones), eight independent vector accumulators so that the adds
// never limit it.
typedef float v16f __attribute__((vector_size(64)));
typedef float v16f_u __attribute__((vector_size(64), aligned(4), may_alias));

__attribute__((target_clones("avx512f", "avx2", "default")))
float read_chunk(const float* x, int64_t n) {
  v16f a[8] = {};
  int64_t i = 0;
  for (; i + 128 <= n; i += 128)
    for (int k = 0; k < 8; ++k) a[k] += *reinterpret_cast<const v16f_u*>(x + i + 16 * k);
  float total = 0;
  for (int k = 0; k < 8; ++k)
    for (int l = 0; l < 16; ++l) total += a[k][l];
  for (; i < n; ++i) total += x[i];
  return total;
}

float read_pass(const float* x, int64_t n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = n * t / nt / 16 * 16, e = t + 1 == nt ? n : n * (t + 1) / nt / 16 * 16;
    total += read_chunk(x + b, e - b);
  }
  return total;
}

void copy_pass(const float* x, float* y, int64_t n) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = n * t / nt, e = n * (t + 1) / nt;
    memcpy(y + b, x + b, (size_t)(e - b) * sizeof(float));
  }
}

avgpool_params params_of(const Case& c, avgpool_layout layout, avgpool_numerics numerics) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = c.n; p.c = c.c; p.h = c.h; p.w = c.w;
  p.kernel_h = p.kernel_w = c.k;
  p.stride_h = p.stride_w = c.s;
  p.padding_h = p.padding_w = c.p;
  p.ceil_mode = c.ceil_mode;
  p.count_include_pad = c.include_pad;
  p.layout = layout;
  p.numerics = numerics;
  p.backend = AVGPOOL_BACKEND_CPU;
  return p;
}

// The obvious loop (PyTorch-CPU-like): one output at a time, NCHW.
void plain_loop(const Case& c, int64_t oh, int64_t ow, const float* x, float* y) {
  const int64_t planes = c.n * c.c;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t y0 = oy * c.s - c.p, x0 = ox * c.s - c.p;
        int64_t y1 = std::min(y0 + c.k, c.h + c.p), x1 = std::min(x0 + c.k, c.w + c.p);
        const int64_t pool = (y1 - y0) * (x1 - x0);
        y0 = std::max<int64_t>(y0, 0); x0 = std::max<int64_t>(x0, 0);
        y1 = std::min(y1, c.h); x1 = std::min(x1, c.w);
        float sum = 0;
        for (int64_t yy = y0; yy < y1; ++yy)
          for (int64_t xx = x0; xx < x1; ++xx) sum += x[(pl * c.h + yy) * c.w + xx];
        const int64_t d = c.include_pad ? pool : (y1 - y0) * (x1 - x0);
        y[(pl * oh + oy) * ow + ox] = sum / (float)d;
      }
}

#if defined(AVGPOOL_BENCH_WITH_DNNL)
struct Dnnl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::pooling_forward prim;
  dnnl::memory src, dst;
  std::string impl;
  Dnnl(const Case& c, avgpool_layout layout, int64_t oh, int64_t ow, float* x, float* y) {
    using namespace dnnl;
    const auto tag = layout == AVGPOOL_LAYOUT_NCHW ? memory::format_tag::nchw : memory::format_tag::nhwc;
    memory::desc src_md({c.n, c.c, c.h, c.w}, memory::data_type::f32, tag);
    memory::desc dst_md({c.n, c.c, oh, ow}, memory::data_type::f32, tag);
    // ceil_mode: extra right padding (oneDNN's include-pad divisor then
    // counts the overhang, unlike PyTorch; timing only).
    const int64_t pr_h = (oh - 1) * c.s + c.k - c.h - c.p, pr_w = (ow - 1) * c.s + c.k - c.w - c.p;
    pooling_forward::desc d(prop_kind::forward_inference,
                            c.include_pad ? algorithm::pooling_avg_include_padding
                                          : algorithm::pooling_avg_exclude_padding,
                            src_md, dst_md, {c.s, c.s}, {c.k, c.k}, {c.p, c.p}, {pr_h, pr_w});
    pooling_forward::primitive_desc pd(d, eng);
    impl = pd.impl_info_str();
    prim = pooling_forward(pd);
    src = memory(src_md, eng, x);
    dst = memory(dst_md, eng, y);
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
};
#endif

#if defined(AVGPOOL_BENCH_WITH_DNNL)
// oneDNN's pooling backward: diff_src (grad_input) from diff_dst.
struct DnnlBackward {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::pooling_backward prim;
  dnnl::memory diff_src, diff_dst;
  std::string impl;
  DnnlBackward(const Case& c, avgpool_layout layout, int64_t oh, int64_t ow, float* gout, float* gin) {
    using namespace dnnl;
    const auto tag = layout == AVGPOOL_LAYOUT_NCHW ? memory::format_tag::nchw : memory::format_tag::nhwc;
    memory::desc src_md({c.n, c.c, c.h, c.w}, memory::data_type::f32, tag);
    memory::desc dst_md({c.n, c.c, oh, ow}, memory::data_type::f32, tag);
    const int64_t pr_h = (oh - 1) * c.s + c.k - c.h - c.p, pr_w = (ow - 1) * c.s + c.k - c.w - c.p;
    const algorithm alg =
        c.include_pad ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
    pooling_forward::desc fd(prop_kind::forward_training, alg, src_md, dst_md, {c.s, c.s}, {c.k, c.k}, {c.p, c.p},
                             {pr_h, pr_w});
    pooling_forward::primitive_desc fpd(fd, eng);
    pooling_backward::desc bd(alg, src_md, dst_md, {c.s, c.s}, {c.k, c.k}, {c.p, c.p}, {pr_h, pr_w});
    pooling_backward::primitive_desc pd(bd, eng, fpd);
    impl = pd.impl_info_str();
    prim = pooling_backward(pd);
    diff_dst = memory(dst_md, eng, gout);
    diff_src = memory(src_md, eng, gin);
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}});
    strm.wait();
  }
};
#endif

// The write ceiling: every byte of y once, each thread its share (memset:
// the C library's widest stores, non-temporal or "fast string" ones for
// large sizes). Non-zero bytes (every float 0.0116): on the machines
// measured, zeros were written up to 1.6x faster than any other value,
// a ceiling no gradient reaches.
void write_pass(float* y, int64_t n) {
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t b = n * t / nt, e = n * (t + 1) / nt;
    memset(y + b, 0x3c, (size_t)(e - b) * sizeof(float));
  }
}

void BM_backward(benchmark::State& state, Case c, avgpool_layout layout) {
  avgpool_params fast = params_of(c, layout, AVGPOOL_NUMERICS_FAST);
  avgpool_params exact = params_of(c, layout, AVGPOOL_NUMERICS_PYTORCH);
  avgpool_plan *plan = nullptr, *plan_exact = nullptr;
  if (avgpool_plan_create(&fast, &plan) != AVGPOOL_SUCCESS ||
      avgpool_plan_create(&exact, &plan_exact) != AVGPOOL_SUCCESS) {
    state.SkipWithError(avgpool_last_error_message());
    return;
  }
  int64_t ns = 0, nd = 0, dims[4];
  avgpool_plan_sizes(plan, &ns, &nd);
  avgpool_plan_output_dims(plan, dims);
  const char* impl = nullptr;
  const char* impl_exact = nullptr;
  if (avgpool_plan_backward_impl_name(plan, &impl) != AVGPOOL_SUCCESS ||
      avgpool_plan_backward_impl_name(plan_exact, &impl_exact) != AVGPOOL_SUCCESS) {
    state.SkipWithError(avgpool_last_error_message());
    return;
  }
  Buffer g(nd), gin(ns), gin_exact(ns), written(ns);
  avgpool_support::fill_random(AVGPOOL_DTYPE_F32, g.data, nd, 2, -1.0, 1.0);
#if defined(AVGPOOL_BENCH_WITH_DNNL)
  Buffer gin_dnnl(ns);
  DnnlBackward dnnl(c, layout, dims[2], dims[3], g.data, gin_dnnl.data);
  dnnl.run();  // warm-up (JIT)
#endif
  avgpool_plan_backward(plan, g.data, gin.data, nullptr);  // warm-up
  avgpool_plan_backward(plan_exact, g.data, gin_exact.data, nullptr);
  std::vector<double> t_write, t_ours, t_exact, t_dnnl;
  // The contenders in a different order each round: whatever runs first
  // after another big write pays for that one's write-backs.
  const std::vector<std::pair<std::vector<double>*, std::function<void()>>> contenders = {
      {&t_write, [&] { write_pass(written.data, ns); }},
      {&t_ours, [&] { avgpool_plan_backward(plan, g.data, gin.data, nullptr); }},
      {&t_exact, [&] { avgpool_plan_backward(plan_exact, g.data, gin_exact.data, nullptr); }},
#if defined(AVGPOOL_BENCH_WITH_DNNL)
      {&t_dnnl, [&] { dnnl.run(); }},
#endif
  };
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
  std::string label = impl;
  if (strcmp(impl, impl_exact) != 0) label += std::string(" (pytorch: ") + impl_exact + ")";
#if defined(AVGPOOL_BENCH_WITH_DNNL)
  state.counters["dnnl_ms"] = median(t_dnnl);
  state.counters["vs_dnnl"] = median(t_dnnl) / ours;
  state.counters["pt_vs_dnnl"] = median(t_dnnl) / median(t_exact);
  label += " | dnnl " + dnnl.impl;
#endif
  state.SetLabel(label);
  avgpool_plan_destroy(plan);
  avgpool_plan_destroy(plan_exact);
}

void BM_alternate(benchmark::State& state, Case c, avgpool_layout layout) {
  avgpool_params fast = params_of(c, layout, AVGPOOL_NUMERICS_FAST);
  avgpool_params exact = params_of(c, layout, AVGPOOL_NUMERICS_PYTORCH);
  avgpool_plan *plan = nullptr, *plan_exact = nullptr;
  if (avgpool_plan_create(&fast, &plan) != AVGPOOL_SUCCESS ||
      avgpool_plan_create(&exact, &plan_exact) != AVGPOOL_SUCCESS) {
    state.SkipWithError(avgpool_last_error_message());
    return;
  }
  int64_t ns = 0, nd = 0, dims[4];
  avgpool_plan_sizes(plan, &ns, &nd);
  avgpool_plan_output_dims(plan, dims);
  const char* impl = nullptr;
  avgpool_plan_impl_name(plan, &impl);
  Buffer x(ns), y(nd), copy(ns);
  avgpool_support::fill_random(AVGPOOL_DTYPE_F32, x.data, ns, 1, -1.0, 1.0);
#if defined(AVGPOOL_BENCH_WITH_DNNL)
  Buffer yd(nd);
  Dnnl dnnl(c, layout, dims[2], dims[3], x.data, yd.data);
  dnnl.run();  // warm-up (JIT)
#endif
  avgpool_plan_execute(plan, x.data, y.data, nullptr);  // warm-up
  std::vector<double> t_read, t_copy, t_ours, t_exact, t_dnnl;
  float sink = 0;
  for (auto _ : state) {
    double t0 = now_ms();
    sink += read_pass(x.data, ns);
    double t1 = now_ms();
    avgpool_plan_execute(plan, x.data, y.data, nullptr);
    double t2 = now_ms();
    copy_pass(x.data, copy.data, ns);
    double t3 = now_ms();
    avgpool_plan_execute(plan_exact, x.data, y.data, nullptr);
    double t4 = now_ms();
    t_read.push_back(t1 - t0);
    t_ours.push_back(t2 - t1);
    t_copy.push_back(t3 - t2);
    t_exact.push_back(t4 - t3);
#if defined(AVGPOOL_BENCH_WITH_DNNL)
    double t5 = now_ms();
    dnnl.run();
    t_dnnl.push_back(now_ms() - t5);
#endif
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
  std::string label = impl;
#if defined(AVGPOOL_BENCH_WITH_DNNL)
  state.counters["dnnl_ms"] = median(t_dnnl);
  state.counters["vs_dnnl"] = median(t_dnnl) / ours;
  label += " | dnnl " + dnnl.impl;
#endif
  state.SetLabel(label);
  avgpool_plan_destroy(plan);
  avgpool_plan_destroy(plan_exact);
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
  Buffer x(ns), y(nd);
  avgpool_support::fill_random(AVGPOOL_DTYPE_F32, x.data, ns, 1, -1.0, 1.0);
  for (auto _ : state) {
    const double t0 = now_ms();
    plain_loop(c, dims[2], dims[3], x.data, y.data);
    state.SetIterationTime((now_ms() - t0) / 1000.0);
  }
}

const int kRegistered = [] {
  for (const Case& c : kCases) {
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
      const std::string name = std::string("alternate/") + c.name +
                               (layout == AVGPOOL_LAYOUT_NCHW ? "/nchw" : "/nhwc");
      benchmark::RegisterBenchmark(name.c_str(), BM_alternate, c, layout)
          ->Iterations(c.rounds)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
      const std::string name = std::string("backward/") + c.name +
                               (layout == AVGPOOL_LAYOUT_NCHW ? "/nchw" : "/nhwc");
      benchmark::RegisterBenchmark(name.c_str(), BM_backward, c, layout)
          ->Iterations(c.rounds)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((std::string("plain_loop/") + c.name).c_str(), BM_plain_loop, c)
        ->Iterations(2)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();

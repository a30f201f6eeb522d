// The CUDA backend on large tensors (suite gpu_large): the seed case
// 16x64x2048x2048 f32 k11 s11 (17.2 GB in) against the reference on sampled
// outputs plus complete first and last planes, in both numerics; and an
// output of more than 2^31 elements (kernel 1 on a 2^31+ element input) on
// every CUDA implementation; ceil mode + padding at the far end of a
// > 2^31-element input; and cuda:any_direct's batches beyond 2^31 elements.
#if defined(AVGPOOL_WITH_CUDA)  // the whole file: without CUDA main() skips

#include <doctest/doctest.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <random>

#include "check.h"
#include "gpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace gpu_test;

namespace {

struct DeviceMem {
  void* p = nullptr;
  explicit DeviceMem(size_t bytes) { if (cudaMalloc(&p, bytes) != cudaSuccess) p = nullptr; }
  ~DeviceMem() { cudaFree(p); }
};

// Parameters of a single plane of p (n = c = 1), NCHW.
avgpool_params one_plane(avgpool_params p) {
  p.n = 1;
  p.c = 1;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  return p;
}

}  // namespace

TEST_SUITE("gpu_large") {

TEST_CASE("seed case 16x64x2048x2048 f32 k11 s11: sampled outputs and first/last planes") {
  const int64_t N = 16, C = 64, H = 2048, W = 2048, K = 11, OH = 186, OW = 186;
  const int64_t plane = H * W, oplane = OH * OW, planes = N * C;
  DeviceMem src((size_t)(planes * plane * 4)), dst((size_t)(planes * oplane * 4) + 4096);
  if (src.p == nullptr || dst.p == nullptr) {
    MESSAGE("skipped: not enough device memory for the seed case");
    return;
  }
  // 13 distinct random planes; plane i holds pattern i % 13.
  const int kPatterns = 13;
  std::vector<std::vector<float>> pattern(kPatterns, std::vector<float>((size_t)plane));
  for (int i = 0; i < kPatterns; ++i)
    fill_random(AVGPOOL_DTYPE_F32, pattern[i].data(), plane, 1000 + i, -1.0, 1.0);
  for (int64_t i = 0; i < planes; ++i)
    CUDA_OK(cudaMemcpy((char*)src.p + i * plane * 4, pattern[i % kPatterns].data(), (size_t)(plane * 4),
                       cudaMemcpyHostToDevice));
  for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = N; p.c = C; p.h = H; p.w = W; p.kernel_h = p.kernel_w = K; p.numerics = num;
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const char* name = nullptr;
    avgpool_plan_impl_name(plan, &name);
    // cuda:any_direct, in batches of planes that fit 32-bit indices.
    CHECK(std::string(name) == "cuda:any_direct");
    // guard band after dst
    CUDA_OK(cudaMemset(dst.p, kPoisonByte, (size_t)(planes * oplane * 4) + 4096));
    REQUIRE(avgpool_plan_execute(plan, src.p, dst.p, nullptr) == AVGPOOL_SUCCESS);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<unsigned char> tail(4096);
    CUDA_OK(cudaMemcpy(tail.data(), (char*)dst.p + planes * oplane * 4, 4096, cudaMemcpyDeviceToHost));
    CHECK(is_poisoned(tail.data(), 4096));

    avgpool_params pp = one_plane(p);
    avgpool_plan* ref_plan = nullptr;
    REQUIRE(avgpool_plan_create(&pp, &ref_plan) == AVGPOOL_SUCCESS);
    std::vector<float> got((size_t)oplane), ref((size_t)oplane);
    // complete first and last planes
    for (int64_t pl : {int64_t(0), planes - 1}) {
      CUDA_OK(cudaMemcpy(got.data(), (char*)dst.p + pl * oplane * 4, (size_t)(oplane * 4),
                         cudaMemcpyDeviceToHost));
      const float* in = pattern[pl % kPatterns].data();
      REQUIRE(run_reference(pp, in, ref.data()) == AVGPOOL_SUCCESS);
      const Mismatch m = compare_to_reference(pp, in, got.data(), ref.data());
      CHECK_MESSAGE(m.count == 0, "plane " << pl << ": " << m.message());
    }
    // 2000 sampled outputs anywhere in the tensor
    std::mt19937_64 rng(42);
    int64_t bad = 0;
    for (int i = 0; i < 2000; ++i) {
      const int64_t idx = (int64_t)(rng() % (uint64_t)(planes * oplane));
      const int64_t pl = idx / oplane, in_plane = idx % oplane;
      float g = 0;
      CUDA_OK(cudaMemcpy(&g, (char*)dst.p + idx * 4, 4, cudaMemcpyDeviceToHost));
      double want = 0;
      REQUIRE(avgpool_reference_outputs(ref_plan, pattern[pl % kPatterns].data(), 1, &in_plane, &want) ==
              AVGPOOL_SUCCESS);
      // fast: 1 ulp + the float32 summation bound (inputs in [-1, 1): mean|x| <= 1)
      const bool ok = num == AVGPOOL_NUMERICS_PYTORCH
                          ? (float)want == g
                          : fabs((double)g - want) <= fabs(want) * 0x1.0p-23 + 121 * 0x1.0p-24;
      if (!ok && bad++ < 5) printf("seed sample %lld: got %.9g want %.9g\n", (long long)idx, g, want);
    }
    CHECK(bad == 0);
    printf("seed case (%s numerics) on %s: first/last planes + 2000 samples checked, %lld bad\n",
           num == AVGPOOL_NUMERICS_FAST ? "fast" : "pytorch", name, (long long)bad);
    avgpool_plan_destroy(ref_plan);
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("an output of more than 2^31 elements (kernel 1, f16) on every CUDA implementation") {
  // 2 x 32768 x 32769 = 2,147,549,184 elements > 2^31, both in and out.
  const int64_t C = 2, H = 32768, W = 32769, total = C * H * W;
  REQUIRE(total > (int64_t(1) << 31));
  DeviceMem src((size_t)(total * 2)), dst((size_t)(total * 2));
  if (src.p == nullptr || dst.p == nullptr) {
    MESSAGE("skipped: not enough device memory");
    return;
  }
  // a 64 MiB random chunk repeated (its length does not divide the row)
  const int64_t chunk = (int64_t(1) << 25) + 7;
  std::vector<uint16_t> host((size_t)chunk);
  fill_random(AVGPOOL_DTYPE_F16, host.data(), chunk, 5, -4.0, 4.0);
  for (int64_t off = 0; off < total; off += chunk) {
    const int64_t n = total - off < chunk ? total - off : chunk;
    CUDA_OK(cudaMemcpy((char*)src.p + off * 2, host.data(), (size_t)(n * 2), cudaMemcpyHostToDevice));
  }
  for (const std::string& name : cuda_impl_names()) {
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
      avgpool_params p;
      avgpool_params_init(&p);
      p.n = 1; p.c = C; p.h = H; p.w = W;
      p.dtype = AVGPOOL_DTYPE_F16;
      p.layout = layout;
      if (layout == AVGPOOL_LAYOUT_NHWC) { p.c = 2; }
      avgpool_plan* plan = nullptr;
      if (avgpool_plan_create_with_impl(&p, name.c_str(), &plan) != AVGPOOL_SUCCESS) continue;
      CUDA_OK(cudaMemset(dst.p, kPoisonByte, (size_t)(total * 2)));
      REQUIRE(avgpool_plan_execute(plan, src.p, dst.p, nullptr) == AVGPOOL_SUCCESS);
      CUDA_OK(cudaDeviceSynchronize());
      // kernel 1: the output is the input, bit for bit. Check the last 64 MiB,
      // the first 1 MiB and 1000 samples.
      int64_t bad = 0;
      auto compare_range = [&](int64_t off, int64_t n) {
        std::vector<uint16_t> a((size_t)n), b((size_t)n);
        cudaMemcpy(a.data(), (char*)src.p + off * 2, (size_t)(n * 2), cudaMemcpyDeviceToHost);
        cudaMemcpy(b.data(), (char*)dst.p + off * 2, (size_t)(n * 2), cudaMemcpyDeviceToHost);
        for (int64_t i = 0; i < n; ++i) bad += a[(size_t)i] != b[(size_t)i];
      };
      compare_range(0, 1 << 19);
      compare_range(total - (int64_t(1) << 25), int64_t(1) << 25);
      std::mt19937_64 rng(3);
      for (int i = 0; i < 1000; ++i) compare_range((int64_t)(rng() % (uint64_t)total), 1);
      CHECK_MESSAGE(bad == 0, name << " " << (layout ? "nhwc" : "nchw"));
      printf("> 2^31 elements (%lld) on %s %s: %lld bad\n", (long long)total, name.c_str(),
             layout ? "nhwc" : "nchw", (long long)bad);
      avgpool_plan_destroy(plan);
    }
  }
}

TEST_CASE("ceil_mode + padding at the far end of a > 2^31-element input, every CUDA implementation") {
  // NCHW: one 46342 x 46342 plane; NHWC: 2 channels of 32769 x 32769. Both
  // f16 with small integers; kernel 3, stride 2, padding 1, ceil mode: the
  // last window starts at the last input row and hangs over the padding.
  for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.c = layout == AVGPOOL_LAYOUT_NCHW ? 1 : 2;
    p.h = p.w = layout == AVGPOOL_LAYOUT_NCHW ? 46342 : 32769;
    p.kernel_h = p.kernel_w = 3;
    p.stride_h = p.stride_w = 2;
    p.padding_h = p.padding_w = 1;
    p.ceil_mode = 1;
    p.dtype = AVGPOOL_DTYPE_F16;
    p.layout = layout;
    const int64_t total = p.c * p.h * p.w;
    REQUIRE(total > (int64_t(1) << 31));
    std::vector<uint16_t> host((size_t)total);
    fill_small_ints(AVGPOOL_DTYPE_F16, host.data(), total, 77, 8);
    DeviceMem src((size_t)(total * 2)), dst((size_t)(total * 2));
    if (src.p == nullptr || dst.p == nullptr) {
      MESSAGE("skipped: not enough device memory");
      return;
    }
    CUDA_OK(cudaMemcpy(src.p, host.data(), (size_t)(total * 2), cudaMemcpyHostToDevice));
    for (const std::string& name : cuda_impl_names()) {
      for (avgpool_numerics numerics : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
        p.numerics = numerics;
        avgpool_plan* plan = nullptr;
        if (avgpool_plan_create_with_impl(&p, name.c_str(), &plan) != AVGPOOL_SUCCESS) continue;
        int64_t dims[4], src_n, dst_n;
        avgpool_plan_output_dims(plan, dims);
        avgpool_plan_sizes(plan, &src_n, &dst_n);
        CUDA_OK(cudaMemset(dst.p, kPoisonByte, (size_t)(total * 2)));
        REQUIRE(avgpool_plan_execute(plan, src.p, dst.p, nullptr) == AVGPOOL_SUCCESS);
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<uint16_t> out((size_t)dst_n);
        CUDA_OK(cudaMemcpy(out.data(), dst.p, (size_t)(dst_n * 2), cudaMemcpyDeviceToHost));
        // The last two output rows and columns of every channel in full, and
        // 20000 random outputs, against the reference; small integers make
        // both numerics exact up to the final rounding, so compare bitwise.
        std::vector<int64_t> idx;
        for (int64_t c = 0; c < dims[1]; ++c)
          for (int64_t i = 0; i < dims[3]; ++i)
            for (int64_t last = 1; last <= 2; ++last) {
              idx.push_back(dense_index(layout, dims, 0, c, dims[2] - last, i));
              idx.push_back(dense_index(layout, dims, 0, c, i, dims[3] - last));
            }
        append_random_indices(&idx, 20000, dst_n, 9);
        const int64_t bad = count_sampled_mismatches(plan, host.data(), out.data(), AVGPOOL_DTYPE_F16, idx, 0.0);
        CHECK_MESSAGE(bad == 0, name << (layout ? " nhwc" : " nchw"));
        printf("far-end ceil+padding, %lld inputs, %s %s %s: %zu outputs checked, %lld bad\n",
               (long long)total, name.c_str(), layout ? "nhwc" : "nchw",
               numerics ? "pytorch" : "fast", idx.size(), (long long)bad);
        avgpool_plan_destroy(plan);
      }
    }
  }
}

TEST_CASE("cuda:any_direct beyond 2^31 elements: batches of planes (NCHW) or images (NHWC), and the rest") {
  // NCHW: 5 planes of 20000 x 22001 (2.2e9 elements) run as 4 planes and 1;
  // NHWC: 3 images of 13001 x 14000 x 4 channels as 2 images and 1. f16
  // small integers (both numerics exact up to the final rounding), a window
  // with padding and ceil mode; every unit's first and last output rows in
  // full and 20000 random outputs, bitwise against the reference.
  for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}) {
    avgpool_params p;
    avgpool_params_init(&p);
    const bool nchw = layout == AVGPOOL_LAYOUT_NCHW;
    p.n = nchw ? 1 : 3;
    p.c = nchw ? 5 : 4;
    p.h = nchw ? 20000 : 13001;
    p.w = nchw ? 22001 : 14000;
    p.kernel_h = 5; p.kernel_w = 3;
    p.stride_h = 2; p.stride_w = 3;
    p.padding_h = 2; p.padding_w = 1;
    p.ceil_mode = 1;
    p.dtype = AVGPOOL_DTYPE_F16;
    p.layout = layout;
    const int64_t total = p.n * p.c * p.h * p.w;
    REQUIRE(total > (int64_t(1) << 31));
    std::vector<uint16_t> host((size_t)total);
    fill_small_ints(AVGPOOL_DTYPE_F16, host.data(), total, 31, 8);
    DeviceMem src((size_t)(total * 2)), dst((size_t)(total * 2));
    if (src.p == nullptr || dst.p == nullptr) {
      MESSAGE("skipped: not enough device memory");
      return;
    }
    CUDA_OK(cudaMemcpy(src.p, host.data(), (size_t)(total * 2), cudaMemcpyHostToDevice));
    for (avgpool_numerics numerics : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH}) {
      p.numerics = numerics;
      avgpool_plan* plan = nullptr;
      REQUIRE(avgpool_plan_create_with_impl(&p, "cuda:any_direct", &plan) == AVGPOOL_SUCCESS);
      int64_t dims[4], src_n, dst_n;
      avgpool_plan_output_dims(plan, dims);
      avgpool_plan_sizes(plan, &src_n, &dst_n);
      CUDA_OK(cudaMemset(dst.p, kPoisonByte, (size_t)(dst_n * 2)));
      REQUIRE(avgpool_plan_execute(plan, src.p, dst.p, nullptr) == AVGPOOL_SUCCESS);
      CUDA_OK(cudaDeviceSynchronize());
      std::vector<uint16_t> out((size_t)dst_n);
      CUDA_OK(cudaMemcpy(out.data(), dst.p, (size_t)(dst_n * 2), cudaMemcpyDeviceToHost));
      std::vector<int64_t> idx;
      for (int64_t n = 0; n < dims[0]; ++n)
        for (int64_t c = 0; c < dims[1]; ++c)
          for (int64_t y : {int64_t(0), dims[2] - 1})
            for (int64_t x = 0; x < dims[3]; ++x) idx.push_back(dense_index(layout, dims, n, c, y, x));
      append_random_indices(&idx, 20000, dst_n, 12);
      const int64_t bad = count_sampled_mismatches(plan, host.data(), out.data(), AVGPOOL_DTYPE_F16, idx, 0.0);
      CHECK_MESSAGE(bad == 0, (nchw ? "nchw " : "nhwc ") << (numerics ? "pytorch" : "fast"));
      printf("cuda:any_direct in batches, %lld inputs, %s %s: %zu outputs checked, %lld bad\n", (long long)total,
             nchw ? "nchw" : "nhwc", numerics ? "pytorch" : "fast", idx.size(), (long long)bad);
      avgpool_plan_destroy(plan);
    }
  }
}

}  // TEST_SUITE

#endif  // AVGPOOL_WITH_CUDA

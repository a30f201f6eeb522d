// Plans on machines with several GPUs. A plan is bound to the device that
// was current when it was created: it runs there whatever device is current
// at execute (and leaves the caller's current device as it was), and refuses
// pointers or streams of another device. Every implementation must work on
// every device (per-device kernel attributes and SM counts). The cases that
// need two devices are skipped, and counted as skipped, on one.
#if defined(AVGPOOL_WITH_CUDA)  // the whole file: without CUDA main() skips

#include <doctest/doctest.h>
#include <stdio.h>
#include <string.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "gpu_helpers.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace gpu_test;

namespace {

int device_count() {
  static const int n = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();
      count = 0;
    }
    if (count == 1) printf("gpu_multi: one CUDA device: the two-device cases are skipped\n");
    return count;
  }();
  return n;
}

// Problems that reach every implementation family: wide NCHW rows (the
// bulk-copy ring), overlapping windows, NHWC tiles in 16-byte groups, small
// windows for the column walks, stride == kernel.
std::vector<avgpool_params> problems() {
  struct Shape { int64_t n, c, h, w, k, s, pad; avgpool_layout layout; avgpool_numerics num; };
  const avgpool_layout nchw = AVGPOOL_LAYOUT_NCHW, nhwc = AVGPOOL_LAYOUT_NHWC;
  const avgpool_numerics fast = AVGPOOL_NUMERICS_FAST, pyt = AVGPOOL_NUMERICS_PYTORCH;
  const Shape shapes[] = {
      {2, 3, 66, 2048, 11, 11, 0, nchw, pyt},  {1, 4, 64, 1024, 11, 4, 0, nchw, fast},
      {2, 8, 40, 40, 3, 1, 1, nchw, fast},     {2, 8, 40, 40, 3, 1, 1, nchw, pyt},
      {2, 64, 24, 24, 3, 1, 1, nhwc, pyt},     {1, 32, 40, 40, 5, 1, 2, nhwc, fast},
      {2, 6, 64, 96, 2, 2, 0, nchw, fast},     {4, 16, 7, 7, 7, 7, 0, nchw, fast},
  };
  std::vector<avgpool_params> out;
  for (const Shape& s : shapes) {
    avgpool_params p = shape_params(s.n, s.c, s.h, s.w, s.k, s.k, s.s, s.s, s.pad, s.pad);
    p.layout = s.layout;
    p.numerics = s.num;
    p.backend = AVGPOOL_BACKEND_CUDA;
    out.push_back(p);
  }
  return out;
}

std::vector<char> random_input(const avgpool_params& p, uint64_t seed) {
  int64_t sn = 0, dn = 0;
  element_counts(p, &sn, &dn);
  std::vector<char> src((size_t)(sn * element_size(p.dtype)));
  fill_random(p.dtype, src.data(), sn, seed, -2.0, 2.0);
  return src;
}

int current_device() {
  int d = -1;
  cudaGetDevice(&d);
  return d;
}

}  // namespace

TEST_SUITE("gpu_multi") {

TEST_CASE("every CUDA implementation on every device agrees with the reference") {
  const int devices = device_count();
  std::mt19937_64 rng(31);
  int ran = 0;
  for (int d = 0; d < devices; ++d) {
    CUDA_OK(cudaSetDevice(d));
    for (const avgpool_params& p : problems()) {
      const std::vector<char> src = random_input(p, rng());
      int64_t sn = 0, dn = 0;
      REQUIRE(element_counts(p, &sn, &dn));
      std::vector<char> ref((size_t)(dn * element_size(p.dtype)));
      REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
      for (const std::string& name : cuda_impl_names()) {
        RunResult r = run_on_device(p, name.c_str(), src.data());
        if (r.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
        INFO("device " << d << ", " << name << " on " << describe(p));
        REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
        REQUIRE(r.device_error == cudaSuccess);
        CHECK(r.guards_ok);
        const Mismatch m = compare_to_reference(p, src.data(), r.out.data(), ref.data());
        CHECK_MESSAGE(m.count == 0, m.message());
        ++ran;
      }
    }
  }
  CUDA_OK(cudaSetDevice(0));
  printf("gpu_multi: %d runs over %d device(s)\n", ran, devices);
  CHECK(ran >= devices * 9);  // every implementation ran at least once per device
}

TEST_CASE("a plan runs on the device it was created on and leaves the caller's device current" *
          doctest::skip(device_count() < 2)) {
  const int devices = device_count();
  for (const avgpool_params& p : problems()) {
    for (const std::string& name : cuda_impl_names()) {
      for (int home = 0; home < devices; ++home) {
        CUDA_OK(cudaSetDevice(home));
        avgpool_plan* plan = nullptr;
        const avgpool_status s = avgpool_plan_create_with_impl(&p, name.c_str(), &plan);
        if (s == AVGPOOL_ERROR_UNSUPPORTED) continue;
        INFO(name << " created on device " << home << " for " << describe(p));
        REQUIRE(s == AVGPOOL_SUCCESS);
        int64_t sn = 0, dn = 0;
        avgpool_plan_sizes(plan, &sn, &dn);
        const int64_t es = element_size(p.dtype);
        const std::vector<char> src = random_input(p, 7 + home);
        Guarded in(sn * es, 0), out(dn * es, 0);  // on the plan's device
        REQUIRE(in.ok());
        REQUIRE(out.ok());
        in.upload(src.data());
        CUDA_OK(cudaDeviceSynchronize());
        const int other = (home + 1) % devices;
        CUDA_OK(cudaSetDevice(other));  // another device current at execute
        REQUIRE_MESSAGE(avgpool_plan_execute(plan, in.data(), out.data(), nullptr) == AVGPOOL_SUCCESS,
                        avgpool_last_error_message());
        CHECK(current_device() == other);
        CUDA_OK(cudaSetDevice(home));
        CUDA_OK(cudaDeviceSynchronize());
        std::vector<char> got((size_t)(dn * es)), ref((size_t)(dn * es));
        out.download(got.data());
        REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
        const Mismatch m = compare_to_reference(p, src.data(), got.data(), ref.data());
        CHECK_MESSAGE(m.count == 0, m.message());
        CHECK(out.guards_intact());
        avgpool_plan_destroy(plan);
      }
    }
  }
  CUDA_OK(cudaSetDevice(0));
}

TEST_CASE("pointers and streams of another device are refused and dst is untouched" *
          doctest::skip(device_count() < 2)) {
  const avgpool_params p = problems()[0];
  CUDA_OK(cudaSetDevice(0));
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t sn = 0, dn = 0;
  avgpool_plan_sizes(plan, &sn, &dn);
  Guarded src0(sn * 4, 0), dst0(dn * 4, 0);
  CUDA_OK(cudaSetDevice(1));
  Guarded src1(sn * 4, 0), dst1(dn * 4, 0);
  cudaStream_t stream1 = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&stream1, cudaStreamNonBlocking));
  CUDA_OK(cudaSetDevice(0));
  REQUIRE(src0.ok());
  REQUIRE(dst1.ok());

  CHECK(avgpool_plan_execute(plan, src1.data(), dst0.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  std::string m = avgpool_last_error_message();
  CHECK_MESSAGE(m.find("src") != std::string::npos, m);
  CHECK_MESSAGE(m.find("device 1") != std::string::npos, m);
  CHECK(avgpool_plan_execute(plan, src0.data(), dst1.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  m = avgpool_last_error_message();
  CHECK_MESSAGE(m.find("dst") != std::string::npos, m);
  CHECK(avgpool_plan_execute(plan, src0.data(), dst0.data(), stream1) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  m = avgpool_last_error_message();
  CHECK_MESSAGE(m.find("stream") != std::string::npos, m);
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<char> host((size_t)(dn * 4));
  dst0.download(host.data());
  CHECK(is_poisoned(host.data(), dn * 4));
  CUDA_OK(cudaSetDevice(1));
  CUDA_OK(cudaDeviceSynchronize());
  dst1.download(host.data());
  CHECK(is_poisoned(host.data(), dn * 4));
  CUDA_OK(cudaStreamDestroy(stream1));
  CUDA_OK(cudaSetDevice(0));
  avgpool_plan_destroy(plan);
}

TEST_CASE("two threads drive two devices at once on their own streams, bitwise equal to one thread" *
          doctest::skip(device_count() < 2)) {
  const std::vector<avgpool_params> ps = problems();
  // Expected outputs: each problem once on device 0 from this thread.
  std::vector<std::vector<char>> inputs, expected;
  for (size_t i = 0; i < ps.size(); ++i) {
    inputs.push_back(random_input(ps[i], 100 + i));
    CUDA_OK(cudaSetDevice(0));
    RunResult r = run_on_device(ps[i], nullptr, inputs.back().data());
    expected.push_back(r.out);
  }
  constexpr int kRounds = 40;
  int failures[2] = {0, 0};
  std::string messages[2];
  auto drive = [&](int device) {
    if (cudaSetDevice(device) != cudaSuccess) { ++failures[device]; return; }
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    for (size_t i = 0; i < ps.size(); ++i) {
      avgpool_plan* plan = nullptr;
      if (avgpool_plan_create(&ps[i], &plan) != AVGPOOL_SUCCESS) {
        ++failures[device];
        messages[device] = avgpool_last_error_message();
        continue;
      }
      int64_t sn = 0, dn = 0;
      avgpool_plan_sizes(plan, &sn, &dn);
      const int64_t es = element_size(ps[i].dtype);
      Guarded in(sn * es, 0), out(dn * es, 0);
      in.upload(inputs[i].data());
      std::vector<char> got((size_t)(dn * es));
      for (int round = 0; round < kRounds; ++round) {
        if (avgpool_plan_execute(plan, in.data(), out.data(), stream) != AVGPOOL_SUCCESS) {
          ++failures[device];
          messages[device] = avgpool_last_error_message();
          break;
        }
      }
      cudaStreamSynchronize(stream);
      out.download(got.data());
      if (memcmp(got.data(), expected[i].data(), got.size()) != 0) {
        ++failures[device];
        messages[device] = "output differs from the one-thread run: " + describe(ps[i]);
      }
      avgpool_plan_destroy(plan);
    }
    cudaStreamDestroy(stream);
  };
  std::thread t0(drive, 0), t1(drive, 1);
  t0.join();
  t1.join();
  CHECK_MESSAGE(failures[0] == 0, messages[0]);
  CHECK_MESSAGE(failures[1] == 0, messages[1]);
  CUDA_OK(cudaSetDevice(0));
}

}  // TEST_SUITE

#endif  // AVGPOOL_WITH_CUDA

// Reliability on the CUDA backend, run on the device:
//  - concurrency: 8 host threads on 4 streams, each thread with its own
//    plans, every CUDA implementation; results bitwise identical to a
//    single-threaded run; error messages stay in their thread;
//  - a CUDA plan given host memory (src or dst) is refused with
//    INVALID_ARGUMENT and a message, and dst stays byte-for-byte untouched;
//  - element-aligned but not 16-byte-aligned device pointers fall back to a
//    scalar path (they are not refused) and agree with the reference.
// Self-contained (no dependence on the other GPU test helpers).
#if defined(AVGPOOL_WITH_CUDA)

#include <cuda_runtime.h>
#include <doctest/doctest.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "tensor_util.h"

using namespace avgpool_support;

namespace reliability_gpu {

#define REL_CUDA_OK(expr)                                                          \
  do {                                                                             \
    cudaError_t e_ = (expr);                                                       \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #expr << ": " << cudaGetErrorString(e_));   \
  } while (0)

// The forward CUDA implementations (the backward ones run through
// avgpool_plan_backward: tests/gpu/test_backward_gpu.cpp).
std::vector<std::string> cuda_impls() {
  std::vector<std::string> names;
  for (const std::string& name : avgpool_support::impl_names("cuda:")) {
    int64_t count = 0;
    avgpool_impl_count(&count);
    for (int64_t i = 0; i < count; ++i) {
      const char* n = nullptr;
      int backward = 0;
      if (avgpool_impl_name(i, &n) == AVGPOOL_SUCCESS && name == n && avgpool_impl_is_backward(i, &backward) == AVGPOOL_SUCCESS &&
          !backward)
        names.push_back(name);
    }
  }
  return names;
}

// A device allocation freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  int64_t bytes = 0;
  explicit DeviceBuffer(int64_t n) : bytes(n) {
    REL_CUDA_OK(cudaMalloc(&ptr, (size_t)(n > 0 ? n : 1)));
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* bytes_at(int64_t offset) { return static_cast<char*>(ptr) + offset; }
};

int64_t dst_elements(const avgpool_params& p) {
  int64_t s = 0, d = 0;
  REQUIRE(avgpool_support::element_counts(p, &s, &d));
  return d;
}

using Job = ImplJob;

// Random problems on every CUDA implementation; the first one bigger, so
// that launches overlap on the device.
std::vector<Job> make_jobs() {
  RandomParamsLimits limits;
  limits.max_n = 2; limits.max_c = 8; limits.max_hw = 64;
  return impl_jobs(10, cuda_impls(), 4242, limits, -1, {}, [](int k, avgpool_params* p) {
    p->backend = AVGPOOL_BACKEND_CUDA;
    if (k == 0) {
      p->n = 4; p->c = 32; p->h = p->w = 128;
      p->kernel_h = p->kernel_w = 3; p->stride_h = p->stride_w = 1;
      p->padding_h = p->padding_w = 1; p->divisor_override = 0;
    }
  });
}

}  // namespace reliability_gpu

using namespace reliability_gpu;

TEST_SUITE("gpu") {

TEST_CASE("CUDA concurrency: 8 threads on 4 streams, bitwise equal to one thread") {
  std::vector<Job> jobs = make_jobs();
  REQUIRE(!jobs.empty());
  // Single-threaded results, default stream, one job at a time.
  for (Job& j : jobs) {
    DeviceBuffer src(j.src_bytes), dst(j.dst_bytes);
    REL_CUDA_OK(cudaMemcpy(src.ptr, j.src.data(), (size_t)j.src_bytes, cudaMemcpyHostToDevice));
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create_with_impl(&j.params, j.impl.c_str(), &plan) == AVGPOOL_SUCCESS);
    REQUIRE(avgpool_plan_execute(plan, src.ptr, dst.ptr, nullptr) == AVGPOOL_SUCCESS);
    j.expected.resize((size_t)j.dst_bytes);
    REL_CUDA_OK(cudaMemcpy(j.expected.data(), dst.ptr, (size_t)j.dst_bytes, cudaMemcpyDeviceToHost));
    avgpool_plan_destroy(plan);
    // The reference agrees (per the numerics' rule) before we use it as truth.
    std::vector<unsigned char> ref((size_t)j.dst_bytes);
    REQUIRE(run_reference(j.params, j.src.data(), ref.data()) == AVGPOOL_SUCCESS);
    const Mismatch m = compare_to_reference(j.params, j.src.data(), j.expected.data(), ref.data());
    CHECK_MESSAGE(m.count == 0, j.impl << ": " << describe(j.params) << ": " << m.message());
  }

  constexpr int kStreams = 4, kThreads = 8, kExecutions = 200;
  cudaStream_t streams[kStreams];
  for (cudaStream_t& s : streams) REL_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::mutex mutex;
  std::vector<std::string> failures;
  auto note = [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failures.size() < 20) failures.push_back(s);
  };
  std::atomic<int> done{0};

  auto worker = [&](int t) {
    cudaStream_t stream = streams[t % kStreams];
    // Own plans and own device buffers per thread.
    std::vector<avgpool_plan*> plans(jobs.size(), nullptr);
    std::vector<void*> srcs(jobs.size(), nullptr), dsts(jobs.size(), nullptr);
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (avgpool_plan_create_with_impl(&jobs[i].params, jobs[i].impl.c_str(), &plans[i]) != AVGPOOL_SUCCESS)
        note("plan: " + jobs[i].impl + ": " + avgpool_last_error_message());
      if (cudaMalloc(&srcs[i], (size_t)jobs[i].src_bytes) != cudaSuccess ||
          cudaMalloc(&dsts[i], (size_t)jobs[i].dst_bytes) != cudaSuccess ||
          cudaMemcpyAsync(srcs[i], jobs[i].src.data(), (size_t)jobs[i].src_bytes,
                          cudaMemcpyHostToDevice, stream) != cudaSuccess)
        note("cuda allocation/copy failed");
    }
    std::vector<unsigned char> host;
    for (int e = 0; e < kExecutions; ++e) {
      const size_t i = (size_t)(e + 3 * t) % jobs.size();
      if (plans[i] == nullptr || srcs[i] == nullptr || dsts[i] == nullptr) continue;
      const Job& j = jobs[i];
      host.assign((size_t)j.dst_bytes, 0);
      cudaMemsetAsync(dsts[i], kPoisonByte, (size_t)j.dst_bytes, stream);
      if (avgpool_plan_execute(plans[i], srcs[i], dsts[i], stream) != AVGPOOL_SUCCESS) {
        note(j.impl + ": execute: " + avgpool_last_error_message());
        continue;
      }
      if (avgpool_last_error_message()[0] != '\0') note("message left after a success");
      cudaMemcpyAsync(host.data(), dsts[i], (size_t)j.dst_bytes, cudaMemcpyDeviceToHost, stream);
      const cudaError_t err = cudaStreamSynchronize(stream);
      if (err != cudaSuccess) {
        note(std::string("stream: ") + cudaGetErrorString(err));
        break;
      }
      if (memcmp(host.data(), j.expected.data(), (size_t)j.dst_bytes) != 0)
        note("thread " + std::to_string(t) + ": " + j.impl + " on " + describe(j.params) +
             ": differs from the single-threaded result");
      if (e % 20 == 19) {  // a failing call with a value unique to this thread and step
        avgpool_params bad = j.params;
        bad.kernel_h = -(int64_t)(1000 * (t + 1) + e);
        avgpool_plan* none = nullptr;
        avgpool_plan_create(&bad, &none);
        std::this_thread::yield();
        const std::string want = "kernel_h (" + std::to_string(bad.kernel_h) + ")";
        if (std::string(avgpool_last_error_message()).find(want) == std::string::npos)
          note("thread " + std::to_string(t) + ": message \"" + avgpool_last_error_message() +
               "\", want " + want);
      }
      done.fetch_add(1);
    }
    for (size_t i = 0; i < jobs.size(); ++i) {
      avgpool_plan_destroy(plans[i]);
      cudaFree(srcs[i]);
      cudaFree(dsts[i]);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& th : threads) th.join();
  for (cudaStream_t s : streams) cudaStreamDestroy(s);
  for (const std::string& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
  CHECK(done.load() == kThreads * kExecutions);
  MESSAGE("CUDA concurrency: " << jobs.size() << " (impl, problem) pairs, " << done.load()
                               << " executions on " << kStreams << " streams");
}

TEST_CASE("a CUDA plan given host memory is refused and dst is untouched") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = 2; p.c = 3; p.h = 17; p.w = 19;
  p.kernel_h = p.kernel_w = 3; p.stride_h = p.stride_w = 2; p.padding_h = p.padding_w = 1;
  p.backend = AVGPOOL_BACKEND_CUDA;
  const int64_t sn = p.n * p.c * p.h * p.w, dn = dst_elements(p);
  std::vector<float> host_src((size_t)sn, 1.0f), host_dst((size_t)dn);
  DeviceBuffer dev_src(sn * 4), dev_dst(dn * 4);
  REL_CUDA_OK(cudaMemcpy(dev_src.ptr, host_src.data(), (size_t)sn * 4, cudaMemcpyHostToDevice));

  std::vector<std::string> impls = cuda_impls();
  impls.push_back("");  // "" = the plan avgpool_plan_create picks
  for (const std::string& impl : impls) {
    CAPTURE(impl);
    avgpool_plan* plan = nullptr;
    const avgpool_status s = impl.empty() ? avgpool_plan_create(&p, &plan)
                                          : avgpool_plan_create_with_impl(&p, impl.c_str(), &plan);
    if (s == AVGPOOL_ERROR_UNSUPPORTED) continue;
    REQUIRE(s == AVGPOOL_SUCCESS);

    // Host src, device dst: refused, device dst still poisoned.
    REL_CUDA_OK(cudaMemset(dev_dst.ptr, kPoisonByte, (size_t)dn * 4));
    CHECK(avgpool_plan_execute(plan, host_src.data(), dev_dst.ptr, nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    std::string m = avgpool_last_error_message();
    CHECK_MESSAGE(m.find("src") != std::string::npos, m);
    CHECK_MESSAGE(m.find("device memory") != std::string::npos, m);
    REL_CUDA_OK(cudaDeviceSynchronize());
    REL_CUDA_OK(cudaMemcpy(host_dst.data(), dev_dst.ptr, (size_t)dn * 4, cudaMemcpyDeviceToHost));
    CHECK(is_poisoned(host_dst.data(), dn * 4));

    // Device src, host dst: refused, host dst untouched.
    poison(host_dst.data(), dn * 4);
    CHECK(avgpool_plan_execute(plan, dev_src.ptr, host_dst.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    m = avgpool_last_error_message();
    CHECK_MESSAGE(m.find("dst") != std::string::npos, m);
    REL_CUDA_OK(cudaDeviceSynchronize());
    CHECK(is_poisoned(host_dst.data(), dn * 4));

    // Both host: refused.
    CHECK(avgpool_plan_execute(plan, host_src.data(), host_dst.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
    CHECK(is_poisoned(host_dst.data(), dn * 4));
    avgpool_plan_destroy(plan);
  }
  // The one-call function too.
  poison(host_dst.data(), dn * 4);
  CHECK(avgpool_forward(&p, host_src.data(), host_dst.data(), nullptr) == AVGPOOL_ERROR_INVALID_ARGUMENT);
  CHECK(is_poisoned(host_dst.data(), dn * 4));
}

TEST_CASE("element-aligned, not 16-byte-aligned device pointers fall back and agree with the reference") {
  struct Shape { int64_t n, c, h, w, k, s, pad; int ceil; avgpool_layout layout; };
  const Shape shapes[] = {
      {2, 3, 33, 40, 2, 2, 0, 0, AVGPOOL_LAYOUT_NCHW},   // stride == kernel
      {1, 4, 31, 37, 3, 2, 1, 1, AVGPOOL_LAYOUT_NCHW},   // generic, ceil overhang
      {2, 13, 20, 21, 3, 1, 1, 0, AVGPOOL_LAYOUT_NHWC},  // NHWC, odd channels
      {1, 2, 70, 90, 11, 11, 0, 1, AVGPOOL_LAYOUT_NCHW}, // big kernel
  };
  int ran = 0;
  for (const Shape& sh : shapes)
    for (int dtype = 0; dtype < 4; ++dtype)
      for (int numerics = 0; numerics < 2; ++numerics) {
        avgpool_params p;
        avgpool_params_init(&p);
        p.n = sh.n; p.c = sh.c; p.h = sh.h; p.w = sh.w;
        p.kernel_h = p.kernel_w = sh.k; p.stride_h = p.stride_w = sh.s;
        p.padding_h = p.padding_w = sh.pad; p.ceil_mode = sh.ceil; p.layout = sh.layout;
        p.dtype = (avgpool_dtype)dtype; p.numerics = (avgpool_numerics)numerics;
        p.backend = AVGPOOL_BACKEND_CUDA;
        const int64_t es = element_size(p.dtype), sn = p.n * p.c * p.h * p.w, dn = dst_elements(p);
        std::vector<unsigned char> src((size_t)(sn * es)), ref((size_t)(dn * es)), got((size_t)(dn * es));
        fill_random(p.dtype, src.data(), sn, 99, -2.0, 2.0);
        REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
        // Offsets of one element (and three) from cudaMalloc's 256-byte alignment.
        for (int64_t offset : {es, 3 * es}) {
          DeviceBuffer dsrc(sn * es + 64), ddst(dn * es + 64);
          REL_CUDA_OK(cudaMemcpy(dsrc.bytes_at(offset), src.data(), (size_t)(sn * es), cudaMemcpyHostToDevice));
          for (const std::string& impl : cuda_impls()) {
            CAPTURE(impl);
            CAPTURE(offset);
            avgpool_plan* plan = nullptr;
            if (avgpool_plan_create_with_impl(&p, impl.c_str(), &plan) != AVGPOOL_SUCCESS) continue;
            REL_CUDA_OK(cudaMemset(ddst.ptr, kPoisonByte, (size_t)(dn * es + 64)));
            const avgpool_status s = avgpool_plan_execute(plan, dsrc.bytes_at(offset), ddst.bytes_at(offset), nullptr);
            CHECK_MESSAGE(s == AVGPOOL_SUCCESS, describe(p) << ": " << avgpool_last_error_message());
            REL_CUDA_OK(cudaDeviceSynchronize());
            avgpool_plan_destroy(plan);
            if (s != AVGPOOL_SUCCESS) continue;
            std::vector<unsigned char> whole((size_t)(dn * es + 64));
            REL_CUDA_OK(cudaMemcpy(whole.data(), ddst.ptr, whole.size(), cudaMemcpyDeviceToHost));
            memcpy(got.data(), whole.data() + offset, got.size());
            const Mismatch m = compare_to_reference(p, src.data(), got.data(), ref.data());
            CHECK_MESSAGE(m.count == 0, describe(p) << ": " << m.message());
            // Nothing written before or after dst.
            CHECK(is_poisoned(whole.data(), offset));
            CHECK(is_poisoned(whole.data() + offset + dn * es, 64 - offset));
            ++ran;
          }
        }
      }
  CHECK(ran > 0);
}

TEST_CASE("a batch of 0 plans on every CUDA implementation, both directions, and runs as a no-op") {
  // Plan creation sizes grids and work units; a batch of 0 must not divide by it.
  int64_t count = 0;
  REQUIRE(avgpool_impl_count(&count) == AVGPOOL_SUCCESS);
  const int64_t shapes[][4] = {{0, 3, 64, 2048}, {0, 64, 56, 56}, {0, 2048, 7, 7}};
  const int kernels[] = {11, 3, 7};
  int planned = 0;
  for (int s = 0; s < 3; ++s)
    for (avgpool_layout layout : {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC})
      for (int64_t i = 0; i < count; ++i) {
        const char* name = nullptr;
        int backward = 0;
        REQUIRE(avgpool_impl_name(i, &name) == AVGPOOL_SUCCESS);
        REQUIRE(avgpool_impl_is_backward(i, &backward) == AVGPOOL_SUCCESS);
        if (strncmp(name, "cuda:", 5) != 0) continue;
        avgpool_params p;
        avgpool_params_init(&p);
        p.n = shapes[s][0]; p.c = shapes[s][1]; p.h = shapes[s][2]; p.w = shapes[s][3];
        p.kernel_h = p.kernel_w = kernels[s];
        p.stride_h = p.stride_w = s == 1 ? 1 : 0;
        p.padding_h = p.padding_w = s == 1 ? 1 : 0;
        p.layout = layout;
        p.backend = AVGPOOL_BACKEND_CUDA;
        avgpool_plan* plan = nullptr;
        const avgpool_status st = backward ? avgpool_plan_create_with_impls(&p, nullptr, name, &plan)
                                           : avgpool_plan_create_with_impl(&p, name, &plan);
        if (st == AVGPOOL_ERROR_UNSUPPORTED) continue;
        CAPTURE(name);
        REQUIRE_MESSAGE(st == AVGPOOL_SUCCESS, avgpool_last_error_message());
        CHECK(avgpool_plan_execute(plan, nullptr, nullptr, nullptr) == AVGPOOL_SUCCESS);
        CHECK(avgpool_plan_backward(plan, nullptr, nullptr, nullptr) == AVGPOOL_SUCCESS);
        avgpool_plan_destroy(plan);
        ++planned;
      }
  CHECK(planned > 10);
}

}  // TEST_SUITE

#endif  // AVGPOOL_WITH_CUDA

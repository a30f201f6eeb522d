// Helpers of the GPU tests: device buffers with poisoned guard bands, and
// running one implementation (by name) on host data through the device.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "tensor_util.h"

namespace gpu_test {

#define CUDA_OK(expr)                                                                  \
  do {                                                                                 \
    cudaError_t e_ = (expr);                                                           \
    if (e_ != cudaSuccess) FAIL(#expr << ": " << cudaGetErrorString(e_));              \
  } while (0)

// The CUDA implementations of one direction this build registers (names
// starting "cuda:"), in dispatch order.
inline std::vector<std::string> cuda_impl_names_of(bool backward) {
  return backward ? avgpool_support::backward_impl_names("cuda:") : avgpool_support::impl_names("cuda:");
}

// AVGPOOL_GPU_TEST_QUICK=1: the short runs compute-sanitizer can afford.
inline bool quick() {
  const char* e = getenv("AVGPOOL_GPU_TEST_QUICK");
  return e != nullptr && atoi(e) != 0;
}

// Random configurations a suite draws: AVGPOOL_GPU_TEST_CONFIGS, else
// `quick_count` in quick runs and `full_count` otherwise.
inline int configs_to_run(int full_count, int quick_count) {
  const char* e = getenv("AVGPOOL_GPU_TEST_CONFIGS");
  return e != nullptr ? atoi(e) : quick() ? quick_count : full_count;
}
// The compute capability (10 * major + minor) plans on the current device
// see: the device's own, lowered by AVGPOOL_CUDA_TREAT_AS_SM when that names
// an older architecture (the library's testing aid; common.cu reads it the
// same way).
inline int effective_sm() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  int sm = 10 * major + minor;
  if (const char* e = getenv("AVGPOOL_CUDA_TREAT_AS_SM"))
    if (*e != '\0' && atoi(e) > 0 && atoi(e) < sm) sm = atoi(e);
  return sm;
}

// The bulk-copy implementations (the copy engine: sm_90 and newer). They run
// where plans see sm_90 or newer and the build has sm_90 code
// (AVGPOOL_TEST_CUDA_SM90_CODE: tests/CMakeLists.txt reads
// CMAKE_CUDA_ARCHITECTURES); elsewhere they decline and AUTO takes the
// portable implementations.
inline bool is_bulk_copy_impl(const std::string& name) {
  return name == "cuda:nchw_row_stream" || name == "cuda:nhwc_tile_stream" || name == "cuda:nchw_row_bulk";
}
inline bool bulk_copy_expected() {
#if defined(AVGPOOL_TEST_CUDA_SM90_CODE) && AVGPOOL_TEST_CUDA_SM90_CODE
  return effective_sm() >= 90;
#else
  return false;
#endif
}

// The forward ones (what avgpool_plan_create_with_impl forces).
inline std::vector<std::string> cuda_impl_names() { return cuda_impl_names_of(false); }
// The backward ones (forced with avgpool_plan_create_with_impls).
inline std::vector<std::string> cuda_backward_impl_names() { return cuda_impl_names_of(true); }

// A device allocation of `bytes` at byte offset `offset` (to test unaligned
// pointers) with kGuard poisoned bytes on either side.
class Guarded {
 public:
  static constexpr int64_t kGuard = 1024;
  Guarded(int64_t bytes, int64_t offset) : bytes_(bytes), offset_(offset) {
    total_ = bytes + 2 * kGuard + offset;
    if (cudaMalloc(&base_, (size_t)total_) != cudaSuccess) base_ = nullptr;
    else cudaMemset(base_, avgpool_support::kPoisonByte, (size_t)total_);
  }
  ~Guarded() { cudaFree(base_); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
  bool ok() const { return base_ != nullptr; }
  void* data() const { return base_ + kGuard + offset_; }
  void upload(const void* host) { cudaMemcpy(data(), host, (size_t)bytes_, cudaMemcpyHostToDevice); }
  void download(void* host) const { cudaMemcpy(host, data(), (size_t)bytes_, cudaMemcpyDeviceToHost); }
  void poison() { cudaMemset(data(), avgpool_support::kPoisonByte, (size_t)bytes_); }
  // True if the bytes before and after the data still hold the poison.
  bool guards_intact() const {
    std::vector<unsigned char> before((size_t)(kGuard + offset_)), after((size_t)kGuard);
    cudaMemcpy(before.data(), base_, before.size(), cudaMemcpyDeviceToHost);
    cudaMemcpy(after.data(), base_ + kGuard + offset_ + bytes_, after.size(), cudaMemcpyDeviceToHost);
    return avgpool_support::is_poisoned(before.data(), (int64_t)before.size()) &&
           avgpool_support::is_poisoned(after.data(), (int64_t)after.size());
  }

 private:
  char* base_ = nullptr;
  int64_t bytes_, offset_, total_;
};

// NCHW <-> NHWC on the host, for any element size.
struct RunResult {
  avgpool_status status = AVGPOOL_SUCCESS;  // of plan creation (UNSUPPORTED = declined)
  std::string message, impl;                // impl: the backward's name (backward runs)
  bool guards_ok = true;
  cudaError_t device_error = cudaSuccess;
  std::vector<char> out;  // host copy of what the run wrote (dst, or grad_input)
};

// Runs plan (destroyed here; elements of es bytes) forward, or backward, on
// host input through the device: input and output in guarded buffers at byte offsets in_off /
// out_off, the output poisoned, `repeats` runs on stream.
inline RunResult run_plan_on_device(avgpool_plan* plan, int64_t es, bool backward, const void* input, int64_t in_off,
                                    int64_t out_off, cudaStream_t stream, int repeats, RunResult r = {}) {
  int64_t sn = 0, dn = 0;
  avgpool_plan_sizes(plan, &sn, &dn);
  const int64_t in_n = backward ? dn : sn, out_n = backward ? sn : dn;
  Guarded in(in_n * es, in_off), out(out_n * es, out_off);
  if (!in.ok() || !out.ok()) {
    r.status = AVGPOOL_ERROR_OUT_OF_MEMORY;
    avgpool_plan_destroy(plan);
    return r;
  }
  in.upload(input);
  // The poison and the upload ran on the legacy default stream, which a
  // non-blocking caller stream does not wait for (and cudaMemcpy from
  // pageable memory may return before its DMA lands).
  cudaDeviceSynchronize();
  for (int i = 0; i < repeats && r.status == AVGPOOL_SUCCESS; ++i) {
    r.status = backward ? avgpool_plan_backward(plan, in.data(), out.data(), stream)
                        : avgpool_plan_execute(plan, in.data(), out.data(), stream);
    if (r.status != AVGPOOL_SUCCESS) r.message = avgpool_last_error_message();
  }
  r.device_error = cudaDeviceSynchronize();
  r.out.resize((size_t)(out_n * es));
  out.download(r.out.data());
  r.guards_ok = in.guards_intact() && out.guards_intact();
  avgpool_plan_destroy(plan);
  return r;
}

// Runs implementation `impl` (forced; NULL: AUTO) on host src through the device, with
// poisoned dst, guard bands and pointers offset by src_off / dst_off bytes.
inline RunResult run_on_device(const avgpool_params& p, const char* impl, const void* src,
                               int64_t src_off = 0, int64_t dst_off = 0, cudaStream_t stream = 0,
                               int repeats = 1) {
  RunResult r;
  avgpool_plan* plan = nullptr;
  // impl NULL or "": AUTO
  r.status = impl != nullptr && *impl != 0 ? avgpool_plan_create_with_impl(&p, impl, &plan) : avgpool_plan_create(&p, &plan);
  if (r.status != AVGPOOL_SUCCESS) {
    r.message = avgpool_last_error_message();
    return r;
  }
  return run_plan_on_device(plan, avgpool_support::element_size(p.dtype), false, src, src_off, dst_off, stream,
                            repeats);
}

// Runs each implementation of `names` that accepts p on host src through the
// device and checks it against the reference (compare_to_reference), with
// element-aligned but not 16-byte-aligned pointers one time in
// `unaligned_one_in`; with `determinism`, runs it again (twice) and checks
// the bits. Counts runs per name; returns how many implementations ran (a
// decline is not a pass).
inline int check_impls(const avgpool_params& p, const void* src, const std::vector<std::string>& names,
                       std::map<std::string, int>* runs, std::mt19937_64& rng, bool determinism,
                       int unaligned_one_in = 4) {
  using namespace avgpool_support;
  int64_t sn = 0, dn = 0;
  REQUIRE(element_counts(p, &sn, &dn));
  const int64_t es = element_size(p.dtype);
  std::vector<char> ref((size_t)(dn * es));
  REQUIRE(run_reference(p, src, ref.data()) == AVGPOOL_SUCCESS);
  int ran = 0;
  for (const std::string& name : names) {
    const int64_t src_off = (rng() % unaligned_one_in == 0) ? es : 0;
    const int64_t dst_off = (rng() % unaligned_one_in == 0) ? es : 0;
    RunResult r = run_on_device(p, name.c_str(), src, src_off, dst_off);
    if (r.status == AVGPOOL_ERROR_UNSUPPORTED) continue;
    INFO(name << " on " << describe(p) << " src_off " << src_off << " dst_off " << dst_off);
    REQUIRE_MESSAGE(r.status == AVGPOOL_SUCCESS, r.message);
    REQUIRE(r.device_error == cudaSuccess);
    CHECK(r.guards_ok);
    const Mismatch m = compare_to_reference(p, src, r.out.data(), ref.data());
    CHECK_MESSAGE(m.count == 0, m.message());
    if (determinism) {
      RunResult again = run_on_device(p, name.c_str(), src, src_off, dst_off, 0, 2);
      REQUIRE(again.status == AVGPOOL_SUCCESS);
      CHECK_MESSAGE(memcmp(again.out.data(), r.out.data(), r.out.size()) == 0, "results differ between runs");
    }
    ++(*runs)[name];
    ++ran;
  }
  return ran;
}

// One line: how many runs each implementation had.
// A targeted problem of a test's table: dims, window, strides, padding,
// ceil_mode, count_include_pad and divisor_override (0: none).
struct Shape {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int ceil, incl;
  int64_t divisor = 0;
};

// f(p, dtype) for s in every dtype (f32 only in the quick suite), layout and
// numerics.
template <typename F> void for_each_variant(const Shape& s, F&& f) {
  for (int dt = 0; dt < (quick() ? 1 : 4); ++dt)
    for (int lay = 0; lay < 2; ++lay)
      for (int num = 0; num < 2; ++num) {
        avgpool_params p =
            avgpool_support::shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, s.sw, s.ph, s.pw, s.ceil);
        p.count_include_pad = s.incl;
        p.divisor_override = s.divisor;
        p.dtype = (avgpool_dtype)dt;
        p.layout = (avgpool_layout)lay;
        p.numerics = (avgpool_numerics)num;
        f(p, dt);
      }
}

// A random input tensor for p, values in [lo, hi), seeded from rng.
inline std::vector<char> random_src(const avgpool_params& p, std::mt19937_64& rng, double lo, double hi) {
  const int64_t sn = p.n * p.c * p.h * p.w;
  std::vector<char> src((size_t)(sn * avgpool_support::element_size(p.dtype)));
  avgpool_support::fill_random(p.dtype, src.data(), sn, rng(), lo, hi);
  return src;
}

inline void print_runs(const char* what, const std::map<std::string, int>& runs) {
  printf("%s:", what);
  for (const auto& kv : runs) printf(" %s=%d", kv.first.c_str(), kv.second);
  printf("\n");
}

}  // namespace gpu_test

// avgpool_gpu_bench: the CUDA backend against its ceilings, in one process.
//
// For each case (docs/performance.md: the seed case in f32/f16/bf16, NCHW
// and NHWC, both numerics; the generic suite in both layouts) it times, with
// CUDA events, the median of --reps runs after warm-up, alternating:
//   - ours: avgpool_plan_execute (AUTO: the implementation AUTO picks);
//   - read: a read-only pass over the same input (16-byte streaming loads,
//     warp reduction): the ceiling the targets are stated against;
//   - read+write: the read pass plus the output's bytes written as the input
//     is read, the data movement no pooling kernel can avoid;
//   - cuDNN's cudnnPoolingForward, where libcudnn.so.9 loads (dlopen; path
//     from --cudnn DIR or the loader's search path) and the case has no
//     ceil_mode; when cuDNN refuses the whole tensor it is chunked by batch
//     and the refusal reported.
// A device-to-device copy measured once gives the copy roofline: (bytes in +
// bytes out) / copy bandwidth. Inputs are random (never zeros); the timed
// output of batch item 0 is checked against the reference on 400 samples.
//
// --backward times the backward instead (avgpool_plan_backward on the same
// cases) against a pass that reads grad_output and writes grad_input's bytes
// and the copy roofline; --impl then names a backward implementation.
//
// usage: avgpool_gpu_bench [--backward] [--json FILE] [--reps N] [--cudnn DIR] [--only SUBSTR] [--impl NAME]
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <random>
#include <string>
#include <functional>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "cuda_check.h"
#include "tensor_util.h"

namespace {

// ---- device helpers ------------------------------------------------------------
__device__ __forceinline__ uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return x;
}
template <typename T> __device__ T from_f(float v);
template <> __device__ float from_f<float>(float v) { return v; }
template <> __device__ double from_f<double>(float v) { return v; }
template <> __device__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// p[i] = uniform in [-1, 1) from (seed, i), never exactly zero in practice.
template <typename T> __global__ void fill_kernel(T* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i);
    p[i] = from_f<T>((float)((h >> 40) * (1.0 / 16777216.0)) * 2.0f - 0.999f);
  }
}

#include "read_passes.cuh"

// ---- cuDNN, loaded at run time ---------------------------------------------------
struct Cudnn {
  void* lib = nullptr;
  void* handle = nullptr;
  int (*create)(void**) = nullptr;
  int (*set_stream)(void*, cudaStream_t) = nullptr;
  int (*create_td)(void**) = nullptr;
  int (*set_td)(void*, int, int, int, int, int, int) = nullptr;
  int (*create_pd)(void**) = nullptr;
  int (*set_pd)(void*, int, int, int, int, int, int, int, int) = nullptr;
  int (*forward)(void*, void*, const void*, void*, const void*, const void*, void*, void*) = nullptr;
  const char* (*err)(int) = nullptr;
  std::string why;

  bool load(const char* dir) {
    std::vector<std::string> tries;
    if (dir) tries.push_back(std::string(dir) + "/libcudnn.so.9");
    tries.push_back("libcudnn.so.9");
    for (const std::string& t : tries) {
      lib = dlopen(t.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (lib) break;
      why = dlerror();
    }
    if (!lib) return false;
#define SYM(field, name)                                    \
  field = reinterpret_cast<decltype(field)>(dlsym(lib, name)); \
  if (!field) { why = std::string("missing ") + name; lib = nullptr; return false; }
    SYM(create, "cudnnCreate");
    SYM(set_stream, "cudnnSetStream");
    SYM(create_td, "cudnnCreateTensorDescriptor");
    SYM(set_td, "cudnnSetTensor4dDescriptor");
    SYM(create_pd, "cudnnCreatePoolingDescriptor");
    SYM(set_pd, "cudnnSetPooling2dDescriptor");
    SYM(forward, "cudnnPoolingForward");
    SYM(err, "cudnnGetErrorString");
#undef SYM
    const int s = create(&handle);
    if (s != 0) { why = std::string("cudnnCreate: ") + err(s); lib = nullptr; return false; }
    return true;
  }
};

// One cuDNN pooling call on a batch range; returns the cuDNN status.
struct CudnnCall {
  Cudnn* dnn;
  void *xd = nullptr, *yd = nullptr, *pd = nullptr;
  int status = 0;
  int64_t batch = 0;  // batch items per call
  const avgpool_params* p;
  int64_t oh, ow;

  int setup(int64_t nb) {
    batch = nb;
    const int fmt = p->layout == AVGPOOL_LAYOUT_NHWC ? 1 : 0;
    const int dt = p->dtype == AVGPOOL_DTYPE_F32 ? 0 : p->dtype == AVGPOOL_DTYPE_F64 ? 1
                   : p->dtype == AVGPOOL_DTYPE_F16 ? 2 : 9;
    int s;
    if (!xd) { dnn->create_td(&xd); dnn->create_td(&yd); dnn->create_pd(&pd); }
    if ((s = dnn->set_td(xd, fmt, dt, (int)nb, (int)p->c, (int)p->h, (int)p->w))) return s;
    if ((s = dnn->set_td(yd, fmt, dt, (int)nb, (int)p->c, (int)oh, (int)ow))) return s;
    const int mode = p->count_include_pad ? 1 : 2;
    return dnn->set_pd(pd, mode, 0, (int)p->kernel_h, (int)p->kernel_w, (int)p->padding_h,
                       (int)p->padding_w, (int)(p->stride_h ? p->stride_h : p->kernel_h),
                       (int)(p->stride_w ? p->stride_w : p->kernel_w));
  }
  int run(const char* src, char* dst, int64_t es) {
    const float a32 = 1.f, b32 = 0.f;
    const double a64 = 1.0, b64 = 0.0;
    const void* alpha = p->dtype == AVGPOOL_DTYPE_F64 ? (const void*)&a64 : (const void*)&a32;
    const void* beta = p->dtype == AVGPOOL_DTYPE_F64 ? (const void*)&b64 : (const void*)&b32;
    const int64_t in_item = p->c * p->h * p->w * es, out_item = p->c * oh * ow * es;
    for (int64_t n0 = 0; n0 < p->n; n0 += batch) {
      int s = dnn->forward(dnn->handle, pd, alpha, xd, src + n0 * in_item, beta, yd, dst + n0 * out_item);
      if (s) return s;
    }
    return 0;
  }
};

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Case {
  std::string name;
  int64_t n, c, h, w, k, s, pad;
  int ceil, incl;
  avgpool_dtype dtype;
  avgpool_layout layout;
  avgpool_numerics numerics;
  int64_t kw = 0, sw = 0;  // non-square windows: kernel and stride along W (0: k, s)
};

// The cases of docs/performance.md: the seed in f32/f16/bf16 NCHW and f32
// NHWC in both numerics (and f16 NHWC fast), the generic suite in both
// layouts and numerics.
std::vector<Case> bench_cases() {
  std::vector<Case> cases;
  const avgpool_layout NCHW = AVGPOOL_LAYOUT_NCHW, NHWC = AVGPOOL_LAYOUT_NHWC;
  const avgpool_numerics FAST = AVGPOOL_NUMERICS_FAST, PYT = AVGPOOL_NUMERICS_PYTORCH;
  for (avgpool_numerics num : {FAST, PYT}) {
    for (avgpool_dtype dt : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16})
      cases.push_back({"seed", 16, 64, 2048, 2048, 11, 11, 0, 0, 1, dt, NCHW, num});
    cases.push_back({"seed", 16, 64, 2048, 2048, 11, 11, 0, 0, 1, AVGPOOL_DTYPE_F32, NHWC, num});
  }
  cases.push_back({"seed", 16, 64, 2048, 2048, 11, 11, 0, 0, 1, AVGPOOL_DTYPE_F16, NHWC, FAST});
  // name, n, c, h, w, kernel, stride, padding, ceil_mode, count_include_pad
  struct Generic { const char* name; int64_t n, c, h, w, k, s, pad; int ceil, incl; };
  const Generic generic[] = {
      {"k3s1p1", 32, 256, 56, 56, 3, 1, 1, 0, 1},      {"k3s1p1_excl", 32, 256, 56, 56, 3, 1, 1, 0, 0},
      {"k2s2", 64, 128, 112, 112, 2, 2, 0, 0, 1},      {"k3s2p1_ceil", 64, 64, 112, 112, 3, 2, 1, 1, 1},
      {"global_k7", 256, 2048, 7, 7, 7, 7, 0, 0, 1},   {"k11s4", 16, 64, 1024, 1024, 11, 4, 0, 0, 1},
      {"k5s1p2", 8, 64, 1024, 1024, 5, 1, 2, 0, 1},
  };
  for (avgpool_layout lay : {NCHW, NHWC})
    for (avgpool_numerics num : {FAST, PYT})
      for (const Generic& g : generic)
        cases.push_back({g.name, g.n, g.c, g.h, g.w, g.k, g.s, g.pad, g.ceil, g.incl, AVGPOOL_DTYPE_F32, lay, num});
  return cases;
}

// Large windows (docs/performance.md, "Large windows"): global pooling of
// big and of many small planes, large overlapping windows, a tall column
// window over one plane; both numerics, f32 NCHW (the column in bf16), and
// NHWC for two of them. Forward only. Names start with "lw_" (--only lw_).
std::vector<Case> large_window_cases() {
  const avgpool_layout NCHW = AVGPOOL_LAYOUT_NCHW, NHWC = AVGPOOL_LAYOUT_NHWC;
  const avgpool_dtype F32 = AVGPOOL_DTYPE_F32, BF16 = AVGPOOL_DTYPE_BF16;
  // name, n, c, h, w, kernel (h, w), stride (h, w), dtype, layout; no padding
  struct Large { const char* name; int64_t n, c, h, w, kh, kw, sh, sw; avgpool_dtype dtype; avgpool_layout layout; };
  const Large large[] = {
      {"lw_global1024", 64, 3, 1024, 1024, 1024, 1024, 1024, 1024, F32, NCHW},
      {"lw_global256", 16, 64, 256, 256, 256, 256, 256, 256, F32, NCHW},
      {"lw_global64", 32, 512, 64, 64, 64, 64, 64, 64, F32, NCHW},
      {"lw_k32s16", 8, 64, 512, 512, 32, 32, 16, 16, F32, NCHW},
      {"lw_k64s32", 8, 64, 512, 512, 64, 64, 32, 32, F32, NCHW},
      {"lw_col4096", 1, 1, 4096, 4096, 4096, 1, 1, 1, BF16, NCHW},
      {"lw_global64", 32, 512, 64, 64, 64, 64, 64, 64, F32, NHWC},
      {"lw_k32s16", 8, 64, 512, 512, 32, 32, 16, 16, F32, NHWC},
  };
  std::vector<Case> cases;
  for (avgpool_numerics num : {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH})
    for (const Large& l : large)
      cases.push_back({l.name, l.n, l.c, l.h, l.w, l.kh, l.sh, 0, 0, 1, l.dtype, l.layout, num, l.kw, l.sw});
  return cases;
}

avgpool_params params_of(const Case& cs) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = cs.n; p.c = cs.c; p.h = cs.h; p.w = cs.w;
  p.kernel_h = p.kernel_w = cs.k; p.stride_h = p.stride_w = cs.s;
  p.padding_h = p.padding_w = cs.pad; p.ceil_mode = cs.ceil; p.count_include_pad = cs.incl;
  p.dtype = cs.dtype; p.layout = cs.layout; p.numerics = cs.numerics;
  p.backend = AVGPOOL_BACKEND_CUDA;
  return p;
}

void fill_device(avgpool_dtype dtype, void* p, int64_t n, uint64_t seed, cudaStream_t stream) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F32: fill_kernel<<<4096, 256, 0, stream>>>((float*)p, n, seed); break;
    case AVGPOOL_DTYPE_F64: fill_kernel<<<4096, 256, 0, stream>>>((double*)p, n, seed); break;
    case AVGPOOL_DTYPE_F16: fill_kernel<<<4096, 256, 0, stream>>>((__half*)p, n, seed); break;
    case AVGPOOL_DTYPE_BF16: fill_kernel<<<4096, 256, 0, stream>>>((__nv_bfloat16*)p, n, seed); break;
  }
  CK(cudaGetLastError());
}

// Device-to-device copy rate of 8 GiB inside buf (bytes read + written per
// second): the copy roofline's rate.
double copy_rate(char* buf, int64_t buf_bytes, cudaStream_t stream) {
  const int64_t bytes = 8LL << 30;
  std::vector<float> t;
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int r = 0; r < 6; ++r) {
    cudaEventRecord(a, stream);
    CK(cudaMemcpyAsync(buf + (buf_bytes - bytes), buf, (size_t)bytes, cudaMemcpyDeviceToDevice, stream));
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (r > 0) t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return 2.0 * bytes / (median(t) * 1e-3) / 1e9;
}

// Median milliseconds of each of fns, run in turn `reps` times on stream
// (ours and its anchors alternate, so drift touches all of them alike).
std::vector<double> alternate_medians(cudaStream_t stream, int reps, const std::vector<std::function<void()>>& fns) {
  const size_t k = fns.size();
  std::vector<cudaEvent_t> ev(k * reps + 1);
  for (auto& e : ev) cudaEventCreate(&e);
  cudaEventRecord(ev[0], stream);
  for (int r = 0; r < reps; ++r)
    for (size_t f = 0; f < k; ++f) {
      fns[f]();
      cudaEventRecord(ev[k * r + f + 1], stream);
    }
  CK(cudaStreamSynchronize(stream));
  CK(cudaGetLastError());
  std::vector<std::vector<float>> t(k);
  for (int r = 0; r < reps; ++r)
    for (size_t f = 0; f < k; ++f) {
      float ms = 0;
      cudaEventElapsedTime(&ms, ev[k * r + f], ev[k * r + f + 1]);
      t[f].push_back(ms);
    }
  for (auto& e : ev) cudaEventDestroy(e);
  std::vector<double> medians;
  for (auto& v : t) medians.push_back(median(v));
  return medians;
}

// ---- backward mode (--backward) ----------------------------------------------------------
// avgpool_plan_backward (grad_input from grad_output; AUTO's backward, or
// --impl NAME's) on every case, against two anchors timed in the same run,
// alternating with it:
//   - read+write: a pass that reads grad_output once and writes grad_input's
//     bytes (read_write_kernel: the data movement no backward can avoid;
//     the seed's target is stated against it);
//   - the copy roofline: (bytes of grad_output + grad_input) at the
//     device-to-device copy rate (the generic suite's targets).
// grad_output is random in [-1, 1); 400 sampled grad_input elements and the
// first and last are checked against avgpool_reference_grad_inputs
// (pytorch numerics bitwise, fast within the float32 summation bound).
int backward_bench(int reps, const char* json_path, const char* only, const char* force_impl,
                   const cudaDeviceProp& prop, const char* date) {
  const std::vector<Case> cases = bench_cases();
  // The seed's grad_input is the largest; k5s1p2's grad_output too.
  const int64_t max_gin = 16LL * 64 * 2048 * 2048 * 4, max_gout = 8LL * 64 * 1024 * 1024 * 4;
  char *gin = nullptr, *gin2 = nullptr, *gout = nullptr;
  CK(cudaMalloc(&gin, (size_t)max_gin));
  CK(cudaMalloc(&gin2, (size_t)max_gin));  // the read+write anchor's output
  CK(cudaMalloc(&gout, (size_t)max_gout));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double copy_gbps = copy_rate(gin, max_gin, stream);
  printf("backward mode; copy roofline: %.0f GB/s (8 GiB device-to-device, read + write)\n", copy_gbps);
  FILE* json = json_path ? fopen(json_path, "w") : nullptr;
  if (json)
    fprintf(json, "{\n \"device\": \"%s\", \"date\": \"%s\", \"direction\": \"backward\", \"copy_gbps\": %.1f,\n \"cases\": [\n",
            prop.name, date, copy_gbps);
  printf("\n%-12s %-5s %-4s %-7s %-24s %9s %9s %7s %9s %8s %s\n", "case", "dtype", "lay", "numer", "impl", "ours_ms",
         "rw_ms", "rw/ours", "copy_rf", "rf/ours", "check");
  bool first_json = true;
  int failures = 0;
  for (const Case& cs : cases) {
    const avgpool_params p = params_of(cs);
    const std::string full = cs.name + "_" + avgpool_dtype_name(cs.dtype) + "_" + avgpool_layout_name(cs.layout) +
                             "_" + avgpool_numerics_name(cs.numerics);
    if (only && full.find(only) == std::string::npos) continue;
    avgpool_plan* plan = nullptr;
    const char* impl = nullptr;
    if ((force_impl ? avgpool_plan_create_with_impls(&p, nullptr, force_impl, &plan) : avgpool_plan_create(&p, &plan)) !=
            AVGPOOL_SUCCESS ||
        avgpool_plan_backward_impl_name(plan, &impl) != AVGPOOL_SUCCESS) {
      printf("%s: no backward plan: %s\n", full.c_str(), avgpool_last_error_message());
      avgpool_plan_destroy(plan);
      ++failures;
      continue;
    }
    int64_t gin_n = 0, gout_n = 0, dims[4];
    avgpool_plan_sizes(plan, &gin_n, &gout_n);
    avgpool_plan_output_dims(plan, dims);
    const int64_t es = avgpool_support::element_size(cs.dtype);
    const int64_t gin_bytes = gin_n * es, gout_bytes = gout_n * es;
    fill_device(cs.dtype, gout, gout_n, 4321 + (uint64_t)cs.dtype, stream);
    auto ours = [&] { return avgpool_plan_backward(plan, gout, gin, stream); };
    auto read_write_pass = [&] {
      read_write_kernel<<<prop.multiProcessorCount * 8, 256, 0, stream>>>((const float4*)gout, gout_bytes / 16,
                                                                         (float4*)gin2, gin_bytes / 16);
    };
    bool ok_run = true;
    for (int r = 0; r < 3 && ok_run; ++r) {  // warm-up
      ok_run = ours() == AVGPOOL_SUCCESS;
      read_write_pass();
    }
    if (!ok_run) {
      printf("%s: backward failed: %s\n", full.c_str(), avgpool_last_error_message());
      avgpool_plan_destroy(plan);
      ++failures;
      continue;
    }
    CK(cudaStreamSynchronize(stream));
    const std::vector<double> ms = alternate_medians(stream, reps, {ours, read_write_pass});
    const double t = ms[0], rw = ms[1];

    // Check sampled elements of the timed grad_input.
    int64_t bad = 0;
    {
      std::vector<char> g_host((size_t)gout_bytes), g_abs((size_t)gout_bytes);
      CK(cudaMemcpy(g_host.data(), gout, (size_t)gout_bytes, cudaMemcpyDeviceToHost));
      for (int64_t i = 0; i < gout_n; ++i)
        avgpool_support::store_double(cs.dtype, g_abs.data(), i, fabs(avgpool_support::load_double(cs.dtype, g_host.data(), i)));
      std::mt19937_64 rng(7);
      std::vector<int64_t> idx;
      for (int i = 0; i < 400; ++i) idx.push_back((int64_t)(rng() % (uint64_t)gin_n));
      idx.push_back(0);
      idx.push_back(gin_n - 1);
      std::vector<double> want(idx.size()), abs_sum(idx.size());
      std::vector<char> got(idx.size() * (size_t)es);
      for (size_t i = 0; i < idx.size(); ++i)
        CK(cudaMemcpy(got.data() + i * es, gin + idx[i] * es, (size_t)es, cudaMemcpyDeviceToHost));
      avgpool_reference_grad_inputs(plan, g_host.data(), (int64_t)idx.size(), idx.data(), want.data());
      avgpool_reference_grad_inputs(plan, g_abs.data(), (int64_t)idx.size(), idx.data(), abs_sum.data());
      // fast: 1 ulp of the dtype + (K + 2) * 2^-24 * sum|g / d| (K: the most terms per element)
      const double ulp = cs.dtype == AVGPOOL_DTYPE_F32 ? 0x1.0p-23 : cs.dtype == AVGPOOL_DTYPE_F64 ? 0x1.0p-52
                         : cs.dtype == AVGPOOL_DTYPE_F16 ? 0x1.0p-10 : 0x1.0p-7;
      const double terms = (double)std::min((cs.k + cs.s - 1) / cs.s, dims[2]) * std::min((cs.k + cs.s - 1) / cs.s, dims[3]);
      for (size_t i = 0; i < idx.size(); ++i) {
        const double g = avgpool_support::load_double(cs.dtype, got.data(), (int64_t)i);
        const bool ok = cs.numerics == AVGPOOL_NUMERICS_PYTORCH
                            ? g == want[i]
                            : fabs(g - want[i]) <= ulp * fabs(want[i]) + (terms + 2) * 0x1.0p-24 * abs_sum[i] * 1.01 + 1e-300;
        if (!ok) {
          if (bad < 3)
            printf("  check %s: grad_input[%lld] got %.9g want %.9g\n", full.c_str(), (long long)idx[i], g, want[i]);
          ++bad;
        }
      }
    }
    if (bad) ++failures;
    const double roof = (double)(gin_bytes + gout_bytes) / (copy_gbps * 1e9) * 1e3;
    printf("%-12s %-5s %-4s %-7s %-24s %9.3f %9.3f %7.3f %9.3f %8.3f %s\n", cs.name.c_str(), avgpool_dtype_name(cs.dtype),
           avgpool_layout_name(cs.layout), avgpool_numerics_name(cs.numerics),
           impl, t, rw, rw / t, roof, roof / t, bad ? "FAIL" : "ok");
    if (json) {
      fprintf(json,
              "%s  {\"case\": \"%s\", \"dtype\": \"%s\", \"layout\": \"%s\", \"numerics\": \"%s\", \"impl\": \"%s\", "
              "\"shape\": [%lld, %lld, %lld, %lld], \"kernel\": %lld, \"stride\": %lld, \"padding\": %lld, "
              "\"ceil_mode\": %d, \"count_include_pad\": %d, \"grad_input_bytes\": %lld, \"grad_output_bytes\": %lld, "
              "\"ours_ms\": %.4f, \"read_write_ms\": %.4f, \"read_write_over_ours\": %.4f, \"ours_gbps\": %.1f, "
              "\"copy_roofline_ms\": %.4f, \"roofline_over_ours\": %.4f, \"reps\": %d, \"check\": \"%s\"}",
              first_json ? "" : ",\n", cs.name.c_str(), avgpool_dtype_name(cs.dtype),
              avgpool_layout_name(cs.layout), avgpool_numerics_name(cs.numerics),
              impl, (long long)cs.n, (long long)cs.c, (long long)cs.h, (long long)cs.w, (long long)cs.k, (long long)cs.s,
              (long long)cs.pad, cs.ceil, cs.incl, (long long)gin_bytes, (long long)gout_bytes, t, rw, rw / t,
              (gin_bytes + gout_bytes) / (t * 1e-3) / 1e9, roof, roof / t, reps, bad ? "FAIL" : "ok");
      first_json = false;
    }
    avgpool_plan_destroy(plan);
  }
  if (json) {
    fprintf(json, "\n ]\n}\n");
    fclose(json);
  }
  cudaFree(gin);
  cudaFree(gin2);
  cudaFree(gout);
  cudaStreamDestroy(stream);
  printf("%s\n", failures ? "SOME CASES FAILED" : "all cases checked ok");
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const char* json_path = nullptr;
  const char* cudnn_dir = getenv("AVGPOOL_CUDNN_DIR");
  const char* only = nullptr;
  const char* force_impl = nullptr;
  int reps = 30;
  bool backward = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json") && i + 1 < argc) json_path = argv[++i];
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--cudnn") && i + 1 < argc) cudnn_dir = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--impl") && i + 1 < argc) force_impl = argv[++i];
    else if (!strcmp(argv[i], "--backward")) backward = true;
    else { fprintf(stderr, "usage: %s [--backward] [--json FILE] [--reps N] [--cudnn DIR] [--only SUBSTR] [--impl NAME]\n", argv[0]); return 2; }
  }
  if (no_cuda_device()) return 0;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  char date[64];
  time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  printf("device: %s, %d SMs, L2 %d MB, runtime %d, driver %d, %s\n", prop.name,
         prop.multiProcessorCount, prop.l2CacheSize >> 20, runtime, driver, date);
  if (backward) return backward_bench(reps, json_path, only, force_impl, prop, date);

  Cudnn dnn;
  const bool have_cudnn = dnn.load(cudnn_dir);
  printf("cuDNN: %s\n", have_cudnn ? "loaded" : ("not loaded: " + dnn.why).c_str());

  std::vector<Case> cases = bench_cases();
  for (const Case& cs : large_window_cases()) cases.push_back(cs);
  const avgpool_layout NCHW = AVGPOOL_LAYOUT_NCHW;
  const avgpool_numerics FAST = AVGPOOL_NUMERICS_FAST, PYT = AVGPOOL_NUMERICS_PYTORCH;

  // One allocation for every case: the seed input is the largest.
  const int64_t max_src = 16LL * 64 * 2048 * 2048 * 4, max_dst = 8LL * 64 * 1024 * 1024 * 4;  // k5s1p2's output
  char *src = nullptr, *dst = nullptr, *dst2 = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&src, (size_t)max_src));
  CK(cudaMalloc(&dst, (size_t)max_dst));
  CK(cudaMalloc(&dst2, (size_t)max_dst));
  CK(cudaMalloc(&sink, 64));
  cudaStream_t stream;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (have_cudnn) dnn.set_stream(dnn.handle, stream);

  // Copy roofline: device-to-device copy of 8 GiB (read + write counted).
  const double copy_gbps = copy_rate(src, max_src, stream);
  printf("copy roofline: %.0f GB/s (8 GiB device-to-device, read + write)\n", copy_gbps);

  FILE* json = json_path ? fopen(json_path, "w") : nullptr;
  if (json) fprintf(json, "{\n \"device\": \"%s\", \"date\": \"%s\", \"copy_gbps\": %.1f,\n \"cases\": [\n",
                    prop.name, date, copy_gbps);
  printf("\n%-12s %-5s %-4s %-7s %-22s %9s %9s %7s %7s %10s %9s %8s %s\n", "case", "dtype", "lay", "numer",
         "impl", "ours_ms", "read_ms", "rd/ours", "rw/ours", "cudnn_ms", "copy_rf", "rf/ours", "check");
  bool first_json = true;
  int failures = 0;
  uint64_t filled_seed = 0;
  int64_t filled_bytes = 0;
  for (const Case& cs : cases) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = cs.n; p.c = cs.c; p.h = cs.h; p.w = cs.w;
    p.kernel_h = p.kernel_w = cs.k; p.stride_h = p.stride_w = cs.s;
    if (cs.kw) p.kernel_w = cs.kw;
    if (cs.sw) p.stride_w = cs.sw;
    p.padding_h = p.padding_w = cs.pad; p.ceil_mode = cs.ceil; p.count_include_pad = cs.incl;
    p.dtype = cs.dtype; p.layout = cs.layout; p.numerics = cs.numerics;
    const char* dtn = cs.dtype == AVGPOOL_DTYPE_F32 ? "f32" : cs.dtype == AVGPOOL_DTYPE_F16 ? "f16"
                      : cs.dtype == AVGPOOL_DTYPE_BF16 ? "bf16" : "f64";
    const char* layn = avgpool_layout_name(cs.layout);
    const char* numn = avgpool_numerics_name(cs.numerics);
    const std::string full = cs.name + "_" + dtn + "_" + layn + "_" + numn;
    if (only && full.find(only) == std::string::npos) continue;
    avgpool_plan* plan = nullptr;
    if ((force_impl ? avgpool_plan_create_with_impl(&p, force_impl, &plan) : avgpool_plan_create(&p, &plan)) !=
        AVGPOOL_SUCCESS) {
      printf("%s: plan failed: %s\n", full.c_str(), avgpool_last_error_message());
      ++failures;
      continue;
    }
    const char* impl = nullptr;
    avgpool_plan_impl_name(plan, &impl);
    int64_t sn = 0, dn = 0, dims[4];
    avgpool_plan_sizes(plan, &sn, &dn);
    avgpool_plan_output_dims(plan, dims);
    const int64_t es = avgpool_support::element_size(cs.dtype);
    const int64_t sbytes = sn * es, dbytes = dn * es;
    // Fill (once per dtype and size: the same random tensor serves both layouts).
    const uint64_t seed = 1234 + (uint64_t)cs.dtype;
    if (filled_seed != seed || filled_bytes != sbytes) {
      switch (cs.dtype) {
        case AVGPOOL_DTYPE_F32: fill_kernel<<<4096, 256, 0, stream>>>((float*)src, sn, seed); break;
        case AVGPOOL_DTYPE_F64: fill_kernel<<<4096, 256, 0, stream>>>((double*)src, sn, seed); break;
        case AVGPOOL_DTYPE_F16: fill_kernel<<<4096, 256, 0, stream>>>((__half*)src, sn, seed); break;
        case AVGPOOL_DTYPE_BF16: fill_kernel<<<4096, 256, 0, stream>>>((__nv_bfloat16*)src, sn, seed); break;
      }
      CK(cudaGetLastError());
      filled_seed = seed;
      filled_bytes = sbytes;
    }
    // warm-up
    for (int r = 0; r < 3; ++r) {
      if (avgpool_plan_execute(plan, src, dst, stream) != AVGPOOL_SUCCESS) {
        printf("%s: execute failed: %s\n", full.c_str(), avgpool_last_error_message());
        ++failures;
        break;
      }
      read_kernel<<<prop.multiProcessorCount * 8, 256, 0, stream>>>((const float4*)src, sbytes / 16, sink);
    }
    CK(cudaStreamSynchronize(stream));
    // alternate ours / read / read+write
    auto read_pass = [&] {
      read_kernel<<<prop.multiProcessorCount * 8, 256, 0, stream>>>((const float4*)src, sbytes / 16, sink);
    };
    auto read_write_pass = [&] {
      read_write_kernel<<<prop.multiProcessorCount * 8, 256, 0, stream>>>((const float4*)src, sbytes / 16,
                                                                         (float4*)dst2, dbytes / 16);
    };
    read_write_pass();
    const std::vector<double> ms =
        alternate_medians(stream, reps, {[&] { avgpool_plan_execute(plan, src, dst, stream); }, read_pass, read_write_pass});
    const double ours = ms[0], rd = ms[1], rw = ms[2];

    // cuDNN (no ceil_mode there)
    double dnn_ms = -1;
    std::string dnn_note = "-";
    if (have_cudnn && !cs.ceil) {
      CudnnCall call{&dnn};
      call.p = &p;
      call.oh = dims[2];
      call.ow = dims[3];
      int s = call.setup(p.n);
      if (s == 0) s = call.run(src, dst2, es);
      cudaStreamSynchronize(stream);
      cudaGetLastError();
      if (s != 0) {
        dnn_note = std::string("refused whole tensor (") + dnn.err(s) + ")";
        int64_t nb = p.n;
        while (s != 0 && nb > 1) {
          nb = (nb + 1) / 2;
          while (p.n % nb) --nb;
          s = call.setup(nb);
          if (s == 0) s = call.run(src, dst2, es);
          cudaStreamSynchronize(stream);
          cudaGetLastError();
        }
        if (s == 0) dnn_note += ", chunks of " + std::to_string(nb);
      } else {
        dnn_note = "whole tensor";
      }
      if (s == 0) {
        std::vector<float> t;
        cudaEvent_t a, b;
        cudaEventCreate(&a); cudaEventCreate(&b);
        for (int r = 0; r < reps; ++r) {
          cudaEventRecord(a, stream);
          call.run(src, dst2, es);
          cudaEventRecord(b, stream);
          cudaEventSynchronize(b);
          float ms = 0;
          cudaEventElapsedTime(&ms, a, b);
          t.push_back(ms);
        }
        dnn_ms = median(t);
      } else {
        dnn_note = std::string("failed: ") + dnn.err(s);
      }
    }

    // Check batch item 0 of the timed output against the reference.
    int64_t bad = 0;
    {
      CK(cudaStreamSynchronize(stream));
      avgpool_params one = p;
      one.n = 1;
      one.backend = AVGPOOL_BACKEND_REFERENCE;
      avgpool_plan* rp = nullptr;
      avgpool_plan_create(&one, &rp);
      int64_t osn = 0, odn = 0;
      avgpool_plan_sizes(rp, &osn, &odn);
      std::vector<char> hs((size_t)(osn * es)), hd((size_t)(odn * es));
      CK(cudaMemcpy(hs.data(), src, hs.size(), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hd.data(), dst, hd.size(), cudaMemcpyDeviceToHost));
      std::mt19937_64 rng(7);
      std::vector<int64_t> idx;
      for (int i = 0; i < 400; ++i) idx.push_back((int64_t)(rng() % (uint64_t)odn));
      idx.push_back(0);
      idx.push_back(odn - 1);
      std::vector<double> want(idx.size());
      avgpool_reference_outputs(rp, hs.data(), (int64_t)idx.size(), idx.data(), want.data());
      // fast: 1 ulp of the dtype + the float32 summation bound (inputs are in [-1, 1))
      const double ulp = cs.dtype == AVGPOOL_DTYPE_F32 ? 0x1.0p-23 : cs.dtype == AVGPOOL_DTYPE_F64 ? 0x1.0p-52
                         : cs.dtype == AVGPOOL_DTYPE_F16 ? 0x1.0p-10 : 0x1.0p-7;
      const double sum_bound = (double)(cs.k * (cs.kw ? cs.kw : cs.k)) * 0x1.0p-24;
      for (size_t i = 0; i < idx.size(); ++i) {
        const double g = avgpool_support::load_double(cs.dtype, hd.data(), idx[i]);
        const bool ok = cs.numerics == PYT ? g == want[i]
                                           : fabs(g - want[i]) <= ulp * fabs(want[i]) + sum_bound;
        if (!ok) {
          if (bad < 3) printf("  check %s: output %lld got %.9g want %.9g\n", full.c_str(), (long long)idx[i], g, want[i]);
          ++bad;
        }
      }
      avgpool_plan_destroy(rp);
    }
    if (bad) ++failures;
    const double roof = (double)(sbytes + dbytes) / (copy_gbps * 1e9) * 1e3;
    char dnn_buf[32];
    if (dnn_ms > 0) snprintf(dnn_buf, sizeof dnn_buf, "%.3f", dnn_ms);
    else snprintf(dnn_buf, sizeof dnn_buf, "-");
    printf("%-12s %-5s %-4s %-7s %-22s %9.3f %9.3f %7.3f %7.3f %10s %9.3f %8.3f %s\n", cs.name.c_str(), dtn,
           layn, numn, impl, ours, rd, rd / ours, rw / ours, dnn_buf, roof, roof / ours, bad ? "FAIL" : "ok");
    if (dnn_note != "-" && dnn_note != "whole tensor") printf("  cuDNN: %s\n", dnn_note.c_str());
    if (json) {
      fprintf(json,
              "%s  {\"case\": \"%s\", \"dtype\": \"%s\", \"layout\": \"%s\", \"numerics\": \"%s\", "
              "\"impl\": \"%s\", \"shape\": [%lld, %lld, %lld, %lld], \"kernel\": %lld, \"stride\": %lld, "
              "\"padding\": %lld, \"ceil_mode\": %d, \"count_include_pad\": %d, \"src_bytes\": %lld, "
              "\"dst_bytes\": %lld, \"ours_ms\": %.4f, \"read_ms\": %.4f, \"read_over_ours\": %.4f, "
              "\"read_write_ms\": %.4f, \"read_write_over_ours\": %.4f, "
              "\"ours_gbps\": %.1f, \"cudnn_ms\": %.4f, \"cudnn_note\": \"%s\", \"copy_roofline_ms\": %.4f, "
              "\"roofline_over_ours\": %.4f, \"reps\": %d, \"check\": \"%s\"}",
              first_json ? "" : ",\n", cs.name.c_str(), dtn, layn, numn, impl, (long long)cs.n,
              (long long)cs.c, (long long)cs.h, (long long)cs.w, (long long)cs.k, (long long)cs.s,
              (long long)cs.pad, cs.ceil, cs.incl, (long long)sbytes, (long long)dbytes, ours, rd, rd / ours, rw, rw / ours,
              (sbytes + dbytes) / (ours * 1e-3) / 1e9, dnn_ms, dnn_note.c_str(), roof, roof / ours, reps,
              bad ? "FAIL" : "ok");
      first_json = false;
    }
    avgpool_plan_destroy(plan);
  }
  if (json) {
    fprintf(json, "\n ]\n}\n");
    fclose(json);
  }
  printf("%s\n", failures ? "SOME CASES FAILED" : "all cases checked ok");
  return failures ? 1 : 0;
}

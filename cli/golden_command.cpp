// `avgpool golden FILE`: every case of a golden file on one backend.
// pytorch numerics must equal PyTorch's float32 result bitwise (NaN where it
// has NaN); fast numerics must be within the float32 summation bound of its
// float64 result (the reference is within 1 ulp; tests check that).
// Every `rejected` line must be refused with INVALID_ARGUMENT.
// A backward file (recognised by its content) runs the backward instead:
// pytorch numerics bitwise in all four dtypes (f32 vs gin32, f16 vs gin16,
// bf16 vs ginbf16, f64 vs gin); fast numerics f32 and f64 within the float32
// summation bound of gin.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "device.h"
#include "golden_file.h"
#include "options.h"
#include "tensor_util.h"

namespace avgpool_cli {

namespace {

using namespace avgpool_support;

// Runs one case; returns "" or why it failed. *values gets our outputs.
std::string run_case(const GoldenCase& gc, const GoldenOptions& o, std::vector<float>* values) {
  avgpool_params p = golden_params(gc, o.backend, o.numerics);
  avgpool_plan* plan = nullptr;
  avgpool_status s = avgpool_plan_create(&p, &plan);
  if (s != AVGPOOL_SUCCESS)
    return std::string("plan: ") + avgpool_status_string(s) + ": " + avgpool_last_error_message();
  const char* impl = nullptr;
  avgpool_plan_impl_name(plan, &impl);
  const bool on_device = strncmp(impl, "cuda", 4) == 0;
  int64_t dims[4];
  avgpool_plan_output_dims(plan, dims);
  for (int i = 0; i < 4; ++i)
    if (dims[i] != gc.out_dims[i]) {
      avgpool_plan_destroy(plan);
      return "output dims differ from PyTorch's";
    }
  values->assign(gc.out32.size(), 0.0f);
  Buffer src((int64_t)(gc.in.size() * 4), on_device), dst((int64_t)(values->size() * 4), on_device);
  src.upload(gc.in.data());
  dst.fill_byte(kPoisonByte);
  s = avgpool_plan_execute(plan, src.data(), dst.data(), nullptr);
  avgpool_plan_destroy(plan);
  const std::string device_error = device_sync(on_device);
  if (s != AVGPOOL_SUCCESS)
    return std::string("execute: ") + avgpool_status_string(s) + ": " + avgpool_last_error_message();
  if (!device_error.empty()) return "device: " + device_error;
  dst.download(values->data());

  // fast: within 1 ulp of PyTorch's float64 result, or within the float32
  // summation bound of it (any summation order): K * 2^-24 * mean|x| + 1 ulp,
  // with mean|x| per output from the reference on |x|.
  std::vector<float> abs_mean;
  if (o.numerics == AVGPOOL_NUMERICS_FAST) {
    std::vector<float> abs_in(gc.in.size());
    for (size_t i = 0; i < abs_in.size(); ++i) abs_in[i] = fabsf(gc.in[i]);
    abs_mean.resize(values->size());
    avgpool_params ap = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_FAST);
    if (avgpool_forward(&ap, abs_in.data(), abs_mean.data(), nullptr) != AVGPOOL_SUCCESS)
      return std::string("reference on |x|: ") + avgpool_last_error_message();
  }
  const double window = (double)std::min(gc.kh, gc.h) * (double)std::min(gc.kw, gc.w);
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < values->size(); ++i) {
    const float got = (*values)[i];
    bool ok;
    if (o.numerics == AVGPOOL_NUMERICS_PYTORCH) {
      ok = memcmp(&got, &gc.out32[i], 4) == 0 || (isnan(got) && isnan(gc.out32[i]));
    } else {
      const double want = gc.out[i];
      const double ulp = ldexp(1.0, ilogb(fabs(want) > 0x1.0p-126 ? want : 0x1.0p-126) - 23);
      ok = ulp_distance_f32(got, (float)want) <= 1 ||
           (isfinite(want) && fabs(got - want) <= ulp + window * 0x1.0p-24 * abs_mean[i] * 1.0001);
    }
    if (!ok && bad++ == 0) first = (int64_t)i;
  }
  if (bad == 0) return "";
  char buf[200];
  snprintf(buf, sizeof buf, "%lld of %zu outputs differ; first at %lld: got %.9g, want %.9g",
           (long long)bad, values->size(), (long long)first, (double)(*values)[first],
           o.numerics == AVGPOOL_NUMERICS_PYTORCH ? (double)gc.out32[first] : gc.out[first]);
  return buf;
}

// Backward, one dtype: grad_input from the case's grad_output (rounded to
// the dtype) into *values (NCHW doubles); "" or why it failed to run.
std::string run_backward_case(const GoldenBackwardCase& gc, const GoldenOptions& o, avgpool_dtype dtype,
                              avgpool_numerics numerics, std::vector<double>* values) {
  avgpool_params p = golden_params(gc, o.backend, numerics);
  p.dtype = dtype;
  avgpool_plan* plan = nullptr;
  avgpool_status s = avgpool_plan_create(&p, &plan);
  if (s != AVGPOOL_SUCCESS)
    return std::string("plan: ") + avgpool_status_string(s) + ": " + avgpool_last_error_message();
  const char* impl = nullptr;
  s = avgpool_plan_backward_impl_name(plan, &impl);
  if (s != AVGPOOL_SUCCESS) {
    const std::string why = std::string("no backward: ") + avgpool_last_error_message();
    avgpool_plan_destroy(plan);
    return why;
  }
  const bool on_device = strncmp(impl, "cuda", 4) == 0;
  int64_t src_n = 0, dst_n = 0;
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  if (dst_n != (int64_t)gc.gout.size()) {
    avgpool_plan_destroy(plan);
    return "output dims differ from PyTorch's";
  }
  const int64_t es = element_size(dtype);
  std::vector<char> g((size_t)(dst_n * es)), gin((size_t)(src_n * es));
  for (int64_t i = 0; i < dst_n; ++i) store_double(dtype, g.data(), i, gc.gout[(size_t)i]);
  Buffer src(dst_n * es, on_device), dst(src_n * es, on_device);
  src.upload(g.data());
  dst.fill_byte(kPoisonByte);
  s = avgpool_plan_backward(plan, src.data(), dst.data(), nullptr);
  avgpool_plan_destroy(plan);
  const std::string device_error = device_sync(on_device);
  if (s != AVGPOOL_SUCCESS)
    return std::string("backward: ") + avgpool_status_string(s) + ": " + avgpool_last_error_message();
  if (!device_error.empty()) return "device: " + device_error;
  dst.download(gin.data());
  values->resize((size_t)src_n);
  for (int64_t i = 0; i < src_n; ++i) (*values)[(size_t)i] = load_double(dtype, gin.data(), i);
  return "";
}

// Runs one backward case; returns "" or why it failed. *gin32 gets our
// float32 grad_input.
std::string backward_case(const GoldenBackwardCase& gc, const GoldenOptions& o, std::vector<float>* gin32) {
  static const char* const names[] = {"f32", "f16", "bf16", "f64"};
  std::vector<double> got;
  std::string failures;
  gin32->clear();
  if (o.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    const std::vector<float>* want_of[] = {&gc.gin32, &gc.gin16, &gc.ginbf16, nullptr};
    for (int d = 0; d < 4; ++d) {
      const std::string why = run_backward_case(gc, o, (avgpool_dtype)d, o.numerics, &got);
      if (!why.empty()) return std::string(names[d]) + ": " + why;
      if (d == AVGPOOL_DTYPE_F32) gin32->assign(got.begin(), got.end());
      int64_t bad = 0, first = -1;
      for (size_t i = 0; i < got.size(); ++i) {
        const double want = want_of[d] ? (double)(*want_of[d])[i] : gc.gin[i];
        // Bitwise: these values are exact in the dtype, so == compares the
        // bits (and +0/-0 separately, below); NaN matches NaN.
        const bool same = (got[i] == want && signbit(got[i]) == signbit(want)) || (isnan(got[i]) && isnan(want));
        if (!same && bad++ == 0) first = (int64_t)i;
      }
      if (bad) {
        char buf[200];
        snprintf(buf, sizeof buf, "%s: %lld of %zu elements differ; first at %lld: got %.9g, want %.9g; ", names[d],
                 (long long)bad, got.size(), (long long)first, got[(size_t)first],
                 want_of[d] ? (double)(*want_of[d])[(size_t)first] : gc.gin[(size_t)first]);
        failures += buf;
      }
    }
    return failures;
  }
  // fast: within (K + 2) * 2^-24 * sum|g / d| + 1 ulp of PyTorch's float64
  // gradient, with sum|g / d| from the reference on |g| (f64).
  std::vector<double> abs_g(gc.gout.size()), abs_sum(gc.gin.size());
  for (size_t i = 0; i < abs_g.size(); ++i) abs_g[i] = fabs((double)gc.gout[i]);
  avgpool_params ap = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_FAST);
  ap.dtype = AVGPOOL_DTYPE_F64;
  if (avgpool_backward(&ap, abs_g.data(), abs_sum.data(), nullptr) != AVGPOOL_SUCCESS)
    return std::string("reference on |g|: ") + avgpool_last_error_message();
  const int64_t sh = gc.sh ? gc.sh : gc.kh, sw = gc.sw ? gc.sw : gc.kw;
  const double terms = (double)((gc.kh + sh - 1) / sh) * (double)((gc.kw + sw - 1) / sw);
  for (int d : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64}) {
    const std::string why = run_backward_case(gc, o, (avgpool_dtype)d, o.numerics, &got);
    if (!why.empty()) return std::string(names[d]) + ": " + why;
    if (d == AVGPOOL_DTYPE_F32) gin32->assign(got.begin(), got.end());
    const int digits = d == AVGPOOL_DTYPE_F32 ? 24 : 53;
    int64_t bad = 0, first = -1;
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = gc.gin[i];
      bool ok;
      if (!isfinite(want) || !isfinite(got[i])) {
        ok = got[i] == want || (isnan(got[i]) && isnan(want));
      } else {
        const double ulp = ldexp(1.0, ilogb(fabs(want) > 0x1.0p-126 ? want : 0x1.0p-126) + 1 - digits);
        ok = fabs(got[i] - want) <= ulp + (terms + 2) * 0x1.0p-24 * abs_sum[i] * 1.0001;
      }
      if (!ok && bad++ == 0) first = (int64_t)i;
    }
    if (bad) {
      char buf[200];
      snprintf(buf, sizeof buf, "%s: %lld of %zu elements outside the bound; first at %lld: got %.17g, want %.17g; ",
               names[d], (long long)bad, got.size(), (long long)first, got[(size_t)first], gc.gin[(size_t)first]);
      failures += buf;
    }
  }
  return failures;
}

int golden_backward_command(const GoldenOptions& o) {
  GoldenBackwardFile file;
  std::string error;
  if (!read_golden_backward(o.file, &file, &error)) {
    fprintf(stderr, "avgpool: %s\n", error.c_str());
    return 2;
  }
  std::ofstream emit;
  if (!o.emit.empty()) {
    emit.open(o.emit);
    if (!emit) {
      fprintf(stderr, "avgpool: cannot write %s\n", o.emit.c_str());
      return 2;
    }
    emit << "# avgpool " << avgpool_version_string() << " backward results (gin32), "
         << (o.numerics == AVGPOOL_NUMERICS_PYTORCH ? "pytorch" : "fast") << " numerics\n";
  }
  int passed = 0, failed = 0;
  std::vector<float> gin32;
  for (const GoldenBackwardCase& gc : file.cases) {
    const std::string why = backward_case(gc, o, &gin32);
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      printf("FAIL %s: %s\n", gc.name.c_str(), why.c_str());
    }
    if (emit.is_open() && gin32.size() == gc.gin32.size()) emit << format_case(gc, gin32);
  }
  printf("backward cases: %zu\n", file.cases.size());
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace

int golden_command(const GoldenOptions& o) {
  if (is_backward_golden(o.file)) return golden_backward_command(o);
  GoldenFile file;
  std::string error;
  if (!read_golden(o.file, &file, &error)) {
    fprintf(stderr, "avgpool: %s\n", error.c_str());
    return 2;
  }
  std::ofstream emit;
  if (!o.emit.empty()) {
    emit.open(o.emit);
    if (!emit) {
      fprintf(stderr, "avgpool: cannot write %s\n", o.emit.c_str());
      return 2;
    }
    emit << "# avgpool " << avgpool_version_string() << " results, "
         << (o.numerics == AVGPOOL_NUMERICS_PYTORCH ? "pytorch" : "fast") << " numerics\n";
  }
  int passed = 0, failed = 0;
  std::vector<float> values;
  for (const GoldenCase& gc : file.cases) {
    const std::string why = run_case(gc, o, &values);
    if (why.empty()) {
      ++passed;
    } else {
      ++failed;
      printf("FAIL %s: %s\n", gc.name.c_str(), why.c_str());
    }
    if (emit.is_open() && values.size() == gc.out32.size()) emit << format_case(gc, values);
  }
  int refused = 0;
  for (const GoldenRejected& r : file.rejected) {
    avgpool_params p = rejected_params(r);
    p.backend = o.backend;
    avgpool_plan* plan = nullptr;
    const avgpool_status s = avgpool_plan_create(&p, &plan);
    if (s == AVGPOOL_ERROR_INVALID_ARGUMENT) {
      ++refused;
      if (emit.is_open())
        emit << "# rejected " << r.n << ' ' << r.c << ' ' << r.h << ' ' << r.w << ": "
             << avgpool_last_error_message() << '\n';
    } else {
      ++failed;
      printf("FAIL rejected %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %d: got %s\n",
             (long long)r.n, (long long)r.c, (long long)r.h, (long long)r.w, (long long)r.kh,
             (long long)r.kw, (long long)r.sh, (long long)r.sw, (long long)r.ph, (long long)r.pw,
             r.ceil_mode, avgpool_status_string(s));
      avgpool_plan_destroy(plan);
    }
  }
  printf("rejected configurations refused: %d of %zu\n", refused, file.rejected.size());
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace avgpool_cli

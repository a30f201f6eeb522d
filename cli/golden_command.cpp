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

std::string failure(const char* what, avgpool_status s) {
  return std::string(what) + ": " + avgpool_status_string(s) + ": " + avgpool_last_error_message();
}

// Runs one plan of parameters p once, forward or backward, on input (NCHW
// doubles, rounded to p.dtype); *output gets the result as doubles. When
// want_dims is given, the plan's output dims must equal them; the input must
// have as many elements as the plan reads. Returns "" or why it failed.
std::string run_plan(const avgpool_params& p, bool backward, const std::vector<double>& input,
                     const int64_t* want_dims, std::vector<double>* output) {
  avgpool_plan* plan = nullptr;
  avgpool_status s = avgpool_plan_create(&p, &plan);
  if (s != AVGPOOL_SUCCESS) return failure("plan", s);
  std::string why;
  const char* impl = nullptr;
  s = backward ? avgpool_plan_backward_impl_name(plan, &impl) : avgpool_plan_impl_name(plan, &impl);
  int64_t dims[4], src_n = 0, dst_n = 0;
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  const int64_t in_n = backward ? dst_n : src_n, out_n = backward ? src_n : dst_n;
  if (s != AVGPOOL_SUCCESS)
    why = std::string("no ") + (backward ? "backward" : "forward") + ": " + avgpool_last_error_message();
  else if ((want_dims && !std::equal(dims, dims + 4, want_dims)) || in_n != (int64_t)input.size())
    why = "output dims differ from PyTorch's";
  if (!why.empty()) {
    avgpool_plan_destroy(plan);
    return why;
  }
  const bool on_device = strncmp(impl, "cuda", 4) == 0;
  const int64_t es = element_size(p.dtype);
  std::vector<char> bytes((size_t)(std::max(in_n, out_n) * es));
  for (int64_t i = 0; i < in_n; ++i) store_double(p.dtype, bytes.data(), i, input[(size_t)i]);
  Buffer src(in_n * es, on_device), dst(out_n * es, on_device);
  src.upload(bytes.data());
  dst.fill_byte(kPoisonByte);
  s = backward ? avgpool_plan_backward(plan, src.data(), dst.data(), nullptr)
               : avgpool_plan_execute(plan, src.data(), dst.data(), nullptr);
  avgpool_plan_destroy(plan);
  const std::string device_error = device_sync(on_device);
  if (s != AVGPOOL_SUCCESS) return failure(backward ? "backward" : "execute", s);
  if (!device_error.empty()) return "device: " + device_error;
  dst.download(bytes.data());
  output->resize((size_t)out_n);
  for (int64_t i = 0; i < out_n; ++i) (*output)[(size_t)i] = load_double(p.dtype, bytes.data(), i);
  return "";
}

// Bitwise equality of values exact in the compared dtype: == compares the
// bits except for the sign of zero, checked apart; NaN matches NaN.
bool same_value(double got, double want) {
  return (got == want && signbit(got) == signbit(want)) || (isnan(got) && isnan(want));
}

// Within the summation bound of a `digits`-bit type: 1 ulp of want plus
// terms * 2^-24 * scale (scale: the reference's result on absolute values).
// Non-finite values must match exactly.
bool within_bound(double got, double want, int digits, double terms, double scale) {
  if (!isfinite(want) || !isfinite(got)) return same_value(got, want);
  const double ulp = ldexp(1.0, ilogb(fabs(want) > 0x1.0p-126 ? want : 0x1.0p-126) + 1 - digits);
  return fabs(got - want) <= ulp + terms * 0x1.0p-24 * scale * 1.0001;
}

// Checks got against want(i) with ok(i); "" or a line naming the first miss.
template <typename Want, typename Ok>
std::string compare(const char* label, const std::vector<double>& got, Want want, Ok ok) {
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < got.size(); ++i)
    if (!ok(i) && bad++ == 0) first = (int64_t)i;
  if (bad == 0) return "";
  char buf[240];
  snprintf(buf, sizeof buf, "%s%s%lld of %zu values differ; first at %lld: got %.17g, want %.17g; ", label,
           *label ? ": " : "", (long long)bad, got.size(), (long long)first, got[(size_t)first],
           want((size_t)first));
  return buf;
}

// The reference's f64 result on |values|: the scale of the summation bound.
std::string reference_on_abs(avgpool_params p, bool backward, const std::vector<double>& values,
                             std::vector<double>* out) {
  std::vector<double> abs_values(values.size());
  for (size_t i = 0; i < values.size(); ++i) abs_values[i] = fabs(values[i]);
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  p.numerics = AVGPOOL_NUMERICS_FAST;
  p.dtype = AVGPOOL_DTYPE_F64;
  return run_plan(p, backward, abs_values, nullptr, out);
}

// One forward case; "" or why it failed. *values gets our float32 outputs.
std::string forward_case(const GoldenCase& gc, const GoldenOptions& o, std::vector<float>* values) {
  const avgpool_params p = golden_params(gc, o.backend, o.numerics);
  const std::vector<double> in(gc.in.begin(), gc.in.end());
  std::vector<double> got, abs_mean;
  std::string why = run_plan(p, false, in, gc.out_dims, &got);
  if (!why.empty()) return why;
  values->assign(got.begin(), got.end());
  if (o.numerics == AVGPOOL_NUMERICS_PYTORCH)
    return compare("", got, [&](size_t i) { return (double)gc.out32[i]; },
                   [&](size_t i) { return same_value(got[i], gc.out32[i]); });
  why = reference_on_abs(p, false, in, &abs_mean);
  if (!why.empty()) return "reference on |x|: " + why;
  // Any summation order: the mean's bound is K * 2^-24 * mean|x| + 1 ulp.
  const double window = (double)std::min(gc.kh, gc.h) * (double)std::min(gc.kw, gc.w);
  return compare("", got, [&](size_t i) { return gc.out[i]; },
                 [&](size_t i) { return within_bound(got[i], gc.out[i], 24, window, abs_mean[i]); });
}

// One backward case; "" or why it failed. *gin32 gets our float32 grad_input.
std::string backward_case(const GoldenBackwardCase& gc, const GoldenOptions& o, std::vector<float>* gin32) {
  const std::vector<double> gout(gc.gout.begin(), gc.gout.end());
  std::vector<double> got, abs_sum;
  std::string failures;
  gin32->clear();
  if (o.numerics == AVGPOOL_NUMERICS_FAST) {
    std::string why = reference_on_abs(golden_params(gc, o.backend, o.numerics), true, gout, &abs_sum);
    if (!why.empty()) return "reference on |g|: " + why;
  }
  // Terms per grad_input element: windows covering it, plus two roundings.
  const int64_t sh = gc.sh ? gc.sh : gc.kh, sw = gc.sw ? gc.sw : gc.kw;
  const double terms = (double)((gc.kh + sh - 1) / sh) * (double)((gc.kw + sw - 1) / sw) + 2;
  const std::vector<float>* pytorch_of[] = {&gc.gin32, &gc.gin16, &gc.ginbf16, nullptr};
  for (int d : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F64}) {
    const bool fast = o.numerics == AVGPOOL_NUMERICS_FAST;
    if (fast && (d == AVGPOOL_DTYPE_F16 || d == AVGPOOL_DTYPE_BF16)) continue;
    avgpool_params p = golden_params(gc, o.backend, o.numerics);
    p.dtype = (avgpool_dtype)d;
    const std::string why = run_plan(p, true, gout, nullptr, &got);
    if (!why.empty()) return std::string(avgpool_dtype_name((avgpool_dtype)d)) + ": " + why;
    if (d == AVGPOOL_DTYPE_F32) gin32->assign(got.begin(), got.end());
    auto want = [&](size_t i) { return pytorch_of[d] && !fast ? (double)(*pytorch_of[d])[i] : gc.gin[i]; };
    const int digits = d == AVGPOOL_DTYPE_F32 ? 24 : 53;
    failures += compare(avgpool_dtype_name((avgpool_dtype)d), got, want, [&](size_t i) {
      return fast ? within_bound(got[i], want(i), digits, terms, abs_sum[i]) : same_value(got[i], want(i));
    });
  }
  return failures;
}

// Opens --emit's file with its first line; false (and a message) on failure.
bool open_emit(const GoldenOptions& o, const char* what, std::ofstream* emit) {
  if (o.emit.empty()) return true;
  emit->open(o.emit);
  if (!*emit) {
    fprintf(stderr, "avgpool: cannot write %s\n", o.emit.c_str());
    return false;
  }
  *emit << "# avgpool " << avgpool_version_string() << ' ' << what << ", "
        << (o.numerics == AVGPOOL_NUMERICS_PYTORCH ? "pytorch" : "fast") << " numerics\n";
  return true;
}

// Runs every case, prints a line per failure and writes our float32 results
// to emit (when open) in the file's own format; counts into passed/failed.
template <typename Case, typename Run>
void run_cases(const std::vector<Case>& cases, const std::vector<float> Case::*pytorch32, Run run,
               std::ofstream& emit, int* passed, int* failed) {
  std::vector<float> ours;
  for (const Case& gc : cases) {
    const std::string why = run(gc, &ours);
    if (why.empty()) {
      ++*passed;
    } else {
      ++*failed;
      printf("FAIL %s: %s\n", gc.name.c_str(), why.c_str());
    }
    if (emit.is_open() && ours.size() == (gc.*pytorch32).size()) emit << format_case(gc, ours);
  }
}

template <typename File>
bool read_file(const GoldenOptions& o, bool (*read)(const std::string&, File*, std::string*), File* file) {
  std::string error;
  if (read(o.file, file, &error)) return true;
  fprintf(stderr, "avgpool: %s\n", error.c_str());
  return false;
}

int golden_backward_command(const GoldenOptions& o) {
  GoldenBackwardFile file;
  std::ofstream emit;
  if (!read_file(o, read_golden_backward, &file) || !open_emit(o, "backward results (gin32)", &emit)) return 2;
  int passed = 0, failed = 0;
  run_cases(file.cases, &GoldenBackwardCase::gin32,
            [&](const GoldenBackwardCase& gc, std::vector<float>* ours) { return backward_case(gc, o, ours); }, emit,
            &passed, &failed);
  printf("backward cases: %zu\n", file.cases.size());
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace

int golden_command(const GoldenOptions& o) {
  if (is_backward_golden(o.file)) return golden_backward_command(o);
  GoldenFile file;
  std::ofstream emit;
  if (!read_file(o, read_golden, &file) || !open_emit(o, "results", &emit)) return 2;
  int passed = 0, failed = 0;
  run_cases(file.cases, &GoldenCase::out32,
            [&](const GoldenCase& gc, std::vector<float>* ours) { return forward_case(gc, o, ours); }, emit, &passed,
            &failed);
  int refused = 0;
  for (const GoldenRejected& r : file.rejected) {
    avgpool_params p = rejected_params(r);
    p.backend = o.backend;
    avgpool_plan* plan = nullptr;
    const avgpool_status s = avgpool_plan_create(&p, &plan);
    if (s == AVGPOOL_ERROR_INVALID_ARGUMENT) {
      ++refused;
      if (emit.is_open())
        emit << "# rejected " << r.n << ' ' << r.c << ' ' << r.h << ' ' << r.w << ": " << avgpool_last_error_message()
             << '\n';
    } else {
      ++failed;
      printf("FAIL rejected %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %d: got %s\n", (long long)r.n,
             (long long)r.c, (long long)r.h, (long long)r.w, (long long)r.kh, (long long)r.kw, (long long)r.sh,
             (long long)r.sw, (long long)r.ph, (long long)r.pw, r.ceil_mode, avgpool_status_string(s));
      avgpool_plan_destroy(plan);
    }
  }
  printf("rejected configurations refused: %d of %zu\n", refused, file.rejected.size());
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

}  // namespace avgpool_cli

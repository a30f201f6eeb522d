// libFuzzer target: bytes -> plan parameters (valid or not) and a
// small input tensor; then
//  - invalid parameters: plan creation and avgpool_forward fail cleanly
//    (a refusal status, never INTERNAL; a message naming a parameter; *plan
//    and a poisoned dst untouched; impl_accepts agrees);
//  - valid parameters: the reference runs (twice, under two poison patterns:
//    every output written, deterministic), then every "cpu:" implementation
//    that accepts runs into a guarded dst and must agree with the reference
//    by compare_to_reference's rule; the CPU backend must take every valid
//    problem; the input is never written; avgpool_reference_outputs agrees
//    with the full reference on a sample;
//  - the backward on the same valid parameters: the reference backward runs
//    twice under two poison patterns (every grad_input element written,
//    deterministic), every backward implementation of the CPU backend that
//    accepts agrees with it by compare_backward_to_reference's rule, the CPU
//    backend has a backward for every valid problem, grad_output is never
//    written, avgpool_reference_grad_inputs agrees on a sample; refused
//    parameters make avgpool_backward fail like plan creation, writing nothing.
// Any violation prints the case and aborts, which libFuzzer reports as a crash.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "check.h"
#include "fuzz_format.h"
#include "tensor_util.h"
#include "window.h"  // lib/src: pooled_size, to skip plans whose window tables would be huge

using namespace avgpool_support;
using namespace avgpool_fuzz;

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 14;  // per tensor, to keep executions fast
constexpr int64_t kMaxTable = int64_t{1} << 20;     // output rows/cols of a plan we create
constexpr int64_t kGuard = 64;                      // bytes of guard band each side

[[noreturn]] void fail(const avgpool_params& p, const char* what, const std::string& detail) {
  fprintf(stderr, "\nFUZZ FAILURE: %s\n  params: %s (n=%lld c=%lld h=%lld w=%lld)\n  %s\n", what,
          describe(p).c_str(), (long long)p.n, (long long)p.c, (long long)p.h, (long long)p.w,
          detail.c_str());
  abort();
}

const std::vector<std::string>& cpu_impls() {
  static const std::vector<std::string> names = impl_names("cpu:");
  return names;
}

const std::vector<std::string>& cpu_backward_impls() {
  static const std::vector<std::string> names = backward_impl_names("cpu:");
  return names;
}

// A conservative look at the window tables a plan would allocate: only
// parameters that pass the simple range checks can get that far.
bool tables_would_be_huge(const avgpool_params& p) {
  const int64_t lim = INT64_MAX / 8;
  auto ok = [&](int64_t v, int64_t lo) { return v >= lo && v <= lim; };
  if (!ok(p.h, 1) || !ok(p.w, 1) || !ok(p.kernel_h, 1) || !ok(p.kernel_w, 1) ||
      !ok(p.padding_h, 0) || !ok(p.padding_w, 0) || !ok(p.stride_h, 0) || !ok(p.stride_w, 0))
    return false;
  const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
  return avgpool::pooled_size(p.h, p.kernel_h, sh, p.padding_h, p.ceil_mode != 0) > kMaxTable ||
         avgpool::pooled_size(p.w, p.kernel_w, sw, p.padding_w, p.ceil_mode != 0) > kMaxTable;
}

bool names_a_parameter(const std::string& m) {
  static const char* words[] = {"struct_size", "dtype", "layout", "backend", "numerics", "n (",
                                "c (", "h (", "w (", "kernel_h", "kernel_w", "stride_h",
                                "stride_w", "padding_h", "padding_w", "ceil_mode",
                                "count_include_pad", "divisor_override", "output height",
                                "output width", "input size", "output size", "window tables",
                                "not compiled", "device", "cuda", "CUDA"};
  for (const char* w : words)
    if (m.find(w) != std::string::npos) return true;
  return false;
}

void check_refusal(const avgpool_params& p, avgpool_status s) {
  const std::string m = avgpool_last_error_message();
  if (s == AVGPOOL_SUCCESS || s == AVGPOOL_ERROR_INTERNAL || s > AVGPOOL_ERROR_INTERNAL)
    fail(p, "plan creation: unexpected status", avgpool_status_string(s));
  if (m.empty()) fail(p, "refusal without a message", avgpool_status_string(s));
  if (!names_a_parameter(m)) fail(p, "message names no parameter", m);
  // impl_accepts on the reference agrees for bad input.
  if (s == AVGPOOL_ERROR_INVALID_ARGUMENT && avgpool_impl_accepts("reference", &p) != s)
    fail(p, "impl_accepts(reference) disagrees with plan creation", m);
  // The one-call function writes nothing.
  std::vector<unsigned char> src(256, 0), dst(512);
  poison(dst.data(), (int64_t)dst.size());
  const avgpool_status f = avgpool_forward(&p, src.data(), dst.data() + 128, nullptr);
  if (f != s) fail(p, "avgpool_forward's status differs from plan creation's", avgpool_last_error_message());
  if (!is_poisoned(dst.data(), (int64_t)dst.size())) fail(p, "a refused call wrote dst", m);
  const avgpool_status b = avgpool_backward(&p, src.data(), dst.data() + 128, nullptr);
  if (b != s) fail(p, "avgpool_backward's status differs from plan creation's", avgpool_last_error_message());
  if (!is_poisoned(dst.data(), (int64_t)dst.size())) fail(p, "a refused backward wrote grad_input", m);
}

bool strict() {
  static const bool s = getenv("AVGPOOL_FUZZ_STRICT") != nullptr && getenv("AVGPOOL_FUZZ_STRICT")[0] == '1';
  return s;
}

bool kernel_exceeds_padded_input(const avgpool_params& p) {
  return p.kernel_h > p.h + 2 * p.padding_h || p.kernel_w > p.w + 2 * p.padding_w;
}

struct Guarded {
  std::vector<unsigned char> bytes;
  int64_t size;
  Guarded(int64_t size_, unsigned char fill) : bytes((size_t)(size_ + 2 * kGuard), fill), size(size_) {
    poison(bytes.data(), kGuard);
    poison(bytes.data() + kGuard + size, kGuard);
  }
  void* data() { return bytes.data() + kGuard; }
  bool intact() const {
    return is_poisoned(bytes.data(), kGuard) && is_poisoned(bytes.data() + kGuard + size, kGuard);
  }
};

std::string first_diff(const Guarded& a, const Guarded& b) {
  for (int64_t i = 0; i < a.size; ++i)
    if (a.bytes[(size_t)(kGuard + i)] != b.bytes[(size_t)(kGuard + i)])
      return "first differing byte " + std::to_string(i) + " of " + std::to_string(a.size);
  return "";
}

void check_valid(const Decoded& d, avgpool_plan* plan) {
  const avgpool_params& p = d.params;
  int64_t src_n = 0, dst_n = 0, dims[4];
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  avgpool_plan_output_dims(plan, dims);
  if (dims[0] * dims[1] * dims[2] * dims[3] != dst_n) fail(p, "output dims and size disagree", "");
  if (src_n > kMaxElements || dst_n > kMaxElements || dst_n == 0) return;
  const int64_t es = element_size(p.dtype);

  std::vector<unsigned char> src((size_t)(src_n * es));
  for (int64_t i = 0; i < src_n; ++i) store_double(p.dtype, src.data(), i, value_at(d, i));
  const std::vector<unsigned char> src_copy = src;

  // The reference, under two fill patterns: identical results mean every
  // output was written and nothing depends on dst's old contents.
  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Guarded ref(dst_n * es, kPoisonByte), ref2(dst_n * es, 0x5A);
  if (run_reference(rp, src.data(), ref.data()) != AVGPOOL_SUCCESS ||
      run_reference(rp, src.data(), ref2.data()) != AVGPOOL_SUCCESS)
    fail(p, "the reference failed on valid parameters", avgpool_last_error_message());
  if (!ref.intact() || !ref2.intact()) fail(p, "the reference wrote outside dst", "");
  if (ref.bytes != ref2.bytes && !first_diff(ref, ref2).empty())
    fail(p, "the reference left outputs unwritten or is not deterministic", first_diff(ref, ref2));

  // The plan as decoded (its backend may be AUTO or CPU after corruption).
  {
    Guarded got(dst_n * es, kPoisonByte);
    if (avgpool_plan_execute(plan, src.data(), got.data(), nullptr) != AVGPOOL_SUCCESS)
      fail(p, "execute failed on a valid plan", avgpool_last_error_message());
    const Mismatch m = compare_to_reference(p, src.data(), got.data(), ref.data());
    if (m.count != 0 || !got.intact()) fail(p, "the decoded plan disagrees with the reference", m.message());
  }

  // Every CPU implementation that accepts.
  int ran = 0;
  for (const std::string& impl : cpu_impls()) {
    avgpool_params q = p;
    q.backend = AVGPOOL_BACKEND_CPU;
    const avgpool_status a = avgpool_impl_accepts(impl.c_str(), &q);
    avgpool_plan* ip = nullptr;
    const avgpool_status c = avgpool_plan_create_with_impl(&q, impl.c_str(), &ip);
    if (a != c) fail(q, ("impl_accepts and plan creation disagree for " + impl).c_str(), "");
    if (c == AVGPOOL_ERROR_UNSUPPORTED) {
      if (avgpool_last_error_message()[0] == '\0') fail(q, ("declined without a message: " + impl).c_str(), "");
      continue;
    }
    if (c != AVGPOOL_SUCCESS) fail(q, ("plan creation failed: " + impl).c_str(), avgpool_last_error_message());
    Guarded got(dst_n * es, kPoisonByte);
    const avgpool_status e = avgpool_plan_execute(ip, src.data(), got.data(), nullptr);
    const std::string message = avgpool_last_error_message();  // before destroy clears it
    avgpool_plan_destroy(ip);
    if (e == AVGPOOL_ERROR_OUT_OF_MEMORY && kernel_exceeds_padded_input(q) && !strict()) {
      // A kernel beyond the padded input must not make the CPU backend size
      // its scratch by the kernel (docs/reliability.md, bug 2; fixed, and
      // replayed strictly from fuzz/regressions/). Outside strict mode this
      // class is reported once and tolerated; AVGPOOL_FUZZ_STRICT=1 makes it
      // fatal.
      static bool said = false;
      if (!said) fprintf(stderr, "KNOWN ISSUE (tolerated): %s: %s on %s\n", impl.c_str(), message.c_str(), describe(q).c_str());
      said = true;
      ++ran;
      continue;
    }
    if (e != AVGPOOL_SUCCESS)
      fail(q, ("execute failed: " + impl).c_str(), std::string(avgpool_status_string(e)) + ": " + message);
    const Mismatch m = compare_to_reference(q, src.data(), got.data(), ref.data());
    if (m.count != 0) fail(q, ("disagrees with the reference: " + impl).c_str(), m.message());
    if (!got.intact()) fail(q, ("wrote outside dst: " + impl).c_str(), "");
    ++ran;
  }
  if (!cpu_impls().empty()) {
    // The CPU backend must take every valid problem.
    avgpool_params q = p;
    q.backend = AVGPOOL_BACKEND_CPU;
    avgpool_plan* cp = nullptr;
    if (avgpool_plan_create(&q, &cp) != AVGPOOL_SUCCESS || ran == 0)
      fail(q, "no CPU implementation takes a valid problem", avgpool_last_error_message());
    avgpool_plan_destroy(cp);
  }
  if (src != src_copy) fail(p, "an implementation wrote its input", "");

  // avgpool_reference_outputs agrees with the full reference on a sample.
  int64_t idx[4] = {0, dst_n - 1, dst_n / 2, (int64_t)(d.data_size * 7919) % dst_n};
  double vals[4];
  if (avgpool_reference_outputs(plan, src.data(), 4, idx, vals) != AVGPOOL_SUCCESS)
    fail(p, "avgpool_reference_outputs failed", avgpool_last_error_message());
  for (int i = 0; i < 4; ++i) {
    const double want = load_double(p.dtype, ref.data(), idx[i]);
    if (!(vals[i] == want || (isnan(vals[i]) && isnan(want))))
      fail(p, "avgpool_reference_outputs differs from the reference",
           "index " + std::to_string(idx[i]) + ": " + std::to_string(vals[i]) + " vs " + std::to_string(want));
  }
}

// The backward of a valid problem: grad_output from the same data.
void check_backward(const Decoded& d, avgpool_plan* plan) {
  const avgpool_params& p = d.params;
  int64_t src_n = 0, dst_n = 0;
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  if (src_n > kMaxElements || dst_n > kMaxElements || dst_n == 0) return;
  const int64_t es = element_size(p.dtype);
  std::vector<unsigned char> g((size_t)(dst_n * es));
  for (int64_t i = 0; i < dst_n; ++i) store_double(p.dtype, g.data(), i, value_at(d, i));
  const std::vector<unsigned char> g_copy = g;

  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Guarded ref(src_n * es, kPoisonByte), ref2(src_n * es, 0x5A);
  if (run_reference_backward(rp, g.data(), ref.data()) != AVGPOOL_SUCCESS ||
      run_reference_backward(rp, g.data(), ref2.data()) != AVGPOOL_SUCCESS)
    fail(p, "the reference backward failed on valid parameters", avgpool_last_error_message());
  if (!ref.intact() || !ref2.intact()) fail(p, "the reference backward wrote outside grad_input", "");
  if (!first_diff(ref, ref2).empty())
    fail(p, "the reference backward left elements unwritten or is not deterministic", first_diff(ref, ref2));

  // The decoded plan's own backward (AUTO on its backend).
  {
    const char* name = nullptr;
    if (avgpool_plan_backward_impl_name(plan, &name) != AVGPOOL_SUCCESS)
      fail(p, "a valid host plan has no backward", avgpool_last_error_message());
    Guarded got(src_n * es, kPoisonByte);
    if (avgpool_plan_backward(plan, g.data(), got.data(), nullptr) != AVGPOOL_SUCCESS)
      fail(p, "backward failed on a valid plan", avgpool_last_error_message());
    const Mismatch m = compare_backward_to_reference(p, g.data(), got.data(), ref.data());
    if (m.count != 0 || !got.intact()) fail(p, ("the decoded plan's backward disagrees: " + std::string(name)).c_str(), m.message());
  }

  int ran = 0;
  for (const std::string& impl : cpu_backward_impls()) {
    avgpool_params q = p;
    q.backend = AVGPOOL_BACKEND_CPU;
    const avgpool_status a = avgpool_impl_accepts(impl.c_str(), &q);
    avgpool_plan* ip = nullptr;
    const avgpool_status c = avgpool_plan_create_with_impls(&q, nullptr, impl.c_str(), &ip);
    if (a != c) fail(q, ("impl_accepts and plan creation disagree for " + impl).c_str(), "");
    if (c == AVGPOOL_ERROR_UNSUPPORTED) {
      if (avgpool_last_error_message()[0] == '\0') fail(q, ("declined without a message: " + impl).c_str(), "");
      continue;
    }
    if (c != AVGPOOL_SUCCESS) fail(q, ("plan creation failed: " + impl).c_str(), avgpool_last_error_message());
    Guarded got(src_n * es, kPoisonByte);
    const avgpool_status e = avgpool_plan_backward(ip, g.data(), got.data(), nullptr);
    const std::string message = avgpool_last_error_message();
    avgpool_plan_destroy(ip);
    if (e != AVGPOOL_SUCCESS)
      fail(q, ("backward failed: " + impl).c_str(), std::string(avgpool_status_string(e)) + ": " + message);
    const Mismatch m = compare_backward_to_reference(q, g.data(), got.data(), ref.data());
    if (m.count != 0) fail(q, ("backward disagrees with the reference: " + impl).c_str(), m.message());
    if (!got.intact()) fail(q, ("backward wrote outside grad_input: " + impl).c_str(), "");
    ++ran;
  }
  if (!cpu_backward_impls().empty() && ran == 0) fail(p, "no CPU backward implementation takes a valid problem", "");
  if (g != g_copy) fail(p, "a backward wrote grad_output", "");

  int64_t idx[4] = {0, src_n - 1, src_n / 2, (int64_t)(d.data_size * 7919) % src_n};
  double vals[4];
  if (avgpool_reference_grad_inputs(plan, g.data(), 4, idx, vals) != AVGPOOL_SUCCESS)
    fail(p, "avgpool_reference_grad_inputs failed", avgpool_last_error_message());
  for (int i = 0; i < 4; ++i) {
    const double want = load_double(p.dtype, ref.data(), idx[i]);
    if (!(vals[i] == want || (isnan(vals[i]) && isnan(want))))
      fail(p, "avgpool_reference_grad_inputs differs from the reference backward",
           "index " + std::to_string(idx[i]) + ": " + std::to_string(vals[i]) + " vs " + std::to_string(want));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  const Decoded d = decode(bytes, size);
  const avgpool_params& p = d.params;
  if (tables_would_be_huge(p)) return 0;  // valid maybe, but GBs of window tables: not here
  avgpool_plan* const sentinel = reinterpret_cast<avgpool_plan*>(uintptr_t{0x1000});
  avgpool_plan* plan = sentinel;
  const avgpool_status s = avgpool_plan_create(&p, &plan);
  if (s != AVGPOOL_SUCCESS) {
    if (plan != sentinel) fail(p, "a refused plan creation wrote *plan", avgpool_last_error_message());
    check_refusal(p, s);
    return 0;
  }
  if (avgpool_last_error_message()[0] != '\0') fail(p, "message left after a success", avgpool_last_error_message());
  check_valid(d, plan);
  check_backward(d, plan);
  avgpool_plan_destroy(plan);
  return 0;
}

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
  const void* data() const { return bytes.data() + kGuard; }
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

// One direction of a valid problem (the forward on the decoded data as
// input; the backward on it as grad_output): the reference (complete and
// deterministic), the decoded plan, every CPU implementation, the input left
// alone, and the reference's sampling entry point.
void check_direction(const Decoded& d, avgpool_plan* plan, bool backward) {
  const avgpool_params& p = d.params;
  const std::string dir = backward ? "backward " : "";
  const std::string out_name = backward ? "grad_input" : "dst";
  auto fail_with = [](const avgpool_params& q, const std::string& what, const std::string& detail) {
    fail(q, what.c_str(), detail);
  };
  int64_t src_n = 0, dst_n = 0;
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  if (src_n > kMaxElements || dst_n > kMaxElements || dst_n == 0) return;
  const int64_t in_n = backward ? dst_n : src_n, out_n = backward ? src_n : dst_n;
  const int64_t es = element_size(p.dtype);
  std::vector<unsigned char> in((size_t)(in_n * es));
  for (int64_t i = 0; i < in_n; ++i) store_double(p.dtype, in.data(), i, value_at(d, i));
  const std::vector<unsigned char> in_copy = in;
  auto run = [&](avgpool_plan* pl, void* out) {
    return backward ? avgpool_plan_backward(pl, in.data(), out, nullptr) : avgpool_plan_execute(pl, in.data(), out, nullptr);
  };
  auto compare = [&](const avgpool_params& q, const Guarded& got, const Guarded& ref) {
    return backward ? compare_backward_to_reference(q, in.data(), got.data(), ref.data())
                    : compare_to_reference(q, in.data(), got.data(), ref.data());
  };

  // The reference, under two fill patterns: identical results mean every
  // element was written and nothing depends on the output's old contents.
  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Guarded ref(out_n * es, kPoisonByte), ref2(out_n * es, 0x5A);
  for (Guarded* r : {&ref, &ref2}) {
    const avgpool_status s = backward ? run_reference_backward(rp, in.data(), r->data())
                                      : run_reference(rp, in.data(), r->data());
    if (s != AVGPOOL_SUCCESS) fail_with(p, "the reference " + dir + "failed on valid parameters", avgpool_last_error_message());
  }
  if (!ref.intact() || !ref2.intact()) fail_with(p, "the reference " + dir + "wrote outside " + out_name, "");
  if (!first_diff(ref, ref2).empty())
    fail_with(p, "the reference " + dir + "left elements unwritten or is not deterministic", first_diff(ref, ref2));

  // The plan as decoded (its backend may be AUTO or CPU after corruption).
  {
    const char* name = nullptr;
    if ((backward ? avgpool_plan_backward_impl_name : avgpool_plan_impl_name)(plan, &name) != AVGPOOL_SUCCESS)
      fail_with(p, "a valid host plan has no " + dir + "implementation", avgpool_last_error_message());
    Guarded got(out_n * es, kPoisonByte);
    if (run(plan, got.data()) != AVGPOOL_SUCCESS)
      fail_with(p, dir + "execute failed on a valid plan", avgpool_last_error_message());
    const Mismatch m = compare(p, got, ref);
    if (m.count != 0 || !got.intact()) fail_with(p, "the decoded plan's " + dir + "disagrees: " + name, m.message());
  }

  // Every CPU implementation that accepts.
  int ran = 0;
  const std::vector<std::string>& impls = backward ? cpu_backward_impls() : cpu_impls();
  for (const std::string& impl : impls) {
    avgpool_params q = p;
    q.backend = AVGPOOL_BACKEND_CPU;
    const avgpool_status a = avgpool_impl_accepts(impl.c_str(), &q);
    avgpool_plan* ip = nullptr;
    const avgpool_status c = avgpool_plan_create_with_impls(&q, backward ? nullptr : impl.c_str(),
                                                            backward ? impl.c_str() : nullptr, &ip);
    if (a != c) fail_with(q, "impl_accepts and plan creation disagree for " + impl, "");
    if (c == AVGPOOL_ERROR_UNSUPPORTED) {
      if (avgpool_last_error_message()[0] == '\0') fail_with(q, "declined without a message: " + impl, "");
      continue;
    }
    if (c != AVGPOOL_SUCCESS) fail_with(q, "plan creation failed: " + impl, avgpool_last_error_message());
    Guarded got(out_n * es, kPoisonByte);
    const avgpool_status e = run(ip, got.data());
    const std::string message = avgpool_last_error_message();  // before destroy clears it
    avgpool_plan_destroy(ip);
    if (!backward && e == AVGPOOL_ERROR_OUT_OF_MEMORY && kernel_exceeds_padded_input(q) && !strict()) {
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
      fail_with(q, dir + "execute failed: " + impl, std::string(avgpool_status_string(e)) + ": " + message);
    const Mismatch m = compare(q, got, ref);
    if (m.count != 0) fail_with(q, dir + "disagrees with the reference: " + impl, m.message());
    if (!got.intact()) fail_with(q, dir + "wrote outside " + out_name + ": " + impl, "");
    ++ran;
  }
  if (!impls.empty()) {
    // The CPU backend must take every valid problem.
    avgpool_params q = p;
    q.backend = AVGPOOL_BACKEND_CPU;
    avgpool_plan* cp = nullptr;
    if (avgpool_plan_create(&q, &cp) != AVGPOOL_SUCCESS || ran == 0)
      fail_with(q, "no CPU " + dir + "implementation takes a valid problem", avgpool_last_error_message());
    avgpool_plan_destroy(cp);
  }
  if (in != in_copy) fail_with(p, "an implementation wrote its input", dir);

  // The reference's sampling entry point agrees with the full reference.
  int64_t idx[4] = {0, out_n - 1, out_n / 2, (int64_t)(d.data_size * 7919) % out_n};
  double vals[4];
  const std::string sampler = backward ? "avgpool_reference_grad_inputs" : "avgpool_reference_outputs";
  if ((backward ? avgpool_reference_grad_inputs : avgpool_reference_outputs)(plan, in.data(), 4, idx, vals) !=
      AVGPOOL_SUCCESS)
    fail_with(p, sampler + " failed", avgpool_last_error_message());
  for (int i = 0; i < 4; ++i) {
    const double want = load_double(p.dtype, ref.data(), idx[i]);
    if (!(vals[i] == want || (isnan(vals[i]) && isnan(want))))
      fail_with(p, sampler + " differs from the reference",
                "index " + std::to_string(idx[i]) + ": " + std::to_string(vals[i]) + " vs " + std::to_string(want));
  }
}

void check_valid(const Decoded& d, avgpool_plan* plan) {
  int64_t src_n = 0, dst_n = 0, dims[4];
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  avgpool_plan_output_dims(plan, dims);
  if (dims[0] * dims[1] * dims[2] * dims[3] != dst_n) fail(d.params, "output dims and size disagree", "");
  check_direction(d, plan, false);
  check_direction(d, plan, true);
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
  avgpool_plan_destroy(plan);
  return 0;
}

// A thin header-only C++ layer over the C API: RAII plans, a parameter
// builder, and exceptions carrying the status and message.
#ifndef AVGPOOL_AVGPOOL_HPP
#define AVGPOOL_AVGPOOL_HPP

#include <array>
#include <stdexcept>
#include <string>

#include "avgpool/avgpool.h"

namespace avgpool {

class Error : public std::runtime_error {
 public:
  Error(avgpool_status status, const std::string& what)
      : std::runtime_error(what), status_(status) {}
  avgpool_status status() const noexcept { return status_; }

 private:
  avgpool_status status_;
};

inline void check(avgpool_status status) {
  if (status != AVGPOOL_SUCCESS)
    throw Error(status, std::string(avgpool_status_string(status)) + ": " + avgpool_last_error_message());
}

// Builder over avgpool_params, starting from PyTorch's defaults.
class Params {
 public:
  Params() { check(avgpool_params_init(&p_)); }
  Params& shape(int64_t n, int64_t c, int64_t h, int64_t w) { p_.n = n; p_.c = c; p_.h = h; p_.w = w; return *this; }
  Params& kernel(int64_t kh, int64_t kw) { p_.kernel_h = kh; p_.kernel_w = kw; return *this; }
  Params& stride(int64_t sh, int64_t sw) { p_.stride_h = sh; p_.stride_w = sw; return *this; }
  Params& padding(int64_t ph, int64_t pw) { p_.padding_h = ph; p_.padding_w = pw; return *this; }
  Params& ceil_mode(bool on) { p_.ceil_mode = on; return *this; }
  Params& count_include_pad(bool on) { p_.count_include_pad = on; return *this; }
  Params& divisor_override(int64_t d) { p_.divisor_override = d; return *this; }
  Params& dtype(avgpool_dtype d) { p_.dtype = d; return *this; }
  Params& layout(avgpool_layout l) { p_.layout = l; return *this; }
  Params& backend(avgpool_backend b) { p_.backend = b; return *this; }
  Params& numerics(avgpool_numerics n) { p_.numerics = n; return *this; }
  const avgpool_params& c_params() const { return p_; }

 private:
  avgpool_params p_;
};

class Plan {
 public:
  explicit Plan(const Params& params) { check(avgpool_plan_create(&params.c_params(), &plan_)); }
  Plan(const Params& params, const char* impl_name) {
    check(avgpool_plan_create_with_impl(&params.c_params(), impl_name, &plan_));
  }
  ~Plan() { avgpool_plan_destroy(plan_); }
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  Plan(Plan&& other) noexcept : plan_(other.plan_) { other.plan_ = nullptr; }
  Plan& operator=(Plan&& other) noexcept {
    if (this != &other) {
      avgpool_plan_destroy(plan_);
      plan_ = other.plan_;
      other.plan_ = nullptr;
    }
    return *this;
  }

  std::array<int64_t, 4> output_dims() const {
    std::array<int64_t, 4> d{};
    check(avgpool_plan_output_dims(plan_, d.data()));
    return d;
  }
  std::string impl_name() const {
    const char* name = nullptr;
    check(avgpool_plan_impl_name(plan_, &name));
    return name;
  }
  // stream: a cudaStream_t for CUDA plans; ignored on the host.
  void execute(const void* src, void* dst, void* stream = nullptr) const {
    check(avgpool_plan_execute(plan_, src, dst, stream));
  }
  avgpool_plan* get() const noexcept { return plan_; }

 private:
  avgpool_plan* plan_ = nullptr;
};

}  // namespace avgpool

#endif  // AVGPOOL_AVGPOOL_HPP

// oneDNN's average pooling, the CPU benchmarks' library anchor: forward
// (inference) and backward primitives for an avgpool problem, in its layout
// and dtype, on buffers the caller owns.
//
// oneDNN has include- and exclude-padding averages but no divisor_override
// and no f64 pooling; ceil_mode becomes extra right padding (padding_r),
// whose include-padding divisor then counts the overhang, unlike PyTorch:
// these primitives are for timing, not for reference values.
#pragma once

#include <stdint.h>

#include <string>
#include <unordered_map>

#include "avgpool/avgpool.h"

#if defined(AVGPOOL_BENCH_WITH_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace avgpool_bench {

// Why oneDNN cannot compute p (empty when it can try; it may still have no
// implementation, which the constructors report by throwing dnnl::error).
std::string dnnl_refusal(const avgpool_params& p);

#if defined(AVGPOOL_BENCH_WITH_DNNL)
// One oneDNN pooling primitive bound to its buffers.
class DnnlPool {
 public:
  void run();  // executes and waits
  const std::string& impl() const { return impl_; }

 protected:
  dnnl::engine eng_{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm_{eng_};
  dnnl::primitive prim_;
  std::unordered_map<int, dnnl::memory> args_;
  std::string impl_;
};

// y (p.n, p.c, oh, ow) from x; throws dnnl::error.
struct DnnlForward : DnnlPool {
  DnnlForward(const avgpool_params& p, int64_t oh, int64_t ow, void* x, void* y);
};

// grad_input (p's input dims) from grad_output (p.n, p.c, oh, ow); a
// forward_training descriptor is its hint. Throws dnnl::error.
struct DnnlBackward : DnnlPool {
  DnnlBackward(const avgpool_params& p, int64_t oh, int64_t ow, void* grad_output, void* grad_input);
};
#else
// Built without oneDNN: no primitive is ever made (benchmarks hold a null
// pointer to this).
class DnnlPool {
 public:
  void run() {}
  std::string impl() const { return {}; }
};
#endif

}  // namespace avgpool_bench

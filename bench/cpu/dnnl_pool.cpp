#include "dnnl_pool.h"

#include <algorithm>

namespace avgpool_bench {

std::string dnnl_refusal(const avgpool_params& p) {
#if !defined(AVGPOOL_BENCH_WITH_DNNL)
  (void)p;
  return "built without oneDNN";
#else
  if (p.divisor_override) return "oneDNN has no divisor_override";
  if (p.dtype == AVGPOOL_DTYPE_F64) return "oneDNN has no f64 pooling";
  return "";
#endif
}

#if defined(AVGPOOL_BENCH_WITH_DNNL)
namespace {

using dnnl::memory;

struct Descs {
  memory::desc src, dst;
  memory::dims strides, kernel, pad_l, pad_r;
  dnnl::algorithm alg;
};

Descs descs(const avgpool_params& p, int64_t oh, int64_t ow) {
  const auto tag = p.layout == AVGPOOL_LAYOUT_NCHW ? memory::format_tag::nchw : memory::format_tag::nhwc;
  const auto dt = p.dtype == AVGPOOL_DTYPE_F16    ? memory::data_type::f16
                  : p.dtype == AVGPOOL_DTYPE_BF16 ? memory::data_type::bf16
                                                  : memory::data_type::f32;
  // The right padding that makes the last window end where PyTorch's ends
  // (ceil_mode); never negative (floor mode may leave input rows unread).
  const int64_t pr_h = std::max<int64_t>(0, (oh - 1) * p.stride_h + p.kernel_h - p.h - p.padding_h);
  const int64_t pr_w = std::max<int64_t>(0, (ow - 1) * p.stride_w + p.kernel_w - p.w - p.padding_w);
  return {memory::desc({p.n, p.c, p.h, p.w}, dt, tag),
          memory::desc({p.n, p.c, oh, ow}, dt, tag),
          {p.stride_h, p.stride_w},
          {p.kernel_h, p.kernel_w},
          {p.padding_h, p.padding_w},
          {pr_h, pr_w},
          p.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                              : dnnl::algorithm::pooling_avg_exclude_padding};
}

}  // namespace

DnnlForward::DnnlForward(const avgpool_params& p, int64_t oh, int64_t ow, void* x, void* y) {
  const Descs d = descs(p, oh, ow);
  dnnl::pooling_forward::desc fd(dnnl::prop_kind::forward_inference, d.alg, d.src, d.dst, d.strides, d.kernel,
                                 d.pad_l, d.pad_r);
  dnnl::pooling_forward::primitive_desc pd(fd, eng_);
  impl_ = pd.impl_info_str();
  prim_ = dnnl::pooling_forward(pd);
  args_ = {{DNNL_ARG_SRC, memory(d.src, eng_, x)}, {DNNL_ARG_DST, memory(d.dst, eng_, y)}};
}

DnnlBackward::DnnlBackward(const avgpool_params& p, int64_t oh, int64_t ow, void* grad_output, void* grad_input) {
  const Descs d = descs(p, oh, ow);
  dnnl::pooling_forward::desc fd(dnnl::prop_kind::forward_training, d.alg, d.src, d.dst, d.strides, d.kernel,
                                 d.pad_l, d.pad_r);
  dnnl::pooling_forward::primitive_desc fpd(fd, eng_);
  dnnl::pooling_backward::desc bd(d.alg, d.src, d.dst, d.strides, d.kernel, d.pad_l, d.pad_r);
  dnnl::pooling_backward::primitive_desc pd(bd, eng_, fpd);
  impl_ = pd.impl_info_str();
  prim_ = dnnl::pooling_backward(pd);
  args_ = {{DNNL_ARG_DIFF_DST, memory(d.dst, eng_, grad_output)}, {DNNL_ARG_DIFF_SRC, memory(d.src, eng_, grad_input)}};
}

void DnnlPool::run() {
  prim_.execute(strm_, args_);
  strm_.wait();
}
#endif

}  // namespace avgpool_bench

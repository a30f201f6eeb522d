// The reference backend. Numerics:
//   pytorch: PyTorch's accumulator (float, double for f64), rows then
//            columns left to right, one true division by the integer
//            divisor converted to the accumulator type, one rounding.
//   fast:    a float64 sum (compensated for f64), one division, one rounding:
//            the correctly rounded mean, up to the float64 sum's error.
// A window entirely in padding (impossible while padding <= kernel / 2, but
// PyTorch handles it) gives 0.
#include "reference.h"

#include <math.h>

#include "error.h"
#include "host_types.h"
#include "impl.h"
#include "reference_loops.h"

namespace avgpool {
namespace reference {

namespace {

template <typename T>
T window_mean(const Problem& q, const T* src, int64_t n, int64_t c, int64_t oy, int64_t ox) {
  const AxisWindow& r = q.rows[oy];
  const AxisWindow& k = q.cols[ox];
  if (r.begin >= r.end || k.begin >= k.end) return T(0.0f);
  const int64_t divisor = q.divisor(oy, ox);
  if (q.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    using acc_t = typename pytorch_acc<T>::type;
    acc_t sum = 0;
    for (int64_t y = r.begin; y < r.end; ++y)
      for (int64_t x = k.begin; x < k.end; ++x)
        sum += static_cast<acc_t>(src[q.src_offset(n, c, y, x)]);
    return T(sum / static_cast<acc_t>(divisor));
  }
  const double sum = wide_sum<T>(r.begin, r.end, k.begin, k.end,
                                 [&](int64_t y, int64_t x) { return to_double(src[q.src_offset(n, c, y, x)]); });
  return from_double<T>(sum / static_cast<double>(divisor));
}

avgpool_status init(const Problem&, const DeviceInfo&, ConfigPtr* config, Decline*) {
  *config = std::make_unique<Config>();  // nothing to decide
  return AVGPOOL_SUCCESS;
}

avgpool_status execute(const Problem& q, const Config&, const void* src, void* dst, void*) {
  fill_elements(
      q, q.oh, q.ow, src, dst, [&](int64_t n, int64_t c, int64_t oy, int64_t ox) { return q.dst_offset(n, c, oy, ox); },
      [&](auto* in, int64_t n, int64_t c, int64_t oy, int64_t ox) { return window_mean(q, in, n, c, oy, ox); });
  return AVGPOOL_SUCCESS;
}

const Impl kReference = {
    /* .name      = */ "reference",
    /* .backend   = */ AVGPOOL_BACKEND_REFERENCE,
    /* .direction = */ Direction::kForward,
    /* .init      = */ init,
    /* .execute   = */ execute,
};
const Impl* const kImpls[] = {&kReference, &kReferenceBackward};

size_t auto_order(const Problem&, const DeviceInfo&, Direction direction, const Impl** out, size_t cap) {
  if (cap < 1) return 0;
  out[0] = direction == Direction::kForward ? &kReference : &kReferenceBackward;
  return 1;
}

}  // namespace

double output_value(const Problem& q, const void* src, int64_t n, int64_t c, int64_t oy,
                    int64_t ox) {
  return dispatch_dtype(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    return to_double(window_mean(q, static_cast<const T*>(src), n, c, oy, ox));
  });
}

}  // namespace reference

const Backend& reference_backend() {
  static const Backend backend = {
      /* .id         = */ AVGPOOL_BACKEND_REFERENCE,
      /* .impls      = */ reference::kImpls,
      /* .count      = */ sizeof reference::kImpls / sizeof reference::kImpls[0],
      /* .device     = */ host_device,
      /* .auto_order = */ reference::auto_order,
  };
  return backend;
}

}  // namespace avgpool

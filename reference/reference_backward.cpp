// The reference backward: grad_input from grad_output, the spec of
// tests/data/README.md ("Backward") in code. Each grad_input element sums,
// over the windows that contain it (oh ascending, then ow ascending), the
// term grad_output[oh, ow] / divisor[oh, ow]. Numerics:
//   pytorch: f32/f64: a true division per term, summed in the accumulator
//            (float, double for f64), one rounding at the end (none for
//            f32/f64). f16/bf16: PyTorch CUDA's rule: the divisor rounded to
//            the type, each term rounded to the type, the terms summed in
//            float, one rounding at the end.
//   fast:    the terms summed in float64 (compensated for f64), one
//            rounding: the exact gradient up to the float64 sum's error.
// Elements no window covers are 0.
#include <math.h>

#include "cover.h"
#include "host_types.h"
#include "impl.h"
#include "reference.h"
#include "reference_loops.h"

namespace avgpool {
namespace reference {

namespace {

template <typename T>
T grad_input(const Problem& q, const T* g, int64_t n, int64_t c, int64_t y, int64_t x) {
  const AxisCover rows = axis_cover(y, q.kh, q.sh, q.ph, q.rows.data(), q.oh);
  const AxisCover cols = axis_cover(x, q.kw, q.sw, q.pw, q.cols.data(), q.ow);
  auto grad = [&](int64_t oy, int64_t ox) { return g[q.dst_offset(n, c, oy, ox)]; };
  if (q.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    using acc_t = typename pytorch_acc<T>::type;
    acc_t acc = 0;
    for (int64_t oy = rows.first; oy < rows.last; ++oy)
      for (int64_t ox = cols.first; ox < cols.last; ++ox) {
        const int64_t d = q.divisor(oy, ox);
        if constexpr (sizeof(T) == 2) {
          // PyTorch CUDA: scalar_t / scalar_t, with the divisor converted
          // (through float) to the half type first.
          const float d_rounded = static_cast<float>(T(static_cast<float>(d)));
          acc = acc + static_cast<float>(T(static_cast<float>(grad(oy, ox)) / d_rounded));
        } else {
          acc = acc + static_cast<acc_t>(grad(oy, ox)) / static_cast<acc_t>(d);
        }
      }
    return T(acc);
  }
  const double sum = wide_sum<T>(rows.first, rows.last, cols.first, cols.last, [&](int64_t oy, int64_t ox) {
    return to_double(grad(oy, ox)) / static_cast<double>(q.divisor(oy, ox));
  });
  return from_double<T>(sum + 0.0);  // + 0.0: an empty or cancelled sum is +0, as in pytorch numerics
}

avgpool_status init(const Problem&, const DeviceInfo&, ConfigPtr* config, Decline*) {
  *config = std::make_unique<Config>();  // nothing to decide
  return AVGPOOL_SUCCESS;
}

avgpool_status execute(const Problem& q, const Config&, const void* grad_output, void* grad_input_out, void*) {
  fill_elements(
      q, q.h, q.w, grad_output, grad_input_out,
      [&](int64_t n, int64_t c, int64_t y, int64_t x) { return q.src_offset(n, c, y, x); },
      [&](auto* g, int64_t n, int64_t c, int64_t y, int64_t x) { return grad_input(q, g, n, c, y, x); });
  return AVGPOOL_SUCCESS;
}

}  // namespace

const Impl kReferenceBackward = {
    /* .name      = */ "reference_backward",
    /* .backend   = */ AVGPOOL_BACKEND_REFERENCE,
    /* .direction = */ Direction::kBackward,
    /* .init      = */ init,
    /* .execute   = */ execute,
};

double grad_input_value(const Problem& q, const void* grad_output, int64_t n, int64_t c, int64_t y, int64_t x) {
  return dispatch_dtype(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    return to_double(grad_input(q, static_cast<const T*>(grad_output), n, c, y, x));
  });
}

}  // namespace reference
}  // namespace avgpool

#include "backward_as_forward.h"

#include <new>

#include "dispatch.h"
#include "window.h"

namespace avgpool {

namespace {

struct AsForwardConfig final : Config {
  Problem forward;  // the mirrored problem: grad_output in, grad_input out
  Choice choice;    // its forward implementation (and fallback)
};

// The one divisor of every window of q, or 0 when they differ.
int64_t uniform_divisor(const Problem& q) {
  if (q.divisor_override != 0) return q.divisor_override;
  const int64_t row = axis_divisor_factor(q.rows[0], q.count_include_pad);
  const int64_t col = axis_divisor_factor(q.cols[0], q.count_include_pad);
  for (const AxisWindow& r : q.rows)
    if (axis_divisor_factor(r, q.count_include_pad) != row) return 0;
  for (const AxisWindow& c : q.cols)
    if (axis_divisor_factor(c, q.count_include_pad) != col) return 0;
  return row * col;
}

}  // namespace

avgpool_status mirrored_forward_problem(const Problem& q, Problem* forward, Decline* why) {
  if (q.numerics != AVGPOOL_NUMERICS_FAST || q.sh != 1 || q.sw != 1)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "the backward as a forward takes fast numerics and stride 1 on both axes (stride %lldx%lld, "
                   "%s numerics)",
                   (long long)q.sh, (long long)q.sw, numerics_name(q.numerics));
  const int64_t mph = q.kh - 1 - q.ph, mpw = q.kw - 1 - q.pw;
  if (mph > q.kh / 2 || mpw > q.kw / 2)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "the backward as a forward needs padding k - 1 - p within k / 2 (padding %lldx%lld, kernel "
                   "%lldx%lld)",
                   (long long)q.ph, (long long)q.pw, (long long)q.kh, (long long)q.kw);
  const int64_t divisor = uniform_divisor(q);
  if (divisor == 0)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "the backward as a forward needs one divisor for every window (padding that does not count "
                   "changes the edge windows' divisors)");
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = q.n; p.c = q.c; p.h = q.oh; p.w = q.ow;
  p.kernel_h = q.kh; p.kernel_w = q.kw; p.stride_h = 1; p.stride_w = 1;
  p.padding_h = mph; p.padding_w = mpw;
  p.divisor_override = divisor;
  p.dtype = q.dtype; p.layout = q.layout; p.backend = q.backend; p.numerics = q.numerics;
  // The checks above leave make_problem nothing to refuse (the mirrored
  // sizes are those of q) but the tables' allocation.
  Problem mirrored;
  if (make_problem(&p, &mirrored) != AVGPOOL_SUCCESS)
    return decline(why, AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the mirrored problem's tables");
  if (mirrored.oh != q.h || mirrored.ow != q.w)
    return decline(why, AVGPOOL_ERROR_INTERNAL, "the mirrored forward's output (%lldx%lld) is not the input (%lldx%lld)",
                   (long long)mirrored.oh, (long long)mirrored.ow, (long long)q.h, (long long)q.w);
  *forward = std::move(mirrored);
  return AVGPOOL_SUCCESS;
}

avgpool_status backward_as_forward_init(avgpool_backend backend_id, const Problem& q, const DeviceInfo& device,
                                        ConfigPtr* config, Decline* why) {
  const Backend* backend = backend_of(backend_id);
  if (backend == nullptr) return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "backend not compiled in");
  std::unique_ptr<AsForwardConfig> c(new (std::nothrow) AsForwardConfig);
  if (c == nullptr) return decline(why, AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the configuration");
  avgpool_status s = mirrored_forward_problem(q, &c->forward, why);
  if (s != AVGPOOL_SUCCESS) return s;
  c->forward.backend = backend_id;
  if ((s = choose_in_backend(c->forward, Direction::kForward, *backend, device, &c->choice, why)) != AVGPOOL_SUCCESS)
    return s;
  *config = std::move(c);  // any element-aligned pointers: the choice has its own fallback
  return AVGPOOL_SUCCESS;
}

avgpool_status backward_as_forward_execute(const Problem&, const Config& config, const void* src, void* dst,
                                           void* stream) {
  const AsForwardConfig& c = static_cast<const AsForwardConfig&>(config);
  return run_choice(c.choice, src, dst, stream);
}

}  // namespace avgpool

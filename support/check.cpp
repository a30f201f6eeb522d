#include "check.h"

#include <math.h>
#include <string.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "tensor_util.h"

namespace avgpool_support {

avgpool_params random_params(std::mt19937_64& rng, const RandomParamsLimits& lim) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = pick(1, lim.max_n);
    p.c = pick(1, lim.max_c);
    p.h = pick(1, lim.max_hw);
    p.w = pick(1, lim.max_hw);
    p.kernel_h = pick(1, lim.max_kernel);
    p.kernel_w = pick(1, lim.max_kernel);
    if (pick(0, 3) == 0) {
      p.stride_h = p.kernel_h;
      p.stride_w = p.kernel_w;
    } else {
      p.stride_h = pick(1, lim.max_stride);
      p.stride_w = pick(1, lim.max_stride);
    }
    p.padding_h = pick(0, p.kernel_h / 2);
    p.padding_w = pick(0, p.kernel_w / 2);
    p.ceil_mode = (int32_t)pick(0, 1);
    p.count_include_pad = (int32_t)pick(0, 1);
    p.divisor_override = pick(0, 7) == 0 ? pick(1, 50) : 0;
    if (lim.vary_dtype) p.dtype = (avgpool_dtype)pick(0, 3);
    if (lim.vary_layout) p.layout = (avgpool_layout)pick(0, 1);
    if (lim.vary_numerics) p.numerics = (avgpool_numerics)pick(0, 1);
    avgpool_plan* plan = nullptr;
    p.backend = AVGPOOL_BACKEND_REFERENCE;
    if (avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS) {
      avgpool_plan_destroy(plan);
      p.backend = AVGPOOL_BACKEND_AUTO;
      return p;
    }
  }
}

avgpool_params shape_params(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                            int64_t ph, int64_t pw, int ceil_mode) {
  avgpool_params p;
  avgpool_params_init(&p);
  p.n = n; p.c = c; p.h = h; p.w = w;
  p.kernel_h = kh; p.kernel_w = kw; p.stride_h = sh; p.stride_w = sw;
  p.padding_h = ph; p.padding_w = pw; p.ceil_mode = ceil_mode;
  return p;
}

std::string describe(const avgpool_params& p) {
  // The name functions read the enum fields as ints: p may hold values
  // outside the enums.
  std::ostringstream os;
  os << "shape " << p.n << 'x' << p.c << 'x' << p.h << 'x' << p.w << " k" << p.kernel_h << 'x'
     << p.kernel_w << " s" << p.stride_h << 'x' << p.stride_w << " p" << p.padding_h << 'x'
     << p.padding_w << (p.ceil_mode ? " ceil" : "") << (p.count_include_pad ? "" : " exclude_pad")
     << (p.divisor_override ? " div" + std::to_string(p.divisor_override) : "") << ' '
     << avgpool_dtype_name(p.dtype) << ' ' << avgpool_layout_name(p.layout) << ' '
     << avgpool_numerics_name(p.numerics);
  return os.str();
}

std::string Mismatch::message() const {
  if (count == 0) return "ok";
  std::ostringstream os;
  os.precision(17);
  os << count << ' ' << what << " differ; first at " << first << ": got " << got << ", want " << want
     << " (bound " << bound << ")";
  return os.str();
}

namespace {

std::vector<std::string> names_of_direction(const std::string& prefix, bool want_backward) {
  std::vector<std::string> names;
  int64_t count = 0;
  avgpool_impl_count(&count);
  for (int64_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    int backward = 0;
    if (avgpool_impl_name(i, &name) == AVGPOOL_SUCCESS && avgpool_impl_is_backward(i, &backward) == AVGPOOL_SUCCESS &&
        (backward != 0) == want_backward && std::string(name).rfind(prefix, 0) == 0)
      names.push_back(name);
  }
  return names;
}

}  // namespace

std::vector<std::string> impl_names(const std::string& prefix) { return names_of_direction(prefix, false); }

std::vector<std::string> backward_impl_names(const std::string& prefix) { return names_of_direction(prefix, true); }

std::vector<std::string> host_backward_impl_names() {
  std::vector<std::string> names;
  for (const std::string& name : backward_impl_names(""))
    if (name.rfind("cuda:", 0) != 0) names.push_back(name);
  return names;
}

avgpool_status run_reference_backward(const avgpool_params& p, const void* grad_output, void* grad_input) {
  avgpool_params r = p;
  r.backend = AVGPOOL_BACKEND_REFERENCE;
  return avgpool_backward(&r, grad_output, grad_input, nullptr);
}

void sprinkle_specials(avgpool_dtype dtype, void* data, int64_t count, double density,
                       std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  const double specials[3] = {NAN, INFINITY, -INFINITY};
  for (int64_t i = 0; i < count; ++i)
    if (u(rng) < density) store_double(dtype, data, i, specials[rng() % 3]);
  if (count > 0 && density < 0.01)
    store_double(dtype, data, (int64_t)(rng() % (uint64_t)count), specials[rng() % 3]);
}

PlanSizes plan_sizes(const avgpool_params& p) {
  avgpool_params r = p;
  r.backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_plan* plan = nullptr;
  PlanSizes s;
  if (avgpool_plan_create(&r, &plan) != AVGPOOL_SUCCESS) return s;
  avgpool_plan_sizes(plan, &s.src, &s.dst);
  avgpool_plan_output_dims(plan, s.dims);
  avgpool_plan_destroy(plan);
  return s;
}

bool element_counts(const avgpool_params& p, int64_t* src_elements, int64_t* dst_elements) {
  const PlanSizes s = plan_sizes(p);
  *src_elements = s.src;
  *dst_elements = s.dst;
  return s.src >= 0;
}

avgpool_status run_reference(const avgpool_params& p, const void* src, void* dst) {
  avgpool_params r = p;
  r.backend = AVGPOOL_BACKEND_REFERENCE;
  return avgpool_forward(&r, src, dst, nullptr);
}

namespace {

// One unit in the last place of dtype at magnitude |v|.
double ulp_of(avgpool_dtype dtype, double v) {
  const int digits = dtype == AVGPOOL_DTYPE_F64 ? 53 : dtype == AVGPOOL_DTYPE_F32 ? 24
                     : dtype == AVGPOOL_DTYPE_F16 ? 11 : 8;
  const int min_exp = dtype == AVGPOOL_DTYPE_F64 ? -1022 : dtype == AVGPOOL_DTYPE_F32 ? -126
                      : dtype == AVGPOOL_DTYPE_F16 ? -14 : -126;
  int e = 0;
  frexp(fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  if (e - 1 < min_exp) e = min_exp + 1;
  return ldexp(1.0, e - digits);
}

// The comparison both directions share. input is what the direction reads
// (src, or grad_output); got and ref what it writes. In fast numerics the
// bound is ulp + terms * 2^-24 * scale * slack + terms * (the accumulator's
// subnormal spacing), scale from the reference (fast)
// on |input|: the mean |x| of a window (forward), or sum |g / d| (backward).
Mismatch compare_dense(const avgpool_params& p, bool backward, const void* input, const void* got,
                       const void* ref) {
  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Mismatch m;
  if (backward) m.what = "grad_input elements";
  const PlanSizes sizes = plan_sizes(p);
  if (sizes.src < 0) {
    m.count = -1;
    return m;
  }
  const int64_t src_n = sizes.src, dst_n = sizes.dst, *dims = sizes.dims;
  const int64_t in_n = backward ? dst_n : src_n, out_n = backward ? src_n : dst_n;
  const int64_t esize = element_size(p.dtype);
  auto note = [&](int64_t i, double g, double w, double b) {
    if (m.count++ == 0) {
      m.first = i; m.got = g; m.want = w; m.bound = b;
    }
  };
  if (p.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    for (int64_t i = 0; i < out_n; ++i) {
      const char* g = static_cast<const char*>(got) + i * esize;
      const char* r = static_cast<const char*>(ref) + i * esize;
      const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
      if (memcmp(g, r, (size_t)esize) != 0 && !(isnan(gv) && isnan(rv))) note(i, gv, rv, 0);
    }
    return m;
  }
  std::vector<char> abs_in((size_t)(in_n * esize)), scale((size_t)(out_n * esize));
  for (int64_t i = 0; i < in_n; ++i) store_double(p.dtype, abs_in.data(), i, fabs(load_double(p.dtype, input, i)));
  avgpool_params ap = rp;
  ap.numerics = AVGPOOL_NUMERICS_FAST;
  double terms, slack;
  if (backward) {
    avgpool_backward(&ap, abs_in.data(), scale.data(), nullptr);
    // The windows one element is in, plus two roundings; 1.01: the scale is
    // rounded to the dtype.
    const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
    terms = (double)std::min((p.kernel_h + sh - 1) / sh, dims[2]) * (double)std::min((p.kernel_w + sw - 1) / sw, dims[3]) + 2;
    slack = 1.01;
  } else {
    avgpool_forward(&ap, abs_in.data(), scale.data(), nullptr);
    // Terms in one sum: the window clipped to the input (a kernel may
    // exceed it in ceil mode; kernel_h * kernel_w could overflow int64).
    terms = (double)std::min(p.kernel_h, p.h) * (double)std::min(p.kernel_w, p.w);
    slack = 1.0001;
  }
  // Below the normal range a rounding loses relative precision: each term
  // (a product by a reciprocal, or a sum) may be off by half the spacing of
  // the accumulator's subnormals, whatever its magnitude.
  const double subnormal_step = p.dtype == AVGPOOL_DTYPE_F64 ? 0x1.0p-1074 : 0x1.0p-149;
  for (int64_t i = 0; i < out_n; ++i) {
    const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
    if (isnan(rv) || isinf(rv) || isnan(gv) || isinf(gv)) {
      if (!(isnan(rv) && isnan(gv)) && gv != rv) note(i, gv, rv, 0);
      continue;
    }
    const double bound = ulp_of(p.dtype, rv) + terms * 0x1.0p-24 * load_double(p.dtype, scale.data(), i) * slack +
                         terms * subnormal_step;
    if (!(fabs(gv - rv) <= bound)) note(i, gv, rv, bound);
  }
  return m;
}

}  // namespace

Mismatch compare_to_reference(const avgpool_params& p, const void* src, const void* got, const void* ref) {
  return compare_dense(p, false, src, got, ref);
}

Mismatch compare_backward_to_reference(const avgpool_params& p, const void* grad_output, const void* got,
                                       const void* ref) {
  return compare_dense(p, true, grad_output, got, ref);
}

void append_random_indices(std::vector<int64_t>* indices, int count, int64_t total, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) indices->push_back((int64_t)(rng() % (uint64_t)total));
}

int64_t count_sampled_mismatches(const avgpool_plan* plan, const void* src_host, const void* out_host,
                                 avgpool_dtype dtype, const std::vector<int64_t>& indices, double rel_tol) {
  std::vector<double> want(indices.size());
  if (avgpool_reference_outputs(plan, src_host, (int64_t)indices.size(), indices.data(), want.data()) !=
      AVGPOOL_SUCCESS)
    return -1;
  int64_t bad = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const double got = load_double(dtype, out_host, indices[i]);
    if (!(fabs(got - want[i]) <= rel_tol * fabs(want[i]))) ++bad;
  }
  return bad;
}

std::vector<ImplJob> impl_jobs(int count, const std::vector<std::string>& impls, uint64_t seed,
                               const RandomParamsLimits& limits, int limits_from, const RandomParamsLimits& big_limits,
                               const std::function<void(int k, avgpool_params* p)>& reshape) {
  std::mt19937_64 rng(seed);
  std::vector<ImplJob> jobs;
  for (int k = 0; k < count; ++k) {
    avgpool_params p = random_params(rng, limits_from >= 0 && k >= limits_from ? big_limits : limits);
    if (reshape) reshape(k, &p);
    const PlanSizes sizes = plan_sizes(p);
    if (sizes.src < 0) continue;
    const int64_t es = element_size(p.dtype);
    for (const std::string& impl : impls) {
      if (avgpool_impl_accepts(impl.c_str(), &p) != AVGPOOL_SUCCESS) continue;
      ImplJob j;
      j.impl = impl;
      j.params = p;
      j.src_bytes = sizes.src * es;
      j.dst_bytes = sizes.dst * es;
      j.src.resize((size_t)j.src_bytes);
      fill_random(p.dtype, j.src.data(), sizes.src, seed + (uint64_t)k, -2.0, 3.0);
      jobs.push_back(std::move(j));
    }
  }
  return jobs;
}

}  // namespace avgpool_support

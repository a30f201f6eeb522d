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

std::string describe(const avgpool_params& p) {
  static const char* dtypes[] = {"f32", "f16", "bf16", "f64"};
  // Read the enum fields as ints: p may hold values outside the enums
  // (loading those as the enum type is undefined behaviour).
  int dtype, layout, numerics;
  memcpy(&dtype, &p.dtype, sizeof dtype);
  memcpy(&layout, &p.layout, sizeof layout);
  memcpy(&numerics, &p.numerics, sizeof numerics);
  std::ostringstream os;
  os << "shape " << p.n << 'x' << p.c << 'x' << p.h << 'x' << p.w << " k" << p.kernel_h << 'x'
     << p.kernel_w << " s" << p.stride_h << 'x' << p.stride_w << " p" << p.padding_h << 'x'
     << p.padding_w << (p.ceil_mode ? " ceil" : "") << (p.count_include_pad ? "" : " exclude_pad")
     << (p.divisor_override ? " div" + std::to_string(p.divisor_override) : "") << ' '
     << (dtype >= 0 && dtype <= 3 ? dtypes[dtype] : "?")
     << (layout == AVGPOOL_LAYOUT_NHWC ? " nhwc" : layout == AVGPOOL_LAYOUT_NCHW ? " nchw" : " layout?")
     << (numerics == AVGPOOL_NUMERICS_PYTORCH ? " pytorch" : numerics == AVGPOOL_NUMERICS_FAST ? " fast" : " numerics?");
  return os.str();
}

std::string Mismatch::message() const {
  if (count == 0) return "ok";
  std::ostringstream os;
  os.precision(17);
  os << count << " outputs differ; first at " << first << ": got " << got << ", want " << want
     << " (bound " << bound << ")";
  return os.str();
}

std::vector<std::string> impl_names(const std::string& prefix) {
  std::vector<std::string> names;
  int64_t count = 0;
  avgpool_impl_count(&count);
  for (int64_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    int backward = 0;
    if (avgpool_impl_name(i, &name) == AVGPOOL_SUCCESS && avgpool_impl_is_backward(i, &backward) == AVGPOOL_SUCCESS &&
        !backward && std::string(name).rfind(prefix, 0) == 0)
      names.push_back(name);
  }
  return names;
}

std::vector<std::string> backward_impl_names(const std::string& prefix) {
  std::vector<std::string> names;
  int64_t count = 0;
  avgpool_impl_count(&count);
  for (int64_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    int backward = 0;
    if (avgpool_impl_name(i, &name) == AVGPOOL_SUCCESS && avgpool_impl_is_backward(i, &backward) == AVGPOOL_SUCCESS &&
        backward && std::string(name).rfind(prefix, 0) == 0)
      names.push_back(name);
  }
  return names;
}

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

bool element_counts(const avgpool_params& p, int64_t* src_elements, int64_t* dst_elements) {
  avgpool_params r = p;
  r.backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_plan* plan = nullptr;
  if (avgpool_plan_create(&r, &plan) != AVGPOOL_SUCCESS) return false;
  avgpool_plan_sizes(plan, src_elements, dst_elements);
  avgpool_plan_destroy(plan);
  return true;
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

}  // namespace

Mismatch compare_to_reference(const avgpool_params& p, const void* src, const void* got,
                              const void* ref) {
  avgpool_plan* plan = nullptr;
  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Mismatch m;
  if (avgpool_plan_create(&rp, &plan) != AVGPOOL_SUCCESS) {
    m.count = -1;
    return m;
  }
  int64_t src_n = 0, dst_n = 0;
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  const int64_t esize = element_size(p.dtype);
  auto note = [&](int64_t i, double g, double w, double b) {
    if (m.count++ == 0) {
      m.first = i; m.got = g; m.want = w; m.bound = b;
    }
  };

  if (p.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    for (int64_t i = 0; i < dst_n; ++i) {
      const char* g = static_cast<const char*>(got) + i * esize;
      const char* r = static_cast<const char*>(ref) + i * esize;
      const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
      if (memcmp(g, r, (size_t)esize) != 0 && !(isnan(gv) && isnan(rv))) note(i, gv, rv, 0);
    }
    avgpool_plan_destroy(plan);
    return m;
  }

  // mean|x| per output: the reference (fast) on |src|.
  std::vector<char> abs_src((size_t)(src_n * esize)), abs_mean((size_t)(dst_n * esize));
  for (int64_t i = 0; i < src_n; ++i)
    store_double(p.dtype, abs_src.data(), i, fabs(load_double(p.dtype, src, i)));
  avgpool_params ap = rp;
  ap.numerics = AVGPOOL_NUMERICS_FAST;
  avgpool_forward(&ap, abs_src.data(), abs_mean.data(), nullptr);
  // Terms in one sum: the window clipped to the input (a kernel may exceed
  // it in ceil mode; kernel_h * kernel_w could overflow int64).
  const double window = (double)std::min(p.kernel_h, p.h) * (double)std::min(p.kernel_w, p.w);
  for (int64_t i = 0; i < dst_n; ++i) {
    const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
    if (isnan(rv) || isinf(rv) || isnan(gv) || isinf(gv)) {
      if (!(isnan(rv) && isnan(gv)) && gv != rv) note(i, gv, rv, 0);
      continue;
    }
    const double bound = ulp_of(p.dtype, rv) + window * 0x1.0p-24 *
                         load_double(p.dtype, abs_mean.data(), i) * 1.0001;
    if (!(fabs(gv - rv) <= bound)) note(i, gv, rv, bound);
  }
  avgpool_plan_destroy(plan);
  return m;
}

Mismatch compare_backward_to_reference(const avgpool_params& p, const void* grad_output, const void* got,
                                       const void* ref) {
  avgpool_plan* plan = nullptr;
  avgpool_params rp = p;
  rp.backend = AVGPOOL_BACKEND_REFERENCE;
  Mismatch m;
  if (avgpool_plan_create(&rp, &plan) != AVGPOOL_SUCCESS) {
    m.count = -1;
    return m;
  }
  int64_t src_n = 0, dst_n = 0, dims[4];
  avgpool_plan_sizes(plan, &src_n, &dst_n);
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_destroy(plan);
  const int64_t esize = element_size(p.dtype);
  auto note = [&](int64_t i, double g, double w, double b) {
    if (m.count++ == 0) {
      m.first = i; m.got = g; m.want = w; m.bound = b;
    }
  };
  if (p.numerics == AVGPOOL_NUMERICS_PYTORCH) {
    for (int64_t i = 0; i < src_n; ++i) {
      const char* g = static_cast<const char*>(got) + i * esize;
      const char* r = static_cast<const char*>(ref) + i * esize;
      const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
      if (memcmp(g, r, (size_t)esize) != 0 && !(isnan(gv) && isnan(rv))) note(i, gv, rv, 0);
    }
    return m;
  }
  // sum|g / d| per element: the reference (fast) on |grad_output|.
  std::vector<char> abs_g((size_t)(dst_n * esize)), abs_sum((size_t)(src_n * esize));
  for (int64_t i = 0; i < dst_n; ++i)
    store_double(p.dtype, abs_g.data(), i, fabs(load_double(p.dtype, grad_output, i)));
  avgpool_params ap = rp;
  ap.numerics = AVGPOOL_NUMERICS_FAST;
  avgpool_backward(&ap, abs_g.data(), abs_sum.data(), nullptr);
  const int64_t sh = p.stride_h ? p.stride_h : p.kernel_h, sw = p.stride_w ? p.stride_w : p.kernel_w;
  const double terms = (double)std::min((p.kernel_h + sh - 1) / sh, dims[2]) *
                       (double)std::min((p.kernel_w + sw - 1) / sw, dims[3]);
  for (int64_t i = 0; i < src_n; ++i) {
    const double gv = load_double(p.dtype, got, i), rv = load_double(p.dtype, ref, i);
    if (isnan(rv) || isinf(rv) || isnan(gv) || isinf(gv)) {
      if (!(isnan(rv) && isnan(gv)) && gv != rv) note(i, gv, rv, 0);
      continue;
    }
    const double bound =
        ulp_of(p.dtype, rv) + (terms + 2) * 0x1.0p-24 * load_double(p.dtype, abs_sum.data(), i) * 1.01;  // 1.01: abs_sum is rounded to the dtype
    if (!(fabs(gv - rv) <= bound)) note(i, gv, rv, bound);
  }
  return m;
}

}  // namespace avgpool_support

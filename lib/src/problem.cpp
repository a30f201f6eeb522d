// Validation and the problem object: the only place that turns parameters
// into output sizes and windows.
#include "problem.h"

#include <string.h>

#include <new>

#include "error.h"

namespace avgpool {

namespace {

// Every size, kernel, stride and padding is at most this, so that sums like
// h + 2 * padding - kernel + stride cannot overflow int64.
constexpr int64_t kMaxDim = INT64_MAX / 8;

avgpool_status check_range(const char* name, int64_t value, int64_t minimum) {
  if (value < minimum)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%lld) must be at least %lld", name,
                     (long long)value, (long long)minimum);
  if (value > kMaxDim)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%lld) is too large (at most %lld)",
                     name, (long long)value, (long long)kMaxDim);
  return AVGPOOL_SUCCESS;
}

avgpool_status check_flag(const char* name, int32_t value) {
  if (value == 0 || value == 1) return AVGPOOL_SUCCESS;
  return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%d) must be 0 or 1", name, (int)value);
}

// a * b * c * d * e without int64 overflow, or false.
bool checked_product(int64_t* out, std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p)) return false;
  *out = p;
  return true;
}

// The integer stored in an enum field, read without loading the enum type.
template <class E>
int64_t raw_enum(const E& field) {
  int v;  // C enums are int-sized; keep the sign for the message
  static_assert(sizeof v == sizeof field, "enum layout");
  memcpy(&v, &field, sizeof v);
  return (int64_t)v;
}

}  // namespace

int64_t dtype_size(avgpool_dtype dtype) {
  switch (dtype) {
    case AVGPOOL_DTYPE_F32: return 4;
    case AVGPOOL_DTYPE_F16: return 2;
    case AVGPOOL_DTYPE_BF16: return 2;
    case AVGPOOL_DTYPE_F64: return 8;
  }
  return 0;
}

namespace {

const char* const kDtypeNames[] = {"f32", "f16", "bf16", "f64"};
const char* const kLayoutNames[] = {"nchw", "nhwc"};
const char* const kBackendNames[] = {"auto", "reference", "cpu", "cuda"};
const char* const kNumericsNames[] = {"fast", "pytorch"};

// The name of a C enum value (its values run 0, 1, ...), "?" outside.
template <size_t N> const char* enum_name(int value, const char* const (&names)[N]) {
  return value >= 0 && value < (int)N ? names[value] : "?";
}

}  // namespace

const char* dtype_name(avgpool_dtype dtype) { return enum_name(dtype, kDtypeNames); }
const char* layout_name(avgpool_layout layout) { return enum_name(layout, kLayoutNames); }
const char* backend_name(avgpool_backend backend) { return enum_name(backend, kBackendNames); }
const char* numerics_name(avgpool_numerics numerics) { return enum_name(numerics, kNumericsNames); }

}  // namespace avgpool

// A C caller may pass any int: each name function reads its argument as one
// (loading a value outside the enum as the C++ enum type is undefined).
#define AVGPOOL_ENUM_NAME(type, table)                                          \
  extern "C" AVGPOOL_API const char* avgpool_##type##_name(avgpool_##type value) { \
    int v;                                                                      \
    memcpy(&v, &value, sizeof v);                                               \
    return avgpool::enum_name(v, avgpool::table);                               \
  }
AVGPOOL_ENUM_NAME(dtype, kDtypeNames)
AVGPOOL_ENUM_NAME(layout, kLayoutNames)
AVGPOOL_ENUM_NAME(backend, kBackendNames)
AVGPOOL_ENUM_NAME(numerics, kNumericsNames)
#undef AVGPOOL_ENUM_NAME

namespace avgpool {

avgpool_status make_problem(const avgpool_params* p, Problem* out) {
  if (p == nullptr) return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "params is NULL");
  if (p->struct_size != sizeof(avgpool_params))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "params->struct_size (%zu) is not sizeof(avgpool_params) (%zu): "
                     "fill the struct with avgpool_params_init",
                     p->struct_size, sizeof(avgpool_params));

  // Enums first: their values decide how the rest is read. A C caller may
  // store any int in an enum field; loading such a value as the C++ enum
  // type is undefined behaviour (UBSan's -fsanitize=enum reports it), so the
  // fields are read as their underlying integers.
  const int64_t dtype = raw_enum(p->dtype), layout = raw_enum(p->layout),
                backend = raw_enum(p->backend), numerics = raw_enum(p->numerics);
  const struct { const char* field; int64_t value, last; } enums[] = {
      {"dtype", dtype, AVGPOOL_DTYPE_F64},
      {"layout", layout, AVGPOOL_LAYOUT_NHWC},
      {"backend", backend, AVGPOOL_BACKEND_CUDA},
      {"numerics", numerics, AVGPOOL_NUMERICS_PYTORCH},
  };
  for (const auto& e : enums)
    if (e.value < 0 || e.value > e.last)
      return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "%s (%lld) is not an avgpool_%s", e.field,
                       (long long)e.value, e.field);

  avgpool_status s;
  if ((s = check_range("n", p->n, 0)) || (s = check_range("c", p->c, 1)) ||
      (s = check_range("h", p->h, 1)) || (s = check_range("w", p->w, 1)) ||
      (s = check_range("kernel_h", p->kernel_h, 1)) ||
      (s = check_range("kernel_w", p->kernel_w, 1)))
    return s;

  // Both strides 0 is PyTorch's default (stride = kernel); one zero stride
  // is a mistake, and PyTorch rejects it too.
  int64_t sh = p->stride_h, sw = p->stride_w;
  if (sh == 0 && sw == 0) {
    sh = p->kernel_h;
    sw = p->kernel_w;
  } else if (sh == 0 || sw == 0 || sh < 0 || sw < 0 || sh > kMaxDim || sw > kMaxDim) {
    const bool h_bad = sh <= 0 || sh > kMaxDim;
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "%s (%lld) must be at least 1 and at most %lld "
                     "(set both strides to 0 for stride = kernel)",
                     h_bad ? "stride_h" : "stride_w", (long long)(h_bad ? sh : sw),
                     (long long)kMaxDim);
  }

  if ((s = check_range("padding_h", p->padding_h, 0)) ||
      (s = check_range("padding_w", p->padding_w, 0)))
    return s;
  if (p->padding_h > p->kernel_h / 2)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "padding_h (%lld) must be at most kernel_h / 2 (%lld)",
                     (long long)p->padding_h, (long long)(p->kernel_h / 2));
  if (p->padding_w > p->kernel_w / 2)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "padding_w (%lld) must be at most kernel_w / 2 (%lld)",
                     (long long)p->padding_w, (long long)(p->kernel_w / 2));
  if ((s = check_flag("ceil_mode", p->ceil_mode)) ||
      (s = check_flag("count_include_pad", p->count_include_pad)))
    return s;
  if (p->divisor_override < 0)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "divisor_override (%lld) must be 0 (none) or positive",
                     (long long)p->divisor_override);

  // Output size by PyTorch's rule; like PyTorch, refuse an empty output
  // (in ceil mode a kernel larger than the padded input can still give 1).
  const bool ceil_mode = p->ceil_mode != 0;
  const int64_t oh = pooled_size(p->h, p->kernel_h, sh, p->padding_h, ceil_mode);
  const int64_t ow = pooled_size(p->w, p->kernel_w, sw, p->padding_w, ceil_mode);
  if (oh < 1)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "output height (%lld) is less than 1: kernel_h (%lld) does not fit "
                     "h + 2 * padding_h (%lld)",
                     (long long)oh, (long long)p->kernel_h, (long long)(p->h + 2 * p->padding_h));
  if (ow < 1)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "output width (%lld) is less than 1: kernel_w (%lld) does not fit "
                     "w + 2 * padding_w (%lld)",
                     (long long)ow, (long long)p->kernel_w, (long long)(p->w + 2 * p->padding_w));

  const int64_t esize = dtype_size(p->dtype);
  int64_t src_elements, dst_elements, bytes;
  // One sample must fit too: with a batch of 0 the products below are 0,
  // but implementations size their work from a batch of 1.
  if (!checked_product(&bytes, {p->c, p->h, p->w, esize}))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "input size of one sample c*h*w*%lld bytes (%lld*%lld*%lld) overflows int64",
                     (long long)esize, (long long)p->c, (long long)p->h, (long long)p->w);
  if (!checked_product(&bytes, {p->c, oh, ow, esize}))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "output size of one sample c*oh*ow*%lld bytes (%lld*%lld*%lld) overflows int64",
                     (long long)esize, (long long)p->c, (long long)oh, (long long)ow);
  if (!checked_product(&src_elements, {p->n, p->c, p->h, p->w}) ||
      !checked_product(&bytes, {src_elements, esize}))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "input size n*c*h*w*%lld bytes (%lld*%lld*%lld*%lld) overflows int64",
                     (long long)esize, (long long)p->n, (long long)p->c, (long long)p->h,
                     (long long)p->w);
  if (!checked_product(&dst_elements, {p->n, p->c, oh, ow}) ||
      !checked_product(&bytes, {dst_elements, esize}))
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "output size n*c*oh*ow*%lld bytes (%lld*%lld*%lld*%lld) overflows int64",
                     (long long)esize, (long long)p->n, (long long)p->c, (long long)oh,
                     (long long)ow);

  Problem q;
  q.n = p->n; q.c = p->c; q.h = p->h; q.w = p->w;
  q.kh = p->kernel_h; q.kw = p->kernel_w; q.sh = sh; q.sw = sw;
  q.ph = p->padding_h; q.pw = p->padding_w;
  q.ceil_mode = ceil_mode;
  q.count_include_pad = p->count_include_pad != 0;
  q.divisor_override = p->divisor_override;
  q.dtype = p->dtype; q.layout = p->layout; q.backend = p->backend; q.numerics = p->numerics;
  q.oh = oh; q.ow = ow;
  q.src_elements = src_elements; q.dst_elements = dst_elements;
  q.element_size = esize;
  try {
    q.rows.resize(oh);
    q.cols.resize(ow);
  } catch (const std::bad_alloc&) {
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the window tables (%lld + %lld)",
                     (long long)oh, (long long)ow);
  }
  for (int64_t y = 0; y < oh; ++y) q.rows[y] = q.row_window(y);
  for (int64_t x = 0; x < ow; ++x) q.cols[x] = q.col_window(x);
  *out = std::move(q);
  return AVGPOOL_SUCCESS;
}

}  // namespace avgpool

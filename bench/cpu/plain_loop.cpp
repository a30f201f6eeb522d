#include "plain_loop.h"

#include <string.h>

#include <algorithm>
#include <vector>

namespace avgpool_bench {
namespace {

// Element conversions: f16 through the compiler's _Float16, bf16 by its bits
// (round to nearest even; no NaN inputs here).
struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};

inline float to_acc(float v) { return v; }
inline double to_acc(double v) { return v; }
inline float to_acc(F16 v) {
  _Float16 h;
  memcpy(&h, &v.bits, 2);
  return (float)h;
}
inline float to_acc(BF16 v) {
  const uint32_t u = (uint32_t)v.bits << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
template <class T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <class T> T store(typename Acc<T>::type v);
template <> float store<float>(float v) { return v; }
template <> double store<double>(double v) { return v; }
template <> F16 store<F16>(float v) {
  const _Float16 h = (_Float16)v;
  F16 r;
  memcpy(&r.bits, &h, 2);
  return r;
}
template <> BF16 store<BF16>(float v) {
  uint32_t u;
  memcpy(&u, &v, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return BF16{(uint16_t)(u >> 16)};
}

// One window's bounds and divisor, by PyTorch's rules.
struct Window {
  int64_t y0, y1, x0, x1, divisor;
};

inline Window window(const avgpool_params& p, int64_t oy, int64_t ox) {
  int64_t y0 = oy * p.stride_h - p.padding_h, x0 = ox * p.stride_w - p.padding_w;
  int64_t y1 = std::min(y0 + p.kernel_h, p.h + p.padding_h), x1 = std::min(x0 + p.kernel_w, p.w + p.padding_w);
  const int64_t pool = (y1 - y0) * (x1 - x0);
  y0 = std::max<int64_t>(y0, 0); x0 = std::max<int64_t>(x0, 0);
  y1 = std::min(y1, p.h); x1 = std::min(x1, p.w);
  const int64_t d = p.divisor_override ? p.divisor_override : p.count_include_pad ? pool : (y1 - y0) * (x1 - x0);
  return {y0, y1, x0, x1, d};
}

template <class T>
void loop_nchw(const avgpool_params& p, int64_t oh, int64_t ow, const T* x, T* y) {
  typedef typename Acc<T>::type A;
  const int64_t planes = p.n * p.c;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        const Window win = window(p, oy, ox);
        A sum = 0;
        for (int64_t yy = win.y0; yy < win.y1; ++yy)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) sum += to_acc(x[(pl * p.h + yy) * p.w + xx]);
        y[(pl * oh + oy) * ow + ox] = store<T>(sum / (A)win.divisor);
      }
}

template <class T>
void loop_nhwc(const avgpool_params& p, int64_t oh, int64_t ow, const T* x, T* y) {
  typedef typename Acc<T>::type A;
  const int64_t c = p.c;
#pragma omp parallel
  {
    std::vector<A> sum((size_t)c);
#pragma omp for collapse(3) schedule(static)
    for (int64_t n = 0; n < p.n; ++n)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const Window win = window(p, oy, ox);
          std::fill(sum.begin(), sum.end(), A(0));
          for (int64_t yy = win.y0; yy < win.y1; ++yy)
            for (int64_t xx = win.x0; xx < win.x1; ++xx) {
              const T* px = x + ((n * p.h + yy) * p.w + xx) * c;
              for (int64_t ch = 0; ch < c; ++ch) sum[ch] += to_acc(px[ch]);
            }
          T* py = y + ((n * oh + oy) * ow + ox) * c;
          for (int64_t ch = 0; ch < c; ++ch) py[ch] = store<T>(sum[ch] / (A)win.divisor);
        }
  }
}

template <class T>
void loop(const avgpool_params& p, int64_t oh, int64_t ow, const void* x, void* y) {
  if (p.layout == AVGPOOL_LAYOUT_NHWC)
    loop_nhwc(p, oh, ow, static_cast<const T*>(x), static_cast<T*>(y));
  else
    loop_nchw(p, oh, ow, static_cast<const T*>(x), static_cast<T*>(y));
}

}  // namespace

void plain_loop(const avgpool_params& p, int64_t oh, int64_t ow, const void* x, void* y) {
  switch (p.dtype) {
    case AVGPOOL_DTYPE_F32: return loop<float>(p, oh, ow, x, y);
    case AVGPOOL_DTYPE_F64: return loop<double>(p, oh, ow, x, y);
    case AVGPOOL_DTYPE_F16: return loop<F16>(p, oh, ow, x, y);
    case AVGPOOL_DTYPE_BF16: return loop<BF16>(p, oh, ow, x, y);
  }
}

}  // namespace avgpool_bench

// The byte format the fuzzer decodes (and make_seeds writes): a 23-byte
// header of plan parameters, then tensor data. Every byte string decodes to
// something: sizes are masked into small ranges (zero and "too big for the
// kernel" included, so invalid plans come naturally), and one field can be
// overwritten with a raw int64 (negative, huge, unknown enum values).
//
//   0 n & 3          1 c & 15         2-3 h (LE) & 511   4-5 w (LE) & 511
//   6 kernel_h & 31  7 kernel_w & 31  8 stride_h & 15    9 stride_w & 15
//  10 padding_h & 15 11 padding_w & 15 12 divisor_override (int8)
//  13 flags: bit0 ceil_mode, bit1 count_include_pad, bit2 numerics,
//            bit3 layout, bits4-5 dtype, bit6 data mode (0: one byte per
//            element, 1: raw float32 per element)
//  14 corrupt: (byte % 32) in 1..18 picks a field overwritten by bytes 15-22
//  15-22 raw int64 (LE)
//  23... data, repeated cyclically to fill the input tensor (zeros if empty)
//
// Data values stay small (|x| <= 64) so that no sum overflows f16 and the
// float32 comparison bound applies; specials (NaN, +Inf, -Inf) have codes.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "avgpool/avgpool.h"

namespace avgpool_fuzz {

constexpr size_t kHeaderBytes = 23;

enum Field {
  kNone = 0, kN, kC, kH, kW, kKernelH, kKernelW, kStrideH, kStrideW, kPaddingH, kPaddingW,
  kDivisor, kCeil, kIncludePad, kDtype, kLayout, kBackend, kNumerics, kStructSize, kFieldCount
};

inline const char* field_name(int f) {
  static const char* names[] = {"none", "n", "c", "h", "w", "kernel_h", "kernel_w", "stride_h",
                                "stride_w", "padding_h", "padding_w", "divisor_override",
                                "ceil_mode", "count_include_pad", "dtype", "layout", "backend",
                                "numerics", "struct_size"};
  return f >= 0 && f < kFieldCount ? names[f] : "?";
}

struct Decoded {
  avgpool_params params;
  int corrupted = kNone;
  bool raw_floats = false;
  const uint8_t* data = nullptr;
  size_t data_size = 0;
};

// Stores any int in an enum field without converting it to the enum type
// (a value outside the enum would be undefined behaviour in C++).
template <class E>
void set_enum(E* field, int64_t raw) {
  const int v = (int)raw;
  static_assert(sizeof v == sizeof *field, "enum layout");
  memcpy(field, &v, sizeof v);
}

inline Decoded decode(const uint8_t* bytes, size_t size) {
  uint8_t h[kHeaderBytes] = {0};
  memcpy(h, bytes, size < kHeaderBytes ? size : kHeaderBytes);
  Decoded d;
  avgpool_params& p = d.params;
  avgpool_params_init(&p);
  p.n = h[0] & 3;
  p.c = h[1] & 15;
  p.h = (h[2] | h[3] << 8) & 511;
  p.w = (h[4] | h[5] << 8) & 511;
  p.kernel_h = h[6] & 31;
  p.kernel_w = h[7] & 31;
  p.stride_h = h[8] & 15;
  p.stride_w = h[9] & 15;
  p.padding_h = h[10] & 15;
  p.padding_w = h[11] & 15;
  p.divisor_override = (int8_t)h[12];
  p.ceil_mode = h[13] & 1;
  p.count_include_pad = (h[13] >> 1) & 1;
  p.numerics = (avgpool_numerics)((h[13] >> 2) & 1);
  p.layout = (avgpool_layout)((h[13] >> 3) & 1);
  p.dtype = (avgpool_dtype)((h[13] >> 4) & 3);
  d.raw_floats = (h[13] >> 6) & 1;
  p.backend = AVGPOOL_BACKEND_REFERENCE;
  const int sel = h[14] % 32;
  int64_t raw = 0;
  memcpy(&raw, h + 15, 8);
  if (sel > kNone && sel < kFieldCount) {
    d.corrupted = sel;
    switch (sel) {
      case kN: p.n = raw; break;
      case kC: p.c = raw; break;
      case kH: p.h = raw; break;
      case kW: p.w = raw; break;
      case kKernelH: p.kernel_h = raw; break;
      case kKernelW: p.kernel_w = raw; break;
      case kStrideH: p.stride_h = raw; break;
      case kStrideW: p.stride_w = raw; break;
      case kPaddingH: p.padding_h = raw; break;
      case kPaddingW: p.padding_w = raw; break;
      case kDivisor: p.divisor_override = raw; break;
      case kCeil: p.ceil_mode = (int32_t)raw; break;
      case kIncludePad: p.count_include_pad = (int32_t)raw; break;
      case kDtype: set_enum(&p.dtype, raw); break;
      case kLayout: set_enum(&p.layout, raw); break;
      case kBackend: set_enum(&p.backend, raw); break;
      case kNumerics: set_enum(&p.numerics, raw); break;
      case kStructSize: p.struct_size = (size_t)raw; break;
    }
  }
  if (size > kHeaderBytes) {
    d.data = bytes + kHeaderBytes;
    d.data_size = size - kHeaderBytes;
  }
  return d;
}

// Element i of the input tensor (in its dense order), as a double.
inline double value_at(const Decoded& d, int64_t i) {
  if (d.data_size == 0) return 0.0;
  if (!d.raw_floats) {
    const uint8_t b = d.data[(size_t)i % d.data_size];
    if (b == 0xFF) return NAN;
    if (b == 0xFE) return INFINITY;
    if (b == 0xFD) return -INFINITY;
    return (int8_t)b / 4.0;  // [-32, 31.75] in quarters: exact in every dtype
  }
  const size_t count = d.data_size / 4;
  if (count == 0) return 0.0;
  float f;
  memcpy(&f, d.data + ((size_t)i % count) * 4, 4);
  if (isfinite(f) && fabsf(f) > 64.0f) f = copysignf(64.0f, f);
  return f;
}

// The header for parameters that fit the masks (the seed writer's side).
inline std::vector<uint8_t> encode_header(const avgpool_params& p, bool raw_floats, int corrupt,
                                          int64_t raw) {
  std::vector<uint8_t> h(kHeaderBytes, 0);
  h[0] = (uint8_t)p.n; h[1] = (uint8_t)p.c;
  h[2] = (uint8_t)(p.h & 255); h[3] = (uint8_t)(p.h >> 8);
  h[4] = (uint8_t)(p.w & 255); h[5] = (uint8_t)(p.w >> 8);
  h[6] = (uint8_t)p.kernel_h; h[7] = (uint8_t)p.kernel_w;
  h[8] = (uint8_t)p.stride_h; h[9] = (uint8_t)p.stride_w;
  h[10] = (uint8_t)p.padding_h; h[11] = (uint8_t)p.padding_w;
  h[12] = (uint8_t)(int8_t)p.divisor_override;
  h[13] = (uint8_t)((p.ceil_mode & 1) | (p.count_include_pad & 1) << 1 | (p.numerics & 1) << 2 |
                    (p.layout & 1) << 3 | (p.dtype & 3) << 4 | (raw_floats ? 1 : 0) << 6);
  h[14] = (uint8_t)corrupt;
  memcpy(h.data() + 15, &raw, 8);
  return h;
}

// True if p fits the masks of the format exactly (so it round-trips).
inline bool encodable(const avgpool_params& p) {
  return p.n >= 0 && p.n <= 3 && p.c >= 0 && p.c <= 15 && p.h >= 0 && p.h <= 511 && p.w >= 0 &&
         p.w <= 511 && p.kernel_h >= 0 && p.kernel_h <= 31 && p.kernel_w >= 0 && p.kernel_w <= 31 &&
         p.stride_h >= 0 && p.stride_h <= 15 && p.stride_w >= 0 && p.stride_w <= 15 &&
         p.padding_h >= 0 && p.padding_h <= 15 && p.padding_w >= 0 && p.padding_w <= 15 &&
         p.divisor_override >= -128 && p.divisor_override <= 127;
}

}  // namespace avgpool_fuzz

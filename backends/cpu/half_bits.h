// IEEE binary16 and bfloat16 <-> float, round to nearest even (as Eigen's
// half types and PyTorch's c10::Half / c10::BFloat16 convert). Included by
// the per-ISA kernel files inside their own namespace, after <immintrin.h>
// and <string.h>, so that each instruction set gets its own copy (see
// cpu_job.h): no includes here.

inline float half_bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
inline uint32_t half_float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

inline float f16_to_float(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = (float)mant * 0x1p-24f;  // zero or subnormal: exact
    return sign ? -v : v;
  }
  if (exp == 31) return half_bits_float(sign | 0x7f800000u | (mant << 13));
  return half_bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
#endif
}

inline uint16_t float_to_f16(float f) {
#if defined(__F16C__)
  return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
#else
  uint32_t u = half_float_bits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x7f800000u) return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (u >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);  // rounds to infinity
  if (u < 0x38800000u) {                                     // subnormal half or zero
    const float v = half_bits_float(u) + 0.5f;
    return (uint16_t)(sign | (half_float_bits(v) - 0x3f000000u));
  }
  const uint32_t odd = (u >> 13) & 1u;
  u += 0xc8000fffu + odd;  // rebias the exponent, round to nearest even
  return (uint16_t)(sign | (u >> 13));
#endif
}

inline float bf16_to_float(uint16_t b) { return half_bits_float((uint32_t)b << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = half_float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);  // quiet NaN
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

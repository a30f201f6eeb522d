// The OpenMP CPU backend against PyTorch's goldens and the reference: every
// CPU implementation, every dtype, layout and numerics, guard bands around
// the output, determinism across runs and thread counts.
#include <doctest/doctest.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif
#if defined(__unix__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "check.h"
#include "cpu_helpers.h"
#include "golden_file.h"
#include "golden_cases.h"
#include "tensor_util.h"

using namespace avgpool_support;
using namespace cpu_test;

namespace {

// A configuration written as one line of a shape table.
struct Shape {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int ceil;
  avgpool_params params() const { return shape_params(n, c, h, w, kh, kw, sh, sw, ph, pw, ceil); }
};

// p on the CPU backend in every dtype and numerics, on an input of -0 with
// a seventh of its elements NaN, infinities, signed zeros or 1.5: every CPU
// implementation against the reference (a window of -0 sums to +0 from 0).
void check_special_values(const avgpool_params& p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int dtype = 0; dtype < 4; ++dtype)
    for (int numerics = 0; numerics < 2; ++numerics) {
      avgpool_params q = p;
      q.backend = AVGPOOL_BACKEND_CPU;
      q.dtype = (avgpool_dtype)dtype;
      q.numerics = (avgpool_numerics)numerics;
      const int64_t ns = src_count(q);
      std::vector<unsigned char> src((size_t)(ns * element_size(q.dtype)));
      const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.5};
      for (int64_t i = 0; i < ns; ++i) store_double(q.dtype, src.data(), i, -0.0);
      for (int64_t i = 0; i < ns / 7; ++i)
        store_double(q.dtype, src.data(), (int64_t)(rng() % (uint64_t)ns), specials[rng() % 6]);
      CHECK(check_all_impls(q, src.data()) >= 1);
    }
}

// p on the CPU backend in dtype and numerics: the base and AVX2
// instruction sets give the bits of the machine's own.
void check_same_bits_every_isa(const avgpool_params& p, avgpool_dtype dtype, avgpool_numerics numerics) {
  avgpool_params q = p;
  q.backend = AVGPOOL_BACKEND_CPU;
  q.dtype = dtype;
  q.numerics = numerics;
  const int64_t ns = src_count(q), nd = dst_count(q), es = element_size(dtype);
  std::vector<unsigned char> src((size_t)(ns * es)), a((size_t)(nd * es)), b((size_t)(nd * es));
  fill_random(q.dtype, src.data(), ns, 3, -5.0, 5.0);
  REQUIRE(avgpool_forward(&q, src.data(), a.data(), nullptr) == AVGPOOL_SUCCESS);
  for (const char* isa : {"base", "avx2"}) {
    setenv("AVGPOOL_CPU_ISA", isa, 1);
    REQUIRE(avgpool_forward(&q, src.data(), b.data(), nullptr) == AVGPOOL_SUCCESS);
    unsetenv("AVGPOOL_CPU_ISA");
    CHECK_MESSAGE(memcmp(a.data(), b.data(), a.size()) == 0, isa << ": " << describe(q));
  }
}


// p on the CPU backend in dtype: fast numerics give pytorch numerics' bits
// on one random input (from seed).
void check_fast_bits_are_pytorch(const avgpool_params& p, avgpool_dtype dtype, uint64_t seed) {
  avgpool_params q = p;
  q.backend = AVGPOOL_BACKEND_CPU;
  q.dtype = dtype;
  const int64_t ns = src_count(q), nd = dst_count(q), es = element_size(dtype);
  std::vector<unsigned char> src((size_t)(ns * es)), fast((size_t)(nd * es)), exact((size_t)(nd * es));
  fill_random(q.dtype, src.data(), ns, seed, -5.0, 5.0);
  q.numerics = AVGPOOL_NUMERICS_FAST;
  REQUIRE(avgpool_forward(&q, src.data(), fast.data(), nullptr) == AVGPOOL_SUCCESS);
  q.numerics = AVGPOOL_NUMERICS_PYTORCH;
  REQUIRE(avgpool_forward(&q, src.data(), exact.data(), nullptr) == AVGPOOL_SUCCESS);
  CHECK_MESSAGE(memcmp(fast.data(), exact.data(), fast.size()) == 0, describe(q));
}

// s on the CPU backend, required to give rows of lo to hi outputs (the
// shapes of a test case are chosen for the path such rows take).
avgpool_params cpu_params_with_row(const Shape& s, int64_t lo, int64_t hi) {
  avgpool_params p = s.params();
  p.backend = AVGPOOL_BACKEND_CPU;
  avgpool_plan* plan = nullptr;
  REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
  int64_t dims[4];
  avgpool_plan_output_dims(plan, dims);
  avgpool_plan_destroy(plan);
  REQUIRE_MESSAGE((dims[3] >= lo && dims[3] <= hi), describe(p));
  return p;
}

// p in NHWC against the reference in every variant (check_variants, from
// seed), with divisor_override `divisor`, with special values, and the same
// bits on every instruction set in each of dtypes and both numerics.
void check_nhwc_pixels(avgpool_params p, uint64_t seed, int64_t divisor, std::initializer_list<avgpool_dtype> dtypes) {
  p.layout = AVGPOOL_LAYOUT_NHWC;
  check_variants(p, {AVGPOOL_LAYOUT_NHWC}, seed);
  avgpool_params d = p;
  d.divisor_override = divisor;
  check_variants(d, {AVGPOOL_LAYOUT_NHWC}, seed + 4);
  check_special_values(p, seed + 6);
  for (avgpool_dtype dtype : dtypes)
    for (int numerics = 0; numerics < 2; ++numerics)
      check_same_bits_every_isa(p, dtype, (avgpool_numerics)numerics);
}

std::vector<int64_t> channel_range(int64_t first, int64_t last) {
  std::vector<int64_t> r;
  for (int64_t c = first; c <= last; ++c) r.push_back(c);
  return r;
}

// check_nhwc_pixels on each of shapes with each channel count in channels
// (seed + c for c channels).
template <size_t S>
void check_nhwc_channels(const Shape (&shapes)[S], const std::vector<int64_t>& channels, uint64_t seed,
                         int64_t divisor, std::initializer_list<avgpool_dtype> dtypes) {
  for (int64_t c : channels)
    for (Shape s : shapes) {
      s.c = c;
      check_nhwc_pixels(s.params(), seed + (uint64_t)c, divisor, dtypes);
    }
}

// check_fast_bits_are_pytorch in NHWC on each of shapes with each channel
// count in channels (seed + c for c channels).
template <size_t S>
void check_nhwc_fast_bits_are_pytorch(const Shape (&shapes)[S], const std::vector<int64_t>& channels,
                                      avgpool_dtype dtype, uint64_t seed) {
  for (int64_t c : channels)
    for (Shape s : shapes) {
      s.c = c;
      avgpool_params q = s.params();
      q.layout = AVGPOOL_LAYOUT_NHWC;
      check_fast_bits_are_pytorch(q, dtype, seed + (uint64_t)c);
    }
}

// p in NCHW against the reference in every variant (from seed), with a
// divisor override, with special values, and the same bits on every
// instruction set in each of dtypes and numerics.
void check_nchw_rows(const avgpool_params& p, uint64_t seed, std::initializer_list<avgpool_dtype> dtypes,
                     std::initializer_list<avgpool_numerics> numerics) {
  check_variants(p, {AVGPOOL_LAYOUT_NCHW}, seed);
  avgpool_params q = p;
  q.divisor_override = 5;
  check_variants(q, {AVGPOOL_LAYOUT_NCHW}, seed + 6);
  check_special_values(p, seed + 12);
  for (avgpool_dtype dtype : dtypes)
    for (avgpool_numerics num : numerics) check_same_bits_every_isa(p, dtype, num);
}
void check_nchw_f64_rows(const avgpool_params& p, uint64_t seed) {
  check_nchw_rows(p, seed, {AVGPOOL_DTYPE_F64}, {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH});
}
}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("cpu backend lists its implementation and picks it for every layout") {
  const auto names = cpu_impl_names();
  REQUIRE(names.size() == 1);
  CHECK(names[0] == "cpu:simd");
  avgpool_params p;
  avgpool_params_init(&p);
  p.backend = AVGPOOL_BACKEND_CPU;
  p.n = 2; p.c = 3; p.h = 9; p.w = 10; p.kernel_h = p.kernel_w = 3;
  for (int layout = 0; layout < 2; ++layout)
    for (int stride = 1; stride <= 3; stride += 2) {
      p.layout = (avgpool_layout)layout;
      p.stride_h = p.stride_w = stride;
      avgpool_plan* plan = nullptr;
      REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
      const char* name = nullptr;
      avgpool_plan_impl_name(plan, &name);
      CHECK(std::string(name) == "cpu:simd");
      avgpool_plan_destroy(plan);
      CHECK(avgpool_impl_accepts("cpu:simd", &p) == AVGPOOL_SUCCESS);
    }
}

TEST_CASE("every golden case on every CPU implementation: pytorch bitwise, fast within bound") {
  for (const std::string& impl : cpu_impl_names()) {
    int ran = 0;
    for (const GoldenCase& gc : golden().cases) {
      CAPTURE(impl);
      CAPTURE(gc.name);
      // pytorch numerics: bitwise PyTorch's float32 output
      avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_CPU, AVGPOOL_NUMERICS_PYTORCH);
      for (int layout = 0; layout < 2; ++layout) {
        p.layout = (avgpool_layout)layout;
        p.numerics = AVGPOOL_NUMERICS_PYTORCH;
        const int64_t in_dims[4] = {gc.n, gc.c, gc.h, gc.w};
        const std::vector<unsigned char> src = to_tensor(gc.in, in_dims, p.dtype, p.layout);
        Guarded got(AVGPOOL_DTYPE_F32, (int64_t)gc.out32.size());
        if (!run_impl(impl, p, src.data(), &got)) continue;
        ++ran;
        const float* g = static_cast<const float*>(got.data());
        int mismatches = 0;
        for (int64_t n = 0; n < gc.out_dims[0]; ++n)
          for (int64_t c = 0; c < gc.out_dims[1]; ++c)
            for (int64_t y = 0; y < gc.out_dims[2]; ++y)
              for (int64_t x = 0; x < gc.out_dims[3]; ++x) {
                const int64_t i = ((n * gc.out_dims[1] + c) * gc.out_dims[2] + y) * gc.out_dims[3] + x;
                const int64_t o = layout == 0 ? i
                    : ((n * gc.out_dims[2] + y) * gc.out_dims[3] + x) * gc.out_dims[1] + c;
                const float want = gc.out32[(size_t)i];
                if (memcmp(&g[o], &want, 4) != 0 && !(isnan(g[o]) && isnan(want))) ++mismatches;
              }
        CHECK(mismatches == 0);
        CHECK(got.guards_intact());
        // fast numerics: within the float32 bound of the reference
        p.numerics = AVGPOOL_NUMERICS_FAST;
        check_all_impls(p, src.data());
      }
    }
    CHECK_MESSAGE(ran > 0, impl << " accepted no golden case");
  }
}

TEST_CASE("random configurations: every dtype, layout and numerics against the reference") {
  CHECK(check_random_problems(cpu_impl_names(), 20261129, 400, false) >= 400);
}

TEST_CASE("wide rows, big kernels and many channels (several column blocks)") {
  // Shapes that split rows into several column blocks, large channel counts
  // (NHWC vector tails), kernels outside the compile-time set.
  const Shape shapes[] = {
      {1, 2, 13, 5000, 3, 3, 1, 1, 1, 1, 0},   {1, 1, 23, 9000, 11, 11, 11, 11, 0, 0, 1},
      {2, 70, 9, 75, 3, 5, 2, 4, 1, 2, 1},     {1, 300, 5, 40, 2, 2, 2, 2, 0, 0, 0},
      {1, 3, 40, 300, 13, 6, 3, 5, 6, 3, 1},   {2, 17, 12, 12, 12, 12, 12, 12, 0, 0, 0},
      {1, 1, 7, 4099, 1, 9, 1, 9, 0, 4, 1},    {3, 64, 7, 7, 7, 7, 7, 7, 0, 0, 0},
      {2, 3, 30, 301, 3, 3, 2, 2, 1, 1, 1},    {1, 2, 8, 999, 2, 2, 2, 2, 0, 0, 0},
      {1, 1, 20, 200, 3, 16, 1, 1, 1, 8, 0},   {1, 2, 9, 77, 5, 17, 1, 1, 2, 8, 1},
      {40, 3, 5, 6, 5, 6, 5, 6, 0, 0, 0},
      // f16/bf16 NHWC read and written with conversions in registers: odd
      // channel counts above a vector, windows with gaps between them
      {2, 127, 12, 17, 4, 4, 4, 4, 0, 0, 0},     {3, 144, 14, 9, 2, 2, 3, 4, 1, 1, 0},
      {2, 19, 10, 10, 1, 1, 2, 2, 0, 0, 1},
      // pytorch numerics' transposed windows below 16 columns: 9+ columns,
      // and 5+ that overlap along the row (interior runs of 16 outputs and
      // a partial one)
      {1, 2, 40, 400, 11, 11, 11, 11, 0, 0, 1},  {1, 2, 30, 330, 9, 9, 9, 9, 4, 4, 0},
      {1, 3, 20, 180, 5, 6, 2, 2, 2, 3, 1},      {1, 2, 25, 260, 7, 7, 3, 3, 3, 3, 0},
  };
  for (const Shape& s : shapes) check_variants(s.params(), {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}, 7);
}

TEST_CASE("NHWC stride-1 ring kernel (fast numerics, sw == 1, 4 <= kw <= 16)") {
  // nhwc_s1_sweep where channels are a multiple of a vector, the direct path
  // where not; borders, channel groups of 1 and 4 vectors, kw 16 and 17.
  struct RowShape { int64_t n, c, h, w, kh, kw, sh, ph, pw; int ceil; };
  const RowShape shapes[] = {
      {2, 64, 9, 70, 5, 5, 1, 2, 2, 0},   {1, 16, 7, 33, 3, 4, 2, 1, 2, 1},
      {1, 48, 6, 90, 2, 16, 1, 0, 8, 0},  {1, 32, 5, 40, 5, 17, 1, 2, 8, 1},
      {2, 272, 5, 12, 3, 5, 1, 1, 2, 0},  {1, 80, 4, 21, 4, 7, 3, 0, 3, 1},
      {1, 64, 3, 6, 3, 6, 1, 0, 0, 0},    {1, 20, 6, 30, 5, 5, 1, 2, 2, 0},
  };
  for (const RowShape& s : shapes)
    check_variants(shape_params(s.n, s.c, s.h, s.w, s.kh, s.kw, s.sh, 1, s.ph, s.pw, s.ceil), {AVGPOOL_LAYOUT_NHWC}, 11);
}

TEST_CASE("NHWC non-temporal outputs: 64-byte-aligned dst and not, same bits") {
  // f32/f64 NHWC outputs of 32 MiB or more, channels a multiple of a vector,
  // are written with non-temporal stores when dst is 64-byte aligned (checked
  // per call); one element further on, the same plan stores normally. Both
  // against the reference and bitwise equal. Ring kernel (fast, k5 s1), the
  // direct path (pytorch; k3 s2), channel groups of 4 vectors and of 1.
  struct NtShape { int64_t n, c, h, w, k, s, p; avgpool_dtype dtype; avgpool_numerics numerics; };
  const NtShape shapes[] = {
      {2, 80, 230, 230, 5, 1, 2, AVGPOOL_DTYPE_F32, AVGPOOL_NUMERICS_FAST},
      {1, 72, 350, 350, 3, 1, 1, AVGPOOL_DTYPE_F64, AVGPOOL_NUMERICS_PYTORCH},
      {8, 64, 260, 260, 3, 2, 1, AVGPOOL_DTYPE_F32, AVGPOOL_NUMERICS_FAST},
  };
  for (const NtShape& s : shapes) {
    avgpool_params p;
    avgpool_params_init(&p);
    p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w;
    p.kernel_h = p.kernel_w = s.k; p.stride_h = p.stride_w = s.s;
    p.padding_h = p.padding_w = s.p;
    p.dtype = s.dtype; p.layout = AVGPOOL_LAYOUT_NHWC; p.numerics = s.numerics;
    p.backend = AVGPOOL_BACKEND_CPU;
    CAPTURE(describe(p));
    const int64_t nd = dst_count(p), es = element_size(p.dtype);
    REQUIRE(nd * es >= (int64_t(32) << 20));
    std::vector<unsigned char> src((size_t)(src_count(p) * es));
    fill_random(p.dtype, src.data(), src_count(p), 13, -1.0, 1.0);
    std::vector<unsigned char> ref((size_t)(nd * es));
    REQUIRE(run_reference(p, src.data(), ref.data()) == AVGPOOL_SUCCESS);
    avgpool_plan* plan = nullptr;
    REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
    const size_t bytes = (size_t)((nd + 2 * 64) * es + 63) / 64 * 64;
    unsigned char* buf = static_cast<unsigned char*>(aligned_alloc(64, bytes));
    REQUIRE(buf != nullptr);
    std::vector<unsigned char> first;
    for (int64_t offset : {int64_t(64), int64_t(65)}) {  // elements: 64-byte aligned, then not
      poison(buf, (int64_t)bytes);
      unsigned char* dst = buf + offset * es;
      REQUIRE(avgpool_plan_execute(plan, src.data(), dst, nullptr) == AVGPOOL_SUCCESS);
      const Mismatch m = compare_to_reference(p, src.data(), dst, ref.data());
      CHECK_MESSAGE(m.count == 0, "offset " << offset << ": " << m.message());
      CHECK(is_poisoned(buf, offset * es));
      CHECK(is_poisoned(dst + nd * es, (int64_t)bytes - (offset + nd) * es));
      if (first.empty()) first.assign(dst, dst + nd * es);
      else CHECK(memcmp(first.data(), dst, (size_t)(nd * es)) == 0);
    }
    free(buf);
    avgpool_plan_destroy(plan);
  }
}

TEST_CASE("scratch: a plan needing more than a thread keeps, then small plans again") {
  // f16 converts every window row of a block: 1024 rows of 1024 columns is
  // 4 MiB of scratch per thread, more than a thread keeps between calls.
  for (int rep = 0; rep < 2; ++rep)
    for (int64_t k : {int64_t(1024), int64_t(3), int64_t(700), int64_t(2)}) {
      avgpool_params p;
      avgpool_params_init(&p);
      p.n = 1; p.c = 3; p.h = 1024; p.w = 1024;
      p.kernel_h = p.kernel_w = k;
      p.dtype = AVGPOOL_DTYPE_F16;
      p.numerics = rep == 0 ? AVGPOOL_NUMERICS_FAST : AVGPOOL_NUMERICS_PYTORCH;
      p.backend = AVGPOOL_BACKEND_CPU;
      std::vector<uint16_t> src((size_t)src_count(p));
      fill_random(AVGPOOL_DTYPE_F16, src.data(), src_count(p), 21, -1.0, 1.0);
      CHECK(check_all_impls(p, src.data()) == 1);
    }
}

TEST_CASE("kernels and strides far beyond the input (fuzzer reproducers)") {
  // fuzz/regressions/cpu-huge-kernel-oom: scratch was sized by kernel_h
  // (26 GB); cpu-stride-overflow-ubsan: stride * lanes overflowed int64.
  for (int layout = 0; layout < 2; ++layout)
    for (int numerics = 0; numerics < 2; ++numerics) {
      avgpool_params p;
      avgpool_params_init(&p);
      p.n = 1; p.c = 2; p.h = 17; p.w = 256;
      p.kernel_h = 3257993735; p.kernel_w = 2; p.padding_h = 1; p.ceil_mode = 1;
      p.layout = (avgpool_layout)layout; p.numerics = (avgpool_numerics)numerics;
      p.backend = AVGPOOL_BACKEND_CPU;
      std::vector<float> src((size_t)src_count(p));
      fill_random(AVGPOOL_DTYPE_F32, src.data(), src_count(p), 3, -1, 1);
      CHECK(check_all_impls(p, src.data()) >= 1);

      avgpool_params q;
      avgpool_params_init(&q);
      q.n = 1; q.c = 1; q.h = 8; q.w = 258;
      q.kernel_h = 5; q.kernel_w = 31; q.stride_h = 4; q.stride_w = 738396311438440857;
      q.ceil_mode = 1; q.divisor_override = 54; q.dtype = AVGPOOL_DTYPE_BF16;
      q.layout = (avgpool_layout)layout; q.numerics = (avgpool_numerics)numerics;
      q.backend = AVGPOOL_BACKEND_CPU;
      std::vector<uint16_t> src16((size_t)src_count(q));
      fill_random(AVGPOOL_DTYPE_BF16, src16.data(), src_count(q), 4, -1, 1);
      CHECK(check_all_impls(q, src16.data()) >= 1);
    }
}

TEST_CASE("special values: NaN, infinities and signed zeros propagate like the reference") {
  std::mt19937_64 rng(77);
  for (int iter = 0; iter < 60; ++iter) {
    avgpool_params p = random_params(rng);
    p.backend = AVGPOOL_BACKEND_CPU;
    const int64_t ns = src_count(p);
    std::vector<unsigned char> src((size_t)(ns * element_size(p.dtype)));
    fill_random(p.dtype, src.data(), ns, (uint64_t)iter, -1.0, 1.0);
    const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
    for (int k = 0; k < 4; ++k)
      store_double(p.dtype, src.data(), (int64_t)(rng() % (uint64_t)ns), specials[rng() % 5]);
    check_all_impls(p, src.data());
  }
}

TEST_CASE("small NCHW planes, 16 at a time: every dtype, numerics, partial groups, special values") {
  // Job::across: rows of fewer than 16 outputs (or 64 in some cases), 16
  // planes transposed side by side. Plane counts that leave a partial
  // group; windows with padding, ceil_mode, gaps and overlaps.
  const Shape shapes[] = {
      {3, 11, 16, 10, 3, 3, 3, 3, 0, 0, 1},  {8, 9, 14, 14, 11, 11, 6, 6, 0, 0, 0},
      {8, 5, 13, 8, 6, 9, 6, 2, 0, 3, 0},    {1, 40, 20, 20, 1, 1, 2, 2, 0, 0, 0},
      {2, 17, 7, 7, 2, 2, 2, 2, 0, 0, 1},    {1, 33, 30, 30, 5, 5, 1, 1, 2, 2, 0},
      {2, 16, 28, 28, 3, 3, 2, 2, 1, 1, 1},  {1, 20, 47, 19, 9, 9, 2, 2, 4, 0, 0},
      {1, 17, 70, 75, 3, 3, 2, 2, 1, 1, 0},  {2, 9, 300, 13, 1, 1, 2, 3, 0, 0, 0},
      // fast numerics sum each column's window rows first (windows overlapping along rows)
      {2, 9, 22, 22, 9, 9, 2, 2, 3, 3, 1},   {1, 19, 40, 14, 6, 7, 1, 1, 3, 2, 1},
      // global windows (pytorch numerics and f16/bf16 take the path)
      {4, 17, 7, 7, 7, 7, 7, 7, 0, 0, 0},    {1, 70, 8, 8, 11, 11, 11, 11, 2, 2, 0},
      // 16+ inputs an output on rows of 16+ outputs (kAcrossSparse): fast
      // numerics leave the path; pytorch numerics keep it on rows under 64
      // outputs (the first) and for f16/bf16
      {2, 9, 80, 80, 4, 4, 4, 4, 0, 0, 1},   {1, 20, 36, 290, 5, 4, 5, 4, 2, 0, 0},
  };
  for (const Shape& s : shapes) {
    const avgpool_params p = s.params();
    check_variants(p, {AVGPOOL_LAYOUT_NCHW}, 13);
    check_special_values(p, 5);
    // AVX2 transposes 8 x 8 tiles of ymm, the base build with plain loops: same bits
    check_same_bits_every_isa(p, p.dtype, AVGPOOL_NUMERICS_PYTORCH);
    // f64 takes the path in the AVX2 build only (4 x 4 tiles; windows that
    // overlap along the row, planes of up to 1024 pixels), the row kernels
    // in the others: the same bits
    check_same_bits_every_isa(p, AVGPOOL_DTYPE_F64, AVGPOOL_NUMERICS_PYTORCH);
  }
}

TEST_CASE("larger NCHW planes, 16 at a time in bands of output rows: every dtype, numerics, special values") {
  // Job::across on planes beyond 4096 pixels: bands of output rows whose
  // window rows fit the band, each band a unit (the overlap between bands'
  // window rows transposed twice); planes beyond 32768 pixels on rows of
  // fewer than 16 outputs (fast numerics: overlapping windows of fewer than
  // 64 inputs, disjoint windows whose rows span at most 256 inputs: the
  // last two shapes, the second with gaps between windows), rows too wide
  // for 4 output rows in 4096 pixels in bands of up to 32768. Partial
  // groups of planes, padding, ceil_mode, tall windows.
  const Shape shapes[] = {
      {1, 18, 300, 30, 5, 5, 3, 3, 2, 2, 1},     {1, 17, 2100, 20, 6, 7, 2, 6, 3, 3, 1},
      {1, 16, 40, 1500, 11, 11, 8, 100, 0, 0, 0}, {2, 9, 1200, 31, 6, 6, 1, 6, 1, 1, 0},
      {3, 7, 1100, 41, 3, 7, 3, 7, 0, 0, 1},     {1, 19, 1700, 25, 2, 2, 4, 3, 1, 1, 0},
  };
  for (const Shape& s : shapes) {
    const avgpool_params p = s.params();
    check_variants(p, {AVGPOOL_LAYOUT_NCHW}, 23);
    check_special_values(p, 9);
    check_same_bits_every_isa(p, p.dtype, AVGPOOL_NUMERICS_PYTORCH);
  }
}

TEST_CASE("NCHW rows of one or two outputs: every dtype, numerics, divisors, special values") {
  // Job::short_rows: each output summed in scalar, four planes side by side
  // (units of fewer planes: four output rows of a column side by side).
  // Plane counts that leave a partial group of four; padding, ceil_mode,
  // gaps between windows, tall windows, windows one column wide, few output
  // rows (column blocks; the fast split of window rows into chunks).
  const Shape shapes[] = {
      {7, 5, 8, 8, 1, 4, 3, 5, 0, 0, 0},      {1, 97, 114, 15, 8, 9, 10, 7, 0, 0, 0},
      {3, 7, 15, 8, 4, 5, 4, 5, 2, 1, 0},     {2, 9, 13, 10, 5, 7, 5, 7, 2, 3, 1},
      {5, 3, 9, 3, 2, 2, 2, 2, 0, 0, 1},      {2, 9, 30, 5, 3, 1, 2, 3, 0, 0, 1},
      {1, 6, 61, 6, 20, 5, 7, 4, 10, 2, 1},   {1, 3, 40, 10, 20, 11, 20, 9, 0, 5, 0},
      {1, 2, 14000, 10, 9000, 10, 9000, 10, 0, 0, 0},
      // one to three planes of many output rows: four rows of a column side
      // by side, rows of unequal windows (padding, ceil_mode) alone
      {1, 1, 200, 8, 5, 5, 3, 5, 2, 2, 1},    {1, 3, 150, 7, 6, 7, 4, 7, 3, 0, 0},
      {1, 2, 301, 12, 9, 6, 9, 6, 4, 0, 1},
  };
  for (const Shape& s : shapes) {
    const avgpool_params p = cpu_params_with_row(s, 1, 2);
    check_variants(p, {AVGPOOL_LAYOUT_NCHW}, 17);
    for (int64_t divisor : {int64_t(1), int64_t(7)}) {  // divisor_override
      avgpool_params q = p;
      q.divisor_override = divisor;
      check_variants(q, {AVGPOOL_LAYOUT_NCHW}, 19);
    }
    check_special_values(p, 7);
    // every instruction set: the same bits (scalar sums; the row sums of
    // tall windows use the masked loads of each instruction set)
    for (int numerics = 0; numerics < 2; ++numerics)
      check_same_bits_every_isa(p, AVGPOOL_DTYPE_F64, (avgpool_numerics)numerics);
  }
}

TEST_CASE("f64 strided NCHW rows of 3-16 outputs: scalar rows, the same bits on every instruction set") {
  // Job::short_rows also takes these without AVX-512 (kScalarRowF64) in
  // pytorch numerics, and on every instruction set in fast numerics for
  // windows of up to kScalarRowsFast rows and fewer than kScalarColumnsFast
  // columns (the first two shapes), or wider ones of up to
  // kScalarRowsFastWide rows (the two after the tall window of 17 rows,
  // which stays on the row kernels), or any window on rows of up to
  // kScalarRowTallFast outputs (the last four: tall, then tall and wide).
  // Plane counts that leave a partial group of four; padding, ceil_mode,
  // gaps and overlaps along the row, tall windows, divisors.
  const Shape shapes[] = {
      {3, 7, 33, 40, 6, 6, 6, 6, 0, 0, 0},   {1, 5, 75, 42, 5, 5, 5, 3, 2, 2, 1},
      {2, 3, 14, 72, 8, 8, 9, 9, 0, 0, 1},   {1, 6, 20, 47, 4, 7, 3, 3, 2, 3, 0},
      {2, 9, 40, 34, 17, 4, 3, 5, 8, 0, 1},  {3, 5, 31, 80, 2, 9, 2, 7, 1, 4, 1},
      {2, 7, 25, 61, 1, 11, 1, 5, 0, 5, 0},  {3, 5, 30, 16, 9, 3, 4, 6, 2, 1, 1},
      {2, 7, 44, 11, 11, 1, 5, 3, 4, 0, 0},  {2, 5, 40, 24, 5, 8, 3, 7, 2, 3, 1},
      {3, 3, 17, 26, 9, 10, 4, 8, 0, 0, 0},
  };
  for (const Shape& s : shapes) check_nchw_f64_rows(cpu_params_with_row(s, 3, 16), 23);
}

TEST_CASE("scalar NCHW rows of inputs of 16+ MiB: the next planes prefetched per output, the reference's results") {
  // Job::short_rows prefetches the next group of four planes a piece per
  // output where a group spans 1-64 KiB of an input of 16 MiB or more
  // (kShortPrefetchMin, kShortSpreadMax, kShortSpreadInput): f64 strided
  // rows of 3-16 outputs (10 KiB groups, 17 MiB; 1.5 KiB groups, padded, 20 MiB),
  // f64 rows of two outputs (10 KiB groups, 34 MiB); plane counts that
  // leave a partial last group.
  const Shape shapes[] = {
      {6501, 1, 18, 18, 3, 3, 3, 3, 0, 0, 1},
      {10401, 5, 7, 7, 3, 3, 3, 3, 1, 1, 0},
      {3300, 4, 40, 8, 5, 4, 5, 4, 0, 0, 0},
  };
  for (const Shape& s : shapes) check_nchw_f64_rows(cpu_params_with_row(s, 2, 16), 29);
}

TEST_CASE("f64 strided NCHW rows of 17+ outputs: transposed on AVX2, scalar rows on the base set, the same bits") {
  // Pytorch numerics: Job::short_rows on the base instruction set from
  // kScalarWindowF64 columns on, the AVX2 row kernels' transposed windows
  // (the gathers below 3 columns: none here); fast numerics: the row
  // kernels over row sums.
  // Plane counts that leave a partial group of four; padding, ceil_mode,
  // gaps and overlaps along the row, tall windows, divisors.
  const Shape shapes[] = {
      {1, 7, 30, 120, 5, 4, 3, 4, 2, 2, 1},  {2, 3, 40, 200, 8, 11, 6, 9, 0, 5, 0},
      {3, 2, 25, 90, 17, 6, 5, 2, 8, 3, 1},  {1, 5, 20, 70, 3, 3, 3, 3, 1, 1, 0},
  };
  for (const Shape& s : shapes) check_nchw_f64_rows(cpu_params_with_row(s, 17, 1000), 37);
}

TEST_CASE("strided NCHW windows of 3+ columns: transposed on AVX2, the same bits on every instruction set") {
  // transposed_windows_ymm (AVX2 build, 8 floats or 4 doubles at a time,
  // both numerics): windows of one block of columns or more (8, 9, 16, 17
  // columns; the last block masked), rows that leave outputs past the last
  // group, gaps and overlaps along the row, padding, ceil_mode, one-row
  // windows summed from the input rows themselves, tall windows (in fast
  // numerics row sums split over units: divisors of one), k3 s2 (over row
  // sums in fast numerics: shuffles instead). f64 pytorch numerics take
  // the scalar rows on rows of up to 16 outputs.
  const Shape shapes[] = {
      {2, 3, 12, 90, 3, 3, 2, 2, 1, 1, 0},     {1, 4, 9, 130, 2, 5, 2, 4, 1, 2, 1},
      {3, 2, 20, 120, 4, 8, 3, 3, 2, 4, 0},    {1, 3, 14, 200, 1, 10, 1, 11, 0, 0, 0},
      {1, 2, 30, 160, 5, 17, 5, 9, 2, 8, 1},   {1, 1, 60, 150, 20, 6, 4, 7, 10, 3, 0},
      {2, 2, 10, 80, 2, 3, 2, 3, 0, 1, 1},     {2, 3, 9, 80, 3, 7, 2, 9, 1, 3, 0},
      {3, 2, 12, 70, 4, 8, 3, 2, 2, 4, 1},     {1, 2, 40, 120, 17, 17, 3, 16, 8, 8, 0},
      {1, 1, 300, 500, 300, 16, 300, 3, 0, 8, 0},
      // column strides of 5-11, kw 1-16 (AVX-512: transposes or compiled
      // windows), rows of 16+ outputs, a partial last group of 16
      {2, 3, 12, 200, 3, 5, 2, 5, 1, 2, 0},    {1, 4, 9, 260, 2, 1, 2, 6, 0, 0, 1},
      {3, 2, 10, 300, 4, 16, 3, 7, 2, 8, 0},   {1, 3, 14, 400, 1, 11, 1, 11, 0, 5, 1},
      {1, 2, 20, 500, 5, 9, 5, 8, 2, 4, 1},    {2, 2, 8, 170, 2, 12, 2, 10, 1, 6, 0},
      {1, 1, 40, 350, 20, 16, 4, 11, 10, 8, 0},
  };
  for (const Shape& s : shapes)
    check_nchw_rows(cpu_params_with_row(s, 3, 1000), 53,
                    {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F64},
                    {AVGPOOL_NUMERICS_FAST, AVGPOOL_NUMERICS_PYTORCH});
}

TEST_CASE("k2/k3 at stride 2 in fast numerics: the AVX-512 fused kernel and its borders give the other instruction sets' bits") {
  // fused_s2 (AVX-512, NCHW) sums the window rows in registers where the
  // other builds sum them first into a row (Job::presum); the outputs
  // beside it (partial windows at the borders) must add the same terms in
  // the same order as theirs. The default instruction set of an AVX-512
  // machine is compared with base and AVX2; elsewhere this compares the
  // builds the machine has.
  const Shape shapes[] = {
      {2, 3, 12, 90, 3, 3, 2, 2, 1, 1, 0},  {2, 3, 13, 91, 2, 2, 2, 2, 1, 1, 1},
      {1, 4, 21, 77, 3, 3, 2, 2, 1, 1, 1},  {3, 2, 16, 130, 3, 3, 2, 2, 0, 0, 1},
      {2, 2, 15, 64, 2, 2, 2, 2, 0, 1, 0},
  };
  for (const Shape& s : shapes)
    for (avgpool_dtype dtype : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64})
      check_same_bits_every_isa(s.params(), dtype, AVGPOOL_NUMERICS_FAST);
}

TEST_CASE("NCHW stride-1 rows as wide as the input: flat interior rows and their borders (windows of one column too)") {
  // Job::flat (flat_rows): a plane's interior output rows as one run over
  // the flattened rows, then the border columns recomputed. Windows of one
  // column start the interior at column 0 and leave no border.
  const Shape shapes[] = {
      {3, 4, 30, 50, 3, 1, 1, 1, 0, 0, 0},  {2, 5, 25, 40, 2, 1, 1, 1, 1, 0, 1},
      {2, 3, 20, 33, 3, 3, 1, 1, 1, 1, 0},  {1, 6, 40, 64, 5, 1, 1, 1, 2, 0, 0},
      {2, 4, 24, 37, 5, 5, 1, 1, 2, 2, 0},
  };
  for (const Shape& s : shapes) {
    check_variants(s.params(), {AVGPOOL_LAYOUT_NCHW}, 71);
    check_special_values(s.params(), 83);
  }
}

TEST_CASE("kernel 1x1: strided copies in both layouts, divisors, signed zeros") {
  // Job::single: each output is (0 + x) / divisor of one input element.
  const Shape shapes[] = {
      {2, 3, 9, 11, 1, 1, 1, 1, 0, 0, 0},    {3, 19, 20, 20, 1, 1, 2, 2, 0, 0, 0},
      {1, 40, 13, 17, 1, 1, 2, 3, 0, 0, 1},  {2, 5, 30, 7, 1, 1, 5, 1, 0, 0, 1},
      {1, 1, 8, 300, 1, 1, 1, 4, 0, 0, 0},
  };
  std::mt19937_64 rng(9);
  for (const Shape& s : shapes) {
    check_variants(s.params(), {AVGPOOL_LAYOUT_NCHW, AVGPOOL_LAYOUT_NHWC}, 17);
    for (int layout = 0; layout < 2; ++layout)
      for (int dtype = 0; dtype < 4; ++dtype)
        for (int numerics = 0; numerics < 2; ++numerics) {
          avgpool_params q = s.params();
          q.backend = AVGPOOL_BACKEND_CPU;
          q.layout = (avgpool_layout)layout;
          q.dtype = (avgpool_dtype)dtype;
          q.numerics = (avgpool_numerics)numerics;
          q.divisor_override = numerics == 0 ? 3 : 0;
          const int64_t ns = src_count(q);
          std::vector<unsigned char> src((size_t)(ns * element_size(q.dtype)));
          fill_random(q.dtype, src.data(), ns, 5, -1.0, 1.0);
          const double specials[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0};
          for (int64_t i = 0; i < ns; i += 3) store_double(q.dtype, src.data(), i, specials[rng() % 5]);
          CHECK(check_all_impls(q, src.data()) >= 1);
        }
  }
}

TEST_CASE("windows one column wide: pytorch numerics from row sums, bitwise, signed zeros and NaN") {
  // NCHW, kw == 1: pytorch numerics sum each column's window rows first
  // (Job::presum); each output's chain is its column's, from +0.
  const Shape shapes[] = {
      {1, 22, 212, 212, 11, 1, 1, 3, 0, 0, 0},  // planes beyond the 16-plane path
      {2, 3, 40, 70, 5, 1, 2, 1, 2, 0, 1},      // padded rows, ceil mode
      {1, 2, 300, 90, 17, 1, 3, 2, 8, 0, 0},    // tall windows
      {1, 4, 60, 200, 2, 1, 1, 1, 1, 0, 0},     // stride 1
      {3, 2, 25, 130, 3, 1, 3, 5, 0, 0, 1},
  };
  std::mt19937_64 rng(21);
  for (const Shape& s : shapes)
    for (int dtype = 0; dtype < 4; ++dtype)
      for (int fill = 0; fill < 3; ++fill) {
        avgpool_params q = s.params();
        q.backend = AVGPOOL_BACKEND_CPU;
        q.dtype = (avgpool_dtype)dtype;
        q.numerics = AVGPOOL_NUMERICS_PYTORCH;
        q.count_include_pad = fill != 1;
        const int64_t ns = src_count(q);
        std::vector<unsigned char> src((size_t)(ns * element_size(q.dtype)));
        fill_random(q.dtype, src.data(), ns, 11 + fill, -1.0, 1.0);
        if (fill == 1) {  // zeros of both signs, some NaN and infinities
          const double specials[] = {-0.0, -0.0, -0.0, 0.0, NAN, INFINITY, -INFINITY};
          for (int64_t i = 0; i < ns; i += 2) store_double(q.dtype, src.data(), i, specials[rng() % 7]);
        } else if (fill == 2) {  // every element -0: PyTorch's sum from +0 gives +0
          for (int64_t i = 0; i < ns; ++i) store_double(q.dtype, src.data(), i, -0.0);
        }
        CAPTURE(describe(q));
        CHECK(check_all_impls(q, src.data()) >= 1);
      }
}

TEST_CASE("NHWC channels past the groups of four vectors: every dtype, numerics, instruction set, special values") {
  // horizontal_nhwc sums the last 1-4 channel vectors (the last one partial
  // or full) in one pass over the window; f16/bf16 of 16 channels or more
  // read and write their channel vectors directly (load_half, store_half:
  // AVX2 converts in registers, partial vectors by whole pairs and an odd
  // last element). Channel counts leaving each number of vectors and odd
  // and even tails, for f32 (16 lanes) and f64 (8); windows with gaps,
  // overlaps, padding, ceil_mode, a divisor override.
  const Shape shapes[] = {
      {2, 33, 12, 13, 3, 3, 3, 3, 0, 0, 1},  {1, 42, 30, 45, 8, 8, 10, 10, 4, 4, 1},
      {1, 52, 19, 15, 4, 7, 4, 1, 0, 0, 1},  {2, 63, 11, 20, 5, 2, 6, 3, 0, 0, 0},
      {1, 80, 9, 9, 3, 3, 2, 2, 1, 1, 0},    {1, 100, 10, 11, 2, 2, 2, 2, 0, 0, 0},
      {1, 127, 8, 9, 3, 2, 1, 2, 1, 1, 1},   {2, 19, 16, 16, 9, 9, 7, 7, 0, 0, 1},
      {1, 300, 6, 7, 2, 3, 2, 3, 1, 1, 0},   {3, 9, 10, 10, 3, 3, 3, 3, 1, 1, 1},
  };
  for (const Shape& s : shapes) {
    avgpool_params p = s.params();
    p.layout = AVGPOOL_LAYOUT_NHWC;
    check_variants(p, {AVGPOOL_LAYOUT_NHWC}, 23);
    avgpool_params d = p;
    d.divisor_override = 5;
    check_variants(d, {AVGPOOL_LAYOUT_NHWC}, 29);
    check_special_values(p, 11);
    for (const char* isa : {"base", "avx2"}) {  // the reference, in every instruction set
      setenv("AVGPOOL_CPU_ISA", isa, 1);
      check_variants(p, {AVGPOOL_LAYOUT_NHWC}, 31);
      check_special_values(p, 13);
      unsetenv("AVGPOOL_CPU_ISA");
    }
    for (int dtype = 0; dtype < 4; ++dtype)
      for (int numerics = 0; numerics < 2; ++numerics)
        check_same_bits_every_isa(p, (avgpool_dtype)dtype, (avgpool_numerics)numerics);
  }
}

TEST_CASE("NHWC f16/bf16 with 1-16 channels: read directly or converted first, every numerics and instruction set") {
  // f16/bf16 NHWC short of a vector of channels: pytorch numerics from 6
  // channels (from 4 where windows of more than 4 inputs do not overlap
  // along the row) and fast numerics from 6 (windows not overlapping along
  // the row, not tall; AVX-512 from 4 where they leave gaps along the row),
  // on rows of 8 outputs or more, read the input pixels
  // directly (load_half of a partial vector, four outputs side by side with
  // the window rows prefetched two groups ahead); the others convert the
  // rows to float first. Every
  // channel count on both sides of those bounds, windows with gaps and
  // vertical overlaps, padding, ceil_mode, tall windows, a divisor
  // override, special values, poisoned outputs with guard bands.
  // 64 output rows or more (planes x oh), so that the blocks are whole
  // output rows and the outputs go four at a time; the last shape has few.
  const Shape shapes[] = {
      {4, 0, 50, 37, 3, 3, 3, 3, 1, 1, 1},   {2, 0, 70, 40, 5, 2, 1, 3, 1, 0, 0},
      {3, 0, 50, 45, 2, 3, 2, 4, 0, 1, 1},   {5, 0, 60, 36, 4, 4, 4, 4, 0, 0, 0},
      {1, 0, 300, 30, 18, 3, 4, 3, 2, 1, 1}, {2, 0, 40, 33, 3, 5, 1, 2, 1, 2, 0},
      {1, 0, 13, 37, 3, 3, 3, 3, 1, 1, 1},
  };
  check_nhwc_channels(shapes, channel_range(1, 16), 37, 7, {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("NHWC with 17-32 channels: every dtype, numerics and instruction set, special values") {
  // Pixels of two channel vectors, four outputs side by side
  // (nhwc_output_fours); bf16 with AVX-512 loads a pixel's channels as one
  // 64-byte vector and splits the even and odd channels by integer ops
  // (bf16_pair_four), and writes each output back as channel pairs (both
  // roundings in one dword). Every channel count, odd and even, with
  // windows that leave groups of four and single outputs, gaps, overlaps,
  // padding, ceil_mode, a divisor override, NaN and signed zeros.
  const Shape shapes[] = {
      {3, 0, 20, 37, 3, 3, 3, 3, 1, 1, 1},
      {2, 0, 17, 30, 4, 2, 2, 3, 1, 0, 0},
      {1, 0, 9, 41, 2, 5, 3, 1, 0, 2, 1},
  };
  check_nhwc_channels(shapes, channel_range(17, 32), 53, 6,
                      {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("NHWC pixels in 32-byte vectors (AVX2; AVX-512 up to one vector): f32 and f64 of 1-40 channels, every numerics and instruction set") {
  // The AVX2 build sums NHWC channels in ymm vectors (8 floats, 4 doubles),
  // the AVX-512 build pixels of one such vector or less (masked AVX-512VL
  // loads and stores):
  // pixels of one or two of them four outputs at a time (one of them on rows
  // of stride 1 eight at a time), then three, two, one; of three or four
  // two at a time, wider ones one output at a time in chunks of four and
  // the rest in one pass (above 256 channels too). Every channel count on
  // both sides of each of those bounds for f32 (8, 16, 24, 32) and f64 (4,
  // 8, 12, 16), pixels of 257-301 channels, windows
  // that leave groups and single outputs, gaps, overlaps, padding,
  // ceil_mode, a divisor override, special values; the same bits as the
  // base instruction set (and the machine's own).
  const Shape shapes[] = {
      {3, 0, 20, 37, 3, 3, 3, 3, 1, 1, 1},
      {2, 0, 17, 30, 4, 2, 2, 3, 1, 0, 0},
      {1, 0, 9, 41, 2, 5, 3, 1, 0, 2, 1},
      {2, 0, 70, 26, 3, 6, 2, 1, 1, 0, 0},  // 70 output rows: blocks of whole rows
      {1, 0, 130, 7, 3, 14, 2, 1, 1, 7, 0},  // eight windows of one length, each the whole row
      {10, 0, 9, 23, 3, 5, 1, 3, 0, 0, 0},  // rows of 7 outputs: four, then three
      {22, 0, 5, 15, 2, 5, 1, 1, 0, 0, 0},  // rows of 11 outputs: eight or four, then three
  };
  check_nhwc_channels(shapes, {2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17, 20, 23, 24, 25, 31, 32, 33, 36, 40, 257, 301},
                      79, 5, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
}

TEST_CASE("NHWC f16/bf16 of 6-15 channels, windows of one or two rows overlapping along the row: read directly in fast numerics") {
  // Job::half_direct in fast numerics (impls.cpp, half_short): no rows
  // converted first where windows of fewer than kNhwcRowSumRows rows
  // overlap along the row; rows of 8+ outputs, strided and stride-1 rows,
  // padding, ceil_mode, a divisor override, special values, every
  // instruction set.
  const Shape shapes[] = {
      {2, 0, 9, 40, 2, 3, 2, 2, 1, 1, 0},
      {1, 0, 7, 61, 1, 8, 1, 7, 0, 0, 1},
      {3, 0, 8, 33, 2, 2, 3, 1, 0, 1, 0},
  };
  check_nhwc_channels(shapes, {6, 9, 13, 15}, 223, 5, {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("NHWC f64 pixels of 32+ channels, windows of 3-6 rows whose row sums save little: summed directly in fast numerics") {
  // impls.cpp, wide_f64_direct: no row sums, so fast numerics add each
  // window in PyTorch's order and, their quotients being correctly rounded
  // on these inputs, give pytorch numerics' bits (row sums add a window's
  // terms in another order: 9 of these 12 problems differ then). Disjoint and
  // overlapping windows, padding, ceil_mode; pixels of four whole 64-byte
  // vectors, and of partial ones.
  const Shape shapes[] = {
      {2, 0, 9, 10, 3, 3, 3, 3, 0, 0, 0},
      {1, 0, 12, 14, 5, 4, 2, 3, 1, 1, 1},
      {1, 0, 8, 11, 6, 2, 1, 1, 0, 1, 0},
  };
  check_nhwc_channels(shapes, {32, 37, 45, 64}, 331, 5, {AVGPOOL_DTYPE_F64});
  check_nhwc_fast_bits_are_pytorch(shapes, {32, 37, 45, 64}, AVGPOOL_DTYPE_F64, 17);
}

TEST_CASE("NHWC f32 pixels of 8+ channels, windows of 3-6 rows whose row sums save under a fifth: summed directly in fast numerics") {
  // impls.cpp, f32_direct: no row sums, so fast numerics add each window in
  // PyTorch's order and, over pixels of 21+ channels on these inputs, give
  // pytorch numerics' bits (row sums add in another order). Disjoint windows,
  // windows overlapping down the plane and along the row, padding,
  // ceil_mode; pixels of a partial 32-byte vector, of partial and whole
  // 64-byte ones.
  const Shape shapes[] = {
      {2, 0, 20, 21, 5, 5, 5, 5, 1, 1, 1},
      {1, 0, 30, 40, 3, 3, 2, 3, 1, 1, 0},
      {3, 0, 13, 29, 4, 3, 4, 2, 0, 1, 1},
      {1, 0, 12, 30, 6, 4, 3, 4, 2, 0, 0},
  };
  check_nhwc_channels(shapes, {9, 21, 84, 130}, 347, 5, {AVGPOOL_DTYPE_F32});
  check_nhwc_fast_bits_are_pytorch(shapes, {21, 84, 130}, AVGPOOL_DTYPE_F32, 29);
}

TEST_CASE("NHWC f32/f64 disjoint windows, one to a row: summed directly in fast numerics") {
  // impls.cpp, disjoint_small: windows that do not overlap, of any size,
  // where a row of the output holds one of them, take no row sums, so fast
  // numerics add each window in PyTorch's order and give pytorch numerics'
  // bits (row sums add a window's terms in another order). Windows of 36-121
  // inputs, gaps between them, padding, ceil_mode cutting the last window
  // row; pixels of a partial vector, of whole and partial 64-byte ones.
  const Shape shapes[] = {
      {3, 0, 12, 12, 11, 11, 11, 11, 0, 0, 0},
      {2, 0, 23, 10, 5, 10, 5, 10, 1, 0, 1},
      {1, 0, 30, 9, 6, 6, 8, 8, 2, 2, 0},
      {2, 0, 14, 7, 9, 7, 9, 7, 0, 0, 1},
  };
  check_nhwc_channels(shapes, {5, 21, 60}, 359, 5, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
  check_nhwc_fast_bits_are_pytorch(shapes, {5, 21, 100}, AVGPOOL_DTYPE_F32, 41);
  check_nhwc_fast_bits_are_pytorch(shapes, {3, 21, 60}, AVGPOOL_DTYPE_F64, 43);
}

TEST_CASE("NHWC stride-1 rows as one flat run: every dtype, numerics and instruction set, special values") {
  // Job::flat_run: with sw == 1 and channels short of whole vectors (32
  // bytes on AVX2, 64 on the other sets), a block's interior outputs are
  // summed as one run of elements, the edges (padding, ceil_mode, windows
  // cut by the input) pixel by pixel. Channel counts the AVX2 build takes
  // pixel by pixel and the base set flat (8, 24 f32; 4 f64) compare the two
  // ways' bits; rows of several column blocks (900 columns) split the run.
  const Shape shapes[] = {
      {2, 0, 9, 23, 2, 2, 1, 1, 0, 1, 1},  {1, 0, 11, 40, 3, 5, 2, 1, 1, 2, 0},
      {3, 0, 7, 19, 1, 3, 1, 1, 0, 1, 0},  {1, 0, 13, 30, 4, 1, 3, 1, 0, 0, 1},
      {1, 0, 4, 900, 2, 3, 1, 1, 0, 1, 0},
  };
  for (int64_t c : {2, 3, 4, 5, 8, 10, 13, 24, 33})
    for (Shape s : shapes) {
      if (s.w == 900 && c > 10) continue;
      s.c = c;
      check_nhwc_pixels(s.params(), 97 + (uint64_t)c, 5,
                        {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F64});
    }
}

TEST_CASE("NHWC overlapping windows beyond 32 KiB: outputs side by side, every dtype, numerics and instruction set") {
  // Job::shared_run (AVX-512): a block's interior outputs four side by side
  // (then three, two, one), channels in chunks of four vectors, the last
  // one partial; stride 1, 2 and 3 with each column in three or more
  // windows, padding, ceil_mode, rows of 3, 5 and 9 interior outputs, rows
  // of two column blocks (300 columns). Channel counts whose windows stay
  // under the bound in f16/bf16 compare with the other kernels as well.
  const Shape shapes[] = {
      {2, 0, 11, 11, 9, 9, 1, 1, 0, 0, 0},   {1, 0, 12, 30, 8, 9, 1, 2, 1, 1, 1},
      {1, 0, 10, 40, 6, 11, 2, 3, 2, 5, 0},  {1, 0, 9, 17, 9, 9, 1, 1, 0, 4, 0},
      {1, 0, 9, 300, 9, 10, 4, 1, 0, 0, 0},
  };
  check_nhwc_channels(shapes, {57, 130, 300}, 151, 5,
                      {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F64});
}

TEST_CASE("NHWC windows one column wide: row sums first or window sums in registers, every numerics and instruction set") {
  // Fast numerics sum f32/f64 one-column windows in registers from pixels
  // of 64 bytes (kOneColumnPixel) on, and the rows first below that:
  // channel counts on both sides of the bound in both types (f32 15/16, f64
  // 7/8), wider pixels, windows overlapping down the plane and not,
  // padding, ceil_mode, a divisor override, special values. f16/bf16 read
  // the pixels directly from 4 channels on (rows first below): 3/4, 8/9.
  const Shape shapes[] = {
      {2, 0, 30, 21, 4, 1, 4, 1, 2, 0, 0},
      {1, 0, 41, 13, 11, 1, 3, 1, 5, 0, 1},
      {3, 0, 17, 9, 3, 1, 1, 1, 1, 0, 1},
  };
  check_nhwc_channels(shapes, {7, 8, 15, 16, 17, 33, 70}, 131, 3, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
  check_nhwc_channels(shapes, {3, 4, 8, 9}, 137, 3, {AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("AVX2 wide NHWC pixels: window rows outer over several outputs, or per output and chunk") {
  // narrow_wide_rows (overlapping windows beyond 32 KiB, up to 256 channels
  // for two or more outputs at a time) and narrow_wide_each (the others):
  // channel counts on both sides of those bounds, odd tails, overlapping
  // windows, gaps, tall windows, padding, ceil_mode; the same bits on every
  // instruction set.
  const Shape shapes[] = {
      {2, 0, 13, 14, 11, 9, 11, 1, 0, 0, 0},
      {1, 0, 12, 23, 3, 4, 4, 5, 1, 2, 1},
      {1, 0, 20, 9, 17, 2, 3, 2, 0, 1, 0},
  };
  check_nhwc_channels(shapes, {33, 97, 165, 255, 511, 512, 513, 1030}, 131, 5,
                      {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("AVX2 NHWC: stride-1 ring on ymm vectors and the next row's prefetch keep the bits of every instruction set") {
  // nhwc_s1_sweep (fast numerics, channels a multiple of 64 bytes) and the
  // pairs and single outputs of narrow_pixels (windows of unequal lengths).
  const Shape shapes[] = {
      {2, 208, 30, 12, 11, 11, 10, 1, 0, 0, 0}, {1, 64, 9, 40, 5, 5, 1, 1, 2, 2, 0},
      {3, 16, 8, 25, 3, 16, 2, 1, 1, 8, 1},     {7, 5, 27, 27, 11, 8, 11, 8, 0, 4, 1},
      {5, 3, 14, 9, 5, 4, 5, 4, 2, 2, 1},
  };
  for (const Shape& s : shapes) check_nhwc_pixels(s.params(), 151, 7, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
}

TEST_CASE("NHWC short rows: four planes or four output rows side by side, every numerics and instruction set") {
  // Job::column_fours (rows that leave fewer than half their outputs in
  // groups of four, window rows read from the input, pixels of up to two
  // vectors: ymm in the AVX2 build, 64 bytes in the AVX-512 build; wider
  // pixels and the base build go along the row, where rows of unequal
  // windows go side by side padded with zero loads): four planes side by
  // side where four fit 32 KiB, else
  // four consecutive output rows where their windows have one number of
  // rows; planes left over, rows of unequal windows (padding, ceil_mode)
  // alone. Rows on both sides of the half (5 outputs, none in fours; 6 and
  // 7, four of them in fours: taken only by the AVX-512 build's pytorch
  // numerics over f32/f64 pixels of more than 32 bytes where windows
  // overlap down the plane; 5, a four and a shorter window: the same),
  // planes on both sides of 32 KiB,
  // channels on both sides of one and two vectors (ymm: f32 8, 16, f64 4,
  // 8; 64 bytes: f32 16, 32, f64 8, 16), gaps between windows (fast numerics without row sums first), a
  // divisor override, special values. 64 output rows or more (planes x
  // rows), so that the units hold several rows (fewer split the rows).
  const Shape shapes[] = {
      {41, 0, 12, 12, 9, 9, 10, 10, 0, 0, 1},  // rows of 2, two windows' lengths, 40 + 1 planes
      {4, 0, 26, 11, 9, 9, 1, 1, 0, 0, 0},     // rows of 3; planes side by side up to 3 channels
      {2, 0, 200, 20, 9, 9, 4, 4, 4, 4, 0},    // rows of 5, none in fours, large planes: rows side by side
      {7, 0, 40, 20, 9, 9, 4, 4, 4, 4, 0},     // the same on small planes (2 channels: planes side by side)
      {3, 0, 60, 28, 8, 8, 3, 4, 0, 0, 0},     // rows of 6, four in fours, kh > sh; fast numerics up to 9
                                               // channels without row sums first (short rows, kh > sh)
      {2, 0, 100, 45, 9, 9, 2, 9, 3, 3, 0},    // rows of 5: a shorter window and a four, kh > sh
      {9, 0, 15, 13, 2, 2, 2, 2, 1, 1, 0},     // rows of 7, four in fours, kh = sh: not taken
      {9, 0, 20, 14, 3, 2, 3, 4, 1, 1, 1},     // rows of 4, none in fours; gaps between windows, ceil_mode
  };
  check_nhwc_channels(shapes, {2, 3, 4, 5, 8, 9, 10, 14, 16, 17, 31, 32, 33}, 171, 7,
                      {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("AVX2 wide NHWC pixels: passes of up to eight ymm vectors, the last of three to eight") {
  // narrow_wide_each: passes of eight vectors, then three to eight in one
  // pass or, with nine or ten left, four and then five or six; the last
  // vector partial or whole. Channel counts at each bound of the split
  // (vectors of a pixel: f32 c / 8, f64 c / 4, rounded up: 5, 8, 9, 10, 11,
  // 18, 19).
  const Shape shapes[] = {
      {2, 0, 13, 14, 5, 4, 3, 2, 1, 1, 0},
      {3, 0, 9, 9, 2, 2, 4, 2, 0, 0, 1},
  };
  check_nhwc_channels(shapes,
                      {17, 20, 21, 24, 25, 28, 29, 33, 36, 37, 40, 41, 44, 48, 49, 56, 57, 64, 65, 72, 73, 80, 81, 88,
                       137, 144, 145, 152},
                      191, 5, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
}

TEST_CASE("AVX-512 NHWC pixels of three or four vectors in pairs, f64 pixels of one vector in fours") {
  // narrow_pixels on 64-byte vectors: outputs of one window length two at
  // a time, the others alone (rows of 7, 5 with a shorter last window, 6
  // with a shorter first one; a stride-1 row of 14, whose interior pairs
  // of whole f32/f64 vectors take offsets known when compiled); pixels of
  // 33-64 channels (f64 17-32), the last vector partial or whole; bf16 of
  // 49-64 channels as two 64-byte loads of channel pairs (bf16_pair_lanes),
  // the second partial or whole. f64
  // pixels of 5-8 channels: nhwc_output_fours. 64 output rows or more
  // (planes x rows), so that the units hold whole rows.
  const Shape shapes[] = {
      {16, 0, 13, 14, 5, 4, 3, 2, 1, 1, 0},
      {22, 0, 9, 9, 2, 2, 4, 2, 0, 0, 1},
      {11, 0, 11, 17, 3, 3, 2, 3, 1, 1, 0},
      {14, 0, 9, 13, 3, 4, 2, 1, 1, 2, 0},
  };
  check_nhwc_channels(shapes, {5, 8, 17, 24, 32, 33, 47, 48, 49, 50, 63, 64}, 211, 7,
                      {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16});
}

TEST_CASE("AVX-512 NHWC f32/f64 pixels of 2-8 channels on strided rows: several outputs a vector, every numerics and instruction set") {
  // packed_run (Job::packed): the interior outputs of a row side by side in
  // one 64-byte vector, as many as (P - 1) * sw + 1 pixels of a tap fit two
  // vectors; the last group of a row partial or whole (rows of 10-25
  // interior outputs), the edges one output at a time; windows narrower
  // than the stride (gaps), wider (overlaps), one column wide, of one to
  // four rows (fast numerics: row sums first from three), strides 2-7,
  // padding, ceil_mode, a divisor override, special values; the same bits
  // as the base instruction set (and the machine's own).
  // 64 output rows or more (planes x rows), so that the units hold whole
  // rows, and one shape of 8, whose rows are split into blocks.
  const Shape shapes[] = {
      {16, 0, 9, 47, 2, 2, 2, 2, 0, 1, 0}, {11, 0, 11, 53, 3, 3, 2, 2, 1, 1, 1},
      {32, 0, 7, 40, 2, 1, 3, 3, 0, 0, 0}, {8, 0, 8, 61, 4, 5, 1, 4, 2, 2, 0},
      {11, 0, 6, 33, 1, 2, 1, 3, 0, 1, 1}, {22, 0, 5, 90, 2, 7, 2, 7, 1, 3, 0},
      {2, 0, 9, 47, 2, 2, 2, 2, 0, 1, 0},
  };
  check_nhwc_channels(shapes, {2, 3, 4, 5, 6, 7, 8}, 223, 3, {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64});
}

#if defined(__unix__)
// Every CPU implementation on p (NHWC, CPU backend) from an input whose last
// byte is the last of a mapped page, followed by a page without access: a
// read past the input faults. Inputs random in [-1, 1) from seed.
namespace {
void check_input_before_unmapped_page(const avgpool_params& p, uint64_t seed) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  const int64_t bytes = src_count(p) * element_size(p.dtype);
  const int64_t mapped = (bytes + page - 1) / page * page;
  void* m = mmap(nullptr, (size_t)(mapped + page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  char* base = static_cast<char*>(m);
  REQUIRE(mprotect(base + mapped, (size_t)page, PROT_NONE) == 0);
  void* src = base + mapped - bytes;
  fill_random(p.dtype, src, src_count(p), seed, -1.0, 1.0);
  CAPTURE(describe(p));
  CHECK(check_all_impls(p, src) >= 1);
  munmap(m, (size_t)(mapped + page));
}
}  // namespace

TEST_CASE("reads stay inside the input (NHWC pixels, NCHW transposed and strided windows): an input that ends where an unmapped page begins") {
  // NHWC pixels short of whole channel vectors are read masked (in every
  // dtype; the AVX2 build by ymm vectors of 8 floats or 4 doubles), so are
  // the last elements of stride-1 rows summed as one run, and bf16
  // pixels of 17-32 channels of large inputs (bf16_pair_four,
  // Job::wide_loads) as whole vectors past their last channel where every
  // read of the group of four outputs stays inside the input. The last
  // window of each row ends at its last pixel, in a group of four outputs
  // (8 or 12 a row).
  const Shape shapes[] = {
      {1, 0, 6, 36, 3, 3, 3, 3, 0, 0, 0},
      {2, 0, 5, 32, 1, 4, 1, 4, 0, 0, 0},
      {1, 0, 4, 24, 2, 3, 2, 3, 0, 0, 0},
      {1, 0, 5, 19, 2, 5, 1, 2, 0, 0, 0},
      {1, 0, 4, 21, 2, 3, 1, 1, 0, 0, 0},  // stride-1 rows: one flat run
      {1, 0, 3, 13, 1, 1, 1, 1, 0, 0, 0},  // kernel 1: the row as one run
  };
  auto nhwc_cpu = [](avgpool_params p, int dtype, int numerics) {
    p.layout = AVGPOOL_LAYOUT_NHWC;
    p.backend = AVGPOOL_BACKEND_CPU;
    p.dtype = (avgpool_dtype)dtype;
    p.numerics = (avgpool_numerics)numerics;
    return p;
  };
  for (int64_t c = 1; c <= 32; ++c)
    for (Shape s : shapes)
      for (int dtype : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16, AVGPOOL_DTYPE_F64})
        for (int numerics = 0; numerics < 2; ++numerics) {
          s.c = c;
          check_input_before_unmapped_page(nhwc_cpu(s.params(), dtype, numerics), 67 + (uint64_t)c);
        }
  // The AVX2 transposed windows read one-row windows from the input rows,
  // the last block of columns whole where that stays inside the input; the
  // last window ends at the input's end (rows of 4-16 outputs: a group of
  // 8 floats or 4 doubles ends there, or single outputs do).
  for (int64_t kw : {3, 5, 7, 9, 11, 17})
    for (int64_t ow : {4, 8, 10, 16})
      for (int dtype = 0; dtype < 4; ++dtype)
        for (int numerics = 0; numerics < 2; ++numerics) {
          avgpool_params p = shape_params(1, 2, 3, (ow - 1) * (kw + 2) + kw, 1, kw, 1, kw + 2, 0, 0, 0);
          p.backend = AVGPOOL_BACKEND_CPU;
          p.dtype = (avgpool_dtype)dtype;
          p.numerics = (avgpool_numerics)numerics;
          check_input_before_unmapped_page(p, 73 + (uint64_t)kw);
        }
  // The AVX-512 strided windows (column strides 2-4) load whole vectors up
  // to stride - 1 elements past each lane's column, where that stays
  // inside the input: rows of 32-64 outputs (groups of 32 f32 or 16 f64
  // outputs) whose last window ends at the input's end.
  for (int64_t sw : {2, 3, 4})
    for (int64_t kw : {1, 2, 3, 5, 8})
      for (int64_t ow : {32, 40, 64})
        for (int dtype = 0; dtype < 4; ++dtype)
          for (int numerics = 0; numerics < 2; ++numerics) {
            avgpool_params p = shape_params(1, 2, 3, (ow - 1) * sw + kw, 1, kw, 1, sw, 0, 0, 0);
            p.backend = AVGPOOL_BACKEND_CPU;
            p.dtype = (avgpool_dtype)dtype;
            p.numerics = (avgpool_numerics)numerics;
            check_input_before_unmapped_page(p, 77 + (uint64_t)(sw * 100 + kw));
          }
  // Inputs of 24 MiB or more (Job::wide_loads: bf16 of 17-32 channels
  // reads whole vectors; the others masked): about 25 MiB, rows of 8
  // outputs ending at the last pixel.
  for (int64_t c : {5, 9, 15, 17, 20, 26, 31})
    for (int dtype : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16})
      for (int numerics = 0; numerics < 2; ++numerics) {
        const int64_t es = dtype == AVGPOOL_DTYPE_F32 ? 4 : 2;
        const int64_t h = ((int64_t(25) << 20) / (c * es * 32) + 1) / 2 * 2;
        check_input_before_unmapped_page(nhwc_cpu(shape_params(1, c, h, 32, 2, 4, 2, 4, 0, 0, 0), dtype, numerics),
                                         71 + (uint64_t)c);
      }
  // bf16 pixels of 49-64 channels (bf16_pair_lanes on AVX-512): the second
  // 64-byte load masked to the pixel's channels.
  for (int64_t c : {49, 57, 63, 64})
    for (Shape s : shapes)
      for (int numerics = 0; numerics < 2; ++numerics) {
        s.c = c;
        check_input_before_unmapped_page(nhwc_cpu(s.params(), AVGPOOL_DTYPE_BF16, numerics), 83 + (uint64_t)c);
      }
  // The same with windows of 16 inputs (Job::disjoint_each: pixels of two
  // to four ymm vectors, one output over its whole window at a time).
  for (int64_t c : {6, 9, 13, 17, 26, 31})
    for (int dtype : {AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F64, AVGPOOL_DTYPE_BF16})
      for (int numerics = 0; numerics < 2; ++numerics) {
        const int64_t es = dtype == AVGPOOL_DTYPE_F64 ? 8 : dtype == AVGPOOL_DTYPE_F32 ? 4 : 2;
        const int64_t h = ((int64_t(25) << 20) / (c * es * 32) + 3) / 4 * 4;
        check_input_before_unmapped_page(nhwc_cpu(shape_params(1, c, h, 32, 4, 4, 4, 4, 0, 0, 0), dtype, numerics),
                                         79 + (uint64_t)c);
      }
}
#endif

TEST_CASE("every instruction set the CPU has gives the same bits") {
  // AVGPOOL_CPU_ISA lowers the kernels' instruction set (base, avx2); a
  // plan reads it when it is created.
  std::mt19937_64 rng(4);
  for (int iter = 0; iter < 60; ++iter) {
    avgpool_params p = random_params(rng);
    p.backend = AVGPOOL_BACKEND_CPU;
    p.numerics = AVGPOOL_NUMERICS_PYTORCH;
    const int64_t ns = src_count(p), nd = dst_count(p);
    const int64_t es = element_size(p.dtype);
    std::vector<unsigned char> src((size_t)(ns * es));
    fill_random(p.dtype, src.data(), ns, (uint64_t)iter, -5.0, 5.0);
    std::vector<unsigned char> a((size_t)(nd * es)), b((size_t)(nd * es));
    REQUIRE(avgpool_forward(&p, src.data(), a.data(), nullptr) == AVGPOOL_SUCCESS);
    for (const char* isa : {"base", "avx2"}) {
      setenv("AVGPOOL_CPU_ISA", isa, 1);
      REQUIRE(avgpool_forward(&p, src.data(), b.data(), nullptr) == AVGPOOL_SUCCESS);
      unsetenv("AVGPOOL_CPU_ISA");
      CHECK_MESSAGE(memcmp(a.data(), b.data(), a.size()) == 0, isa << ": " << describe(p));
      // and the fast numerics of each ISA stays within the bound
      avgpool_params f = p;
      f.numerics = AVGPOOL_NUMERICS_FAST;
      setenv("AVGPOOL_CPU_ISA", isa, 1);
      check_all_impls(f, src.data());
      unsetenv("AVGPOOL_CPU_ISA");
    }
  }
}

TEST_CASE("strided windows, transposed where gathers are slow and gathered elsewhere, give the reference") {
  // AVGPOOL_CPU_GATHERS=slow makes the AVX-512 build transpose f64 NCHW
  // windows of 3+ columns at column strides of 3+ in both numerics, and
  // f32/f16/bf16 ones of 3-8 columns at strides of 5+ (wider or
  // overlapping ones are transposed anyway); =fast gathers those (f64 under
  // 9 columns, and in fast numerics all). Rows of 17+ outputs (shorter f64
  // strided rows take the scalar rows), windows 3 to 8 wide, gaps between
  // windows, padding, ceil_mode, NaN and Inf.
  struct S {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
    int ceil;
  };
  const S shapes[] = {{2, 3, 23, 211, 3, 3, 2, 3, 1, 1, 1},
                      {1, 4, 30, 301, 5, 7, 3, 7, 2, 3, 0},
                      {3, 2, 17, 157, 4, 4, 5, 5, 0, 2, 1},
                      {1, 2, 40, 260, 8, 8, 8, 9, 4, 0, 0},
                      {2, 2, 19, 203, 6, 5, 4, 6, 3, 2, 1},
                      {1, 3, 25, 240, 3, 4, 2, 6, 1, 2, 1}};
  const double specials[] = {NAN, INFINITY, -INFINITY};
  std::mt19937_64 rng(20261207);
  for (const char* gathers : {"slow", "fast"}) {
    setenv("AVGPOOL_CPU_GATHERS", gathers, 1);
    for (const S& s : shapes)
      for (avgpool_dtype dtype : {AVGPOOL_DTYPE_F64, AVGPOOL_DTYPE_F32, AVGPOOL_DTYPE_F16, AVGPOOL_DTYPE_BF16})
        for (int numerics = 0; numerics < 2; ++numerics)
          for (int include = 0; include < 2; ++include) {
            avgpool_params p;
            avgpool_params_init(&p);
            p.backend = AVGPOOL_BACKEND_CPU;
            p.n = s.n; p.c = s.c; p.h = s.h; p.w = s.w;
            p.kernel_h = s.kh; p.kernel_w = s.kw;
            p.stride_h = s.sh; p.stride_w = s.sw;
            p.padding_h = s.ph; p.padding_w = s.pw;
            p.ceil_mode = s.ceil;
            p.count_include_pad = include;
            p.dtype = dtype;
            p.numerics = (avgpool_numerics)numerics;
            const int64_t ns = src_count(p);
            std::vector<unsigned char> src((size_t)(ns * element_size(dtype)));
            fill_random(p.dtype, src.data(), ns, rng(), -5.0, 5.0);
            for (int k = 0; k < 3; ++k) store_double(p.dtype, src.data(), (int64_t)(rng() % (uint64_t)ns), specials[k]);
            CAPTURE(gathers);
            CHECK(check_all_impls(p, src.data()) >= 1);
          }
    unsetenv("AVGPOOL_CPU_GATHERS");
  }
}

#if defined(AVGPOOL_WITH_OPENMP)
TEST_CASE("bitwise equal between runs and between 1, 2, 3 and 4 threads") {
  // More threads than this machine has cores: shares of units that end up
  // taken by other threads (UnitShares); every output is written once.
  std::mt19937_64 rng(99);
  RandomParamsLimits lim;
  lim.max_n = 4; lim.max_c = 16; lim.max_hw = 96;
  const int saved = omp_get_max_threads();
  for (int iter = 0; iter < 40; ++iter) {
    avgpool_params p = random_params(rng, lim);
    p.backend = AVGPOOL_BACKEND_CPU;
    const int64_t ns = src_count(p), nd = dst_count(p);
    const int64_t es = element_size(p.dtype);
    std::vector<unsigned char> src((size_t)(ns * es));
    fill_random(p.dtype, src.data(), ns, (uint64_t)iter, -10.0, 10.0);
    std::vector<unsigned char> one((size_t)(nd * es)), two((size_t)(nd * es)), again((size_t)(nd * es));
    omp_set_num_threads(1);
    REQUIRE(avgpool_forward(&p, src.data(), one.data(), nullptr) == AVGPOOL_SUCCESS);
    omp_set_num_threads(2);
    REQUIRE(avgpool_forward(&p, src.data(), two.data(), nullptr) == AVGPOOL_SUCCESS);
    REQUIRE(avgpool_forward(&p, src.data(), again.data(), nullptr) == AVGPOOL_SUCCESS);
    CHECK_MESSAGE(memcmp(one.data(), two.data(), one.size()) == 0, describe(p));
    CHECK_MESSAGE(memcmp(two.data(), again.data(), two.size()) == 0, describe(p));
    for (int threads : {3, 4}) {
      std::vector<unsigned char> many((size_t)(nd * es), 0xff);  // NaN in every dtype
      omp_set_num_threads(threads);
      REQUIRE(avgpool_forward(&p, src.data(), many.data(), nullptr) == AVGPOOL_SUCCESS);
      CHECK_MESSAGE(memcmp(one.data(), many.data(), one.size()) == 0, describe(p) << " threads " << threads);
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("called from inside a parallel region: runs, no nesting, same bits") {
  avgpool_params p;
  avgpool_params_init(&p);
  p.backend = AVGPOOL_BACKEND_CPU;
  p.numerics = AVGPOOL_NUMERICS_PYTORCH;
  p.n = 2; p.c = 8; p.h = 64; p.w = 80; p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 1; p.padding_h = p.padding_w = 1;
  const int64_t ns = src_count(p), nd = dst_count(p);
  std::vector<float> src((size_t)ns), want((size_t)nd);
  fill_random(AVGPOOL_DTYPE_F32, src.data(), ns, 5, -1, 1);
  REQUIRE(avgpool_forward(&p, src.data(), want.data(), nullptr) == AVGPOOL_SUCCESS);
  int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
  {
    std::vector<float> got((size_t)nd);
    for (int rep = 0; rep < 5; ++rep) {
      if (avgpool_forward(&p, src.data(), got.data(), nullptr) != AVGPOOL_SUCCESS) ++bad;
      if (memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0) ++bad;
    }
  }
  CHECK(bad == 0);
}
#endif

}  // TEST_SUITE("cpu")

TEST_SUITE("large") {

// Inputs beyond 2^31 elements, f16 (4.3 GB each), filled with small integers
// so every sum is exact; outputs sample-checked against the reference.
TEST_CASE("cpu backend on inputs beyond 2^31 elements (f16, NCHW and NHWC)") {
  const int64_t total = (int64_t(1) << 31) + (int64_t(1) << 20);  // 2^20 * 2049
  std::vector<uint16_t> src;
  try {
    src.resize((size_t)total);
  } catch (const std::bad_alloc&) {
    FAIL("no memory for a 4.3 GB input");
  }
  fill_small_ints(AVGPOOL_DTYPE_F16, src.data(), total, 31, 8);

  struct Case { int64_t n, c, h, w, kh, kw, sh, sw, ph, pw; avgpool_layout layout; };
  const Case cases[] = {
      // one NCHW plane beyond 2^31 elements: 64-bit offsets inside a plane
      {1, 1, 32784, 65536, 3, 5, 2, 4, 1, 2, AVGPOOL_LAYOUT_NCHW},
      {1, 64, 2049, 16384, 2, 2, 2, 2, 0, 0, AVGPOOL_LAYOUT_NHWC},
  };
  for (const Case& k : cases) {
    for (int numerics = 0; numerics < 2; ++numerics) {
      avgpool_params p;
      avgpool_params_init(&p);
      p.n = k.n; p.c = k.c; p.h = k.h; p.w = k.w;
      p.kernel_h = k.kh; p.kernel_w = k.kw; p.stride_h = k.sh; p.stride_w = k.sw;
      p.padding_h = k.ph; p.padding_w = k.pw;
      p.dtype = AVGPOOL_DTYPE_F16; p.layout = k.layout; p.backend = AVGPOOL_BACKEND_CPU;
      p.numerics = (avgpool_numerics)numerics;
      CAPTURE(describe(p));
      REQUIRE(src_count(p) == total);
      avgpool_plan* plan = nullptr;
      REQUIRE(avgpool_plan_create(&p, &plan) == AVGPOOL_SUCCESS);
      int64_t ns = 0, nd = 0;
      avgpool_plan_sizes(plan, &ns, &nd);
      std::vector<uint16_t> dst((size_t)nd + 2);
      dst[0] = dst[(size_t)nd + 1] = 0xA5A5;
      REQUIRE(avgpool_plan_execute(plan, src.data(), dst.data() + 1, nullptr) == AVGPOOL_SUCCESS);
      CHECK(dst[0] == 0xA5A5);
      CHECK(dst[(size_t)nd + 1] == 0xA5A5);
      // samples: both ends, and spread over the tensor
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < 64; ++i) { idx.push_back(i); idx.push_back(nd - 1 - i); }
      append_random_indices(&idx, 4000, nd, 3);
      // exact sums: pytorch bitwise; fast within one f16 ulp (float division, then f16)
      CHECK(count_sampled_mismatches(plan, src.data(), dst.data() + 1, AVGPOOL_DTYPE_F16, idx,
                                     numerics == 1 ? 0.0 : 0x1p-10) == 0);
      avgpool_plan_destroy(plan);
    }
  }
}

}  // TEST_SUITE("large")

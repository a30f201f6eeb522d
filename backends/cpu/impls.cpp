// The CPU backend's implementations, fastest first, and their driver: it
// turns the Problem into a Job (divisor table, interior columns, blocks),
// picks the kernels for this CPU, and runs blocks of (planes, output rows)
// on OpenMP threads. The kernels are in kernels.inl.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <new>
#include <vector>

#if defined(AVGPOOL_WITH_OPENMP)
#include <omp.h>
#endif

#include "backward.h"
#include "cpu_job.h"
#include "error.h"
#include "impl.h"
#include "problem.h"

namespace avgpool {
namespace cpu {
namespace {

// ---- instruction set, chosen at run time ----------------------------------
enum Isa { kBase = 0, kAvx2 = 1, kAvx512 = 2 };

Isa detect_isa() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  // F16C has no __builtin_cpu_supports name in older compilers; every CPU
  // with AVX2 and FMA has it.
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return kAvx512;
  if (avx2) return kAvx2;
#endif
  return kBase;
}

// The best the CPU supports, lowered by AVGPOOL_CPU_ISA=base|avx2 (for
// tests and measurements; a value above what the CPU has is ignored).
Isa isa_for_call() {
  static const Isa best = detect_isa();
  const char* e = getenv("AVGPOOL_CPU_ISA");
  Isa want = best;
  if (e != nullptr) {
    if (strcmp(e, "base") == 0) want = kBase;
    else if (strcmp(e, "avx2") == 0) want = kAvx2;
  }
  return want < best ? want : best;
}

KernelTable kernels_for(Isa isa) {
  switch (isa) {
#if defined(AVGPOOL_CPU_X86_KERNELS)  // compiled for x86 targets only (CMakeLists.txt)
    case kAvx512: return kernels_avx512();
    case kAvx2: return kernels_avx2();
#endif
    default: return kernels_base();
  }
}

// ---- threads ----------------------------------------------------------------
// Calls in flight in this process: concurrent callers share the cores
// instead of each opening a full team (oversubscription).
std::atomic<int> g_active_calls{0};

struct ActiveCall {
  ActiveCall() { g_active_calls.fetch_add(1, std::memory_order_relaxed); }
  ~ActiveCall() { g_active_calls.fetch_sub(1, std::memory_order_relaxed); }
};

int threads_for(int64_t units) {
#if defined(AVGPOOL_WITH_OPENMP)
  // Inside an active parallel region (a caller's OpenMP team), run on the
  // calling thread: nesting would oversubscribe the cores.
  if (omp_in_parallel()) return 1;
  int t = omp_get_max_threads();  // honours OMP_NUM_THREADS
  const int active = g_active_calls.load(std::memory_order_relaxed);
  if (active > 1) t = t / active;
  if (t < 1) t = 1;
  if ((int64_t)t > units) t = (int)units;
  return t;
#else
  (void)units;
  return 1;
#endif
}

// ---- the job ----------------------------------------------------------------
// Divisors in the accumulator type, one table row per distinct row window.
// A row's divisors depend on its window only through its lengths (padded_len
// and end - begin: window_divisor in window.h), so rows with equal lengths
// share a table row; every value comes from Problem::divisor.
template <class A>
void build_divisors(const Problem& q, std::vector<A>* table, std::vector<int32_t>* row_of) {
  struct Key { int64_t padded, count; };
  std::vector<Key> keys;
  row_of->resize((size_t)q.oh);
  for (int64_t oy = 0; oy < q.oh; ++oy) {
    const AxisWindow& r = q.rows[(size_t)oy];
    const Key k{r.padded_len, r.end - r.begin};
    size_t i = 0;
    while (i < keys.size() && !(keys[i].padded == k.padded && keys[i].count == k.count)) ++i;
    if (i == keys.size()) {
      keys.push_back(k);
      table->resize(keys.size() * (size_t)q.ow);
      A* row = table->data() + i * (size_t)q.ow;
      for (int64_t ox = 0; ox < q.ow; ++ox) row[ox] = static_cast<A>(q.divisor(oy, ox));
    }
    (*row_of)[(size_t)oy] = (int32_t)i;
  }
}

constexpr int64_t kSpanTarget = 4096;    // elements one block's windows span (<= 16 KiB f32)
constexpr int64_t kStreamBytes = INT64_MAX;  // off by default: measured no gain here (docs/cpu.md)
constexpr int64_t kNtBytes = int64_t(32) << 20;  // NHWC outputs streamed from this size on
constexpr int64_t kUnitTarget = 32768;   // elements of work per parallel unit

template <class A>
avgpool_status run(const Problem& q, const void* src, void* dst, BlockFn (*pick)(const KernelTable&)) {
  ActiveCall active;
  Job j;
  std::vector<A> div_table;
  std::vector<int32_t> div_row;
  try {
    build_divisors<A>(q, &div_table, &div_row);
  } catch (const std::bad_alloc&) {
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the divisor table");
  }
  const bool nchw = q.layout == AVGPOOL_LAYOUT_NCHW;
  j.src = src;
  j.dst = dst;
  j.planes = nchw ? q.n * q.c : q.n;
  j.vec = nchw ? 1 : q.c;
  j.h = q.h; j.w = q.w; j.oh = q.oh; j.ow = q.ow;
  j.kh = q.kh; j.kw = q.kw; j.sh = q.sh; j.sw = q.sw;
  j.max_rows = 1;
  for (const AxisWindow& r : q.rows)
    if (r.end - r.begin > j.max_rows) j.max_rows = r.end - r.begin;
  j.rows = q.rows.data();
  j.cols = q.cols.data();
  j.div_table = div_table.data();
  j.div_row = div_row.data();
  std::vector<A> rcp_table;
  j.rcp_table = nullptr;
  if (q.numerics == AVGPOOL_NUMERICS_FAST) {
    try {
      rcp_table.resize(div_table.size());
    } catch (const std::bad_alloc&) {
      return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the reciprocal table");
    }
    for (size_t i = 0; i < div_table.size(); ++i) rcp_table[i] = A(1) / div_table[i];
    j.rcp_table = rcp_table.data();
  }
  // Vertical sums first: fast numerics, NCHW, strided windows (the sums
  // save gathers). With stride 1 the columns are contiguous and summing the
  // window directly measured as fast or faster (no store-to-load stalls).
  j.presum = q.numerics == AVGPOOL_NUMERICS_FAST && j.vec == 1 && q.sw > 1;
  // Software prefetch where most input rows are read once (NCHW row sums,
  // NHWC window sums).
  j.prefetch = 2 * q.sh >= q.kh;
  {
    const char* a = getenv("AVGPOOL_CPU_PF_LAST");
    const char* b = getenv("AVGPOOL_CPU_PF_OUT");
    j.pf_last = a == nullptr || a[0] == '1';
    j.pf_out = b == nullptr || b[0] == '1';
  }
  if (const char* e = getenv("AVGPOOL_CPU_PRESUM")) j.presum = e[0] == '2' || (j.presum && e[0] == '1');
  {
    const bool direct = q.dtype == AVGPOOL_DTYPE_F32 || q.dtype == AVGPOOL_DTYPE_F64;
    const int64_t lanes = 64 / (int64_t)q.element_size;
    const bool eligible = !nchw && direct && q.c % lanes == 0 && ((uintptr_t)dst & 63) == 0;
    j.nt_out = eligible && q.dst_elements * (int64_t)q.element_size >= kNtBytes;
    if (const char* e = getenv("AVGPOOL_CPU_NT")) j.nt_out = eligible && e[0] == '1';
  }
  if (const char* e = getenv("AVGPOOL_CPU_PREFETCH")) j.prefetch = e[0] == '1';
  {
    const char* e = getenv("AVGPOOL_CPU_STREAM");
    j.stream = q.dst_elements * q.element_size >= kStreamBytes;
    if (e != nullptr) j.stream = e[0] == '1';
  }
  j.global = nchw && q.oh == 1 && q.ow == 1 && q.rows[0].begin == 0 && q.rows[0].end == q.h &&
             q.cols[0].begin == 0 && q.cols[0].end == q.w && q.h * q.w < (int64_t(1) << 26);

  // Interior output columns: full windows with begins sw apart.
  int64_t lo = 0;
  while (lo < q.ow && q.cols[(size_t)lo].end - q.cols[(size_t)lo].begin != q.kw) ++lo;
  int64_t hi = lo;
  while (hi < q.ow && q.cols[(size_t)hi].end - q.cols[(size_t)hi].begin == q.kw &&
         (hi == lo || q.cols[(size_t)hi].begin - q.cols[(size_t)hi - 1].begin == q.sw))
    ++hi;
  j.ox_lo = lo;
  j.ox_hi = hi;
  // NHWC stride-1 rows, fast numerics, kw >= 4 (k3 s1 measured slower with
  // it: 6 loads instead of 9 do not pay for the ring): the separable ring kernel (its
  // kRingMax is 16 in kernels.inl; channels a multiple of one 64-byte vector).
  j.sep_s1 = !nchw && q.numerics == AVGPOOL_NUMERICS_FAST && q.sw == 1 && q.kw >= 4 &&
             q.kw <= 16 && q.c % (int64_t)(64 / sizeof(A)) == 0 && hi > lo;
  if (const char* e = getenv("AVGPOOL_CPU_SEP")) j.sep_s1 = j.sep_s1 && e[0] == '1';

  // Flat interior rows (see flat_rows in kernels.inl).
  int64_t ylo = 0;
  while (ylo < q.oh && q.rows[(size_t)ylo].end - q.rows[(size_t)ylo].begin != q.kh) ++ylo;
  int64_t yhi = ylo;
  while (yhi < q.oh && q.rows[(size_t)yhi].end - q.rows[(size_t)yhi].begin == q.kh &&
         (yhi == ylo || q.rows[(size_t)yhi].begin - q.rows[(size_t)yhi - 1].begin == q.sh) &&
         div_row[(size_t)yhi] == div_row[(size_t)ylo])
    ++yhi;
  j.oy_lo = ylo;
  j.oy_hi = yhi;
  j.flat = nchw && q.dtype != AVGPOOL_DTYPE_F16 && q.dtype != AVGPOOL_DTYPE_BF16 && !j.stream &&
           q.sh == 1 && q.sw == 1 && q.ow == q.w && hi > lo && yhi > ylo &&
           !(getenv("AVGPOOL_CPU_FLAT") != nullptr && getenv("AVGPOOL_CPU_FLAT")[0] == '0');
  j.flat_chunk = q.ow >= 4096 ? 1 : 4096 / q.ow;
  std::vector<A> flat_div, flat_rcp;
  if (j.flat) {
    try {
      flat_div.resize((size_t)(j.flat_chunk * q.ow));
      if (j.rcp_table) flat_rcp.resize(flat_div.size());
    } catch (const std::bad_alloc&) {
      return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the flat divisors");
    }
    const size_t row = (size_t)div_row[(size_t)ylo] * (size_t)q.ow;
    for (size_t i = 0; i < flat_div.size(); ++i) {
      flat_div[i] = div_table[row + i % (size_t)q.ow];
      if (j.rcp_table) flat_rcp[i] = rcp_table[row + i % (size_t)q.ow];
    }
  }
  j.flat_div = flat_div.data();
  j.flat_rcp = j.rcp_table ? flat_rcp.data() : nullptr;

  // Column blocks: windows spanning about kSpanTarget elements.
  const int64_t cols_target = kSpanTarget / j.vec;
  j.ob = cols_target > q.kw ? (cols_target - q.kw) / q.sw + 1 : 1;
  if (j.ob > q.ow) j.ob = q.ow;
  j.span_cap = 0;
  std::vector<int64_t> block_cols;
  try {
    block_cols.reserve((size_t)(2 * ((q.ow + j.ob - 1) / j.ob)));
  } catch (const std::bad_alloc&) {
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for the column blocks");
  }
  for (int64_t ob0 = 0; ob0 < q.ow; ob0 += j.ob) {
    const int64_t ob1 = ob0 + j.ob < q.ow ? ob0 + j.ob : q.ow;
    int64_t xa = q.cols[(size_t)ob0].begin, xb = q.cols[(size_t)ob0].end;
    for (int64_t ox = ob0 + 1; ox < ob1; ++ox) {
      if (q.cols[(size_t)ox].begin < xa) xa = q.cols[(size_t)ox].begin;
      if (q.cols[(size_t)ox].end > xb) xb = q.cols[(size_t)ox].end;
    }
    if (xb < xa) xb = xa;
    block_cols.push_back(xa);
    block_cols.push_back(xb);
    if ((xb - xa) * j.vec > j.span_cap) j.span_cap = (xb - xa) * j.vec;
  }
  j.block_cols = block_cols.data();

  // Parallel units: a run of output rows of one plane, or whole planes.
  int64_t new_rows = q.sh < q.kh ? q.sh : q.kh;  // input rows each output row adds
  if (new_rows > q.h) new_rows = q.h;
  const int64_t row_work = new_rows * q.w * j.vec + q.ow * j.vec;  // <= elements, no overflow
  int64_t rb = kUnitTarget / (row_work > 0 ? row_work : 1);
  if (rb < 1) rb = 1;
  int64_t pb = 1;
  if (rb >= q.oh) {
    rb = q.oh;
    pb = kUnitTarget / (q.oh * row_work);
    if (pb < 1) pb = 1;
    if (pb > j.planes) pb = j.planes;
  }
  const int64_t row_units = (q.oh + rb - 1) / rb;
  const int64_t units = (j.planes + pb - 1) / pb * row_units;

  const Isa isa = isa_for_call();
  const BlockFn fn = pick(kernels_for(isa));
  const bool converts = q.dtype == AVGPOOL_DTYPE_F16 || q.dtype == AVGPOOL_DTYPE_BF16;
  if (converts || pb * rb * q.ow * j.vec > (int64_t(1) << 20)) j.stream = false;
  const size_t bytes = align64(scratch_bytes(j, sizeof(A), converts, pb * rb * q.ow * j.vec));
  const int nt = threads_for(units);
  void* scratch_all = aligned_alloc(64, bytes * (size_t)nt);
  if (scratch_all == nullptr)
    return set_error(AVGPOOL_ERROR_OUT_OF_MEMORY, "no memory for %d scratch buffers of %zu bytes",
                     nt, bytes);

  auto run_unit = [&](int64_t u, void* scratch) {
    const int64_t pu = u / row_units, ru = u % row_units;
    const int64_t p0 = pu * pb, p1 = p0 + pb < j.planes ? p0 + pb : j.planes;
    const int64_t oy0 = ru * rb, oy1 = oy0 + rb < q.oh ? oy0 + rb : q.oh;
    fn(j, p0, p1, oy0, oy1, scratch);
  };
  int64_t chunk = units / ((int64_t)nt * 16);
  if (chunk < 1) chunk = 1;
  if (nt <= 1) {
    for (int64_t u = 0; u < units; ++u) run_unit(u, scratch_all);
  } else {
#if defined(AVGPOOL_WITH_OPENMP)
#pragma omp parallel num_threads(nt)
    {
      void* scratch = static_cast<char*>(scratch_all) + bytes * (size_t)omp_get_thread_num();
      // Dynamic, in chunks of about 1/16 of a thread's share: on a shared
      // machine a delayed thread does not hold up the call. Every output
      // is computed by one unit, so the result does not depend on it.
#pragma omp for schedule(dynamic, chunk)
      for (int64_t u = 0; u < units; ++u) run_unit(u, scratch);
    }
#endif
  }
  free(scratch_all);
  return AVGPOOL_SUCCESS;
}

avgpool_status execute(const Problem& q, const Config&, const void* src, void* dst, void*) {
  switch (q.dtype) {
    case AVGPOOL_DTYPE_F32: return run<float>(q, src, dst, [](const KernelTable& t) { return t.f32; });
    case AVGPOOL_DTYPE_F16: return run<float>(q, src, dst, [](const KernelTable& t) { return t.f16; });
    case AVGPOOL_DTYPE_BF16: return run<float>(q, src, dst, [](const KernelTable& t) { return t.bf16; });
    case AVGPOOL_DTYPE_F64: return run<double>(q, src, dst, [](const KernelTable& t) { return t.f64; });
  }
  return set_error(AVGPOOL_ERROR_INTERNAL, "cpu: unknown dtype %d", (int)q.dtype);
}

// ---- the implementations -------------------------------------------------------
avgpool_status init_nchw_stride_eq_kernel(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "cpu:nchw_stride_eq_kernel needs the NCHW layout");
  if (!q.stride_equals_kernel())
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "cpu:nchw_stride_eq_kernel needs stride == kernel (stride %lldx%lld, kernel %lldx%lld)",
                   (long long)q.sh, (long long)q.sw, (long long)q.kh, (long long)q.kw);
  *config = std::make_unique<Config>();
  return AVGPOOL_SUCCESS;
}

avgpool_status init_nchw(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "cpu:nchw_generic needs the NCHW layout");
  *config = std::make_unique<Config>();
  return AVGPOOL_SUCCESS;
}

avgpool_status init_nhwc(const Problem& q, const DeviceInfo&, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NHWC)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "cpu:nhwc needs the NHWC layout");
  *config = std::make_unique<Config>();
  return AVGPOOL_SUCCESS;
}

const Impl kNchwStrideEqKernel = {"cpu:nchw_stride_eq_kernel", AVGPOOL_BACKEND_CPU, Direction::kForward,
                                  init_nchw_stride_eq_kernel, execute};
const Impl kNchwGeneric = {"cpu:nchw_generic", AVGPOOL_BACKEND_CPU, Direction::kForward, init_nchw, execute};
const Impl kNhwc = {"cpu:nhwc", AVGPOOL_BACKEND_CPU, Direction::kForward, init_nhwc, execute};
const Impl* const kImpls[] = {&kNchwStrideEqKernel, &kNchwGeneric, &kNhwc, &kCpuBackwardBroadcast,
                              &kCpuBackwardGather};

size_t auto_order(const Problem& problem, const DeviceInfo& device, Direction direction, const Impl** out,
                  size_t cap) {
  size_t n = 0;
  if (direction == Direction::kBackward) return cpu_backward_auto_order(problem, device, out, cap);
  for (const Impl* impl : kImpls)
    if (n < cap && impl->direction == Direction::kForward) out[n++] = impl;
  return n;
}

}  // namespace
}  // namespace cpu

const Backend& cpu_backend() {
  static const Backend backend = {AVGPOOL_BACKEND_CPU, cpu::kImpls, sizeof cpu::kImpls / sizeof cpu::kImpls[0],
                                  host_device, cpu::auto_order};
  return backend;
}

}  // namespace avgpool

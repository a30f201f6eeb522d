// cuda:backward_broadcast - the backward (grad_input from grad_output) of
// pooling whose windows do not overlap: stride >= kernel on both axes, any
// padding, ceil_mode and divisor, NCHW and NHWC, every dtype, both numerics.
//
// Every grad_input element lies in at most one window, so it is that
// window's one term, g / d (tests/data/README.md, "Backward"), or exactly 0
// where no window covers it (a stride beyond the kernel, rows and columns
// dropped at the end). grad_input is about sh * sw times the size of
// grad_output (121 times on the seed case), so the pass is write-bound: the
// kernel computes each value once per band and then only streams stores.
//
// A grad_input row is W elements (NCHW, one plane) or W * C (NHWC, one
// batch item: pixels of C channels). Output row oh owns the band of input
// rows from its window's first row to the next window's first row (the last
// band runs to H): the rows of its window, then the rows no window covers.
// Every row of a band's window holds the same values, so a work item - one
// band, one column chunk of its rows - computes the chunk's values once into
// registers and writes them to each window row, and zeros to the uncovered
// rows. A group of `group` lanes (a power of two up to the block) takes an
// item; a lane owns up to kMaxUnits units of the chunk (16-byte vectors, or
// single elements in the scalar variant) at stride `group`, so each store
// instruction of a group covers consecutive units of a row. Groups take
// consecutive items (chunks, then bands, then planes), so a group writes one
// contiguous stretch of grad_input at a time. Narrow rows pack several items
// into a block (rows of 7 elements: groups of 8 lanes); where a band is a few
// hundred bytes, a lane computes kBatch items' values before it stores them
// (batched_items).
//
// Small NCHW planes with narrow rows (global 7x7: 28-byte rows, the band
// stores of a plane cover parts of sectors) take planes_kernel instead: a
// block owns a contiguous stretch of grad_input's 16-byte vectors across
// whole planes; it first computes the quotients of every window of the
// planes the stretch touches into shared memory (one division per window),
// then writes its vectors, each element looking up its window through
// per-row and per-column tables.
//
// The vector variant needs rows of whole vectors in one plane or pixel:
// NCHW rows of a 16-byte multiple (W % V == 0) or NHWC pixels of a 16-byte
// multiple (C % V == 0, one g vector per unit), and both pointers 16-byte
// aligned; the scalar variant (same mapping, one element per unit) takes the
// rest. Axes, kernels, strides and paddings in int32 (axes_fit_int32), rows
// below 2^30 elements; offsets of rows and planes in 64 bits (the seed's
// grad_input has 2^32 elements).
#include <algorithm>
#include <type_traits>

#include "backward_common.cuh"
#include "impls.h"
#include "int_divider.h"

namespace avgpool::cuda {
namespace {

constexpr const char* kName = "cuda:backward_broadcast";
constexpr int kThreads = 256;
constexpr int kMaxUnits = 4;   // units per lane and item
constexpr int kMinBlocks = 4;  // blocks per SM the registers are planned for (64 registers)
constexpr int kBatch = 8;      // items whose values a lane computes before storing (batched_items)
constexpr int64_t kBatchBandBytes = 512;  // bands (stride rows) of at most this many bytes are batched

struct BroadcastArgs : Geometry {
  int64_t c;          // channels
  int row_len;        // elements of a grad_input row: w (NCHW) or w * c (NHWC)
  int units;          // units of a row: row_len / elements per unit
  int group;          // lanes per item: a power of two dividing kThreads
  int lane_units;     // units per lane, at most kMaxUnits
  int chunks;         // column chunks per row, group * lane_units units each
  int64_t items;      // rows' outer index (planes or n) * oh * chunks
  int64_t per_group;  // consecutive items each group takes
  // planes_kernel
  IntDivider by_plane, by_w, by_windows, by_ow;  // h * w, w, oh * ow, ow
  int64_t vectors;                               // whole 16-byte vectors of grad_input
  int block_vectors;                             // vectors per block item
  int stage_planes;                              // planes of quotients a block stages at most
};

// The value of grad_input element x (channel c) of a row of the band of
// output row oh: the one term of window (oh, ow) when it holds x, else 0.
// g_row is grad_output's row oh (channel 0); row_factor its row's divisor
// factor.
template <typename T, bool PYT>
__device__ __forceinline__ T element_value(const BroadcastArgs& a, const T* g_row, int64_t row_factor, int x,
                                           int ow, int c, int cin) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  A v = A(0);
  if (ow < (int)a.ow) {
    const AxisWindowOf<int> cw = axis_window_of<int>(ow, (int)a.w, (int)a.kw, (int)a.sw, (int)a.pw);
    if (cw.begin <= x && x < cw.end) {
      const int64_t d = divisor_from_factors(row_factor, axis_divisor_factor(cw, a.include_pad), a.divisor_override);
      v = A(0) + backward_term<T, PYT>(load1<false>(g_row + (int64_t)ow * cin + c), d);
    }
  }
  return E::from_acc(v);
}

// The values of unit u of a row of the band of output row oh.
template <typename T, bool NHWC, bool VEC, bool PYT>
__device__ __forceinline__ typename std::conditional<VEC, Vec16<T>, T>::type unit_values(
    const BroadcastArgs& a, const T* g_row, int64_t row_factor, int u) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int V = vec_of<T>();
  const int sw = (int)a.sw, pw = (int)a.pw;
  const int cin = NHWC ? (int)a.c : 1;
  if constexpr (!VEC) {
    const int x = NHWC ? u / cin : u;
    const int c = NHWC ? u - x * cin : 0;
    return element_value<T, PYT>(a, g_row, row_factor, x, (x + pw) / sw, c, cin);
  } else if constexpr (!NHWC) {
    // V consecutive columns: the window index advances with a running
    // remainder instead of a division per element, and a window's value is
    // computed once for the elements it holds.
    const T zero = E::from_acc(A(0));
    Vec16<T> out;
    int x = u * V;
    int ow = (x + pw) / sw;
    int r = x + pw - ow * sw;
    int current = -1, begin = 0, end = 0;  // window `current` holds [begin, end)
    T value = zero;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (k > 0) {
        ++x;
        if (++r == sw) {
          r = 0;
          ++ow;
        }
      }
      if (ow != current) {
        current = ow;
        begin = end = 0;
        value = zero;
        if (ow < (int)a.ow) {
          const AxisWindowOf<int> cw = axis_window_of<int>(ow, (int)a.w, (int)a.kw, sw, pw);
          begin = cw.begin;
          end = cw.end;
          const int64_t d =
              divisor_from_factors(row_factor, axis_divisor_factor(cw, a.include_pad), a.divisor_override);
          value = E::from_acc(A(0) + backward_term<T, PYT>(load1<false>(g_row + ow), d));
        }
      }
      out.v[k] = begin <= x && x < end ? value : zero;
    }
    return out;
  } else {
    // V consecutive channels of one pixel (c % V == 0): one window, one
    // 16-byte load of grad_output.
    const int e = u * V;
    const int x = e / cin;
    const int c0 = e - x * cin;
    const int ow = (x + pw) / sw;
    if (ow < (int)a.ow) {
      const AxisWindowOf<int> cw = axis_window_of<int>(ow, (int)a.w, (int)a.kw, sw, pw);
      if (cw.begin <= x && x < cw.end) {
        const int64_t d =
            divisor_from_factors(row_factor, axis_divisor_factor(cw, a.include_pad), a.divisor_override);
        const Vec16<T> g = load16<false>(g_row + (int64_t)ow * cin + c0);
        Vec16<T> out;
#pragma unroll
        for (int k = 0; k < V; ++k) out.v[k] = E::from_acc(A(0) + backward_term<T, PYT>(g.v[k], d));
        return out;
      }
    }
    return zero16<T>();
  }
}

// The next item after (chunk, oh, outer): column chunks fastest, then
// output rows, then planes / batch items.
__device__ __forceinline__ void next_item(const BroadcastArgs& a, int& chunk, int& oh, int64_t& outer) {
  if (++chunk == a.chunks) {
    chunk = 0;
    if (++oh == (int)a.oh) {
      oh = 0;
      ++outer;
    }
  }
}

// Items of one unit per lane whose bands are a few hundred bytes (a.batch):
// kBatch items at a time, their grad_output loads in flight together. One
// item at a time, a band's few stores waited on its load: global 7x7 NCHW
// 0.128 -> 0.102-0.105 ms on the H200 (2026-12-01). k2 s2 on rows of 112 floats
// (896-byte bands) and the seed's bands slowed by 5-10% batched, so they are
// not. (Global 7x7 NCHW with 16-byte aligned pointers now runs planes_kernel:
// 0.034 ms.)
template <typename T, bool NHWC, bool VEC, bool PYT, typename Bits>
__device__ __forceinline__ void batched_items(const BroadcastArgs& a, const T* __restrict__ gout,
                                              T* __restrict__ gin, int lane, int64_t item, int64_t item_end,
                                              int chunk, int oh, int64_t outer, Bits zero) {
  constexpr int V = VEC ? vec_of<T>() : 1;
  const int h = (int)a.h, oh_count = (int)a.oh, kh = (int)a.kh, sh = (int)a.sh, ph = (int)a.ph;
  const int64_t cin = NHWC ? a.c : 1;
  for (; item < item_end; item += kBatch) {
    Bits vals[kBatch];
    int ck = chunk, o = oh;
    int64_t ou = outer;
#pragma unroll
    for (int s = 0; s < kBatch; ++s) {
      vals[s] = zero;
      const int u = ck * a.group + lane;
      if (item + s < item_end && u < a.units) {
        const int64_t row_factor = axis_divisor_factor(axis_window_of<int>(o, h, kh, sh, ph), a.include_pad);
        const auto v = unit_values<T, NHWC, VEC, PYT>(a, gout + (ou * a.oh + o) * a.ow * cin, row_factor, u);
        memcpy(&vals[s], &v, sizeof v);
      }
      next_item(a, ck, o, ou);
    }
#pragma unroll
    for (int s = 0; s < kBatch; ++s) {
      const int u = chunk * a.group + lane;
      if (item + s < item_end && u < a.units) {
        const AxisWindowOf<int> rw = axis_window_of<int>(oh, h, kh, sh, ph);
        const int band_end = oh + 1 < oh_count ? axis_window_of<int>(oh + 1, h, kh, sh, ph).begin : h;
        T* p = gin + (outer * a.h + rw.begin) * (int64_t)a.row_len + (int64_t)u * V;
        for (int y = rw.begin; y < band_end; ++y, p += a.row_len)
          __stcs(reinterpret_cast<Bits*>(p), y < rw.end ? vals[s] : zero);
      }
      next_item(a, chunk, oh, outer);
    }
  }
}

// Each group of a.group lanes takes a.per_group consecutive items (column
// chunk fastest, then output row, then plane / batch item): for each, the
// lane computes the values of its units of the chunk once, then stores them
// to every row of the band's window and zeros to the band's other rows.
// T: element type; NHWC: layout; VEC: 16-byte units (else single
// elements); PYT: PyTorch's numerics (backward_term).
template <typename T, bool NHWC, bool VEC, bool PYT, bool BATCH>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
broadcast_kernel(const T* __restrict__ gout, T* __restrict__ gin, BroadcastArgs a) {
  // Units travel as their bits (float4 or the element's integer), so the
  // per-unit values stay in registers through the stores.
  using Bits = typename std::conditional<VEC, float4, typename Elem<T>::bits_t>::type;
  constexpr int V = VEC ? vec_of<T>() : 1;
  const int lane = (int)threadIdx.x & (a.group - 1);
  const int64_t group = (int64_t)blockIdx.x * (kThreads / a.group) + (int)threadIdx.x / a.group;
  int64_t item = group * a.per_group;
  const int64_t item_end = item + a.per_group < a.items ? item + a.per_group : a.items;
  if (item >= item_end) return;
  const int h = (int)a.h, oh_count = (int)a.oh, kh = (int)a.kh, sh = (int)a.sh, ph = (int)a.ph;
  const int64_t cin = NHWC ? a.c : 1;
  Bits zero;
  memset(&zero, 0, sizeof zero);  // +0 in every dtype

  int chunk = (int)(item % a.chunks);
  const int64_t rest = item / a.chunks;
  int oh = (int)(rest % a.oh);
  int64_t outer = rest / a.oh;
  if constexpr (BATCH) {
    batched_items<T, NHWC, VEC, PYT, Bits>(a, gout, gin, lane, item, item_end, chunk, oh, outer, zero);
    return;
  }
  for (; item < item_end; ++item) {
    const AxisWindowOf<int> rw = axis_window_of<int>(oh, h, kh, sh, ph);
    // The band: from this window's first row to the next window's.
    const int band_end = oh + 1 < oh_count ? axis_window_of<int>(oh + 1, h, kh, sh, ph).begin : h;
    const int64_t row_factor = axis_divisor_factor(rw, a.include_pad);
    const T* g_row = gout + (outer * a.oh + oh) * a.ow * cin;
    const int u0 = chunk * a.group * a.lane_units + lane;
    Bits vals[kMaxUnits];
#pragma unroll
    for (int j = 0; j < kMaxUnits; ++j) {
      const int u = u0 + j * a.group;
      vals[j] = zero;
      if (j < a.lane_units && u < a.units) {
        const auto v = unit_values<T, NHWC, VEC, PYT>(a, g_row, row_factor, u);
        memcpy(&vals[j], &v, sizeof v);
      }
    }
    T* row = gin + (outer * a.h + rw.begin) * (int64_t)a.row_len;
    for (int y = rw.begin; y < band_end; ++y, row += a.row_len) {
      const bool covered = y < rw.end;
#pragma unroll
      for (int j = 0; j < kMaxUnits; ++j) {
        const int u = u0 + j * a.group;
        if (j < a.lane_units && u < a.units)
          __stcs(reinterpret_cast<Bits*>(row + (int64_t)u * V), covered ? vals[j] : zero);
      }
    }
    if (++chunk == a.chunks) {
      chunk = 0;
      if (++oh == oh_count) {
        oh = 0;
        ++outer;
      }
    }
  }
}

// Small planes, NCHW, 16-byte aligned grad_input: block item b owns vectors
// [b * block_vectors, ...) of grad_input seen as one flat array. Shared
// memory: the quotients of every window of the planes the item touches
// (at most stage_planes planes of oh * ow), then per row y of a plane the
// first staged index of its window row (oh * ow, or -1 where no window holds
// the row) and per column x its window column (or -1).
template <typename T, bool PYT>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
planes_kernel(const T* __restrict__ gout, T* __restrict__ gin, BroadcastArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  using B = typename E::bits_t;
  constexpr int V = vec_of<T>();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  A* quotients = reinterpret_cast<A*>(smem_raw);
  int* row_window = reinterpret_cast<int*>(quotients + (int64_t)a.stage_planes * a.oh * a.ow);
  int* col_window = row_window + a.h;
  const int h = (int)a.h, w = (int)a.w, oh_count = (int)a.oh, ow_count = (int)a.ow;
  const int windows = oh_count * ow_count;
  const int64_t plane_elems = (int64_t)h * w;
  const int64_t elems = a.planes * plane_elems;
  for (int y = (int)threadIdx.x; y < h; y += kThreads) {
    const int oh = (y + (int)a.ph) / (int)a.sh;
    const bool held = oh < oh_count && axis_window_holds<int>(oh, y, h, (int)a.kh, (int)a.sh, (int)a.ph);
    row_window[y] = held ? oh * ow_count : -1;
  }
  for (int x = (int)threadIdx.x; x < w; x += kThreads) {
    const int ow = (x + (int)a.pw) / (int)a.sw;
    const bool held = ow < ow_count && axis_window_holds<int>(ow, x, w, (int)a.kw, (int)a.sw, (int)a.pw);
    col_window[x] = held ? ow : -1;
  }
  const int64_t items = (a.vectors + a.block_vectors - 1) / a.block_vectors;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t v0 = item * a.block_vectors;
    const int64_t v1 = v0 + a.block_vectors < a.vectors ? v0 + a.block_vectors : a.vectors;
    // The last item also writes the elements after the last whole vector.
    const int64_t e0 = v0 * V, e1 = v1 == a.vectors ? elems : v1 * V;
    const int64_t p_lo = e0 / plane_elems;
    const int staged = (int)((e1 - 1) / plane_elems - p_lo + 1) * windows;
    __syncthreads();  // the previous item's reads of the quotients (and the tables) are done
    for (int t = (int)threadIdx.x; t < staged; t += kThreads) {
      uint32_t plane, oh;
      const uint32_t wi = a.by_windows.divmod((uint32_t)t, &plane);  // the window within its plane
      const int ow = (int)a.by_ow.divmod(wi, &oh);
      const AxisWindowOf<int> rw = axis_window_of<int>((int)oh, h, (int)a.kh, (int)a.sh, (int)a.ph);
      const AxisWindowOf<int> cw = axis_window_of<int>(ow, w, (int)a.kw, (int)a.sw, (int)a.pw);
      const int64_t d = divisor_from_factors(axis_divisor_factor(rw, a.include_pad),
                                             axis_divisor_factor(cw, a.include_pad), a.divisor_override);
      quotients[t] = A(0) + backward_term<T, PYT>(load1<false>(gout + p_lo * windows + t), d);
    }
    __syncthreads();
    // One element's value from its flat index's plane offset, row, column.
    auto value = [&](int p, int y, int x) {
      const int r = row_window[y], c = col_window[x];
      return r >= 0 && c >= 0 ? E::from_acc(quotients[p * windows + r + c]) : E::from_acc(A(0));
    };
    for (int64_t v = v0 + threadIdx.x; v < v1; v += kThreads) {
      const int64_t e = v * V;
      // Indices from the item's first plane fit 32 bits (an item spans
      // block_vectors vectors and part of one more plane).
      uint32_t pp, yy;
      const uint32_t rem = a.by_plane.divmod((uint32_t)(e - p_lo * plane_elems), &pp);
      int x = (int)a.by_w.divmod(rem, &yy);
      int y = (int)yy, p = (int)pp;
      Vec16<T> out;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        out.v[k] = value(p, y, x);
        if (++x == w) {
          x = 0;
          if (++y == h) {
            y = 0;
            ++p;
          }
        }
      }
      __stcs(reinterpret_cast<float4*>(gin + e), *reinterpret_cast<const float4*>(&out));
    }
    for (int64_t e = v1 * V + threadIdx.x; e < e1; e += kThreads) {
      uint32_t pp, yy;
      const uint32_t rem = a.by_plane.divmod((uint32_t)(e - p_lo * plane_elems), &pp);
      const int x = (int)a.by_w.divmod(rem, &yy);
      const T val = value((int)pp, (int)yy, x);
      B bits;
      memcpy(&bits, &val, sizeof bits);
      __stcs(reinterpret_cast<B*>(gin + e), bits);
    }
  }
}

// ---- host ------------------------------------------------------------------------------
int pow2_at_least(int64_t v) {
  int p = 1;
  while (p < v && p < kThreads) p *= 2;
  return p;
}

// Fills the work split of c->args for units of `unit` elements and picks
// the kernel.
template <typename T, bool VEC, bool PYT>
avgpool_status choose_kernel(const Problem& q, KernelConfig<BroadcastArgs>* c, const DeviceInfo& device,
                             Decline* why) {
  BroadcastArgs& a = c->args;
  const int64_t unit = VEC ? vec_of<T>() : 1;
  a.units = (int)(a.row_len / unit);
  // Narrow rows: one lane per unit, a unit per lane (one store instruction
  // per row covers the row); wide rows: whole blocks, up to kMaxUnits each.
  a.group = pow2_at_least(a.units);
  a.lane_units = (int)std::min<int64_t>(kMaxUnits, ceil_div(a.units, a.group));
  a.chunks = (int)ceil_div(a.units, (int64_t)a.group * a.lane_units);
  a.items = (q.layout == AVGPOOL_LAYOUT_NHWC ? q.n : q.planes()) * q.oh * a.chunks;
  const bool batch = a.lane_units == 1 && q.sh * a.row_len * q.element_size <= kBatchBandBytes;
  const int64_t groups_per_block = kThreads / a.group;
  auto use = [&](auto nhwc) {
    auto with = [&](auto batched) {
      return use_kernel<BroadcastArgs, T,
                        broadcast_kernel<T, decltype(nhwc)::value, VEC, PYT, decltype(batched)::value>>(
          c, "broadcast_kernel", kThreads, 0, GridShape{ceil_div(a.items, groups_per_block), true}, device, why);
    };
    return batch ? with(std::true_type{}) : with(std::false_type{});
  };
  const avgpool_status s =
      q.layout == AVGPOOL_LAYOUT_NHWC ? use(std::true_type{}) : use(std::false_type{});
  if (s != AVGPOOL_SUCCESS) return s;
  a.per_group = ceil_div(a.items, (int64_t)c->grid * groups_per_block);
  return AVGPOOL_SUCCESS;
}

// planes_kernel for NCHW planes of at most kPlanesMaxElems elements whose
// rows are narrower than a 128-byte line, where its quotients and tables fit
// kPlanesMaxSmem; null otherwise.
constexpr int64_t kPlanesMaxElems = 4096;
constexpr int64_t kPlanesMaxSmem = 32 * 1024;
// Vectors per thread and item: the most of 16, 8, 4 whose quotients fit
// (an item's quotients are loaded and divided before its stores, one load
// latency per item with the block waiting at the barrier).
constexpr int kPlanesVectorsPerThread[] = {16, 8, 4};
std::unique_ptr<KernelConfig<BroadcastArgs>> planes_config(const Problem& q, const DeviceInfo& device) {
  const int64_t plane = q.h * q.w, V = 16 / q.element_size;
  if (q.layout != AVGPOOL_LAYOUT_NCHW || plane > kPlanesMaxElems || q.w * q.element_size >= 128 ||
      q.planes() * plane < V)
    return nullptr;
  auto c = new_config<BroadcastArgs>(q, device);
  BroadcastArgs& a = c->args;
  const int64_t acc_size = q.dtype == AVGPOOL_DTYPE_F64 ? 8 : 4;
  int64_t smem = 0;
  for (const int per_thread : kPlanesVectorsPerThread) {
    a.block_vectors = kThreads * per_thread;
    // An item spans block_vectors vectors, the last one also the tail of
    // fewer than V elements: at most this many planes.
    a.stage_planes = (int)(ceil_div((a.block_vectors + 1) * V, plane) + 1);
    smem = a.stage_planes * q.oh * q.ow * acc_size + (q.h + q.w) * 4;
    if (smem <= kPlanesMaxSmem) break;
  }
  if (smem > kPlanesMaxSmem) return nullptr;
  a.vectors = q.planes() * plane / V;
  a.by_plane = IntDivider::of((uint32_t)plane);
  a.by_w = IntDivider::of((uint32_t)q.w);
  a.by_windows = IntDivider::of((uint32_t)(q.oh * q.ow));
  a.by_ow = IntDivider::of((uint32_t)q.ow);
  Decline ignored;
  const avgpool_status s =
      dispatch_dtype_flag(q.dtype, q.numerics == AVGPOOL_NUMERICS_PYTORCH, [&](auto zero, auto pyt) {
        using T = decltype(zero);
        return use_kernel<BroadcastArgs, T, planes_kernel<T, decltype(pyt)::value>>(
            c.get(), "planes_kernel", kThreads, smem, GridShape{ceil_div(a.vectors, (int64_t)a.block_vectors), false},
            device, &ignored);
      });
  if (s != AVGPOOL_SUCCESS) return nullptr;
  c->vec_align = 16;
  return c;
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.sh < q.kh || q.sw < q.kw)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s needs stride >= kernel on both axes (windows that do not overlap); cuda:backward_gather "
                   "takes overlapping windows",
                   kName);
  if (!axes_fit_int32(q)) return decline_axes_int32(kName, why);
  const bool nhwc = q.layout == AVGPOOL_LAYOUT_NHWC;
  const int64_t row_len = nhwc ? q.w * q.c : q.w;
  if (row_len >= (int64_t(1) << 30))
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: grad_input rows of %lld elements (below 2^30)", kName,
                   (long long)row_len);
  const int64_t V = 16 / q.element_size;
  const bool vec_shape = nhwc ? q.c % V == 0 : q.w % V == 0;
  // The vector configuration where the shape allows it and, for pointers
  // that are not 16-byte aligned, the same split with one element per unit.
  std::unique_ptr<KernelConfig<BroadcastArgs>> variants[2];
  for (int vec = vec_shape ? 1 : 0; vec >= 0; --vec) {
    auto c = new_config<BroadcastArgs>(q, device);
    c->args.c = q.c;
    c->args.row_len = (int)row_len;
    const avgpool_status s =
        dispatch_dtype_flag(q.dtype, q.numerics == AVGPOOL_NUMERICS_PYTORCH, [&](auto zero, auto pyt) {
          using T = decltype(zero);
          return vec == 1 ? choose_kernel<T, true, decltype(pyt)::value>(q, c.get(), device, why)
                          : choose_kernel<T, false, decltype(pyt)::value>(q, c.get(), device, why);
        });
    if (s != AVGPOOL_SUCCESS) return s;
    variants[vec] = std::move(c);
  }
  if (auto planes = planes_config(q, device)) {
    // 16-byte aligned pointers run planes_kernel; others the band kernel's
    // scalar variant.
    planes->unaligned = std::move(variants[0]);
    *config = std::move(planes);
  } else if (vec_shape) {
    variants[1]->vec_align = 16;
    variants[1]->unaligned = std::move(variants[0]);
    *config = std::move(variants[1]);
  } else {
    *config = std::move(variants[0]);
  }
  return AVGPOOL_SUCCESS;
}

}  // namespace

const Impl kBackwardBroadcastImpl = cuda_impl(kName, Direction::kBackward, init);

}  // namespace avgpool::cuda

// cuda:nchw_window_team - NCHW, fast numerics, large windows: a team of
// threads (a warp up to a whole block) sums one output's window, and for
// few outputs a cluster of up to 8 blocks (sm_90) splits the window's rows.
//
// One thread per output (cuda:any_direct) reads a large window one element
// at a time: 64x3x1024x1024 global pooling ran at 7 GB/s. Here the team's
// lanes read a window row side by side (coalesced), several rows in flight
// per lane; a window that spans whole input rows (global pooling) is one
// contiguous run, read as 16-byte vectors after a scalar head that aligns it.
// The partial sums meet in a fixed tree (warp shuffles, then the team's
// warps in order, then the cluster's blocks in rank order): the same bits on
// every run. Accumulates in acc_t (float; double for f64), one division.
// Any element-aligned pointers; 64-bit offsets; grid-stride over outputs.
#include "impls.h"
#include "window_split.cuh"

namespace avgpool::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr const char* kName = "cuda:nchw_window_team";
constexpr int kThreads = 256;

struct TeamArgs : Geometry {
  int64_t total;   // outputs
  int64_t groups;  // output groups: kThreads / team outputs each
  int cluster;     // blocks sharing one group's windows (1: none)
};

// Sum of n contiguous elements at p by the G lanes of a team (lane t).
template <typename T, int G>
__device__ __forceinline__ typename Elem<T>::acc_t flat_sum(const T* p, int64_t n, int t) {
  using A = typename Elem<T>::acc_t;
  constexpr int V = vec_of<T>();
  A s = 0;
  int64_t head = (int64_t)(((16 - (uintptr_t)p % 16) % 16) / sizeof(T));
  if (head > n) head = n;
  if (t < head) s += Elem<T>::to_acc(load1<true>(p + t));
  const T* v = p + head;  // 16-byte aligned
  const int64_t nv = (n - head) / V;
  A s1 = 0, s2 = 0, s3 = 0;
  int64_t j = t;
  for (; j + 3 * G < nv; j += 4 * G) {  // four 16-byte loads in flight
    const Vec16<T> a = load16<true>(v + j * V), b = load16<true>(v + (j + G) * V);
    const Vec16<T> c = load16<true>(v + (j + 2 * G) * V), d = load16<true>(v + (j + 3 * G) * V);
#pragma unroll
    for (int k = 0; k < V; ++k) {
      s += lane_acc(a, k);
      s1 += lane_acc(b, k);
      s2 += lane_acc(c, k);
      s3 += lane_acc(d, k);
    }
  }
  for (; j < nv; j += G) {
    const Vec16<T> a = load16<true>(v + j * V);
#pragma unroll
    for (int k = 0; k < V; ++k) s += lane_acc(a, k);
  }
  const int64_t done = head + nv * V;
  if (t < n - done) s += Elem<T>::to_acc(load1<true>(p + done + t));
  return (s + s1) + (s2 + s3);
}

// Sum of rows [ya, yb) x columns [xa, xb) of a plane (row pitch w) by the G
// lanes of a team: lanes side by side along a row; a row narrower than the
// team gives each group of lanes its own rows. Four rows' loads are issued
// before their adds: one row at a time left each lane waiting on a load per
// add (H200, k32 s16 on 8x64x512x512: 1.45 ms).
template <typename T, int G>
__device__ __forceinline__ typename Elem<T>::acc_t rect_sum(const T* plane, int64_t w, int64_t ya, int64_t yb,
                                                            int64_t xa, int64_t xb, int t) {
  using A = typename Elem<T>::acc_t;
  const int64_t width = xb - xa;
  A s[4] = {0, 0, 0, 0};
  int tw = G;
  if (width < G) {
    tw = 1;
    while (tw < width) tw <<= 1;
  }
  const int groups = G / tw;  // rows read side by side
  for (int64_t x0 = xa + t % tw; x0 < xb; x0 += tw) {
    const T* p = plane + x0;
    int64_t y = ya + t / tw;
    for (; y + 3 * groups < yb; y += 4 * groups) {
      A v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) v[k] = Elem<T>::to_acc(load1<false>(p + (y + k * groups) * w));
#pragma unroll
      for (int k = 0; k < 4; ++k) s[k] += v[k];
    }
    for (; y < yb; y += groups) s[0] += Elem<T>::to_acc(load1<false>(p + y * w));
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// Teams of G threads, kThreads / G outputs per block per step; with
// a.cluster > 1 (G == kThreads), a.cluster blocks per output.
template <typename T, int G>
__global__ void __launch_bounds__(kThreads) team_kernel(const T* __restrict__ src, T* __restrict__ dst, TeamArgs a) {
  using E = Elem<T>;
  using A = typename E::acc_t;
  constexpr int kTeams = kThreads / G, kTeamWarps = G / 32;
  __shared__ A warp_part[kThreads / 32];
  __shared__ A block_part;
  const int team = threadIdx.x / G, t = threadIdx.x % G, lane = threadIdx.x % 32;
  const int cs = a.cluster;
  const int rank = (int)(blockIdx.x % (unsigned)cs);
  for (int64_t g = blockIdx.x / cs; g < a.groups; g += gridDim.x / cs) {
    const int64_t i = g * kTeams + team;
    const bool valid = i < a.total;
    A sum = 0;
    AxisWindow r{0, 0, 0}, c{0, 0, 0};
    if (valid) {
      const int64_t ox = i % a.ow, rest = i / a.ow, oy = rest % a.oh, plane = rest / a.oh;
      r = axis_window(oy, a.h, a.kh, a.sh, a.ph);
      c = axis_window(ox, a.w, a.kw, a.sw, a.pw);
      const int64_t rows = r.end - r.begin, per = (rows + cs - 1) / cs;
      int64_t ya = r.begin + rank * per, yb = ya + per;
      if (yb > r.end) yb = r.end;
      const T* base = src + plane * a.h * a.w;
      if (ya < yb) {
        if (c.begin == 0 && c.end == a.w) sum = flat_sum<T, G>(base + ya * a.w, (yb - ya) * a.w, t);
        else sum = rect_sum<T, G>(base, a.w, ya, yb, c.begin, c.end, t);
      }
    }
    sum = warp_sum(sum);
    if (kTeamWarps > 1) {
      if (lane == 0) warp_part[threadIdx.x / 32] = sum;
      __syncthreads();
      if (t < 32) {
        A s = t < kTeamWarps ? warp_part[team * kTeamWarps + t] : A(0);
        sum = warp_sum(s);
      }
      __syncthreads();
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (cs > 1) {
      cg::cluster_group cluster = cg::this_cluster();
      if (threadIdx.x == 0) block_part = sum;
      cluster.sync();
      if (rank == 0 && threadIdx.x == 0) {
        A s = 0;
        for (int k = 0; k < cs; ++k) s += *cluster.map_shared_rank(&block_part, (unsigned)k);
        sum = s;
      }
      cluster.sync();  // the others keep their shared memory until rank 0 has read it
    }
#endif
    if (valid && t == 0 && rank == 0) dst[i] = E::from_acc(finish(sum, r, c, a.include_pad, a.divisor_override));
  }
}

template <typename T, int G>
avgpool_status configure(KernelConfig<TeamArgs>* c, const Problem& q, const DeviceInfo& device, Decline* why) {
  TeamArgs& a = c->args;
  constexpr int kTeams = kThreads / G;
  a.total = q.dst_elements;
  a.groups = ceil_div(a.total, kTeams);
  a.cluster = 1;
  // Few outputs for the device: split each window's rows over a cluster so
  // that about four blocks per SM read (at most 8 blocks, at least a row
  // each).
  const void* kernel = (const void*)team_kernel<T, G>;
  if (G == kThreads && clusters_allowed(kernel, device)) {
    const int64_t want = ceil_div(4 * (int64_t)device.sms, a.groups > 0 ? a.groups : 1);
    int64_t cs = want < kMaxCluster ? want : kMaxCluster;
    const int64_t rows = q.kh < q.h ? q.kh : q.h;
    if (cs > rows) cs = rows;
    if (cs >= 2) a.cluster = (int)cs;
  }
  const avgpool_status s =
      use_kernel<TeamArgs, T, team_kernel<T, G>>(c, G == 32 ? "team_kernel<32>" : G == 64 ? "team_kernel<64>"
                                                                         : G == 128 ? "team_kernel<128>"
                                                                                    : "team_kernel<256>",
                                                 kThreads, 0, GridShape{a.groups, false, (int64_t(1) << 20) / kMaxCluster},
                                                 device, why);
  if (s != AVGPOOL_SUCCESS) return s;
  c->launch = launch_clustered<TeamArgs, T, team_kernel<T, G>>;
  c->grid *= (unsigned)a.cluster;
  return AVGPOOL_SUCCESS;
}

avgpool_status init(const Problem& q, const DeviceInfo& device, ConfigPtr* config, Decline* why) {
  if (q.layout != AVGPOOL_LAYOUT_NCHW)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s takes NCHW only (cuda:any_window_split takes NHWC)", kName);
  if (q.numerics != AVGPOOL_NUMERICS_FAST)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s takes fast numerics only: its lanes sum a window in parallel, not in PyTorch's order "
                   "(cuda:nchw_window_chain keeps it)",
                   kName);
  // Team size: about 32 window elements per lane, from a warp to the block.
  const int64_t elems = q.window_inputs();
  const int64_t per_lane = elems / 32;
  const int g = per_lane >= 256 ? 256 : per_lane >= 128 ? 128 : per_lane >= 64 ? 64 : 32;
  auto c = new_config<TeamArgs>(q, device);
  const avgpool_status s = dispatch_dtype_cuda(q.dtype, [&](auto zero) {
    using T = decltype(zero);
    switch (g) {
      case 256: return configure<T, 256>(c.get(), q, device, why);
      case 128: return configure<T, 128>(c.get(), q, device, why);
      case 64: return configure<T, 64>(c.get(), q, device, why);
      default: return configure<T, 32>(c.get(), q, device, why);
    }
  });
  return hand_over(s, std::move(c), config);
}

}  // namespace

const Impl kNchwWindowTeamImpl = cuda_impl(kName, Direction::kForward, init);

}  // namespace avgpool::cuda

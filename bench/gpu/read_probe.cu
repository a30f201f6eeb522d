// avgpool_read_probe: where does a streaming kernel lose to the read pass?
// Reads the seed's 17.2 GB (f32 16x64x2048x2048) in several access patterns,
// each timed alternating with the grid-stride read pass (the benchmark's
// ceiling), and prints time and ratio: register reads (grid-stride, or in
// 88 KB chunks like the seed's units) and cuda:nchw_row_stream's ring of
// bulk-copy stages, with and without the seed's 0.8 % of output bytes
// written in various ways. Findings (H200, 2026-11-29) in docs/performance.md
// (the seed's write tax); raw output in bench/gpu/results/.
// usage: avgpool_read_probe [reps]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "../../backends/cuda/bulk_copy.cuh"
#include "cuda_check.h"
#include "read_passes.cuh"

using namespace avgpool::cuda;

__global__ void fill(float4* p, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    p[i] = make_float4(1.f + (i & 7), 2.f, 3.f, 4.f);
}

// Block b reads chunks b, b + grid, ... of `chunk16` vectors; 4 loads in
// flight per thread. WRITE: one float per thread (< 186) per 88 KB chunk
// (the seed's output share), else nothing.
template <bool WRITE>
__global__ void __launch_bounds__(256) read_chunked_t(const float4* __restrict__ p, int64_t n16, int64_t chunk16,
                                                      float* out) {
  float acc = 0.f;
  const int64_t chunks = n16 / chunk16;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const float4* q = p + c * chunk16;
    int64_t i = threadIdx.x;
    for (; i + 3 * 256 < chunk16; i += 4 * 256) {
      float4 a = __ldcs(q + i), b = __ldcs(q + i + 256), cc = __ldcs(q + i + 512), d = __ldcs(q + i + 768);
      acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (cc.x + cc.y + cc.z + cc.w) +
             (d.x + d.y + d.z + d.w);
    }
    for (; i < chunk16; i += 256) {
      float4 a = __ldcs(q + i);
      acc += a.x + a.y + a.z + a.w;
    }
    if (WRITE) {
      if (threadIdx.x < 186) out[c * 186 + threadIdx.x] = acc;
      acc = 0.f;
    }
  }
  if (!WRITE && acc == 123.456f) out[0] = acc;
}

// Bulk-copy ring: one producer lane, 8 consumer warps that touch one word of
// each stage and arrive. Work: chunks of `chunk_bytes` (round-robin over the
// grid), each split into stages of at most `stage_bytes`.
// The producer lane of both rings: this block's chunks, stage by stage,
// through the bulk-copy engine.
__device__ void produce(const char* p, int64_t chunks, int64_t chunk_bytes, int stage_bytes, int stages,
                        unsigned char* smem, uint64_t* full, uint64_t* empty) {
  int s = 0;
  uint32_t phase = 0;
  bool lapped = false;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x)
    for (int64_t o = 0; o < chunk_bytes; o += stage_bytes) {
      const uint32_t n = (uint32_t)(chunk_bytes - o < stage_bytes ? chunk_bytes - o : stage_bytes);
      if (lapped) mbar_wait(&empty[s], phase ^ 1);
      mbar_arrive_expect_tx(&full[s], n);
      bulk_copy_g2s(smem + (size_t)s * stage_bytes, p + c * chunk_bytes + o, n, &full[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
        lapped = true;
      }
    }
}

// MODE 0: consumers touch one word per stage; 1: the seed's pooling reads
// (2048-float rows, thread t < 186 sums row[11t .. 11t+10] of each row);
// 3: every thread reads two float4 of each row; 2 and 4-9: as 1, plus one
// output per thread (< 186) at the end of each chunk: 2 one element past the
// kernel's addresses, 4 recycled over 1024 chunks (760 KB), 5 as whole
// aligned lines (192 per chunk), 6 streaming stores, 7 the kernel's
// addresses, 8 compiled but never executed, 9 stored before the stage is
// released.
constexpr int kMaxStages = 16;
// Thread 0 sets up the input ring's barriers (a stage is full after the
// producer's one arrival and its bytes, empty after 256 consumer arrivals)
// and, for the storer variant, the output ring's; the caller then syncs.
__device__ void init_rings(uint64_t* full, uint64_t* empty, int stages, uint64_t* ofull = nullptr,
                           uint64_t* oempty = nullptr) {
  for (int s = 0; s < stages; ++s) {
    mbar_init(&full[s], 1);
    mbar_init(&empty[s], 256);
  }
  for (int s = 0; ofull != nullptr && s < 4; ++s) {
    mbar_init(&ofull[s], 256);
    mbar_init(&oempty[s], 32);
  }
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// A block's start: the barriers set up, then warp 8 leaves (its lane 0
// after producing every stage); true on the consumer threads.
__device__ bool ring_start(const char* p, int64_t chunks, int64_t chunk_bytes, int stage_bytes, int stages,
                           unsigned char* smem, uint64_t* full, uint64_t* empty, uint64_t* ofull = nullptr,
                           uint64_t* oempty = nullptr) {
  if (threadIdx.x == 0) init_rings(full, empty, stages, ofull, oempty);
  __syncthreads();
  if (threadIdx.x / 32 != 8) return true;
  if (threadIdx.x % 32 == 0) produce(p, chunks, chunk_bytes, stage_bytes, stages, smem, full, empty);
  return false;
}

template <int MODE>
__global__ void __launch_bounds__(288, 2) ring(const char* __restrict__ p, int64_t bytes, int64_t chunk_bytes,
                                            int stage_bytes, int stages, float* sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  const int tid = threadIdx.x;
  const int64_t chunks = bytes / chunk_bytes;
  if (!ring_start(p, chunks, chunk_bytes, stage_bytes, stages, smem, full, empty)) return;
  int s = 0;
  uint32_t phase = 0;
  float acc = 0.f;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x)
    for (int64_t o = 0; o < chunk_bytes; o += stage_bytes) {
      mbar_wait(&full[s], phase);
      const float* st = reinterpret_cast<const float*>(smem + (size_t)s * stage_bytes);
      const int64_t n = chunk_bytes - o < stage_bytes ? chunk_bytes - o : stage_bytes;
      if (MODE == 0) acc += st[tid];
      if (MODE == 1 || MODE >= 2) {
        if (tid < 186)
          for (int r = 0; r < n / 8192; ++r)
#pragma unroll
            for (int j = 0; j < 11; ++j) acc += st[r * 2048 + 11 * tid + j];
      }
      if (MODE == 3)
        for (int r = 0; r < n / 8192; ++r) {
          const float4 u = reinterpret_cast<const float4*>(st + r * 2048)[tid],
                       v = reinterpret_cast<const float4*>(st + r * 2048)[tid + 256];
          acc += (u.x + u.y + u.z + u.w) + (v.x + v.y + v.z + v.w);
        }
      if (MODE == 9 && o + stage_bytes >= chunk_bytes && tid < 186) {
        sink[c * 186 + tid] = acc;
        acc = 0.f;
      }
      mbar_arrive(&empty[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
      if (MODE >= 2 && MODE != 9 && o + stage_bytes >= chunk_bytes && tid < (MODE == 5 ? 192 : 186)) {
        if (MODE == 2) sink[1 + c * 186 + tid] = acc;
        if (MODE == 4) sink[(c & 1023) * 186 + tid] = acc;
        if (MODE == 5) sink[c * 192 + tid] = acc;
        if (MODE == 6) __stcs(sink + c * 186 + tid, acc);
        if (MODE == 7) sink[c * 186 + tid] = acc;
        if (MODE == 8 && acc == 123.456f) sink[c * 186 + tid] = acc;
        acc = 0.f;
      }
    }
  if (acc == 123.456f) sink[0] = acc;
}


// MODE 10: as 7, but consumers hand each chunk's outputs to a storer warp
// through a shared ring of 4 output rows; only the storer touches global memory.
__global__ void __launch_bounds__(320, 2) ring_storer(const char* __restrict__ p, int64_t bytes, int64_t chunk_bytes,
                                                     int stage_bytes, int stages, float* sink) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages], ofull[4], oempty[4];
  __shared__ float obuf[4][256];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int64_t chunks = bytes / chunk_bytes;
  if (!ring_start(p, chunks, chunk_bytes, stage_bytes, stages, smem, full, empty, ofull, oempty)) return;
  int s = 0;
  uint32_t phase = 0;
  if (warp == 9) {  // storer
    int k = 0;
    uint32_t ph = 0;
    for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
      mbar_wait(&ofull[k], ph);
      for (int t = lane; t < 186; t += 32) sink[c * 186 + t] = obuf[k][t];
      mbar_arrive(&oempty[k]);
      if (++k == 4) {
        k = 0;
        ph ^= 1;
      }
    }
    return;
  }
  float acc = 0.f;
  int k = 0, laps = 0;
  uint32_t ph = 0;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    for (int64_t o = 0; o < chunk_bytes; o += stage_bytes) {
      mbar_wait(&full[s], phase);
      const float* st = reinterpret_cast<const float*>(smem + (size_t)s * stage_bytes);
      const int64_t n = chunk_bytes - o < stage_bytes ? chunk_bytes - o : stage_bytes;
      if (tid < 186)
        for (int r = 0; r < n / 8192; ++r)
#pragma unroll
          for (int j = 0; j < 11; ++j) acc += st[r * 2048 + 11 * tid + j];
      mbar_arrive(&empty[s]);
      if (++s == stages) {
        s = 0;
        phase ^= 1;
      }
    }
    if (laps > 0) mbar_wait(&oempty[k], ph ^ 1);
    obuf[k][tid] = acc;
    acc = 0.f;
    mbar_arrive(&ofull[k]);
    if (++k == 4) {
      k = 0;
      ph ^= 1;
      ++laps;
    }
  }
}


// The read pass plus 4 bytes written per 512 read (the seed's 0.8 %), coalesced.
__global__ void __launch_bounds__(256) read_gridstride_w(const float4* __restrict__ p, int64_t n16, float* out) {
  float acc = 0.f;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  int it = 0;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    float4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride),
           d = __ldcs(p + i + 3 * stride);
    acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    if (++it % 8 == 0) {
      out[(i / (4 * stride)) / 8 * stride + (i % stride)] = acc;
      acc = 0.f;
    }
  }
  if (acc == 123.456f) out[0] = acc;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char** argv) {
  const int64_t bytes = 16LL * 64 * 2048 * 2048 * 4;
  const int64_t n16 = bytes / 16;
  const int reps = argc > 1 ? atoi(argv[1]) : 15;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  char* p;
  float* sink;
  CK(cudaMalloc(&p, bytes));
  CK(cudaMalloc(&sink, (bytes / 90112 + 1) * 192 * 4 + 64));
  fill<<<sms * 8, 256>>>((float4*)p, n16);
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto time = [&](auto&& f) {
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
  };
  auto base = [&] { read_kernel<<<sms * 8, 256>>>((const float4*)p, n16, sink); };
  auto trial = [&](const char* name, auto&& f) {
    base();
    f();
    std::vector<float> tb, tf;
    for (int r = 0; r < reps; ++r) {
      tb.push_back(time(base));
      tf.push_back(time(f));
    }
    CK(cudaGetLastError());
    const float b = median(tb), t = median(tf);
    printf("%-64s %7.3f ms  read %7.3f ms  read/this %.4f\n", name, t, b, b / t);
    fflush(stdout);
  };
  trial("read pass against itself", base);
  trial("read pass + 0.8 % writes", [&] { read_gridstride_w<<<sms * 8, 256>>>((const float4*)p, n16, sink); });
  trial("register reads in 88 KB chunks", [&] { read_chunked_t<false><<<sms * 8, 256>>>((const float4*)p, n16, 88 * 64, sink); });
  trial("register reads in 88 KB chunks + outputs",
        [&] { read_chunked_t<true><<<sms * 8, 256>>>((const float4*)p, n16, 88 * 64, sink); });
  // bulk-copy rings: 88 KB chunks (the seed's 11 rows), 3 x 32 KB stages, 2 blocks per SM
  void (*rings[])(const char*, int64_t, int64_t, int, int, float*) = {ring<0>, ring<1>, ring<2>, ring<3>, ring<4>,
                                                                     ring<5>, ring<6>, ring<7>, ring<8>, ring<9>};
  const char* what[] = {"ring, consumers touch one word", "ring, the seed's pooling reads",
                        "ring, pooling reads + outputs (one element in)", "ring, two float4 per row and thread",
                        "ring, outputs recycled over 760 KB", "ring, outputs as whole aligned lines",
                        "ring, outputs with streaming stores", "ring, outputs (the kernel's addresses)",
                        "ring, output stores compiled, never run", "ring, outputs stored before the release"};
  for (int m = 0; m < 10; ++m) {
    CK(cudaFuncSetAttribute(rings[m], cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    trial(what[m], [&] { rings[m]<<<sms * 2, 288, 3 * 32768>>>(p, bytes, 88 * 1024, 32768, 3, sink); });
  }
  CK(cudaFuncSetAttribute(ring_storer, cudaFuncAttributeMaxDynamicSharedMemorySize, 190 * 1024));
  trial("ring, outputs by a storer warp", [&] {
    ring_storer<<<sms * 2, 320, 3 * 32768>>>(p, bytes, 88 * 1024, 32768, 3, sink);
  });
  return 0;
}

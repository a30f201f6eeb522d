// Host-side pieces of the CUDA backend: the per-device properties a plan
// binds to, kernel attributes and grid sizes decided at plan creation, and
// the one execute path (pointer and stream checks, device switch, launch).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "common.cuh"

namespace avgpool::cuda {

namespace {

// Properties of every device, each read once, on first use, under its own
// once_flag: a plan created on device 1 never sees device 0's SM count.
struct DeviceTable {
  cudaError_t count_error = cudaSuccess;
  int count = 0;
  std::vector<DeviceInfo> info;
  std::vector<int> real_cc;  // 10 * major + minor as the device reports it
  std::vector<cudaError_t> error;
  std::unique_ptr<std::once_flag[]> once;
};

DeviceTable& device_table() {
  static DeviceTable* table = [] {
    auto* t = new DeviceTable;
    t->count_error = cudaGetDeviceCount(&t->count);
    if (t->count_error != cudaSuccess) {
      cudaGetLastError();  // do not leave the error pending
      t->count = 0;
    }
    t->info.resize((size_t)t->count);
    t->real_cc.assign((size_t)t->count, 0);
    t->error.assign((size_t)t->count, cudaSuccess);
    t->once.reset(new std::once_flag[(size_t)(t->count > 0 ? t->count : 1)]);
    return t;
  }();
  return *table;
}

// AVGPOOL_CUDA_TREAT_AS_SM=XY, a testing aid (docs/api.md): every device
// newer than sm_XY is seen as sm_XY, with that architecture's shared-memory
// limits, so its plans get what an sm_XY device gets (below sm_90: no
// bulk-copy implementation, AUTO takes the portable ones). Read once, at the
// first CUDA plan; a value not in the table makes the CUDA backend unusable
// with the reason, rather than silently testing the wrong thing.
struct ArchLimits {
  int cc;                     // 10 * major + minor
  int64_t smem_block, smem_sm;  // opt-in shared memory of a block, of an SM (bytes)
};
constexpr ArchLimits kArchLimits[] = {
    {75, 64 << 10, 64 << 10},   {80, 163 << 10, 164 << 10}, {86, 99 << 10, 100 << 10},
    {87, 163 << 10, 164 << 10}, {89, 99 << 10, 100 << 10},  {90, 227 << 10, 228 << 10},
};

struct TreatAs {
  const ArchLimits* arch = nullptr;  // null: the switch is off
  char error[200] = "";              // non-empty: the value is not usable
};

const TreatAs& treat_as() {
  static const TreatAs t = [] {
    TreatAs r;
    const char* e = getenv("AVGPOOL_CUDA_TREAT_AS_SM");
    if (e == nullptr || *e == '\0') return r;
    char* end = nullptr;
    const long v = strtol(e, &end, 10);
    for (const ArchLimits& a : kArchLimits)
      if (*end == '\0' && v == a.cc) r.arch = &a;
    if (r.arch == nullptr)
      snprintf(r.error, sizeof r.error,
               "AVGPOOL_CUDA_TREAT_AS_SM=%.20s is not one of 75, 80, 86, 87, 89, 90 (unset it to use the "
               "devices as they are)",
               e);
    return r;
  }();
  return t;
}

cudaError_t read_device(int ordinal, DeviceInfo* d) {
  d->ordinal = ordinal;
  int v = 0;
  cudaError_t e;
  if ((e = cudaDeviceGetAttribute(&d->cc_major, cudaDevAttrComputeCapabilityMajor, ordinal)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&d->cc_minor, cudaDevAttrComputeCapabilityMinor, ordinal)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, ordinal)) != cudaSuccess)
    return e;
  if ((e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal)) != cudaSuccess) return e;
  d->smem_block = v;
  if ((e = cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal)) != cudaSuccess) return e;
  d->smem_sm = v;
  const TreatAs& as = treat_as();
  if (as.arch != nullptr && as.arch->cc < 10 * d->cc_major + d->cc_minor) {
    d->cc_major = as.arch->cc / 10;
    d->cc_minor = as.arch->cc % 10;
    d->smem_block = std::min(d->smem_block, as.arch->smem_block);
    d->smem_sm = std::min(d->smem_sm, as.arch->smem_sm);
  }
  return cudaSuccess;
}

// Makes the plan's device current for a scope and restores the caller's.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) {
      status_ = cudaSetDevice(device);
      switched_ = status_ == cudaSuccess;
    }
  }
  ~DeviceScope() {
    if (switched_) cudaSetDevice(previous_);
  }
  cudaError_t status() const { return status_; }

 private:
  int previous_ = -1;
  bool switched_ = false;
  cudaError_t status_ = cudaSuccess;
};

avgpool_status check_pointer(const char* what, const void* p, int device) {
  cudaPointerAttributes a;
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "%s (%p) is not device memory (cudaPointerGetAttributes: %s); the CUDA backend needs "
                     "device pointers",
                     what, p, cudaGetErrorString(e));
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "%s (%p) is %s memory, not device memory: the CUDA backend needs pointers from "
                     "cudaMalloc (or use backend cpu for host memory)",
                     what, p, a.type == cudaMemoryTypeHost ? "pinned host" : "ordinary host");
  if (a.type == cudaMemoryTypeDevice && a.device != device)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "%s (%p) lives on device %d but the plan was created on device %d", what, p, a.device,
                     device);
  return AVGPOOL_SUCCESS;
}

avgpool_status check_stream(cudaStream_t stream, int device) {
  // The legacy and per-thread default streams belong to whichever device is
  // current: with the plan's device current they are its own.
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return AVGPOOL_SUCCESS;
  int stream_device = -1;
  const cudaError_t e = cudaStreamGetDevice(stream, &stream_device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT, "stream (%p) is not a usable CUDA stream (%s)",
                     (void*)stream, cudaGetErrorString(e));
  }
  if (stream_device != device)
    return set_error(AVGPOOL_ERROR_INVALID_ARGUMENT,
                     "stream (%p) belongs to device %d but the plan was created on device %d", (void*)stream,
                     stream_device, device);
  return AVGPOOL_SUCCESS;
}

}  // namespace

avgpool_status current_device(DeviceInfo* info, Decline* why) {
  DeviceTable& t = device_table();
  if (t.count_error != cudaSuccess)
    return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (cudaGetDeviceCount: %s)",
                   cudaGetErrorString(t.count_error));
  if (t.count == 0) return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (0 devices)");
  int ordinal = 0;
  cudaError_t e = cudaGetDevice(&ordinal);
  if (e != cudaSuccess || ordinal < 0 || ordinal >= t.count) {
    cudaGetLastError();
    return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device (cudaGetDevice: %s)",
                   cudaGetErrorString(e));
  }
  if (treat_as().error[0] != '\0') return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "%s", treat_as().error);
  std::call_once(t.once[(size_t)ordinal], [&] {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal) == cudaSuccess)
      t.real_cc[(size_t)ordinal] = 10 * major + minor;
    t.error[(size_t)ordinal] = read_device(ordinal, &t.info[(size_t)ordinal]);
    if (t.error[(size_t)ordinal] != cudaSuccess) cudaGetLastError();
  });
  if (t.error[(size_t)ordinal] != cudaSuccess)
    return decline(why, AVGPOOL_ERROR_BACKEND_UNAVAILABLE, "CUDA device %d is not usable (%s)", ordinal,
                   cudaGetErrorString(t.error[(size_t)ordinal]));
  *info = t.info[(size_t)ordinal];
  return AVGPOOL_SUCCESS;
}

avgpool_status require_bulk_copy(const char* impl, const DeviceInfo& device, Decline* why) {
  if (device.cc_major >= 9) return AVGPOOL_SUCCESS;
  const DeviceTable& t = device_table();
  const int real = device.ordinal >= 0 && device.ordinal < t.count ? t.real_cc[(size_t)device.ordinal] : 0;
  char note[96] = "";
  if (real != 10 * device.cc_major + device.cc_minor)
    snprintf(note, sizeof note, " (sm_%d treated as older: AVGPOOL_CUDA_TREAT_AS_SM)", real);
  return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                 "%s needs sm_90 or newer (the bulk copy engine, cp.async.bulk); device %d is sm_%d%d%s", impl,
                 device.ordinal, device.cc_major, device.cc_minor, note);
}

avgpool_status check_launch(const char* kernel) {
  cudaError_t e = cudaPeekAtLastError();
  if (e == cudaSuccess) return AVGPOOL_SUCCESS;
  cudaGetLastError();  // clear a non-sticky launch error
  return set_error(AVGPOOL_ERROR_DEVICE, "launch of %s failed: %s", kernel, cudaGetErrorString(e));
}

Geometry geometry_of(const Problem& q) {
  Geometry g;
  g.planes = q.planes(); g.h = q.h; g.w = q.w; g.oh = q.oh; g.ow = q.ow;
  g.kh = q.kh; g.kw = q.kw; g.sh = q.sh; g.sw = q.sw; g.ph = q.ph; g.pw = q.pw;
  g.divisor_override = q.divisor_override;
  g.include_pad = q.count_include_pad;
  return g;
}

bool axes_fit_int32(const Problem& q) {
  const int64_t axis_max = int64_t(1) << 28;
  for (int64_t v : {q.h, q.w, q.oh, q.ow, q.kh, q.kw, q.sh, q.sw, q.ph, q.pw})
    if (v >= axis_max) return false;
  return true;
}

avgpool_status decline_axes_int32(const char* name, Decline* why) {
  return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: an axis, kernel, stride or padding of 2^28 or more", name);
}

avgpool_status set_kernel_attributes(const void* kernel, int threads, int64_t smem, const GridShape& shape,
                                     const DeviceInfo& device, CudaConfig* c, Decline* why) {
  c->threads = threads;
  c->smem = smem;
  cudaFuncAttributes attr;
  if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
    const cudaError_t e = cudaGetLastError();
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s has no code for device %d (sm_%d%d): %s", c->kernel_name,
                   device.ordinal, device.cc_major, device.cc_minor, cudaGetErrorString(e));
  }
  // ptxVersion: the virtual architecture the code was built from (90 for
  // sm_90 machine code, and for compute_90 PTX that a newer GPU compiles).
  if (c->bulk_copy && attr.ptxVersion < 90)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED,
                   "%s: this build has no sm_90 code for it (built for compute_%d; see CMAKE_CUDA_ARCHITECTURES "
                   "in docs/install.md)",
                   c->kernel_name, attr.ptxVersion);
  // The opt-in limit covers static shared memory too (e.g. mbarriers).
  if (smem + (int64_t)attr.sharedSizeBytes > device.smem_block)
    return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: %lld bytes of shared memory exceed device %d's %lld",
                   c->kernel_name, (long long)(smem + (int64_t)attr.sharedSizeBytes), device.ordinal,
                   (long long)device.smem_block);
  // A function attribute is per device: set on the plan's device (current
  // during plan creation), where the plan's launches run. The default
  // dynamic limit is 48 KB less the kernel's static shared memory.
  if (smem > (int64_t)attr.maxDynamicSharedSizeBytes) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return decline(why, AVGPOOL_ERROR_UNSUPPORTED, "%s: cannot allow %lld bytes of shared memory: %s",
                     c->kernel_name, (long long)smem, cudaGetErrorString(e));
    }
  }
  int64_t fit = shape.cap;
  if (shape.persistent) {
    int per_sm = 1;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, (size_t)smem) != cudaSuccess ||
        per_sm < 1) {
      cudaGetLastError();
      per_sm = 1;
    }
    fit = (int64_t)per_sm * device.sms;
  }
  c->grid = (unsigned)(shape.items < fit ? (shape.items > 0 ? shape.items : 1) : fit);
  return AVGPOOL_SUCCESS;
}

const CudaConfig& config_for_pointers(const CudaConfig& c, const void* src, const void* dst) {
  const bool vec_ok = (uintptr_t)src % (uintptr_t)c.vec_align == 0 && (uintptr_t)dst % (uintptr_t)c.vec_align == 0;
  return vec_ok || c.unaligned == nullptr ? c : *c.unaligned;
}

avgpool_status execute_config(const Problem&, const Config& config, const void* src, void* dst, void* stream) {
  const CudaConfig& c = static_cast<const CudaConfig&>(config);
  DeviceScope scope(c.device);
  if (scope.status() != cudaSuccess) {
    cudaGetLastError();
    return set_error(AVGPOOL_ERROR_DEVICE, "cannot make the plan's device %d current: %s", c.device,
                     cudaGetErrorString(scope.status()));
  }
  avgpool_status s;
  if ((s = check_pointer("src", src, c.device)) != AVGPOOL_SUCCESS ||
      (s = check_pointer("dst", dst, c.device)) != AVGPOOL_SUCCESS ||
      (s = check_stream((cudaStream_t)stream, c.device)) != AVGPOOL_SUCCESS)
    return s;
  const CudaConfig& run = config_for_pointers(c, src, dst);
  return run.launch(run, src, dst, (cudaStream_t)stream);
}

}  // namespace avgpool::cuda

// The CUDA backend's implementations, in dispatch order (AUTO takes the first
// that accepts and does not auto_skip): NCHW rows streamed through a ring of
// bulk-copy stages (wide rows, the seed case), the NCHW column walk on
// 16-byte vectors (fast numerics, 3x3/5x5/7x7 stride 1), the scalar NCHW
// column walk (square 2x2 and 3x3 windows, row stride 1 or 2), the tiled
// generic path (NCHW, overlapping windows), NCHW rows through the bulk copy engine (any stride, rows that fit
// in shared memory), the register-staged stride == kernel path (NCHW, any
// width), NHWC tiles streamed through shared memory (16-byte channel
// groups), the NHWC path, and a one-thread-per-output fallback that takes
// anything. The measurements behind each auto_skip are beside it.
#include "common.cuh"

namespace avgpool {

namespace {
const Impl* const kCudaImpls[] = {&cuda::kRowStreamImpl, &cuda::kNchwVecColumnsImpl, &cuda::kNchwColumnsImpl,
                                  &cuda::kGenericImpl,   &cuda::kNchwRowsImpl,        &cuda::kStrideEqImpl,
                                  &cuda::kNhwcStreamImpl, &cuda::kNhwcImpl,      &cuda::kDirectImpl};
}

ImplList cuda_impls() { return ImplList{kCudaImpls, sizeof kCudaImpls / sizeof kCudaImpls[0]}; }

}  // namespace avgpool

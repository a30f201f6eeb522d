// The CUDA backend's implementations (one per .cu file). The AUTO policy
// (policy.cu) orders them; they never call each other (cuda:backward_as_forward
// runs the forward the dispatcher chose for its mirrored problem).
#pragma once

#include "impl.h"

namespace avgpool::cuda {

extern const Impl kNchwRowStreamImpl;     // nchw_row_stream.cu
extern const Impl kNchwVecColumnWalkImpl; // nchw_vec_column_walk.cu
extern const Impl kNchwColumnWalkImpl;    // nchw_column_walk.cu
extern const Impl kNchwTiledImpl;         // tiled.cu
extern const Impl kNhwcTiledImpl;         // tiled.cu
extern const Impl kNchwRowBulkImpl;       // nchw_row_bulk.cu
extern const Impl kNchwStrideEqImpl;      // nchw_stride_eq.cu
extern const Impl kNhwcTileStreamImpl;    // nhwc_tile_stream.cu
extern const Impl kNhwcColumnWalkImpl;    // nhwc_column_walk.cu
extern const Impl kAnyDirectImpl;         // any_direct.cu
extern const Impl kAnyColumnWalkImpl;     // any_column_walk.cu
extern const Impl kAnyPointwiseImpl;      // any_pointwise.cu
extern const Impl kNchwWindowTeamImpl;    // nchw_window_team.cu
extern const Impl kNchwWindowChainImpl;   // nchw_window_chain.cu
extern const Impl kAnyWindowSplitImpl;    // any_window_split.cu
extern const Impl kAnyWindowTilesImpl;    // any_window_tiles.cu
extern const Impl kBackwardAsForwardImpl; // backward_as_forward.cu
extern const Impl kBackwardBroadcastImpl; // backward_broadcast.cu
extern const Impl kBackwardColumnsImpl;   // backward_columns.cu
extern const Impl kBackwardGatherImpl;    // backward_gather.cu
extern const Impl kBackwardTilesImpl;     // backward_tiles.cu

// The tiles cuda:nchw_tiled or cuda:nhwc_tiled (the problem's layout) plans
// for problem (zeros when it declines it): outputs per block, and the reads
// a tile saves, as window inputs per output over the inputs staged per
// output (one thread per output loads the whole window). The policy passes
// over tiles too small or sharing too little to pay for themselves.
struct TiledShape {
  int64_t outputs_per_block = 0;
  double window_reuse = 0;
};
TiledShape tiled_shape(const Problem& problem, const DeviceInfo& device);

// Work units (a few output rows of one plane each) cuda:nchw_row_stream
// hands out on problem: the policy keeps its persistent grid busy.
int64_t nchw_row_stream_units(const Problem& problem);

// The share of cuda:nhwc_tile_stream's consumer threads that own work in
// a tile on problem (0 when it declines the channels): narrow output rows
// of pixels of few 16-byte groups leave most of them idle.
double nhwc_tile_stream_busy_consumers(const Problem& problem);

// Whether cuda:nhwc_column_walk walks problem's columns with a ring of row
// sums (fast numerics, its square windows and strides); elsewhere it runs
// one thread per output pixel and channel group.
bool nhwc_column_walk_walks(const Problem& problem);

// Inputs one tile of cuda:any_window_tiles holds (g_h x g_w, g = gcd of
// kernel and stride per axis, the kernel along an axis of one output).
int64_t any_window_tiles_tile_inputs(const Problem& problem);

}  // namespace avgpool::cuda

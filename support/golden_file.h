// Reader and writer of the golden-file format (tests/data/README.md):
// PyTorch's own AvgPool2d results, used by the tests and `avgpool golden`.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "avgpool/avgpool.h"

namespace avgpool_support {

// What every case states first: its name, the input's dims and the pooling
// parameters (the "shape" and "params" lines).
struct GoldenConfig {
  std::string name;
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 0, kw = 0, sh = 0, sw = 0, ph = 0, pw = 0;
  int ceil_mode = 0, count_include_pad = 1;
  int64_t divisor_override = 0;
};

struct GoldenCase : GoldenConfig {
  std::vector<float> in;       // NCHW
  int64_t out_dims[4] = {0, 0, 0, 0};
  std::vector<double> out;     // PyTorch in float64
  std::vector<float> out32;    // PyTorch in float32 (bitwise target)
};

// A configuration PyTorch refuses: N C H W kh kw sh sw ph pw ceil_mode.
struct GoldenRejected : GoldenConfig {};

struct GoldenFile {
  std::vector<GoldenCase> cases;
  std::vector<GoldenRejected> rejected;
};

// Parses path; on failure returns false and says why in *error.
bool read_golden(const std::string& path, GoldenFile* file, std::string* error);

// One case of the backward format (tests/data/README.md, "Backward").
// n, c, h, w are the forward input's dims, which are grad_input's.
struct GoldenBackwardCase : GoldenConfig {
  std::vector<float> gout;      // grad_output, N*C*Ho*Wo, NCHW
  std::vector<double> gin;      // PyTorch's float64 grad_input, NCHW
  std::vector<float> gin32;     // PyTorch's float32 grad_input (bitwise target)
  std::vector<float> gin16;     // PyTorch CUDA's float16 grad_input (exact in float)
  std::vector<float> ginbf16;   // the same in bfloat16
};

struct GoldenBackwardFile {
  std::vector<GoldenBackwardCase> cases;
};

// True if path's first case is in the backward format (a "gout" block).
bool is_backward_golden(const std::string& path);

// Parses a backward golden file; on failure returns false and says why.
bool read_golden_backward(const std::string& path, GoldenBackwardFile* file, std::string* error);

// Writes one case in the backward format, with gin32 replaced by `gin32`
// (9 significant digits); every other line as read.
std::string format_case(const GoldenBackwardCase& gc, const std::vector<float>& gin32);

// The plan parameters of a case, forward or backward (f32, NCHW, the given
// backend and numerics).
avgpool_params golden_params(const GoldenConfig& gc, avgpool_backend backend,
                             avgpool_numerics numerics);
avgpool_params rejected_params(const GoldenRejected& r);

// Writes one case in the golden format with `values` (float32 results, 9
// significant digits) as its out and out32 lines.
std::string format_case(const GoldenCase& gc, const std::vector<float>& values);

// The golden file the tests use: $AVGPOOL_GOLDEN, else the copy made at
// configure time (AVGPOOL_GOLDEN_DEFAULT), else tests/data/ relative to the
// working directory.
std::string default_golden_path();

// The file at default_golden_path(), read once per process (thread-safe).
// Returns nullptr, with the reason in *error, when it cannot be read.
const GoldenFile* default_golden(std::string* error);

// The backward golden file the tests use: $AVGPOOL_GOLDEN_BACKWARD, else the
// copy made at configure time, else tests/data/ relative to the working
// directory; and that file read once per process.
std::string default_golden_backward_path();
const GoldenBackwardFile* default_golden_backward(std::string* error);

}  // namespace avgpool_support

// Writes the fuzzer's seed corpus from the PyTorch golden cases:
//   avgpool_fuzz_seeds GOLDEN_FILE OUT_DIR
// Each golden case becomes a few seeds in the fuzz_format.h encoding (its
// parameters, its input as raw float32; f32 NCHW pytorch, and variants in
// fast numerics, NHWC, f16/bf16/f64); each rejected configuration becomes a
// seed with its bad field (a negative one through the raw-int64 override).
// Nothing is committed: CI writes the corpus at run time.
#include <stdio.h>

#include <string>
#include <vector>

#include "fuzz_format.h"
#include "golden_file.h"

using namespace avgpool_fuzz;
using namespace avgpool_support;

namespace {

bool write_seed(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  FILE* f = fopen((dir + "/" + name).c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s GOLDEN_FILE OUT_DIR\n", argv[0]);
    return 2;
  }
  GoldenFile golden;
  std::string error;
  if (!read_golden(argv[1], &golden, &error)) {
    fprintf(stderr, "%s: %s\n", argv[1], error.c_str());
    return 1;
  }
  int written = 0, skipped = 0;
  for (size_t i = 0; i < golden.cases.size(); ++i) {
    const GoldenCase& gc = golden.cases[i];
    avgpool_params p = golden_params(gc, AVGPOOL_BACKEND_REFERENCE, AVGPOOL_NUMERICS_PYTORCH);
    if (!encodable(p)) {
      ++skipped;
      continue;
    }
    std::vector<uint8_t> data(gc.in.size() * 4);
    memcpy(data.data(), gc.in.data(), data.size());
    // (variant, dtype, layout, numerics)
    const int variants[][3] = {{0, 0, 1}, {0, 0, 0}, {(int)(i % 3) + 1, (int)(i % 2), (int)(i / 2 % 2)}};
    for (int v = 0; v < 3; ++v) {
      avgpool_params q = p;
      q.dtype = (avgpool_dtype)variants[v][0];
      q.layout = (avgpool_layout)variants[v][1];
      q.numerics = (avgpool_numerics)variants[v][2];
      std::vector<uint8_t> bytes = encode_header(q, true, 0, 0);
      bytes.insert(bytes.end(), data.begin(), data.end());
      written += write_seed(argv[2], "golden_" + gc.name + "_" + std::to_string(v), bytes);
    }
  }
  for (size_t i = 0; i < golden.rejected.size(); ++i) {
    const GoldenRejected& r = golden.rejected[i];
    avgpool_params p = rejected_params(r);
    int corrupt = 0;
    int64_t raw = 0;
    // One negative field goes through the raw override; the rest must fit.
    int64_t* fields[] = {&p.n, &p.c, &p.h, &p.w, &p.kernel_h, &p.kernel_w,
                         &p.stride_h, &p.stride_w, &p.padding_h, &p.padding_w};
    const int ids[] = {kN, kC, kH, kW, kKernelH, kKernelW, kStrideH, kStrideW, kPaddingH, kPaddingW};
    for (int f = 0; f < 10; ++f)
      if (*fields[f] < 0 && corrupt == 0) {
        corrupt = ids[f];
        raw = *fields[f];
        *fields[f] = 0;
      }
    if (!encodable(p)) {
      ++skipped;
      continue;
    }
    std::vector<uint8_t> bytes = encode_header(p, false, corrupt, raw);
    bytes.insert(bytes.end(), {0x04, 0xF8, 0x01, 0x7F, 0x80});
    written += write_seed(argv[2], "rejected_" + std::to_string(i), bytes);
  }
  printf("wrote %d seeds to %s (%d cases did not fit the format)\n", written, argv[2], skipped);
  return written > 0 ? 0 : 1;
}

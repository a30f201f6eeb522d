// Command-line parsing shared by the subcommands.
#pragma once

#include <stdint.h>

#include <string>
#include <vector>

#include "avgpool/avgpool.h"

namespace avgpool_cli {

struct RunOptions {
  avgpool_params params;  // the seed case unless options change it
  bool shape_given = false;
  int repeat = 20;
  uint64_t seed = 20261129;
  int samples = 4096;      // random outputs checked against the reference
  bool verbose = false;    // also print the CUDA runtime's report when no GPU is usable
  bool backward = false;   // time the backward (grad_input from grad_output)
};

struct GoldenOptions {
  std::string file;
  avgpool_backend backend = AVGPOOL_BACKEND_REFERENCE;
  avgpool_numerics numerics = AVGPOOL_NUMERICS_PYTORCH;
  std::string emit;        // --emit OUT: write our results in golden format
};

// Each parser returns "" on success, else a usage error.
std::string parse_run(const std::vector<std::string>& args, RunOptions* out);
std::string parse_golden(const std::vector<std::string>& args, GoldenOptions* out);

bool parse_backend(const std::string& s, avgpool_backend* out);
bool parse_numerics(const std::string& s, avgpool_numerics* out);

extern const char* const kUsage;

}  // namespace avgpool_cli

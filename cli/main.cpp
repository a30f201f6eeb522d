// avgpool: the command-line tool. `avgpool run` is the README's main job.
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "avgpool/avgpool.h"
#include "options.h"

namespace avgpool_cli {
int run_command(const RunOptions& options);
int golden_command(const GoldenOptions& options);
}  // namespace avgpool_cli

int main(int argc, char** argv) {
  using namespace avgpool_cli;
  if (argc < 2) {
    fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--help" || command == "-h" || command == "help" ||
      (args.size() == 1 && (args[0] == "--help" || args[0] == "-h"))) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    printf("avgpool %s\n", avgpool_version_string());
    return 0;
  }
  std::string error;
  if (command == "run") {
    RunOptions options;
    if ((error = parse_run(args, &options)).empty()) return run_command(options);
  } else if (command == "golden") {
    GoldenOptions options;
    if ((error = parse_golden(args, &options)).empty()) return golden_command(options);
  } else {
    error = "unknown command '" + command + "'";
  }
  fprintf(stderr, "avgpool: %s\n\n%s", error.c_str(), kUsage);
  return 2;
}

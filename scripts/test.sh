#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every CTest suite
# (cpu, large; gpu runs where a CUDA device is usable and is reported as
# skipped elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
avgpool_install_deps
avgpool_build
ctest --test-dir "${AVGPOOL_BUILD_DIR:-build}" --output-on-failure

#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every CTest suite
# (cpu, large; gpu runs where a CUDA device is usable and is reported as
# skipped elsewhere), then the Python package's tests (scripts/python_tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
avgpool_install_deps
avgpool_build
dir="${AVGPOOL_BUILD_DIR:-build}"
# The GPU suite verbosely, so its result or its reason to skip is printed
# ("SKIPPED: no usable CUDA device ..."); then everything else.
ctest --test-dir "$dir" -L gpu -V --output-on-failure
ctest --test-dir "$dir" -LE gpu --output-on-failure
# The Python package's tests (tests/python) on the library just built.
bash scripts/python_tests.sh

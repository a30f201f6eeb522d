#!/usr/bin/env bash
# The main job: the seed case (16x64x2048x2048 f32, kernel 11, stride 11) on
# the GPU when one is usable, else a scaled-down CPU run. Extra arguments go
# to `avgpool run` (see `build/cli/avgpool --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
avgpool_install_deps
avgpool_build >/dev/null
"${AVGPOOL_BUILD_DIR:-build}/cli/avgpool" run "$@"
